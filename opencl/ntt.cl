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
// residue j (prime j). Residue r = poly * L + j is handled by whole work groups; its prime
// is r % L.
//
// Tables: root_powers and inv_root_powers as L consecutive tables of N (operand, quotient)
// word pairs (SEAL's MultiplyUIntModOperand), read as ulong2: buffers are aligned far
// beyond 16 bytes and every pair starts at an even word. params: PARAMS_STRIDE words per
// prime: q, N^-1 (operand, quotient), and the last inverse root times N^-1 (operand,
// quotient), as SEAL's mul_root_scalar computes it.
//
// Build options: LOG_N for every kernel; the staged kernels also need LOG_S (rounds done
// by ntt_*_strided; 0 when the whole transform fits one work group), LOG_C (columns per
// strided work group) and LOG_B (blocks per block work group). See src/ntt/device.rs.

#define N (1u << LOG_N)
#define PARAMS_STRIDE 8

// The inverse transform's last butterfly (gap N/2) with N^-1 folded in: SEAL's scalar
// branch of transform_from_rev. x, y < 2q on entry and exit.
inline void butterfly_inverse_last_lazy(u64 *x, u64 *y, u64 inv_n, u64 inv_n_q, u64 sr,
                                        u64 sr_q, u64 q)
{
    u64 two_q = q << 1;
    u64 u = reduce_once(*x, two_q);
    u64 v = *y;
    *x = multiply_uint_mod_shoup_lazy(reduce_once(u + v, two_q), inv_n, inv_n_q, q);
    *y = multiply_uint_mod_shoup_lazy(u + two_q - v, sr, sr_q, q);
}

// ---------------------------------------------------------------------------------------
// Naive radix-2 baseline (seed 001 Listing 14): one launch per round, one work item per
// butterfly, global memory only. The host launches LOG_N rounds over (residues * N/2)
// work items; `reduce` (set in the last round only) applies SEAL's final reduction.

__kernel void ntt_fwd_naive(__global u64 *values, __global const u64 *root_powers,
                            __global const u64 *params, uint coeff_modulus_size,
                            uint reduce, uint log_gap)
{
    size_t gid = get_global_id(0);
    size_t residue = gid >> (LOG_N - 1);
    uint prime = (uint)(residue % coeff_modulus_size);
    uint i = (uint)gid & (N / 2 - 1);
    uint gap = 1u << log_gap;
    uint x = ((i >> log_gap) << (log_gap + 1)) | (i & (gap - 1));
    __global u64 *p = values + residue * N;
    u64 q = params[prime * PARAMS_STRIDE];
    __global const ulong2 *roots = (__global const ulong2 *)root_powers + prime * N;
    ulong2 w = roots[(N + x) >> (log_gap + 1)];
    u64 a = p[x];
    u64 b = p[x + gap];
    butterfly_forward_lazy(&a, &b, w.x, w.y, q);
    if (reduce) {
        a = reduce_once(reduce_once(a, q << 1), q);
        b = reduce_once(reduce_once(b, q << 1), q);
    }
    p[x] = a;
    p[x + gap] = b;
}

__kernel void ntt_inv_naive(__global u64 *values, __global const u64 *inv_root_powers,
                            __global const u64 *params, uint coeff_modulus_size,
                            uint reduce, uint log_gap)
{
    size_t gid = get_global_id(0);
    size_t residue = gid >> (LOG_N - 1);
    uint prime = (uint)(residue % coeff_modulus_size);
    uint i = (uint)gid & (N / 2 - 1);
    uint gap = 1u << log_gap;
    uint x = ((i >> log_gap) << (log_gap + 1)) | (i & (gap - 1));
    __global u64 *p = values + residue * N;
    __global const u64 *pr = params + prime * PARAMS_STRIDE;
    u64 q = pr[0];
    u64 a = p[x];
    u64 b = p[x + gap];
    if (log_gap == LOG_N - 1) {
        butterfly_inverse_last_lazy(&a, &b, pr[1], pr[2], pr[3], pr[4], q);
        if (reduce) {
            a = reduce_once(a, q);
            b = reduce_once(b, q);
        }
    } else {
        __global const ulong2 *roots = (__global const ulong2 *)inv_root_powers + prime * N;
        ulong2 w = roots[N - (N >> log_gap) + 1 + (x >> (log_gap + 1))];
        butterfly_inverse_lazy(&a, &b, w.x, w.y, q);
    }
    p[x] = a;
    p[x + gap] = b;
}

// ---------------------------------------------------------------------------------------
// Staged radix-8 NTT (seed 001 V-B5, Listing 17). Each work item holds 8 values in
// registers and runs up to 3 rounds on them between exchanges. A transform of N = S * G
// points takes two launches (one when LOG_S = 0):
//   strided: the S-point sub-transforms of the elements congruent mod G. In the forward
//     transform these are its first LOG_S rounds (gaps N/2 .. G, all multiples of G, never
//     mix classes mod G); in the inverse its last LOG_S rounds. A work group takes C
//     consecutive classes, so neighbouring work items touch neighbouring words.
//   block: the G-point sub-transforms of contiguous blocks of G words: the forward's last
//     LOG_G rounds (gaps G/2 .. 1), the inverse's first. B blocks per work group.
// Inside a launch a step of K <= 3 rounds runs in registers and steps exchange data through
// local memory. In element space t of a sub-transform (size SIZE), a step whose smallest
// gap is 2^lg works on radix-2^K sub-problems {t0 + j 2^lg : j < 2^K} with
// t0 mod 2^(lg+K) < 2^lg; work item u of SIZE/8 takes sub-problems number p * SIZE/8 + u,
// p < 8 / 2^K, in registers v[p 2^K + j].

#ifdef LOG_S

#define LOG_G (LOG_N - LOG_S)
#define G (1u << LOG_G)
#define S (1u << LOG_S)
#define C (1u << LOG_C)
#define B (1u << LOG_B)
// Block work groups pad local memory by one word in 8 so that the stride-8 accesses of the
// gap-1 step spread over the banks.
#define PAD(t) ((t) + ((t) >> 3))
#define PADDED_G (G + G / 8)
#define BLOCK_WG (B * G / 8)
#define STRIDED_WG (S * C / 8)
#define GROUPS_PER_BLOCK_RESIDUE (N / (B * G))
#define GROUPS_PER_STRIDED_RESIDUE (G / C)

#if LOG_G < 3 || (LOG_S != 0 && LOG_S < 3) || LOG_C > LOG_G || LOG_B > LOG_S
#error "unsupported staged NTT layout"
#endif

// Position in element space of register i (0..7) in a step of K rounds with smallest gap
// 2^lg, for work item u of `per` (SIZE / 8).
inline uint step_pos(uint K, uint lg, uint u, uint per, uint i)
{
    uint n = (i >> K) * per + u;
    uint t0 = ((n >> lg) << (lg + K)) | (n & ((1u << lg) - 1));
    return t0 + ((i & ((1u << K) - 1)) << lg);
}

// K forward rounds (gaps 2^(lg+K-1) .. 2^lg) on the 2^K values v[0 .. 2^K) of one
// sub-problem whose first element has global lower index x0 in forward-root terms, i.e.
// root_powers[(root_base) >> (lg + K - s)] starts round s, root_base = N + x0 (blocks) or
// S + t0 (strided, where the classes mod G share the roots of an S-point transform).
inline void fwd_radix(u64 *v, const uint K, uint lg, __global const ulong2 *w,
                      uint root_base, u64 q)
{
#pragma unroll
    for (uint s = 0; s < K; s++) {
        uint span = 1u << (K - 1 - s);
        uint r0 = root_base >> (lg + K - s);
#pragma unroll
        for (uint h = 0; h < (1u << s); h++) {
            ulong2 r = w[r0 + h];
#pragma unroll
            for (uint l = 0; l < span; l++) {
                uint a = h * 2 * span + l;
                butterfly_forward_lazy(&v[a], &v[a + span], r.x, r.y, q);
            }
        }
    }
}

// K inverse rounds (gaps 2^lg .. 2^(lg+K-1)) on v[0 .. 2^K). Round s (gap 2^(lg+s)) uses
// inv_root_powers[N + 1 - (size >> (lg + s)) + (x0 >> (lg + s + 1)) + h]: size = N and x0
// the global lower index for blocks; size = S and x0 = t0 for strided sub-transforms.
// With `last`, round K-1 is the transform's last round (gap N/2) and folds in N^-1.
inline void inv_radix(u64 *v, const uint K, uint lg, __global const ulong2 *w, uint size,
                      uint x0, __global const u64 *pr, const bool last)
{
    u64 q = pr[0];
#pragma unroll
    for (uint s = 0; s < K; s++) {
        uint span = 1u << s;
        if (last && s == K - 1) {
            u64 inv_n = pr[1], inv_n_q = pr[2], sr = pr[3], sr_q = pr[4];
#pragma unroll
            for (uint l = 0; l < span; l++)
                butterfly_inverse_last_lazy(&v[l], &v[l + span], inv_n, inv_n_q, sr, sr_q, q);
        } else {
            uint r0 = N + 1 - (size >> (lg + s)) + (x0 >> (lg + s + 1));
#pragma unroll
            for (uint h = 0; h < (1u << (K - 1 - s)); h++) {
                ulong2 r = w[r0 + h];
#pragma unroll
                for (uint l = 0; l < span; l++) {
                    uint a = h * 2 * span + l;
                    butterfly_inverse_lazy(&v[a], &v[a + span], r.x, r.y, q);
                }
            }
        }
    }
}

// One forward step of K rounds on the 8 registers: 8 / 2^K sub-problems.
#define FWD_STEP(K, lg, per, u, base_of_t0)                                             \
    _Pragma("unroll") for (uint p = 0; p < (8u >> (K)); p++)                           \
    {                                                                                 \
        uint t0 = step_pos((K), (lg), (u), (per), p << (K));                            \
        fwd_radix(v + (p << (K)), (K), (lg), w, (base_of_t0) + t0, q);                  \
    }

#define INV_STEP(K, lg, per, u, size, x_of_t0, last)                                   \
    _Pragma("unroll") for (uint p = 0; p < (8u >> (K)); p++)                           \
    {                                                                                 \
        uint t0 = step_pos((K), (lg), (u), (per), p << (K));                            \
        inv_radix(v + (p << (K)), (K), (lg), w, (size), (x_of_t0) + t0, pr, (last));    \
    }

// Forward, gaps G/2 .. 1 on blocks; the transform's last launch. On entry values in
// [0, 4q); on exit in [0, q), or [0, 4q) unless `reduce`. Writes leave through local
// memory so that neighbouring work items store neighbouring words.
__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_fwd_block(__global u64 *values, __global const u64 *root_powers,
                   __global const u64 *params, uint coeff_modulus_size, uint reduce)
{
    __local u64 lmem[B * PADDED_G];
    const uint lid = get_local_id(0);
    const size_t group = get_group_id(0);
    const size_t residue = group / GROUPS_PER_BLOCK_RESIDUE;
    const uint group_in_residue = (uint)(group % GROUPS_PER_BLOCK_RESIDUE);
    const uint prime = (uint)(residue % coeff_modulus_size);
    const u64 q = params[prime * PARAMS_STRIDE];
    __global const ulong2 *w = (__global const ulong2 *)root_powers + prime * N;
    const uint bl = lid >> (LOG_G - 3);
    const uint u = lid & (G / 8 - 1);
    const uint block = group_in_residue * B + bl;
    __global u64 *gblock = values + residue * N + block * G;
    __local u64 *lblock = lmem + bl * PADDED_G;
    const uint root_base = N + block * G;
    u64 v[8];

    // Step 0 (gaps G/2, G/4, G/8) straight from global memory: t = u + i G/8.
#pragma unroll
    for (uint i = 0; i < 8; i++)
        v[i] = gblock[u + i * (G / 8)];
    fwd_radix(v, 3, LOG_G - 3, w, root_base + u, q);
#pragma unroll
    for (uint i = 0; i < 8; i++)
        lblock[PAD(u + i * (G / 8))] = v[i];

    for (int lg = LOG_G - 6; lg >= LOG_G % 3; lg -= 3) {
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (uint i = 0; i < 8; i++)
            v[i] = lblock[PAD(step_pos(3, lg, u, G / 8, i))];
        FWD_STEP(3, lg, G / 8, u, root_base)
#pragma unroll
        for (uint i = 0; i < 8; i++)
            lblock[PAD(step_pos(3, lg, u, G / 8, i))] = v[i];
    }
#if LOG_G % 3
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint i = 0; i < 8; i++)
        v[i] = lblock[PAD(step_pos(LOG_G % 3, 0, u, G / 8, i))];
    FWD_STEP(LOG_G % 3, 0, G / 8, u, root_base)
#pragma unroll
    for (uint i = 0; i < 8; i++)
        lblock[PAD(step_pos(LOG_G % 3, 0, u, G / 8, i))] = v[i];
#endif
    barrier(CLK_LOCAL_MEM_FENCE);
    __global u64 *gout = values + residue * N + group_in_residue * (B * G);
    const u64 two_q = q << 1;
#pragma unroll
    for (uint i = 0; i < 8; i++) {
        uint e = lid + i * BLOCK_WG;
        u64 x = lmem[(e >> LOG_G) * PADDED_G + PAD(e & (G - 1))];
        if (reduce)
            x = reduce_once(reduce_once(x, two_q), q);
        gout[e] = x;
    }
}

// Inverse, gaps 1 .. G/2 on blocks; the transform's first launch (its only one when
// LOG_S = 0, then with the last round folding in N^-1 and `reduce` to [0, q)). On entry
// values in [0, 2q); on exit in [0, 2q). Reads enter through local memory.
__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_inv_block(__global u64 *values, __global const u64 *inv_root_powers,
                   __global const u64 *params, uint coeff_modulus_size, uint reduce)
{
    __local u64 lmem[B * PADDED_G];
    const uint lid = get_local_id(0);
    const size_t group = get_group_id(0);
    const size_t residue = group / GROUPS_PER_BLOCK_RESIDUE;
    const uint group_in_residue = (uint)(group % GROUPS_PER_BLOCK_RESIDUE);
    const uint prime = (uint)(residue % coeff_modulus_size);
    __global const u64 *pr = params + prime * PARAMS_STRIDE;
    const u64 q = pr[0];
    __global const ulong2 *w = (__global const ulong2 *)inv_root_powers + prime * N;
    const uint bl = lid >> (LOG_G - 3);
    const uint u = lid & (G / 8 - 1);
    const uint block = group_in_residue * B + bl;
    __local u64 *lblock = lmem + bl * PADDED_G;
    const uint x_base = block * G;
    u64 v[8];

    __global const u64 *gin = values + residue * N + group_in_residue * (B * G);
#pragma unroll
    for (uint i = 0; i < 8; i++) {
        uint e = lid + i * BLOCK_WG;
        lmem[(e >> LOG_G) * PADDED_G + PAD(e & (G - 1))] = gin[e];
    }
#if LOG_G % 3
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint i = 0; i < 8; i++)
        v[i] = lblock[PAD(step_pos(LOG_G % 3, 0, u, G / 8, i))];
    INV_STEP(LOG_G % 3, 0, G / 8, u, N, x_base, false)
#pragma unroll
    for (uint i = 0; i < 8; i++)
        lblock[PAD(step_pos(LOG_G % 3, 0, u, G / 8, i))] = v[i];
#endif
    for (uint lg = LOG_G % 3; lg + 3 < LOG_G; lg += 3) {
        barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
        for (uint i = 0; i < 8; i++)
            v[i] = lblock[PAD(step_pos(3, lg, u, G / 8, i))];
        INV_STEP(3, lg, G / 8, u, N, x_base, false)
#pragma unroll
        for (uint i = 0; i < 8; i++)
            lblock[PAD(step_pos(3, lg, u, G / 8, i))] = v[i];
    }
    // Last step (gaps G/8, G/4, G/2) straight to global memory: t = u + i G/8.
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint i = 0; i < 8; i++)
        v[i] = lblock[PAD(u + i * (G / 8))];
    inv_radix(v, 3, LOG_G - 3, w, N, x_base + u, pr, LOG_S == 0);
    __global u64 *gblock = values + residue * N + block * G;
#pragma unroll
    for (uint i = 0; i < 8; i++) {
        u64 x = v[i];
        if (LOG_S == 0 && reduce)
            x = reduce_once(x, q);
        gblock[u + i * (G / 8)] = x;
    }
}

#if LOG_S != 0

// Forward, gaps N/2 .. G (S-point sub-transforms of the classes mod G); the transform's
// first launch. On entry values in [0, 4q); on exit in [0, 4q). The class of column c is
// at residue word c + t G, staged in local memory at t C + c.
__kernel __attribute__((reqd_work_group_size(STRIDED_WG, 1, 1)))
void ntt_fwd_strided(__global u64 *values, __global const u64 *root_powers,
                     __global const u64 *params, uint coeff_modulus_size)
{
    __local u64 lmem[S * C];
    const uint lid = get_local_id(0);
    const size_t group = get_group_id(0);
    const size_t residue = group / GROUPS_PER_STRIDED_RESIDUE;
    const uint group_in_residue = (uint)(group % GROUPS_PER_STRIDED_RESIDUE);
    const uint prime = (uint)(residue % coeff_modulus_size);
    const u64 q = params[prime * PARAMS_STRIDE];
    __global const ulong2 *w = (__global const ulong2 *)root_powers + prime * N;
    const uint c = lid & (C - 1);
    const uint u = lid >> LOG_C;
    __global u64 *gcol = values + residue * N + group_in_residue * C + c;
    __local u64 *lcol = lmem + c;
    u64 v[8];

    // Steps of 3 rounds from gap S/2 down, then LOG_S % 3 rounds; the first step reads
    // global memory, the last writes it, the others go through local memory.
#define NSTEP3 (LOG_S / 3)
    for (uint st = 0; st < NSTEP3; st++) {
        uint lg = LOG_S - 3 - 3 * st;
        if (st == 0) {
#pragma unroll
            for (uint i = 0; i < 8; i++)
                v[i] = gcol[(size_t)step_pos(3, lg, u, S / 8, i) * G];
        } else {
            barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
            for (uint i = 0; i < 8; i++)
                v[i] = lcol[step_pos(3, lg, u, S / 8, i) * C];
        }
        FWD_STEP(3, lg, S / 8, u, S)
        if (st == NSTEP3 - 1 && LOG_S % 3 == 0) {
#pragma unroll
            for (uint i = 0; i < 8; i++)
                gcol[(size_t)step_pos(3, lg, u, S / 8, i) * G] = v[i];
        } else {
#pragma unroll
            for (uint i = 0; i < 8; i++)
                lcol[step_pos(3, lg, u, S / 8, i) * C] = v[i];
        }
    }
#if LOG_S % 3
    barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
    for (uint i = 0; i < 8; i++)
        v[i] = lcol[step_pos(LOG_S % 3, 0, u, S / 8, i) * C];
    FWD_STEP(LOG_S % 3, 0, S / 8, u, S)
#pragma unroll
    for (uint i = 0; i < 8; i++)
        gcol[(size_t)step_pos(LOG_S % 3, 0, u, S / 8, i) * G] = v[i];
#endif
}

// Inverse, gaps G .. N/2 (S-point sub-transforms of the classes mod G); the transform's
// last launch, whose last round folds in N^-1. On entry values in [0, 2q); on exit in
// [0, q), or [0, 2q) unless `reduce`.
__kernel __attribute__((reqd_work_group_size(STRIDED_WG, 1, 1)))
void ntt_inv_strided(__global u64 *values, __global const u64 *inv_root_powers,
                     __global const u64 *params, uint coeff_modulus_size, uint reduce)
{
    __local u64 lmem[S * C];
    const uint lid = get_local_id(0);
    const size_t group = get_group_id(0);
    const size_t residue = group / GROUPS_PER_STRIDED_RESIDUE;
    const uint group_in_residue = (uint)(group % GROUPS_PER_STRIDED_RESIDUE);
    const uint prime = (uint)(residue % coeff_modulus_size);
    __global const u64 *pr = params + prime * PARAMS_STRIDE;
    const u64 q = pr[0];
    __global const ulong2 *w = (__global const ulong2 *)inv_root_powers + prime * N;
    const uint c = lid & (C - 1);
    const uint u = lid >> LOG_C;
    __global u64 *gcol = values + residue * N + group_in_residue * C + c;
    __local u64 *lcol = lmem + c;
    u64 v[8];

    // LOG_S % 3 rounds from gap 1 first, then steps of 3; the first step reads global
    // memory, the last writes it, the others go through local memory.
#if LOG_S % 3
#pragma unroll
    for (uint i = 0; i < 8; i++)
        v[i] = gcol[(size_t)step_pos(LOG_S % 3, 0, u, S / 8, i) * G];
    INV_STEP(LOG_S % 3, 0, S / 8, u, S, 0, false)
#pragma unroll
    for (uint i = 0; i < 8; i++)
        lcol[step_pos(LOG_S % 3, 0, u, S / 8, i) * C] = v[i];
#endif
    for (uint lg = LOG_S % 3; lg < LOG_S; lg += 3) {
        bool first = lg == 0;
        bool last = lg + 3 == LOG_S;
        if (first) {
#pragma unroll
            for (uint i = 0; i < 8; i++)
                v[i] = gcol[(size_t)step_pos(3, lg, u, S / 8, i) * G];
        } else {
            barrier(CLK_LOCAL_MEM_FENCE);
#pragma unroll
            for (uint i = 0; i < 8; i++)
                v[i] = lcol[step_pos(3, lg, u, S / 8, i) * C];
        }
        if (last) {
            INV_STEP(3, lg, S / 8, u, S, 0, true)
#pragma unroll
            for (uint i = 0; i < 8; i++) {
                u64 x = v[i];
                if (reduce)
                    x = reduce_once(x, q);
                gcol[(size_t)step_pos(3, lg, u, S / 8, i) * G] = x;
            }
        } else {
            INV_STEP(3, lg, S / 8, u, S, 0, false)
#pragma unroll
            for (uint i = 0; i < 8; i++)
                lcol[step_pos(3, lg, u, S / 8, i) * C] = v[i];
        }
    }
}

#endif // LOG_S != 0
#endif // LOG_S
