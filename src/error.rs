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
}

impl Error {
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::InvalidArgument(_) | Error::BadDeviceSelector(_) => ErrorKind::InvalidArgument,
            Error::Logic(_) => ErrorKind::Logic,
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
        let text = e.to_string();
        // CL_MEM_OBJECT_ALLOCATION_FAILURE (-4) and CL_OUT_OF_RESOURCES (-5) mean the
        // device ran out; callers (the memcache) react to that differently.
        if text.contains("MemObjectAllocationFailure") || text.contains("OutOfResources") {
            Error::OutOfMemory(text)
        } else {
            Error::OpenCl(text)
        }
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
