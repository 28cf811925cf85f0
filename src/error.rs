//! The crate's error type. Every failure is a value; across the C++ bridge each variant
//! becomes the exception SEAL itself would throw for the same cause (see `Error::kind`).

use std::fmt;

/// Which C++ exception type a failure maps to when it crosses the bridge.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// `std::invalid_argument`: the caller passed something SEAL would reject.
    InvalidArgument,
    /// `std::logic_error`: the call is valid but not in this state.
    Logic,
    /// `std::runtime_error`: the device or driver failed.
    Runtime,
}

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no OpenCL device matches SEAL_OPENCL_DEVICE={wanted:?}; available:\n{available}")]
    NoDevice { wanted: String, available: String },

    #[error("SEAL_OPENCL_DEVICE={0:?} is not `gpu`, `cpu` or `PLATFORM:DEVICE` (two indices)")]
    BadDeviceSelector(String),

    #[error("OpenCL program build failed on {device} with options {options:?}:\n{log}")]
    ProgramBuild {
        device: String,
        options: String,
        log: String,
    },

    #[error("device out of memory: {0}")]
    OutOfMemory(String),

    #[error("{0}")]
    InvalidArgument(String),

    #[error("{0}")]
    Logic(String),

    #[error("OpenCL error: {0}")]
    OpenCl(String),

    /// A file the library writes (profiler exports) could not be written.
    #[error("{0}")]
    Io(String),

    /// A call into SEAL's C API (`seal_c`) failed; `hresult` is its HRESULT (a 32-bit code,
    /// positive in the 64-bit `long`), `call` the C function's name.
    #[error("SEAL C API {call} failed with HRESULT {hresult:#x} ({})", hresult_name(*hresult))]
    Seal { hresult: i64, call: &'static str },
}

/// HRESULTs of `seal/c/defines.h` (as positive 64-bit values).
pub mod hresult {
    pub const E_POINTER: i64 = 0x8000_4003;
    pub const E_INVALIDARG: i64 = 0x8007_0057;
    pub const E_OUTOFMEMORY: i64 = 0x8007_000E;
    pub const E_UNEXPECTED: i64 = 0x8000_FFFF;
    pub const COR_E_IO: i64 = 0x8013_1620;
    pub const COR_E_INVALIDOPERATION: i64 = 0x8013_1509;
    /// HRESULT_FROM_WIN32(ERROR_INSUFFICIENT_BUFFER).
    pub const INSUFFICIENT_BUFFER: i64 = 0x8007_007A;
    /// HRESULT_FROM_WIN32(ERROR_INVALID_INDEX).
    pub const INVALID_INDEX: i64 = 0x8007_0585;
    /// HRESULT_FROM_WIN32(ERROR_INVALID_OPERATION).
    pub const INVALID_OPERATION: i64 = 0x8007_10DD;
}

fn hresult_name(hr: i64) -> &'static str {
    use hresult::*;
    match hr {
        E_POINTER => "E_POINTER: null pointer",
        E_INVALIDARG => "E_INVALIDARG: std::invalid_argument",
        E_OUTOFMEMORY => "E_OUTOFMEMORY",
        E_UNEXPECTED => "E_UNEXPECTED",
        COR_E_IO => "COR_E_IO: I/O or std::runtime_error",
        COR_E_INVALIDOPERATION => "COR_E_INVALIDOPERATION: std::logic_error",
        INSUFFICIENT_BUFFER => "ERROR_INSUFFICIENT_BUFFER",
        INVALID_INDEX => "ERROR_INVALID_INDEX: index out of range",
        INVALID_OPERATION => "ERROR_INVALID_OPERATION",
        _ => "unknown HRESULT",
    }
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::InvalidArgument(_) | Error::BadDeviceSelector(_) => ErrorKind::InvalidArgument,
            Error::Logic(_) => ErrorKind::Logic,
            Error::Seal { hresult, .. } => match *hresult {
                hresult::E_INVALIDARG | hresult::INVALID_INDEX => ErrorKind::InvalidArgument,
                hresult::COR_E_INVALIDOPERATION
                | hresult::E_UNEXPECTED
                | hresult::INVALID_OPERATION => ErrorKind::Logic,
                _ => ErrorKind::Runtime,
            },
            Error::NoDevice { .. }
            | Error::ProgramBuild { .. }
            | Error::OutOfMemory(_)
            | Error::OpenCl(_)
            | Error::Io(_) => ErrorKind::Runtime,
        }
    }

    pub(crate) fn invalid(msg: impl fmt::Display) -> Self {
        Error::InvalidArgument(msg.to_string())
    }
}

impl From<ocl::Error> for Error {
    fn from(e: ocl::Error) -> Self {
        classify(e.api_status(), e.to_string())
    }
}

/// An OpenCL failure by its status code (not its message text, which drivers word
/// differently): only `CL_MEM_OBJECT_ALLOCATION_FAILURE` and `CL_OUT_OF_HOST_MEMORY` mean
/// memory ran out, which the memcache answers by flushing its free pool and trying again.
/// `CL_OUT_OF_RESOURCES` is no such case: NVIDIA's driver also returns it after a kernel
/// faulted, and a flush would not help.
fn classify(status: Option<ocl::core::Status>, text: String) -> Error {
    use ocl::core::Status;
    match status {
        Some(Status::CL_MEM_OBJECT_ALLOCATION_FAILURE | Status::CL_OUT_OF_HOST_MEMORY) => {
            Error::OutOfMemory(text)
        }
        _ => Error::OpenCl(text),
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[cfg(test)]
mod tests {
    use super::*;
    use ocl::core::Status;

    #[test]
    fn opencl_failures_are_classified_by_status() {
        let text = || "clCreateBuffer: CL_OUT_OF_RESOURCES".to_string();
        for (status, out_of_memory) in [
            (Some(Status::CL_MEM_OBJECT_ALLOCATION_FAILURE), true),
            (Some(Status::CL_OUT_OF_HOST_MEMORY), true),
            (Some(Status::CL_OUT_OF_RESOURCES), false),
            (Some(Status::CL_INVALID_MEM_OBJECT), false),
            (None, false),
        ] {
            let e = classify(status, text());
            assert_eq!(
                matches!(e, Error::OutOfMemory(_)),
                out_of_memory,
                "{status:?}: {e:?}"
            );
            assert_eq!(e.kind(), ErrorKind::Runtime);
        }
    }
}
