//! Launchers of the elementwise CKKS kernels (`opencl/ckks.cl`): [`CkksKernels`] holds
//! every kernel of one program built for (context, N), and [`ModuliTable`] the primes in
//! the form the kernels read. Each launcher validates its arguments (buffer lengths
//! against every word the kernel touches, counts, indices, aliasing the kernel cannot
//! take) and only then enqueues on the graph's queue: nothing is enqueued on an error, and
//! nothing waits. Each launcher's result equals the host reference of the same name in
//! [`super::host`] word for word.
//!
//! Buffers are SEAL's layout: coefficient k of residue j of polynomial p at word
//! ((p * K) + j) * N + k, from the first word of a region. Aliasing is checked on regions: a
//! written region may share words with a read one only where the kernel allows it, and
//! then only starting at the same word.

use std::sync::Arc;

use super::{packed_shifts, SumTerm};
use crate::arith::Modulus;
use crate::cl::KernelArg::{Buf, U32, U64};
use crate::cl::{
    self, kernel_sigs, sources, Context, KernelArg, KernelSig, Program, Queue, Region,
    SharedKernel, SpatialDims,
};
use crate::device::Graph;
use crate::error::{Error, Result};
use crate::ntt::{COEFF_COUNT_POWER_MAX, COEFF_COUNT_POWER_MIN};

mod plain;

pub use plain::{IntegerPlain, Lift};

/// Words per prime in a [`ModuliTable`] (`MODULI_STRIDE` in ckks.cl): q, r0, r1, mu.
pub const MODULI_STRIDE: usize = 4;

/// Work items per work group of every CKKS kernel, along dimension 0 of its range (the
/// words of one row): 256 items read 2 KiB of neighbouring words from each buffer. A row
/// with fewer words, or a number of words it does not divide, gets the largest power of
/// two that divides it.
pub const WORK_GROUP_SIZE: usize = 256;

/// The most terms of one `ckks_sum` launch (its slots `t0` .. `t7`, `p0` .. `p7`), M: a
/// pending sum of M terms is launched at once (`crate::seal_backend`'s deferred sums). With
/// M = 8 the kernel takes 41 OpenCL parameters, 328 bytes, well inside the 1024 bytes
/// every full-profile device accepts (`CL_DEVICE_MAX_PARAMETER_SIZE`), and the host's
/// issue per term is an eighth of a launch (~1.2 us of NVIDIA's ~10 us); twice the slots
/// would save another 0.6 us per term for twice the arguments set per launch and twice
/// the terms' words an accumulator keeps alive.
pub const SUM_TERMS_MAX: usize = 8;

/// The parameter names of `ckks_sum`'s term slots and their plaintexts.
const SUM_TERM_SLOTS: [&str; SUM_TERMS_MAX] = ["t0", "t1", "t2", "t3", "t4", "t5", "t6", "t7"];
const SUM_PLAIN_SLOTS: [&str; SUM_TERMS_MAX] = ["p0", "p1", "p2", "p3", "p4", "p5", "p6", "p7"];

/// The most polynomials per tensor operand: the kernel sums at most min(s1, s2) products
/// below 2^122 exactly in 128 bits. SEAL's own limit (`SEAL_CIPHERTEXT_SIZE_MAX`) is 16.
pub const TENSOR_SIZE_MAX: usize = 64;

/// The primes of a level in device memory, `MODULI_STRIDE` words each: q, then
/// floor(2^128 / q) as two words (SEAL's `const_ratio()[0..2]`), then
/// [`Modulus::dq_ratio`] (the ratio of the kernels' products' reduction). Kernels index it
/// by prime: the prime of residue r of a K-residue polynomial array is r % K.
pub struct ModuliTable {
    moduli: Vec<Modulus>,
    buffer: Region,
}

impl ModuliTable {
    /// Uploads `moduli` on `queue` (blocking). Errors: `moduli` empty, or the upload fails.
    pub fn new(ctx: &Context, queue: &Queue, moduli: &[Modulus]) -> Result<ModuliTable> {
        if moduli.is_empty() {
            return Err(Error::invalid("moduli table: no moduli given"));
        }
        let words: Vec<u64> = moduli
            .iter()
            .flat_map(|m| {
                let [r0, r1, _] = m.const_ratio();
                [m.value(), r0, r1, m.dq_ratio()]
            })
            .collect();
        Ok(ModuliTable {
            moduli: moduli.to_vec(),
            buffer: ctx.upload(queue, &words)?,
        })
    }

    /// The device words (`MODULI_STRIDE` per prime).
    pub fn buffer(&self) -> &Region {
        &self.buffer
    }

    pub fn moduli(&self) -> &[Modulus] {
        &self.moduli
    }

    /// The number of primes.
    pub fn len(&self) -> usize {
        self.moduli.len()
    }

    /// Always false: a table holds at least one prime.
    pub fn is_empty(&self) -> bool {
        self.moduli.is_empty()
    }
}

kernel_sigs! {
    CKKS_ADD = ckks_add(dst: Buf, a: Buf, b: Buf, moduli: Buf, K: U32);
    CKKS_SUB = ckks_sub(dst: Buf, a: Buf, b: Buf, moduli: Buf, K: U32);
    CKKS_NEGATE = ckks_negate(dst: Buf, a: Buf, moduli: Buf, K: U32);
    CKKS_LIFT_SIGNED = ckks_lift_signed(dst: Buf, src: Buf, moduli: Buf, K: U32);
    CKKS_MULTIPLY_PLAIN = ckks_multiply_plain(dst: Buf, ct: Buf, plain: Buf, moduli: Buf, K: U32);
    CKKS_SUM = ckks_sum(
        dst: Buf,
        t0: Buf, t1: Buf, t2: Buf, t3: Buf, t4: Buf, t5: Buf, t6: Buf, t7: Buf,
        p0: Buf, p1: Buf, p2: Buf, p3: Buf, p4: Buf, p5: Buf, p6: Buf, p7: Buf,
        moduli: Buf, K: U32, terms: U32, products: U32, subtract: U32, shifts_lo: U64,
        shifts_hi: U64, accumulate: U32,
    );
    CKKS_TENSOR = ckks_tensor(dst: Buf, a: Buf, s1: U32, b: Buf, s2: U32, moduli: Buf, K: U32);
    CKKS_COPY_RESIDUES = ckks_copy_residues(dst: Buf, dst_stride: U32, src: Buf, src_stride: U32, residues_per_poly: U32);
    CKKS_GATHER_RESIDUE = ckks_gather_residue(dst: Buf, src: Buf, src_stride: U32, index: U32);
    CKKS_GALOIS_NTT = ckks_galois_ntt(dst: Buf, src: Buf, galois_elt: U32);
    CKKS_MODDOWN_PREP = ckks_moddown_prep(dst: Buf, last: Buf, moduli: Buf, last_q_index: U32, K_out: U32);
    CKKS_DIVIDE_ROUND_FINISH = ckks_divide_round_finish(dst: Buf, dst_stride: U32, src: Buf, src_stride: U32, t: Buf, inv: Buf, moduli: Buf, K_out: U32, accumulate: U32);
    CKKS_KS_DECOMPOSE = ckks_ks_decompose(dst: Buf, t_target: Buf, moduli: Buf, K: U32);
    CKKS_KS_INNER_PRODUCT = ckks_ks_inner_product(prod: Buf, last: Buf, dec: Buf, key: Buf, moduli: Buf, K: U32, key_stride_primes: U32, key_special_index: U32, reduce_every: U32);
    PLAIN_LIFT = plain_lift(dst: Buf, plain: Buf, plain_count: U32, moduli: Buf, t: U64, t_r0: U64, t_r1: U64, scalar: U64, threshold: U64);
    PLAIN_SCALE_ADD = plain_scale_add(dst: Buf, src: Buf, plain: Buf, plain_count: U32, moduli: Buf, delta: Buf, t: U64, q_mod_t: U64, threshold: U64, subtract: U32);
}

/// The kernels of `opencl/ckks.cl` and `opencl/plain.cl`, in the order [`CkksKernels`] holds
/// them.
const CKKS_SIGS: [&KernelSig; 16] = [
    &CKKS_ADD,
    &CKKS_SUB,
    &CKKS_NEGATE,
    &CKKS_LIFT_SIGNED,
    &CKKS_MULTIPLY_PLAIN,
    &CKKS_SUM,
    &CKKS_TENSOR,
    &CKKS_COPY_RESIDUES,
    &CKKS_GATHER_RESIDUE,
    &CKKS_GALOIS_NTT,
    &CKKS_MODDOWN_PREP,
    &CKKS_DIVIDE_ROUND_FINISH,
    &CKKS_KS_DECOMPOSE,
    &CKKS_KS_INNER_PRODUCT,
    &PLAIN_LIFT,
    &PLAIN_SCALE_ADD,
];

/// A kernel with its signature. Its arguments are set ([`KernelSig::set`]: one
/// `clSetKernelArg` each, no retain) and the kernel enqueued under the lock: OpenCL captures
/// arguments at enqueue, and the enqueued command keeps its buffers alive, so the kernel can
/// be shared by threads and holds no caller's buffer.
pub(crate) struct Slot {
    pub(crate) sig: &'static KernelSig,
    pub(crate) kernel: SharedKernel,
}

impl Slot {
    pub(crate) fn new(program: &Program, sig: &'static KernelSig) -> Result<Slot> {
        Ok(Slot {
            sig,
            kernel: cl::shared_kernel(sig.build(program, &[])?),
        })
    }

    /// Sets `args` on the slot's kernel and launches it on `graph` over `global` items in
    /// work groups of `local`.
    ///
    /// # Safety
    /// Every index the kernel computes from the range and `args` lies inside its buffer.
    pub(crate) unsafe fn launch(
        &self,
        graph: &Graph,
        args: &[(&str, KernelArg)],
        global: impl Into<SpatialDims>,
        local: SpatialDims,
    ) -> Result<()> {
        // SAFETY: the kernel was built from the slot's signature; this function's contract
        // is the rest of what `Graph::launch` asks for.
        unsafe { graph.launch(&self.kernel, self.sig, args, global, Some(local)) }
    }
}

/// The kernels of one program of row-wise launches (`ckks.cl`, `integer.cl`), one slot per
/// signature, on the context they were built on.
pub(crate) struct RowKernels {
    ctx: Arc<Context>,
    /// The source file, named in errors.
    source: &'static str,
    slots: Vec<Slot>,
}

impl RowKernels {
    /// A slot for each of `sigs` in `program` (built from `source` on `ctx`).
    pub(crate) fn new(
        ctx: &Arc<Context>,
        program: &Program,
        sigs: &[&'static KernelSig],
        source: &'static str,
    ) -> Result<RowKernels> {
        Ok(RowKernels {
            ctx: Arc::clone(ctx),
            source,
            slots: sigs
                .iter()
                .map(|&sig| Slot::new(program, sig))
                .collect::<Result<_>>()?,
        })
    }

    pub(crate) fn context(&self) -> &Arc<Context> {
        &self.ctx
    }

    /// Sets `args` on `sig`'s kernel and launches it on `graph` over the range (`width`,
    /// `rows`) in work groups of up to [`WORK_GROUP_SIZE`] items along the row (fewer when
    /// `width` asks for it: `width` is a multiple of N).
    ///
    /// # Safety
    /// Every word the kernel computes an index of from the range and `args` lies inside
    /// the buffer it indexes (the launchers check this before calling).
    pub(crate) unsafe fn launch(
        &self,
        graph: &Graph,
        sig: &KernelSig,
        args: &[(&str, KernelArg)],
        width: usize,
        rows: usize,
    ) -> Result<()> {
        if !Arc::ptr_eq(graph.context(), &self.ctx) {
            return Err(Error::invalid(format!(
                "{}: graph is on another OpenCL context than the kernels of {}",
                sig.name, self.source
            )));
        }
        let slot = self
            .slots
            .iter()
            .find(|slot| slot.sig.name == sig.name)
            .ok_or_else(|| {
                Error::Logic(format!("{}: not a kernel of {}", sig.name, self.source))
            })?;
        let local = WORK_GROUP_SIZE.min(width & width.wrapping_neg());
        // SAFETY: this function's contract (every index in range).
        unsafe { slot.launch(graph, args, (width, rows), (local, 1).into()) }
    }
}

/// Every elementwise CKKS kernel of one program: built once per (context, N) and shared
/// (`&self` methods, `Send + Sync`). Each method enqueues one kernel on `graph`'s queue
/// (through [`Graph::launch`], so profiling and the sync switch apply) and returns once it
/// is enqueued.
///
/// Every method returns `Error::InvalidArgument` (and enqueues nothing) when a count is
/// zero, an index or count is out of range, the moduli table is too short, a buffer is
/// shorter than the words the kernel touches, buffers alias where the kernel forbids it,
/// or `graph` is on another context than these kernels.
pub struct CkksKernels {
    log_n: u32,
    /// The kernels of [`CKKS_SIGS`]; item (w, p) of a launch serves word w of row p (see
    /// ckks.cl).
    kernels: RowKernels,
}

/// The checks of one launch, each error naming its kernel: counts, moduli tables, buffer
/// lengths in words of residues of N words, aliasing, 32-bit arguments.
pub(crate) struct Checks {
    kernel: &'static str,
    n: usize,
}

impl Checks {
    /// The checks of a launch of kernel `kernel` on residues of `n` words.
    pub(crate) fn new(kernel: &'static str, n: usize) -> Checks {
        Checks { kernel, n }
    }

    pub(crate) fn error(&self, what: String) -> Error {
        Error::invalid(format!("{}: {what}", self.kernel))
    }

    /// Errors unless every count (name, value) is at least 1.
    pub(crate) fn nonzero(&self, counts: &[(&str, usize)]) -> Result<()> {
        match counts.iter().find(|&&(_, count)| count == 0) {
            Some((what, _)) => Err(self.error(format!("{what} is 0"))),
            None => Ok(()),
        }
    }

    /// The words of `product(residues)` residues of N words, or an error on overflow.
    pub(crate) fn words(&self, residues: &[usize]) -> Result<usize> {
        residues
            .iter()
            .chain([&self.n])
            .try_fold(1usize, |acc, &f| acc.checked_mul(f))
            .ok_or_else(|| self.error(format!("sizes {residues:?} times N overflow")))
    }

    /// The words up to the end of residue (polys - 1) * stride + last - 1: `polys`
    /// polynomials `stride` residues apart, each touching its first `last` (polys >= 1).
    pub(crate) fn extent(&self, polys: usize, stride: usize, last: usize) -> Result<usize> {
        let residues = (polys - 1)
            .checked_mul(stride)
            .and_then(|r| r.checked_add(last))
            .ok_or_else(|| self.error("sizes overflow".into()))?;
        self.words(&[residues])
    }

    /// The region argument `what` = `buf`, which the kernel touches up to word `words`;
    /// errors unless the region holds them.
    pub(crate) fn buf<'b>(
        &self,
        what: &'static str,
        buf: &'b Region,
        words: usize,
    ) -> Result<(&'static str, KernelArg<'b>)> {
        if buf.words() < words {
            return Err(self.error(format!(
                "buffer `{what}` holds {} words; the kernel touches {words}",
                buf.words()
            )));
        }
        Ok((what, Buf(buf)))
    }

    /// Errors unless the table holds at least `primes` primes.
    pub(crate) fn covers(&self, moduli: &ModuliTable, primes: usize) -> Result<()> {
        if moduli.len() < primes {
            return Err(self.error(format!(
                "moduli table holds {} primes; {primes} needed",
                moduli.len()
            )));
        }
        Ok(())
    }

    /// Errors if the two regions of a pair share a word.
    pub(crate) fn distinct(&self, pairs: &[Named<'_>]) -> Result<()> {
        for &((a, x), (b, y)) in pairs {
            if x.overlaps(y) {
                return Err(self.error(format!("`{a}` and `{b}` must not overlap")));
            }
        }
        Ok(())
    }

    /// Errors if the two regions of a pair, which the kernel may take as one, share a word
    /// without starting at the same one.
    pub(crate) fn same_or_distinct(&self, pairs: &[Named<'_>]) -> Result<()> {
        for &((a, x), (b, y)) in pairs {
            if x.overlaps(y) && !x.same_start(y) {
                return Err(self.error(format!(
                    "`{a}` and `{b}` overlap without starting at the same word"
                )));
            }
        }
        Ok(())
    }

    /// Errors unless every stride (name, value) is at least `min` (name, value).
    pub(crate) fn strides(
        &self,
        strides: &[(&str, usize)],
        (name, min): (&str, usize),
    ) -> Result<()> {
        match strides.iter().find(|&&(_, stride)| stride < min) {
            Some((what, stride)) => {
                Err(self.error(format!("{what} = {stride} is less than {name} = {min}")))
            }
            None => Ok(()),
        }
    }

    /// The argument `what` = `v` as a 32-bit kernel argument.
    pub(crate) fn u32(
        &self,
        what: &'static str,
        v: usize,
    ) -> Result<(&'static str, KernelArg<'static>)> {
        let v = u32::try_from(v)
            .map_err(|_| self.error(format!("{what} = {v} does not fit 32 bits")))?;
        Ok((what, U32(v)))
    }
}

/// Two named regions.
pub(crate) type Named<'b> = ((&'b str, &'b Region), (&'b str, &'b Region));

/// Declares the launchers of `dst = a op b mod q_j` over `polys` polynomials of `k`
/// residues (prime j = residue % k, moduli[j]): `name => SIG` launches SIG's kernel.
macro_rules! binary_launchers {
    ($($(#[$doc:meta])* $name:ident => $sig:ident;)*) => {
        impl CkksKernels {
            $(
                $(#[$doc])*
                #[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
                pub fn $name(
                    &self, graph: &Graph, dst: &Region, a: &Region, b: &Region,
                    moduli: &ModuliTable, k: usize, polys: usize,
                ) -> Result<()> {
                    let operands = [("dst", dst, polys), ("a", a, polys), ("b", b, polys)];
                    self.elementwise(graph, &$sig, &operands, moduli, k, polys)
                }
            )*
        }
    };
}

binary_launchers! {
    /// dst = a + b mod q_j over `polys` polynomials of `k` residues (prime j = residue % k,
    /// moduli[j]). On entry a, b canonical; on exit dst canonical. dst may be a or b.
    ckks_add => CKKS_ADD;
    /// dst = a - b mod q_j; as [`CkksKernels::ckks_add`].
    ckks_sub => CKKS_SUB;
}

impl CkksKernels {
    /// Builds `opencl/ckks.cl` (after `arith.cl`) for N = 2^`log_n` on `ctx` (programs are
    /// cached by the context) and creates every kernel. Errors: `log_n` outside SEAL's
    /// 1..=17, or the build fails.
    pub fn new(ctx: &Arc<Context>, log_n: u32) -> Result<CkksKernels> {
        CkksKernels::build(ctx, log_n, "")
    }

    /// As [`CkksKernels::new`], with products of two residues (multiply_plain, the
    /// tensor's squares) reduced by SEAL's Barrett instead of Dhem-Quisquater's
    /// (`SEAL_BARRETT` in ckks.cl): the same words, for comparison.
    pub fn with_seal_barrett(ctx: &Arc<Context>, log_n: u32) -> Result<CkksKernels> {
        CkksKernels::build(ctx, log_n, " -D SEAL_BARRETT")
    }

    fn build(ctx: &Arc<Context>, log_n: u32, options: &str) -> Result<CkksKernels> {
        if !(COEFF_COUNT_POWER_MIN..=COEFF_COUNT_POWER_MAX).contains(&log_n) {
            return Err(Error::invalid(format!(
                "CKKS kernels support N = 2^{COEFF_COUNT_POWER_MIN} .. \
                 2^{COEFF_COUNT_POWER_MAX}, not 2^{log_n}"
            )));
        }
        let program = ctx.program(
            &[sources::ARITH, sources::CKKS, sources::PLAIN],
            &format!("-D LOG_N={log_n}{options}"),
        )?;
        Ok(CkksKernels {
            log_n,
            kernels: RowKernels::new(ctx, &program, &CKKS_SIGS, "ckks.cl")?,
        })
    }

    pub fn context(&self) -> &Arc<Context> {
        self.kernels.context()
    }

    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    /// N, the polynomial degree.
    pub fn coeff_count(&self) -> usize {
        1 << self.log_n
    }

    /// The checks of a launch of `sig`'s kernel.
    fn checks(&self, sig: &'static KernelSig) -> Checks {
        Checks {
            kernel: sig.name,
            n: self.coeff_count(),
        }
    }

    /// Checks and launches a kernel of the same-shape family (add, sub, negate,
    /// multiply_plain): its buffers `operands`, dst first (name, region, polynomials it holds:
    /// `polys`, or 1 for a plaintext broadcast to every polynomial), then the moduli table
    /// and K, over the range (K N, polys).
    fn elementwise(
        &self,
        graph: &Graph,
        sig: &'static KernelSig,
        operands: &[(&'static str, &Region, usize)],
        moduli: &ModuliTable,
        k: usize,
        polys: usize,
    ) -> Result<()> {
        self.elementwise_with(graph, sig, operands, moduli, k, polys, &[])
    }

    /// [`CkksKernels::elementwise`] for a kernel with arguments after K (`extra`, scalars).
    #[allow(clippy::too_many_arguments)]
    fn elementwise_with(
        &self,
        graph: &Graph,
        sig: &'static KernelSig,
        operands: &[(&'static str, &Region, usize)],
        moduli: &ModuliTable,
        k: usize,
        polys: usize,
        extra: &[(&'static str, KernelArg)],
    ) -> Result<()> {
        let c = self.checks(sig);
        c.nonzero(&[("K", k), ("polys", polys)])?;
        c.covers(moduli, k)?;
        let mut args = Vec::with_capacity(operands.len() + 2);
        for &(name, buf, held) in operands {
            args.push(c.buf(name, buf, c.words(&[held, k])?)?);
            // Each item reads its words of an operand of `polys` polynomials before it
            // writes the same words of dst; a broadcast plaintext's are read by every item.
            let pair = [(("dst", operands[0].1), (name, buf))];
            if held == polys {
                c.same_or_distinct(&pair)?;
            } else {
                c.distinct(&pair)?;
            }
        }
        args.extend([("moduli", Buf(moduli.buffer())), c.u32("K", k)?]);
        args.extend(extra.iter().copied());
        // SAFETY: item (w, p), w < K N, p < polys, touches word p K N + w of an operand of
        // `polys` polynomials and word w of one of 1 (each checked to hold its K N words per
        // polynomial), and prime w / N < K of the table (checked to hold K primes).
        unsafe {
            self.kernels
                .launch(graph, sig, &args, c.words(&[k])?, polys)
        }
    }

    /// dst = -a mod q_j over `polys` polynomials of `k` residues; dst may be a.
    pub fn ckks_negate(
        &self,
        graph: &Graph,
        dst: &Region,
        a: &Region,
        moduli: &ModuliTable,
        k: usize,
        polys: usize,
    ) -> Result<()> {
        let operands = [("dst", dst, polys), ("a", a, polys)];
        self.elementwise(graph, &CKKS_NEGATE, &operands, moduli, k, polys)
    }

    /// dst[p][j][k] = the residue in [0, q_j) of the signed byte p N + k of `src` (eight a
    /// word, byte b of a word its bits 8 b .. 8 b + 7; see [`pack_signed`]) for p < polys
    /// and j < k: small values (an encryption's samples) at every prime of a level. Needs
    /// every |v| < q_j (true of every prime SEAL makes: q > 2N > 128).
    pub fn ckks_lift_signed(
        &self,
        graph: &Graph,
        dst: &Region,
        src: &Region,
        moduli: &ModuliTable,
        k: usize,
        polys: usize,
    ) -> Result<()> {
        let c = self.checks(&CKKS_LIFT_SIGNED);
        c.nonzero(&[("K", k), ("polys", polys)])?;
        c.covers(moduli, k)?;
        c.distinct(&[(("dst", dst), ("src", src))])?;
        let args = [
            c.buf("dst", dst, c.words(&[polys, k])?)?,
            c.buf("src", src, packed_words(c.words(&[polys])?))?,
            ("moduli", Buf(moduli.buffer())),
            c.u32("K", k)?,
        ];
        // SAFETY: item (w, p), w < K N, p < polys, writes word p K N + w of dst (checked to
        // hold polys K N words) and reads word (p N + w mod N) / 8 of src (checked to hold the
        // polys N bytes), prime w / N < K of the table.
        unsafe {
            self.kernels
                .launch(graph, &CKKS_LIFT_SIGNED, &args, c.words(&[k])?, polys)
        }
    }

    /// dst[p][j][k] = ct[p][j][k] * plain[j][k] mod q_j for p < polys (SEAL's
    /// `multiply_plain_ntt`): `plain` holds K * N canonical words, broadcast to every
    /// polynomial. On exit dst canonical. dst may be ct; `plain` must be neither.
    #[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
    pub fn ckks_multiply_plain(
        &self,
        graph: &Graph,
        dst: &Region,
        ct: &Region,
        plain: &Region,
        moduli: &ModuliTable,
        k: usize,
        polys: usize,
    ) -> Result<()> {
        self.checks(&CKKS_MULTIPLY_PLAIN).distinct(&[
            (("ct", ct), ("plain", plain)),
            (("dst", dst), ("plain", plain)),
        ])?;
        let operands = [("dst", dst, polys), ("ct", ct, polys), ("plain", plain, 1)];
        self.elementwise(graph, &CKKS_MULTIPLY_PLAIN, &operands, moduli, k, polys)
    }

    /// dst = dst (0 without `accumulate`) +- each of `terms` mod q_j, in order, over
    /// `polys` polynomials of `k` residues (host reference `ckks_sum`): 1 to
    /// [`SUM_TERMS_MAX`] terms, each the words of `polys` polynomials or, with a plaintext
    /// (K N words, broadcast), their product with it (SEAL's multiply_plain_ntt). On entry
    /// every input canonical; on exit dst canonical. A term's words may be dst (from its
    /// first word); a plaintext must not overlap dst.
    #[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
    pub fn ckks_sum(
        &self,
        graph: &Graph,
        dst: &Region,
        accumulate: bool,
        terms: &[SumTerm<&Region>],
        moduli: &ModuliTable,
        k: usize,
        polys: usize,
    ) -> Result<()> {
        let c = self.checks(&CKKS_SUM);
        c.nonzero(&[("K", k), ("polys", polys), ("terms", terms.len())])?;
        if terms.len() > SUM_TERMS_MAX {
            return Err(c.error(format!("{} terms, more than {SUM_TERMS_MAX}", terms.len())));
        }
        c.covers(moduli, k)?;
        let words = c.words(&[polys, k])?;
        let mut args = vec![c.buf("dst", dst, words)?];
        let (mut plains, mut products, mut subtract) = (Vec::new(), 0u32, 0u32);
        for (i, (name, plain_name)) in SUM_TERM_SLOTS.into_iter().zip(SUM_PLAIN_SLOTS).enumerate() {
            let Some(term) = terms.get(i) else {
                // Not read: any region.
                args.push((name, Buf(dst)));
                plains.push((plain_name, Buf(dst)));
                continue;
            };
            args.push(c.buf(name, term.words, words)?);
            if term.shift == 0 {
                c.same_or_distinct(&[(("dst", dst), (name, term.words))])?;
            } else if term.plain.is_some() {
                return Err(c.error(format!("term {i}: a plaintext product shifted")));
            } else {
                // Item w reads another item's word of a shifted term.
                c.distinct(&[(("dst", dst), (name, term.words))])?;
            }
            subtract |= u32::from(term.subtract) << i;
            match term.plain {
                Some(plain) => {
                    plains.push(c.buf(plain_name, plain, c.words(&[k])?)?);
                    c.distinct(&[(("dst", dst), (plain_name, plain))])?;
                    products |= 1 << i;
                }
                // Not read.
                None => plains.push((plain_name, Buf(term.words))),
            }
        }
        args.extend(plains);
        let [shifts_lo, shifts_hi] = packed_shifts(terms.iter().map(|t| t.shift), 1 << self.log_n)?;
        args.extend([
            ("moduli", Buf(moduli.buffer())),
            c.u32("K", k)?,
            c.u32("terms", terms.len())?,
            ("products", U32(products)),
            ("subtract", U32(subtract)),
            ("shifts_lo", U64(shifts_lo)),
            ("shifts_hi", U64(shifts_hi)),
            ("accumulate", U32(u32::from(accumulate))),
        ]);
        // SAFETY: item (w, p), w < K N, p < polys, touches word p K N + w of dst and of the
        // first `terms` term slots (each checked to hold polys K N words; a shifted term's
        // word lies in the same row of N, its shift checked below N), word w of the
        // plaintexts of product terms (each checked to hold K N), and prime w / N < K of
        // the table (checked to hold K primes); the other slots are not read.
        unsafe {
            self.kernels
                .launch(graph, &CKKS_SUM, &args, c.words(&[k])?, polys)
        }
    }

    /// The tensor product of SEAL's `ckks_multiply` in NTT form: `a` holds `s1`
    /// polynomials and `b` holds `s2` (K residues each, canonical); dst gets s1 + s2 - 1
    /// with dst[t] = sum_{i + l = t} a[i] * b[l] mod q, canonical. `a` and `b` may be the
    /// same buffer (squaring); dst must be neither. 1 <= s1, s2 <= [`TENSOR_SIZE_MAX`].
    #[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
    pub fn ckks_tensor(
        &self,
        graph: &Graph,
        dst: &Region,
        a: &Region,
        s1: usize,
        b: &Region,
        s2: usize,
        moduli: &ModuliTable,
        k: usize,
    ) -> Result<()> {
        let c = self.checks(&CKKS_TENSOR);
        c.nonzero(&[("K", k)])?;
        for (what, s) in [("s1", s1), ("s2", s2)] {
            if !(1..=TENSOR_SIZE_MAX).contains(&s) {
                return Err(c.error(format!("{what} = {s} is not in 1..={TENSOR_SIZE_MAX}")));
            }
        }
        c.covers(moduli, k)?;
        c.distinct(&[(("dst", dst), ("a", a)), (("dst", dst), ("b", b))])?;
        let args = [
            c.buf("dst", dst, c.words(&[s1 + s2 - 1, k])?)?,
            c.buf("a", a, c.words(&[s1, k])?)?,
            ("s1", U32(s1 as u32)),
            c.buf("b", b, c.words(&[s2, k])?)?,
            ("s2", U32(s2 as u32)),
            ("moduli", Buf(moduli.buffer())),
            c.u32("K", k)?,
        ];
        // SAFETY: item g < K * N reads a[g + i * K * N] for i < s1, b[...] for l < s2 and
        // writes dst[g + t * K * N] for t < s1 + s2 - 1, all inside the checked lengths;
        // prime g / N < K of the table.
        unsafe {
            self.kernels
                .launch(graph, &CKKS_TENSOR, &args, c.words(&[k])?, 1)
        }
    }

    /// dst[p * dst_stride + j][k] = src[p * src_stride + j][k] for p < polys and j <
    /// residues_per_poly (strides in residues of N words); other words of dst are left
    /// alone. With strides K - 1 and K and residues_per_poly = K - 1 it is SEAL's
    /// `mod_switch_drop_to_next` (see [`CkksKernels::ckks_drop_last`]). Needs dst_stride
    /// >= residues_per_poly (else outputs of two polynomials would overlap) and dst not src.
    #[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
    pub fn ckks_copy_residues(
        &self,
        graph: &Graph,
        dst: &Region,
        dst_stride: usize,
        src: &Region,
        src_stride: usize,
        residues_per_poly: usize,
        polys: usize,
    ) -> Result<()> {
        let c = self.checks(&CKKS_COPY_RESIDUES);
        c.nonzero(&[("residues_per_poly", residues_per_poly), ("polys", polys)])?;
        let strides = [("dst_stride", dst_stride), ("src_stride", src_stride)];
        c.strides(&strides, ("residues_per_poly", residues_per_poly))?;
        c.distinct(&[(("dst", dst), ("src", src))])?;
        // The last residue touched is (polys - 1) * stride + residues_per_poly - 1.
        let args = [
            c.buf("dst", dst, c.extent(polys, dst_stride, residues_per_poly)?)?,
            c.u32("dst_stride", dst_stride)?,
            c.buf("src", src, c.extent(polys, src_stride, residues_per_poly)?)?,
            c.u32("src_stride", src_stride)?,
            c.u32("residues_per_poly", residues_per_poly)?,
        ];
        let width = c.words(&[residues_per_poly])?;
        // SAFETY: item (j N + k, p) touches residue p * stride + j <= (polys - 1) * stride
        // + residues_per_poly - 1 of each buffer, inside the extents checked above.
        unsafe {
            self.kernels
                .launch(graph, &CKKS_COPY_RESIDUES, &args, width, polys)
        }
    }

    /// SEAL's `mod_switch_drop_to_next` on the data: dst (K - 1 residues per polynomial)
    /// = src (K residues per polynomial) without the last residue of each polynomial.
    /// Needs K >= 2.
    pub fn ckks_drop_last(
        &self,
        graph: &Graph,
        dst: &Region,
        src: &Region,
        k: usize,
        polys: usize,
    ) -> Result<()> {
        if k < 2 {
            return Err(Error::invalid(format!(
                "ckks_drop_last: K = {k}; dropping a residue needs K >= 2"
            )));
        }
        self.ckks_copy_residues(graph, dst, k - 1, src, k, k - 1, polys)
    }

    /// dst[p][k] = src[p * src_stride + index][k] for p < polys: residue `index` of every
    /// polynomial, packed (e.g. the last residue for rescaling). Needs index < src_stride
    /// and dst not src.
    pub fn ckks_gather_residue(
        &self,
        graph: &Graph,
        dst: &Region,
        src: &Region,
        src_stride: usize,
        index: usize,
        polys: usize,
    ) -> Result<()> {
        let c = self.checks(&CKKS_GATHER_RESIDUE);
        c.nonzero(&[("polys", polys)])?;
        if index >= src_stride {
            return Err(c.error(format!(
                "index {index} is not below src_stride = {src_stride}"
            )));
        }
        c.distinct(&[(("dst", dst), ("src", src))])?;
        let words = c.words(&[polys])?;
        let args = [
            c.buf("dst", dst, words)?,
            c.buf("src", src, c.extent(polys, src_stride, index + 1)?)?,
            c.u32("src_stride", src_stride)?,
            c.u32("index", index)?,
        ];
        // SAFETY: item (p, k) writes dst[p * N + k] < polys * N and reads residue
        // p * src_stride + index <= (polys - 1) * src_stride + index of src (both checked).
        unsafe {
            self.kernels
                .launch(graph, &CKKS_GATHER_RESIDUE, &args, words, 1)
        }
    }

    /// SEAL's `GaloisTool::apply_galois_ntt` on each of `residues` residues:
    /// dst[r][i] = src[r][table[i]] with SEAL 4.0's `generate_table_ntt` table for
    /// `galois_elt` (odd, < 2N), computed in the kernel. On entry src in NTT form; dst must
    /// not be src.
    pub fn ckks_galois_ntt(
        &self,
        graph: &Graph,
        dst: &Region,
        src: &Region,
        galois_elt: u32,
        residues: usize,
    ) -> Result<()> {
        let c = self.checks(&CKKS_GALOIS_NTT);
        c.nonzero(&[("residues", residues)])?;
        super::check_galois_elt(galois_elt, c.n)?;
        c.distinct(&[(("dst", dst), ("src", src))])?;
        let words = c.words(&[residues])?;
        let args = [
            c.buf("dst", dst, words)?,
            c.buf("src", src, words)?,
            ("galois_elt", U32(galois_elt)),
        ];
        // SAFETY: item w writes dst[w] and reads src[w - w % N + index] with index < N
        // (masked), both below residues * N (checked).
        unsafe {
            self.kernels
                .launch(graph, &CKKS_GALOIS_NTT, &args, words, 1)
        }
    }

    /// "(ct mod q_last) mod q_i" of SEAL's `divide_and_round_q_last_ntt_inplace` and
    /// `switch_key_inplace`, rounding included.
    ///
    /// On entry `last` holds one residue per polynomial mod q_last = moduli[last_q_index],
    /// in coefficient form as an inverse NTT leaves it: lazy (< 2 q_last) or fully
    /// reduced. The kernel rounds it, r = barrett_reduce_64(last[p] + (q_last >> 1),
    /// q_last) (SEAL's "add (q - 1) / 2 to change from flooring to rounding"). On exit dst
    /// holds `k_out` residues per polynomial (primes 0..k_out) with
    /// dst[p][i] = (q_i < q_last ? r mod q_i : r) + q_i - (q_last >> 1) mod q_i,
    /// in [0, 2 q_i), not reduced (SEAL's lazy `J += neg_half_mod`; the lazy forward NTT
    /// takes it); `last` is unchanged. dst must not be last.
    #[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
    pub fn ckks_moddown_prep(
        &self,
        graph: &Graph,
        dst: &Region,
        last: &Region,
        last_q_index: usize,
        moduli: &ModuliTable,
        k_out: usize,
        polys: usize,
    ) -> Result<()> {
        let c = self.checks(&CKKS_MODDOWN_PREP);
        c.nonzero(&[("K_out", k_out), ("polys", polys)])?;
        c.covers(moduli, k_out.max(last_q_index + 1))?;
        c.distinct(&[(("dst", dst), ("last", last))])?;
        let args = [
            c.buf("dst", dst, c.words(&[polys, k_out])?)?,
            c.buf("last", last, c.words(&[polys])?)?,
            ("moduli", Buf(moduli.buffer())),
            c.u32("last_q_index", last_q_index)?,
            c.u32("K_out", k_out)?,
        ];
        let width = c.words(&[k_out])?;
        // SAFETY: item (i N + k, p) writes dst[(p * K_out + i) * N + k] < polys K_out N,
        // reads last[p * N + k] < polys * N, and primes i < K_out and last_q_index of the
        // table (all checked).
        unsafe {
            self.kernels
                .launch(graph, &CKKS_MODDOWN_PREP, &args, width, polys)
        }
    }

    /// The final step of rescale and of key switching: for p < polys, i < k_out,
    /// y = (src[p * src_stride + i] + 4 q_i - t[p * k_out + i]) * inv_i mod q_i, then
    /// dst[p * dst_stride + i] = y, or add_uint_mod(dst[...], y) with `accumulate`.
    ///
    /// On entry t < 4 q_i (k_out residues per polynomial, after a lazy forward NTT), src
    /// canonical, `inv` holds k_out Shoup pairs (operand, quotient) of q_last^-1 mod q_i
    /// (see `host::shoup_words`), dst canonical if accumulating. On exit dst canonical.
    /// dst may be src only with equal strides (each item then reads and writes its own
    /// word); dst must not be t; strides >= k_out.
    #[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
    pub fn ckks_divide_round_finish(
        &self,
        graph: &Graph,
        dst: &Region,
        dst_stride: usize,
        src: &Region,
        src_stride: usize,
        t: &Region,
        inv: &Region,
        moduli: &ModuliTable,
        k_out: usize,
        polys: usize,
        accumulate: bool,
    ) -> Result<()> {
        let c = self.checks(&CKKS_DIVIDE_ROUND_FINISH);
        c.nonzero(&[("K_out", k_out), ("polys", polys)])?;
        c.covers(moduli, k_out)?;
        c.strides(
            &[("dst_stride", dst_stride), ("src_stride", src_stride)],
            ("K_out", k_out),
        )?;
        c.same_or_distinct(&[(("dst", dst), ("src", src))])?;
        if dst.same_start(src) && dst_stride != src_stride {
            return Err(c.error(format!(
                "dst is src with different strides ({dst_stride} and {src_stride})"
            )));
        }
        c.distinct(&[(("dst", dst), ("t", t)), (("dst", dst), ("inv", inv))])?;
        let args = [
            c.buf("dst", dst, c.extent(polys, dst_stride, k_out)?)?,
            c.u32("dst_stride", dst_stride)?,
            c.buf("src", src, c.extent(polys, src_stride, k_out)?)?,
            c.u32("src_stride", src_stride)?,
            c.buf("t", t, c.words(&[polys, k_out])?)?,
            c.buf("inv", inv, 2 * k_out)?,
            ("moduli", Buf(moduli.buffer())),
            c.u32("K_out", k_out)?,
            ("accumulate", U32(accumulate as u32)),
        ];
        let width = c.words(&[k_out])?;
        // SAFETY: item (i N + k, p) reads t[(p * K_out + i) * N + k] < polys K_out N,
        // residue p * stride + i <= (polys - 1) * stride + K_out - 1 of src and dst,
        // inv[2i + 1] < 2 K_out and prime i < K_out of the table (all checked).
        unsafe {
            self.kernels
                .launch(graph, &CKKS_DIVIDE_ROUND_FINISH, &args, width, polys)
        }
    }

    /// Key switching's RNS decomposition: `moduli_ext` holds the K data primes then the
    /// special prime (at least K + 1 primes; prime K is the special one); `t_target` holds
    /// K canonical residues (coefficient form, residue J mod q_J). dst gets K * (K + 1)
    /// residues: dst[J * (K + 1) + I] = t_target[J] if q_J <= q_I, else t_target[J] mod
    /// q_I (SEAL's `set_uint` / `modulo_poly_coeffs` before the lazy NTT). dst must not be
    /// t_target.
    pub fn ckks_ks_decompose(
        &self,
        graph: &Graph,
        dst: &Region,
        t_target: &Region,
        moduli_ext: &ModuliTable,
        k: usize,
    ) -> Result<()> {
        let c = self.checks(&CKKS_KS_DECOMPOSE);
        c.nonzero(&[("K", k)])?;
        c.covers(moduli_ext, k + 1)?;
        c.distinct(&[(("dst", dst), ("t_target", t_target))])?;
        let args = [
            c.buf("dst", dst, c.words(&[k, k + 1])?)?,
            c.buf("t_target", t_target, c.words(&[k])?)?,
            ("moduli", Buf(moduli_ext.buffer())),
            c.u32("K", k)?,
        ];
        let width = c.words(&[k + 1])?;
        // SAFETY: item (I N + k, J) writes dst[(J (K + 1) + I) N + k] < K (K + 1) N, reads
        // t_target[J * N + k] < K N, and primes J, I < K + 1 of the table (all checked).
        unsafe {
            self.kernels
                .launch(graph, &CKKS_KS_DECOMPOSE, &args, width, k)
        }
    }

    /// Key switching's inner product with one key of SEAL's key vector, the data primes'
    /// residues apart from the special prime's: for c < 2 and I < K + 1, s(c, I) =
    /// sum_{J < K} dec[J * (K + 1) + I] * key[J][c][kp(I)] mod q_I, with kp(I) = I for
    /// I < K and `key_special_index` for I = K. The key is uploaded contiguously: word
    /// `((J * 2 + c) * key_stride_primes + p) * N + k` (SEAL's `key_vector[J].data()` one
    /// after another; key_stride_primes = all key primes, key_special_index normally
    /// key_stride_primes - 1).
    ///
    /// On entry dec < 4 q_I (the decomposition after a lazy forward NTT), key canonical.
    /// On exit, all canonical, prod[c * K + I] = s(c, I) for I < K (2 K residues: two
    /// polynomials at level K) and last[c] = s(c, K) (2 residues under the special prime,
    /// ready for the mod-down's inverse NTT). prod and last must be different buffers,
    /// and neither dec nor key. Needs K <= key_stride_primes and key_special_index <
    /// key_stride_primes.
    #[allow(clippy::too_many_arguments)] // mirrors the kernel's arguments one to one
    pub fn ckks_ks_inner_product(
        &self,
        graph: &Graph,
        prod: &Region,
        last: &Region,
        dec: &Region,
        key: &Region,
        key_stride_primes: usize,
        key_special_index: usize,
        moduli_ext: &ModuliTable,
        k: usize,
    ) -> Result<()> {
        let c = self.checks(&CKKS_KS_INNER_PRODUCT);
        c.nonzero(&[("K", k)])?;
        c.covers(moduli_ext, k + 1)?;
        if k > key_stride_primes || key_special_index >= key_stride_primes {
            return Err(c.error(format!(
                "K = {k} data primes and special index {key_special_index} do not fit a key \
                 of {key_stride_primes} primes"
            )));
        }
        let (prod_, last_) = (("prod", prod), ("last", last));
        c.distinct(&[
            (prod_, last_),
            (prod_, ("dec", dec)),
            (prod_, ("key", key)),
            (last_, ("dec", dec)),
            (last_, ("key", key)),
        ])?;
        let reduce_every = reduce_every(&moduli_ext.moduli()[..k + 1]);
        let args = [
            c.buf("prod", prod, c.words(&[2, k])?)?,
            c.buf("last", last, c.words(&[2])?)?,
            c.buf("dec", dec, c.words(&[k, k + 1])?)?,
            c.buf("key", key, c.words(&[k, 2, key_stride_primes])?)?,
            ("moduli", Buf(moduli_ext.buffer())),
            c.u32("K", k)?,
            c.u32("key_stride_primes", key_stride_primes)?,
            c.u32("key_special_index", key_special_index)?,
            ("reduce_every", U32(reduce_every)),
        ];
        // SAFETY: item (I, k), I < K + 1, reads dec residue J (K + 1) + I < K (K + 1),
        // key residue (J * 2 + c) * L + kp with kp < L (checked) so < 2 K L, and prime
        // I < K + 1 of the table; it writes prod residues I and K + I < 2 K when I < K,
        // else last residues 0 and 1 (all lengths checked).
        unsafe {
            self.kernels
                .launch(graph, &CKKS_KS_INNER_PRODUCT, &args, c.words(&[k + 1])?, 1)
        }
    }
}

/// How many products x * y (x < 4q, y < q, q the largest of `moduli`) fit in a 128-bit
/// accumulator that starts below q: the inner-product kernel reduces after that many.
/// At least 16 (q < 2^61); at least 64 for SEAL's 60-bit primes. The fused key switching
/// (`super::fused::FusedPasses::forward_key_switch`) accumulates the same products.
pub fn reduce_every(moduli: &[Modulus]) -> u32 {
    let q = moduli.iter().map(Modulus::value).max().unwrap_or(2) as u128;
    let largest_product = (4 * q - 1) * (q - 1);
    let terms = (u128::MAX - (q - 1)) / largest_product.max(1);
    terms.clamp(1, u32::MAX as u128) as u32
}

/// `values` as [`CkksKernels::ckks_lift_signed`] reads them: eight a word, value 8 i + b in
/// bits 8 b .. 8 b + 7 of word i (two's complement), the last word's unused bytes zero.
pub fn pack_signed(values: &[i8]) -> Vec<u64> {
    values
        .chunks(8)
        .map(|chunk| {
            let mut bytes = [0u8; 8];
            for (byte, &v) in bytes.iter_mut().zip(chunk) {
                *byte = v as u8;
            }
            u64::from_le_bytes(bytes)
        })
        .collect()
}

/// The words [`pack_signed`] makes of `values` values.
pub fn packed_words(values: usize) -> usize {
    values.div_ceil(8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_values_sit_in_their_bytes() {
        let values: Vec<i8> = (0..11).map(|i| i * 13 - 64).collect();
        let words = pack_signed(&values);
        assert_eq!(words.len(), packed_words(values.len()));
        for (i, &v) in values.iter().enumerate() {
            assert_eq!((words[i / 8] >> (8 * (i % 8))) as u8 as i8, v, "value {i}");
        }
        assert_eq!(words[1] >> 24, 0, "the last word's unused bytes");
    }

    #[test]
    fn signatures_match_ckks_cl() {
        let program = [sources::CKKS, sources::PLAIN].concat();
        crate::cl::check_source(&program, &CKKS_SIGS).unwrap();
    }

    #[test]
    fn ckks_kernels_can_be_shared_between_threads() {
        fn shared<T: Send + Sync>() {}
        shared::<CkksKernels>();
        shared::<ModuliTable>();
    }

    #[test]
    fn ckks_reduce_every_bounds() {
        let m = |v| Modulus::new(v).unwrap();
        // 60-bit primes: 64 terms of < 2^122 fit, so no intermediate reduction at K <= 64.
        assert!(reduce_every(&[m((1 << 60) - 93)]) >= 64);
        // 61-bit: products < 2^124, still 16 terms.
        assert!(reduce_every(&[m((1 << 61) - 1)]) >= 15);
        let q = (1u128 << 61) - 1;
        let r = reduce_every(&[m((1 << 61) - 1)]) as u128;
        assert!(r.checked_mul((4 * q - 1) * (q - 1)).unwrap() <= u128::MAX - (q - 1));
        assert_eq!(reduce_every(&[m(3)]), u32::MAX);
    }
}
