//! The device NTT plan: per (context, N, moduli) the tables of every prime, uploaded once,
//! and the kernels of a program specialised for N; transforms take `&self`, a queue, a
//! buffer and a polynomial count, and only enqueue (they return the events of their
//! kernels).
//!
//! Two strategies (`NttStrategy`), both word for word equal to `ntt::host` and so to SEAL:
//! - `Naive`: radix-2, one launch per round, one work item per butterfly, global memory
//!   only (Zhai et al., "Accelerating Encrypted Computing on Intel GPUs", Listing 14): the
//!   baseline.
//! - `Staged`: radix-4, 8 or 16 in registers, local memory between steps (the same paper,
//!   V-B5, Listing 17), and at most two passes over global memory; see `StagedLayout`,
//!   `StagedVariant` and `opencl/ntt.cl`.
//!
//! A staged plan also lends its tables and layout to passes that callers specialise with
//! loads and stores of their own, from sources built after the transform core
//! ([`NttPlan::build_program`], [`NttPlan::pass`], launched with [`Pass::launch`]); its own
//! such pass is [`NttPlan::inverse_first_pass_from`], an inverse block pass that reads
//! its input from another buffer.

use std::sync::Arc;

use super::host::mul_root_scalar;
use super::pass::{self, check_buffers, to_u32, Pass, TABLE_PARAMS};
use super::{create_ntt_tables, NttStrategy, NttTables, StagedLayout};
use crate::arith::{Modulus, ShoupOperand};
use crate::cl::KernelArg::{Buf, U32};
use crate::cl::{self, sources, Context, Event, KernelArg, KernelSig, Program, Queue, Region};
use crate::error::{Error, Result};

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

/// Which way a transform goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NttDirection {
    /// SEAL's `ntt_negacyclic_harvey`: coefficients to bit-reversed evaluations.
    Forward,
    /// SEAL's `inverse_ntt_negacyclic_harvey`: back, with the factor N^-1.
    Inverse,
}

/// The tables of every prime in device memory.
struct DeviceTables {
    /// L tables of N (operand, quotient) pairs: SEAL's `root_powers` of each prime.
    root_powers: Region,
    /// The same for SEAL's `inv_root_powers`.
    inv_root_powers: Region,
    /// `PARAMS_STRIDE` words per prime: q, N^-1 (operand, quotient), the last inverse root
    /// times N^-1 (operand, quotient), q's Barrett words r1, r0.
    params: Region,
}

impl DeviceTables {
    /// Uploads the tables of `tables` on `queue` (blocking).
    fn upload(ctx: &Context, queue: &Queue, tables: &[NttTables]) -> Result<DeviceTables> {
        let pairs = |pick: fn(&NttTables) -> &[ShoupOperand]| {
            tables
                .iter()
                .flat_map(|t| pick(t).iter().flat_map(|w| [w.operand, w.quotient]))
                .collect::<Vec<u64>>()
        };
        let mut params = vec![0u64; PARAMS_STRIDE * tables.len()];
        for (t, p) in tables.iter().zip(params.chunks_exact_mut(PARAMS_STRIDE)) {
            let inv_n = t.inv_degree_modulo();
            let last_root = t.get_from_inv_root_powers()[t.coeff_count() - 1];
            let scaled = mul_root_scalar(last_root, inv_n, t.modulus());
            p[..7].copy_from_slice(&[
                t.modulus().value(),
                inv_n.operand,
                inv_n.quotient,
                scaled.operand,
                scaled.quotient,
                t.modulus().const_ratio()[1],
                t.modulus().const_ratio()[0],
            ]);
        }
        Ok(DeviceTables {
            root_powers: ctx.upload(queue, &pairs(NttTables::get_from_root_powers))?,
            inv_root_powers: ctx.upload(queue, &pairs(NttTables::get_from_inv_root_powers))?,
            params: ctx.upload(queue, &params)?,
        })
    }
}

/// The launches of a forward and an inverse transform, in order, and a staged plan's
/// inverse block pass from another buffer.
#[derive(Default)]
struct Launches {
    forward: Vec<Pass>,
    inverse: Vec<Pass>,
    gather: Option<Pass>,
}

/// The forward and inverse negacyclic NTT of one parameter set on one device: N and the
/// RNS primes, their tables in device memory, and the kernels built for them.
///
/// Transforms take `&self` and may be called from several threads: each pass holds its
/// kernel behind a lock from setting the arguments to enqueueing (OpenCL captures
/// arguments at enqueue).
pub struct NttPlan {
    ctx: Arc<Context>,
    coeff_count_power: u32,
    moduli: Vec<Modulus>,
    strategy: NttStrategy,
    layout: Option<StagedLayout>,
    launches: Launches,
    tables: DeviceTables,
}

/// Defines SEAL's four transforms over every prime of the plan.
macro_rules! seal_transforms {
    ($($(#[$doc:meta])* $name:ident => $direction:ident, $reduce:expr;)*) => {
        $(
            $(#[$doc])*
            pub fn $name(
                &self,
                queue: &Queue,
                values: &Region,
                count: usize,
            ) -> Result<Vec<Event>> {
                let primes = self.moduli.len();
                self.transform(queue, values, count, primes, NttDirection::$direction, $reduce, true)
            }
        )*
    };
}

impl NttPlan {
    /// A plan for N = 2^`coeff_count_power` over `moduli` (SEAL's order: residue j of each
    /// polynomial is reduced mod `moduli[j]`). Uploads the tables on `queue` (blocking).
    ///
    /// Errors: N outside 2^1 ..= 2^17, `moduli` empty or more than 64, a modulus without
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

    /// A plan over tables already built (one per prime, all of the same N). N below
    /// 2^`STAGED_COEFF_COUNT_POWER_MIN` runs the naive strategy whatever `strategy` says.
    pub fn from_tables(
        ctx: &Arc<Context>,
        queue: &Queue,
        tables: &[NttTables],
        strategy: NttStrategy,
    ) -> Result<Self> {
        let log_n = check_tables(tables)?;
        let (strategy, layout) = match strategy {
            NttStrategy::Staged(variant) if log_n >= STAGED_COEFF_COUNT_POWER_MIN => {
                let info = ctx.info();
                let layout = StagedLayout::new(
                    log_n,
                    info.local_mem_bytes,
                    info.max_work_group_size,
                    variant,
                )?;
                (strategy, Some(layout))
            }
            _ => (NttStrategy::Naive, None),
        };
        let mut plan = NttPlan {
            ctx: Arc::clone(ctx),
            coeff_count_power: log_n,
            moduli: tables.iter().map(|t| *t.modulus()).collect(),
            strategy,
            layout,
            launches: Launches::default(),
            tables: DeviceTables::upload(ctx, queue, tables)?,
        };
        plan.launches = match layout {
            None => plan.naive_launches()?,
            Some(layout) => plan.staged_launches(layout)?,
        };
        Ok(plan)
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.ctx
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

    seal_transforms! {
        /// Forward NTT of the first `count` polynomials in `values` (L residues of N words
        /// each, SEAL's layout). On entry coefficients in [0, 4q), standard order; on exit
        /// evaluations in [0, q), bit-reversed: SEAL's `ntt_negacyclic_harvey` on every
        /// residue. Enqueued on `queue`; returns the events of its kernels in launch order.
        ///
        /// Errors: `count` is 0, `values` holds fewer than count * L * N words, or `queue`
        /// is on another device.
        ntt_negacyclic_harvey => Forward, true;
        /// As `ntt_negacyclic_harvey`, but the output stays in [0, 4q): SEAL's
        /// `ntt_negacyclic_harvey_lazy`, word for word.
        ntt_negacyclic_harvey_lazy => Forward, false;
        /// Inverse NTT (with the factor N^-1) of the first `count` polynomials in `values`.
        /// On entry values in [0, 2q), bit-reversed; on exit coefficients in [0, q),
        /// standard order: SEAL's `inverse_ntt_negacyclic_harvey` on every residue. Errors
        /// as `ntt_negacyclic_harvey`.
        inverse_ntt_negacyclic_harvey => Inverse, true;
        /// As `inverse_ntt_negacyclic_harvey`, but the output stays in [0, 2q): SEAL's
        /// `inverse_ntt_negacyclic_harvey_lazy`, word for word.
        inverse_ntt_negacyclic_harvey_lazy => Inverse, false;
    }

    /// The general form of the four transforms above: `count` polynomials of `primes`
    /// residues each, residue j under the plan's prime j, so one plan over a list of
    /// primes serves every prefix of it. With `reduce` the output is fully reduced, else
    /// lazy ([0, 4q) forward, [0, 2q) inverse). The kernels' events are created only when
    /// `events` is set (none are returned otherwise): on some drivers an event costs the
    /// host more than the launch itself, so callers ask for them only when profiling.
    ///
    /// Errors: as `ntt_negacyclic_harvey`, and `primes` is 0 or more than the plan's L.
    #[allow(clippy::too_many_arguments)]
    pub fn transform(
        &self,
        queue: &Queue,
        values: &Region,
        count: usize,
        primes: usize,
        direction: NttDirection,
        reduce: bool,
        events: bool,
    ) -> Result<Vec<Event>> {
        let residues = self.validate(queue, values, count, primes)?;
        let passes = match direction {
            NttDirection::Forward => &self.launches.forward,
            NttDirection::Inverse => &self.launches.inverse,
        };
        let mut out = Vec::with_capacity(if events { passes.len() } else { 0 });
        for pass in passes {
            let reduce = [("reduce", U32(reduce as u32))];
            let args = if pass.sets("reduce") {
                &reduce[..]
            } else {
                &[]
            };
            // SAFETY: validate() checked values.len() >= residues * N and primes <= L:
            // each work item (or work group) serves residue item / items_per_residue <
            // residues, words below N of it, and reads the tables of prime residue %
            // primes < L.
            unsafe { pass.launch(queue, values, primes, args, residues, events, &mut out) }?;
        }
        Ok(out)
    }

    /// The first pass of the inverse transform of `count` polynomials of `primes` residues
    /// read from `src` into `values`: with a one-pass layout the whole inverse, reduced to
    /// [0, q), as a copy followed by [`NttPlan::transform`] would leave it; with two, the
    /// block pass (the first `log_g` rounds, lazy: [0, 2q)), which a caller's strided pass
    /// finishes. Residue j of polynomial p is read from residue p * src_stride +
    /// src_first + j of src (one residue of every polynomial, a polynomial at an offset).
    /// `src` is unchanged and must not be `values`. One launch.
    ///
    /// Errors: as [`NttPlan::transform`]; a naive plan; `src` is `values` or holds fewer
    /// than ((count - 1) * src_stride + src_first + primes) * N words.
    #[allow(clippy::too_many_arguments)]
    pub fn inverse_first_pass_from(
        &self,
        queue: &Queue,
        values: &Region,
        src: &Region,
        src_stride: usize,
        src_first: usize,
        count: usize,
        primes: usize,
        events: bool,
    ) -> Result<Vec<Event>> {
        const WHAT: &str = "inverse_first_pass_from";
        let residues = self.validate(queue, values, count, primes)?;
        let src_words = self.extent(WHAT, count, src_stride, src_first + primes)?;
        check_buffers(
            WHAT,
            &[("values", values, 0, true), ("src", src, src_words, false)],
            &[],
        )?;
        let gather = self
            .launches
            .gather
            .as_ref()
            .ok_or_else(|| staged_only(WHAT))?;
        let args = [
            ("reduce", U32(1)),
            ("src", Buf(src)),
            ("src_stride", U32(to_u32(src_stride)?)),
            ("src_first", U32(to_u32(src_first)?)),
        ];
        let mut out = Vec::new();
        // SAFETY: residue r < residues of values (checked to hold residues * N words) is
        // written, words below N of it; it reads residue (r / primes) * src_stride +
        // src_first + r % primes <= (count - 1) * src_stride + src_first + primes - 1 of
        // src (checked above); tables as in `enqueue`.
        unsafe { gather.launch(queue, values, primes, &args, residues, events, &mut out) }?;
        Ok(out)
    }

    /// The program of the transform core and then `extra` sources, built for `layout` (the
    /// plan's, or another on the same device and N) with `options` added: the kernels of
    /// passes that callers specialise. Programs are cached by the context.
    pub fn build_program(
        &self,
        layout: StagedLayout,
        extra: &[&str],
        options: &str,
    ) -> Result<Program> {
        let sources = [&[sources::ARITH, sources::NTT][..], extra].concat();
        let options = format!("{} {options}", layout.build_options());
        self.ctx.program(&sources, options.trim_end())
    }

    /// `sig`'s kernel from `program` (a [`NttPlan::build_program`]) with the plan's tables
    /// it takes and `fixed` set; each launch ([`Pass::launch`]) sets the rest, starting
    /// with `values` and `coeff_modulus_size` ([`Pass::launch`]).
    pub fn pass(
        &self,
        program: &Program,
        sig: &'static KernelSig,
        fixed: &[(&'static str, KernelArg)],
        items_per_residue: usize,
        work_group: Option<usize>,
    ) -> Result<Pass> {
        let t = &self.tables;
        let tables = [Buf(&t.root_powers), Buf(&t.inv_root_powers), Buf(&t.params)];
        let mut all: Vec<(&'static str, KernelArg)> = TABLE_PARAMS
            .into_iter()
            .zip(tables)
            .filter(|(name, _)| sig.params.iter().any(|(p, _)| p == name))
            .collect();
        all.extend_from_slice(fixed);
        Pass::new(program, sig, &all, items_per_residue, work_group)
    }

    /// One launch per round with (reduce, log_gap) fixed at plan time, reduce set per call
    /// in the last round only.
    fn naive_launches(&self) -> Result<Launches> {
        let log_n = self.coeff_count_power;
        let program = self.ctx.program(
            &[sources::ARITH, sources::NTT],
            &format!("-D LOG_N={log_n}"),
        )?;
        let round = |sig: &'static KernelSig, log_gap: u32, last: bool| {
            let mut fixed = vec![("log_gap", U32(log_gap))];
            if !last {
                fixed.push(("reduce", U32(0)));
            }
            self.pass(&program, sig, &fixed, self.coeff_count() / 2, None)
        };
        Ok(Launches {
            forward: (0..log_n)
                .rev()
                .map(|g| round(&pass::NTT_FWD_NAIVE, g, g == 0))
                .collect::<Result<_>>()?,
            inverse: (0..log_n)
                .map(|g| round(&pass::NTT_INV_NAIVE, g, g == log_n - 1))
                .collect::<Result<_>>()?,
            gather: None,
        })
    }

    /// A strided pass (two-pass layouts) and a block pass each way, and the inverse block
    /// pass from another buffer; every argument past the tables set per call.
    fn staged_launches(&self, layout: StagedLayout) -> Result<Launches> {
        let program = self.build_program(layout, &[], "")?;
        let items = self.coeff_count() >> layout.log_r();
        let block_wg = Some(layout.block_work_group_size());
        let block = |sig| self.pass(&program, sig, &[], items, block_wg);
        let strided = |sig| {
            let wg = layout.strided_work_group_size();
            wg.map(|wg| self.pass(&program, sig, &[], items, Some(wg)))
                .transpose()
        };
        let forward = [
            strided(&pass::NTT_FWD_STRIDED)?,
            Some(block(&pass::NTT_FWD_BLOCK)?),
        ];
        let inverse = [
            Some(block(&pass::NTT_INV_BLOCK)?),
            strided(&pass::NTT_INV_STRIDED)?,
        ];
        Ok(Launches {
            forward: forward.into_iter().flatten().collect(),
            inverse: inverse.into_iter().flatten().collect(),
            gather: Some(block(&pass::NTT_INV_BLOCK_GATHER)?),
        })
    }

    /// Errors unless `queue` is on the plan's device.
    pub fn check_queue(&self, queue: &Queue) -> Result<()> {
        if cl::queue_device(queue)? != self.ctx.device() {
            return Err(Error::invalid(
                "queue is on another device than the NTT plan",
            ));
        }
        Ok(())
    }

    /// Words up to the end of residue `(count - 1) * stride + last` (exclusive): the
    /// extent of `count` polynomials `stride` residues apart, each touching residues below
    /// `last`; `count * stride * N` with `last` = 0; 0 for no polynomials. An error names
    /// `what` on overflow.
    pub fn extent(&self, what: &str, count: usize, stride: usize, last: usize) -> Result<usize> {
        let residues = if count == 0 {
            Some(0)
        } else if last == 0 {
            count.checked_mul(stride)
        } else {
            count
                .checked_sub(1)
                .and_then(|c| c.checked_mul(stride))
                .and_then(|r| r.checked_add(last))
        };
        residues
            .and_then(|r| r.checked_mul(self.coeff_count()))
            .ok_or_else(|| Error::invalid(format!("{what}: sizes overflow")))
    }

    /// Checks the arguments of a launch over `count` polynomials of `primes` residues in
    /// `values` (the kernels read the tables of primes below `primes`); returns the number
    /// of residues (count * primes).
    pub fn validate(
        &self,
        queue: &Queue,
        values: &Region,
        count: usize,
        primes: usize,
    ) -> Result<usize> {
        if count == 0 {
            return Err(Error::invalid("NTT of zero polynomials"));
        }
        if primes == 0 || primes > self.moduli.len() {
            return Err(Error::invalid(format!(
                "NTT over {primes} primes; the plan has {}",
                self.moduli.len()
            )));
        }
        self.check_queue(queue)?;
        let residues = count
            .checked_mul(primes)
            .filter(|&r| r <= u32::MAX as usize)
            .ok_or_else(|| Error::invalid("more than 2^32 - 1 residue polynomials"))?;
        let words = residues
            .checked_mul(self.coeff_count())
            .ok_or_else(|| Error::invalid("polynomial count overflows"))?;
        if values.words() < words {
            return Err(Error::invalid(format!(
                "region holds {} words; {count} polynomials of {primes} residues of N = {} need {words}",
                values.words(),
                self.coeff_count()
            )));
        }
        Ok(residues)
    }
}

/// The error of a pass that needs a staged plan, naming `what`.
pub fn staged_only(what: &str) -> Error {
    Error::invalid(format!("{what} needs a staged NTT plan"))
}

/// Checks a plan's tables: at least one, at most SEAL's 64, all of one N the device plan
/// supports; returns log N.
fn check_tables(tables: &[NttTables]) -> Result<u32> {
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
    Ok(log_n)
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
    fn plans_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<NttPlan>();
    }
}
