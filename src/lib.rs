//! seal-opencl: an OpenCL backend for Microsoft SEAL's CKKS scheme.
//!
//! Dependencies run downward: `arith` and `ntt` (host references) -> `cl` (the OpenCL
//! runtime, the only module that talks to `ocl`) -> kernel launchers.

pub mod cl;
pub mod error;
pub mod ffi;
pub mod sys;

pub use error::{Error, ErrorKind, Result};
