// Uses: arith.cl, ntt.cl
// Key switching's forward block pass with the decomposition on its loads and the inner
// product with the key in its registers, built after ntt.cl and inv_fwd.cl with KS_ROWS
// (rows per work group) and KS_LOCAL_ROOTS (the rows' roots staged in local memory).

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
// reduce_every terms (see ckks_ks_inner_product). On exit prod[c K + I] = s(c, I),
// canonical, for I < K, and last[c] = s(c, K) after the inverse transform's first pass
// under the special prime (inv_root_powers' prime K), in [0, 2q): the mod-down's first
// step. prod and last alias no input.
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
                                  uint target_first, __global const u64 *key,
                                  uint key_stride_primes, uint key_special_index,
                                  uint reduce_every, __global u64 *prod, __global u64 *last,
                                  __global const u64 *inv_root_powers, __local u64 *lmem,
                                  __local ulong2 *lroots_all, uint group, uint item,
                                  bool active)
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
        const bool transform = live && J != P;
#if LOG_S == 0
        fwd_block_transform(t_target + (size_t)J * N, lrow, w, lroots, local_roots, q,
                            group_in_residue,
                            prime_load(LOAD_DECOMPOSE, params, J, P), lid, transform);
#else
        fwd_block_transform(values + ((size_t)J * coeff_modulus_size + P) * N, lrow, w,
                            lroots, local_roots, q,
                            group_in_residue, plain_load(), lid, transform);
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
    // The outputs of rows below K go to prod. The special prime's row starts the
    // mod-down: its two residues leave after the inverse transform's first pass (the
    // whole inverse, lazy, with LOG_S = 0), so that the mod-down needs no launch of its
    // own for it; c = 0 waits in lrow and c = 1 in last (where its transform's output
    // goes), so that no accumulator stays live through the transforms: registers held
    // there would lower the whole kernel's occupancy.
    const bool special = live && I == K;
    if (live) {
#pragma unroll
        for (uint i = 0; i < R; i++) {
            uint e = first + lid + i * BLOCK_WG;
            u64 y0 = barrett_reduce_128(lo0[i], hi0[i], q, r0, r1);
            u64 y1 = barrett_reduce_128(lo1[i], hi1[i], q, r0, r1);
            if (special) {
                lrow[block_slot(lid + i * BLOCK_WG)] = y0;
                last[N + e] = y1;
            } else {
                prod[(size_t)I * N + e] = y0;
                prod[(size_t)(K + I) * N + e] = y1;
            }
        }
    }
    // Every row of every group passes the transforms' barriers: with them inside a branch
    // on the group (whether it holds the special row), PoCL 3.1's build gave wrong words
    // wherever the group held an idle row (rows past the last prime), taken branch or not.
    __global const ulong2 *iw = (__global const ulong2 *)inv_root_powers + K * N;
    inv_block_transform(lrow, last, iw, pr, group_in_residue, 0, lid, special);
    // The transform's last reads of lrow are done before the next writes.
    barrier(CLK_LOCAL_MEM_FENCE);
    if (special) {
#pragma unroll
        for (uint i = 0; i < R; i++)
            lrow[block_slot(lid + i * BLOCK_WG)] = last[N + first + lid + i * BLOCK_WG];
    }
    // Every work item has read its words of last + N before the transform overwrites them.
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    inv_block_transform(lrow, last + N, iw, pr, group_in_residue, 0, lid, special);
}

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
                      __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at)
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
    ks_block_group(values, root_powers, params, coeff_modulus_size, t_target, target,
                   target_first, key, key_stride_primes, key_special_index, reduce_every, prod,
                   last, inv_root_powers, lmem, lroots_all, (uint)get_group_id(0),
                   get_local_id(0), true);
}

