//! Device NTT: a plan per (context, N, moduli) holds the tables of every prime, uploaded
//! once, and the program specialised for N; transforms take `&self`, a queue, a buffer and
//! a polynomial count, and only enqueue (they return the events of their kernels).
//!
//! Two strategies (`NttStrategy`), both word for word equal to `ntt::host` and so to SEAL:
//! - `Naive`: radix-2, one launch per round, one work item per butterfly, global memory
//!   only (seed 001 Listing 14): the baseline.
//! - `Staged`: radix-8 in registers, local memory between steps (seed 001 V-B5, Listing
//!   17), and at most two passes over global memory; see `StagedLayout` and
//!   `opencl/ntt.cl`.

use std::fmt;
use std::str::FromStr;
use std::sync::Arc;

use parking_lot::Mutex;

use super::host::mul_root_scalar;
use super::{create_ntt_tables, NttTables};
use crate::arith::{Modulus, ShoupOperand};
use crate::cl::{self, sources, Buffer, Context, Event, Kernel, Queue, SpatialDims};
use crate::error::{Error, Result};

/// Environment variable that overrides the strategy of `NttStrategy::from_env`:
/// `naive` or `staged`.
pub const NTT_STRATEGY_ENV_VAR: &str = "SEAL_OPENCL_NTT";

/// The device plan's sizes: N = 2^1 .. 2^17 (SEAL's smallest degree is 2; its own tests
/// use N = 4 .. 128).
pub const DEVICE_COEFF_COUNT_POWER_MIN: u32 = 1;
pub const DEVICE_COEFF_COUNT_POWER_MAX: u32 = 17;

/// The staged kernels' smallest N; a staged plan for smaller N runs the naive kernels
/// (a transform of fewer than 1024 points is a few tiny launches either way).
pub const STAGED_COEFF_COUNT_POWER_MIN: u32 = 10;

/// SEAL's largest number of primes in a coefficient modulus.
const MAX_COEFF_MODULUS_COUNT: usize = 64;

/// Words per prime in the `params` buffer (`PARAMS_STRIDE` in ntt.cl).
const PARAMS_STRIDE: usize = 8;

/// The largest sub-transform a staged work group holds: 2^12 words, 32 KiB (36 KiB with
/// the block kernels' padding), which fits the 48 KiB of local memory NVIDIA's OpenCL
/// gives a work group, and 512 work items of 8 values.
const MAX_LOG_GROUP_WORDS: u32 = 12;
/// Words per work group the layout aims for when it has the choice: 256 work items.
const TARGET_LOG_GROUP_WORDS: u32 = 11;
/// Columns per strided work group at least: 16 words = 128 bytes per row read.
const MIN_LOG_COLUMNS: u32 = 4;

/// Which kernels run a transform.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum NttStrategy {
    /// Radix-2, one launch per round, global memory only (the baseline).
    Naive,
    /// Radix-8 steps through local memory, one or two launches.
    Staged,
}

impl NttStrategy {
    /// `SEAL_OPENCL_NTT` if set (`naive` | `staged`), else `Staged`.
    pub fn from_env() -> Result<Self> {
        match std::env::var(NTT_STRATEGY_ENV_VAR) {
            Ok(s) if !s.trim().is_empty() => s.parse(),
            _ => Ok(NttStrategy::Staged),
        }
    }
}

impl FromStr for NttStrategy {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "naive" => Ok(NttStrategy::Naive),
            "staged" => Ok(NttStrategy::Staged),
            _ => Err(Error::invalid(format!(
                "{NTT_STRATEGY_ENV_VAR}={s:?} is not `naive` or `staged`"
            ))),
        }
    }
}

impl fmt::Display for NttStrategy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            NttStrategy::Naive => "naive",
            NttStrategy::Staged => "staged",
        })
    }
}

/// How the staged NTT splits N = S * G (the build options of its program).
///
/// With `log_s = 0` one launch (`ntt_*_block`, G = N) does every round in local memory.
/// Otherwise the strided launch does the S-point sub-transforms of the elements congruent
/// mod G (forward: the first `log_s` rounds; inverse: the last), C = 2^`log_c` classes per
/// work group, and the block launch does the G-point sub-transforms of contiguous blocks
/// (forward: the last rounds, with the final reduction; inverse: the first), B = 2^`log_b`
/// blocks per work group. Every work item holds 8 values.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StagedLayout {
    log_n: u32,
    log_s: u32,
    log_c: u32,
    log_b: u32,
}

impl StagedLayout {
    /// The layout for N = 2^`log_n` on a device with `local_mem_bytes` of local memory per
    /// work group and work groups of at most `max_work_group_size` items: the largest
    /// power-of-two group of at most 2^12 words that fits (with padding), one launch if N
    /// fits it, else S and G as equal as possible (G the larger).
    pub fn new(log_n: u32, local_mem_bytes: u64, max_work_group_size: usize) -> Result<Self> {
        let fits = |log_words: u32| {
            let words = 1u64 << log_words;
            words * 9 / 8 * 8 <= local_mem_bytes && (words / 8) as usize <= max_work_group_size
        };
        let log_cap = (6..=MAX_LOG_GROUP_WORDS)
            .rev()
            .find(|&l| fits(l))
            .ok_or_else(|| {
                Error::invalid(format!(
                    "device has too little local memory ({local_mem_bytes} bytes) or too \
                     small work groups ({max_work_group_size}) for the staged NTT"
                ))
            })?;
        if log_n <= log_cap {
            return Ok(StagedLayout {
                log_s: 0,
                log_c: 0,
                log_b: 0,
                log_n,
            });
        }
        let log_g = log_n.div_ceil(2).min(log_cap);
        let log_s = log_n - log_g;
        if log_s < 3 || log_s > log_cap {
            return Err(Error::invalid(format!(
                "N = 2^{log_n} needs more than two passes on this device \
                 (work groups of at most 2^{log_cap} words)"
            )));
        }
        let log_c = MIN_LOG_COLUMNS
            .max(TARGET_LOG_GROUP_WORDS.saturating_sub(log_s))
            .min(log_cap - log_s)
            .min(log_g);
        let log_b = TARGET_LOG_GROUP_WORDS
            .saturating_sub(log_g)
            .min(log_cap - log_g)
            .min(log_s);
        Ok(StagedLayout {
            log_s,
            log_c,
            log_b,
            log_n,
        })
    }

    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    /// log2 of S, the size of the strided sub-transforms (0: no strided launch).
    pub fn log_s(&self) -> u32 {
        self.log_s
    }

    /// log2 of G, the size of the blocks.
    pub fn log_g(&self) -> u32 {
        self.log_n - self.log_s
    }

    /// log2 of C, the classes per strided work group.
    pub fn log_c(&self) -> u32 {
        self.log_c
    }

    /// log2 of B, the blocks per block work group.
    pub fn log_b(&self) -> u32 {
        self.log_b
    }

    /// Launches per transform: 1 or 2.
    pub fn launches(&self) -> usize {
        if self.log_s == 0 {
            1
        } else {
            2
        }
    }

    /// Work items per block work group (B * G / 8).
    pub fn block_work_group_size(&self) -> usize {
        1 << (self.log_b + self.log_g() - 3)
    }

    /// Local memory per block work group in bytes: B * G words, plus one in 8 of padding.
    pub fn block_local_bytes(&self) -> usize {
        9 << (self.log_b + self.log_g())
    }

    /// Work items per strided work group (S * C / 8), None without a strided launch.
    pub fn strided_work_group_size(&self) -> Option<usize> {
        (self.log_s != 0).then(|| 1 << (self.log_s + self.log_c - 3))
    }

    /// Local memory per strided work group in bytes (S * C words), None without one.
    pub fn strided_local_bytes(&self) -> Option<usize> {
        (self.log_s != 0).then(|| 8 << (self.log_s + self.log_c))
    }

    fn build_options(&self) -> String {
        format!(
            "-D LOG_N={} -D LOG_S={} -D LOG_C={} -D LOG_B={}",
            self.log_n, self.log_s, self.log_c, self.log_b
        )
    }
}

/// One kernel launch of a transform: the kernel with every argument but the values buffer
/// (and `reduce`) set at plan time, and its NDRange.
struct Launch {
    kernel: Kernel,
    /// Work items per residue polynomial.
    items_per_residue: usize,
    /// The required work-group size (staged kernels), or None (naive).
    work_group: Option<usize>,
    /// Whether argument `REDUCE_ARG` is the final-reduction switch of this launch.
    takes_reduce: bool,
}

/// Argument indices shared by every NTT kernel in ntt.cl.
const VALUES_ARG: u32 = 0;
/// The number of primes per polynomial (`coeff_modulus_size`): residue r uses prime r % it.
const PRIMES_ARG: u32 = 3;
const REDUCE_ARG: u32 = 4;

/// The launches of a forward and an inverse transform, in order.
struct Launches {
    forward: Vec<Launch>,
    inverse: Vec<Launch>,
}

/// The forward and inverse negacyclic NTT of one parameter set on one device: N and the
/// RNS primes, their tables in device memory, and the kernels built for them.
///
/// Transforms take `&self` and may be called from several threads: the kernels are
/// shared behind a lock held from setting the values argument to enqueueing (OpenCL
/// captures arguments at enqueue).
pub struct NttPlan {
    ctx: Arc<Context>,
    coeff_count_power: u32,
    moduli: Vec<Modulus>,
    strategy: NttStrategy,
    layout: Option<StagedLayout>,
    launches: Mutex<Launches>,
    /// L tables of N (operand, quotient) pairs: SEAL's `root_powers` of each prime.
    _root_powers: Buffer<u64>,
    /// The same for SEAL's `inv_root_powers`.
    _inv_root_powers: Buffer<u64>,
    /// `PARAMS_STRIDE` words per prime: q, N^-1 (operand, quotient), the last inverse root
    /// times N^-1 (operand, quotient).
    _params: Buffer<u64>,
}

impl NttPlan {
    /// A plan for N = 2^`coeff_count_power` over `moduli` (SEAL's order: residue j of each
    /// polynomial is reduced mod `moduli[j]`). Uploads the tables on `queue` (blocking).
    ///
    /// Errors: N outside 2^10 ..= 2^17, `moduli` empty or more than 64, a modulus without
    /// a primitive 2N-th root, or a device that cannot hold the staged work groups.
    pub fn new(
        ctx: &Arc<Context>,
        queue: &Queue,
        coeff_count_power: u32,
        moduli: &[Modulus],
        strategy: NttStrategy,
    ) -> Result<Self> {
        check_coeff_count_power(coeff_count_power)?;
        Self::from_tables(
            ctx,
            queue,
            &create_ntt_tables(coeff_count_power, moduli)?,
            strategy,
        )
    }

    /// A plan over tables already built (one per prime, all of the same N).
    pub fn from_tables(
        ctx: &Arc<Context>,
        queue: &Queue,
        tables: &[NttTables],
        strategy: NttStrategy,
    ) -> Result<Self> {
        let first = tables
            .first()
            .ok_or_else(|| Error::invalid("invalid modulus: no moduli given"))?;
        let log_n = first.coeff_count_power();
        check_coeff_count_power(log_n)?;
        if tables.len() > MAX_COEFF_MODULUS_COUNT {
            return Err(Error::invalid(format!(
                "{} moduli given; SEAL allows at most {MAX_COEFF_MODULUS_COUNT}",
                tables.len()
            )));
        }
        if tables.iter().any(|t| t.coeff_count_power() != log_n) {
            return Err(Error::invalid("NTT tables of different sizes in one plan"));
        }
        let info = ctx.info();
        let strategy = if log_n < STAGED_COEFF_COUNT_POWER_MIN {
            NttStrategy::Naive
        } else {
            strategy
        };
        let layout = match strategy {
            NttStrategy::Naive => None,
            NttStrategy::Staged => Some(StagedLayout::new(
                log_n,
                info.local_mem_bytes,
                info.max_work_group_size,
            )?),
        };
        let options = match layout {
            None => format!("-D LOG_N={log_n}"),
            Some(layout) => layout.build_options(),
        };
        let program = ctx.program(&[sources::ARITH, sources::NTT], &options)?;

        let pairs = |pick: fn(&NttTables) -> &[ShoupOperand]| {
            tables
                .iter()
                .flat_map(|t| pick(t).iter().flat_map(|w| [w.operand, w.quotient]))
                .collect::<Vec<u64>>()
        };
        let root_powers = ctx.upload(queue, &pairs(NttTables::get_from_root_powers))?;
        let inv_root_powers = ctx.upload(queue, &pairs(NttTables::get_from_inv_root_powers))?;
        let mut params = vec![0u64; PARAMS_STRIDE * tables.len()];
        for (t, p) in tables.iter().zip(params.chunks_exact_mut(PARAMS_STRIDE)) {
            let inv_n = t.inv_degree_modulo();
            let last_root = t.get_from_inv_root_powers()[t.coeff_count() - 1];
            let scaled = mul_root_scalar(last_root, inv_n, t.modulus());
            p[..5].copy_from_slice(&[
                t.modulus().value(),
                inv_n.operand,
                inv_n.quotient,
                scaled.operand,
                scaled.quotient,
            ]);
        }
        let params = ctx.upload(queue, &params)?;

        // Every kernel: (values, roots, params, L, ...), values set per call.
        let l = tables.len() as u32;
        let kernel = |name: &str, roots: &Buffer<u64>, extra: &[u32]| -> Result<Kernel> {
            let mut builder = Kernel::builder();
            builder
                .program(&program)
                .name(name)
                .arg(None::<&Buffer<u64>>)
                .arg(roots)
                .arg(&params)
                .arg(l);
            for &x in extra {
                builder.arg(x);
            }
            Ok(builder.build()?)
        };
        let n = 1usize << log_n;
        let launches = match layout {
            None => {
                // One launch per round with (reduce, log_gap); reduce only in the last.
                let round = |name: &str, roots: &Buffer<u64>, log_gap: u32, last: bool| {
                    Ok::<_, Error>(Launch {
                        kernel: kernel(name, roots, &[0, log_gap])?,
                        items_per_residue: n / 2,
                        work_group: None,
                        takes_reduce: last,
                    })
                };
                Launches {
                    forward: (0..log_n)
                        .rev()
                        .map(|g| round("ntt_fwd_naive", &root_powers, g, g == 0))
                        .collect::<Result<_>>()?,
                    inverse: (0..log_n)
                        .map(|g| round("ntt_inv_naive", &inv_root_powers, g, g == log_n - 1))
                        .collect::<Result<_>>()?,
                }
            }
            Some(layout) => {
                let staged = |name: &str, roots: &Buffer<u64>, wg: usize, takes_reduce: bool| {
                    let extra: &[u32] = if takes_reduce { &[0] } else { &[] };
                    Ok::<_, Error>(Launch {
                        kernel: kernel(name, roots, extra)?,
                        items_per_residue: n / 8,
                        work_group: Some(wg),
                        takes_reduce,
                    })
                };
                let block = layout.block_work_group_size();
                let mut forward = Vec::with_capacity(2);
                let mut inverse = Vec::with_capacity(2);
                if let Some(strided) = layout.strided_work_group_size() {
                    forward.push(staged("ntt_fwd_strided", &root_powers, strided, false)?);
                }
                forward.push(staged("ntt_fwd_block", &root_powers, block, true)?);
                inverse.push(staged("ntt_inv_block", &inv_root_powers, block, true)?);
                if let Some(strided) = layout.strided_work_group_size() {
                    inverse.push(staged("ntt_inv_strided", &inv_root_powers, strided, true)?);
                }
                Launches { forward, inverse }
            }
        };

        Ok(NttPlan {
            ctx: Arc::clone(ctx),
            coeff_count_power: log_n,
            moduli: tables.iter().map(|t| *t.modulus()).collect(),
            strategy,
            layout,
            launches: Mutex::new(launches),
            _root_powers: root_powers,
            _inv_root_powers: inv_root_powers,
            _params: params,
        })
    }

    pub fn coeff_count_power(&self) -> u32 {
        self.coeff_count_power
    }

    pub fn coeff_count(&self) -> usize {
        1 << self.coeff_count_power
    }

    /// L, the number of primes (residues per polynomial).
    pub fn coeff_modulus_size(&self) -> usize {
        self.moduli.len()
    }

    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    pub fn strategy(&self) -> NttStrategy {
        self.strategy
    }

    /// The staged layout (None for the naive strategy).
    pub fn staged_layout(&self) -> Option<StagedLayout> {
        self.layout
    }

    /// Kernel launches per transform (log N for naive, 1 or 2 for staged).
    pub fn launches_per_transform(&self) -> usize {
        match self.layout {
            Some(layout) => layout.launches(),
            None => self.coeff_count_power as usize,
        }
    }

    /// Forward NTT of the first `count` polynomials in `values` (L residues of N words
    /// each, SEAL's layout). On entry coefficients in [0, 4q), standard order; on exit
    /// evaluations in [0, q), bit-reversed: SEAL's `ntt_negacyclic_harvey` on every
    /// residue. Enqueued on `queue`; returns the events of its kernels in launch order.
    ///
    /// Errors: `count` is 0, `values` holds fewer than count * L * N words, or `queue`
    /// is on another device.
    pub fn ntt_negacyclic_harvey(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
    ) -> Result<Vec<Event>> {
        self.transform(
            queue,
            values,
            count,
            self.moduli.len(),
            NttDirection::Forward,
            true,
        )
    }

    /// As `ntt_negacyclic_harvey`, but the output stays in [0, 4q): SEAL's
    /// `ntt_negacyclic_harvey_lazy`, word for word.
    pub fn ntt_negacyclic_harvey_lazy(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
    ) -> Result<Vec<Event>> {
        self.transform(
            queue,
            values,
            count,
            self.moduli.len(),
            NttDirection::Forward,
            false,
        )
    }

    /// Inverse NTT (with the factor N^-1) of the first `count` polynomials in `values`.
    /// On entry values in [0, 2q), bit-reversed; on exit coefficients in [0, q), standard
    /// order: SEAL's `inverse_ntt_negacyclic_harvey` on every residue. Errors as
    /// `ntt_negacyclic_harvey`.
    pub fn inverse_ntt_negacyclic_harvey(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
    ) -> Result<Vec<Event>> {
        self.transform(
            queue,
            values,
            count,
            self.moduli.len(),
            NttDirection::Inverse,
            true,
        )
    }

    /// As `inverse_ntt_negacyclic_harvey`, but the output stays in [0, 2q): SEAL's
    /// `inverse_ntt_negacyclic_harvey_lazy`, word for word.
    pub fn inverse_ntt_negacyclic_harvey_lazy(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
    ) -> Result<Vec<Event>> {
        self.transform(
            queue,
            values,
            count,
            self.moduli.len(),
            NttDirection::Inverse,
            false,
        )
    }

    /// The general form of the four transforms above: `count` polynomials of `primes`
    /// residues each, residue j under the plan's prime j, so one plan over a modulus chain
    /// serves every level that is a prefix of it (CKKS drops primes from the end). With
    /// `reduce` the output is fully reduced, else lazy ([0, 4q) forward, [0, 2q) inverse).
    ///
    /// Errors: as `ntt_negacyclic_harvey`, and `primes` is 0 or more than the plan's L.
    pub fn transform(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
        primes: usize,
        direction: NttDirection,
        reduce: bool,
    ) -> Result<Vec<Event>> {
        self.enqueue(queue, values, count, primes, direction, reduce, true)
    }

    /// [`NttPlan::transform`] that creates the kernels' events only when `events` is set
    /// (it returns none otherwise): an event costs the host more than the launch itself
    /// on some drivers (NVIDIA's OpenCL: ~16 us against ~6.6 us, measured 2026-11-23), so
    /// the operations ask for them only when profiling.
    #[allow(clippy::too_many_arguments)]
    pub fn enqueue(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
        primes: usize,
        direction: NttDirection,
        reduce: bool,
        events: bool,
    ) -> Result<Vec<Event>> {
        if primes == 0 || primes > self.moduli.len() {
            return Err(Error::invalid(format!(
                "NTT over {primes} primes; the plan has {}",
                self.moduli.len()
            )));
        }
        self.run(queue, values, count, primes, direction, reduce, events)
    }

    /// Checks the arguments; returns the number of residues (count * primes).
    fn validate(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
        primes: usize,
    ) -> Result<usize> {
        if count == 0 {
            return Err(Error::invalid("NTT of zero polynomials"));
        }
        if queue.device() != self.ctx.device() {
            return Err(Error::invalid(
                "queue is on another device than the NTT plan",
            ));
        }
        let residues = count
            .checked_mul(primes)
            .filter(|&r| r <= u32::MAX as usize)
            .ok_or_else(|| Error::invalid("more than 2^32 - 1 residue polynomials"))?;
        let words = residues
            .checked_mul(self.coeff_count())
            .ok_or_else(|| Error::invalid("polynomial count overflows"))?;
        if values.len() < words {
            return Err(Error::invalid(format!(
                "buffer holds {} words; {count} polynomials of {primes} residues of N = {} need {words}",
                values.len(),
                self.coeff_count()
            )));
        }
        Ok(residues)
    }

    #[allow(clippy::too_many_arguments)]
    fn run(
        &self,
        queue: &Queue,
        values: &Buffer<u64>,
        count: usize,
        primes: usize,
        direction: NttDirection,
        reduce: bool,
        want_events: bool,
    ) -> Result<Vec<Event>> {
        let residues = self.validate(queue, values, count, primes)?;
        let launches = self.launches.lock();
        let launches = match direction {
            NttDirection::Forward => &launches.forward,
            NttDirection::Inverse => &launches.inverse,
        };
        let mut events = Vec::with_capacity(if want_events { launches.len() } else { 0 });
        for launch in launches {
            // SAFETY: the per-call arguments are set here, with the types ntt.cl declares,
            // under the plan's lock, before every enqueue; the tables were set when the
            // kernel was built and stay alive with it.
            unsafe {
                cl::set_arg_raw(&launch.kernel, VALUES_ARG, cl::KernelArg::Buf(values))?;
                cl::set_arg_raw(
                    &launch.kernel,
                    PRIMES_ARG,
                    cl::KernelArg::U32(primes as u32),
                )?;
                if launch.takes_reduce {
                    cl::set_arg_raw(
                        &launch.kernel,
                        REDUCE_ARG,
                        cl::KernelArg::U32(reduce as u32),
                    )?;
                }
            }
            let mut event = want_events.then(Event::empty);
            // SAFETY: validate() checked values.len() >= residues * N. Each work item (or
            // work group of the required size, for staged kernels) serves residue
            // `item / items_per_residue` < residues and touches words below N of it; the
            // root tables hold L * N pairs, indexed by prime = residue % primes < L and
            // root index < N, and params L * PARAMS_STRIDE words.
            unsafe {
                cl::enqueue_on(
                    queue,
                    &launch.kernel,
                    residues * launch.items_per_residue,
                    launch.work_group.map(SpatialDims::from),
                    event.as_mut(),
                )?
            };
            events.extend(event);
        }
        Ok(events)
    }
}

/// Which way a transform goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NttDirection {
    /// SEAL's `ntt_negacyclic_harvey`: coefficients to bit-reversed evaluations.
    Forward,
    /// SEAL's `inverse_ntt_negacyclic_harvey`: back, with the factor N^-1.
    Inverse,
}

fn check_coeff_count_power(coeff_count_power: u32) -> Result<()> {
    if !(DEVICE_COEFF_COUNT_POWER_MIN..=DEVICE_COEFF_COUNT_POWER_MAX).contains(&coeff_count_power) {
        return Err(Error::invalid(format!(
            "device NTT supports N = 2^{DEVICE_COEFF_COUNT_POWER_MIN} .. \
             2^{DEVICE_COEFF_COUNT_POWER_MAX}, not 2^{coeff_count_power}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_for_48k_local_memory() {
        // (log N) -> (log S, log C, log B, block items, strided items)
        let want = [
            (10, 0, 0, 0, 128, 0),
            (12, 0, 0, 0, 512, 0),
            (13, 6, 5, 4, 256, 256),
            (16, 8, 4, 3, 256, 512),
            (17, 8, 4, 2, 256, 512),
        ];
        for (log_n, log_s, log_c, log_b, block, strided) in want {
            let l = StagedLayout::new(log_n, 48 * 1024, 1024).unwrap();
            assert_eq!(
                (l.log_s(), l.log_c(), l.log_b()),
                (log_s, log_c, log_b),
                "2^{log_n}"
            );
            assert_eq!(l.log_g() + l.log_s(), log_n);
            assert_eq!(l.block_work_group_size(), block);
            assert!(l.block_local_bytes() <= 48 * 1024);
            if log_s == 0 {
                assert_eq!((l.launches(), l.strided_work_group_size()), (1, None));
            } else {
                assert_eq!(l.launches(), 2);
                assert_eq!(l.strided_work_group_size(), Some(strided));
                assert!(l.strided_local_bytes().unwrap() <= 48 * 1024);
            }
        }
        // Work groups of 256 at most: smaller groups, still two passes at 2^17.
        let l = StagedLayout::new(17, 48 * 1024, 256).unwrap();
        assert!(l.block_work_group_size() <= 256 && l.strided_work_group_size() <= Some(256));
        assert!(StagedLayout::new(17, 1024, 256).is_err());
    }

    #[test]
    fn plans_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<NttPlan>();
    }

    #[test]
    fn strategy_names() {
        assert_eq!("naive".parse::<NttStrategy>().unwrap(), NttStrategy::Naive);
        assert_eq!(
            " Staged ".parse::<NttStrategy>().unwrap(),
            NttStrategy::Staged
        );
        assert!("radix4".parse::<NttStrategy>().is_err());
        assert_eq!(NttStrategy::Staged.to_string(), "staged");
    }
}
