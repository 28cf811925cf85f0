// Uses: arith.cl
// Sums read on load: the words of a ciphertext that the backend left as a deferred sum of
// others (src/seal_backend/deferred.rs), computed by the kernel that reads them instead of
// by a launch of its own. Built after arith.cl, before chain.cl and integer.cl, whose
// kernels take a sum as src0 .. src3, src_terms and src_negate.

#ifndef ALWAYS_INLINE
#define ALWAYS_INLINE inline __attribute__((always_inline))
#endif

// A ciphertext's words read as the sum of up to four ciphertexts' (src0 .. src3, the
// first `terms` of them; bit j of `negate` subtracts term j): what SEAL's add_inplace and
// sub_inplace of the terms in turn leave, computed on a kernel's loads where the backend
// deferred those adds. Every step of SEAL's is
// canonical mod q, so its word is the canonical signed sum, in any order. One term,
// unnegated, is the ciphertext itself.
typedef struct {
    __global const u64 *t0, *t1, *t2, *t3;
    uint terms, negate;
} sum_src;

ALWAYS_INLINE sum_src sum_src_of(__global const u64 *t0, __global const u64 *t1,
                                 __global const u64 *t2, __global const u64 *t3, uint terms,
                                 uint negate)
{
    sum_src s = {t0, t1, t2, t3, terms, negate};
    return s;
}

ALWAYS_INLINE u64 sum_term_into(u64 v, __global const u64 *t, uint j, sum_src s, size_t w,
                                u64 q)
{
    if (j >= s.terms)
        return v;
    return (s.negate >> j) & 1 ? sub_uint_mod(v, t[w], q) : add_uint_mod(v, t[w], q);
}

// Word w of the sum, canonical under q.
ALWAYS_INLINE u64 load_sum(sum_src s, size_t w, u64 q)
{
    u64 v = s.negate & 1 ? negate_uint_mod(s.t0[w], q) : s.t0[w];
    v = sum_term_into(v, s.t1, 1, s, w, q);
    v = sum_term_into(v, s.t2, 2, s, w, q);
    return sum_term_into(v, s.t3, 3, s, w, q);
}
