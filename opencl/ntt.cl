// Uses: arith.cl
// Negacyclic NTT kernels after SEAL's DWTHandler (util/dwthandler.h), built after arith.cl.
// Every butterfly is SEAL's, word for word (src/ntt/host.rs is the reference), so lazy and
// reduced outputs both equal SEAL's. Rounds are numbered as SEAL's: the forward
// (Cooley-Tukey, standard order in, bit-reversed out) runs gaps N/2, N/4, .., 1; the
// inverse (Gentleman-Sande, bit-reversed in, standard out) runs gaps 1, 2, .., N/2 and
// folds N^-1 into its last round.
//
// Root indices. A forward butterfly on (x, x + gap), x the lower index, uses
//     root_powers[(N + x) / (2 gap)]
// (SEAL's round m = N / (2 gap) uses entries m + x / (2 gap)); an inverse one uses
//     inv_root_powers[N - N / gap + 1 + x / (2 gap)]
// (SEAL consumes the scrambled table in order: the rounds before gap hold N - N / gap
// entries after entry 0).
//
// Data: `count` polynomials of L residues of N words, word (poly * L + j) * N + k for
// residue j (prime j). Residue r = poly * L + j (fewer than 2^32 of them) is handled by
// whole work groups; its prime is r % L. The tables are read-only and never alias the
// values (restrict), so drivers may read them through a read-only cache.
//
// Tables: root_powers and inv_root_powers as L consecutive tables of N (operand, quotient)
// word pairs (SEAL's MultiplyUIntModOperand), read as ulong2: buffers are aligned far
// beyond 16 bytes and every pair starts at an even word. params: PARAMS_STRIDE words per
// prime: q, N^-1 (operand, quotient), the last inverse root times N^-1 (operand,
// quotient), as SEAL's mul_root_scalar computes it, and q's Barrett words r1, r0 (for
// the fused passes' reductions).
//
// Build options: LOG_N for every kernel; the staged kernels also need LOG_R (values per
// work item, 2 to 4), LOG_S (rounds done by ntt_*_strided; 0 when the whole transform
// fits one work group), LOG_C (columns per strided work group) and LOG_B (blocks per
// block work group). See src/ntt/plan.rs.
//
// This file is the transform and nothing else: the plain transforms, the inverse block
// pass reading from another buffer, and the staged passes' steps on registers, which are
// the hooks of passes that load or store otherwise. Such a pass loads its words itself
// and hands them to the steps (fwd_block_steps from fwd_block_word, fwd_strided_steps,
// inv_block_transform from local memory), and stores what they leave (local memory at
// block_slot, registers). The CKKS passes built so (the mod-down's and key switching's
// loads and stores, the galois permutation) are fused.cl's, built after this file
// (src/ckks/fused).

#define N (1u << LOG_N)
#define PARAMS_STRIDE 8
// The step helpers take the register array by pointer: they must be inlined (with their
// loops unrolled) for v[] to live in registers. PoCL defines `inline` away, so ask for it.
#define ALWAYS_INLINE inline __attribute__((always_inline))

// The inverse transform's last butterfly (gap N/2) with N^-1 folded in: SEAL's scalar
// branch of transform_from_rev. x, y < 2q on entry and exit.
ALWAYS_INLINE void butterfly_inverse_last_lazy(u64 *x, u64 *y, u64 inv_n, u64 inv_n_q,
                                               u64 sr, u64 sr_q, u64 q)
{
    u64 two_q = q << 1;
    u64 u = reduce_once(*x, two_q);
    u64 v = *y;
    *x = multiply_uint_mod_shoup_lazy(reduce_once(u + v, two_q), inv_n, inv_n_q, q);
    *y = multiply_uint_mod_shoup_lazy(u + two_q - v, sr, sr_q, q);
}

// ---------------------------------------------------------------------------------------
// Naive radix-2 baseline (Zhai et al., "Accelerating Encrypted Computing on Intel
// GPUs", Listing 14): one launch per round, one work item per butterfly, global memory
// only. The host launches LOG_N rounds over (residues * N/2) work items; `reduce` (set in
// the last round only) applies SEAL's final reduction.

// Work item gid's butterfly in the round of gap 2^log_gap: its residue's prime and the
// lower index x of the pair (x, x + gap) in the residue, which *p points at on return.
typedef struct {
    uint prime, x, gap;
    __global u64 *p;
} naive_pair;

ALWAYS_INLINE naive_pair naive_butterfly(__global u64 *values, uint coeff_modulus_size,
                                         uint log_gap)
{
    size_t gid = get_global_id(0);
    uint residue = (uint)(gid >> (LOG_N - 1));
    uint i = (uint)gid & (N / 2 - 1);
    naive_pair b;
    b.prime = residue % coeff_modulus_size;
    b.gap = 1u << log_gap;
    b.x = ((i >> log_gap) << (log_gap + 1)) | (i & (b.gap - 1));
    b.p = values + (size_t)residue * N;
    return b;
}

__kernel void ntt_fwd_naive(__global u64 *restrict values, ulong values_at,
                            __global const u64 *restrict root_powers, ulong root_powers_at,
                            __global const u64 *restrict params, ulong params_at,
                            uint coeff_modulus_size, uint reduce, uint log_gap)
{
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    naive_pair t = naive_butterfly(values, coeff_modulus_size, log_gap);
    u64 q = params[t.prime * PARAMS_STRIDE];
    __global const ulong2 *roots = (__global const ulong2 *)root_powers + t.prime * N;
    ulong2 w = roots[(N + t.x) >> (log_gap + 1)];
    u64 a = t.p[t.x];
    u64 b = t.p[t.x + t.gap];
    butterfly_forward_lazy(&a, &b, w.x, w.y, q);
    if (reduce) {
        a = reduce_once(reduce_once(a, q << 1), q);
        b = reduce_once(reduce_once(b, q << 1), q);
    }
    t.p[t.x] = a;
    t.p[t.x + t.gap] = b;
}

__kernel void ntt_inv_naive(__global u64 *restrict values, ulong values_at,
                            __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                            __global const u64 *restrict params, ulong params_at,
                            uint coeff_modulus_size, uint reduce, uint log_gap)
{
    values += values_at;
    inv_root_powers += inv_root_powers_at;
    params += params_at;
    naive_pair t = naive_butterfly(values, coeff_modulus_size, log_gap);
    __global const u64 *pr = params + t.prime * PARAMS_STRIDE;
    u64 q = pr[0];
    u64 a = t.p[t.x];
    u64 b = t.p[t.x + t.gap];
    if (log_gap == LOG_N - 1) {
        butterfly_inverse_last_lazy(&a, &b, pr[1], pr[2], pr[3], pr[4], q);
        if (reduce) {
            a = reduce_once(a, q);
            b = reduce_once(b, q);
        }
    } else {
        __global const ulong2 *roots = (__global const ulong2 *)inv_root_powers + t.prime * N;
        ulong2 w = roots[N - (N >> log_gap) + 1 + (t.x >> (log_gap + 1))];
        butterfly_inverse_lazy(&a, &b, w.x, w.y, q);
    }
    t.p[t.x] = a;
    t.p[t.x + t.gap] = b;
}

// ---------------------------------------------------------------------------------------
// Staged radix-R NTT (the same paper, V-B5, Listing 17), R = 2^LOG_R values per work
// item: 4 (radix-4, the default where a transform takes two passes: more and smaller work
// items, which matters most in key switching's row block pass (fused.cl), whose work
// items also hold 128-bit accumulators, 4 words per value), 8 (radix-8) or 16 (radix-16:
// fewer exchanges and barriers, more work per item). Each work item holds R values in
// registers and runs up to LOG_R rounds on them between exchanges; every butterfly is
// the same whatever R, so the outputs are too. A transform of N = S * G points takes two
// launches (one when LOG_S = 0):
//   strided: the S-point sub-transforms of the elements congruent mod G. In the forward
//     transform these are its first LOG_S rounds (gaps N/2 .. G, all multiples of G, never
//     mix classes mod G); in the inverse its last LOG_S rounds. A work group takes C
//     consecutive classes, so neighbouring work items touch neighbouring words.
//   block: the G-point sub-transforms of contiguous blocks of G words: the forward's last
//     LOG_G rounds (gaps G/2 .. 1), the inverse's first. B blocks per work group.
// Inside a launch a step of K <= LOG_R rounds runs in registers and steps exchange data
// through local memory. In element space t of a sub-transform (size SIZE), a step whose
// smallest gap is 2^lg works on radix-2^K sub-problems {t0 + j 2^lg : j < 2^K} with
// t0 mod 2^(lg+K) < 2^lg; work item u of SIZE/R takes sub-problems number p * SIZE/R + u,
// p < R / 2^K, in registers v[p 2^K + j].

#ifdef LOG_S

#define R (1u << LOG_R)
#define LOG_G (LOG_N - LOG_S)
#define G (1u << LOG_G)
#define S (1u << LOG_S)
#define C (1u << LOG_C)
#define B (1u << LOG_B)
// Block work groups pad local memory by one word in R so that the stride-R accesses of the
// gap-1 step spread over the banks.
#define PAD(t) ((t) + ((t) >> LOG_R))
#define PADDED_G (G + G / R)
#define BLOCK_WG (B * G / R)
#define STRIDED_WG (S * C / R)
#define GROUPS_PER_BLOCK_RESIDUE (N / (B * G))
#define GROUPS_PER_STRIDED_RESIDUE (G / C)
// Full steps (LOG_R rounds) of the strided sub-transforms.
#define NSTEP (LOG_S / LOG_R)

#if (LOG_R < 2 || LOG_R > 4) || LOG_G < LOG_R || (LOG_S != 0 && LOG_S < LOG_R) || \
    LOG_C > LOG_G || LOG_B > LOG_S
#error "unsupported staged NTT layout"
#endif

// Position in element space of register i (0..R-1) in a step of K rounds with smallest
// gap 2^lg, for work item u of `per` (SIZE / R).
ALWAYS_INLINE uint step_pos(uint K, uint lg, uint u, uint per, uint i)
{
    uint n = (i >> K) * per + u;
    uint t0 = ((n >> lg) << (lg + K)) | (n & ((1u << lg) - 1));
    return t0 + ((i & ((1u << K) - 1)) << lg);
}

// One forward step: K rounds (gaps 2^(lg+K-1) .. 2^lg) on the R registers, which hold
// R / 2^K sub-problems. Each round is R/2 butterflies; butterfly b works in sub-problem
// p = b / 2^(K-1), whose elements sit at t0_p + j 2^lg (registers p 2^K + j). Its root is
// root_powers[((root_base + t0_p) >> (lg + K - s)) + h] in round s, h its group within
// the sub-problem: root_base + t is the lower index in forward-root terms (N + x for a
// block at x, S + t for the strided classes, which share the roots of an S-point NTT).
// Loop bounds are constants (K <= LOG_R) so that every loop unrolls and v stays in
// registers.
// With `local_roots` the roots come from lw instead of w: a block's roots staged in local
// memory by stage_block_roots, with root_base = G.
ALWAYS_INLINE void fwd_step(u64 *v, const uint K, uint lg, uint u, uint per,
                            __global const ulong2 *w, __local const ulong2 *lw,
                            const bool local_roots, uint root_base, u64 q)
{
#pragma unroll
    for (uint s = 0; s < LOG_R; s++) {
        if (s < K) {
            uint span = 1u << (K - 1 - s);
#pragma unroll
            for (uint b = 0; b < R / 2; b++) {
                uint p = b >> (K - 1);
                uint m = b & ((1u << (K - 1)) - 1);
                uint h = m >> (K - 1 - s);
                uint a = (p << K) + h * 2 * span + (m & (span - 1));
                uint t0 = step_pos(K, lg, u, per, p << K);
                uint k = ((root_base + t0) >> (lg + K - s)) + h;
                ulong2 r = local_roots ? lw[k] : w[k];
                butterfly_forward_lazy(&v[a], &v[a + span], r.x, r.y, q);
            }
        }
    }
}

// One inverse step: K rounds (gaps 2^lg .. 2^(lg+K-1)) on the R registers, laid out as in
// fwd_step. Round s (gap 2^(lg+s)) uses
//     inv_root_powers[N + 1 - (size >> (lg + s)) + ((x_base + t0_p) >> (lg + s + 1)) + h]:
// size = N and x_base the block's first index for blocks; size = S and x_base = 0 for the
// strided classes. With `last`, round K-1 is the transform's last round (gap N/2), one
// group per sub-problem, and folds in N^-1 with the pre-scaled root from params.
ALWAYS_INLINE void inv_step(u64 *v, const uint K, uint lg, uint u, uint per,
                            __global const ulong2 *w, uint size, uint x_base,
                            __global const u64 *pr, const bool last)
{
    u64 q = pr[0];
#pragma unroll
    for (uint s = 0; s < LOG_R; s++) {
        if (s < K) {
            uint span = 1u << s;
#pragma unroll
            for (uint b = 0; b < R / 2; b++) {
                uint p = b >> (K - 1);
                uint m = b & ((1u << (K - 1)) - 1);
                uint h = m >> s;
                uint a = (p << K) + h * 2 * span + (m & (span - 1));
                if (last && s == K - 1) {
                    butterfly_inverse_last_lazy(&v[a], &v[a + span], pr[1], pr[2], pr[3],
                                                pr[4], q);
                } else {
                    uint t0 = step_pos(K, lg, u, per, p << K);
                    uint r0 = N + 1 - (size >> (lg + s)) + ((x_base + t0) >> (lg + s + 1));
                    ulong2 r = w[r0 + h];
                    butterfly_inverse_lazy(&v[a], &v[a + span], r.x, r.y, q);
                }
            }
        }
    }
}

// Forward, gaps G/2 .. 1 on blocks; the transform's last launch. Its outputs, in
// [0, 4q), are the group's B * G words in local memory: word e of the group (e < B * G)
// at lmem[block_slot(e)], after a barrier. A caller that transforms again with the same
// lmem must pass a barrier between its last read and the next call.
ALWAYS_INLINE uint block_slot(uint e)
{
    return (e >> LOG_G) * PADDED_G + PAD(e & (G - 1));
}

// The word of its residue that work item `lid` loads into register i (i < R) for the
// forward block transform of the group's blocks: t = u + i G/R of its block, the first
// step's inputs.
ALWAYS_INLINE uint fwd_block_word(uint group_in_residue, uint lid, uint i)
{
    const uint block = group_in_residue * B + (lid >> (LOG_G - LOG_R));
    return block * G + (lid & (G / R - 1)) + i * (G / R);
}

// The forward block transform from registers: v[i] holds, in [0, 4q), the word
// fwd_block_word(group_in_residue, lid, i) of the residue, loaded by the caller (which
// may do a step of its own on each load: the hook of the fused passes, src/ckks/fused).
// `lid` is the work item's index among the BLOCK_WG that share `lmem` (get_local_id(0)
// but in key switching's rows). Without `active` the work item only passes the barriers
// (v unread), so that the others of its work group may transform. With `local_roots` the
// roots come from lroots, the group's blocks' roots staged there by stage_block_roots.
ALWAYS_INLINE void fwd_block_steps(u64 *v, __local u64 *lmem, __global const ulong2 *w,
                                   __local const ulong2 *lroots, const bool local_roots,
                                   u64 q, uint group_in_residue, uint lid, bool active)
{
    const uint bl = lid >> (LOG_G - LOG_R);
    const uint u = lid & (G / R - 1);
    const uint block = group_in_residue * B + bl;
    __local u64 *lblock = lmem + bl * PADDED_G;
    __local const ulong2 *lw = local_roots ? lroots + bl * G : lroots;
    const uint root_base = local_roots ? G : N + block * G;

    // Step 0 (gaps G/2 .. G/R) on the loaded words: t = u + i G/R.
    if (active) {
        fwd_step(v, LOG_R, LOG_G - LOG_R, u, G / R, w, lw, local_roots, root_base, q);
#pragma unroll
        for (uint i = 0; i < R; i++)
            lblock[PAD(u + i * (G / R))] = v[i];
    }

    for (int lg = LOG_G - 2 * LOG_R; lg >= LOG_G % LOG_R; lg -= LOG_R) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active) {
#pragma unroll
            for (uint i = 0; i < R; i++)
                v[i] = lblock[PAD(step_pos(LOG_R, lg, u, G / R, i))];
            fwd_step(v, LOG_R, lg, u, G / R, w, lw, local_roots, root_base, q);
#pragma unroll
            for (uint i = 0; i < R; i++)
                lblock[PAD(step_pos(LOG_R, lg, u, G / R, i))] = v[i];
        }
    }
#if LOG_G % LOG_R
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++)
            v[i] = lblock[PAD(step_pos(LOG_G % LOG_R, 0, u, G / R, i))];
        fwd_step(v, LOG_G % LOG_R, 0, u, G / R, w, lw, local_roots, root_base, q);
#pragma unroll
        for (uint i = 0; i < R; i++)
            lblock[PAD(step_pos(LOG_G % LOG_R, 0, u, G / R, i))] = v[i];
    }
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
}

// The forward block transform of residue `in` (on entry [0, 4q)). `lid` and `active` as
// in fwd_block_steps.
ALWAYS_INLINE void fwd_block_transform(__global const u64 *in, __local u64 *lmem,
                                       __global const ulong2 *w,
                                       __local const ulong2 *lroots,
                                       const bool local_roots, u64 q,
                                       uint group_in_residue, uint lid, bool active)
{
    u64 v[R];
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++)
            v[i] = in[fwd_block_word(group_in_residue, lid, i)];
    }
    fwd_block_steps(v, lmem, w, lroots, local_roots, q, group_in_residue, lid, active);
}

// The plain forward block pass of work group `group`, in place: the transform's last
// launch, reduced to [0, q) with `reduce`. Writes leave through local memory so that
// neighbouring work items store neighbouring words. `lid` and `active` as in
// fwd_block_steps.
ALWAYS_INLINE void fwd_block_group(__global u64 *values, __global const u64 *root_powers,
                                   __global const u64 *params, uint coeff_modulus_size,
                                   uint reduce, __local u64 *lmem, uint group, uint lid,
                                   bool active)
{
    const uint residue = group / GROUPS_PER_BLOCK_RESIDUE;
    const uint prime = residue % coeff_modulus_size;
    const uint group_in_residue = group % GROUPS_PER_BLOCK_RESIDUE;
    const u64 q = params[prime * PARAMS_STRIDE];
    __global u64 *r = values + (size_t)residue * N;
    fwd_block_transform(r, lmem, (__global const ulong2 *)root_powers + prime * N, 0, false, q,
                        group_in_residue, lid, active);
    if (!active)
        return;
    __global u64 *out = r + group_in_residue * (B * G);
#pragma unroll
    for (uint i = 0; i < R; i++) {
        uint e = lid + i * BLOCK_WG;
        u64 x = lmem[block_slot(e)];
        out[e] = reduce ? reduce_once(reduce_once(x, q << 1), q) : x;
    }
}

__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_fwd_block(__global u64 *restrict values, ulong values_at,
                   __global const u64 *restrict root_powers, ulong root_powers_at,
                   __global const u64 *restrict params, ulong params_at, uint coeff_modulus_size,
                   uint reduce)
{
    __local u64 lmem[B * PADDED_G];
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    fwd_block_group(values, root_powers, params, coeff_modulus_size, reduce, lmem,
                    (uint)get_group_id(0), get_local_id(0), true);
}

// Inverse, gaps 1 .. G/2 on blocks; the transform's first launch (its only one when
// LOG_S = 0, then with the last round folding in N^-1 and `reduce` to [0, q)). The
// group's B * G input words are in local memory, word e at lmem[block_slot(e)], written
// by the work items that share it before the call; the outputs go to residue `out`. On
// entry values in [0, 2q); on exit in [0, 2q). `lid` and `active` as in
// fwd_block_steps.
ALWAYS_INLINE void inv_block_transform(__local u64 *lmem, __global u64 *out,
                                       __global const ulong2 *w, __global const u64 *pr,
                                       uint group_in_residue, uint reduce, uint lid,
                                       bool active)
{
    const u64 q = pr[0];
    const uint bl = lid >> (LOG_G - LOG_R);
    const uint u = lid & (G / R - 1);
    const uint block = group_in_residue * B + bl;
    __local u64 *lblock = lmem + bl * PADDED_G;
    const uint x_base = block * G;
    u64 v[R];

#if LOG_G % LOG_R
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++)
            v[i] = lblock[PAD(step_pos(LOG_G % LOG_R, 0, u, G / R, i))];
        inv_step(v, LOG_G % LOG_R, 0, u, G / R, w, N, x_base, pr, false);
#pragma unroll
        for (uint i = 0; i < R; i++)
            lblock[PAD(step_pos(LOG_G % LOG_R, 0, u, G / R, i))] = v[i];
    }
#endif
    for (uint lg = LOG_G % LOG_R; lg + LOG_R < LOG_G; lg += LOG_R) {
        barrier(CLK_LOCAL_MEM_FENCE);
        if (active) {
#pragma unroll
            for (uint i = 0; i < R; i++)
                v[i] = lblock[PAD(step_pos(LOG_R, lg, u, G / R, i))];
            inv_step(v, LOG_R, lg, u, G / R, w, N, x_base, pr, false);
#pragma unroll
            for (uint i = 0; i < R; i++)
                lblock[PAD(step_pos(LOG_R, lg, u, G / R, i))] = v[i];
        }
    }
    // Last step (gaps G/R .. G/2) straight to global memory: t = u + i G/R.
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++)
            v[i] = lblock[PAD(u + i * (G / R))];
        inv_step(v, LOG_R, LOG_G - LOG_R, u, G / R, w, N, x_base, pr, LOG_S == 0);
        __global u64 *gblock = out + block * G;
#pragma unroll
        for (uint i = 0; i < R; i++) {
            u64 x = v[i];
            if (LOG_S == 0 && reduce)
                x = reduce_once(x, q);
            gblock[u + i * (G / R)] = x;
        }
    }
}

// The inverse block pass: reads residue `in`, writes residue `out` (the same for a plain
// transform). Reads enter through local memory. `lid` and `active` as in
// fwd_block_steps.
ALWAYS_INLINE void inv_block_pass(__global const u64 *in, __global u64 *out,
                                  __local u64 *lmem, __global const ulong2 *w,
                                  __global const u64 *pr, uint group_in_residue,
                                  uint reduce, uint lid, bool active)
{
    __global const u64 *gin = in + group_in_residue * (B * G);
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++) {
            uint e = lid + i * BLOCK_WG;
            lmem[block_slot(e)] = gin[e];
        }
    }
    inv_block_transform(lmem, out, w, pr, group_in_residue, reduce, lid, active);
}

// The plain inverse block pass of work group `group`, in place (each group reads its
// words before it writes them). `lid` and `active` as in fwd_block_steps.
ALWAYS_INLINE void inv_block_group(__global u64 *values, __global const u64 *inv_root_powers,
                                   __global const u64 *params, uint coeff_modulus_size,
                                   uint reduce, __local u64 *lmem, uint group, uint lid,
                                   bool active)
{
    const uint residue = group / GROUPS_PER_BLOCK_RESIDUE;
    const uint prime = residue % coeff_modulus_size;
    __global u64 *r = values + (size_t)residue * N;
    inv_block_pass(r, r, lmem, (__global const ulong2 *)inv_root_powers + prime * N,
                   params + prime * PARAMS_STRIDE, group % GROUPS_PER_BLOCK_RESIDUE, reduce, lid,
                   active);
}

__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_inv_block(__global u64 *restrict values, ulong values_at,
                   __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                   __global const u64 *restrict params, ulong params_at, uint coeff_modulus_size,
                   uint reduce)
{
    __local u64 lmem[B * PADDED_G];
    values += values_at;
    inv_root_powers += inv_root_powers_at;
    params += params_at;
    inv_block_group(values, inv_root_powers, params, coeff_modulus_size, reduce, lmem,
                    (uint)get_group_id(0), get_local_id(0), true);
}

// The inverse block pass reading its input from another buffer: residue j of polynomial
// p (j < coeff_modulus_size) comes from residue p * src_stride + src_first + j of src
// (e.g. the last residue of every polynomial of a ciphertext, or a polynomial at an
// offset); values gets the output in place of a copy followed by ntt_inv_block. src
// must not be values. Work group `group` of the launch; `lid` and `active` as in
// fwd_block_steps.
ALWAYS_INLINE void inv_block_gather_group(__global u64 *values,
                                          __global const u64 *inv_root_powers,
                                          __global const u64 *params,
                                          uint coeff_modulus_size, uint reduce,
                                          __global const u64 *src, uint src_stride,
                                          uint src_first, __local u64 *lmem, uint group,
                                          uint lid, bool active)
{
    const uint residue = group / GROUPS_PER_BLOCK_RESIDUE;
    const uint poly = residue / coeff_modulus_size;
    const uint prime = residue % coeff_modulus_size;
    __global const u64 *in = src + ((size_t)poly * src_stride + src_first + prime) * N;
    inv_block_pass(in, values + (size_t)residue * N, lmem,
                   (__global const ulong2 *)inv_root_powers + prime * N,
                   params + prime * PARAMS_STRIDE, group % GROUPS_PER_BLOCK_RESIDUE, reduce,
                   lid, active);
}

__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_inv_block_gather(__global u64 *restrict values, ulong values_at,
                          __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                          __global const u64 *restrict params, ulong params_at,
                          uint coeff_modulus_size, uint reduce,
                          __global const u64 *restrict src, ulong src_at, uint src_stride,
                          uint src_first)
{
    __local u64 lmem[B * PADDED_G];
    values += values_at;
    inv_root_powers += inv_root_powers_at;
    params += params_at;
    src += src_at;
    inv_block_gather_group(values, inv_root_powers, params, coeff_modulus_size, reduce, src,
                           src_stride, src_first, lmem, (uint)get_group_id(0),
                           get_local_id(0), true);
}

#if LOG_S != 0

// Forward, gaps N/2 .. G (S-point sub-transforms of the classes mod G); the transform's
// first launch. Work item u of column c starts with its R words of the first step in
// v (t = step_pos(LOG_R, LOG_S - LOG_R, u, S / R, i)), in [0, 4q), and leaves them
// transformed, in [0, 4q), at gcol[t G]. The class of column c is at residue word
// c + t G, staged in local memory at lcol[t C]. A caller that transforms again with the
// same local memory must pass a barrier between its last read and the next call.
// Without `active` the work item only passes the barriers (as in fwd_block_steps).
ALWAYS_INLINE void fwd_strided_steps(u64 *v, __global u64 *gcol, __local u64 *lcol,
                                     __global const ulong2 *w, u64 q, uint u, bool active)
{
    // Steps of LOG_R rounds from gap S/2 down, then LOG_S % LOG_R rounds; the last writes
    // global memory, the others go through local memory. Unrolled, like the inverse's
    // steps, so that every shift and root index is a constant. The block passes' step
    // loops stay rolled: unrolled, key switching's row block pass (fused.cl) ran slower.
#pragma unroll
    for (uint st = 0; st < NSTEP; st++) {
        uint lg = LOG_S - LOG_R - LOG_R * st;
        if (st != 0)
            barrier(CLK_LOCAL_MEM_FENCE);
        if (!active)
            continue;
        if (st != 0) {
#pragma unroll
            for (uint i = 0; i < R; i++)
                v[i] = lcol[step_pos(LOG_R, lg, u, S / R, i) * C];
        }
        fwd_step(v, LOG_R, lg, u, S / R, w, 0, false, S, q);
        if (LOG_S % LOG_R == 0 && st == NSTEP - 1) {
#pragma unroll
            for (uint i = 0; i < R; i++)
                gcol[(size_t)step_pos(LOG_R, lg, u, S / R, i) * G] = v[i];
        } else {
#pragma unroll
            for (uint i = 0; i < R; i++)
                lcol[step_pos(LOG_R, lg, u, S / R, i) * C] = v[i];
        }
    }
#if LOG_S % LOG_R
    barrier(CLK_LOCAL_MEM_FENCE);
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++)
            v[i] = lcol[step_pos(LOG_S % LOG_R, 0, u, S / R, i) * C];
        fwd_step(v, LOG_S % LOG_R, 0, u, S / R, w, 0, false, S, q);
#pragma unroll
        for (uint i = 0; i < R; i++)
            gcol[(size_t)step_pos(LOG_S % LOG_R, 0, u, S / R, i) * G] = v[i];
    }
#endif
}

// The plain forward strided pass of work group `group`, in place: the transform's first
// launch (on entry [0, 4q), on exit [0, 4q)). `lid` and `active` as in fwd_block_steps.
ALWAYS_INLINE void fwd_strided_group(__global u64 *values, __global const u64 *root_powers,
                                     __global const u64 *params, uint coeff_modulus_size,
                                     __local u64 *lmem, uint group, uint lid, bool active)
{
    const uint residue = group / GROUPS_PER_STRIDED_RESIDUE;
    const uint prime = residue % coeff_modulus_size;
    const uint c = lid & (C - 1);
    const uint u = lid >> LOG_C;
    __global u64 *gcol =
        values + (size_t)residue * N + (group % GROUPS_PER_STRIDED_RESIDUE) * C + c;
    u64 v[R];
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++)
            v[i] = gcol[(size_t)step_pos(LOG_R, LOG_S - LOG_R, u, S / R, i) * G];
    }
    fwd_strided_steps(v, gcol, lmem + c, (__global const ulong2 *)root_powers + prime * N,
                      params[prime * PARAMS_STRIDE], u, active);
}

__kernel __attribute__((reqd_work_group_size(STRIDED_WG, 1, 1)))
void ntt_fwd_strided(__global u64 *restrict values, ulong values_at,
                     __global const u64 *restrict root_powers, ulong root_powers_at,
                     __global const u64 *restrict params, ulong params_at, uint coeff_modulus_size)
{
    __local u64 lmem[S * C];
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    fwd_strided_group(values, root_powers, params, coeff_modulus_size, lmem,
                      (uint)get_group_id(0), get_local_id(0), true);
}

// Inverse, gaps G .. N/2 (S-point sub-transforms of the classes mod G); the transform's
// last launch, whose last round folds in N^-1. Work item u of column c reads the column
// from gcol (word t at gcol[t G], in [0, 2q)) and leaves its R words of the last step in
// v (t = step_pos(LOG_R, LOG_S - LOG_R, u, S / R, i): where fwd_strided_steps starts), in
// [0, 2q). The column is staged in local memory at lcol[t C]. Without `active` the work
// item only passes the barriers (as in fwd_block_steps).
ALWAYS_INLINE void inv_strided_steps(u64 *v, __global const u64 *gcol, __local u64 *lcol,
                                     __global const ulong2 *w, __global const u64 *pr,
                                     uint u, bool active)
{
    // LOG_S % LOG_R rounds from gap 1 first, then steps of LOG_R; the first step reads
    // global memory, the others local memory.
#if LOG_S % LOG_R
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++)
            v[i] = gcol[(size_t)step_pos(LOG_S % LOG_R, 0, u, S / R, i) * G];
        inv_step(v, LOG_S % LOG_R, 0, u, S / R, w, S, 0, pr, false);
#pragma unroll
        for (uint i = 0; i < R; i++)
            lcol[step_pos(LOG_S % LOG_R, 0, u, S / R, i) * C] = v[i];
    }
#endif
    // Unrolled: see fwd_strided_steps.
#pragma unroll
    for (uint lg = LOG_S % LOG_R; lg < LOG_S; lg += LOG_R) {
        bool last = lg + LOG_R == LOG_S;
        if (lg != 0)
            barrier(CLK_LOCAL_MEM_FENCE);
        if (!active)
            continue;
        if (lg == 0) {
#pragma unroll
            for (uint i = 0; i < R; i++)
                v[i] = gcol[(size_t)step_pos(LOG_R, lg, u, S / R, i) * G];
        } else {
#pragma unroll
            for (uint i = 0; i < R; i++)
                v[i] = lcol[step_pos(LOG_R, lg, u, S / R, i) * C];
        }
        if (last) {
            inv_step(v, LOG_R, lg, u, S / R, w, S, 0, pr, true);
        } else {
            inv_step(v, LOG_R, lg, u, S / R, w, S, 0, pr, false);
#pragma unroll
            for (uint i = 0; i < R; i++)
                lcol[step_pos(LOG_R, lg, u, S / R, i) * C] = v[i];
        }
    }
}

// The plain inverse strided pass of work group `group`, in place: the transform's last
// launch; on exit values in [0, q), or [0, 2q) unless `reduce`. `lid` and `active` as in
// fwd_block_steps.
ALWAYS_INLINE void inv_strided_group(__global u64 *values, __global const u64 *inv_root_powers,
                                     __global const u64 *params, uint coeff_modulus_size,
                                     uint reduce, __local u64 *lmem, uint group, uint lid,
                                     bool active)
{
    const uint residue = group / GROUPS_PER_STRIDED_RESIDUE;
    const uint prime = residue % coeff_modulus_size;
    __global const u64 *pr = params + prime * PARAMS_STRIDE;
    const uint c = lid & (C - 1);
    const uint u = lid >> LOG_C;
    __global u64 *gcol =
        values + (size_t)residue * N + (group % GROUPS_PER_STRIDED_RESIDUE) * C + c;
    u64 v[R];
    inv_strided_steps(v, gcol, lmem + c, (__global const ulong2 *)inv_root_powers + prime * N,
                      pr, u, active);
    if (!active)
        return;
#pragma unroll
    for (uint i = 0; i < R; i++)
        gcol[(size_t)step_pos(LOG_R, LOG_S - LOG_R, u, S / R, i) * G] =
            reduce ? reduce_once(v[i], pr[0]) : v[i];
}

__kernel __attribute__((reqd_work_group_size(STRIDED_WG, 1, 1)))
void ntt_inv_strided(__global u64 *restrict values, ulong values_at,
                     __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                     __global const u64 *restrict params, ulong params_at, uint coeff_modulus_size,
                     uint reduce)
{
    __local u64 lmem[S * C];
    values += values_at;
    inv_root_powers += inv_root_powers_at;
    params += params_at;
    inv_strided_group(values, inv_root_powers, params, coeff_modulus_size, reduce, lmem,
                      (uint)get_group_id(0), get_local_id(0), true);
}

#endif // LOG_S != 0
#endif // LOG_S
