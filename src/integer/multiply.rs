//! SEAL's `Evaluator::bfv_multiply` (and `bfv_square`) on the device: [`BehzLevel`] holds
//! one level's BEHZ data on one OpenCL context (the tables of [`BehzTables`] uploaded, an
//! NTT plan over q U Bsk, the kernels of `opencl/behz.cl` and `opencl/behz_tensor.cl`) and
//! enqueues the product of two ciphertexts in coefficient form on a graph:
//!
//! 1. `behz_extend` on both operands at once (on one when squaring): every polynomial to
//!    base q U Bsk (W = K + NB + 1 residues: its copy in q, its extension to Bsk), into one
//!    scratch buffer;
//! 2. the plan's forward NTT of all of them, fully reduced (SEAL transforms lazily; the
//!    dyadic products reduce fully, so the products' words are the same);
//! 3. the tensor product over the W primes of q U Bsk (the s1 + s2 - 1 polynomials of
//!    SEAL's step (4), canonical) and the lazy inverse NTT of them (step (5)): with a staged
//!    plan, the products loaded into the inverse's block pass (`ntt_inv_block_tensor`,
//!    `opencl/behz_tensor.cl`), then the plan's strided inverse pass where the layout has
//!    two; with a naive plan, CKKS's tensor kernel (`ckks_tensor`) and the plan's inverse;
//! 4. `behz_floor_sk`: times t, divided by q into Bsk, back to q (steps (6)-(8)).
//!
//! Where the level chains (N <= 2^[`BEHZ_CHAIN_LOG_N`], where the CKKS context chains, and
//! the layout takes two passes), steps 1-2 and steps 3-4 run as one launch each, three
//! passes handing over (`behz_extend_fwd_chained`, `behz_tensor_floor_chained` of
//! `opencl/behz_chain.cl`, `FusedPasses::chained_behz_extend_forward` and
//! `chained_behz_tensor_floor` on the plan over q U Bsk): two launches. Else four with a
//! staged plan whose transforms take one pass each (N <= 2^12 with 48 KiB of local memory),
//! six where they take two ([`BehzLevel::launches`]).
//!
//! [`BehzLevels`] holds the levels of one parameter set, built on first use.

use std::sync::Arc;

use parking_lot::Mutex;

use super::behz::{BehzTables, M_TILDE};
use crate::arith::{barrett_reduce_64, Modulus, ShoupOperand};
use crate::ckks::fused::{BehzBuild, ChainedBehzForward, ChainedBehzTensorFloor, FusedPasses};
use crate::ckks::kernels::{CkksKernels, ModuliTable, TENSOR_SIZE_MAX};
use crate::cl::KernelArg::{Buf, U32};
use crate::cl::{
    self, kernel_sigs, sources, Context, KernelArg, KernelSig, Queue, Region, SharedKernel,
};
use crate::device::Graph;
use crate::error::{Error, Result};
use crate::ntt::{NttDirection, NttPlan, NttStrategy, NttTables, Pass, NTT_INV_STRIDED};

kernel_sigs! {
    NTT_INV_BLOCK_TENSOR = ntt_inv_block_tensor(
        values: Buf, inv_root_powers: Buf, params: Buf, coeff_modulus_size: U32, reduce: U32,
        a: Buf, s1: U32, b: Buf, s2: U32,
    );
    BEHZ_EXTEND = behz_extend(x: Buf, a: Buf, b: Buf, s1: U32, moduli: Buf, consts: Buf);
    BEHZ_FLOOR_SK = behz_floor_sk(dst: Buf, y: Buf, moduli: Buf, consts: Buf);
}

/// The largest log2 N at which a level chains its transforms (where the CKKS context
/// chains too). On the H200 (2026-11-29, BFVDefault primes, 4 polynomials of W residues)
/// the chained forward transform and tensor inverse took 17.2 and 16.4 us at 2^13 against
/// 17.6 and 19.3 in two launches each, but 54.4 and 50.6 us at 2^14 (W = 18) against 25.9
/// and 28.4: the chain's ticketed work groups, as many as the device holds at once, run
/// that many residues' passes slower than the separate launches' groups.
pub const BEHZ_CHAIN_LOG_N: u32 = 13;

/// Work items per work group along a polynomial's coefficients (fewer where N is smaller).
const WORK_GROUP_SIZE: usize = 128;

/// The constants buffer: named sections of words, in order; behz.cl reads section NAME at
/// word `BEHZ_OFF_NAME`. A Shoup pair is two words (operand, quotient).
struct Constants {
    sections: Vec<(&'static str, Vec<u64>)>,
}

/// The words of Shoup pairs.
fn pairs(operands: impl IntoIterator<Item = ShoupOperand>) -> Vec<u64> {
    operands
        .into_iter()
        .flat_map(|s| [s.operand, s.quotient])
        .collect()
}

/// Shoup pairs of `values[i]` mod `moduli[i]` (each reduced first).
fn shoup_each(values: impl IntoIterator<Item = u64>, moduli: &[Modulus]) -> Vec<u64> {
    pairs(
        values
            .into_iter()
            .zip(moduli)
            .map(|(v, m)| ShoupOperand::new(barrett_reduce_64(v, m), m)),
    )
}

impl Constants {
    /// The sections `behz.cl` reads, from SEAL's RNSTool constants in `tables`.
    fn new(tables: &BehzTables) -> Constants {
        let (q, bsk) = (tables.base_q(), tables.base_bsk());
        let t = tables.plain_modulus().value();
        let flat = |rows: &[Vec<u64>]| rows.concat();
        Constants {
            sections: vec![
                ("MT_MOD_Q", shoup_each(q.iter().map(|_| M_TILDE), q)),
                (
                    "INV_PUNCT_Q",
                    pairs(tables.q_to_bsk().inv_punctured().to_vec()),
                ),
                ("Q_TO_BSK", flat(tables.q_to_bsk().matrix())),
                ("Q_TO_MT", flat(tables.q_to_m_tilde().matrix())),
                ("NEG_INV_Q_MT", pairs([tables.neg_inv_prod_q_mod_m_tilde()])),
                (
                    "PROD_Q_BSK",
                    shoup_each(tables.prod_q_mod_bsk().to_vec(), bsk),
                ),
                ("INV_MT_BSK", pairs(tables.inv_m_tilde_mod_bsk().to_vec())),
                ("T_MOD_Q", shoup_each(q.iter().map(|_| t), q)),
                ("T_MOD_BSK", shoup_each(bsk.iter().map(|_| t), bsk)),
                ("INV_Q_BSK", pairs(tables.inv_prod_q_mod_bsk().to_vec())),
                (
                    "INV_PUNCT_B",
                    pairs(tables.b_to_q().inv_punctured().to_vec()),
                ),
                ("B_TO_Q", flat(tables.b_to_q().matrix())),
                ("B_TO_MSK", flat(tables.b_to_m_sk().matrix())),
                ("INV_B_MSK", pairs([tables.inv_prod_b_mod_m_sk()])),
                ("PROD_B_Q", shoup_each(tables.prod_b_mod_q().to_vec(), q)),
                (
                    "NEG_PROD_B_Q",
                    shoup_each(
                        tables
                            .prod_b_mod_q()
                            .iter()
                            .zip(q)
                            .map(|(&p, m)| m.value() - p),
                        q,
                    ),
                ),
            ],
        }
    }

    /// All sections' words, in order.
    fn words(&self) -> Vec<u64> {
        self.sections.iter().flat_map(|(_, w)| w.clone()).collect()
    }

    /// ` -D BEHZ_OFF_NAME=word` for each section.
    fn defines(&self) -> String {
        let mut at = 0;
        let mut out = String::new();
        for (name, words) in &self.sections {
            out.push_str(&format!(" -D BEHZ_OFF_{name}={at}"));
            at += words.len();
        }
        out
    }
}

/// The passes of [`TensorInverse::Fused`].
struct TensorPasses {
    block: Pass,
    strided: Option<Pass>,
}

/// Step (4), the tensor product, with the inverse transform of step (5).
enum TensorInverse {
    /// A staged plan: `ntt_inv_block_tensor` (behz_tensor.cl, the products loaded into the
    /// inverse's block pass), then, with a two-pass layout, the plan's strided inverse pass.
    Fused(Box<TensorPasses>),
    /// A naive plan: `ckks_tensor` (ckks.cl's program, built for N), then the plan's
    /// inverse.
    Separate(CkksKernels),
}

/// One BFV level's BEHZ data on one OpenCL context; `&self` methods, shareable by threads
/// (each kernel behind a lock from setting its arguments to enqueueing it).
pub struct BehzLevel {
    ctx: Arc<Context>,
    tables: BehzTables,
    /// Over q's primes, then Bsk's.
    plan: Arc<NttPlan>,
    /// The fused passes on `plan` where they chain steps 1-2 and 3-4 into one launch each
    /// ([`FusedPasses::chains_behz`]); None: separate launches.
    chained: Option<FusedPasses>,
    /// The same primes, for the tensor kernel and behz.cl.
    moduli: ModuliTable,
    /// [`Constants`]' words.
    consts: Region,
    /// The tensor product and the inverse transform after it: fused where the plan is
    /// staged, else `ckks_tensor` and the plan's inverse.
    tensor: TensorInverse,
    extend: SharedKernel,
    floor_sk: SharedKernel,
}

impl BehzLevel {
    /// Uploads `tables` (SEAL's RNSTool of the level) on `queue` (blocking), builds the
    /// plan over q U Bsk with `strategy` and the programs; with `chain` (the CKKS context's
    /// chained launches at this N: work groups per compute unit) and N <= 2^
    /// [`BEHZ_CHAIN_LOG_N`], the plan's chained transforms where the device and the
    /// plan's layout allow them.
    ///
    /// Errors: the uploads or builds fail.
    pub fn new(
        ctx: &Arc<Context>,
        queue: &Queue,
        tables: BehzTables,
        strategy: NttStrategy,
        chain: Option<u32>,
    ) -> Result<BehzLevel> {
        // BehzTables::new holds K < BEHZ_BASE_MAX, so NB <= K + 1 <= 16 too: behz.cl's dot
        // products of K or NB terms sum at most 16 products in 128 bits, as SEAL's do.
        let (k, nb) = (tables.base_q().len(), tables.base_b_size());
        let ntt: Vec<NttTables> = tables.ntt_tables().cloned().collect();
        let plan = Arc::new(NttPlan::from_tables(ctx, queue, &ntt, strategy)?);
        let primes: Vec<Modulus> = tables
            .base_q()
            .iter()
            .chain(tables.base_bsk())
            .copied()
            .collect();
        let moduli = ModuliTable::new(ctx, queue, &primes)?;
        let constants = Constants::new(&tables);
        let consts = ctx.upload(queue, &constants.words())?;
        let log_n = tables.log_n();
        let options = format!("-D BEHZ_K={k} -D BEHZ_NB={nb}{}", constants.defines());
        let program = ctx.program(
            &[sources::ARITH, sources::BEHZ],
            &format!("-D LOG_N={log_n} {options}"),
        )?;
        let chain = chain.filter(|_| log_n <= BEHZ_CHAIN_LOG_N);
        let chained = match (chain, plan.staged_layout()) {
            (Some(_), Some(_)) => {
                let build = BehzBuild {
                    options,
                    q_primes: k,
                    moduli: moduli.buffer().clone(),
                    consts: consts.clone(),
                };
                // SAFETY: the options are behz.cl's defines of these tables: K = k, NB = nb
                // (the plan's K + NB + 1 primes are the moduli table's rows), and
                // `Constants::defines`' offsets of the sections whose words `consts` holds.
                Some(unsafe { FusedPasses::for_behz(Arc::clone(&plan), chain, &build) }?)
                    .filter(FusedPasses::chains_behz)
            }
            _ => None,
        };
        let tensor = match plan.staged_layout() {
            Some(layout) => {
                let program = plan.build_program(layout, &[sources::BEHZ_TENSOR], "")?;
                let items = plan.coeff_count() >> layout.log_r();
                let block = Some(layout.block_work_group_size());
                TensorInverse::Fused(Box::new(TensorPasses {
                    block: plan.pass(&program, &NTT_INV_BLOCK_TENSOR, &[], items, block)?,
                    strided: layout
                        .strided_work_group_size()
                        .map(|wg| plan.pass(&program, &NTT_INV_STRIDED, &[], items, Some(wg)))
                        .transpose()?,
                }))
            }
            None => TensorInverse::Separate(CkksKernels::new(ctx, log_n)?),
        };
        Ok(BehzLevel {
            ctx: Arc::clone(ctx),
            plan,
            chained,
            moduli,
            consts,
            tensor,
            extend: cl::shared_kernel(BEHZ_EXTEND.build(&program, &[])?),
            floor_sk: cl::shared_kernel(BEHZ_FLOOR_SK.build(&program, &[])?),
            tables,
        })
    }

    pub fn tables(&self) -> &BehzTables {
        &self.tables
    }

    /// The fused passes on the plan over q U Bsk where the level chains its product (two
    /// launches); None where it launches separately.
    pub fn chained(&self) -> Option<&FusedPasses> {
        self.chained.as_ref()
    }

    /// K, the level's primes.
    pub fn primes(&self) -> usize {
        self.tables.base_q().len()
    }

    /// Kernel launches of one [`BehzLevel::bfv_multiply`]: two where the level chains;
    /// else `behz_extend`, the forward transform's passes, the inverse's (the first with the
    /// tensor product; a naive plan launches `ckks_tensor` apart) and `behz_floor_sk`.
    pub fn launches(&self) -> usize {
        if self.chained.is_some() {
            return 2;
        }
        let per_transform = self.plan.launches_per_transform();
        let separate_tensor = matches!(self.tensor, TensorInverse::Separate(_)) as usize;
        2 + 2 * per_transform + separate_tensor
    }

    /// W = K + NB + 1, the residues of a polynomial in base q U Bsk.
    fn width(&self) -> usize {
        self.primes() + self.tables.base_bsk().len()
    }

    /// SEAL's `bfv_multiply`: dst = the BFV product of `a` (`s1` polynomials) and `b`
    /// (`s2`), s1 + s2 - 1 polynomials. On entry a and b hold K residues per polynomial
    /// in coefficient form, canonical (SEAL's layout); on exit dst does, word for word
    /// SEAL's result (`BehzTables::bfv_multiply_host`). `a` and `b` may be one region
    /// with s1 = s2 (SEAL's `bfv_square`: each polynomial is extended once); dst must
    /// overlap neither. Only enqueues; scratch (W (s1 + s2 + s1 + s2 - 1) N words) comes
    /// from the graph's pool.
    ///
    /// Errors, found before anything is enqueued: a size 0 or above [`TENSOR_SIZE_MAX`]; a
    /// region shorter than its polynomials; dst overlapping a or b; a and b overlapping
    /// without being one region of equal sizes; `graph` on another context or its queue on
    /// another device. Then the pool's allocation errors and the launches'.
    pub fn bfv_multiply(
        &self,
        graph: &Graph,
        dst: &Region,
        a: &Region,
        s1: usize,
        b: &Region,
        s2: usize,
    ) -> Result<()> {
        let err = |what: String| Err(Error::invalid(format!("bfv_multiply: {what}")));
        for (what, s) in [("s1", s1), ("s2", s2)] {
            if !(1..=TENSOR_SIZE_MAX).contains(&s) {
                return err(format!("{what} = {s} is not in 1..={TENSOR_SIZE_MAX}"));
            }
        }
        if !Arc::ptr_eq(graph.context(), &self.ctx) {
            return err("graph is on another OpenCL context than the level's data".into());
        }
        self.plan.check_queue(graph.queue())?;
        let (n, k, w) = (self.tables.coeff_count(), self.primes(), self.width());
        let dest_size = s1 + s2 - 1;
        for (what, region, polys) in [("dst", dst, dest_size), ("a", a, s1), ("b", b, s2)] {
            if region.words() < polys * k * n {
                return err(format!(
                    "`{what}` holds {} words; {polys} polynomials need {}",
                    region.words(),
                    polys * k * n
                ));
            }
        }
        if dst.overlaps(a) || dst.overlaps(b) {
            return err("dst must overlap neither a nor b".into());
        }
        let square = a.same_start(b) && s1 == s2;
        if a.overlaps(b) && !square {
            return err("a and b overlap without being one ciphertext of one size".into());
        }

        let extended = s1 + if square { 0 } else { s2 };
        let poly = w * n;
        let x = graph.alloc_scratch(extended * poly)?;
        let y = graph.alloc_scratch(dest_size * poly)?;
        let (x, y) = (x.buffer(), y.buffer());
        let x_a = x.part(0, s1 * poly)?;
        let x_b = if square {
            x_a.clone()
        } else {
            x.part(s1 * poly, s2 * poly)?
        };

        if let Some(chained) = &self.chained {
            let (queue, profiling) = (graph.queue(), graph.is_profiling());
            let forward = ChainedBehzForward {
                values: x,
                a,
                s1,
                b,
                polys: extended,
                counters: graph.chain_counters(),
            };
            let events = chained.chained_behz_extend_forward(queue, &forward, profiling)?;
            graph.note_launches("behz_extend_fwd_chained", events)?;
            let floor = ChainedBehzTensorFloor {
                values: y,
                a: &x_a,
                s1,
                b: &x_b,
                s2,
                dst,
                counters: graph.chain_counters(),
            };
            let events = chained.chained_behz_tensor_floor(queue, &floor, profiling)?;
            return graph.note_launches("behz_tensor_floor_chained", events);
        }
        // Polynomials [0, s1) of x from a, [s1, extended) from b (none when squaring).
        let extend_args = [
            ("x", Buf(x)),
            ("a", Buf(a)),
            ("b", Buf(b)),
            ("s1", U32(s1 as u32)),
        ];
        // SAFETY: item (c, p), c < N, p < extended, reads words (p' K + i) N + c, i < K, of
        // a (p' = p < s1) or b (p' = p - s1 < s2), writes words (p W + i) N + c, i < W, of
        // x: all inside a, b (checked above) and x (allocated for `extended` polynomials).
        unsafe { self.launch(graph, &self.extend, &BEHZ_EXTEND, &extend_args, extended) }?;
        self.forward(graph, x, extended)?;
        self.tensor_inverse(graph, y, (&x_a, s1), (&x_b, s2))?;
        let floor_args = [("dst", Buf(dst)), ("y", Buf(y))];
        // SAFETY: item (c, p), c < N, p < dest_size, reads words (p W + i) N + c, i < W, of
        // y (allocated for dest_size polynomials) and writes words (p K + i) N + c, i < K,
        // of dst (checked above to hold dest_size polynomials).
        unsafe {
            self.launch(
                graph,
                &self.floor_sk,
                &BEHZ_FLOOR_SK,
                &floor_args,
                dest_size,
            )
        }
    }

    /// y = the inverse transform (lazy) of the tensor product of x_a (`s1` polynomials of W
    /// residues, canonical, in NTT form) and x_b (`s2`): s1 + s2 - 1 polynomials. y, x_a
    /// and x_b are the product's scratch: y holds the output's words and overlaps neither.
    fn tensor_inverse(
        &self,
        graph: &Graph,
        y: &Region,
        (x_a, s1): (&Region, usize),
        (x_b, s2): (&Region, usize),
    ) -> Result<()> {
        let (w, dest_size) = (self.width(), s1 + s2 - 1);
        match &self.tensor {
            TensorInverse::Separate(ckks) => {
                ckks.ckks_tensor(graph, y, x_a, s1, x_b, s2, &self.moduli, w)?;
                self.ntt(graph, y, dest_size, NttDirection::Inverse, false)
            }
            TensorInverse::Fused(passes) => {
                let TensorPasses { block, strided } = passes.as_ref();
                let residues = dest_size * w;
                let profiling = graph.is_profiling();
                let mut events = Vec::new();
                let args = [
                    ("reduce", U32(0)),
                    ("a", Buf(x_a)),
                    ("s1", U32(s1 as u32)),
                    ("b", Buf(x_b)),
                    ("s2", U32(s2 as u32)),
                ];
                // SAFETY: residue r < dest_size W of y (allocated for dest_size polynomials
                // of W residues) is written, words below N of it; it reads residue
                // i W + r % W of x_a for i < s1 and (t - i) W + r % W of x_b for t - i < s2
                // (x_a and x_b hold s1 and s2 polynomials of W residues); tables of prime
                // r % W < W, the plan's primes.
                unsafe {
                    block.launch(graph.queue(), y, w, &args, residues, profiling, &mut events)
                }?;
                if let Some(strided) = strided {
                    // SAFETY: as the plan's own inverse: residues below dest_size W of y,
                    // prime r % W < W.
                    unsafe {
                        strided.launch(
                            graph.queue(),
                            y,
                            w,
                            &[("reduce", U32(0))],
                            residues,
                            profiling,
                            &mut events,
                        )
                    }?;
                }
                graph.note_launches("behz_tensor_inverse", events)
            }
        }
    }

    /// The plan's forward transform of `polys` polynomials of W residues in `buf` on
    /// `graph`, fully reduced.
    fn forward(&self, graph: &Graph, buf: &Region, polys: usize) -> Result<()> {
        self.ntt(graph, buf, polys, NttDirection::Forward, true)
    }

    /// The plan's transform of `polys` polynomials of W residues in `buf` on `graph`.
    fn ntt(
        &self,
        graph: &Graph,
        buf: &Region,
        polys: usize,
        direction: NttDirection,
        reduce: bool,
    ) -> Result<()> {
        let events = self.plan.transform(
            graph.queue(),
            buf,
            polys,
            self.width(),
            direction,
            reduce,
            graph.is_profiling(),
        )?;
        let name = match direction {
            NttDirection::Forward => "behz_ntt_forward",
            NttDirection::Inverse => "behz_ntt_inverse",
        };
        graph.note_launches(name, events)
    }

    /// Sets `args` (every parameter of `sig` before `moduli`), then the level's moduli
    /// table and constants, and enqueues `sig`'s kernel of behz.cl on `graph` over
    /// (N, `polys`): item (c, p) serves coefficient c of polynomial p.
    ///
    /// # Safety
    /// Every word the kernel indexes from (c, p) and `args` lies inside its region: the
    /// kernel's K and W are the defines its program was built with (this level's), it
    /// reads primes below W of the moduli table (which holds W) and constants inside the
    /// uploaded sections (their offsets are the program's defines); the caller proves the
    /// rest for its regions.
    unsafe fn launch(
        &self,
        graph: &Graph,
        kernel: &SharedKernel,
        sig: &KernelSig,
        args: &[(&str, KernelArg)],
        polys: usize,
    ) -> Result<()> {
        let n = self.tables.coeff_count();
        let tables = [
            ("moduli", Buf(self.moduli.buffer())),
            ("consts", Buf(&self.consts)),
        ];
        let local = WORK_GROUP_SIZE.min(n);
        // SAFETY: the kernel was built from `sig`; this function's contract is the rest of
        // what `Graph::launch` asks for.
        unsafe {
            graph.launch(
                kernel,
                sig,
                args.iter().chain(&tables),
                (n, polys),
                Some((local, 1).into()),
            )
        }
    }
}

/// The [`BehzLevel`]s of one BFV parameter set on one OpenCL context, each built and
/// uploaded on first use and shared (as `CkksContext` builds its levels): SEAL's BFV chain
/// drops primes from the end, so level K is over the first K data primes (the key level's
/// primes less the special prime).
pub struct BehzLevels {
    ctx: Arc<Context>,
    log_n: u32,
    data_moduli: Vec<u64>,
    plain_modulus: u64,
    strategy: NttStrategy,
    /// Chained launches ([`BehzLevel::new`]'s `chain`).
    chain: Option<u32>,
    /// Index K - 1 holds level K, once built.
    levels: Mutex<Vec<Option<Arc<BehzLevel>>>>,
}

impl BehzLevels {
    /// The levels for N = 2^`log_n`, the data primes `data_moduli` (SEAL's order) and the
    /// plain modulus t, with NTT plans of `strategy` and `chain` ([`BehzLevel::new`]).
    /// Builds nothing yet.
    ///
    /// Errors: no data primes.
    pub fn new(
        ctx: &Arc<Context>,
        log_n: u32,
        data_moduli: &[u64],
        plain_modulus: u64,
        strategy: NttStrategy,
        chain: Option<u32>,
    ) -> Result<BehzLevels> {
        if data_moduli.is_empty() {
            return Err(Error::invalid("a BFV parameter set needs a data prime"));
        }
        Ok(BehzLevels {
            ctx: Arc::clone(ctx),
            log_n,
            data_moduli: data_moduli.to_vec(),
            plain_modulus,
            strategy,
            chain,
            levels: Mutex::new(vec![None; data_moduli.len()]),
        })
    }

    /// Level K (`primes` = K), built and uploaded on `queue` on first use.
    ///
    /// Errors: K = 0 or more than the data primes; [`BehzTables::new`]'s and
    /// [`BehzLevel::new`]'s.
    pub fn level(&self, queue: &Queue, primes: usize) -> Result<Arc<BehzLevel>> {
        if primes == 0 || primes > self.data_moduli.len() {
            return Err(Error::invalid(format!(
                "a BFV level of {primes} primes does not exist among {} data primes",
                self.data_moduli.len()
            )));
        }
        let mut levels = self.levels.lock();
        if let Some(level) = &levels[primes - 1] {
            return Ok(Arc::clone(level));
        }
        let tables = BehzTables::new(self.log_n, &self.data_moduli[..primes], self.plain_modulus)?;
        let level = Arc::new(BehzLevel::new(
            &self.ctx,
            queue,
            tables,
            self.strategy,
            self.chain,
        )?);
        levels[primes - 1] = Some(Arc::clone(&level));
        Ok(level)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_match_the_source() {
        crate::cl::check_source(sources::BEHZ, &[&BEHZ_EXTEND, &BEHZ_FLOOR_SK]).unwrap();
        crate::cl::check_source(sources::BEHZ_TENSOR, &[&NTT_INV_BLOCK_TENSOR]).unwrap();
    }
}
