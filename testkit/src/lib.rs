//! seal-opencl-testkit: the tools that seal-opencl's tests, benchmarks and examples share,
//! kept out of the library (and its staticlib, which C++ programs link).
//!
//! - `sys`: bindgen over SEAL's C API (the patched SEAL that seal-opencl built);
//! - `seal_c`: safe wrappers over it, driving SEAL from Rust on its CPU path and, through
//!   `Ciphertext::gpu`, on the backend;
//! - `oracle`: SEAL's own modular arithmetic, primes and NTT through a cxx bridge, the oracle
//!   of the host references and kernels;
//! - `oracle_integer`: SEAL's BFV and BGV results on real ciphertexts (relinearize,
//!   apply_galois, mod_switch_to_next), the oracle of `seal_opencl::integer`;
//! - `encrypt`: SEAL's CKKS public-key encryption with a seeded PRNG, on its CPU path and
//!   routed (seal-patch 0010), through a cxx bridge;
//! - `integer`: SEAL's BFV and BGV operations on its CPU path against the routed ones, through
//!   a cxx bridge;
//! - `oracle_bfv`: SEAL's BFV encryption and multiplication on the CPU, the oracle of
//!   `seal_opencl::integer`;
//! - `routines`: the CKKS routines (MulLin, MulLinRS, SqrLinRS, MulLinRSModSwAdd, Rotate)
//!   with their parameters, keys and inputs;
//! - `soak`: long-running server soak runs;
//! - `fuzz`: differential fuzzing of the backend against SEAL's CPU path;
//! - `harness`: what the test files share (seeded random generators, SEAL's primes, the
//!   child-process harness for tests that vary the environment);
//! - `compose`: host compositions of the device's kernel sequences (key switching), the
//!   oracles of whole device operations on random inputs;
//! - `guarded`: the kernel tests' output regions, between poisoned guards, and their
//!   checked read-back;
//! - `fixture`: what the SEAL-level tests share (a parameter set with every key, device
//!   copies, word-for-word comparison, every routed operation as a table).
//!
//! The dependency on seal-opencl turns on its `test-hooks` feature
//! (`seal_opencl::ffi::crosscheck_corrupt_next_result`).

pub mod compose;
pub mod encrypt;
pub mod fixture;
pub mod fuzz;
pub mod guarded;
pub mod harness;
pub mod integer;
pub mod oracle;
pub mod oracle_bfv;
pub mod oracle_integer;
pub mod routines;
pub mod seal_c;
pub mod soak;
pub mod sys;

use std::fmt;

use seal_opencl::Error;

/// An `InvalidArgument` error (`std::invalid_argument` across the bridge).
pub(crate) fn invalid(msg: impl fmt::Display) -> Error {
    Error::InvalidArgument(msg.to_string())
}
