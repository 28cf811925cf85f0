// Uses: arith.cl, ntt.cl, fused.cl, chain.cl, behz_tensor.cl, behz.cl
// SEAL's bfv_multiply (src/integer/multiply.rs) in two chained launches, each three passes
// handing over through the queue's counters as chain.cl's (its tickets, hand-overs and
// fences): the extension with the forward transform after it, and the tensor product with
// the inverse transform and the scaling after it. Built where a BFV level's plan over
// q U Bsk chains (BEHZ_CHAIN_LOG_N), with behz.cl's defines; coeff_modulus_size is W, the
// residues of a polynomial in base q U Bsk.
//
// The passes across residues (the extension, the scaling) take one work item per
// coefficient c of polynomial p, item g BLOCK_WG + lid of the pass's groups standing for
// (c, p) = (i mod N, i / N): polys N / BLOCK_WG groups. No barrier: an inactive group
// only passes the hand-overs.

#if LOG_S != 0 && KS_ROWS == 1 && STRIDED_WG == BLOCK_WG

// Work group `group`'s items of a pass across residues: behz_extend's, into x.
ALWAYS_INLINE void behz_extend_group(__global u64 *x, __global const u64 *a,
                                     __global const u64 *b, uint s1,
                                     __global const u64 *moduli, __global const u64 *consts,
                                     uint group, uint lid, bool active)
{
    if (!active)
        return;
    const size_t i = (size_t)group * BLOCK_WG + lid;
    behz_extend_coeff(x, a, b, s1, moduli, consts, i & (N - 1), i >> LOG_N);
}

// Work group `group`'s items of a pass across residues: behz_floor_sk's, y into dst.
ALWAYS_INLINE void behz_floor_sk_group(__global u64 *dst, __global const u64 *y,
                                       __global const u64 *moduli,
                                       __global const u64 *consts, uint group, uint lid,
                                       bool active)
{
    if (!active)
        return;
    const size_t i = (size_t)group * BLOCK_WG + lid;
    behz_floor_sk_coeff(dst, y, moduli, consts, i & (N - 1), i >> LOG_N);
}

// Steps (1)-(3) of bfv_multiply: both operands (a: s1 polynomials, b the rest; one when
// squaring, b = a) extended to base q U Bsk into values, then its forward transform, fully
// reduced, in place. Tickets below end1 run pass 1 (behz_extend, over the polys N
// coefficients), below end2 pass 2 (the strided passes of every residue of values), below
// `tickets` pass 3 (the block passes). values overlaps neither a nor b.
__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void behz_extend_fwd_chained(__global u64 *values, ulong values_at,
                             __global const u64 *restrict root_powers, ulong root_powers_at,
                             __global const u64 *restrict params, ulong params_at,
                             uint coeff_modulus_size, __global const u64 *a, ulong a_at,
                             __global const u64 *b, ulong b_at, uint s1,
                             __global const u64 *moduli, ulong moduli_at,
                             __global const u64 *consts, ulong consts_at,
                             __global u64 *counters, ulong counters_at, uint end1, uint end2,
                             uint tickets, uint per_group)
{
    __local u64 lmem[CHAIN_WORDS];
    __local uint slot;
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    a += a_at;
    b += b_at;
    moduli += moduli_at;
    consts += consts_at;
    counters += counters_at;
    volatile __global uint *count = (volatile __global uint *)counters;
    const uint W = coeff_modulus_size;
    const uint lid = get_local_id(0);
    const uint ends[3] = {end1, end2, tickets};
    EACH_TURN(per_group) {
        uint g;
        const uint pass = chain_pass(chain_ticket(count, &slot), ends, 3, &g);
        RUN(1, behz_extend_group(values, a, b, s1, moduli, consts, OWN(1)))
        chain_hand_over(count, 1, end1, pass);
        RUN(2, fwd_strided_group(values, root_powers, params, W, lmem, OWN(2)))
        chain_hand_over(count, 2, end2 - end1, pass);
        RUN(3, fwd_block_group(values, root_powers, params, W, 1, lmem, OWN(3)))
    }
    chain_finish(count, (uint)get_num_groups(0));
}

// Steps (4)-(8) of bfv_multiply: the tensor product of a (s1 polynomials of W residues, in
// NTT form, canonical) and b (s2) loaded into the inverse's block pass (behz_tensor.cl),
// the lazy inverse transform into values (s1 + s2 - 1 polynomials), then behz_floor_sk of
// values into dst (K residues a polynomial, canonical). Tickets below end1 run pass 1,
// below end2 pass 2 (the strided inverse passes), below `tickets` pass 3 (over the
// (s1 + s2 - 1) N coefficients). values is neither a nor b (which may be one buffer:
// squaring) nor dst.
__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void behz_tensor_floor_chained(__global u64 *restrict values, ulong values_at,
                               __global const u64 *restrict inv_root_powers,
                               ulong inv_root_powers_at, __global const u64 *restrict params,
                               ulong params_at, uint coeff_modulus_size,
                               __global const u64 *a, ulong a_at, uint s1,
                               __global const u64 *b, ulong b_at, uint s2,
                               __global u64 *dst, ulong dst_at,
                               __global const u64 *moduli, ulong moduli_at,
                               __global const u64 *consts, ulong consts_at,
                               __global u64 *counters, ulong counters_at, uint end1,
                               uint end2, uint tickets, uint per_group)
{
    __local u64 lmem[CHAIN_WORDS];
    __local uint slot;
    values += values_at;
    inv_root_powers += inv_root_powers_at;
    params += params_at;
    a += a_at;
    b += b_at;
    dst += dst_at;
    moduli += moduli_at;
    consts += consts_at;
    counters += counters_at;
    volatile __global uint *count = (volatile __global uint *)counters;
    const uint W = coeff_modulus_size;
    const uint lid = get_local_id(0);
    const uint ends[3] = {end1, end2, tickets};
    EACH_TURN(per_group) {
        uint g;
        const uint pass = chain_pass(chain_ticket(count, &slot), ends, 3, &g);
        RUN(1, inv_block_tensor_group(values, inv_root_powers, params, W, 0, lmem, a, s1, b,
                                      s2, OWN(1)))
        chain_hand_over(count, 1, end1, pass);
        RUN(2, inv_strided_group(values, inv_root_powers, params, W, 0, lmem, OWN(2)))
        chain_hand_over(count, 2, end2 - end1, pass);
        RUN(3, behz_floor_sk_group(dst, values, moduli, consts, OWN(3)))
    }
    chain_finish(count, (uint)get_num_groups(0));
}

#endif // LOG_S != 0 && KS_ROWS == 1 && STRIDED_WG == BLOCK_WG
