// Uses: arith.cl
// The per-coefficient steps of SEAL's BFV multiplication by BEHZ base extensions
// (Evaluator::bfv_multiply with util::RNSTool), around the transforms and the tensor
// product that the host enqueues between them (src/integer/multiply.rs):
//
//   behz_extend:   steps (1)-(2), fastbconv_m_tilde then sm_mrq: a polynomial in base q
//                  to base q U Bsk (its copy in q, its extension to Bsk);
//   behz_floor_sk: steps (6)-(8), times t, fast_floor into Bsk, fastbconv_sk back to q.
//
// Each mirrors the host reference of the same steps in src/integer/behz.rs
// (BehzTables::fastbconv_m_tilde, sm_mrq, fast_floor, fastbconv_sk) word for word;
// tests/bfv_multiply.rs checks that.
//
// Built after arith.cl with -D LOG_N=<log2 N>, -D BEHZ_K=<K, primes of q>,
// -D BEHZ_NB=<primes of B> and -D BEHZ_OFF_<SECTION>=<word> for each section of the
// constants buffer (src/integer/multiply.rs, `Constants`: Shoup pairs (operand, quotient)
// and rows of base-change matrices). The moduli table holds q's primes, then Bsk's (B's,
// then m_sk), BEHZ_MODULI_STRIDE words each: p, then floor(2^128 / p) as (r0, r1).
//
// Launch: one work item per coefficient c (dimension 0, N items) of polynomial p
// (dimension 1). The launchers check every buffer length, so the kernels do not.

#if !defined(LOG_N) || !defined(BEHZ_K) || !defined(BEHZ_NB)
#error "behz.cl needs -D LOG_N, -D BEHZ_K and -D BEHZ_NB"
#endif

#define BEHZ_N ((size_t)1 << LOG_N)
// Bsk's primes: B's, then m_sk.
#define BEHZ_KB (BEHZ_NB + 1)
// Residues of a polynomial in base q U Bsk.
#define BEHZ_W (BEHZ_K + BEHZ_KB)
#define BEHZ_MODULI_STRIDE 4
// SEAL's m_tilde = 2^32, whose Barrett ratio floor(2^128 / 2^32) is (r0, r1) = (0, 2^32).
#define BEHZ_M_TILDE ((u64)1 << 32)

// x * w mod p with w the Shoup pair `i` of constants section `off`; x < 2^64.
#define BEHZ_SHOUP(consts, off, i, x, p) \
    multiply_uint_mod_shoup((x), (consts)[(off) + 2 * (i)], (consts)[(off) + 2 * (i) + 1], (p))

// SEAL's dot_product_mod for `count` <= 16 terms: sum a_i row_i, exact in 128 bits (each
// term < 2^122), reduced once by Barrett.
inline u64 behz_dot(const u64 *a, __global const u64 *row, uint count, u64 p, u64 r0, u64 r1)
{
    u64 lo = 0, hi = 0;
    for (uint i = 0; i < count; i++) {
        mul_acc_128(&lo, &hi, a[i], row[i]);
    }
    return barrett_reduce_128(lo, hi, p, r0, r1);
}

// Steps (1)-(2) of bfv_multiply for coefficient c of polynomial p of the operands: ct[p]
// is a[p] for p < s1, else b[p - s1] (BEHZ_K residues per polynomial, canonical), so one
// launch extends both operands of a product. x[p] gets BEHZ_W residues, the first BEHZ_K
// a copy of ct[p], the next BEHZ_KB the extension to Bsk (canonical):
//   y_i   = ((ct_i m_tilde mod q_i) (Q / q_i)^-1) mod q_i     (fastbconv_m_tilde's temp)
//   e_j   = sum_i y_i (Q / q_i) mod b_j, e_mt likewise mod m_tilde
//   r     = -e_mt Q^-1 mod m_tilde, centred: r - m_tilde where r >= m_tilde / 2
//   x_K+j = (e_j + Q r) m_tilde^-1 mod b_j                    (sm_mrq)
// (fast_convert_array multiplies by (Q / q_i)^-1 = 1 by Barrett where SEAL does; Shoup by
// 1 of a canonical residue is the same word.) x must overlap neither a nor b. The kernel
// below runs it per work item, behz_chain.cl's chained forward transform as its first pass.
inline void behz_extend_coeff(__global u64 *x, __global const u64 *a, __global const u64 *b,
                              uint s1, __global const u64 *moduli,
                              __global const u64 *consts, size_t c, size_t p)
{
    __global const u64 *in = p < s1 ? a + p * BEHZ_K * BEHZ_N + c
                                    : b + (p - s1) * BEHZ_K * BEHZ_N + c;
    __global u64 *out = x + p * BEHZ_W * BEHZ_N + c;

    u64 y[BEHZ_K];
    for (uint i = 0; i < BEHZ_K; i++) {
        u64 q = moduli[i * BEHZ_MODULI_STRIDE];
        u64 v = in[i * BEHZ_N];
        out[i * BEHZ_N] = v;
        v = BEHZ_SHOUP(consts, BEHZ_OFF_MT_MOD_Q, i, v, q);
        y[i] = BEHZ_SHOUP(consts, BEHZ_OFF_INV_PUNCT_Q, i, v, q);
    }

    u64 e_mt = behz_dot(y, consts + BEHZ_OFF_Q_TO_MT, BEHZ_K, BEHZ_M_TILDE, 0, BEHZ_M_TILDE);
    u64 r = BEHZ_SHOUP(consts, BEHZ_OFF_NEG_INV_Q_MT, 0, e_mt, BEHZ_M_TILDE);

    for (uint j = 0; j < BEHZ_KB; j++) {
        __global const u64 *m = moduli + (BEHZ_K + j) * BEHZ_MODULI_STRIDE;
        u64 b = m[0], r0 = m[1], r1 = m[2];
        u64 e = behz_dot(y, consts + BEHZ_OFF_Q_TO_BSK + j * BEHZ_K, BEHZ_K, b, r0, r1);
        // r - m_tilde as r + b - m_tilde < 2^62, not reduced (SEAL's centring).
        u64 centred = r >= (BEHZ_M_TILDE >> 1) ? r + b - BEHZ_M_TILDE : r;
        u64 s = add_uint_mod(BEHZ_SHOUP(consts, BEHZ_OFF_PROD_Q_BSK, j, centred, b),
                             barrett_reduce_64(e, b, r1), b);
        out[(BEHZ_K + j) * BEHZ_N] = BEHZ_SHOUP(consts, BEHZ_OFF_INV_MT_BSK, j, s, b);
    }
}

__kernel void behz_extend(__global u64 *x, ulong x_at, __global const u64 *a, ulong a_at,
                          __global const u64 *b, ulong b_at, uint s1,
                          __global const u64 *moduli, ulong moduli_at,
                          __global const u64 *consts, ulong consts_at)
{
    x += x_at;
    a += a_at;
    b += b_at;
    moduli += moduli_at;
    consts += consts_at;
    behz_extend_coeff(x, a, b, s1, moduli, consts, get_global_id(0), get_global_id(1));
}

// Steps (6)-(8) of bfv_multiply for coefficient c of polynomial p of y (BEHZ_W residues
// per polynomial in coefficient form, each below 2^64: the lazy inverse transform's
// output, < 2p): dst[p] gets BEHZ_K residues, canonical:
//   v_i   = y_i t mod q_i, w_j = y_K+j t mod b_j                 (multiply by t)
//   f_j   = (w_j - sum_i (v_i (Q / q_i)^-1 mod q_i) (Q / q_i)) Q^-1 mod b_j   (fast_floor)
//   u_l   = f_l (B / b_l)^-1 mod b_l for l < NB
//   alpha = (sum_l u_l (B / b_l) - f_sk) B^-1 mod m_sk, centred   (fastbconv_sk)
//   dst_i = sum_l u_l (B / b_l) - alpha B mod q_i
// dst must not overlap y. The kernel below runs it per work item, behz_chain.cl's chained
// tensor product and inverse transform as its last pass.
inline void behz_floor_sk_coeff(__global u64 *dst, __global const u64 *y,
                                __global const u64 *moduli, __global const u64 *consts,
                                size_t c, size_t p)
{
    __global const u64 *in = y + p * BEHZ_W * BEHZ_N + c;
    __global u64 *out = dst + p * BEHZ_K * BEHZ_N + c;

    u64 z[BEHZ_K];
    for (uint i = 0; i < BEHZ_K; i++) {
        u64 q = moduli[i * BEHZ_MODULI_STRIDE];
        u64 v = BEHZ_SHOUP(consts, BEHZ_OFF_T_MOD_Q, i, in[i * BEHZ_N], q);
        z[i] = BEHZ_SHOUP(consts, BEHZ_OFF_INV_PUNCT_Q, i, v, q);
    }

    u64 u[BEHZ_NB];
    u64 f_sk = 0;
    for (uint j = 0; j < BEHZ_KB; j++) {
        __global const u64 *m = moduli + (BEHZ_K + j) * BEHZ_MODULI_STRIDE;
        u64 b = m[0], r0 = m[1], r1 = m[2];
        u64 w = BEHZ_SHOUP(consts, BEHZ_OFF_T_MOD_BSK, j, in[(BEHZ_K + j) * BEHZ_N], b);
        u64 conv = behz_dot(z, consts + BEHZ_OFF_Q_TO_BSK + j * BEHZ_K, BEHZ_K, b, r0, r1);
        // w + (b - conv) < 2b < 2^62: the negation is not reduced (SEAL's).
        u64 f = BEHZ_SHOUP(consts, BEHZ_OFF_INV_Q_BSK, j, w + (b - conv), b);
        if (j < BEHZ_NB) {
            u[j] = BEHZ_SHOUP(consts, BEHZ_OFF_INV_PUNCT_B, j, f, b);
        } else {
            f_sk = f;
        }
    }

    __global const u64 *msk = moduli + (BEHZ_K + BEHZ_NB) * BEHZ_MODULI_STRIDE;
    u64 m_sk = msk[0];
    u64 s = behz_dot(u, consts + BEHZ_OFF_B_TO_MSK, BEHZ_NB, m_sk, msk[1], msk[2]);
    u64 alpha = BEHZ_SHOUP(consts, BEHZ_OFF_INV_B_MSK, 0, s + (m_sk - f_sk), m_sk);
    bool negative = alpha > (m_sk >> 1);

    for (uint i = 0; i < BEHZ_K; i++) {
        __global const u64 *m = moduli + i * BEHZ_MODULI_STRIDE;
        u64 q = m[0], r0 = m[1], r1 = m[2];
        u64 o = barrett_reduce_64(behz_dot(u, consts + BEHZ_OFF_B_TO_Q + i * BEHZ_NB, BEHZ_NB,
                                           q, r0, r1), q, r1);
        // alpha > m_sk / 2 stands for alpha - m_sk: add (m_sk - alpha) B, else subtract
        // alpha B as alpha (q - B mod q).
        u64 t = negative ? BEHZ_SHOUP(consts, BEHZ_OFF_PROD_B_Q, i, m_sk - alpha, q)
                         : BEHZ_SHOUP(consts, BEHZ_OFF_NEG_PROD_B_Q, i, alpha, q);
        out[i * BEHZ_N] = add_uint_mod(t, o, q);
    }
}

__kernel void behz_floor_sk(__global u64 *dst, ulong dst_at, __global const u64 *y, ulong y_at,
                            __global const u64 *moduli, ulong moduli_at,
                            __global const u64 *consts, ulong consts_at)
{
    dst += dst_at;
    y += y_at;
    moduli += moduli_at;
    consts += consts_at;
    behz_floor_sk_coeff(dst, y, moduli, consts, get_global_id(0), get_global_id(1));
}
