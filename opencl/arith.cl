// Uses: nothing
// Modular arithmetic on 64-bit words for moduli q < 2^61 (SEAL's bound).
// Each helper mirrors the host reference of the same name in src/arith/mod.rs, word for
// word; tests/arith.rs runs the test_* kernels at the end of this file against them.
//
// A modulus travels as (q, r0, r1): q and floor(2^128 / q) as two words (SEAL's
// const_ratio[0..2]).

typedef ulong u64;
typedef uint u32;

inline u64 add_uint_mod(u64 a, u64 b, u64 q)
{
    u64 s = a + b;
    return s >= q ? s - q : s;
}

inline u64 sub_uint_mod(u64 a, u64 b, u64 q)
{
    return a >= b ? a - b : a - b + q;
}

inline u64 negate_uint_mod(u64 a, u64 q)
{
    return a == 0 ? 0 : q - a;
}

// Where word w of X^shift times the polynomials of a ciphertext comes from (rows of N =
// 2^log_n words from word 0, each a residue mod q; shift < N), in Z_q[X]/(X^N + 1):
// coefficient k = w mod N comes from coefficient k - shift of its row, negated (0 to 0)
// where k < shift (*wraps: it wrapped past X^N = -1). SEAL's negacyclic_shift_poly_coeffmod,
// read at its destination; shift 0 is word w itself.
inline size_t negacyclic_source(size_t w, uint shift, uint log_n, bool *wraps)
{
    const size_t n = (size_t)1 << log_n;
    *wraps = (uint)(w & (n - 1)) < shift;
    return *wraps ? w + n - shift : w - shift;
}

inline u64 reduce_once(u64 x, u64 bound)
{
    return x >= bound ? x - bound : x;
}

inline u64 barrett_reduce_64(u64 x, u64 q, u64 r1)
{
    u64 t = mul_hi(x, r1);
    return reduce_once(x - t * q, q);
}

// The high words of (hi:lo) * (r1:r0) that decide floor(x / q) up to one; SEAL's rounds.
inline u64 barrett_reduce_128(u64 lo, u64 hi, u64 q, u64 r0, u64 r1)
{
    u64 carry = mul_hi(lo, r0);
    u64 p_lo = lo * r1;
    u64 p_hi = mul_hi(lo, r1);
    u64 tmp1 = p_lo + carry;
    u64 tmp3 = p_hi + (tmp1 < carry);
    u64 s_lo = hi * r0;
    u64 s_hi = mul_hi(hi, r0);
    u64 sum = tmp1 + s_lo;
    carry = s_hi + (sum < s_lo);
    u64 quot = hi * r1 + tmp3 + carry;
    return reduce_once(lo - quot * q, q);
}

inline u64 multiply_uint_mod(u64 a, u64 b, u64 q, u64 r0, u64 r1)
{
    return barrett_reduce_128(a * b, mul_hi(a, b), q, r0, r1);
}

// x = (hi:lo) mod q for x < 2^(2m), m = q's bit count (2 <= m <= 61), with
// mu = floor(2^(2m+1) / q): Dhem-Quisquater's Barrett, one correction (src/arith's
// barrett_reduce_dq states why one suffices). c = x >> (m - 2) < 2^(m+2) fits a word,
// and so does quot = (c * mu) >> (m + 3); the shifts by 64 that OpenCL would take modulo
// 64 are written apart.
inline u64 barrett_reduce_dq(u64 lo, u64 hi, u64 q, u64 mu)
{
    uint m = 64 - (uint)clz(q);
    uint s = m - 2;
    u64 c = s == 0 ? lo : (hi << (64 - s)) | (lo >> s);
    u64 p_lo = c * mu;
    u64 p_hi = mul_hi(c, mu);
    uint t = m + 3;
    u64 quot = t == 64 ? p_hi : (p_hi << (64 - t)) | (p_lo >> t);
    return reduce_once(lo - quot * q, q);
}

inline u64 multiply_uint_mod_dq(u64 a, u64 b, u64 q, u64 mu)
{
    return barrett_reduce_dq(a * b, mul_hi(a, b), q, mu);
}

// x * w mod q in [0, 2q) with w's Shoup quotient wq = floor(w * 2^64 / q).
inline u64 multiply_uint_mod_shoup_lazy(u64 x, u64 w, u64 wq, u64 q)
{
    return w * x - mul_hi(x, wq) * q;
}

inline u64 multiply_uint_mod_shoup(u64 x, u64 w, u64 wq, u64 q)
{
    return reduce_once(multiply_uint_mod_shoup_lazy(x, w, wq, q), q);
}

// a * b + c mod q with a single reduction of the 128-bit sum (Zhai et al.,
// "Accelerating Encrypted Computing on Intel GPUs", V-A1).
inline u64 mad_uint_mod(u64 a, u64 b, u64 c, u64 q, u64 r0, u64 r1)
{
    u64 lo = a * b;
    u64 hi = mul_hi(a, b);
    lo += c;
    hi += (lo < c);
    return barrett_reduce_128(lo, hi, q, r0, r1);
}

// (hi:lo) += a * b, exact in 128 bits (the caller bounds the number of terms).
inline void mul_acc_128(u64 *lo, u64 *hi, u64 a, u64 b)
{
    u64 p_lo = a * b;
    u64 p_hi = mul_hi(a, b);
    *lo += p_lo;
    *hi += p_hi + (*lo < p_lo);
}

// SEAL's reverse_bits<uint32_t>(x, bits): the low `bits` bits of x reversed.
inline uint reverse_bits_u32(uint x, uint bits)
{
    x = ((x >> 1) & 0x55555555u) | ((x & 0x55555555u) << 1);
    x = ((x >> 2) & 0x33333333u) | ((x & 0x33333333u) << 2);
    x = ((x >> 4) & 0x0F0F0F0Fu) | ((x & 0x0F0F0F0Fu) << 4);
    x = ((x >> 8) & 0x00FF00FFu) | ((x & 0x00FF00FFu) << 8);
    x = (x >> 16) | (x << 16);
    return bits == 0 ? 0u : x >> (32u - bits);
}

// Entry i of SEAL's GaloisTool::generate_table_ntt for N = 2^log_n and an odd galois_elt
// < 2N: the word of a residue in NTT form that apply_galois_ntt moves to word i. Its host
// reference is src/ckks/host.rs's galois_table_ntt, tested through the kernels that use it
// (ckks.cl's ckks_galois_ntt, ntt.cl's ntt_inv_block_galois).
inline uint galois_ntt_index(uint i, uint galois_elt, uint log_n)
{
    uint mask = (1u << log_n) - 1;
    uint reversed = reverse_bits_u32(i + (1u << log_n), log_n + 1);
    uint index_raw = (uint)((((u64)galois_elt * (u64)reversed) >> 1) & mask);
    return reverse_bits_u32(index_raw, log_n);
}

// The mod-down of rescaling and key switching (SEAL's divide_and_round_q_last_ntt_inplace,
// switch_key_inplace), per word; src/ckks/host.rs holds their references of the same
// names, tested through the kernels that use them (ckks.cl's ckks_moddown_prep and
// ckks_divide_round_finish, ntt.cl's *_moddown passes).
//
// q_i - (q_last >> 1) mod q_i: SEAL's neg_half_mod.
inline u64 moddown_fix(u64 q_last, u64 q, u64 r1)
{
    return q - barrett_reduce_64(q_last >> 1, q, r1);
}

// x (< 2 q_last, an inverse NTT's output) rounded, r = (x + (q_last >> 1)) mod q_last
// (SEAL's "add (q - 1) / 2 to change from flooring to rounding"), then brought under q:
// (q < q_last ? r mod q : r) + fix, in [0, 2q). x + q_last / 2 < 2^62: no wrap.
inline u64 moddown_round(u64 x, u64 q_last, u64 r1_last, u64 q, u64 r1, u64 fix)
{
    u64 r = barrett_reduce_64(x + (q_last >> 1), q_last, r1_last);
    return (q < q_last ? barrett_reduce_64(r, q, r1) : r) + fix;
}

// (x + 4q - t) * inv mod q, inv = q_last^-1 mod q with its Shoup quotient: x < q, t < 4q
// (a lazy forward NTT's output), so the sum lies in (0, 5q) < 2^64.
inline u64 moddown_finish(u64 x, u64 t, u64 inv, u64 inv_q, u64 q)
{
    return multiply_uint_mod_shoup(x + (q << 2) - t, inv, inv_q, q);
}

// BGV's mod-down by a dropped prime q_last (SEAL's mod_t_and_divide_q_last_ntt_inplace and
// the BGV branch of switch_key_inplace): with c the dropped residue in coefficient form,
// canonical, and t the plain modulus, it subtracts delta = c + q_last * kt, kt = (-c mod t)
// * q_last^-1 mod t, in place of CKKS's rounding: c_i - delta_i is divisible by q_last, and
// delta is 0 mod t, so the message survives mod t (scaled by q_last^-1 mod t, SEAL's
// correction factor). There is no half-offset: SEAL's BGV branch floors nothing. Their
// host reference is src/integer/host.rs's integer_mod_t_prep, tested through the kernels
// that use them (integer.cl's integer_mod_t_prep, the chained key switch's
// LOAD_MODDOWN_BGV).
//
// kt, for t < 2^61 with floor(2^128 / t) = (t_r0, t_r1) and inv_t = q_last^-1 mod t.
inline u64 bgv_kt(u64 c, u64 t, u64 t_r0, u64 t_r1, u64 inv_t)
{
    return multiply_uint_mod(negate_uint_mod(barrett_reduce_64(c, t, t_r1), t), inv_t, t, t_r0,
                             t_r1);
}

// delta mod q = (kt mod q) * (q_last mod q) + (c mod q) mod q, canonical; r0, r1 q's
// Barrett ratio.
inline u64 bgv_delta(u64 c, u64 kt, u64 q_last_mod_q, u64 q, u64 r0, u64 r1)
{
    u64 delta = multiply_uint_mod(barrett_reduce_64(kt, q, r1), q_last_mod_q, q, r0, r1);
    return add_uint_mod(delta, barrett_reduce_64(c, q, r1), q);
}

// Harvey forward butterfly: x, y < 4q on entry and exit.
inline void butterfly_forward_lazy(u64 *x, u64 *y, u64 w, u64 wq, u64 q)
{
    u64 two_q = q << 1;
    u64 u = reduce_once(*x, two_q);
    u64 v = multiply_uint_mod_shoup_lazy(*y, w, wq, q);
    *x = u + v;
    *y = u + two_q - v;
}

// Harvey inverse butterfly: x, y < 2q on entry and exit.
inline void butterfly_inverse_lazy(u64 *x, u64 *y, u64 w, u64 wq, u64 q)
{
    u64 two_q = q << 1;
    u64 u = *x;
    u64 v = *y;
    *x = reduce_once(u + v, two_q);
    *y = multiply_uint_mod_shoup_lazy(u + two_q - v, w, wq, q);
}
