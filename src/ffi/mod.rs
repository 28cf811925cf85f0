//! The cxx bridge between this crate and (patched) SEAL.
//!
//! Rust -> C++: installing the backend into SEAL (`install_backend`) and asking the
//! installed one. (SEAL's own arithmetic and NTT as the tests' oracle is the test kit's
//! bridge, `seal_opencl_testkit::oracle`: the library holds none of it.)
//! C++ -> Rust: the backend's entry points. `OpenClBackend` (`ffi/backend.h`) implements
//! SEAL's `seal::gpu::Backend` by calling [`GpuBackend`] (a thin shell over
//! [`crate::seal_backend::Backend`]) with plain views of SEAL's objects.
//!
//! A Rust `Err` reaches C++ as `rust::Error` (a `std::exception`), and a C++ exception
//! reaches Rust as `Err(cxx::Exception)`. `rust::Error` carries only the message, so the
//! backend's errors cross as [`BridgeError`]: its message is the error's, and the C++
//! exception type SEAL throws for its cause (the shared enum [`ExceptionType`]) travels
//! beside it on the calling thread, where `ffi/residency.cc` takes it
//! (`take_exception_type`) to rethrow the error as that type. Every `extern "Rust"` function
//! runs its body under [`no_panic`]: a panic unwinding into C++ would abort the process.

use std::cell::Cell;
use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::config::Config;
use crate::error::{Error, ErrorKind, Result};
use crate::seal_backend::{GpuImage, PinnedHostRef};

mod gpu_backend;

pub use gpu_backend::GpuBackend;

#[cxx::bridge(namespace = "seal_opencl")]
mod bridge {
    /// The outcome of asking Rust for the backend's device from C++.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct BackendProbe {
        ok: bool,
        /// The device description when `ok`, else the error's message.
        text: String,
    }

    /// The parameter set and level of one routed operation (built by ffi/residency.cc from
    /// the SEALContext and the operation's ContextData).
    #[derive(Debug, Clone)]
    struct LevelParams {
        /// The key level's parms_id: names the parameter set.
        key_parms_id: [u64; 4],
        /// log2 of the polynomial degree N.
        log_n: u32,
        /// The key level's coeff_modulus: the data primes, then the special prime when
        /// `using_keyswitching`.
        key_moduli: Vec<u64>,
        using_keyswitching: bool,
        /// K: primes of the operation's level (a prefix of `key_moduli`).
        primes: usize,
        /// BFV's and BGV's plain modulus t; 0 in CKKS.
        plain_modulus: u64,
        scheme: Scheme,
        /// The scheme keeps ciphertexts in NTT form: CKKS, and BGV from SEAL 4.1 on.
        ntt_form: bool,
    }

    /// SEAL's scheme of a parameter set.
    #[derive(Debug)]
    enum Scheme {
        Ckks,
        Bfv,
        Bgv,
    }

    /// One key vector of a KSwitchKeys object (RelinKeys or GaloisKeys).
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
    struct KeyRef {
        /// The KSwitchKeys object (`KSwitchKeys::gpu_id`: unique in the process).
        object: u64,
        /// Index of the key vector (RelinKeys::get_index, GaloisKeys::get_index).
        index: usize,
        /// `KSwitchKeys::gpu_version`: changes when the object's words may have changed.
        version: u64,
    }

    /// One setting passed from C++ (`seal_opencl::Options`): the `SEAL_OPENCL_*` name of
    /// `crate::config` and its value as that variable would hold it.
    #[derive(Debug, Clone)]
    struct NamedSetting {
        name: String,
        value: String,
    }

    /// The device memory the installed backend holds (`installed_device_memory`): its
    /// pools summed over tiles, and its key cache.
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    struct DeviceMemory {
        /// Bytes the pools hold: free, in use and waiting for a frame's end.
        pool_bytes_held: u64,
        /// Largest `pool_bytes_held` seen (summed over tiles' peaks).
        pool_peak_bytes_held: u64,
        /// Bytes handed out and not freed.
        pool_bytes_in_use: u64,
        /// Requests served from a free pool.
        pool_hits: u64,
        /// Requests that needed a device allocation.
        pool_misses: u64,
        /// Device copies of keys: vectors, bytes, the cap, evictions so far.
        key_vectors: usize,
        key_bytes: u64,
        max_key_bytes: u64,
        key_evictions: u64,
    }

    /// The host's costly calls into the driver since the backend was made (every thread's):
    /// what a program's first uses of new objects and its transfers cost (`traffic`).
    #[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
    struct Traffic {
        /// Requests for a buffer the pools had no free one for (first uses).
        pool_misses: u64,
        /// Device allocations from the driver (slabs that misses are carved from, buffers
        /// of their own).
        device_allocations: u64,
        /// Page-locked host memory allocated from the driver (and mapped).
        pinned_allocations: u64,
        /// Uploads from page-locked words (asynchronous), and their bytes.
        pinned_uploads: u64,
        pinned_upload_bytes: u64,
        /// Uploads from pageable words (blocking), and their bytes.
        pageable_uploads: u64,
        pageable_upload_bytes: u64,
        /// Downloads (each waits for the image's last writer), and their bytes.
        downloads: u64,
        download_bytes: u64,
        /// SEAL's copies of device objects (they share the words until one side writes).
        image_copies: u64,
        /// Whole images copied on the device (a write to shared words, a move between
        /// tiles), by every backend of the process.
        device_copies: u64,
    }

    /// The work the process-wide profiler recorded since the last `group_profiled_launches`, per
    /// loop.
    #[derive(Debug, Clone, Copy, Default, PartialEq)]
    struct ProfiledOperation {
        /// Device time of its kernels (their start-to-end times summed), microseconds.
        kernel_us: f64,
        /// Host time of its routed calls, from entering the backend to returning to SEAL.
        host_us: f64,
        /// Kernel launches.
        launches: f64,
        /// Device idle time between its kernels (gaps over `profiler::IDLE_GAP_NS`).
        idle_us: f64,
    }

    /// The C++ exception type SEAL throws for the cause of an error
    /// ([`crate::error::ErrorKind`]): what C++ rethrows a failed bridge call's `rust::Error` as.
    #[derive(Debug)]
    enum ExceptionType {
        /// `std::invalid_argument`
        InvalidArgument,
        /// `std::logic_error`
        LogicError,
        /// `std::runtime_error`
        RuntimeError,
    }

    /// The routed operations on one ciphertext in place (`GpuBackend::unary`), each the
    /// `seal_backend::Backend` method of its name; `TransformEncoding` takes a CKKS
    /// encoding's plaintext (one polynomial).
    enum UnaryOp {
        Negate,
        DoubleInplace,
        Zero,
        Square,
        RescaleToNextInplace,
        ModSwitchToNextInplace,
        TransformToNtt,
        TransformFromNtt,
        TransformEncoding,
    }

    /// The routed operations of two ciphertexts, the result in the first
    /// (`GpuBackend::binary`).
    enum BinaryOp {
        Add,
        Sub,
        Multiply,
    }

    /// The routed operations of a ciphertext and a plaintext, in place
    /// (`GpuBackend::with_plain`).
    enum PlainOp {
        MultiplyPlain,
        AddPlain,
        SubPlain,
        /// BFV's multiply_plain with both operands in coefficient form.
        MultiplyPlainCoeff,
        /// The same by a monomial where every prime exceeds t: SEAL multiplies by its
        /// coefficient as it is, an upper-half one too.
        MultiplyPlainUnlifted,
        /// The same by the monomial X^factor (coefficient 1) where every prime exceeds t:
        /// a negacyclic shift.
        MultiplyPowerOfX,
        /// BFV's add_plain: the plaintext scaled by q / t.
        AddPlainScaled,
        /// BFV's sub_plain, likewise.
        SubPlainScaled,
        /// BGV's add_plain: the plaintext times the ciphertext's correction factor mod t.
        AddPlainCorrected,
        /// BGV's sub_plain, likewise.
        SubPlainCorrected,
    }

    /// The routed operations from one ciphertext to another a level down
    /// (`GpuBackend::next_level`).
    enum NextLevelOp {
        RescaleToNext,
        ModSwitchToNext,
    }

    extern "Rust" {
        /// The OpenCL device the backend would run on, as `P:D platform / device (kind)`.
        /// `selector` is `gpu`, `cpu` or `P:D`; empty means `SEAL_OPENCL_DEVICE`.
        fn backend_device_description(selector: &str) -> Result<String>;

        /// The backend behind SEAL's `seal::gpu::Backend` (see crate::seal_backend).
        type GpuBackend;
        /// The device words of one Ciphertext or Plaintext.
        type GpuImage;

        /// The backend of `Config::from_lookup` over `settings` (name, value pairs, the last
        /// of a name counting; a setting not among them takes its default), or of
        /// `Config::from_env` when `from_env`; first installs the stderr subscriber at its
        /// log level.
        fn new_gpu_backend(settings: &[NamedSetting], from_env: bool) -> Result<Box<GpuBackend>>;
        /// The `crosscheck` setting the backend was made with: 0 (off) or every how many
        /// routed operations are compared with SEAL's CPU results.
        fn crosscheck_every(self: &GpuBackend) -> u64;
        /// Groups every launch the process-wide profiler (`SEAL_OPENCL_PROFILE`) recorded
        /// since the last call into operation `name` of `loops` loops that took `external_us`
        /// each on the caller's clock (waiting for those launches), and returns it per loop.
        /// Errors: profiling is off (`logic_error`).
        fn group_profiled_launches(
            name: &str,
            external_us: f64,
            loops: u32,
        ) -> Result<ProfiledOperation>;
        /// Forwards SEAL's report of an operation that ran on the CPU to `tracing` (a warning,
        /// once per operation name).
        fn report_cpu_fallback(operation: &str);
        /// The exception type of the [`BridgeError`] that the calling thread's last failed
        /// bridge call returned (`RuntimeError` when none is left to take). C++ takes it when
        /// it catches that call's `rust::Error`.
        fn take_exception_type() -> ExceptionType;

        fn len(self: &GpuImage) -> usize;

        fn create_image(self: &GpuBackend, data: &[u64]) -> Result<Box<GpuImage>>;
        fn empty_image(self: &GpuBackend) -> Box<GpuImage>;
        fn upload(self: &GpuBackend, image: &mut GpuImage, data: &[u64]) -> Result<()>;
        fn download(self: &GpuBackend, image: &GpuImage, data: &mut [u64]) -> Result<()>;
        fn clone_image(self: &GpuBackend, image: &GpuImage) -> Result<Box<GpuImage>>;
        /// Waits until the image's last upload no longer reads the SEAL object's host words.
        fn wait_upload(self: &GpuImage);

        /// Page-locked host memory for marked objects' words (seal-patch 0007).
        type PinnedHostRef;
        fn pinned_host(self: &GpuBackend) -> Box<PinnedHostRef>;
        /// An address of `bytes` page-locked bytes, 0 when none are left.
        fn allocate(self: &PinnedHostRef, bytes: usize) -> usize;
        fn deallocate(self: &PinnedHostRef, address: usize);

        fn start_compute_frame(self: &GpuBackend);
        fn end_compute_frame(self: &GpuBackend) -> Result<()>;
        fn synchronize(self: &GpuBackend) -> Result<()>;

        /// SEAL's transparency check of `operation`'s result (by default enqueued on the
        /// device and reported at the image's first download; see
        /// `seal_backend::Backend::is_transparent`).
        fn is_transparent(
            self: &GpuBackend,
            image: &mut GpuImage,
            size: usize,
            poly_words: usize,
            operation: &str,
        ) -> Result<bool>;

        fn device_memory(self: &GpuBackend) -> DeviceMemory;
        fn traffic(self: &GpuBackend) -> Traffic;
        /// Binds the calling thread to tile `device` (`Backend::bind_thread`); a negative
        /// or too large index is an error.
        fn bind_thread(self: &GpuBackend, device: i32) -> Result<()>;
        /// How many devices (tiles) the backend issues on.
        fn tile_count(self: &GpuBackend) -> usize;

        fn has_key(self: &GpuBackend, key: &KeyRef) -> bool;
        /// Frees the device copies of every key vector of the KSwitchKeys object `object`
        /// (it was destroyed).
        fn release_keys(self: &GpuBackend, object: u64);
        fn upload_key(
            self: &GpuBackend,
            params: &LevelParams,
            key: &KeyRef,
            decomposition_count: usize,
            words: &[u64],
        ) -> Result<()>;

        /// `op` on `ct` (`size` polynomials) in place.
        fn unary(
            self: &GpuBackend,
            params: &LevelParams,
            op: UnaryOp,
            ct: &mut GpuImage,
            size: usize,
        ) -> Result<()>;
        /// a = a `op` b (`a_size` and `b_size` polynomials).
        fn binary(
            self: &GpuBackend,
            params: &LevelParams,
            op: BinaryOp,
            a: &mut GpuImage,
            a_size: usize,
            b: &GpuImage,
            b_size: usize,
        ) -> Result<()>;
        /// ct = ct `op` plain; `factor` is BGV's correction factor of ct (1 elsewhere).
        fn with_plain(
            self: &GpuBackend,
            params: &LevelParams,
            op: PlainOp,
            ct: &mut GpuImage,
            size: usize,
            plain: &GpuImage,
            factor: u64,
        ) -> Result<()>;
        /// dst = `op`(src), a level down.
        fn next_level(
            self: &GpuBackend,
            params: &LevelParams,
            op: NextLevelOp,
            src: &GpuImage,
            size: usize,
            dst: &mut GpuImage,
        ) -> Result<()>;
        fn mod_switch_plain_to_next(
            self: &GpuBackend,
            params: &LevelParams,
            plain: &mut GpuImage,
        ) -> Result<()>;
        fn relinearize(
            self: &GpuBackend,
            params: &LevelParams,
            ct: &mut GpuImage,
            size: usize,
            destination_size: usize,
            keys: &[KeyRef],
        ) -> Result<()>;
        fn apply_galois(
            self: &GpuBackend,
            params: &LevelParams,
            ct: &mut GpuImage,
            size: usize,
            galois_elt: u32,
            key: &KeyRef,
        ) -> Result<()>;
        /// SEAL's CKKS public-key encryption of zero at the level of `params` (K primes), from
        /// SEAL's samples u, e_0, e_1, one signed value a coefficient (see
        /// `Backend::encrypt_zero`).
        fn encrypt_zero(
            self: &GpuBackend,
            params: &LevelParams,
            public_key: &GpuImage,
            samples: &[i8],
            dst: &mut GpuImage,
        ) -> Result<()>;
        /// Whether CKKSEncoder::encode runs anything on the device (`SEAL_OPENCL_ENCODE`).
        fn routes_encoding(self: &GpuBackend) -> bool;
        /// Whether `encode_values` takes the placed values `values` (N complex numbers as the
        /// IEEE bits of re, im) with `fix` = scale / N at the level of `params` (see
        /// `Backend::encodes`).
        fn encodes_values(
            self: &GpuBackend,
            params: &LevelParams,
            values: &[u64],
            fix: f64,
        ) -> Result<bool>;
        /// SEAL's CKKS encoding at the level of `params` of the placed values `values` with
        /// the encoder's roots (the same layout) and `fix` (see `Backend::encode`).
        fn encode_values(
            self: &GpuBackend,
            params: &LevelParams,
            values: &[u64],
            roots: &[u64],
            fix: f64,
            dst: &mut GpuImage,
        ) -> Result<()>;
    }

    // SAFETY: every declaration matches ffi/bridge.h; the C++ functions validate their
    // arguments, throw instead of failing silently, and keep no reference to a slice
    // after they return.
    unsafe extern "C++" {
        include!("seal-opencl/ffi/bridge.h");
        include!("seal-opencl/ffi/seal_opencl.h");

        /// Installs the OpenCL backend of the environment's settings into patched SEAL
        /// (`seal::gpu::set_backend`) unless a backend is installed already.
        fn install_backend() -> Result<()>;
        /// Installs the OpenCL backend of `settings` (name, value pairs of
        /// `crate::config::SETTINGS`, the last of a name counting; the rest at their
        /// defaults, the environment unread),
        /// as C++'s `install_backend(const Options &)` does. Errors: a setting that does not
        /// parse or is not one (`invalid_argument`), a backend installed already
        /// (`logic_error`).
        fn install_backend_with_settings(settings: &[NamedSetting]) -> Result<()>;
        /// Uninstalls whatever backend is installed.
        fn uninstall_backend() -> Result<()>;

        /// The device memory of the installed OpenCL backend. Errors: none is installed.
        fn installed_device_memory() -> Result<DeviceMemory>;
        /// `seal_opencl::bind_thread_to_device` (ffi/seal_opencl.h).
        fn bind_thread_to_device(device: i32) -> Result<()>;
        /// `seal_opencl::device_count` (ffi/seal_opencl.h).
        fn device_count() -> Result<i32>;

        /// How many device results were compared with SEAL's CPU results in this process
        /// (the `crosscheck` setting).
        fn crosscheck_checks() -> u64;
        /// How many of them differed (each threw `logic_error`).
        fn crosscheck_mismatches() -> u64;
        /// The message of the last mismatch (empty if none).
        #[cxx_name = "crosscheck_last_mismatch_text"]
        fn crosscheck_last_mismatch() -> String;
        /// Test hook (feature `test-hooks`): the next cross-checked operation's device
        /// result gets one bit of one word flipped on the device, so that the comparison
        /// must fail.
        #[cfg(feature = "test-hooks")]
        fn crosscheck_corrupt_next_result();

        /// Calls `backend_device_description` from C++ and lets its error propagate
        /// as the `rust::Error` exception.
        fn describe_backend(selector: &str) -> Result<String>;
        /// Calls `backend_device_description` from C++, catching `rust::Error`.
        fn probe_backend(selector: &str) -> BackendProbe;
    }
}

#[cfg(feature = "test-hooks")]
pub use bridge::crosscheck_corrupt_next_result;
pub use bridge::{
    bind_thread_to_device, crosscheck_checks, crosscheck_last_mismatch, crosscheck_mismatches,
    describe_backend, device_count, install_backend, install_backend_with_settings,
    installed_device_memory, probe_backend, uninstall_backend, BackendProbe, DeviceMemory,
    ExceptionType, KeyRef, LevelParams, NamedSetting, ProfiledOperation, Traffic,
};

/// Installs the backend with `settings` (`crate::config` names and values, a later pair
/// overriding an earlier one of the same name; the rest at their defaults, the environment
/// unread), as C++'s `install_backend(const Options &)` does. Pass
/// `crate::config::env_settings()` first to start from the environment's.
pub fn install_backend_with<V: AsRef<str>>(
    settings: &[(&str, V)],
) -> std::result::Result<(), cxx::Exception> {
    let settings: Vec<NamedSetting> = settings
        .iter()
        .map(|(name, value)| NamedSetting {
            name: (*name).into(),
            value: value.as_ref().into(),
        })
        .collect();
    install_backend_with_settings(&settings)
}

fn backend_device_description(selector: &str) -> Result<String> {
    no_panic(|| {
        let selector = if selector.trim().is_empty() {
            Config::from_env()?.device
        } else {
            selector.parse()?
        };
        Ok(selector.resolve()?.to_string())
    })
}

/// Runs an `extern "Rust"` body, turning a panic into an error.
fn no_panic<T>(body: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic payload".into());
        Err(Error::Logic(format!(
            "internal error (panic) in seal-opencl: {message}"
        )))
    })
}

thread_local! {
    /// The exception type of the last [`BridgeError`] made on this thread, until C++ takes it.
    static EXCEPTION_TYPE: Cell<ExceptionType> = const { Cell::new(ExceptionType::RuntimeError) };
}

/// An error on its way to C++: its message is the error's, and making it records the C++
/// exception type SEAL throws for its cause on the calling thread, where C++ takes it
/// ([`take_exception_type`]) when it catches the `rust::Error` this becomes. The bridge call
/// returns it at once, on the same thread, so no other error's type comes between.
#[derive(Debug)]
pub struct BridgeError(Error);

impl BridgeError {
    fn new(error: Error) -> BridgeError {
        let exception = match error.kind() {
            ErrorKind::InvalidArgument => ExceptionType::InvalidArgument,
            ErrorKind::Logic => ExceptionType::LogicError,
            ErrorKind::Runtime => ExceptionType::RuntimeError,
        };
        EXCEPTION_TYPE.with(|t| t.set(exception));
        BridgeError(error)
    }
}

impl fmt::Display for BridgeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

fn take_exception_type() -> ExceptionType {
    EXCEPTION_TYPE.with(|t| t.replace(ExceptionType::RuntimeError))
}

type BridgeResult<T> = std::result::Result<T, BridgeError>;

/// Runs a backend call under [`no_panic`], its error a [`BridgeError`].
fn bridged<T>(body: impl FnOnce() -> Result<T>) -> BridgeResult<T> {
    no_panic(body).map_err(BridgeError::new)
}

/// The backend `install_backend` hands to SEAL, of the settings C++ passed or of the
/// environment. First installs the stderr subscriber at the `log` setting's level (see
/// [`crate::logging`]; kept if the process has one already), so a C++ host sees the events
/// of the setup that follows and of every later call.
fn new_gpu_backend(settings: &[NamedSetting], from_env: bool) -> BridgeResult<Box<GpuBackend>> {
    bridged(|| {
        let config = if from_env {
            Config::from_env()?
        } else {
            if let Some(unknown) = settings.iter().find(|s| {
                !crate::config::SETTINGS
                    .iter()
                    .any(|known| known.name == s.name)
            }) {
                return Err(Error::invalid(format!("{} is not a setting", unknown.name)));
            }
            Config::from_lookup(|name| {
                settings
                    .iter()
                    .rev()
                    .find(|s| s.name == name)
                    .map(|s| s.value.clone())
            })?
        };
        crate::logging::install_stderr_subscriber(config.log);
        Ok(Box::new(GpuBackend::new(
            config.backend()?,
            config.crosscheck,
        )))
    })
}

fn group_profiled_launches(
    name: &str,
    external_us: f64,
    loops: u32,
) -> BridgeResult<ProfiledOperation> {
    bridged(|| {
        let profiler = crate::profiler::global().ok_or_else(|| {
            Error::Logic(format!(
                "profiling is off: start the process with {}=path (or install the backend \
                 with the profile option)",
                crate::config::PROFILE.name
            ))
        })?;
        let external =
            std::time::Duration::try_from_secs_f64(external_us / 1e6).unwrap_or_default();
        let op = profiler.add_operation(name, external, loops)?;
        Ok(ProfiledOperation {
            kernel_us: op.kernel_ns / 1e3,
            host_us: op.host_ns / 1e3,
            launches: op.kernels.iter().map(|k| k.calls_per_loop).sum(),
            idle_us: op.idle_ns / 1e3,
        })
    })
}

/// Operations SEAL reported as run on the CPU for device operands (each name once).
static CPU_FALLBACKS: parking_lot::Mutex<Vec<String>> = parking_lot::Mutex::new(Vec::new());

/// A warning per operation name (SEAL reports each name once per process already; a name
/// reported again, by another caller of the bridge, is not repeated).
fn report_cpu_fallback(operation: &str) {
    let mut reported = CPU_FALLBACKS.lock();
    if reported.iter().any(|name| name == operation) {
        return;
    }
    reported.push(operation.to_string());
    drop(reported);
    tracing::warn!(
        "{operation} ran on the CPU: SEAL does not route it to the GPU backend (its device operands were downloaded)"
    );
}

/// The operations on device-marked operands that patched SEAL ran on the CPU instead of
/// routing them to the backend (SEAL reports each name once per process), in order.
pub fn cpu_fallbacks() -> Vec<String> {
    CPU_FALLBACKS.lock().clone()
}
