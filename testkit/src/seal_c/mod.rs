//! Safe Rust wrappers over SEAL's C API (`sys`, `native/src/seal/c/`), CKKS only.
//!
//! What it is for: integration tests, examples and benchmarks drive SEAL from Rust through
//! it, both plain CPU SEAL and the patched SEAL's GPU marking (`Ciphertext::gpu`). The
//! library's backend itself never uses it (it is reached from C++ through `ffi`).
//!
//! Names follow SEAL's C++ API (`CkksEncoder` ~ `seal::CKKSEncoder`, `rescale_to_next`,
//! `_inplace`, ...). Conventions:
//! - Every object owns one C API handle and releases it in `Drop` (`*_Destroy`).
//! - Every HRESULT is checked; a failure becomes [`Error::Seal`] naming the C function, whose
//!   [`Error::kind`](seal_opencl::Error::kind) follows the C++ exception SEAL threw:
//!   `std::invalid_argument` -> `InvalidArgument`, `std::logic_error` -> `Logic`.
//! - Accessors that only read a field of a live object (the C function can fail only on a
//!   null pointer, which these types rule out) return the value directly.
//! - Evaluator operations come in SEAL's two forms: `op(&self, in.., dest: &mut Ciphertext)`
//!   (the C API's in/out form) and `op_inplace(&self, a: &mut Ciphertext, ..)`, which
//!   passes `a` as both input and destination; SEAL's C++ handles that aliasing (its
//!   `op(a, .., dest)` starts with `dest = a`, a no-op for the same object).
//! - The SEAL objects built here (`Evaluator`, `CkksEncoder`, keys, ...) hold their own
//!   copy of the `SEALContext` (SEAL 4.0 shares the context data by `shared_ptr`), so none
//!   of them borrows the [`CkksContext`] it was made from.
//! - All types are `Send` (SEAL objects may move between threads); none is `Sync`.
//!
//! A few C API functions let a C++ exception other than `std::invalid_argument` escape (it
//! then terminates the process): `Decryptor_Decrypt`, `CKKSEncoder_*` and the copy
//! constructors. Inputs SEAL would reject are checked here first where that is cheap.

mod ciphertext;
mod codec;
mod context;
mod evaluator;
mod keys;

pub use ciphertext::{is_supported_compr_mode, Ciphertext, ComprMode, Plaintext};
pub use codec::{CkksEncoder, Decryptor, Encryptor};
pub use context::{CkksContext, SecLevelType};
pub use evaluator::Evaluator;
pub use keys::{GaloisKeys, KeyGenerator, PublicKey, RelinKeys, SecretKey};

use crate::sys;
use seal_opencl::error::{hresult, Error, Result};
use std::os::raw::{c_long, c_void};
use std::ptr::NonNull;

/// SEAL's `parms_id_type`: the hash of one level's encryption parameters.
pub type ParmsId = [u64; 4];

/// Calls `sys::$f(args..)` and checks its HRESULT, naming `$f` in the error. Expands to a
/// call of an `unsafe fn`, so the caller wraps it in `unsafe` and states why it holds.
macro_rules! seal_call {
    ($f:ident($($arg:expr),* $(,)?)) => {
        $crate::seal_c::check($crate::sys::$f($($arg),*), stringify!($f))
    };
}
pub(crate) use seal_call;

/// Calls `sys::$f(args.., &mut object)`, which creates a SEAL object, and owns the object
/// as a [`Handle`] that `sys::$destroy` releases. Expands to a call of an `unsafe fn`, like
/// [`seal_call`].
macro_rules! seal_create {
    ($destroy:ident, $f:ident($($arg:expr),* $(,)?)) => {{
        let mut object = ::std::ptr::null_mut();
        $crate::seal_c::seal_call!($f($($arg,)* &mut object)).and_then(|()| {
            $crate::seal_c::Handle::new(object, $crate::sys::$destroy, stringify!($f))
        })
    }};
}
pub(crate) use seal_create;

/// Types that each own one C API object: the struct and its raw pointer for C calls.
macro_rules! handle_types {
    ($($(#[$doc:meta])* $t:ident;)*) => {$(
        $(#[$doc])*
        pub struct $t {
            handle: $crate::seal_c::Handle,
        }

        impl $t {
            pub(crate) fn ptr(&self) -> *mut ::std::os::raw::c_void {
                self.handle.get()
            }
        }
    )*};
}
pub(crate) use handle_types;

/// `Debug` that names the type and nothing else (the object's state lives in SEAL).
macro_rules! opaque_debug {
    ($($t:ident),*) => {$(
        impl std::fmt::Debug for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($t)).finish_non_exhaustive()
            }
        }
    )*};
}
pub(crate) use opaque_debug;

/// S_OK and S_FALSE succeed; everything else is a failure (SEAL's failure codes are 32-bit
/// HRESULTs with the top bit set, so they are positive in the 64-bit `long`).
pub(crate) fn check(hr: c_long, call: &'static str) -> Result<()> {
    match hr {
        0 | 1 => Ok(()),
        // `long` is 64-bit on the targets SEAL's C API is built for here, 32-bit elsewhere.
        #[allow(clippy::useless_conversion)]
        _ => Err(Error::Seal {
            hresult: i64::from(hr),
            call,
        }),
    }
}

/// The HRESULT of a SEAL call's error (0 for an error that did not come from SEAL): equal
/// HRESULTs mean SEAL threw the same C++ exception type.
pub fn hresult_of(e: &Error) -> i64 {
    match e {
        Error::Seal { hresult, .. } => *hresult,
        _ => 0,
    }
}

/// A field of a live object through its C getter `f(object, &mut value)`, which cannot
/// fail for a live object of the type `f` takes.
pub(crate) fn read_value<T: Default>(
    object: *mut c_void,
    f: unsafe extern "C" fn(*mut c_void, *mut T) -> c_long,
    call: &'static str,
) -> T {
    let mut value = T::default();
    // SAFETY: `object` is a live object of the type `f` takes (the caller's handle);
    // `value` is a live local of the type `f` writes.
    let hr = unsafe { f(object, &mut value) };
    check_infallible(hr, call);
    value
}

/// The parms_id of a live object through its C getter `f(object, words)`, which writes the
/// 4 words and cannot fail for a live object of the type `f` takes.
pub(crate) fn read_parms_id(
    object: *mut c_void,
    f: unsafe extern "C" fn(*mut c_void, *mut u64) -> c_long,
    call: &'static str,
) -> ParmsId {
    let mut id = [0u64; 4];
    // SAFETY: `object` is a live object of the type `f` takes (the caller's handle); `id`
    // has the 4 words written.
    let hr = unsafe { f(object, id.as_mut_ptr()) };
    check_infallible(hr, call);
    id
}

/// Checks an HRESULT that cannot fail for live handles and valid out-pointers.
pub(crate) fn check_infallible(hr: c_long, call: &'static str) {
    debug_assert!(
        check(hr, call).is_ok(),
        "{call} failed with HRESULT {hr:#x} on a live handle"
    );
}

type Destroy = unsafe extern "C" fn(*mut c_void) -> c_long;

/// One owned C API object: the handle and the `*_Destroy` that releases it.
pub(crate) struct Handle {
    ptr: NonNull<c_void>,
    destroy: Destroy,
}

// SAFETY: a handle owns its SEAL object exclusively (no other Rust value refers to it),
// and SEAL objects carry no thread affinity, so moving one to another thread is sound.
unsafe impl Send for Handle {}

// SAFETY: threads may share these as read-only operands, as SEAL allows: every `&self`
// method calls a C API function that uses the object through a const reference (a context,
// keys, a ciphertext or plaintext read or used as an input). The patched SEAL serializes the
// lazy transfers such a read may start (upload on the first routed use, download on the
// first host read) under the object's own mutex (seal-patch 0002, `gpu::object_mutex`).
unsafe impl Sync for context::CkksContext {}
unsafe impl Sync for ciphertext::Ciphertext {}
unsafe impl Sync for ciphertext::Plaintext {}
unsafe impl Sync for keys::RelinKeys {}
unsafe impl Sync for keys::GaloisKeys {}

impl Handle {
    /// Takes ownership of `ptr`, a fresh object from a `*_Create*` call that `destroy`
    /// releases. A null `ptr` (the call did not write it) is an error naming `call`.
    pub(crate) fn new(ptr: *mut c_void, destroy: Destroy, call: &'static str) -> Result<Self> {
        NonNull::new(ptr)
            .map(|ptr| Handle { ptr, destroy })
            .ok_or(Error::Seal {
                hresult: hresult::E_POINTER,
                call,
            })
    }

    pub(crate) fn get(&self) -> *mut c_void {
        self.ptr.as_ptr()
    }
}

impl Drop for Handle {
    fn drop(&mut self) {
        // SAFETY: `ptr` was created by the C API, is owned by this handle alone and is
        // released exactly once, here, by its matching `*_Destroy`.
        let hr = unsafe { (self.destroy)(self.ptr.as_ptr()) };
        check_infallible(hr, "*_Destroy");
    }
}

/// Whether a GPU backend is installed in (patched) SEAL (`GpuBackend_IsInstalled`).
pub fn gpu_backend_installed() -> bool {
    let mut installed = false;
    // SAFETY: `installed` is a live local the call writes one bool through.
    let hr = unsafe { sys::GpuBackend_IsInstalled(&mut installed) };
    check_infallible(hr, "GpuBackend_IsInstalled");
    installed
}

/// Opens a compute frame on the installed backend (`GpuBackend_StartComputeFrame`).
/// Errors: `Logic` when no backend is installed.
pub fn start_compute_frame() -> Result<()> {
    // SAFETY: no arguments; the C side checks for an installed backend.
    unsafe { seal_call!(GpuBackend_StartComputeFrame()) }
}

/// Ends the compute frame: waits for pending device work and releases the frame's
/// buffers (`GpuBackend_EndComputeFrame`). Errors: `Logic` when no backend is installed.
pub fn end_compute_frame() -> Result<()> {
    // SAFETY: no arguments; the C side checks for an installed backend.
    unsafe { seal_call!(GpuBackend_EndComputeFrame()) }
}

/// Waits for all device work enqueued so far (`GpuBackend_Synchronize`).
/// Errors: `Logic` when no backend is installed.
pub fn synchronize() -> Result<()> {
    // SAFETY: no arguments; the C side checks for an installed backend.
    unsafe { seal_call!(GpuBackend_Synchronize()) }
}

/// Reads the words of a SEAL object saved uncompressed: every `save_members` of SEAL
/// (Ciphertext, Plaintext) ends with its `DynArray<uint64_t>`, saved as a SEALHeader, the
/// word count and the words. So the last `count * 8` bytes are the words and the 8 bytes
/// before them hold `count`, which is checked.
pub(crate) fn trailing_words(bytes: &[u8], count: usize, call: &'static str) -> Result<Vec<u64>> {
    let layout_error = || {
        Error::Logic(format!(
            "{call}: unexpected serialization layout ({} bytes for {count} words)",
            bytes.len()
        ))
    };
    let data_len = count.checked_mul(8).ok_or_else(layout_error)?;
    let start = bytes
        .len()
        .checked_sub(data_len + 8)
        .ok_or_else(layout_error)?;
    let stored = u64::from_le_bytes(
        bytes[start..start + 8]
            .try_into()
            .map_err(|_| layout_error())?,
    );
    if stored != count as u64 {
        return Err(layout_error());
    }
    Ok(bytes[start + 8..]
        .chunks_exact(8)
        .map(|w| {
            let mut word = [0u8; 8];
            word.copy_from_slice(w);
            u64::from_le_bytes(word)
        })
        .collect())
}
