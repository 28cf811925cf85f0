//! How the backend answers SEAL's transparency check of a result (SEAL built with
//! `SEAL_THROW_ON_TRANSPARENT_CIPHERTEXT` throws `logic_error("result ciphertext is
//! transparent")` when polynomials 1 and up of a result are all zero).
//!
//! SEAL throws at the call, and programs recover there (TenSEAL catches it when it multiplies
//! by a zero plaintext and substitutes an encryption of zero). So where the host knows the
//! answer without the device, it answers at the call, in every mode: each image carries what
//! the host knows of its words ([`Known`]: an uploaded tail of zeros), and each operation
//! derives its result's [`Zeros`] from its operands' (a product with a zero plaintext is
//! zero, `a - a` is zero, and every routed operation maps transparent operands to a
//! transparent result). Only what the device alone knows goes by the `check_transparent`
//! setting (`SEAL_OPENCL_CHECK_TRANSPARENT`, [`TransparencyCheck`]).

use std::fmt;
use std::str::FromStr;

use super::{Backend, GpuImage};
use crate::error::{Error, Result};

/// What the host knows of an image's words without reading them back.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) enum Known {
    #[default]
    Nothing,
    /// Words `from ..` are zero.
    ZeroFrom(usize),
}

impl Known {
    /// What uploading `data` tells: its tail of zeros (found from the end, so a ciphertext
    /// or plaintext with a nonzero last word costs one comparison).
    pub(crate) fn of_words(data: &[u64]) -> Known {
        Known::ZeroFrom(
            data.iter()
                .rposition(|&w| w != 0)
                .map_or(0, |last| last + 1),
        )
    }

    /// The zeros this means for an image of polynomials of `poly_words` words.
    pub(crate) fn zeros(self, poly_words: usize) -> Zeros {
        match self {
            Known::ZeroFrom(0) => Zeros::All,
            Known::ZeroFrom(from) if from <= poly_words => Zeros::Tail,
            _ => Zeros::Unknown,
        }
    }
}

/// The zero polynomials of a ciphertext the host knows of, from most to least known; an
/// operation's result is at best as known as its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Zeros {
    /// Every polynomial.
    All,
    /// Every polynomial but the first: the ciphertext is transparent.
    Tail,
    Unknown,
}

impl Zeros {
    /// What an image holding polynomials of `poly_words` words with these zeros knows.
    pub(crate) fn known(self, poly_words: usize) -> Known {
        match self {
            Zeros::All => Known::ZeroFrom(0),
            Zeros::Tail => Known::ZeroFrom(poly_words),
            Zeros::Unknown => Known::Nothing,
        }
    }

    /// `a + b` or `a - b`, polynomial by polynomial (a missing polynomial counts as zero).
    pub(crate) fn sum(self, other: Zeros) -> Zeros {
        self.max(other)
    }

    /// The tensor product `a (x) b`: polynomial k is the sum of `a_i b_j` over i + j = k, so
    /// a zero factor gives zero, and for k >= 1 every term has a factor from a tail.
    pub(crate) fn product(self, other: Zeros) -> Zeros {
        if self == Zeros::All || other == Zeros::All {
            Zeros::All
        } else {
            self.max(other)
        }
    }

    /// Every polynomial times a plaintext, zero when `plain` is.
    pub(crate) fn times_plain(self, plain: Zeros) -> Zeros {
        if plain == Zeros::All {
            Zeros::All
        } else {
            self
        }
    }

    /// A plaintext added to (or subtracted from) polynomial 0.
    pub(crate) fn plus_plain(self, plain: Zeros) -> Zeros {
        if plain == Zeros::All {
            self
        } else {
            self.max(Zeros::Tail)
        }
    }
}

impl Backend {
    /// Answers [`Backend::is_transparent`] in `mode` (the default is
    /// [`TransparencyCheck::Deferred`]).
    pub fn checking_transparency(mut self, mode: TransparencyCheck) -> Backend {
        self.transparency = mode;
        self
    }

    /// SEAL's `Ciphertext::is_transparent` of `operation`'s result `ct`, of `size`
    /// polynomials of `poly_words` words (SEAL throws `logic_error` when it is true):
    /// - when the host knows that polynomials 1 and up are zero ([`Known`]), true at once,
    ///   in every mode, as SEAL answers at the call;
    /// - else with the check off ([`TransparencyCheck::Off`]), false;
    /// - else with fewer than 2 polynomials, true, as SEAL says (no device needed);
    /// - eager ([`TransparencyCheck::Eager`]): waits for the device and downloads
    ///   polynomials 1 and up;
    /// - deferred ([`TransparencyCheck::Deferred`]): records the check on the image and
    ///   answers false at once, without waiting or launching anything; the image's
    ///   downloads (and those of its copies) test the words they bring to the host and
    ///   fail with SEAL's `logic_error` when the result is transparent. The words can
    ///   reach the host no other way, so no transparent result does silently, and an honest
    ///   result costs the test of one word.
    pub fn is_transparent(
        &self,
        ct: &mut GpuImage,
        size: usize,
        poly_words: usize,
        operation: &str,
    ) -> Result<bool> {
        if size >= 2 && ct.zeros(poly_words) <= Zeros::Tail {
            return Ok(true);
        }
        if self.transparency == TransparencyCheck::Off {
            return Ok(false);
        }
        if size < 2 {
            return Ok(true);
        }
        if self.transparency == TransparencyCheck::Deferred {
            ct.set_pending(operation, poly_words);
            return Ok(false);
        }
        let mut words = vec![0u64; ct.len().saturating_sub(poly_words)];
        ct.download_from(poly_words.min(ct.len()), &mut words)?;
        Ok(words.iter().all(|&w| w == 0))
    }
}

/// How [`Backend::is_transparent`] answers for what only the device knows.
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
    /// No device check: a transparent result is reported only where the host knows it.
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
