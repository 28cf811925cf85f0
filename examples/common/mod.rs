//! What the examples share: command-line flags (`--flag value` pairs read in order), the
//! device's name, and a `main` that reports an error (a folder without `main.rs`, so cargo
//! does not take it for an example).

#![allow(dead_code)] // each example uses its own subset

use seal_opencl::{Error, Result};

/// The program's arguments after its name.
pub struct Flags(std::iter::Skip<std::env::Args>);

impl Flags {
    pub fn from_env() -> Flags {
        Flags(std::env::args().skip(1))
    }

    /// The next flag, if any.
    pub fn next_flag(&mut self) -> Option<String> {
        self.0.next()
    }

    /// The value after `flag`. Errors: `InvalidArgument` when there is none.
    pub fn value(&mut self, flag: &str) -> Result<String> {
        self.0
            .next()
            .ok_or_else(|| Error::InvalidArgument(format!("{flag} needs a value")))
    }

    /// The value after `flag` as a number. Errors: `InvalidArgument` when there is none or
    /// it is not a number.
    pub fn number<T: std::str::FromStr>(&mut self, flag: &str) -> Result<T> {
        let v = self.value(flag)?;
        v.parse()
            .map_err(|_| Error::InvalidArgument(format!("{flag} {v:?}: not a number")))
    }
}

/// The installed backend's device, as `seal_opencl::ffi::describe_backend` names it.
pub fn device_description() -> Result<String> {
    seal_opencl::ffi::describe_backend("").map_err(|e| Error::Logic(e.to_string()))
}

/// Runs `run`; on an error prints `{prefix}: {error}` and exits with `code`.
pub fn exit_on_error(prefix: &str, code: i32, run: impl FnOnce() -> Result<()>) {
    if let Err(e) = run() {
        eprintln!("{prefix}: {e}");
        std::process::exit(code);
    }
}
