//! [`GpuBackend`]: the backend as C++ holds it, each method a bridge call of `OpenClBackend`
//! (ffi/backend.h).

use super::bridge::{
    self, BinaryOp, DeviceMemory, KeyRef, LevelParams, NextLevelOp, PlainOp, Traffic, UnaryOp,
};
use super::{no_panic, BridgeError, BridgeResult};
use crate::error::{Error, Result};
use crate::seal_backend::{Backend, GpuImage, KeyId, Level, PinnedHostRef, Scheme};

/// The backend as C++ holds it (`rust::Box<GpuBackend>` in `OpenClBackend`, ffi/backend.h).
/// Each method turns the bridge's views into the backend's types and its errors into
/// [`BridgeError`].
///
/// A panic inside a call is caught and becomes an error; from then on every call fails with
/// an error that says so: the panic may have left the backend's state (pools, caches,
/// images) half updated, and running on could return wrong words. Installing the backend
/// again gives a fresh one.
pub struct GpuBackend {
    backend: Backend,
    crosscheck_every: u64,
    panicked: std::sync::atomic::AtomicBool,
}

impl<'a> From<&'a LevelParams> for Level<'a> {
    fn from(p: &'a LevelParams) -> Level<'a> {
        Level {
            key_parms_id: p.key_parms_id,
            log_n: p.log_n,
            key_moduli: &p.key_moduli,
            using_keyswitching: p.using_keyswitching,
            primes: p.primes,
            plain_modulus: p.plain_modulus,
            scheme: match p.scheme {
                bridge::Scheme::Bfv => Scheme::Bfv,
                bridge::Scheme::Bgv => Scheme::Bgv {
                    ntt_form: p.ntt_form,
                },
                _ => Scheme::Ckks,
            },
        }
    }
}

impl From<&KeyRef> for KeyId {
    fn from(k: &KeyRef) -> KeyId {
        KeyId {
            object: k.object,
            index: k.index,
            version: k.version,
        }
    }
}

impl GpuBackend {
    pub(super) fn new(backend: Backend, crosscheck_every: u64) -> GpuBackend {
        GpuBackend {
            backend,
            crosscheck_every,
            panicked: std::sync::atomic::AtomicBool::new(false),
        }
    }

    /// Runs one call: refused once a call panicked, else under [`no_panic`], its error a
    /// [`BridgeError`].
    fn run<T>(&self, body: impl FnOnce(&Backend) -> Result<T>) -> BridgeResult<T> {
        use std::sync::atomic::Ordering;
        if self.panicked.load(Ordering::Acquire) {
            return Err(BridgeError::new(Error::Logic(
                "seal-opencl refuses further work after an internal error (panic) in an earlier \
                 call: its state may be inconsistent; uninstall and install the backend again"
                    .into(),
            )));
        }
        let mut panicked = true;
        let result = no_panic(|| {
            let r = body(&self.backend);
            panicked = false;
            r
        });
        if panicked {
            self.panicked.store(true, Ordering::Release);
        }
        result.map_err(BridgeError::new)
    }

    pub(super) fn crosscheck_every(&self) -> u64 {
        self.crosscheck_every
    }

    pub(super) fn create_image(&self, data: &[u64]) -> BridgeResult<Box<GpuImage>> {
        self.run(|backend| backend.create_image(data).map(Box::new))
    }

    pub(super) fn empty_image(&self) -> Box<GpuImage> {
        Box::new(self.backend.empty_image())
    }

    pub(super) fn upload(&self, image: &mut GpuImage, data: &[u64]) -> BridgeResult<()> {
        self.run(|backend| backend.upload(image, data))
    }

    pub(super) fn download(&self, image: &GpuImage, data: &mut [u64]) -> BridgeResult<()> {
        self.run(|backend| backend.download(image, data))
    }

    pub(super) fn clone_image(&self, image: &GpuImage) -> BridgeResult<Box<GpuImage>> {
        self.run(|backend| backend.clone_image(image).map(Box::new))
    }

    pub(super) fn pinned_host(&self) -> Box<PinnedHostRef> {
        Box::new(PinnedHostRef::new(self.backend.pinned_host().clone()))
    }

    pub(super) fn start_compute_frame(&self) {
        self.backend.start_compute_frame()
    }

    pub(super) fn end_compute_frame(&self) -> BridgeResult<()> {
        self.run(|backend| backend.end_compute_frame())
    }

    pub(super) fn synchronize(&self) -> BridgeResult<()> {
        self.run(|backend| backend.synchronize())
    }

    pub(super) fn is_transparent(
        &self,
        image: &mut GpuImage,
        size: usize,
        poly_words: usize,
        operation: &str,
    ) -> BridgeResult<bool> {
        self.run(|backend| backend.is_transparent(image, size, poly_words, operation))
    }

    pub(super) fn device_memory(&self) -> DeviceMemory {
        let (pool, keys) = (self.backend.pool_stats(), self.backend.key_stats());
        DeviceMemory {
            pool_bytes_held: pool.bytes_held,
            pool_peak_bytes_held: pool.peak_bytes_held,
            pool_bytes_in_use: pool.bytes_in_use,
            pool_hits: pool.hits,
            pool_misses: pool.misses,
            key_vectors: keys.key_vectors,
            key_bytes: keys.bytes,
            max_key_bytes: keys.max_bytes,
            key_evictions: keys.evictions,
        }
    }

    pub(super) fn bind_thread(&self, device: i32) -> BridgeResult<()> {
        self.run(|backend| {
            let tile = usize::try_from(device).map_err(|_| {
                Error::invalid(format!(
                    "device {device} does not exist: indices start at 0"
                ))
            })?;
            backend.bind_thread(tile)
        })
    }

    pub(super) fn traffic(&self) -> Traffic {
        let t = self.backend.traffic();
        Traffic {
            pool_misses: t.pool_misses,
            device_allocations: t.device_allocations,
            pinned_allocations: t.pinned_allocations,
            pinned_uploads: t.pinned_uploads,
            pinned_upload_bytes: t.pinned_upload_bytes,
            pageable_uploads: t.pageable_uploads,
            pageable_upload_bytes: t.pageable_upload_bytes,
            downloads: t.downloads,
            download_bytes: t.download_bytes,
            image_copies: t.image_copies,
            device_copies: t.device_copies,
        }
    }

    pub(super) fn tile_count(&self) -> usize {
        self.backend.tile_count()
    }

    pub(super) fn has_key(&self, key: &KeyRef) -> bool {
        self.backend.has_key(&key.into())
    }

    pub(super) fn release_keys(&self, object: u64) {
        self.backend.release_keys(object)
    }

    pub(super) fn upload_key(
        &self,
        params: &LevelParams,
        key: &KeyRef,
        decomposition_count: usize,
        words: &[u64],
    ) -> BridgeResult<()> {
        self.run(|backend| {
            backend.upload_key(&params.into(), key.into(), decomposition_count, words)
        })
    }

    pub(super) fn relinearize(
        &self,
        params: &LevelParams,
        ct: &mut GpuImage,
        size: usize,
        destination_size: usize,
        keys: &[KeyRef],
    ) -> BridgeResult<()> {
        self.run(|backend| {
            let keys: Vec<KeyId> = keys.iter().map(KeyId::from).collect();
            backend.relinearize(&params.into(), ct, size, destination_size, &keys)
        })
    }

    pub(super) fn apply_galois(
        &self,
        params: &LevelParams,
        ct: &mut GpuImage,
        size: usize,
        galois_elt: u32,
        key: &KeyRef,
    ) -> BridgeResult<()> {
        self.run(|backend| backend.apply_galois(&params.into(), ct, size, galois_elt, &key.into()))
    }
}

/// The operation `repr` of a bridge enum (`what`) that this build does not know.
fn unknown_operation(what: &str, repr: u8) -> Error {
    Error::Logic(format!("{what}: no operation {repr}"))
}

/// The routed operations, one bridge call per shape of arguments, each running the
/// `Backend` method its enum value names with the level's view of `params`.
impl GpuBackend {
    /// Runs `call` (see [`GpuBackend::run`]) on the level's view of `params`.
    fn on_level<T>(
        &self,
        params: &LevelParams,
        call: impl FnOnce(&Backend, &Level) -> Result<T>,
    ) -> BridgeResult<T> {
        self.run(|backend| call(backend, &params.into()))
    }

    pub(super) fn unary(
        &self,
        params: &LevelParams,
        op: UnaryOp,
        ct: &mut GpuImage,
        size: usize,
    ) -> BridgeResult<()> {
        self.on_level(params, |backend, level| match op {
            UnaryOp::Negate => backend.negate(level, ct, size),
            UnaryOp::DoubleInplace => backend.double_inplace(level, ct, size),
            UnaryOp::Zero => backend.zero(level, ct, size),
            UnaryOp::Square => backend.square(level, ct, size),
            UnaryOp::RescaleToNextInplace => backend.rescale_to_next_inplace(level, ct, size),
            UnaryOp::ModSwitchToNextInplace => backend.mod_switch_to_next_inplace(level, ct, size),
            UnaryOp::TransformToNtt => backend.transform_to_ntt(level, ct, size),
            UnaryOp::TransformFromNtt => backend.transform_from_ntt(level, ct, size),
            UnaryOp::TransformEncoding => backend.transform_encoding(level, ct, size),
            _ => Err(unknown_operation("unary", op.repr)),
        })
    }

    #[allow(clippy::too_many_arguments)] // the bridge call's arguments
    pub(super) fn binary(
        &self,
        params: &LevelParams,
        op: BinaryOp,
        a: &mut GpuImage,
        a_size: usize,
        b: &GpuImage,
        b_size: usize,
    ) -> BridgeResult<()> {
        self.on_level(params, |backend, level| match op {
            BinaryOp::Add => backend.add(level, a, a_size, b, b_size),
            BinaryOp::Sub => backend.sub(level, a, a_size, b, b_size),
            BinaryOp::Multiply => backend.multiply(level, a, a_size, b, b_size),
            _ => Err(unknown_operation("binary", op.repr)),
        })
    }

    pub(super) fn with_plain(
        &self,
        params: &LevelParams,
        op: PlainOp,
        ct: &mut GpuImage,
        size: usize,
        plain: &GpuImage,
        factor: u64,
    ) -> BridgeResult<()> {
        self.on_level(params, |backend, level| match op {
            PlainOp::MultiplyPlain => backend.multiply_plain(level, ct, size, plain),
            PlainOp::AddPlain => backend.add_plain(level, ct, size, plain),
            PlainOp::SubPlain => backend.sub_plain(level, ct, size, plain),
            PlainOp::MultiplyPlainCoeff => {
                backend.multiply_plain_coeff(level, ct, size, plain, true, None)
            }
            PlainOp::MultiplyPlainUnlifted => {
                backend.multiply_plain_coeff(level, ct, size, plain, false, None)
            }
            PlainOp::MultiplyPowerOfX => {
                backend.multiply_plain_coeff(level, ct, size, plain, false, Some(factor))
            }
            PlainOp::AddPlainScaled => backend.add_plain_scaled(level, ct, size, plain, false),
            PlainOp::SubPlainScaled => backend.add_plain_scaled(level, ct, size, plain, true),
            PlainOp::AddPlainCorrected => {
                backend.add_plain_corrected(level, ct, size, plain, factor, false)
            }
            PlainOp::SubPlainCorrected => {
                backend.add_plain_corrected(level, ct, size, plain, factor, true)
            }
            _ => Err(unknown_operation("with_plain", op.repr)),
        })
    }

    pub(super) fn next_level(
        &self,
        params: &LevelParams,
        op: NextLevelOp,
        src: &GpuImage,
        size: usize,
        dst: &mut GpuImage,
    ) -> BridgeResult<()> {
        self.on_level(params, |backend, level| match op {
            NextLevelOp::RescaleToNext => backend.rescale_to_next(level, src, size, dst),
            NextLevelOp::ModSwitchToNext => backend.mod_switch_to_next(level, src, size, dst),
            _ => Err(unknown_operation("next_level", op.repr)),
        })
    }

    pub(super) fn encrypt_zero(
        &self,
        params: &LevelParams,
        public_key: &GpuImage,
        samples: &[i8],
        dst: &mut GpuImage,
    ) -> BridgeResult<()> {
        self.on_level(params, |backend, level| {
            backend.encrypt_zero(level, public_key, samples, dst)
        })
    }

    pub(super) fn routes_encoding(&self) -> bool {
        self.backend.routes_encoding()
    }

    pub(super) fn encodes_values(
        &self,
        params: &LevelParams,
        values: &[u64],
        fix: f64,
    ) -> BridgeResult<bool> {
        self.on_level(params, |backend, level| backend.encodes(level, values, fix))
    }

    pub(super) fn encode_values(
        &self,
        params: &LevelParams,
        values: &[u64],
        roots: &[u64],
        fix: f64,
        dst: &mut GpuImage,
    ) -> BridgeResult<()> {
        self.on_level(params, |backend, level| {
            backend.encode(level, values, roots, fix, dst)
        })
    }

    pub(super) fn mod_switch_plain_to_next(
        &self,
        params: &LevelParams,
        plain: &mut GpuImage,
    ) -> BridgeResult<()> {
        self.on_level(params, |backend, level| {
            backend.mod_switch_plain_to_next(level, plain)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ffi::ExceptionType;
    use crate::ntt::NttStrategy;

    /// A panic inside a call becomes an error, and every later call is refused: the panic
    /// may have left the backend half updated.
    #[test]
    fn calls_after_a_panic_are_refused() {
        let devices = crate::device::Devices::new(
            crate::config::Config::from_env().unwrap().device_options(),
        )
        .unwrap();
        let backend = GpuBackend::new(Backend::new(devices, NttStrategy::STAGED).unwrap(), 0);
        assert!(backend.run(|_| Ok(())).is_ok());
        let err = backend
            .run(|_| -> Result<()> { panic!("an invariant broke") })
            .unwrap_err()
            .to_string();
        assert_eq!(
            super::super::take_exception_type(),
            ExceptionType::LogicError
        );
        assert!(
            err.starts_with("internal error (panic)") && err.contains("an invariant broke"),
            "{err}"
        );
        let err = backend.run(|_| Ok(())).unwrap_err().to_string();
        assert_eq!(
            super::super::take_exception_type(),
            ExceptionType::LogicError
        );
        assert!(err.contains("refuses further work"), "{err}");
        assert_eq!(
            super::super::take_exception_type(),
            ExceptionType::RuntimeError,
            "taken once"
        );
    }
}
