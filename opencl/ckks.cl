// Uses: arith.cl
// Elementwise CKKS kernels: the steps SEAL's Evaluator runs on RNS polynomials (add,
// sub, negate, multiply_plain, many adds and subs into one accumulator (ckks_sum), the
// tensor product of ckks_multiply, the galois
// permutation in NTT form, and the pieces of rescaling and key switching). Built after
// arith.cl with -D LOG_N=<log2 N>. Each kernel mirrors the host reference of the same
// name in src/ckks/host.rs word for word; tests/ckks_kernels.rs checks that.
//
// Layout (SEAL's): word (r * N + k) is coefficient k of residue polynomial r; in a
// polynomial array with K residues per polynomial, residue r = p * K + j is polynomial p
// reduced mod prime j. A moduli table holds MODULI_STRIDE words per prime: q, then
// floor(2^128 / q) as (r0, r1), then mu = floor(2^(2m+1) / q) for m = q's bit count
// (barrett_reduce_dq's ratio), so a prime is one aligned 32-byte row.
//
// The products of two residues (multiply_plain, the tensor's squares) reduce by
// barrett_reduce_dq, one 64 x 64-bit product where SEAL's barrett_reduce_128 takes seven:
// the same words, 5-14% less kernel time at N = 2^14..2^16 on an H100. -D SEAL_BARRETT
// builds SEAL's reduction instead, for comparison (SEAL_OPENCL_BARRETT_DQ=0).
//
// Launch: one work item per output word unless a kernel says otherwise, over a 2-D range:
// dimension 0 runs over the words of one row (one polynomial's residues: residue j of a
// word is its index >> LOG_N, no division), dimension 1 over the rows (polynomials); a
// kernel of one row ignores dimension 1. Work groups are WORK_GROUP_SIZE items of
// dimension 0 (src/ckks/kernels.rs). The launchers check every buffer length against the
// range they use, so the kernels do not bound-check.

#ifndef LOG_N
#error "ckks.cl needs -D LOG_N=<log2 of the polynomial degree>"
#endif

// Named apart from ntt.cl's N so both files can share one program.
#define CKKS_N ((size_t)1 << LOG_N)
#define CKKS_MASK (CKKS_N - 1)
#define MODULI_STRIDE 4

// Word w of row p of rows of `width` words each: p * width + w.
#define ROW_WORD(width) (get_global_id(1) * (size_t)(width) + get_global_id(0))

// The constants of prime `j` of a moduli table.
#define LOAD_MODULUS(moduli, j, q, r0, r1)        \
    const u64 q = (moduli)[(size_t)(j) * MODULI_STRIDE];      \
    const u64 r0 = (moduli)[(size_t)(j) * MODULI_STRIDE + 1]; \
    const u64 r1 = (moduli)[(size_t)(j) * MODULI_STRIDE + 2]

// a * b mod q_j for residues a, b of prime j, by the reduction the build picks.
#ifdef SEAL_BARRETT
#define MULTIPLY_MOD(a, b, moduli, j, q, r0, r1) multiply_uint_mod(a, b, q, r0, r1)
#else
#define MULTIPLY_MOD(a, b, moduli, j, q, r0, r1) \
    multiply_uint_mod_dq(a, b, q, (moduli)[(size_t)(j) * MODULI_STRIDE + 3])
#endif

// q_j of the word this item serves in a row of residues: residue j = w >> LOG_N for word w
// of the row (dimension 0).
inline u64 row_modulus(__global const u64 *moduli)
{
    return moduli[(get_global_id(0) >> LOG_N) * MODULI_STRIDE];
}

// dst = a + b mod q_j over polys * K * N words; dst may be a (each item reads its own
// word before writing it).
__kernel void ckks_add(__global u64 *dst, ulong dst_at, __global const u64 *a, ulong a_at,
                       __global const u64 *b, ulong b_at,
                       __global const u64 *moduli, ulong moduli_at, uint K)
{
    dst += dst_at;
    a += a_at;
    b += b_at;
    moduli += moduli_at;
    size_t gid = ROW_WORD((size_t)K << LOG_N);
    dst[gid] = add_uint_mod(a[gid], b[gid], row_modulus(moduli));
}

// dst = a - b mod q_j; dst may be a or b.
__kernel void ckks_sub(__global u64 *dst, ulong dst_at, __global const u64 *a, ulong a_at,
                       __global const u64 *b, ulong b_at,
                       __global const u64 *moduli, ulong moduli_at, uint K)
{
    dst += dst_at;
    a += a_at;
    b += b_at;
    moduli += moduli_at;
    size_t gid = ROW_WORD((size_t)K << LOG_N);
    dst[gid] = sub_uint_mod(a[gid], b[gid], row_modulus(moduli));
}

// dst = -a mod q_j; dst may be a.
__kernel void ckks_negate(__global u64 *dst, ulong dst_at, __global const u64 *a, ulong a_at,
                          __global const u64 *moduli, ulong moduli_at, uint K)
{
    dst += dst_at;
    a += a_at;
    moduli += moduli_at;
    size_t gid = ROW_WORD((size_t)K << LOG_N);
    dst[gid] = negate_uint_mod(a[gid], row_modulus(moduli));
}

// dst[p][j][k] = v mod q_j in [0, q_j) for v the signed byte p N + k of src (eight a word,
// byte b of a word its bits 8 b .. 8 b + 7), |v| < q_j: SEAL's samples of an encryption (one
// small value a coefficient) at every prime of the level. Range (K * N, polys).
__kernel void ckks_lift_signed(__global u64 *dst, ulong dst_at, __global const u64 *src,
                               ulong src_at, __global const u64 *moduli, ulong moduli_at, uint K)
{
    dst += dst_at;
    src += src_at;
    moduli += moduli_at;
    size_t byte = (get_global_id(1) << LOG_N) + (get_global_id(0) & CKKS_MASK);
    long v = (long)(char)(src[byte >> 3] >> ((byte & 7) * 8));
    u64 q = row_modulus(moduli);
    dst[ROW_WORD((size_t)K << LOG_N)] = v < 0 ? q - (u64)(-v) : (u64)v;
}

// dst[p][j][k] = ct[p][j][k] * plain[j][k] mod q_j for every polynomial p (the plaintext,
// K * N words, is broadcast): SEAL's multiply_plain_ntt. dst may be ct.
__kernel void ckks_multiply_plain(__global u64 *dst, ulong dst_at,
                                  __global const u64 *ct, ulong ct_at,
                                  __global const u64 *plain, ulong plain_at,
                                  __global const u64 *moduli, ulong moduli_at, uint K)
{
    dst += dst_at;
    ct += ct_at;
    plain += plain_at;
    moduli += moduli_at;
    size_t pk = get_global_id(0);
    size_t gid = ROW_WORD((size_t)K << LOG_N);
    uint j = (uint)(pk >> LOG_N);
    LOAD_MODULUS(moduli, j, q, r0, r1);
    dst[gid] = MULTIPLY_MOD(ct[gid], plain[pk], moduli, j, q, r0, r1);
}

// One term of ckks_sum: term i's word, times X^shift_i first (negacyclic) where its 16 bits
// of `shifts` (bits 16 (i mod 4) .. of shifts_lo for i < 4, else of shifts_hi) are not 0,
// times plaintext i's (broadcast) where bit i of `products` is set (SEAL's
// multiply_plain_ntt: the product reduced first), added to `sum` or, where bit i of
// `subtract` is set, subtracted.
#define SUM_TERM(i, t, p)                                                                  \
    if ((i) < terms) {                                                                     \
        const uint shift = (uint)(((i) < 4 ? shifts_lo : shifts_hi) >> (16 * ((i) % 4))) \
                           & 0xffff;                                                       \
        bool wraps;                                                                        \
        u64 x = (t)[negacyclic_source(gid, shift, LOG_N, &wraps)];                         \
        if (wraps)                                                                         \
            x = negate_uint_mod(x, q);                                                     \
        if ((products >> (i)) & 1)                                                         \
            x = MULTIPLY_MOD(x, (p)[pk], moduli, j, q, r0, r1);                            \
        sum = ((subtract >> (i)) & 1) ? sub_uint_mod(sum, x, q) : add_uint_mod(sum, x, q); \
    }

// dst = dst (0 without `accumulate`) +- t_0 +- ... +- t_{terms-1} mod q_j over polys
// polynomials (range (K N, polys)), 1 <= terms <= 8, term i the words of t_i or, with bit i
// of `products`, t_i[p][j][k] * p_i[j][k] mod q_j (p_i a plaintext of K N words), or, with
// a shift (coefficient form, no product), X^shift_i times t_i (SEAL's multiply_plain by that
// monomial, coefficient 1); minus with bit i of `subtract`. A program's add_inplace and
// sub_inplace of m terms into an accumulator, one after the other, in one launch: SEAL
// reduces each step to the canonical residue in [0, q) (add_poly_coeffmod,
// sub_poly_coeffmod; its products by dyadic_product_coeffmod, its shifts by
// negacyclic_shift_poly_coeffmod), and a canonical residue is unique, so the words after the
// m steps are acc +- t_1 +- ... +- t_m mod q, whatever the grouping; this kernel takes the
// steps in the program's order, each reduced as SEAL's. Every input is canonical. An
// unshifted term may be dst itself (each item reads its word before writing it); no
// plaintext and no shifted term may. Slots from `terms` on are not read.
__kernel void ckks_sum(__global u64 *dst, ulong dst_at,
                       __global const u64 *t0, ulong t0_at, __global const u64 *t1, ulong t1_at,
                       __global const u64 *t2, ulong t2_at, __global const u64 *t3, ulong t3_at,
                       __global const u64 *t4, ulong t4_at, __global const u64 *t5, ulong t5_at,
                       __global const u64 *t6, ulong t6_at, __global const u64 *t7, ulong t7_at,
                       __global const u64 *p0, ulong p0_at, __global const u64 *p1, ulong p1_at,
                       __global const u64 *p2, ulong p2_at, __global const u64 *p3, ulong p3_at,
                       __global const u64 *p4, ulong p4_at, __global const u64 *p5, ulong p5_at,
                       __global const u64 *p6, ulong p6_at, __global const u64 *p7, ulong p7_at,
                       __global const u64 *moduli, ulong moduli_at, uint K, uint terms,
                       uint products, uint subtract, ulong shifts_lo, ulong shifts_hi,
                       uint accumulate)
{
    dst += dst_at;
    t0 += t0_at;
    t1 += t1_at;
    t2 += t2_at;
    t3 += t3_at;
    t4 += t4_at;
    t5 += t5_at;
    t6 += t6_at;
    t7 += t7_at;
    p0 += p0_at;
    p1 += p1_at;
    p2 += p2_at;
    p3 += p3_at;
    p4 += p4_at;
    p5 += p5_at;
    p6 += p6_at;
    p7 += p7_at;
    moduli += moduli_at;
    size_t pk = get_global_id(0);
    size_t gid = ROW_WORD((size_t)K << LOG_N);
    uint j = (uint)(pk >> LOG_N);
    LOAD_MODULUS(moduli, j, q, r0, r1);
    u64 sum = accumulate ? dst[gid] : 0;
    SUM_TERM(0, t0, p0)
    SUM_TERM(1, t1, p1)
    SUM_TERM(2, t2, p2)
    SUM_TERM(3, t3, p3)
    SUM_TERM(4, t4, p4)
    SUM_TERM(5, t5, p5)
    SUM_TERM(6, t6, p6)
    SUM_TERM(7, t7, p7)
    dst[gid] = sum;
}

// The tensor product of SEAL's ckks_multiply in NTT form: dst[t] = sum_{i + l = t}
// a[i] * b[l] for t < s1 + s2 - 1. One work item per (residue j, coefficient k), global
// size K * N, computing every output of its word, so each input word is loaded by one
// item only. Each sum is accumulated exactly in 128 bits and reduced once: it has at
// most min(s1, s2) <= 64 terms (the launcher checks) of products < q^2 < 2^122. a and b may be the same buffer (squaring); dst aliases neither.
__kernel void ckks_tensor(__global u64 *dst, ulong dst_at, __global const u64 *a, ulong a_at,
                          uint s1, __global const u64 *b, ulong b_at, uint s2,
                          __global const u64 *moduli, ulong moduli_at, uint K)
{
    dst += dst_at;
    a += a_at;
    b += b_at;
    moduli += moduli_at;
    size_t gid = get_global_id(0);
    uint j = (uint)(gid >> LOG_N);
    LOAD_MODULUS(moduli, j, q, r0, r1);
    size_t stride = (size_t)K << LOG_N;
    if (s1 == 2 && s2 == 2) {
        // The common case (ciphertext times ciphertext), all in registers.
        u64 a0 = a[gid], a1 = a[gid + stride];
        u64 b0 = b[gid], b1 = b[gid + stride];
        u64 lo = 0, hi = 0;
        mul_acc_128(&lo, &hi, a0, b1);
        mul_acc_128(&lo, &hi, a1, b0);
        dst[gid] = MULTIPLY_MOD(a0, b0, moduli, j, q, r0, r1);
        dst[gid + stride] = barrett_reduce_128(lo, hi, q, r0, r1);
        dst[gid + 2 * stride] = MULTIPLY_MOD(a1, b1, moduli, j, q, r0, r1);
        return;
    }
    uint outputs = s1 + s2 - 1;
    for (uint t = 0; t < outputs; t++) {
        uint i_lo = t >= s2 ? t - s2 + 1 : 0;
        uint i_hi = t < s1 - 1 ? t : s1 - 1;
        u64 lo = 0, hi = 0;
        for (uint i = i_lo; i <= i_hi; i++) {
            mul_acc_128(&lo, &hi, a[gid + i * stride], b[gid + (t - i) * stride]);
        }
        dst[gid + t * stride] = barrett_reduce_128(lo, hi, q, r0, r1);
    }
}

// dst[p * dst_stride + j][k] = src[p * src_stride + j][k] for j < residues_per_poly
// (strides in residues): SEAL's mod_switch_drop_to_next and other residue copies.
// Range (residues_per_poly * N, polys).
__kernel void ckks_copy_residues(__global u64 *dst, ulong dst_at, uint dst_stride,
                                 __global const u64 *src, ulong src_at, uint src_stride,
                                 uint residues_per_poly)
{
    dst += dst_at;
    src += src_at;
    size_t k = get_global_id(0) & CKKS_MASK;
    size_t j = get_global_id(0) >> LOG_N;
    size_t p = get_global_id(1);
    dst[((p * dst_stride + j) << LOG_N) + k] = src[((p * src_stride + j) << LOG_N) + k];
}

// dst[p][k] = src[p * src_stride + index][k]: one residue of every polynomial, packed.
// Global size polys * N.
__kernel void ckks_gather_residue(__global u64 *dst, ulong dst_at,
                                  __global const u64 *src, ulong src_at, uint src_stride,
                                  uint index)
{
    dst += dst_at;
    src += src_at;
    size_t gid = get_global_id(0);
    size_t k = gid & CKKS_MASK;
    size_t p = gid >> LOG_N;
    dst[gid] = src[((p * src_stride + index) << LOG_N) + k];
}

// SEAL's GaloisTool::apply_galois_ntt on every residue: dst[r][i] = src[r][table[i]],
// with table[i] = galois_ntt_index(i) (arith.cl; galois_elt odd, < 2N). dst must not
// alias src. Global size residues * N.
__kernel void ckks_galois_ntt(__global u64 *dst, ulong dst_at,
                              __global const u64 *src, ulong src_at, uint galois_elt)
{
    dst += dst_at;
    src += src_at;
    size_t gid = get_global_id(0);
    uint i = (uint)(gid & CKKS_MASK);
    dst[gid] = src[gid - i + galois_ntt_index(i, galois_elt, LOG_N)];
}

// "(ct mod q_last) mod q_i" of rescale and key switching, with both of SEAL's rounding
// steps. On entry last[p][k] (p < polys) is the last residue of polynomial p in
// coefficient form, straight out of an inverse NTT under q_last = moduli[last_q_index]:
// lazy (< 2 q_last) or fully reduced. Each item first rounds it,
// r = barrett_reduce_64(x + (q_last >> 1), q_last) (SEAL's "add (q - 1) / 2 to change
// from flooring to rounding"), then for i < K_out
// dst[p][i][k] = (q_i < q_last ? r mod q_i : r) + (q_i - (q_last >> 1) mod q_i).
// On exit dst (polys * K_out residues) is in [0, 2 q_i), not reduced (SEAL's lazy
// neg_half_mod; the lazy forward NTT takes it); last is unchanged. Every item (p, i, k)
// recomputes r for its own word: one Barrett step is cheaper than a launch.
// Range (K_out * N, polys).
__kernel void ckks_moddown_prep(__global u64 *dst, ulong dst_at,
                                __global const u64 *last, ulong last_at,
                                __global const u64 *moduli, ulong moduli_at, uint last_q_index,
                                uint K_out)
{
    dst += dst_at;
    last += last_at;
    moduli += moduli_at;
    size_t gid = ROW_WORD((size_t)K_out << LOG_N);
    size_t k = get_global_id(0) & CKKS_MASK;
    size_t p = get_global_id(1);
    uint i = (uint)(get_global_id(0) >> LOG_N);
    u64 q_last = moduli[(size_t)last_q_index * MODULI_STRIDE];
    u64 r1_last = moduli[(size_t)last_q_index * MODULI_STRIDE + 2];
    u64 q = moduli[(size_t)i * MODULI_STRIDE];
    u64 r1 = moduli[(size_t)i * MODULI_STRIDE + 2];
    dst[gid] = moddown_round(last[(p << LOG_N) + k], q_last, r1_last, q, r1,
                             moddown_fix(q_last, q, r1));
}

// The last step of rescale (divide_and_round_q_last_ntt_inplace) and of key switching:
// y = (x + 4 q_i - t) * q_last^-1 mod q_i with x = src[p * src_stride + i][k] (canonical)
// and t = t[p * K_out + i][k] < 4 q_i (after a lazy forward NTT); then dst = y, or
// dst = dst + y mod q_i when accumulate. inv holds K_out Shoup pairs (operand, quotient).
// Range (K_out * N, polys).
__kernel void ckks_divide_round_finish(__global u64 *dst, ulong dst_at, uint dst_stride,
                                       __global const u64 *src, ulong src_at, uint src_stride,
                                       __global const u64 *t, ulong t_at,
                                       __global const u64 *inv, ulong inv_at,
                                       __global const u64 *moduli, ulong moduli_at, uint K_out,
                                       uint accumulate)
{
    dst += dst_at;
    src += src_at;
    t += t_at;
    inv += inv_at;
    moduli += moduli_at;
    size_t gid = ROW_WORD((size_t)K_out << LOG_N);
    size_t k = get_global_id(0) & CKKS_MASK;
    size_t p = get_global_id(1);
    uint i = (uint)(get_global_id(0) >> LOG_N);
    u64 q = moduli[(size_t)i * MODULI_STRIDE];
    size_t s = ((p * src_stride + i) << LOG_N) + k;
    size_t d = ((p * dst_stride + i) << LOG_N) + k;
    u64 y = moddown_finish(src[s], t[gid], inv[2 * i], inv[2 * i + 1], q);
    dst[d] = accumulate ? add_uint_mod(dst[d], y, q) : y;
}

// Key switching's RNS decomposition: for J < K and I < K + 1 (moduli_ext has the K data
// primes then the special prime), dst[J * (K + 1) + I][k] = q_J <= q_I ? x :
// x mod q_I with x = t_target[J][k]. Range ((K + 1) * N, K).
__kernel void ckks_ks_decompose(__global u64 *dst, ulong dst_at,
                                __global const u64 *t_target, ulong t_target_at,
                                __global const u64 *moduli, ulong moduli_at, uint K)
{
    dst += dst_at;
    t_target += t_target_at;
    moduli += moduli_at;
    size_t gid = ROW_WORD((size_t)(K + 1) << LOG_N);
    size_t k = get_global_id(0) & CKKS_MASK;
    uint J = (uint)get_global_id(1);
    uint I = (uint)(get_global_id(0) >> LOG_N);
    u64 q_j = moduli[(size_t)J * MODULI_STRIDE];
    u64 q_i = moduli[(size_t)I * MODULI_STRIDE];
    u64 r1_i = moduli[(size_t)I * MODULI_STRIDE + 2];
    u64 x = t_target[((size_t)J << LOG_N) + k];
    dst[gid] = q_j <= q_i ? x : barrett_reduce_64(x, q_i, r1_i);
}

// Key switching's inner product with the key, the data primes' residues apart from the
// special prime's. On entry dec (K * (K + 1) residues, the decomposition after a lazy
// forward NTT) is < 4 q_I and key canonical; the key word of (J, c, prime p) is
// ((J * 2 + c) * key_stride_primes + p) * N + k (SEAL's key vector). On exit, with
// s(c, I) = sum_{J < K} dec[J * (K + 1) + I][k] * key[J][c][kp(I)][k] mod q_I,
// kp(I) = I for I < K and key_special_index for I = K, all canonical:
//   prod[c * K + I][k] = s(c, I) for I < K (2 * K residues: two polynomials at level K),
//   last[c][k] = s(c, K) (2 residues, mod the special prime, for the mod-down's INTT).
// One work item per (I, k), global size (K + 1) * N, computing both c (dec is loaded
// once). Products (< 4q * q) accumulate exactly in 128 bits; the launcher passes
// reduce_every, the number of products that fit after a reduction, so the accumulator
// is reduced at most every reduce_every terms (never for 60-bit primes and K <= 64).
__kernel void ckks_ks_inner_product(__global u64 *prod, ulong prod_at,
                                    __global u64 *last, ulong last_at,
                                    __global const u64 *dec, ulong dec_at,
                                    __global const u64 *key, ulong key_at,
                                    __global const u64 *moduli, ulong moduli_at, uint K,
                                    uint key_stride_primes, uint key_special_index,
                                    uint reduce_every)
{
    prod += prod_at;
    last += last_at;
    dec += dec_at;
    key += key_at;
    moduli += moduli_at;
    size_t gid = get_global_id(0);
    size_t k = gid & CKKS_MASK;
    uint I = (uint)(gid >> LOG_N);
    uint kp = I < K ? I : key_special_index;
    LOAD_MODULUS(moduli, I, q, r0, r1);
    size_t K1 = (size_t)K + 1;
    u64 lo0 = 0, hi0 = 0, lo1 = 0, hi1 = 0;
    uint left = reduce_every;
    for (uint J = 0; J < K; J++) {
        u64 x = dec[(((size_t)J * K1 + I) << LOG_N) + k];
        size_t key0 = (((size_t)J * 2) * key_stride_primes + kp) << LOG_N;
        size_t key1 = (((size_t)J * 2 + 1) * key_stride_primes + kp) << LOG_N;
        mul_acc_128(&lo0, &hi0, x, key[key0 + k]);
        mul_acc_128(&lo1, &hi1, x, key[key1 + k]);
        if (--left == 0) {
            lo0 = barrett_reduce_128(lo0, hi0, q, r0, r1);
            lo1 = barrett_reduce_128(lo1, hi1, q, r0, r1);
            hi0 = 0;
            hi1 = 0;
            left = reduce_every;
        }
    }
    u64 s0 = barrett_reduce_128(lo0, hi0, q, r0, r1);
    u64 s1 = barrett_reduce_128(lo1, hi1, q, r0, r1);
    // I is the same for N consecutive items: only a work group straddling I = K diverges.
    if (I < K) {
        prod[((size_t)I << LOG_N) + k] = s0;
        prod[(((size_t)K + I) << LOG_N) + k] = s1;
    } else {
        last[k] = s0;
        last[CKKS_N + k] = s1;
    }
}
