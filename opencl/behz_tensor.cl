// Uses: arith.cl, ntt.cl
// BFV multiplication's tensor product (SEAL's bfv_multiply, step (4)) fused with the first
// pass of the inverse transform after it (step (5)): the staged inverse block pass of
// ntt.cl, which this file is built after, loading its words as the sums of products.
//
// ntt_inv_block_tensor: residue r = t * W + j of values (W = coeff_modulus_size residues
// per polynomial, polynomials t < s1 + s2 - 1; launched over all of them) gets the inverse
// block pass of
//   sum_{i + l = t} a[i][j] * b[l][j] mod q_j   (a: s1, b: s2 polynomials of W residues,
//                                                canonical, in NTT form)
// the sum accumulated exactly in 128 bits (at most 64 products below 2^122: the launcher
// checks s1, s2 <= 64) and reduced once by Barrett, so it is canonical, as ckks_tensor's
// (ckks.cl) and SEAL's dyadic products and sums are. With a one-pass layout the output is
// the whole inverse (lazy: [0, 2q) unless `reduce`); with two, ntt_inv_strided finishes
// it. a and b may be one buffer (squaring); values is neither.

// The tensor-loading inverse block pass of work group `group` (`lid` and `active` as in
// ntt.cl's fwd_block_steps: an inactive group loads nothing and passes the barriers): the
// pass of ntt_inv_block_tensor below, and chain.cl's behz_tensor_inv_chained's first pass.
ALWAYS_INLINE void inv_block_tensor_group(__global u64 *values,
                                          __global const u64 *inv_root_powers,
                                          __global const u64 *params, uint coeff_modulus_size,
                                          uint reduce, __local u64 *lmem,
                                          __global const u64 *a, uint s1,
                                          __global const u64 *b, uint s2, uint group,
                                          uint lid, bool active)
{
    const uint residue = group / GROUPS_PER_BLOCK_RESIDUE;
    const uint group_in_residue = group % GROUPS_PER_BLOCK_RESIDUE;
    const uint t = residue / coeff_modulus_size;
    const uint prime = residue % coeff_modulus_size;
    __global const u64 *pr = params + prime * PARAMS_STRIDE;
    if (active) {
        const u64 q = pr[0], r1 = pr[5], r0 = pr[6];
        const size_t poly = (size_t)coeff_modulus_size * N;
        const size_t first = (size_t)prime * N + group_in_residue * (B * G);
        const uint i_lo = t >= s2 ? t - s2 + 1 : 0;
        const uint i_hi = t < s1 - 1 ? t : s1 - 1;
#pragma unroll
        for (uint k = 0; k < R; k++) {
            uint e = lid + k * BLOCK_WG;
            u64 lo = 0, hi = 0;
            for (uint i = i_lo; i <= i_hi; i++) {
                mul_acc_128(&lo, &hi, a[i * poly + first + e], b[(t - i) * poly + first + e]);
            }
            lmem[block_slot(e)] = barrett_reduce_128(lo, hi, q, r0, r1);
        }
    }
    inv_block_transform(lmem, values + (size_t)residue * N,
                        (__global const ulong2 *)inv_root_powers + prime * N, pr,
                        group_in_residue, reduce, lid, active);
}

__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_inv_block_tensor(__global u64 *restrict values, ulong values_at,
                          __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                          __global const u64 *restrict params, ulong params_at,
                          uint coeff_modulus_size, uint reduce,
                          __global const u64 *a, ulong a_at, uint s1,
                          __global const u64 *b, ulong b_at, uint s2)
{
    __local u64 lmem[B * PADDED_G];
    values += values_at;
    inv_root_powers += inv_root_powers_at;
    params += params_at;
    a += a_at;
    b += b_at;
    inv_block_tensor_group(values, inv_root_powers, params, coeff_modulus_size, reduce, lmem,
                           a, s1, b, s2, (uint)get_group_id(0), get_local_id(0), true);
}
