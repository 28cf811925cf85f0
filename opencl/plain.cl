// Uses: arith.cl, ckks.cl
// The plaintexts of SEAL's integer schemes (BFV, BGV) into RNS: a plaintext is N (or fewer)
// coefficients m_k < t, the plain modulus; coefficients past `plain_count` are zero. Built
// after ckks.cl, in its program (LOG_N, the moduli table, one item per output word over K N
// words). Each kernel mirrors the host reference of the same name in src/integer/host.rs.

// floor((hi:lo) / d) for d < 2^62 and a quotient below 2^64, by long division: the running
// remainder stays below 2d < 2^63, so its shift never overflows.
inline u64 divide_u128_u64(u64 lo, u64 hi, u64 d)
{
    u64 rem = 0;
    u64 quot = 0;
    for (int bit = 127; bit >= 0; bit--)
    {
        const u64 next = bit >= 64 ? (hi >> (bit - 64)) & 1 : (lo >> bit) & 1;
        rem = (rem << 1) | next;
        quot <<= 1;
        if (rem >= d)
        {
            rem -= d;
            quot |= 1;
        }
    }
    return quot;
}

// dst (K residues of one polynomial) = the plaintext times `scalar` mod t (t's Barrett ratio
// t_r0, t_r1; BGV's correction factor, else 1) lifted to Z_q: residue j of coefficient k is
// m_k mod q_j, or (m_k - t) mod q_j when m_k >= threshold = (t + 1) / 2 (SEAL's plain lift in
// multiply_plain_normal and transform_to_ntt_inplace: an upper-half coefficient stands for
// m_k - t; its fast lift adds q_j - t, the general one decomposes m_k + q - t: the same residue).
__kernel void plain_lift(__global u64 *dst, ulong dst_at, __global const u64 *plain,
                         ulong plain_at, uint plain_count, __global const u64 *moduli,
                         ulong moduli_at, u64 t, u64 t_r0, u64 t_r1, u64 scalar, u64 threshold)
{
    dst += dst_at;
    plain += plain_at;
    moduli += moduli_at;
    const size_t w = get_global_id(0);
    const size_t k = w & CKKS_MASK;
    LOAD_MODULUS(moduli, w >> LOG_N, q, r0, r1);
    const u64 m = k < plain_count ? multiply_uint_mod(plain[k], scalar, t, t_r0, t_r1) : 0;
    u64 r = barrett_reduce_64(m, q, r1);
    if (m >= threshold)
    {
        r = sub_uint_mod(r, barrett_reduce_64(t, q, r1), q);
    }
    dst[w] = r;
}

// dst = src +- round(q m / t) on the first polynomial's K residues (SEAL's
// multiply_add_plain_with_scaling_variant, multiply_sub_plain_with_scaling_variant): with
// fix_k = floor((m_k (q mod t) + threshold) / t), the scaled coefficient mod q_j is
// m_k delta_j + fix_k, delta_j = floor(q / t) mod q_j. Coefficients past plain_count add
// nothing. dst may be src.
__kernel void plain_scale_add(__global u64 *dst, ulong dst_at, __global const u64 *src,
                              ulong src_at, __global const u64 *plain, ulong plain_at,
                              uint plain_count, __global const u64 *moduli, ulong moduli_at,
                              __global const u64 *delta, ulong delta_at, u64 t, u64 q_mod_t,
                              u64 threshold, uint subtract)
{
    dst += dst_at;
    src += src_at;
    plain += plain_at;
    moduli += moduli_at;
    delta += delta_at;
    const size_t w = get_global_id(0);
    const size_t k = w & CKKS_MASK;
    const uint j = w >> LOG_N;
    const u64 c = src[w];
    if (k >= plain_count)
    {
        dst[w] = c;
        return;
    }
    LOAD_MODULUS(moduli, j, q, r0, r1);
    const u64 m = plain[k];
    u64 lo = m * q_mod_t;
    u64 hi = mul_hi(m, q_mod_t);
    lo += threshold;
    hi += lo < threshold;
    const u64 fix = divide_u128_u64(lo, hi, t);
    const u64 scaled = mad_uint_mod(m, delta[j], fix, q, r0, r1);
    dst[w] = subtract ? sub_uint_mod(c, scaled, q) : add_uint_mod(c, scaled, q);
}
