//! The mod-down shared by rescaling and key switching: SEAL's
//! `RNSTool::divide_and_round_q_last_ntt_inplace` (in `mod_switch_scale_to_next`) and the
//! last loop of `switch_key_inplace` compute the same thing. For each polynomial p, with
//! x_p its residue under the prime being dropped (q_last: the level's last prime, or the
//! special prime) and y_p,i its residues under the primes kept, both in NTT form:
//!
//! 1. x_p back to coefficients (inverse NTT under q_last);
//! 2. rounded, r = (x_p + q_last / 2) mod q_last, brought under each q_i with SEAL's
//!    correction, and forward-transformed under q_i (lazy);
//! 3. (y_p,i - that) * q_last^-1 mod q_i, stored, or added to a polynomial (key
//!    switching adds into the ciphertext, a rotation into the permuted first polynomial).
//!
//! Fused ([`CkksContext::fused`] and a staged NTT plan): step 1's first pass reads x_p
//! where it lies (`NttPlan::inverse_first_pass_from`, no gather; key switching's last
//! pass runs it itself), its second pass and the forward transforms' first passes run in
//! one launch with step 2's element-wise work on their loads, and step 3 rides on the
//! forward transforms' last stores ([`FusedPasses::forward_moddown`], kernels in
//! `opencl/fused.cl`): 3 launches with a
//! two-pass NTT layout (2 after key switching), 2 with one (1); where the level chains, a
//! rescale's 3 are one ([`FusedPasses::chained_moddown`]) and key switching's run inside
//! its own chained launch. Unfused (the naive NTT
//! strategy, or `SEAL_OPENCL_FUSED=0`): gather, inverse NTT, `ckks_moddown_prep`, forward
//! NTT, `ckks_divide_round_finish`, as the host references spell it.
//!
//! [`CkksContext::fused`]: crate::ckks::context::CkksContext::fused

use super::LevelOps;
#[cfg(doc)]
use crate::ckks::fused::FusedPasses;
use crate::ckks::fused::{
    ChainedModDown, DivideInto, DivideRound, DropCorrection, ModDown, Sources,
};
use crate::cl::{self, Region};
use crate::error::{Error, Result};
use crate::memcache::PoolBuffer;
use crate::ntt::{NttDirection, NttPlan};

/// The profiler's name for the mod-down's inverse transform of the last residue (its first
/// pass where the passes are fused), apart from `ntt_inverse` (whole ciphertexts, key
/// switching's target) in per-kernel tables.
const INVERSE_LAST: &str = "ntt_inverse_last";

/// The profiler's names for a mod-down in one chained launch, and for one of a sum.
const CHAINED: &str = "moddown_chained";
const CHAINED_SUM: &str = "moddown_sum_chained";

/// Where the residue being dropped lies, and in what form.
pub(crate) enum LastResidue<'b> {
    /// In NTT form, residue `index` of every polynomial of `buf` (`stride` residues each);
    /// left as is.
    Within {
        buf: &'b Region,
        stride: usize,
        index: usize,
    },
    /// In NTT form, one residue per polynomial, packed, in a temporary the mod-down may
    /// overwrite (unfused key switching's inner product).
    Packed(&'b Region),
    /// One residue per polynomial, packed, after the first pass of its inverse NTT
    /// (fused key switching's last pass: [`FusedPasses::forward_key_switch`]); fused only.
    /// With [`ModDownSpec::more`], every job's residues, job after job.
    FirstPassDone(&'b Region),
}

/// One mod-down: the residue being dropped and the division by its prime (see
/// [`DivideRound`]).
pub(crate) struct ModDownSpec<'b> {
    pub last: LastResidue<'b>,
    /// The dropped prime's index among the key primes (its one-prime NTT plan); its index in
    /// the level's moduli is `divide.last_prime` (K - 1 when rescaling, K for the special
    /// prime).
    pub last_key_prime: usize,
    pub divide: DivideRound<'b>,
    /// More mod-downs of the same shape in the same launches ([`ModDown::more`]): their
    /// `last` and `src` residues follow the first's in the same buffers. Only after fused
    /// key switching ([`LastResidue::FirstPassDone`]).
    pub more: &'b [DivideInto<'b>],
}

impl LevelOps<'_> {
    /// `d` in one chained launch ([`FusedPasses::chained_moddown`]), the dropped residue
    /// residue `index` of each polynomial of `d.src` (in NTT form), subtracting
    /// `correction` (a rescale rounds; BGV's mod switch corrects mod t), its intermediates
    /// in scratch buffers. Errors: the level does not chain ([`LevelOps::chains`]); as the
    /// launcher's.
    pub(crate) fn mod_down_chained(
        &self,
        index: usize,
        d: &DivideRound,
        correction: DropCorrection,
    ) -> Result<()> {
        self.mod_down_chained_from(index, d, None, correction)
    }

    /// As [`LevelOps::mod_down_chained`]; with `sum` ([`ChainedModDown::sum`]: plaintext
    /// products added), the launch's first pass writes the sum's words into `d.src` (a
    /// scratch buffer) and the mod-down divides those. Errors: as there; no chained pass of
    /// a sum ([`LevelOps::chains_rescale_sum`]).
    pub(super) fn mod_down_chained_from(
        &self,
        index: usize,
        d: &DivideRound,
        sum: Option<Sources>,
        correction: DropCorrection,
    ) -> Result<()> {
        let fused = self.level.fused().filter(|f| f.chains()).ok_or_else(|| {
            Error::Logic("a chained mod-down at a level that does not chain".into())
        })?;
        let n = self.n();
        let gathered = self.scratch(d.polys * n)?;
        let between = self.scratch(d.polys * d.primes * n)?;
        let name = if sum.is_some() { CHAINED_SUM } else { CHAINED };
        let events = fused.chained_moddown(
            self.graph.queue(),
            &ChainedModDown {
                index,
                sum,
                divide: *d,
                correction,
                gathered: gathered.buffer(),
                md_between: between.buffer(),
                counters: self.graph.chain_counters(),
            },
            self.graph.is_profiling(),
        )?;
        self.graph.note_launches(name, events)
    }

    /// Runs `md` (see the module's documentation).
    pub(super) fn mod_down(&self, md: &ModDownSpec) -> Result<()> {
        if !md.more.is_empty() && !matches!(md.last, LastResidue::FirstPassDone(_)) {
            // Only fused key switching's launches carry several jobs' residues.
            return Err(Error::Logic(
                "mod-down: several jobs before the first pass of their inverse".into(),
            ));
        }
        let n = self.n();
        let queue = self.graph.queue();
        let profiling = self.graph.is_profiling();
        let d = &md.divide;
        let single = self.context.single_prime_plan(queue, md.last_key_prime)?;
        let (Some(fused), Some(_)) = (self.level.fused(), single.staged_layout()) else {
            return self.mod_down_unfused(md, &single);
        };
        // A rescale: the dropped residue lies in the polynomials it divides.
        let chained_rescale = match md.last {
            LastResidue::Within { buf, stride, index }
                if fused.chains() && buf.same_start(d.src) && stride == d.src_stride =>
            {
                Some(index)
            }
            _ => None,
        };
        if let Some(index) = chained_rescale {
            return self.mod_down_chained(index, d, DropCorrection::Round);
        }
        // Step 1's first pass (the whole of it with a one-pass layout).
        let first_pass = |buf, stride, index| -> Result<PoolBuffer> {
            let gathered = self.scratch(d.polys * n)?;
            let events = single.inverse_first_pass_from(
                queue,
                gathered.buffer(),
                buf,
                stride,
                index,
                d.polys,
                1,
                profiling,
            )?;
            self.graph.note_launches(INVERSE_LAST, events)?;
            Ok(gathered)
        };
        let gathered;
        let first_pass_done = match md.last {
            LastResidue::FirstPassDone(buf) => buf,
            LastResidue::Within { buf, stride, index } => {
                gathered = first_pass(buf, stride, index)?;
                gathered.buffer()
            }
            LastResidue::Packed(buf) => {
                gathered = first_pass(buf, 1, 0)?;
                gathered.buffer()
            }
        };
        // The rest of step 1, then steps 2 and 3 on the forward transforms' loads and
        // stores; a two-pass layout keeps the words between its passes in `between`.
        let jobs = 1 + md.more.len();
        let between = if fused.plan().launches_per_transform() == 2 {
            Some(self.scratch(jobs * d.polys * d.primes * n)?)
        } else {
            None
        };
        let events = fused.forward_moddown(
            queue,
            &ModDown {
                last: first_pass_done,
                scratch: between.as_ref().map_or(first_pass_done, |b| b.buffer()),
                divide: *d,
                more: md.more,
            },
            profiling,
        )?;
        self.graph.note_launches("ntt_forward_moddown", events)
    }

    /// [`LevelOps::mod_down`] step by step, one kernel or transform each.
    /// `single` is the plan over the dropped prime alone.
    fn mod_down_unfused(&self, md: &ModDownSpec, single: &NttPlan) -> Result<()> {
        let d = &md.divide;
        self.mod_down_unfused_with(md, single, |t, coeffs| {
            self.context.kernels().ckks_moddown_prep(
                self.graph,
                t,
                coeffs,
                d.last_prime,
                self.level.moduli(),
                d.primes,
                d.polys,
            )
        })
    }

    /// The unfused mod-down with `prep` as step 2's element-wise part: `prep(t, coeffs)`
    /// gets the dropped residues in coefficient form (`coeffs`, packed, one per
    /// polynomial, < 2 q_last) and writes into `t` (polys * primes residues) what the
    /// division subtracts, in coefficient form, < 2 q_i; the forward transform and
    /// `ckks_divide_round_finish` follow. CKKS's prep rounds (`ckks_moddown_prep`); BGV's
    /// carries the plain modulus' correction (`crate::integer`).
    pub(crate) fn mod_down_unfused_with(
        &self,
        md: &ModDownSpec,
        single: &NttPlan,
        prep: impl FnOnce(&Region, &Region) -> Result<()>,
    ) -> Result<()> {
        let d = &md.divide;
        let n = self.n();
        let kernels = self.context.kernels();
        let moduli = self.level.moduli();
        let gathered;
        let coeffs = match md.last {
            LastResidue::Within { buf, stride, index } => {
                gathered = self.scratch(d.polys * n)?;
                kernels.ckks_gather_residue(
                    self.graph,
                    gathered.buffer(),
                    buf,
                    stride,
                    index,
                    d.polys,
                )?;
                gathered.buffer()
            }
            LastResidue::Packed(buf) => buf,
            LastResidue::FirstPassDone(_) => {
                return Err(Error::Logic(
                    "mod-down: a residue after a fused pass reached the unfused mod-down".into(),
                ))
            }
        };
        self.ntt_with(
            INVERSE_LAST,
            single,
            coeffs,
            d.polys,
            1,
            NttDirection::Inverse,
            false,
        )?;
        let t = self.scratch(d.polys * d.primes * n)?;
        prep(t.buffer(), coeffs)?;
        self.ntt(
            t.buffer(),
            [d.polys, d.primes],
            NttDirection::Forward,
            false,
        )?;
        // ckks_divide_round_finish adds into dst: dst first gets the addend (the first
        // acc polynomials, zeros after them) unless it holds it already.
        if let Some((acc, acc_polys)) = d.acc {
            let queue = self.graph.queue();
            let extent = |polys: usize| ((polys - 1) * d.dst_stride + d.primes) * n;
            if acc_polys > 0 && !acc.same_start(d.dst) {
                cl::copy_range(queue, acc, 0, d.dst, 0, extent(acc_polys))?;
            }
            if acc_polys < d.polys {
                let from = acc_polys * d.dst_stride * n;
                cl::fill_range(queue, d.dst, from, extent(d.polys) - from, 0)?;
            }
        }
        kernels.ckks_divide_round_finish(
            self.graph,
            d.dst,
            d.dst_stride,
            d.src,
            d.src_stride,
            t.buffer(),
            d.inv,
            moduli,
            d.primes,
            d.polys,
            d.acc.is_some(),
        )
    }
}
