// Uses: arith.cl, ntt.cl
// The CKKS fused passes (src/ckks/fused): passes of ntt.cl's staged transform whose loads
// and stores do an operation's element-wise steps, built after ntt.cl, which leaves the
// loads and stores of its steps to its callers. In the order of a rotation's key switch:
//   - the loads of words under one prime into a transform under another (load_op), for
//     key switching's decomposition and the mod-down's rounding;
//   - the galois permutation with an inverse's first pass (ntt_inv_block_galois), and a
//     multiply's tensor product beside its third polynomial's (ntt_inv_block_product);
//   - an inverse's strided pass with the forward strided passes after it, under other
//     primes (ntt_inv_fwd_strided; two-pass layouts);
//   - key switching's forward block pass with the inner product with the key
//     (ntt_fwd_block_ks; built only with KS_ROWS, rows per work group, and
//     KS_LOCAL_ROOTS, the rows' roots staged in local memory);
//   - the mod-down's forward block pass with its division (ntt_fwd_block_moddown).
// Each pass is a function of its work group's index (`group`), its work item's (`lid`)
// and whether the group owns the pass (`active`), which its one-pass kernel calls and a
// chained launch (chain.cl) calls too.

// ---------------------------------------------------------------------------------------
// Launches of several jobs: up to KS_JOBS_MAX independent operations of one shape (key
// switches of one level, their permutations, their mod-downs) in one launch, so that the
// host enqueues once for all of them. Job j's work groups are the j-th share of the
// launch's (every job the same count), its operands and results are named per job
// (JOB_PICK: job 0's are the kernel's own parameters, job j's more[j - 1]), and its
// intermediates lie j job sizes into their buffers. Each job reads and writes only its own
// words, so its words are those of a launch of its own. chain.cl's chained launches carry
// jobs the same way.
#define KS_JOBS_MAX 4

// Job `job`'s pointer: p0 for job 0, else more[job - 1] (a selection, not an indexed
// load: the array stays in registers).
#define JOB_PICK(job, p0, more)                                                            \
    ((job) == 0 ? (p0) : (job) == 1 ? (more)[0] : (job) == 2 ? (more)[1] : (more)[2])

// The job of this work group in a launch of `jobs` equal shares, its group within the
// job's share, and the share.
typedef struct {
    uint job, group, share;
} job_group;

ALWAYS_INLINE job_group job_group_of(uint jobs)
{
    const uint share = (uint)get_num_groups(0) / jobs;
    const uint g = (uint)get_group_id(0);
    const job_group jg = {g / share, g % share, share};
    return jg;
}

// ---------------------------------------------------------------------------------------
// What a pass does to each word it loads under prime q_in for a transform under prime q:
// the mod-down's rounding and reduction (moddown_round in arith.cl, the fusion of
// ckks_moddown_prep); BGV's mod-down share (LOAD_MODDOWN_BGV: delta = c + q_in kt mod q,
// arith.cl's bgv_kt and bgv_delta, the fusion of integer.cl's integer_mod_t_prep; no
// half-offset, which only rounding needs); or key switching's decomposition, a canonical
// word reduced under q (ckks_ks_decompose). The kinds are ntt_inv_fwd_strided's `kind`
// and the chained key switches' `md_kind` (src/ckks/fused/mod.rs).
#define LOAD_MODDOWN 1
#define LOAD_DECOMPOSE 2
#define LOAD_MODDOWN_BGV 3

// BGV's plain modulus for LOAD_MODDOWN_BGV: t (< 2^61), floor(2^128 / t) as (t_r0, t_r1),
// and inv_t = q_in^-1 mod t. The other kinds read none of it (no_plain()).
typedef struct {
    u64 t, t_r0, t_r1, inv_t;
} bgv_plain;

ALWAYS_INLINE bgv_plain bgv_plain_of(u64 t, u64 t_r0, u64 t_r1, u64 inv_t)
{
    bgv_plain plain = {t, t_r0, t_r1, inv_t};
    return plain;
}

ALWAYS_INLINE bgv_plain no_plain(void)
{
    return bgv_plain_of(0, 0, 0, 0);
}

// fix: LOAD_MODDOWN's half-offset fix (moddown_fix); LOAD_MODDOWN_BGV's q_in mod q.
typedef struct {
    uint kind;
    u64 q_in, r1_in, q, r0, r1, fix;
    bgv_plain plain;
} load_op;

// Loads of words under prime `in_prime` into a transform under prime `prime`.
ALWAYS_INLINE load_op prime_load(uint kind, __global const u64 *params, uint in_prime,
                                 uint prime, bgv_plain plain)
{
    load_op op;
    op.kind = kind;
    op.q_in = params[in_prime * PARAMS_STRIDE];
    op.r1_in = params[in_prime * PARAMS_STRIDE + 5];
    op.q = params[prime * PARAMS_STRIDE];
    op.r1 = params[prime * PARAMS_STRIDE + 5];
    op.r0 = params[prime * PARAMS_STRIDE + 6];
    op.fix = kind == LOAD_MODDOWN       ? moddown_fix(op.q_in, op.q, op.r1)
             : kind == LOAD_MODDOWN_BGV ? barrett_reduce_64(op.q_in, op.q, op.r1)
                                        : 0;
    op.plain = plain;
    return op;
}

// x: for the mod-downs an inverse NTT's output under q_in (< 2 q_in); for the
// decomposition canonical. Out: LOAD_MODDOWN [0, 2q), the others canonical.
ALWAYS_INLINE u64 apply_load(load_op op, u64 x)
{
    if (op.kind == LOAD_MODDOWN)
        return moddown_round(x, op.q_in, op.r1_in, op.q, op.r1, op.fix);
    if (op.kind == LOAD_MODDOWN_BGV) {
        const u64 c = reduce_once(x, op.q_in);
        const bgv_plain p = op.plain;
        return bgv_delta(c, bgv_kt(c, p.t, p.t_r0, p.t_r1, p.inv_t), op.fix, op.q, op.r0, op.r1);
    }
    if (op.kind == LOAD_DECOMPOSE)
        return op.q_in <= op.q ? x : barrett_reduce_64(x, op.q, op.r1);
    return x;
}

// The passes below are on the staged transform's layout (LOG_S and what ntt.cl derives
// from it), with which every program of these passes is built.
#ifdef LOG_S

// ntt.cl's forward block transform of residue `in` read through `ld` (on entry [0, 4q)
// after it). `lid` and `active` as in fwd_block_steps.
ALWAYS_INLINE void fwd_block_transform_load(__global const u64 *in, load_op ld,
                                            __local u64 *lmem, __global const ulong2 *w,
                                            __local const ulong2 *lroots,
                                            const bool local_roots, u64 q,
                                            uint group_in_residue, uint lid, bool active)
{
    u64 v[R];
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++)
            v[i] = apply_load(ld, in[fwd_block_word(group_in_residue, lid, i)]);
    }
    fwd_block_steps(v, lmem, w, lroots, local_roots, q, group_in_residue, lid, active);
}

// ---------------------------------------------------------------------------------------
// A ciphertext's words read as the sum of up to eight ciphertexts' (src0 .. src7, the
// first `terms` of them; bit j of `negate` subtracts term j; bits 16 (j mod 4) .. + 15 of
// `shifts_lo` (j < 4) or `shifts_hi` multiply term j by X^shift first, negacyclic: SEAL's
// multiply_plain by the monomial X^shift): what SEAL's add_inplace, sub_inplace and
// multiply_plain by such monomials of the terms in turn leave, computed on a chained pass's
// loads where the backend deferred those calls (src/seal_backend/deferred.rs). Every step
// of SEAL's is canonical mod q and linear, so its word is the canonical signed sum of the
// shifted terms, in any order. One term, unnegated and unshifted, is the ciphertext itself.
typedef struct {
    __global const u64 *t0, *t1, *t2, *t3, *t4, *t5, *t6, *t7;
    uint terms, negate;
    ulong shifts_lo, shifts_hi;
} sum_src;

ALWAYS_INLINE sum_src sum_src_of(__global const u64 *t0, __global const u64 *t1,
                                 __global const u64 *t2, __global const u64 *t3,
                                 __global const u64 *t4, __global const u64 *t5,
                                 __global const u64 *t6, __global const u64 *t7, uint terms,
                                 uint negate, ulong shifts_lo, ulong shifts_hi)
{
    sum_src s = {t0, t1, t2, t3, t4, t5, t6, t7, terms, negate, shifts_lo, shifts_hi};
    return s;
}

// The sum of one ciphertext, `values` itself.
ALWAYS_INLINE sum_src sum_src_one(__global const u64 *values)
{
    return sum_src_of(values, values, values, values, values, values, values, values, 1, 0, 0,
                      0);
}

// Word w of term j (its words t) of the sum, shifted and signed, canonical under q. Each
// term's pointer is named, never indexed, so that it stays in the kernel's parameters.
ALWAYS_INLINE u64 sum_term_word(__global const u64 *t, uint j, sum_src s, size_t w, u64 q)
{
    const uint shift = (uint)((j < 4 ? s.shifts_lo : s.shifts_hi) >> (16 * (j % 4))) & 0xffff;
    bool wraps;
    const u64 x = t[negacyclic_source(w, shift, LOG_N, &wraps)];
    return (((s.negate >> j) & 1) != wraps) ? negate_uint_mod(x, q) : x;
}

// v plus word w of term j (its words t), where the sum has term j.
ALWAYS_INLINE u64 sum_term_into(u64 v, __global const u64 *t, uint j, sum_src s, size_t w,
                                u64 q)
{
    return j < s.terms ? add_uint_mod(v, sum_term_word(t, j, s, w, q), q) : v;
}

// Word w of the sum, canonical under q: the terms added in order (a subtracted one added
// negated: the same canonical residue). `slots` (4 or 8, a constant at every call) is how
// many terms the kernel takes: with 4 the code for the others folds away.
ALWAYS_INLINE u64 load_sum(sum_src s, size_t w, u64 q, const uint slots)
{
    u64 v = sum_term_word(s.t0, 0, s, w, q);
    v = sum_term_into(v, s.t1, 1, s, w, q);
    v = sum_term_into(v, s.t2, 2, s, w, q);
    v = sum_term_into(v, s.t3, 3, s, w, q);
    if (slots > 4) {
        v = sum_term_into(v, s.t4, 4, s, w, q);
        v = sum_term_into(v, s.t5, 5, s, w, q);
        v = sum_term_into(v, s.t6, 6, s, w, q);
        v = sum_term_into(v, s.t7, 7, s, w, q);
    }
    return v;
}

// ---------------------------------------------------------------------------------------
// SEAL's apply_galois_ntt fused with the first pass of key switching's inverse transform:
// a rotation's first launch, in place of ckks_galois_ntt and ntt_inv_block_gather. Every
// residue r of src (count polynomials of coeff_modulus_size residues; launched over all
// of them) is permuted into permuted, permuted[r][i] = src[r][galois_ntt_index(i)]
// (arith.cl; galois_elt odd, < 2N); residues from transformed_first on (the last
// polynomial) also go through the inverse's first pass into values, residue
// r - transformed_first, as ntt_inv_block_gather leaves them. The others only pass the
// transform's barriers. src is a sum of ciphertexts in NTT form (sum_src, unshifted: the
// host checks), read word by word: SEAL's adds and subs of them, then the rotation of
// their sum (a chained rotation reads a deferred sum so; one term is the ciphertext
// itself). With `times_plain` src (one term) is first multiplied by a plaintext in NTT
// form (coeff_modulus_size residues; SEAL's multiply_plain_ntt, whose product is the
// rotation's input): the permutation moves the product's words, so
// permuted[r][i] = src[r][j] * plain[r mod coeff_modulus_size][j] mod q, j =
// galois_ntt_index(i), reduced as SEAL reduces it (canonical). No term is values or
// permuted. Work group `group` of the launch over lmem (B * PADDED_G words); `lid` and
// `active` as in fwd_block_steps.
ALWAYS_INLINE void inv_block_galois_group(__global u64 *values,
                                          __global const u64 *inv_root_powers,
                                          __global const u64 *params, uint coeff_modulus_size,
                                          uint reduce, sum_src src,
                                          __global const u64 *plain, bool times_plain,
                                          uint galois_elt, __global u64 *permuted,
                                          uint transformed_first, __local u64 *lmem,
                                          uint group, uint lid, bool active)
{
    const uint residue = group / GROUPS_PER_BLOCK_RESIDUE;
    const uint group_in_residue = group % GROUPS_PER_BLOCK_RESIDUE;
    const uint prime = residue % coeff_modulus_size;
    const uint first = group_in_residue * (B * G);
    __global const u64 *factor = plain + (size_t)prime * N;
    __global const u64 *pr = params + prime * PARAMS_STRIDE;
    __global u64 *out = permuted + (size_t)residue * N + first;
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++) {
            uint e = lid + i * BLOCK_WG;
            const uint j = galois_ntt_index(first + e, galois_elt, LOG_N);
            u64 x = load_sum(src, (size_t)residue * N + j, pr[0], 8);
            if (times_plain)
                x = multiply_uint_mod(x, factor[j], pr[0], pr[6], pr[5]);
            out[e] = x;
            lmem[block_slot(e)] = x;
        }
    }
    const bool transform = active && residue >= transformed_first;
    inv_block_transform(lmem, values + (size_t)(transform ? residue - transformed_first : 0) * N,
                        (__global const ulong2 *)inv_root_powers + prime * N,
                        pr, group_in_residue, reduce, lid, transform);
}

// inv_block_galois_group over `jobs` permutations (a launch of several jobs, above): job
// j permutes src_j (times plain_j where bit j of plain_jobs is set; else plain_j is not
// read) with galois_elt_j into its residues of permuted (the share's residues, from
// residue j times their count) and transforms those from transformed_first on into
// values (from residue j times their count). Job 0's are src, plain and galois_elt.
__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_inv_block_galois(__global u64 *restrict values, ulong values_at,
                          __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                          __global const u64 *restrict params, ulong params_at,
                          uint coeff_modulus_size, uint reduce,
                          __global const u64 *restrict src, ulong src_at,
                          __global const u64 *restrict plain, ulong plain_at, uint galois_elt,
                          __global u64 *restrict permuted, ulong permuted_at,
                          uint transformed_first, uint jobs, uint plain_jobs,
                          __global const u64 *restrict src1, ulong src1_at,
                          __global const u64 *restrict plain1, ulong plain1_at,
                          uint galois_elt1, __global const u64 *restrict src2, ulong src2_at,
                          __global const u64 *restrict plain2, ulong plain2_at,
                          uint galois_elt2, __global const u64 *restrict src3, ulong src3_at,
                          __global const u64 *restrict plain3, ulong plain3_at,
                          uint galois_elt3)
{
    __local u64 lmem[B * PADDED_G];
    values += values_at;
    inv_root_powers += inv_root_powers_at;
    params += params_at;
    src += src_at;
    plain += plain_at;
    permuted += permuted_at;
    src1 += src1_at;
    plain1 += plain1_at;
    src2 += src2_at;
    plain2 += plain2_at;
    src3 += src3_at;
    plain3 += plain3_at;
    const job_group jg = job_group_of(jobs);
    const uint residues = jg.share / GROUPS_PER_BLOCK_RESIDUE;
    __global const u64 *srcs[KS_JOBS_MAX - 1] = {src1, src2, src3};
    __global const u64 *plains[KS_JOBS_MAX - 1] = {plain1, plain2, plain3};
    const uint elts[KS_JOBS_MAX - 1] = {galois_elt1, galois_elt2, galois_elt3};
    values += (size_t)jg.job * (residues - transformed_first) * N;
    permuted += (size_t)jg.job * residues * N;
    inv_block_galois_group(values, inv_root_powers, params, coeff_modulus_size, reduce,
                           sum_src_one(JOB_PICK(jg.job, src, srcs)),
                           JOB_PICK(jg.job, plain, plains),
                           ((plain_jobs >> jg.job) & 1) != 0,
                           JOB_PICK(jg.job, galois_elt, elts), permuted, transformed_first, lmem,
                           jg.group, get_local_id(0), true);
}

// The tensor product of SEAL's ckks_multiply of a and b, two polynomials of K residues
// each in NTT form, into dst's three: a0 b0, a0 b1 + a1 b0 and a1 b1 mod each prime, each
// sum accumulated exactly in 128 bits and reduced once (ckks_tensor's words). Group g of
// K * N / (BLOCK_WG * R) covers words g * BLOCK_WG * R onwards of each polynomial, all
// under one prime (BLOCK_WG * R divides N). No barrier: an inactive group only returns.
ALWAYS_INLINE void tensor_group(__global u64 *dst, __global const u64 *a,
                                __global const u64 *b, __global const u64 *params, uint K,
                                uint g, uint lid, bool active)
{
    if (!active)
        return;
    const size_t stride = (size_t)K * N;
    const size_t first = (size_t)g * (BLOCK_WG * R);
    __global const u64 *pr = params + (first >> LOG_N) * PARAMS_STRIDE;
    const u64 q = pr[0], r1 = pr[5], r0 = pr[6];
#pragma unroll
    for (uint i = 0; i < R; i++) {
        const size_t w = first + lid + i * BLOCK_WG;
        const u64 a0 = a[w], a1 = a[w + stride], b0 = b[w], b1 = b[w + stride];
        u64 lo = 0, hi = 0;
        mul_acc_128(&lo, &hi, a0, b0);
        dst[w] = barrett_reduce_128(lo, hi, q, r0, r1);
        lo = hi = 0;
        mul_acc_128(&lo, &hi, a0, b1);
        mul_acc_128(&lo, &hi, a1, b0);
        dst[w + stride] = barrett_reduce_128(lo, hi, q, r0, r1);
        lo = hi = 0;
        mul_acc_128(&lo, &hi, a1, b1);
        dst[w + 2 * stride] = barrett_reduce_128(lo, hi, q, r0, r1);
    }
}

// The first pass of the inverse of the tensor product's third polynomial a1 b1 (residue
// `group / GROUPS_PER_BLOCK_RESIDUE` of K), each word computed on the load from a's and
// b's second polynomials as tensor_group computes it: the relinearization's target
// without waiting for the tensor product. Into values, as inv_block_gather_group.
ALWAYS_INLINE void inv_block_tensor_target_group(__global u64 *values,
                                                 __global const u64 *inv_root_powers,
                                                 __global const u64 *params, uint K,
                                                 __global const u64 *a, __global const u64 *b,
                                                 __local u64 *lmem, uint group, uint lid,
                                                 bool active)
{
    const uint prime = group / GROUPS_PER_BLOCK_RESIDUE;
    const uint group_in_residue = group % GROUPS_PER_BLOCK_RESIDUE;
    __global const u64 *pr = params + prime * PARAMS_STRIDE;
    if (active) {
        const u64 q = pr[0], r1 = pr[5], r0 = pr[6];
        const size_t first = (size_t)(K + prime) * N + group_in_residue * (B * G);
#pragma unroll
        for (uint i = 0; i < R; i++) {
            const uint e = lid + i * BLOCK_WG;
            u64 lo = 0, hi = 0;
            mul_acc_128(&lo, &hi, a[first + e], b[first + e]);
            lmem[block_slot(e)] = barrett_reduce_128(lo, hi, q, r0, r1);
        }
    }
    inv_block_transform(lmem, values + (size_t)prime * N,
                        (__global const ulong2 *)inv_root_powers + prime * N, pr,
                        group_in_residue, 1, lid, active);
}

// SEAL's ckks_multiply of a_j and b_j into dst_j's three polynomials beside the first pass
// of the inverse of the product's third polynomial into values: a multiply and its
// relinearization's first launch, for `jobs` jobs (a launch of several jobs, above). Job
// j's share: its first K GROUPS_PER_BLOCK_RESIDUE groups the tensor product
// (tensor_group), the K GROUPS_PER_BLOCK_RESIDUE after them the inverse's first pass into
// its K residues of values, from residue j K (inv_block_tensor_target_group), both reading
// a_j and b_j only, so they run side by side. K = coeff_modulus_size. Job 0's are a, b
// and dst; dst_j overlaps no a_j or b_j. Every group passes the inverse's barriers (PoCL
// 3.1 miscompiles barriers under a condition it cannot prove uniform).
__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_inv_block_product(__global u64 *restrict values, ulong values_at,
                           __global const u64 *restrict inv_root_powers,
                           ulong inv_root_powers_at, __global const u64 *restrict params,
                           ulong params_at, uint coeff_modulus_size, __global const u64 *a,
                           ulong a_at, __global const u64 *b, ulong b_at, __global u64 *dst,
                           ulong dst_at, uint jobs, __global const u64 *a1, ulong a1_at,
                           __global const u64 *b1, ulong b1_at, __global u64 *dst1,
                           ulong dst1_at, __global const u64 *a2, ulong a2_at,
                           __global const u64 *b2, ulong b2_at, __global u64 *dst2,
                           ulong dst2_at, __global const u64 *a3, ulong a3_at,
                           __global const u64 *b3, ulong b3_at, __global u64 *dst3,
                           ulong dst3_at)
{
    __local u64 lmem[B * PADDED_G];
    values += values_at;
    inv_root_powers += inv_root_powers_at;
    params += params_at;
    a += a_at;
    b += b_at;
    dst += dst_at;
    a1 += a1_at;
    b1 += b1_at;
    dst1 += dst1_at;
    a2 += a2_at;
    b2 += b2_at;
    dst2 += dst2_at;
    a3 += a3_at;
    b3 += b3_at;
    dst3 += dst3_at;
    const job_group jg = job_group_of(jobs);
    const uint K = coeff_modulus_size;
    const uint tensor_groups = K * GROUPS_PER_BLOCK_RESIDUE;
    __global const u64 *as[KS_JOBS_MAX - 1] = {a1, a2, a3};
    __global const u64 *bs[KS_JOBS_MAX - 1] = {b1, b2, b3};
    __global u64 *dsts[KS_JOBS_MAX - 1] = {dst1, dst2, dst3};
    __global const u64 *ja = JOB_PICK(jg.job, a, as);
    __global const u64 *jb = JOB_PICK(jg.job, b, bs);
    values += (size_t)jg.job * K * N;
    const bool tensor = jg.group < tensor_groups;
    tensor_group(JOB_PICK(jg.job, dst, dsts), ja, jb, params, K, jg.group,
                 get_local_id(0), tensor);
    inv_block_tensor_target_group(values, inv_root_powers, params, K, ja, jb, lmem,
                                  tensor ? 0 : jg.group - tensor_groups, get_local_id(0),
                                  !tensor);
}

// ---------------------------------------------------------------------------------------
#if LOG_S != 0
// The inverse's strided pass of one residue followed, in the same work group, by forward
// strided passes of it under other primes: key switching's decomposition (kind
// LOAD_DECOMPOSE) and the mod-down's rounding (LOAD_MODDOWN; BGV's share, LOAD_MODDOWN_BGV
// with `plain`), each the first pass of the forward transforms that ntt_fwd_block_ks /
// ntt_fwd_block_moddown (or a chained launch's block passes) finish. Residue r of
// `in` (after the inverse's block pass; under prime r for the decomposition, in_prime for
// the mod-down) finishes its inverse, reduced to [0, q_in), in registers; then for each
// output prime o of the group's chunk, ld(in -> o) on those words and the forward's
// strided pass write residue r * coeff_modulus_size + o of values. The decomposition
// skips o = r (SEAL takes that residue from the target in NTT form). The output primes
// are split into `chunks` chunks of outs_per_group, each chunk its own work groups that
// repeat the inverse, so that a small batch (the mod-down's two residues) still spreads
// over the device. With `coeff_in` (a chained key switch of a target in coefficient form,
// BFV's: chain.cl's ks_chained_coeff) residue r of `in` is already in coefficient form,
// canonical: it is loaded as the inverse would leave it (the inverse's steps only pass
// their barriers), and the decomposition does not skip o = r (there is no NTT-form
// target to take that residue from). Work group `group` of the launch, over lmem (S * C
// words); without `active` its work items only pass the barriers. Every barrier's place
// depends on nothing but the kernel's arguments (the loop runs outs_per_group times in
// every group), so that a chained launch (chain.cl), whose groups learn their pass from a
// ticket, may call it: PoCL 3.1 miscompiles barriers under a condition it cannot prove
// uniform.
ALWAYS_INLINE void inv_fwd_strided_group(__global u64 *values, __global const u64 *root_powers,
                                         __global const u64 *params, uint coeff_modulus_size,
                                         __global const u64 *in, uint kind, uint in_prime,
                                         bgv_plain plain, bool coeff_in, uint outs_per_group,
                                         uint chunks,
                                         __global const u64 *inv_root_powers,
                                         __local u64 *lmem, uint group, uint lid, bool active)
{
    const uint rc = group / GROUPS_PER_STRIDED_RESIDUE;
    const uint group_in_residue = group % GROUPS_PER_STRIDED_RESIDUE;
    const uint r = rc / chunks;
    const uint chunk = rc % chunks;
    const uint p_in = kind == LOAD_DECOMPOSE ? r : in_prime;
    __global const u64 *pr = params + p_in * PARAMS_STRIDE;
    const uint c = lid & (C - 1);
    const uint u = lid >> LOG_C;
    const size_t column = group_in_residue * C + c;
    __local u64 *lcol = lmem + c;
    u64 x[R];
    __global const u64 *gcol = in + (size_t)r * N + column;
    inv_strided_steps(x, gcol, lcol, (__global const ulong2 *)inv_root_powers + p_in * N, pr,
                      u, active && !coeff_in);
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++) {
            // Where the inverse's steps leave word t: t = step_pos(LOG_R, LOG_S - LOG_R, ..).
            if (coeff_in)
                x[i] = gcol[(size_t)step_pos(LOG_R, LOG_S - LOG_R, u, S / R, i) * G];
            x[i] = reduce_once(x[i], pr[0]);
        }
    }
    const uint o_end = min((chunk + 1) * outs_per_group, coeff_modulus_size);
    for (uint j = 0; j < outs_per_group; j++) {
        const uint o = chunk * outs_per_group + j;
        const bool out =
            active && o < o_end && !(kind == LOAD_DECOMPOSE && o == r && !coeff_in);
        // An idle transform reads the input prime's tables, in range.
        const uint p_out = out ? o : p_in;
        // The last reads of lmem (the inverse's, the previous transform's) are done.
        barrier(CLK_LOCAL_MEM_FENCE);
        load_op ld = prime_load(kind, params, p_in, p_out, plain);
        u64 v[R];
        if (out) {
#pragma unroll
            for (uint i = 0; i < R; i++)
                v[i] = apply_load(ld, x[i]);
        }
        fwd_strided_steps(v, values + ((size_t)r * coeff_modulus_size + p_out) * N + column,
                          lcol, (__global const ulong2 *)root_powers + p_out * N,
                          params[p_out * PARAMS_STRIDE], u, out);
    }
}

// inv_fwd_strided_group over `jobs` jobs (a launch of several jobs, above): job j's input
// residues (the share's, in / chunks of them) from residue j times their count of `in`,
// its outputs from residue j times their count times coeff_modulus_size of values.
__kernel __attribute__((reqd_work_group_size(STRIDED_WG, 1, 1)))
void ntt_inv_fwd_strided(__global u64 *restrict values, ulong values_at,
                         __global const u64 *restrict root_powers, ulong root_powers_at,
                         __global const u64 *restrict params, ulong params_at,
                         uint coeff_modulus_size, __global const u64 *restrict in, ulong in_at,
                         uint kind, uint in_prime, uint outs_per_group, uint chunks,
                         __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                         uint jobs)
{
    __local u64 lmem[S * C];
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    in += in_at;
    inv_root_powers += inv_root_powers_at;
    const job_group jg = job_group_of(jobs);
    const size_t in_residues = jg.share / (GROUPS_PER_STRIDED_RESIDUE * chunks);
    values += jg.job * in_residues * coeff_modulus_size * N;
    in += jg.job * in_residues * N;
    inv_fwd_strided_group(values, root_powers, params, coeff_modulus_size, in, kind, in_prime,
                          no_plain(), false, outs_per_group, chunks, inv_root_powers, lmem,
                          jg.group, get_local_id(0), true);
}

#endif // LOG_S != 0

// ---------------------------------------------------------------------------------------
#ifdef KS_ROWS

// Key switching's forward transforms with the inner product with the key fused in
// (SEAL's switch_key_inplace, its loops over I and J). Row I < K + 1 =
// coeff_modulus_size (prime I of the plan; the special prime at I = K) of block group g
// loops over J < K: it transforms decomposed residue J under prime I and accumulates, in
// registers, its products with both key polynomials,
//     s(c, I) = sum_J NTT_I(t_target[J] mod q_I) * key[J][c][kp(I)],
// kp(I) = I < K ? I : key_special_index, key word ((J * 2 + c) * key_stride_primes + p) * N
// + k (SEAL's key vector). So the K (K + 1) decomposed residues in NTT form are never
// stored, and each key word is read once. As SEAL does, J = I takes the target's own
// residue in NTT form (residue target_first + J of target) instead of a transform. The
// transform's input: with LOG_S = 0, t_target (K canonical residues in coefficient
// form), decomposed on load; otherwise what ntt_inv_fwd_strided left in values (residue
// J (K + 1) + I). Products (< 4q * q) accumulate exactly in 128 bits, reduced every
// reduce_every terms (see ckks_ks_inner_product). With `coeff_target` (a target in
// coefficient form, BFV's: chain.cl's ks_chained_coeff) there is no NTT-form target, and
// J = I is transformed like the others, from what the strided pass left for it: the same
// residue, below 4q as the others, and the sum depends on its words only mod q. On exit
// prod[c K + I] = s(c, I), canonical, for I < K, and last[c] = s(c, K) after the inverse
// transform's first pass under the special prime (inv_root_powers' prime K), in [0, 2q):
// the mod-down's first step. With `inverse_rows` prod[c K + I] too is s(c, I) after the
// inverse's first pass under prime I, in [0, 2q). prod and last alias no input.
//
// A work group holds KS_ROWS rows of the same blocks, BLOCK_WG work items each, with
// local memory of their own: group (i, g) serves rows i KS_ROWS .. i KS_ROWS + KS_ROWS - 1
// (those below K + 1). Rows in one group set the work group's size apart from the
// blocks': the accumulators (4 words per value) make this kernel's work items large, so
// the SMs hold few of them, and small groups of a few one-block rows let the K + 1 rows
// of a key switch run in one round over the SMs (see StagedVariant::DEFAULT). Rows that
// skip a transform (J = I, or past the last prime) still pass its barriers.

// The forward roots of a work group's B blocks under one prime (w), in local memory, so
// that transforms that share them (key switching's J loop) read them once from global
// memory: root k (1 <= k < G) of block bl at lw[bl G + k] in heap order, entry m + h
// (m = 2^l <= k < 2m) being the root of group h in the round with gap G / (2m), that is
// root_powers[(N + x) / (G / m) + h] for the block at x. fwd_step then finds a root at
// ((G + t0) >> shift) + h where it would find it at ((N + x + t0) >> shift) + h in w.
ALWAYS_INLINE void stage_block_roots(__local ulong2 *lw, __global const ulong2 *w,
                                     uint group_in_residue, uint lid)
{
#pragma unroll
    for (uint i = 0; i < R; i++) {
        uint k = lid + i * BLOCK_WG;
        uint j = k & (G - 1);
        if (j != 0) {
            uint x = (group_in_residue * B + (k >> LOG_G)) * G;
            uint l = 31 - clz(j);
            lw[k] = w[((N + x) >> (LOG_G - l)) + j - (1u << l)];
        }
    }
}

// Work group `group` of the launch, work item `item` of its KS_ROWS * BLOCK_WG, over lmem
// (KS_ROWS * B * PADDED_G words) and, with KS_LOCAL_ROOTS, lroots_all (KS_ROWS * B * G
// pairs); without `active` the work item only passes the barriers.
ALWAYS_INLINE void ks_block_group(__global const u64 *values, __global const u64 *root_powers,
                                  __global const u64 *params, uint coeff_modulus_size,
                                  __global const u64 *t_target, __global const u64 *target,
                                  uint target_first, bool coeff_target, __global const u64 *key,
                                  uint key_stride_primes, uint key_special_index,
                                  uint reduce_every, __global u64 *prod, __global u64 *last,
                                  bool inverse_rows, __global const u64 *inv_root_powers,
                                  __local u64 *lmem, __local ulong2 *lroots_all, uint group,
                                  uint item, bool active)
{
    const uint K = coeff_modulus_size - 1;
    const uint row = item / BLOCK_WG;
    const uint lid = item % BLOCK_WG;
    const uint I = group / GROUPS_PER_BLOCK_RESIDUE * KS_ROWS + row;
    // A row past the last prime only passes the barriers; it reads the last prime's
    // tables so that every address stays in range.
    const bool live = active && I <= K;
    const uint P = live ? I : K;
    const uint group_in_residue = group % GROUPS_PER_BLOCK_RESIDUE;
    __local u64 *lrow = lmem + row * (B * PADDED_G);
    __global const u64 *pr = params + P * PARAMS_STRIDE;
    const u64 q = pr[0], r1 = pr[5], r0 = pr[6];
    const uint kp = P < K ? P : key_special_index;
    __global const ulong2 *w = (__global const ulong2 *)root_powers + P * N;
    const uint first = group_in_residue * (B * G);
#if KS_LOCAL_ROOTS
    // Every J transforms under the row's prime P with the same blocks' roots.
    __local ulong2 *lroots = lroots_all + row * (B * G);
    if (live)
        stage_block_roots(lroots, w, group_in_residue, lid);
    barrier(CLK_LOCAL_MEM_FENCE);
    const bool local_roots = true;
#else
    __local const ulong2 *lroots = 0;
    const bool local_roots = false;
#endif
    u64 lo0[R], hi0[R], lo1[R], hi1[R];
#pragma unroll
    for (uint i = 0; i < R; i++)
        lo0[i] = hi0[i] = lo1[i] = hi1[i] = 0;
    uint left = reduce_every;
    for (uint J = 0; J < K; J++) {
        u64 x[R];
        // Every row of the group passes the same barriers (those of one transform) in
        // every J; J and K are the same for the whole group.
        const bool transform = live && (J != P || coeff_target);
#if LOG_S == 0
        fwd_block_transform_load(t_target + (size_t)J * N,
                                 prime_load(LOAD_DECOMPOSE, params, J, P, no_plain()), lrow, w,
                                 lroots, local_roots, q, group_in_residue, lid, transform);
#else
        fwd_block_transform(values + ((size_t)J * coeff_modulus_size + P) * N, lrow, w,
                            lroots, local_roots, q, group_in_residue, lid, transform);
#endif
        if (transform) {
#pragma unroll
            for (uint i = 0; i < R; i++)
                x[i] = lrow[block_slot(lid + i * BLOCK_WG)];
        } else if (live) {
            __global const u64 *t = target + (size_t)(target_first + J) * N + first;
#pragma unroll
            for (uint i = 0; i < R; i++)
                x[i] = t[lid + i * BLOCK_WG];
        }
        // Every read of lmem happens before the next transform writes it.
        barrier(CLK_LOCAL_MEM_FENCE);
        if (live) {
            __global const u64 *k0 =
                key + ((size_t)(2 * J) * key_stride_primes + kp) * N + first;
            __global const u64 *k1 =
                key + ((size_t)(2 * J + 1) * key_stride_primes + kp) * N + first;
#pragma unroll
            for (uint i = 0; i < R; i++) {
                uint e = lid + i * BLOCK_WG;
                mul_acc_128(&lo0[i], &hi0[i], x[i], k0[e]);
                mul_acc_128(&lo1[i], &hi1[i], x[i], k1[e]);
            }
        }
        if (--left == 0) {
#pragma unroll
            for (uint i = 0; i < R; i++) {
                lo0[i] = barrett_reduce_128(lo0[i], hi0[i], q, r0, r1);
                lo1[i] = barrett_reduce_128(lo1[i], hi1[i], q, r0, r1);
                hi0[i] = hi1[i] = 0;
            }
            left = reduce_every;
        }
    }
    // The outputs of rows below K go to prod, in NTT form. The special prime's row starts
    // the mod-down: its two residues leave after the inverse transform's first pass (the
    // whole inverse, lazy, with LOG_S = 0), so that the mod-down needs no launch of its
    // own for it; with `inverse_rows` (a key switch in coefficient form, chain.cl's
    // ks_chained_coeff, which divides in coefficient form) every row's do, into prod. c =
    // 0 waits in lrow and c = 1 in its output (where its transform's output goes), so that
    // no accumulator stays live through the transforms: registers held there would lower
    // the whole kernel's occupancy.
    const bool special = live && I == K;
    const bool inverse = special || (live && inverse_rows);
    __global u64 *out0 = special ? last : prod + (size_t)I * N;
    __global u64 *out1 = special ? last + N : prod + (size_t)(K + I) * N;
    if (live) {
#pragma unroll
        for (uint i = 0; i < R; i++) {
            uint e = first + lid + i * BLOCK_WG;
            u64 y0 = barrett_reduce_128(lo0[i], hi0[i], q, r0, r1);
            u64 y1 = barrett_reduce_128(lo1[i], hi1[i], q, r0, r1);
            if (inverse)
                lrow[block_slot(lid + i * BLOCK_WG)] = y0;
            else
                out0[e] = y0;
            out1[e] = y1;
        }
    }
    // Every row of every group passes the transforms' barriers: with them inside a branch
    // on the group (whether it holds the special row), PoCL 3.1's build gave wrong words
    // wherever the group held an idle row (rows past the last prime), taken branch or not.
    __global const ulong2 *iw = (__global const ulong2 *)inv_root_powers + P * N;
    inv_block_transform(lrow, out0, iw, pr, group_in_residue, 0, lid, inverse);
    // The transform's last reads of lrow are done before the next writes.
    barrier(CLK_LOCAL_MEM_FENCE);
    if (inverse) {
#pragma unroll
        for (uint i = 0; i < R; i++)
            lrow[block_slot(lid + i * BLOCK_WG)] = out1[first + lid + i * BLOCK_WG];
    }
    // Every work item has read its words of out1 before the transform overwrites them.
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    inv_block_transform(lrow, out1, iw, pr, group_in_residue, 0, lid, inverse);
}

// ks_block_group over `jobs` key switches of one level (a launch of several jobs, above):
// job j switches target_j with key_j; its intermediates lie j job sizes into values (K
// (K + 1) residues, K = coeff_modulus_size - 1; two-pass layouts), t_target (K; one-pass
// layouts), prod (2 K) and last (2). Job 0's are target and key.
__kernel __attribute__((reqd_work_group_size(KS_ROWS * BLOCK_WG, 1, 1)))
void ntt_fwd_block_ks(__global const u64 *restrict values, ulong values_at,
                      __global const u64 *restrict root_powers, ulong root_powers_at,
                      __global const u64 *restrict params, ulong params_at, uint coeff_modulus_size,
                      __global const u64 *restrict t_target, ulong t_target_at,
                      __global const u64 *restrict target, ulong target_at, uint target_first,
                      __global const u64 *restrict key, ulong key_at, uint key_stride_primes,
                      uint key_special_index, uint reduce_every,
                      __global u64 *restrict prod, ulong prod_at,
                      __global u64 *restrict last, ulong last_at,
                      __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                      uint jobs, __global const u64 *restrict target1, ulong target1_at,
                      __global const u64 *restrict key1, ulong key1_at,
                      __global const u64 *restrict target2, ulong target2_at,
                      __global const u64 *restrict key2, ulong key2_at,
                      __global const u64 *restrict target3, ulong target3_at,
                      __global const u64 *restrict key3, ulong key3_at)
{
    __local u64 lmem[KS_ROWS * B * PADDED_G];
#if KS_LOCAL_ROOTS
    __local ulong2 lroots_all[KS_ROWS * B * G];
#else
    __local ulong2 *lroots_all = 0;
#endif
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    t_target += t_target_at;
    target += target_at;
    key += key_at;
    prod += prod_at;
    last += last_at;
    inv_root_powers += inv_root_powers_at;
    target1 += target1_at;
    key1 += key1_at;
    target2 += target2_at;
    key2 += key2_at;
    target3 += target3_at;
    key3 += key3_at;
    const job_group jg = job_group_of(jobs);
    const size_t K = coeff_modulus_size - 1;
    __global const u64 *targets[KS_JOBS_MAX - 1] = {target1, target2, target3};
    __global const u64 *keys[KS_JOBS_MAX - 1] = {key1, key2, key3};
#if LOG_S != 0
    values += jg.job * K * coeff_modulus_size * N;
#endif
    t_target += jg.job * K * N;
    prod += jg.job * 2 * K * N;
    last += jg.job * 2 * N;
    ks_block_group(values, root_powers, params, coeff_modulus_size, t_target,
                   JOB_PICK(jg.job, target, targets), target_first, false,
                   JOB_PICK(jg.job, key, keys), key_stride_primes, key_special_index,
                   reduce_every, prod, last, false, inv_root_powers, lmem, lroots_all, jg.group,
                   get_local_id(0), true);
}

#endif // KS_ROWS

// ---------------------------------------------------------------------------------------
// The mod-down's forward transforms (SEAL's divide_and_round_q_last_ntt_inplace and the
// end of switch_key_inplace) over residue r = p * coeff_modulus_size + i, prime i:
// loads round `last` (residue p under prime last_prime, < 2 q_last, in coefficient form)
// under q_i (ckks_moddown_prep), stores finish the division,
//     dst[p * dst_stride + i] = (src[p * src_stride + i] - x) * inv_i mod q_i
// (ckks_divide_round_finish; inv holds (operand, quotient) pairs of q_last^-1 mod q_i),
// plus acc[p * dst_stride + i] mod q_i for the first acc_polys polynomials (key
// switching adds into the ciphertext: acc = dst; a rotation into the permuted first
// polynomial). With LOG_S = 0 this one launch does all; otherwise ntt_inv_fwd_strided
// first finishes last's inverse transform and leaves the rounded, partly transformed
// words in values, which this pass reads. dst may be src only with equal strides, and
// may be acc; dst is neither values nor last.
// Work group `group` of the launch over lmem (B * PADDED_G words); `lid` and `active` as
// in fwd_block_steps.
ALWAYS_INLINE void moddown_block_group(__global const u64 *values,
                                       __global const u64 *root_powers,
                                       __global const u64 *params, uint coeff_modulus_size,
                                       __global const u64 *last, uint last_prime,
                                       __global u64 *dst, uint dst_stride,
                                       __global const u64 *src, uint src_stride,
                                       __global const u64 *inv, __global const u64 *acc,
                                       uint acc_polys, __local u64 *lmem, uint group, uint lid,
                                       bool active)
{
    const uint residue = group / GROUPS_PER_BLOCK_RESIDUE;
    const uint poly = residue / coeff_modulus_size;
    const uint prime = residue % coeff_modulus_size;
    const uint group_in_residue = group % GROUPS_PER_BLOCK_RESIDUE;
    const u64 q = params[prime * PARAMS_STRIDE];
    const bool add = poly < acc_polys;
    const size_t first = ((size_t)poly * dst_stride + prime) * N + group_in_residue * (B * G);
    __global const u64 *s = src + ((size_t)poly * src_stride + prime) * N +
                            group_in_residue * (B * G);
    const u64 inv_i = inv[2 * prime], inv_i_q = inv[2 * prime + 1];
    __global const ulong2 *w = (__global const ulong2 *)root_powers + prime * N;
#if LOG_S == 0
    fwd_block_transform_load(last + (size_t)poly * N,
                             prime_load(LOAD_MODDOWN, params, last_prime, prime, no_plain()), lmem,
                             w, 0, false, q, group_in_residue, lid, active);
#else
    fwd_block_transform(values + (size_t)residue * N, lmem, w, 0, false, q, group_in_residue,
                        lid, active);
#endif
    if (!active)
        return;
    // The stores leave through local memory, so that neighbouring work items store
    // neighbouring words.
#pragma unroll
    for (uint i = 0; i < R; i++) {
        uint e = lid + i * BLOCK_WG;
        u64 y = moddown_finish(s[e], lmem[block_slot(e)], inv_i, inv_i_q, q);
        dst[first + e] = add ? add_uint_mod(acc[first + e], y, q) : y;
    }
}

// moddown_block_group over `jobs` mod-downs of one shape (a launch of several jobs,
// above), each of the share's polys = residues / coeff_modulus_size polynomials: job j
// divides into dst_j, adding acc_j; its intermediates lie j job sizes into values (polys
// coeff_modulus_size residues; two-pass layouts), last (polys) and src (polys
// src_stride). Job 0's are dst and acc.
__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_fwd_block_moddown(__global u64 *restrict values, ulong values_at,
                           __global const u64 *restrict root_powers, ulong root_powers_at,
                           __global const u64 *restrict params, ulong params_at,
                           uint coeff_modulus_size,
                           __global const u64 *restrict last, ulong last_at, uint last_prime,
                           __global u64 *dst, ulong dst_at, uint dst_stride,
                           __global const u64 *src, ulong src_at, uint src_stride,
                           __global const u64 *restrict inv, ulong inv_at,
                           __global const u64 *acc, ulong acc_at, uint acc_polys, uint jobs,
                           __global u64 *dst1, ulong dst1_at, __global const u64 *acc1,
                           ulong acc1_at, __global u64 *dst2, ulong dst2_at,
                           __global const u64 *acc2, ulong acc2_at, __global u64 *dst3,
                           ulong dst3_at, __global const u64 *acc3, ulong acc3_at)
{
    __local u64 lmem[B * PADDED_G];
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    last += last_at;
    dst += dst_at;
    src += src_at;
    inv += inv_at;
    acc += acc_at;
    dst1 += dst1_at;
    acc1 += acc1_at;
    dst2 += dst2_at;
    acc2 += acc2_at;
    dst3 += dst3_at;
    acc3 += acc3_at;
    const job_group jg = job_group_of(jobs);
    const size_t residues = jg.share / GROUPS_PER_BLOCK_RESIDUE;
    const size_t polys = residues / coeff_modulus_size;
    __global u64 *dsts[KS_JOBS_MAX - 1] = {dst1, dst2, dst3};
    __global const u64 *accs[KS_JOBS_MAX - 1] = {acc1, acc2, acc3};
#if LOG_S != 0
    values += jg.job * residues * N;
#endif
    last += jg.job * polys * N;
    src += jg.job * polys * src_stride * N;
    moddown_block_group(values, root_powers, params, coeff_modulus_size, last, last_prime,
                        JOB_PICK(jg.job, dst, dsts), dst_stride, src, src_stride, inv,
                        JOB_PICK(jg.job, acc, accs), acc_polys, lmem, jg.group,
                        get_local_id(0), true);
}

#endif // LOG_S
