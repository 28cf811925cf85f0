// Uses: arith.cl, ntt.cl
// A rotation's first launch: SEAL's apply_galois_ntt fused with the first pass of an
// inverse transform (the staged block pass of ntt.cl, which this file is built after).

// SEAL's apply_galois_ntt fused with the first pass of key switching's inverse transform:
// a rotation's first launch, in place of ckks_galois_ntt and ntt_inv_block_gather. Every
// residue r of src (count polynomials of coeff_modulus_size residues; launched over all
// of them) is permuted into permuted, permuted[r][i] = src[r][galois_ntt_index(i)]
// (arith.cl; galois_elt odd, < 2N); residues from transformed_first on (the last
// polynomial) also go through the inverse's first pass into values, residue
// r - transformed_first, as ntt_inv_block_gather leaves them. The others only pass the
// transform's barriers. src is neither values nor permuted.
// Work group `group` of the launch over lmem (B * PADDED_G words); `lid` and `active` as
// in fwd_block_transform.
ALWAYS_INLINE void inv_block_galois_group(__global u64 *values,
                                          __global const u64 *inv_root_powers,
                                          __global const u64 *params, uint coeff_modulus_size,
                                          uint reduce, __global const u64 *src,
                                          uint galois_elt, __global u64 *permuted,
                                          uint transformed_first, __local u64 *lmem,
                                          uint group, uint lid, bool active)
{
    const uint residue = group / GROUPS_PER_BLOCK_RESIDUE;
    const uint group_in_residue = group % GROUPS_PER_BLOCK_RESIDUE;
    const uint prime = residue % coeff_modulus_size;
    const uint first = group_in_residue * (B * G);
    __global const u64 *in = src + (size_t)residue * N;
    __global u64 *out = permuted + (size_t)residue * N + first;
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++) {
            uint e = lid + i * BLOCK_WG;
            u64 x = in[galois_ntt_index(first + e, galois_elt, LOG_N)];
            out[e] = x;
            lmem[block_slot(e)] = x;
        }
    }
    const bool transform = active && residue >= transformed_first;
    inv_block_transform(lmem, values + (size_t)(transform ? residue - transformed_first : 0) * N,
                        (__global const ulong2 *)inv_root_powers + prime * N,
                        params + prime * PARAMS_STRIDE, group_in_residue, reduce, lid,
                        transform);
}

__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_inv_block_galois(__global u64 *restrict values, ulong values_at,
                          __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                          __global const u64 *restrict params, ulong params_at,
                          uint coeff_modulus_size, uint reduce,
                          __global const u64 *restrict src, ulong src_at, uint galois_elt,
                          __global u64 *restrict permuted, ulong permuted_at,
                          uint transformed_first)
{
    __local u64 lmem[B * PADDED_G];
    values += values_at;
    inv_root_powers += inv_root_powers_at;
    params += params_at;
    src += src_at;
    permuted += permuted_at;
    inv_block_galois_group(values, inv_root_powers, params, coeff_modulus_size, reduce, src,
                           galois_elt, permuted, transformed_first, lmem,
                           (uint)get_group_id(0), get_local_id(0), true);
}
