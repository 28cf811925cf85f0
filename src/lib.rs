//! seal-opencl: an OpenCL backend for Microsoft SEAL's CKKS scheme.
//!
//! Dependencies run downward: `arith` and the host half of `ntt` (tables and host
//! references) -> `cl` (the OpenCL runtime, the only module that talks to `ocl`) -> kernel
//! launchers (`ntt::NttPlan`).

pub mod arith;
pub mod build_info;
pub mod cl;
pub mod device;
pub mod error;
pub mod ffi;
pub mod frame;
pub mod memcache;
pub mod ntt;
pub mod profiler;
pub mod sys;

pub use error::{Error, ErrorKind, Result};
