//! How the backend answers SEAL's transparency check of a result (SEAL built with
//! `SEAL_THROW_ON_TRANSPARENT_CIPHERTEXT` throws `logic_error("result ciphertext is
//! transparent")` when polynomials 1 and up of a result are all zero), chosen by the
//! `check_transparent` setting (`SEAL_OPENCL_CHECK_TRANSPARENT`).

use std::fmt;
use std::str::FromStr;

use crate::error::{Error, Result};

/// See [`crate::seal_backend::Backend::is_transparent`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TransparencyCheck {
    /// Every result is checked on the device (one small kernel, no wait); a transparent
    /// result is reported as SEAL's `logic_error` at the image's first host read instead
    /// of at the operation.
    #[default]
    Deferred,
    /// Every result is checked as SEAL's CPU path does, at the operation: the check waits
    /// for the device and downloads the result.
    Eager,
    /// No check: a transparent result is not reported.
    Off,
}

impl TransparencyCheck {
    /// Every mode, in the order the error message lists them.
    pub const ALL: [TransparencyCheck; 3] = [
        TransparencyCheck::Deferred,
        TransparencyCheck::Eager,
        TransparencyCheck::Off,
    ];

    /// The mode `value` of the setting names; unset or empty is
    /// [`TransparencyCheck::Deferred`].
    pub fn parse(value: Option<&str>) -> Result<Self> {
        match value {
            Some(v) if !v.trim().is_empty() => v.parse(),
            _ => Ok(TransparencyCheck::default()),
        }
    }

    fn name(self) -> &'static str {
        match self {
            TransparencyCheck::Deferred => "deferred",
            TransparencyCheck::Eager => "eager",
            TransparencyCheck::Off => "off",
        }
    }
}

impl FromStr for TransparencyCheck {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let wanted = s.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|mode| mode.name() == wanted)
            .ok_or_else(|| {
                let accepted: Vec<String> = Self::ALL.iter().map(|m| format!("`{m}`")).collect();
                Error::invalid(format!(
                    "transparency check {s:?} is not one of {}",
                    accepted.join(", ")
                ))
            })
    }
}

impl fmt::Display for TransparencyCheck {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
