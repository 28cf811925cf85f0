//! What a host sees of the library's `tracing` events: the `log` setting
//! (`SEAL_OPENCL_LOG`) = `error` | `warn` (the default) | `info` | `debug`.
//!
//! A C++ program installs no `tracing` subscriber, so without one every event of this
//! crate (CPU fallbacks, out-of-memory retries, the device chosen) is lost. Installing the
//! backend into SEAL ([`crate::ffi`]'s `new_gpu_backend`) therefore installs a subscriber
//! writing to stderr at this level, unless the process has a global subscriber already (a
//! Rust host that installed its own keeps it, with its own filter).
//!
//! The levels: `warn` is what a user must act on or know (an operation on a marked operand
//! that ran on the CPU, once per operation name; a device allocation that failed and was
//! retried after flushing the pool); `info` adds one-time facts (the device chosen, the
//! backend ready); `debug` adds setup details (contexts, programs, per-level uploads) and
//! the per-operation spans. Nothing on the path of every operation logs at `warn` or
//! `info`, and a disabled span costs one comparison with the global maximum level.

use tracing::Level;

use crate::error::{Error, Result};

/// The accepted values, most severe first, and the level each names.
pub const LEVELS: [(&str, Level); 4] = [
    ("error", Level::ERROR),
    ("warn", Level::WARN),
    ("info", Level::INFO),
    ("debug", Level::DEBUG),
];

/// The level used when `SEAL_OPENCL_LOG` is unset or empty.
pub const DEFAULT_LEVEL: Level = Level::WARN;

/// The level `value` of `SEAL_OPENCL_LOG` names (case and surrounding blanks ignored);
/// unset or empty is [`DEFAULT_LEVEL`]; anything else is an error listing the accepted
/// values.
pub fn parse(value: Option<&str>) -> Result<Level> {
    let value = match value.map(str::trim) {
        Some(v) if !v.is_empty() => v,
        _ => return Ok(DEFAULT_LEVEL),
    };
    let wanted = value.to_ascii_lowercase();
    LEVELS
        .iter()
        .find(|(name, _)| *name == wanted)
        .map(|&(_, level)| level)
        .ok_or_else(|| {
            let accepted: Vec<String> = LEVELS.iter().map(|(n, _)| format!("`{n}`")).collect();
            Error::invalid(format!(
                "log level {value:?} is not one of {} (default `warn`)",
                accepted.join(", ")
            ))
        })
}

/// Installs a global subscriber writing this crate's events (and any other crate's) at
/// `level` and above to stderr, unless the process has a global subscriber already: then
/// that one is kept and nothing changes. Returns whether this call installed one.
pub fn install_stderr_subscriber(level: Level) -> bool {
    tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr)
        .try_init()
        .is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_accepts_the_four_levels_and_defaults_to_warn() {
        assert_eq!(parse(None).unwrap(), Level::WARN);
        assert_eq!(parse(Some("")).unwrap(), Level::WARN);
        assert_eq!(parse(Some("  ")).unwrap(), Level::WARN);
        assert_eq!(parse(Some("error")).unwrap(), Level::ERROR);
        assert_eq!(parse(Some("warn")).unwrap(), Level::WARN);
        assert_eq!(parse(Some("info")).unwrap(), Level::INFO);
        assert_eq!(parse(Some("debug")).unwrap(), Level::DEBUG);
        assert_eq!(parse(Some(" INFO ")).unwrap(), Level::INFO);
        assert_eq!(parse(Some("Debug")).unwrap(), Level::DEBUG);
    }

    #[test]
    fn parse_refuses_anything_else_listing_the_accepted_values() {
        for bad in ["loud", "warning", "trace", "off", "1", "info,debug"] {
            let err = parse(Some(bad)).unwrap_err();
            assert_eq!(err.kind(), crate::ErrorKind::InvalidArgument, "{bad:?}");
            let text = err.to_string();
            assert!(text.contains(&format!("{bad:?}")), "{text}");
            for accepted in ["`error`", "`warn`", "`info`", "`debug`"] {
                assert!(text.contains(accepted), "{bad:?}: {text}");
            }
        }
    }
}
