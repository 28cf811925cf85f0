//! seal-opencl: an OpenCL backend for Microsoft SEAL's CKKS scheme.
//!
//! Dependencies run downward: `arith` and the host half of `ntt` (tables and host
//! references) -> `cl` (the OpenCL runtime, the only module that talks to `ocl`) ->
//! `memcache`, `frame`, `device`, `profiler` (the runtime) -> kernel launchers
//! (`ntt::NttPlan`, `ckks::kernels`) -> `ckks::context` and `ckks::ops` (SEAL's
//! operations as kernel sequences) -> `seal_backend` (device images, keys, SEAL's routed
//! operations) -> `ffi` (the cxx bridge; C++ reaches the backend only through it).
//! Above them, `config`: every setting with its default, read from the environment in one
//! function, turned into the options of the layers below (none of which imports it). Beside
//! them: `build_info` (where the build put SEAL, for C++ programs), `logging` (the stderr
//! subscriber installed with the backend).
//!
//! The tools of tests, benchmarks and examples (safe wrappers over SEAL's C API, the
//! differential fuzzer, the soak runs, the CKKS routine drivers) are the workspace's second
//! crate, `seal-opencl-testkit` (testkit/).

pub mod arith;
pub mod build_info;
pub mod ckks;
pub mod cl;
pub mod config;
pub mod device;
pub mod error;
pub mod ffi;
pub mod frame;
pub mod integer;
pub mod logging;
pub mod memcache;
pub mod ntt;
pub mod profiler;
pub mod seal_backend;

pub use error::{Error, ErrorKind, Result};
/// Binds the calling thread to device (tile) `i` of the installed backend: its later routed
/// SEAL operations run there (`seal_backend::Backend::bind_thread`; the same call as
/// `seal_opencl::bind_thread_to_device` in ffi/seal_opencl.h). Errors: a bad index
/// (`invalid_argument`), no backend installed (`logic_error`).
pub use ffi::bind_thread_to_device;
/// How many devices (tiles) the installed backend issues on (`device_count` in
/// ffi/seal_opencl.h).
pub use ffi::device_count;
