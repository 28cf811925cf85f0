// Uses: ntt.cl
// The mod-down's forward block pass with its element-wise steps on the loads and stores
// (load_op and store_op of ntt.cl, which this file is built after, with inv_fwd.cl).

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
// in fwd_block_transform.
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
    const u64 q = params[prime * PARAMS_STRIDE];
    store_op st;
    st.finish = 1;
    st.reduce = 0;
    st.add = poly < acc_polys;
    st.src = src + ((size_t)poly * src_stride + prime) * N;
    st.acc = acc + ((size_t)poly * dst_stride + prime) * N;
    st.inv = inv[2 * prime];
    st.inv_q = inv[2 * prime + 1];
#if LOG_S == 0
    __global const u64 *in = last + (size_t)poly * N;
    load_op ld = prime_load(LOAD_MODDOWN, params, last_prime, prime);
#else
    __global const u64 *in = values + (size_t)residue * N;
    load_op ld = plain_load();
#endif
    fwd_block_pass(in, dst + ((size_t)poly * dst_stride + prime) * N, lmem,
                   (__global const ulong2 *)root_powers + prime * N, q,
                   group % GROUPS_PER_BLOCK_RESIDUE, ld, st, lid, active);
}

__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_fwd_block_moddown(__global u64 *restrict values, ulong values_at,
                           __global const u64 *restrict root_powers, ulong root_powers_at,
                           __global const u64 *restrict params, ulong params_at,
                           uint coeff_modulus_size,
                           __global const u64 *restrict last, ulong last_at, uint last_prime,
                           __global u64 *dst, ulong dst_at, uint dst_stride,
                           __global const u64 *src, ulong src_at, uint src_stride,
                           __global const u64 *restrict inv, ulong inv_at,
                           __global const u64 *acc, ulong acc_at, uint acc_polys)
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
    moddown_block_group(values, root_powers, params, coeff_modulus_size, last, last_prime, dst,
                        dst_stride, src, src_stride, inv, acc, acc_polys, lmem,
                        (uint)get_group_id(0), get_local_id(0), true);
}
