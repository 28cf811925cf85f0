// Uses: arith.cl, ntt.cl
// The inverse's strided pass fused with forward strided passes under other primes, built
// after ntt.cl: the first launch of key switching's forward transforms (keyswitch.cl) and
// of the mod-down's (moddown.cl) in two-pass layouts.

#if LOG_S != 0
// The inverse's strided pass of one residue followed, in the same work group, by forward
// strided passes of it under other primes: key switching's decomposition (kind
// LOAD_DECOMPOSE) and the mod-down's rounding (LOAD_MODDOWN), each the first pass of the
// forward transforms that ntt_fwd_block_ks / ntt_fwd_block_moddown finish. Residue r of
// `in` (after the inverse's block pass; under prime r for the decomposition, in_prime for
// the mod-down) finishes its inverse, reduced to [0, q_in), in registers; then for each
// output prime o of the group's chunk, ld(in -> o) on those words and the forward's
// strided pass write residue r * coeff_modulus_size + o of values. The decomposition
// skips o = r (SEAL takes that residue from the target in NTT form). The output primes
// are split into `chunks` chunks of outs_per_group, each chunk its own work groups that
// repeat the inverse, so that a small batch (the mod-down's two residues) still spreads
// over the device. Work group `group` of the launch, over lmem (S * C words); without
// `active` its work items only pass the barriers. Every barrier's place depends on
// nothing but the kernel's arguments (the loop runs outs_per_group times in every group),
// so that a chained launch (chain.cl), whose groups learn their pass from a ticket, may
// call it: PoCL 3.1 miscompiles barriers under a condition it cannot prove uniform.
ALWAYS_INLINE void inv_fwd_strided_group(__global u64 *values, __global const u64 *root_powers,
                                         __global const u64 *params, uint coeff_modulus_size,
                                         __global const u64 *in, uint kind, uint in_prime,
                                         uint outs_per_group, uint chunks,
                                         __global const u64 *inv_root_powers,
                                         __local u64 *lmem, uint group, uint lid, bool active)
{
    const uint rc = group / GROUPS_PER_STRIDED_RESIDUE;
    const uint group_in_residue = group % GROUPS_PER_STRIDED_RESIDUE;
    const uint r = rc / chunks;
    const uint chunk = rc % chunks;
    const uint p_in = kind == LOAD_DECOMPOSE ? r : in_prime;
    __global const u64 *pr = params + p_in * PARAMS_STRIDE;
    const uint c = lid & (C - 1);
    const uint u = lid >> LOG_C;
    const size_t column = group_in_residue * C + c;
    __local u64 *lcol = lmem + c;
    u64 x[R];
    inv_strided_steps(x, in + (size_t)r * N + column, lcol,
                      (__global const ulong2 *)inv_root_powers + p_in * N, pr, u, active);
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++)
            x[i] = reduce_once(x[i], pr[0]);
    }
    const uint o_end = min((chunk + 1) * outs_per_group, coeff_modulus_size);
    for (uint j = 0; j < outs_per_group; j++) {
        const uint o = chunk * outs_per_group + j;
        const bool out = active && o < o_end && !(kind == LOAD_DECOMPOSE && o == r);
        // An idle transform reads the input prime's tables, in range.
        const uint p_out = out ? o : p_in;
        // The last reads of lmem (the inverse's, the previous transform's) are done.
        barrier(CLK_LOCAL_MEM_FENCE);
        load_op ld = prime_load(kind, params, p_in, p_out);
        u64 v[R];
        if (out) {
#pragma unroll
            for (uint i = 0; i < R; i++)
                v[i] = apply_load(ld, x[i]);
        }
        fwd_strided_steps(v, values + ((size_t)r * coeff_modulus_size + p_out) * N + column,
                          lcol, (__global const ulong2 *)root_powers + p_out * N,
                          params[p_out * PARAMS_STRIDE], u, out);
    }
}

__kernel __attribute__((reqd_work_group_size(STRIDED_WG, 1, 1)))
void ntt_inv_fwd_strided(__global u64 *restrict values, ulong values_at,
                         __global const u64 *restrict root_powers, ulong root_powers_at,
                         __global const u64 *restrict params, ulong params_at,
                         uint coeff_modulus_size, __global const u64 *restrict in, ulong in_at,
                         uint kind, uint in_prime, uint outs_per_group, uint chunks,
                         __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at)
{
    __local u64 lmem[S * C];
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    in += in_at;
    inv_root_powers += inv_root_powers_at;
    inv_fwd_strided_group(values, root_powers, params, coeff_modulus_size, in, kind, in_prime,
                          outs_per_group, chunks, inv_root_powers, lmem, (uint)get_group_id(0),
                          get_local_id(0), true);
}

#endif // LOG_S != 0
