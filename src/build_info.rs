//! Where this build put the patched SEAL: for C++ programs built against the crate's
//! staticlib (examples/cpp, SEAL's own googletest suite via scripts/seal-gtest.sh).
//! `cargo run --release --example build_info` prints it all for a shell or for CMake.
//!
//! - `SEAL_VERSION`: the SEAL that was patched and built (`4.0.0` or `4.4.3`).
//! - `SEAL_SOURCE_DIR`: the patched SEAL tree (CMakeLists.txt, native/, thirdparty/).
//! - `SEAL_INCLUDE_DIRS`: SEAL's headers, then the folder of the generated
//!   `seal/util/config.h`.
//! - `SEAL_LIB_DIR`, `SEAL_LIB`: SEAL's own static archive (`lib{SEAL_LIB}.a`; its C API's
//!   lies beside it, for the test kit). The crate's staticlib already contains SEAL; link
//!   one or the other, never both.
//! - `FFI_INCLUDE_DIR`: the folder of `seal_opencl.h` (`seal_opencl::install_backend`).

include!(concat!(env!("OUT_DIR"), "/build_info.rs"));
