//! The device side of one SEAL parameter set (SEAL's `SEALContext`, keyed by the key
//! level's parms_id): N, the key level's primes, and per level what the operations need,
//! uploaded once to one tile and shared read-only by every operation on it.
//!
//! SEAL's CKKS modulus chain drops primes from the end: level K holds the first K data
//! primes. Key switching at level K works over those K primes plus the special prime (the
//! last key prime), so a level's [`LevelData`] holds an NTT plan and a moduli table over
//! `q_0 .. q_{K-1}` followed by the special prime; its first K entries serve the level's
//! own ciphertexts (an `NttPlan` transforms a prefix of its primes). Levels and the
//! one-prime plans are built on first use.

use std::sync::Arc;

use parking_lot::Mutex;

use super::encode::EncodeKernels;
use super::fused::FusedPasses;
use super::kernels::{CkksKernels, ModuliTable};
use crate::arith::{invert_uint_mod, Modulus, ShoupOperand};
use crate::cl::{Context, Queue, Region};
use crate::error::{Error, Result};
use crate::ntt::{NttPlan, NttStrategy};

/// Which CKKS kernels a context runs; every choice gives the same words.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelChoices {
    /// `true`: the tensor product as one multiply-add kernel and the mod-down's steps inside
    /// its transforms; `false`: one kernel per step (`SEAL_OPENCL_FUSED=0`, the benchmarks'
    /// baseline).
    pub fused: bool,
    /// `true`: ckks.cl's products of two residues reduce by Dhem-Quisquater's Barrett (one
    /// 64-bit product); `false`: by SEAL's (`SEAL_OPENCL_BARRETT_DQ=0`).
    pub barrett_dq: bool,
    /// Key switches run as one chained launch (`FusedPasses::chained_key_switch`) at N <=
    /// 2^`chain_log_n`, where the passes are fused and the device allows it; 0: never
    /// (`SEAL_OPENCL_CHAIN`).
    pub chain_log_n: u32,
    /// Work groups per compute unit a chained launch runs, each taking its share of the
    /// passes' groups in turn; 0: one work group per pass group (`SEAL_OPENCL_CHAIN_GROUPS`).
    pub chain_groups_per_unit: u32,
    /// `true`: a multiply of two ciphertexts of two polynomials, at a level that chains,
    /// waits for its relinearization and runs with it in one launch
    /// (`LevelOps::multiply_relinearize`), a multiply_plain for what consumes its product,
    /// and adds and subs into an accumulator wait as a sum, up to `SUM_TERMS_MAX` terms in
    /// one launch (`LevelOps::sum`), a plaintext product a term of it; anything else that
    /// touches the product or the sum first runs it on its own
    /// (`SEAL_OPENCL_DEFER_MULTIPLY`; read by the SEAL backend,
    /// `src/seal_backend/deferred.rs`).
    pub defer_multiply: bool,
    /// The most relinearizations of deferred multiplies (independent, with one key) that
    /// wait for each other to run in one chained launch, or one launch per fused pass where
    /// the level does not chain (`LevelOps::multiply_relinearize_jobs`,
    /// 1 to `KS_JOBS_MAX`; 1: each runs at once, `SEAL_OPENCL_BATCH_PRODUCTS`; read by the
    /// SEAL backend, `src/seal_backend/batch.rs`).
    pub batch_products: usize,
    /// The most rotations of ciphertexts in NTT form (independent) that wait for each other
    /// to run in one chained launch, or one launch per fused pass where the level does not
    /// chain (`LevelOps::apply_galois_jobs`, 1 to `KS_JOBS_MAX`; 1:
    /// each runs at once, `SEAL_OPENCL_BATCH_ROTATIONS`; read by the SEAL backend,
    /// `src/seal_backend/batch.rs`).
    pub batch_rotations: usize,
    /// The most waves of such batched key switches that wait (a wave is one launch of
    /// independent ones; a key switch whose input is pending joins a later wave), at least
    /// 1 (1: such a key switch runs the batch first, `SEAL_OPENCL_BATCH_WAVES`; read by
    /// the SEAL backend, `src/seal_backend/batch.rs`).
    pub batch_waves: usize,
    /// How much of CKKSEncoder::encode runs on the device (`SEAL_OPENCL_ENCODE`; read by
    /// the SEAL backend, `src/seal_backend/encode.rs`).
    pub encode: EncodeOnDevice,
}

impl Default for KernelChoices {
    /// Fused kernels, Dhem-Quisquater's Barrett, key switches chained up to
    /// [`DEFAULT_CHAIN_LOG_N`], multiplies deferred to their relinearization, encodings'
    /// NTT on the device and their FFT too from [`ENCODE_FFT_MIN_LOG_N`] on.
    fn default() -> Self {
        KernelChoices {
            fused: true,
            barrett_dq: true,
            chain_log_n: DEFAULT_CHAIN_LOG_N,
            chain_groups_per_unit: DEFAULT_CHAIN_GROUPS_PER_UNIT,
            defer_multiply: true,
            batch_products: DEFAULT_BATCH_PRODUCTS,
            batch_rotations: DEFAULT_BATCH_ROTATIONS,
            batch_waves: DEFAULT_BATCH_WAVES,
            encode: EncodeOnDevice::ByRing,
        }
    }
}

/// How much of `CKKSEncoder::encode` (of a vector of values, into a marked plaintext or any
/// under route-all) runs on the device; the words are SEAL's in every case.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EncodeOnDevice {
    /// Nothing: SEAL's CPU encodes, and the plaintext is uploaded where a routed operation
    /// uses it (`host`; H200, 2026-11-30: TenSEAL's MNIST, vector-matrix product and logistic
    /// regression ran 33-111 % slower than with `Ntt`).
    Nothing,
    /// The NTT that ends it; SEAL's host computes the residues (`ntt`).
    Ntt,
    /// The FFT, rounding and reduction too, where the coefficients provably fit
    /// (`crate::ckks::encode`; `fft`). H200, 2026-11-30: the two kernels took 35-40 us of
    /// device time an encoding at 8192 against the host's ~0.4 ms of one thread.
    Fft,
    /// `Fft` at N >= 2^[`ENCODE_FFT_MIN_LOG_N`], `Ntt` below (`auto`, the default).
    ByRing,
}

/// The least log2 N at which the default ([`EncodeOnDevice::ByRing`]) runs encodings' FFT on
/// the device. H200, 2026-12-01 (`benches/results/h200-2026-12-01-encode-default/`), TenSEAL
/// per inference, `fft` against `ntt` alternating: MNIST with folded products 28.2-28.5 ms
/// against 47.1-48.8 at 16384 and 42.8-44.0 against 78.4-91.4 at 32768, and its stock
/// products within the rounds' spread there (100.7-101.5 against 83.1-102.5, 198.6-209.1
/// against 197.0-200.8); at 8192 the stock products, bound by the device, lost (MNIST
/// 68.2-75.4 against 60.7-64.4, the vector-matrix product 689-717 against 553-554) where the
/// folded ones gained (22.1-22.2 against 31.4-32.8).
pub const ENCODE_FFT_MIN_LOG_N: u32 = 14;

impl EncodeOnDevice {
    /// Whether encodings at log2 N = `log_n` run their FFT on the device.
    pub fn fft_at(self, log_n: u32) -> bool {
        match self {
            EncodeOnDevice::Fft => true,
            EncodeOnDevice::ByRing => log_n >= ENCODE_FFT_MIN_LOG_N,
            EncodeOnDevice::Nothing | EncodeOnDevice::Ntt => false,
        }
    }
}

impl std::str::FromStr for EncodeOnDevice {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "host" => Ok(EncodeOnDevice::Nothing),
            "ntt" => Ok(EncodeOnDevice::Ntt),
            "fft" => Ok(EncodeOnDevice::Fft),
            "auto" => Ok(EncodeOnDevice::ByRing),
            _ => Err(Error::invalid(format!(
                "encode {s:?} is not `auto`, `host`, `ntt` or `fft`"
            ))),
        }
    }
}

/// Relinearizations of deferred multiplies that run in one chained launch at most, by
/// default: the kernel's most (H200, 2026-11-30: one thread's MulLin/s at 2^13 32k with 1,
/// 49k with 2, 55k with 3, 57k with 4).
pub const DEFAULT_BATCH_PRODUCTS: usize = 4;

/// Rotations that run in one chained launch at most, by default: the kernel's most.
pub const DEFAULT_BATCH_ROTATIONS: usize = 4;

/// Waves of batched key switches that wait at most, by default: TenSEAL's diagonals take up
/// to 7 NAF steps at 8192 slots (one wave each), and a sum runs at 8 terms.
pub const DEFAULT_BATCH_WAVES: usize = 8;

/// The most waves the `SEAL_OPENCL_BATCH_WAVES` setting allows.
pub const BATCH_WAVES_MAX: usize = 64;

/// The largest log2 N at which key switches run chained by default: where a key switch's
/// five launches cost the host more than its passes take on the device.
pub const DEFAULT_CHAIN_LOG_N: u32 = 14;

/// Work groups per compute unit of a chained launch by default (H200, 2026-12-01, key
/// switches batched four a launch and handing over per job: 8 gave as many MulLin/s and
/// Rotate/s as 4 or more from 1 to 8 threads at 2^13 and 2^14, and one thread's stream of
/// rotations at 2^13 13.1 us a call against 16.6, of MulLins at 2^14 27.0 against 38.4;
/// at 2^15 chained, 94.5 against 147.6. Before the batches, 4 gave the most from 2 to 8
/// threads.)
pub const DEFAULT_CHAIN_GROUPS_PER_UNIT: u32 = 8;

/// One parameter set on one tile.
pub struct CkksContext {
    ctx: Arc<Context>,
    log_n: u32,
    /// The key level's coeff_modulus: data primes, then the special prime when
    /// `using_keyswitching`.
    key_moduli: Vec<Modulus>,
    using_keyswitching: bool,
    strategy: NttStrategy,
    /// Fused kernels or one per step ([`KernelChoices::fused`]).
    fused: bool,
    /// Key switches chained at this N ([`KernelChoices::chain_log_n`]), with
    /// [`KernelChoices::chain_groups_per_unit`].
    chain: Option<u32>,
    /// ckks.cl built with the reduction [`KernelChoices::barrett_dq`] picks.
    kernels: CkksKernels,
    /// Index K - 1 holds level K, once built.
    levels: Mutex<Vec<Option<Arc<LevelData>>>>,
    /// Index p holds the plan over key prime p alone, once built.
    single: Mutex<Vec<Option<Arc<NttPlan>>>>,
    /// encode.cl, built on the first encoding (devices with doubles only).
    encoder: Mutex<Option<Arc<EncodeKernels>>>,
}

/// What the operations at one level of K data primes need.
pub struct LevelData {
    primes: usize,
    /// Over `q_0 .. q_{K-1}` and, when key switching is possible here, the special prime.
    plan: Arc<NttPlan>,
    /// The fused passes on `plan`, where the context fuses and the plan is staged.
    fused: Option<FusedPasses>,
    moduli: ModuliTable,
    /// Rescale: q_{K-1}^-1 mod q_i for i < K - 1, as Shoup pairs (None at K = 1).
    inv_last: Option<Region>,
    /// Key switching: q_special^-1 mod q_i for i < K, as Shoup pairs (None without one).
    inv_special: Option<Region>,
    /// BFV's plaintext scaling at this level (delta_j on the device, q mod t), made by the
    /// first operation that needs it (`LevelOps::plain_scaling`): the parameter set fixes t.
    plain_scaling: Mutex<Option<Arc<(Region, u64)>>>,
}

impl LevelData {
    /// K, the data primes of the level.
    pub fn primes(&self) -> usize {
        self.primes
    }

    pub fn plan(&self) -> &NttPlan {
        &self.plan
    }

    /// The fused passes on the level's plan; None where the context does not fuse or the
    /// plan is naive.
    pub fn fused(&self) -> Option<&FusedPasses> {
        self.fused.as_ref()
    }

    /// The level's primes, then the special prime at index K when key switching is possible.
    pub fn moduli(&self) -> &ModuliTable {
        &self.moduli
    }

    pub fn inv_last(&self) -> Result<&Region> {
        self.inv_last.as_ref().ok_or_else(|| {
            Error::invalid("rescale needs at least two primes in the ciphertext's level")
        })
    }

    /// BFV's plaintext scaling at this level (delta_j = floor(q / t) mod q_j on the device,
    /// then q mod t), made by `make` on first use.
    pub fn plain_scaling(
        &self,
        make: impl FnOnce() -> Result<(Region, u64)>,
    ) -> Result<Arc<(Region, u64)>> {
        let mut slot = self.plain_scaling.lock();
        if let Some(scaling) = &*slot {
            return Ok(scaling.clone());
        }
        let scaling = Arc::new(make()?);
        *slot = Some(scaling.clone());
        Ok(scaling)
    }

    pub fn inv_special(&self) -> Result<&Region> {
        self.inv_special.as_ref().ok_or_else(|| {
            Error::Logic("key switching is not possible at this level (no special prime)".into())
        })
    }
}

impl CkksContext {
    /// The context for N = 2^`log_n` and the key level's primes, running the kernels
    /// `choices` picks. Checks the parameters; builds the kernels' program once (tables
    /// come per level, on first use).
    pub fn new(
        ctx: &Arc<Context>,
        log_n: u32,
        key_moduli: &[u64],
        using_keyswitching: bool,
        strategy: NttStrategy,
        choices: KernelChoices,
    ) -> Result<CkksContext> {
        if key_moduli.is_empty() || (using_keyswitching && key_moduli.len() < 2) {
            return Err(Error::invalid(format!(
                "a CKKS parameter set needs at least {} primes, got {}",
                1 + using_keyswitching as usize,
                key_moduli.len()
            )));
        }
        let key_moduli = key_moduli
            .iter()
            .map(|&q| Modulus::new(q))
            .collect::<Result<Vec<_>>>()?;
        let levels = vec![None; key_moduli.len()];
        let single = vec![None; key_moduli.len()];
        Ok(CkksContext {
            ctx: ctx.clone(),
            log_n,
            using_keyswitching,
            strategy,
            fused: choices.fused,
            chain: (log_n <= choices.chain_log_n).then_some(choices.chain_groups_per_unit),
            kernels: if choices.barrett_dq {
                CkksKernels::new(ctx, log_n)?
            } else {
                CkksKernels::with_seal_barrett(ctx, log_n)?
            },
            key_moduli,
            levels: Mutex::new(levels),
            single: Mutex::new(single),
            encoder: Mutex::new(None),
        })
    }

    /// Whether the tensor product and the mod-down run fused.
    pub fn fused(&self) -> bool {
        self.fused
    }

    /// Chained launches at this N, with their work groups per compute unit, where the
    /// passes are fused ([`KernelChoices::chain_log_n`]); None: separate launches.
    pub fn chain(&self) -> Option<u32> {
        self.chain.filter(|_| self.fused)
    }

    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    /// N, the polynomial degree.
    pub fn coeff_count(&self) -> usize {
        1 << self.log_n
    }

    pub fn key_moduli(&self) -> &[Modulus] {
        &self.key_moduli
    }

    pub fn using_keyswitching(&self) -> bool {
        self.using_keyswitching
    }

    pub fn kernels(&self) -> &CkksKernels {
        &self.kernels
    }

    /// The encoding kernels for this N, built on first use; None on a device without
    /// doubles (`cl_khr_fp64`). Whether encodings use them is the setting's
    /// ([`EncodeOnDevice`]), which the SEAL backend asks.
    pub fn encoder(&self) -> Result<Option<Arc<EncodeKernels>>> {
        if !self.ctx.info().fp64 {
            return Ok(None);
        }
        let mut encoder = self.encoder.lock();
        if let Some(kernels) = &*encoder {
            return Ok(Some(kernels.clone()));
        }
        let kernels = Arc::new(EncodeKernels::new(&self.ctx, self.log_n)?);
        *encoder = Some(kernels.clone());
        Ok(Some(kernels))
    }

    /// The index of the special prime among the key primes.
    pub fn special_index(&self) -> Result<usize> {
        if self.using_keyswitching {
            Ok(self.key_moduli.len() - 1)
        } else {
            Err(Error::Logic(
                "keyswitching is not supported by the context (a single prime)".into(),
            ))
        }
    }

    /// The data for level K (`primes` = K), built and uploaded on `queue` on first use.
    pub fn level(&self, queue: &Queue, primes: usize) -> Result<Arc<LevelData>> {
        if primes == 0 || primes > self.key_moduli.len() {
            return Err(Error::invalid(format!(
                "a level of {primes} primes does not exist in a chain of {}",
                self.key_moduli.len()
            )));
        }
        let mut levels = self.levels.lock();
        if let Some(level) = &levels[primes - 1] {
            return Ok(level.clone());
        }
        let level = Arc::new(self.build_level(queue, primes)?);
        levels[primes - 1] = Some(level.clone());
        Ok(level)
    }

    /// The plan over key prime `index` alone (for one residue per polynomial: the last
    /// prime of a level, or the special prime).
    pub fn single_prime_plan(&self, queue: &Queue, index: usize) -> Result<Arc<NttPlan>> {
        let mut single = self.single.lock();
        let slot = single
            .get_mut(index)
            .ok_or_else(|| Error::invalid(format!("key prime {index} does not exist")))?;
        if let Some(plan) = slot {
            return Ok(plan.clone());
        }
        let plan = Arc::new(NttPlan::new(
            &self.ctx,
            queue,
            self.log_n,
            &self.key_moduli[index..=index],
            self.strategy,
        )?);
        *slot = Some(plan.clone());
        Ok(plan)
    }

    fn build_level(&self, queue: &Queue, primes: usize) -> Result<LevelData> {
        let _span = tracing::debug_span!("ckks_level_upload", primes).entered();
        let data = &self.key_moduli[..primes];
        let special = (self.using_keyswitching && primes < self.key_moduli.len())
            .then(|| self.key_moduli[self.key_moduli.len() - 1]);
        let mut moduli = data.to_vec();
        moduli.extend(special);
        let plan = Arc::new(NttPlan::new(
            &self.ctx,
            queue,
            self.log_n,
            &moduli,
            self.strategy,
        )?);
        let fused = (self.fused && plan.staged_layout().is_some())
            .then(|| FusedPasses::new(Arc::clone(&plan), self.chain))
            .transpose()?;
        let table = ModuliTable::new(&self.ctx, queue, &moduli)?;
        let inverses = |of: Modulus, count: usize| -> Result<Region> {
            let mut words = Vec::with_capacity(2 * count);
            for q in &data[..count] {
                let inv = invert_uint_mod(of.value() % q.value(), q).ok_or_else(|| {
                    Error::invalid(format!("{} has no inverse mod {}", of.value(), q.value()))
                })?;
                let op = ShoupOperand::new(inv, q);
                words.extend([op.operand, op.quotient]);
            }
            self.ctx.upload(queue, &words)
        };
        let inv_last = (primes >= 2)
            .then(|| inverses(data[primes - 1], primes - 1))
            .transpose()?;
        let inv_special = special.map(|s| inverses(s, primes)).transpose()?;
        Ok(LevelData {
            primes,
            plan,
            fused,
            moduli: table,
            inv_last,
            inv_special,
            plain_scaling: Mutex::new(None),
        })
    }
}

/// One key vector of a KSwitchKeys object on the device (a RelinKeys or GaloisKeys entry):
/// `decomposition_count` public keys of 2 polynomials over every key prime, contiguous as
/// SEAL stores each of them: word ((J * 2 + c) * L_key + p) * N + k.
pub struct KswitchKey {
    buffer: Region,
    decomposition_count: usize,
}

impl KswitchKey {
    /// Uploads `words` (checked against the context's shape) on `queue`.
    pub fn upload(
        context: &CkksContext,
        queue: &Queue,
        decomposition_count: usize,
        words: &[u64],
    ) -> Result<KswitchKey> {
        let per_key = 2 * context.key_moduli().len() * context.coeff_count();
        if decomposition_count == 0 || words.len() != decomposition_count * per_key {
            return Err(Error::invalid(format!(
                "kswitch_keys is not valid for encryption parameters: {} words for {decomposition_count} \
                 keys of {per_key}",
                words.len()
            )));
        }
        let _span = tracing::debug_span!("kswitch_key_upload", words = words.len()).entered();
        Ok(KswitchKey {
            buffer: context.ctx.upload(queue, words)?,
            decomposition_count,
        })
    }

    pub fn buffer(&self) -> &Region {
        &self.buffer
    }

    /// How many data primes the key can switch (SEAL: the first data level's K).
    pub fn decomposition_count(&self) -> usize {
        self.decomposition_count
    }
}
