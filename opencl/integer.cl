// Uses: arith.cl
// Element-wise kernels of SEAL's integer schemes (BFV, BGV) that CKKS has no counterpart
// for: the galois permutation in coefficient form and the plain modulus' correction of
// BGV's divisions by a dropped prime. Built after arith.cl with -D LOG_N=<log2 N>. Each
// kernel mirrors the host reference of the same name in src/integer/host.rs word for
// word; tests/integer_kernels.rs checks that.
//
// Layout and launch as ckks.cl's: word (r * N + k) is coefficient k of residue r, residue
// r = p * K + j of a polynomial array is polynomial p mod prime j; a moduli table
// (src/ckks/kernels.rs's ModuliTable) holds INT_MODULI_STRIDE words per prime: q, then
// floor(2^128 / q) as (r0, r1), then a ratio these kernels do not use. Dimension 0 of the
// range runs over the words of one row (one polynomial's residues), dimension 1 over the
// rows. The launchers (src/integer/kernels.rs) check every buffer length against the
// range, so the kernels do not bound-check.

#ifndef LOG_N
#error "integer.cl needs -D LOG_N=<log2 of the polynomial degree>"
#endif

// Named apart from ckks.cl's and ntt.cl's, which a program may hold beside this file.
#define INT_N ((size_t)1 << LOG_N)
#define INT_MASK (INT_N - 1)
#define INT_MODULI_STRIDE 4

// SEAL's GaloisTool::apply_galois (coefficient form) on every residue: X^i -> X^(i * elt)
// in Z_q[X] / (X^N + 1). Coefficient i of src goes to index (i * elt) mod N of dst,
// negated mod q where (i * elt) mod 2N >= N (X^N = -1); SEAL negates 0 to 0. galois_elt
// is odd and < 2N, so i -> i * elt mod N is a bijection and every word of dst is written
// once. dst must not alias src (the writes scatter). Range (K * N, polys).
__kernel void integer_apply_galois(__global u64 *dst, ulong dst_at,
                                   __global const u64 *src, ulong src_at,
                                   __global const u64 *moduli, ulong moduli_at,
                                   uint galois_elt, uint K)
{
    dst += dst_at;
    src += src_at;
    moduli += moduli_at;
    size_t w = get_global_id(0);
    size_t row = get_global_id(1) * ((size_t)K << LOG_N);
    size_t j = w >> LOG_N;
    // i < 2^17 and elt < 2^18: the product fits 64 bits.
    ulong raw = (ulong)(w & INT_MASK) * galois_elt;
    u64 v = src[row + w];
    if ((raw >> LOG_N) & 1)
    {
        v = negate_uint_mod(v, moduli[j * INT_MODULI_STRIDE]);
    }
    dst[row + (j << LOG_N) + (raw & INT_MASK)] = v;
}

// What BGV's divisions by a dropped prime q_last subtract: SEAL's
// RNSTool::mod_t_and_divide_q_last_ntt_inplace (mod_switch_to_next, q_last the level's
// last prime) and the BGV branch of switch_key_inplace's mod-down (q_last the special
// prime) both compute, per coefficient, with c = the dropped residue in coefficient form
// (canonical) and t the plain modulus,
//   kt = (-c mod t) * q_last^-1 mod t,
//   delta_i = (c + q_last * kt) mod q_i
// (arith.cl's bgv_kt and bgv_delta, which the chained key switch's loads share), so that
// c_i - delta_i is divisible by q_last and ((c_i - delta_i) / q_last) keeps the
// message mod t (scaled by q_last^-1 mod t, the correction factor SEAL tracks).
// On entry last[p][k] (p < polys) holds c mod q_last = moduli[last_q_index] as an inverse
// NTT leaves it: lazy (< 2 q_last) or canonical; t < 2^61 with its (r0, r1); inv_t =
// q_last^-1 mod t. On exit dst[p][i][k] (i < K_out) = delta_i, canonical, in coefficient
// form; last is unchanged. Range (K_out * N, polys).
__kernel void integer_mod_t_prep(__global u64 *dst, ulong dst_at,
                                 __global const u64 *last, ulong last_at,
                                 __global const u64 *moduli, ulong moduli_at,
                                 uint last_q_index, uint K_out, ulong t, ulong t_r0, ulong t_r1,
                                 ulong inv_t)
{
    dst += dst_at;
    last += last_at;
    moduli += moduli_at;
    size_t gid = get_global_id(1) * ((size_t)K_out << LOG_N) + get_global_id(0);
    size_t k = get_global_id(0) & INT_MASK;
    size_t p = get_global_id(1);
    size_t i = get_global_id(0) >> LOG_N;
    u64 q_last = moduli[(size_t)last_q_index * INT_MODULI_STRIDE];
    u64 q = moduli[i * INT_MODULI_STRIDE];
    u64 r0 = moduli[i * INT_MODULI_STRIDE + 1];
    u64 r1 = moduli[i * INT_MODULI_STRIDE + 2];
    u64 c = reduce_once(last[(p << LOG_N) + k], q_last);
    dst[gid] = bgv_delta(c, bgv_kt(c, t, t_r0, t_r1, inv_t), barrett_reduce_64(q_last, q, r1), q,
                         r0, r1);
}

// SEAL's modulus switch of a ciphertext in coefficient form in one launch: BFV's
// divide_and_round_q_last_inplace (bgv 0) and SEAL 4.0 BGV's mod_t_and_divide_q_last_inplace
// (bgv 1, t < 2^61 with its (t_r0, t_r1), inv_t = q_last^-1 mod t). With q_last =
// moduli[K_out] and c the dropped residue of polynomial p (src's residue p (K_out + 1) +
// K_out, canonical),
//   dst[p K_out + i][k] = (src[p (K_out + 1) + i][k] - sub_i) * q_last^-1 mod q_i,
// sub_i BFV's rounded c under q_i (moddown_round: (c + q_last / 2) mod q_last, reduced
// under q_i, plus the fix for the half, in [0, 2 q_i)) or BGV's delta_i (integer_mod_t_prep's);
// inv holds K_out Shoup pairs of q_last^-1 mod q_i. The words of ckks_gather_residue,
// ckks_moddown_prep (or integer_mod_t_prep) and ckks_divide_round_finish in turn, each step
// exact mod q_i and the result canonical. dst is not src. Range (K_out * N, polys).
__kernel void integer_divide_round_coeff(__global u64 *dst, ulong dst_at,
                                         __global const u64 *src, ulong src_at,
                                         __global const u64 *inv, ulong inv_at,
                                         __global const u64 *moduli, ulong moduli_at,
                                         uint K_out, uint bgv, ulong t, ulong t_r0, ulong t_r1,
                                         ulong inv_t)
{
    dst += dst_at;
    src += src_at;
    inv += inv_at;
    moduli += moduli_at;
    size_t k = get_global_id(0) & INT_MASK;
    size_t p = get_global_id(1);
    size_t i = get_global_id(0) >> LOG_N;
    u64 q_last = moduli[(size_t)K_out * INT_MODULI_STRIDE];
    u64 r1_last = moduli[(size_t)K_out * INT_MODULI_STRIDE + 2];
    u64 q = moduli[i * INT_MODULI_STRIDE];
    u64 r0 = moduli[i * INT_MODULI_STRIDE + 1];
    u64 r1 = moduli[i * INT_MODULI_STRIDE + 2];
    size_t first = p * (K_out + 1);
    u64 c = src[((first + K_out) << LOG_N) + k];
    u64 sub = bgv ? bgv_delta(c, bgv_kt(c, t, t_r0, t_r1, inv_t), barrett_reduce_64(q_last, q, r1),
                              q, r0, r1)
                  : moddown_round(c, q_last, r1_last, q, r1, moddown_fix(q_last, q, r1));
    dst[((p * K_out + i) << LOG_N) + k] =
        moddown_finish(src[((first + i) << LOG_N) + k], sub, inv[2 * i], inv[2 * i + 1], q);
}
