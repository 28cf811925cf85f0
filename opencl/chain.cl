// Uses: arith.cl, ntt.cl, fused.cl
// A key switch in one launch: the five launches of a fused key switch with a two-pass
// layout (relinearize, or a rotation after its galois permutation) chained, and a
// rescale's three (moddown_chained, at the end), built after ntt.cl and fused.cl (whose
// passes these are, with KS_ROWS = 1), where the strided and block work groups have the
// same size. At small rings NVIDIA's OpenCL charges each launch more host time (~10 us)
// than the device needs for the pass, so one launch in place of five is what a key
// switch's host time is made of. A key switch in coefficient form (BFV's) chains four
// passes (ks_chained_coeff), and BFV's and BGV's multiply_plain in coefficient form three
// (multiply_plain_chained), below the others; a plain transform two (ntt_fwd_chained,
// ntt_inv_chained) and the transform of a sum three (ntt_fwd_sum_chained,
// ntt_inv_sum_chained), at the end.
// BFV multiplication's chained launches are behz_chain.cl's, built after this file.
//
// The passes, each over its own work groups:
//   0. (ks_chained_tensor only) SEAL's ckks_multiply of two ciphertexts of two polynomials
//      (tensor_group): the product's three polynomials, whose third is then the target and
//      whose first two are added to the result: a multiply and its relinearization;
//   1. the target's inverse, first pass (inv_block_gather_group), or a rotation's galois
//      permutation with it (inv_block_galois_group), or after pass 0 the inverse of the
//      third polynomial computed on its own loads (inv_block_tensor_target_group), which
//      so runs beside pass 0 instead of after it: t_target;
//   2. its second pass with the decomposition and the forward first passes
//      (inv_fwd_strided_group, LOAD_DECOMPOSE): between;
//   3. the forward block passes with the inner product with the key, and the special
//      prime's first inverse pass (ks_block_group): prod, last;
//   4. the mod-down's inverse second pass and forward first passes (md_kind: CKKS's and
//      BFV's rounding, LOAD_MODDOWN, or BGV's share, LOAD_MODDOWN_BGV with t, (t_r0, t_r1)
//      and inv_t = q_special^-1 mod t; fused.cl's load_op): md_between;
//   5. the mod-down's forward block passes and its division, into dst (moddown_block_group).
//      Only the subtrahend differs between the schemes (SEAL's switch_key_inplace: (prod
//      - NTT(r)) q_special^-1 + acc, r rounded or BGV's delta), and every output is
//      canonical, so one division serves both.
// Every buffer a pass writes is read only by later passes, and no pass writes what an
// earlier pass read but dst (pass 5), which passes 1 and 3 read only where the caller
// allows it (a rotation's source: read by pass 1 alone). Each pass waits for the one
// before it, but pass 1 after pass 0: pass 3, which reads pass 0's target, waits for
// both, and every pass after 3 waits, through the passes between, for 3.
//
// The passes' work groups are tickets (counter 0), taken in turn by the launch's work
// groups, each `per_group` times in a row (a launch of about as many groups as the device
// holds at once, so that no group holds a place on the device while it waits for a pass
// that has not started): tickets below end1 run pass 1's groups, below end2 pass 2's, and
// so on up to `tickets`; tickets past it do nothing. A ticket of pass p + 1 waits until
// every ticket of pass p (of its own key switch, in a launch of several: ks_chained_body)
// has counted itself done (counter p), and waits on nothing else; those tickets were taken
// earlier, by groups that hold them until they are done, and the lowest unfinished ticket
// waits on nothing: the wait ends on any device, however few groups it holds at once. The
// last group to finish (counter CHAIN_FINISHED) zeroes the counters for the next chained
// launch: the host gives each in-order queue its own counters, so chained launches never
// overlap on one set.
//
// On PoCL every ticket runs every pass's barriers (PoCL 3.1 miscompiles barriers under a
// condition it cannot prove uniform, and a ticket is such a condition): the passes take
// `active`, and a ticket that does not own a pass only passes its barriers. NVIDIA's
// compiler takes the ticket's pass as the uniform branch it is (CHAIN_SKIP_IDLE): a ticket
// runs its own pass's barriers only.
//
// A pass-p group's stores must reach every other group before it counts itself done, and
// a waiting group's loads must not pass its wait. Across work groups OpenCL 1.2's fences
// give no such order, so the host builds this only where it knows one that does. On NVIDIA
// (DEVICE_FENCE_PTX) PTX's release and acquire at GPU scope: after the group's barrier,
// work item 0 counts the group done with red.release.gpu, which publishes every store the
// barrier ordered before it (release is cumulative), and a waiting group's work item 0
// polls with ld.acquire.gpu, before a barrier that orders its group's loads after the wait
// (CUTLASS's semaphore; on the H200 a chained key switch at 2^13 took 34.3 us a call
// against 38.0 with membar.gl, a sequentially consistent fence, on both sides). On a CPU
// device (PoCL), whose work groups are threads over one coherent memory, mem_fence around
// OpenCL's atomics.

#if LOG_S != 0 && KS_ROWS == 1 && STRIDED_WG == BLOCK_WG

#ifdef DEVICE_FENCE_PTX
#define CHAIN_SKIP_IDLE
#endif

// Counter i at uint i * COUNTER_STRIDE: each in a 128-byte line of its own, so that the
// tickets' atomics, a pass's done counts and the waiting groups' polls do not queue on one
// line (CHAIN_COUNTER_WORDS u64 words on the host).
#define COUNTER_STRIDE 32
#define COUNTER(counters, i) ((counters)[(i) * COUNTER_STRIDE])

// Between two polls of a waiting group: on NVIDIA about 256 cycles of the SM's clock
// without touching memory, so that the many groups waiting for a pass leave the memory
// system to the groups that run it.
ALWAYS_INLINE void chain_pause(void)
{
#ifdef DEVICE_FENCE_PTX
    uint start, now;
    __asm__ volatile("mov.u32 %0, %%clock;" : "=r"(start));
    do {
        __asm__ volatile("mov.u32 %0, %%clock;" : "=r"(now));
    } while (now - start < 256u);
#endif
}

// Pass p's call, with the ticket's group index where it owns pass p (`active`), else as the
// pass's first group, inactive (every index in range); skipped where it does not own it
// and the compiler takes the branch as uniform.
#define OWN(p) (pass == (p) ? g : 0), lid, pass == (p)
#ifdef CHAIN_SKIP_IDLE
#define RUN(p, call)                                                                     \
    if (pass == (p)) {                                                                   \
        call;                                                                            \
    }
#else
#define RUN(p, call) call;
#endif

// A work group's turns: per_group tickets in a row where the compiler takes the loop as
// uniform (NVIDIA's); one on PoCL, whose build of a loop around barriers miscompiles
// (wrong words even when it runs once), and where the host launches one work group per
// ticket.
#ifdef CHAIN_SKIP_IDLE
#define EACH_TURN(per_group) for (uint turn = 0; turn < (per_group); turn++)
#else
#define EACH_TURN(per_group)
#endif

// The counter the groups count themselves finished on: past every hand-over's counter of
// the longest chain (ks_chained_tensor's six passes hand over on counters 1 to 5); eight
// counters in all (CHAIN_COUNTER_WORDS).
#define CHAIN_FINISHED 7
#if S * C > B * PADDED_G
#define CHAIN_WORDS (S * C)
#else
#define CHAIN_WORDS (B * PADDED_G)
#endif

// The group's next ticket, the same in all its work items. Every work item has read the
// last one from `slot` before (a barrier lies between).
ALWAYS_INLINE uint chain_ticket(volatile __global uint *counters, __local uint *slot)
{
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        *slot = atomic_inc(&COUNTER(counters, 0));
    barrier(CLK_LOCAL_MEM_FENCE);
    return *slot;
}

// The pass a ticket owns (0: none, past the last) and its group in that pass, from the
// passes' ends (ends[P - 1] = tickets).
ALWAYS_INLINE uint chain_pass(uint ticket, const uint *ends, uint passes, uint *g)
{
    uint start = 0;
    for (uint p = 0; p < passes; p++) {
        if (ticket < ends[p]) {
            *g = ticket - start;
            return p + 1;
        }
        start = ends[p];
    }
    *g = 0;
    return 0;
}

// Counts the calling group done on `counter` (work item 0, after a barrier that every
// work item of the group passed after its stores): the stores reach every group that
// reads the count.
ALWAYS_INLINE void chain_signal(volatile __global uint *counter)
{
#ifdef DEVICE_FENCE_PTX
    __asm__ volatile("red.release.gpu.global.add.u32 [%0], 1;" ::"l"(counter) : "memory");
#else
    mem_fence(CLK_GLOBAL_MEM_FENCE);
    atomic_inc(counter);
#endif
}

// Waits until `groups` groups have signalled `counter` (work item 0, before a barrier):
// what they stored before signalling is what the group's loads after the barrier see.
ALWAYS_INLINE void chain_wait(volatile __global uint *counter, uint groups)
{
#ifdef DEVICE_FENCE_PTX
    for (;;) {
        uint seen;
        __asm__ volatile("ld.acquire.gpu.global.u32 %0, [%1];"
                         : "=r"(seen)
                         : "l"(counter)
                         : "memory");
        if (seen >= groups)
            return;
        chain_pause();
    }
#else
    while (*counter < groups)
        chain_pause();
    mem_fence(CLK_GLOBAL_MEM_FENCE);
#endif
}

// After pass p: its groups count themselves done once their stores reach every group;
// the groups of pass p + 1 wait for all `groups` of them, and, where `also_groups` is not
// 0, for that many groups of the earlier pass `also` (a pass p + 1 that reads what an
// earlier pass wrote, with no pass between them that waited for it). Every work item of
// every group passes the same barriers.
ALWAYS_INLINE void chain_hand_over_also(volatile __global uint *counters, uint p, uint groups,
                                        uint also, uint also_groups, uint pass)
{
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == 0) {
        if (pass == p) {
            chain_signal(&COUNTER(counters, p));
        } else if (pass == p + 1) {
            chain_wait(&COUNTER(counters, p), groups);
            if (also_groups != 0)
                chain_wait(&COUNTER(counters, also), also_groups);
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
}

ALWAYS_INLINE void chain_hand_over(volatile __global uint *counters, uint p, uint groups,
                                   uint pass)
{
    chain_hand_over_also(counters, p, groups, 0, 0, pass);
}

// Pass p's groups count themselves done; no pass waits here (a later one waits for them
// with chain_hand_over_also).
ALWAYS_INLINE void chain_done(volatile __global uint *counters, uint p, uint pass)
{
    barrier(CLK_LOCAL_MEM_FENCE | CLK_GLOBAL_MEM_FENCE);
    if (get_local_id(0) == 0 && pass == p)
        chain_signal(&COUNTER(counters, p));
}

// The last of `groups` groups to get here zeroes the counters of the first `sets` counter
// sets (CHAIN_FINISHED + 1 counters each; see job_counters).
ALWAYS_INLINE void chain_finish_sets(volatile __global uint *counters, uint groups, uint sets)
{
    if (get_local_id(0) == 0 && atomic_inc(&COUNTER(counters, CHAIN_FINISHED)) == groups - 1) {
        for (uint i = 0; i < sets * (CHAIN_FINISHED + 1); i++)
            atomic_xchg(&COUNTER(counters, i), 0u);
    }
}

ALWAYS_INLINE void chain_finish(volatile __global uint *counters, uint groups)
{
    chain_finish_sets(counters, groups, 1);
}

// The groups of pass i + 1 of a launch whose passes end at ends[0], ends[1], ...
#define PASS_GROUPS(ends, i) ((ends)[i] - ((i) ? (ends)[(i) - 1] : 0u))

// The chained key switch at level K = coeff_modulus_size: the arguments of the five
// launches it replaces (FusedPasses::forward_key_switch and forward_moddown), galois or
// not (pass 1: the galois of galois_src, a sum, or with times_plain of its one term times
// factor; else the target, src from src_first), after the tensor product
// of ta and tb into dst (pass 0, with `tensor`: dst then holds the product, whose third
// polynomial is src's target and whose first two are acc), and the passes' ends (ends[0] <
// ends[1] < ... < ends[passes - 1] = tickets, passes = 5, 6 with the tensor); each work
// group takes per_group tickets. `counters` are the queue's (CHAIN_FINISHED + 1 counters,
// COUNTER_STRIDE apart).
//
// With the tensor or a galois permutation, the launch may carry up to KS_JOBS_MAX
// independent key switches (`jobs`). Job 0's buffers are the launch's own; job j's:
// - tensor: products more.a[j - 1] and more.b[j - 1] into more.dst[j - 1], all with the
//   same key;
// - galois: the rotation of the one ciphertext more.a[j - 1], times the plaintext
//   more.b[j - 1] where bit j of more.plain_jobs is set, by more.galois_elt[j - 1] with key
//   more.key[j - 1] into more.dst[j - 1], permuted 2 K residues a job.
// Every pass then has `jobs` times one job's groups, job j's the j-th share of them, and
// job j's intermediates lie j job sizes into values (K residues a job), between (K (K +
// 1)), prod (2 K), last (2) and md_between (2 K). Each job hands over on counters of its
// own (job_counters): a job's pass waits only for that job's groups of the pass before,
// so that while one job's pass drains (a hand-over is half of a key switch's time at N =
// 2^13 in a launch of one) the device runs another job's next pass. The tickets still
// come pass by pass, every job's groups of a pass before any of the next, and a ticket
// waits only for tickets taken before it. Each job writes only its own words, so its words
// are those of a launch of its own. (KS_JOBS_MAX and JOB_PICK: fused.cl.)
// Job j's hand-over counters: the j-th set of CHAIN_FINISHED + 1 counters (the host holds
// KS_JOBS_MAX sets, CHAIN_COUNTER_WORDS); job 0's are the launch's own, and its counters 0
// (tickets) and CHAIN_FINISHED (finished groups) serve the whole launch.
ALWAYS_INLINE volatile __global uint *job_counters(volatile __global uint *counters, uint job)
{
    return counters + (size_t)job * (CHAIN_FINISHED + 1) * COUNTER_STRIDE;
}

// Jobs 1 to KS_JOBS_MAX - 1 of a launch of several (see ks_chained_body): key,
// galois_elt and plain_jobs are a galois launch's.
typedef struct {
    __global const u64 *a[KS_JOBS_MAX - 1];
    __global const u64 *b[KS_JOBS_MAX - 1];
    __global u64 *dst[KS_JOBS_MAX - 1];
    __global const u64 *key[KS_JOBS_MAX - 1];
    uint galois_elt[KS_JOBS_MAX - 1];
    uint plain_jobs;
} ks_more_jobs;

// No jobs past the first (every launch but a tensor launch of several).
ALWAYS_INLINE ks_more_jobs no_more_jobs(void)
{
    const ks_more_jobs none = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 0};
    return none;
}

ALWAYS_INLINE void ks_chained_body(
    const bool galois, const bool tensor, __global u64 *values,
    __global const u64 *root_powers, __global const u64 *params, uint coeff_modulus_size,
    __global const u64 *inv_root_powers, __global const u64 *ta, __global const u64 *tb,
    __global const u64 *src, uint src_first, sum_src galois_src, __global const u64 *factor,
    const bool times_plain,
    uint galois_elt, __global u64 *permuted,
    __global u64 *between, uint ks_outs, uint ks_chunks, __global const u64 *target,
    uint target_first, __global const u64 *key, uint key_stride_primes,
    uint key_special_index, uint reduce_every, __global u64 *prod, __global u64 *last,
    __global u64 *md_between, uint md_outs, uint md_chunks, __global u64 *dst,
    uint dst_stride, __global const u64 *inv, __global const u64 *acc, uint acc_polys,
    uint md_kind, bgv_plain md_plain, volatile __global uint *counters, const uint *ends,
    uint per_group, const uint jobs, const ks_more_jobs more, __local u64 *lmem,
    __local ulong2 *lroots, __local uint *slot)
{
    const uint K = coeff_modulus_size;
    const uint lid = get_local_id(0);
    // The key switch's passes are 1 to 5 after a tensor pass 0, else 0 to 4 (p + 1 is
    // pass p's number as chain_pass gives it).
    const uint o = tensor ? 1 : 0;
    __global u64 *const values0 = values, *const between0 = between, *const prod0 = prod;
    __global u64 *const last0 = last, *const md_between0 = md_between, *const dst0 = dst;
    __global const u64 *const ta0 = ta, *const tb0 = tb;
    EACH_TURN(per_group) {
        uint g;
        const uint pass = chain_pass(chain_ticket(counters, slot), ends, 5 + o, &g);
        // The ticket's job and its group in that job's share of the pass (a rotation's own
        // arguments are picked where they are used).
        uint job = 0;
        volatile __global uint *hand = counters;
        if (jobs > 1) {
            const uint share = pass == 0 ? 1 : PASS_GROUPS(ends, pass - 1) / jobs;
            job = g / share;
            g -= job * share;
            hand = job_counters(counters, job);
            values = values0 + (size_t)job * K * N;
            between = between0 + (size_t)job * K * (K + 1) * N;
            prod = prod0 + (size_t)job * 2 * K * N;
            last = last0 + (size_t)job * 2 * N;
            md_between = md_between0 + (size_t)job * 2 * K * N;
            dst = JOB_PICK(job, dst0, more.dst);
            if (tensor) {
                ta = JOB_PICK(job, ta0, more.a);
                tb = JOB_PICK(job, tb0, more.b);
                src = target = acc = dst;
            }
        }
        if (tensor) {
            // The target's inverse computes the third polynomial itself, so pass 2 runs
            // beside the tensor product; the key-switching pass, which reads the target in
            // NTT form from dst, waits for both (below), and every later pass after it.
            RUN(1, tensor_group(dst, ta, tb, params, K, OWN(1)))
            chain_done(hand, 1, pass);
            RUN(2, inv_block_tensor_target_group(values, inv_root_powers, params, K, ta, tb,
                                                 lmem, OWN(2)))
        } else if (galois) {
            RUN(o + 1, inv_block_galois_group(
                           values, inv_root_powers, params, K, 1,
                           job == 0 ? galois_src : sum_src_one(JOB_PICK(job, 0, more.a)),
                           JOB_PICK(job, factor, more.b),
                           job == 0 ? times_plain : ((more.plain_jobs >> job) & 1) != 0,
                           JOB_PICK(job, galois_elt, more.galois_elt),
                           permuted + (size_t)job * 2 * K * N, K, lmem, OWN(o + 1)))
        } else {
            RUN(o + 1, inv_block_gather_group(values, inv_root_powers, params, K, 1, src, K,
                                              src_first, lmem, OWN(o + 1)))
        }
        chain_hand_over(hand, o + 1, PASS_GROUPS(ends, o) / jobs, pass);
        RUN(o + 2, inv_fwd_strided_group(between, root_powers, params, K + 1, values,
                                         LOAD_DECOMPOSE, 0, no_plain(), false, ks_outs, ks_chunks,
                                         inv_root_powers, lmem, OWN(o + 2)))
        chain_hand_over_also(hand, o + 2, PASS_GROUPS(ends, o + 1) / jobs, 1,
                             tensor ? PASS_GROUPS(ends, 0) / jobs : 0, pass);
        // A rotation's target and addend: its job's permuted pair.
        RUN(o + 3, ks_block_group(between, root_powers, params, K + 1, values,
                                  galois ? permuted + (size_t)job * 2 * K * N : target,
                                  target_first, false, galois ? JOB_PICK(job, key, more.key) : key,
                                  key_stride_primes, key_special_index, reduce_every, prod, last,
                                  false, inv_root_powers, lmem, lroots, OWN(o + 3)))
        chain_hand_over(hand, o + 3, PASS_GROUPS(ends, o + 2) / jobs, pass);
        RUN(o + 4, inv_fwd_strided_group(md_between, root_powers, params, K, last,
                                         md_kind, K, md_plain, false, md_outs, md_chunks,
                                         inv_root_powers, lmem, OWN(o + 4)))
        chain_hand_over(hand, o + 4, PASS_GROUPS(ends, o + 3) / jobs, pass);
        RUN(o + 5, moddown_block_group(md_between, root_powers, params, K, last, K, dst,
                                       dst_stride, prod, K, inv,
                                       galois ? permuted + (size_t)job * 2 * K * N : acc,
                                       acc_polys, lmem, OWN(o + 5)))
    }
    chain_finish_sets(counters, (uint)get_num_groups(0), jobs);
}

// SEAL's switch_key_inplace of a target polynomial of K residues in NTT form (residues
// src_first .. src_first + K - 1 of src; also `target`, target_first) into dst.
__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ks_chained(__global u64 *restrict values, ulong values_at,
                __global const u64 *restrict root_powers, ulong root_powers_at,
                __global const u64 *restrict params, ulong params_at, uint coeff_modulus_size,
                __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                __global const u64 *src, ulong src_at, uint src_first,
                __global u64 *between, ulong between_at, uint ks_outs, uint ks_chunks,
                __global const u64 *target, ulong target_at, uint target_first,
                __global const u64 *restrict key, ulong key_at, uint key_stride_primes,
                uint key_special_index, uint reduce_every,
                __global u64 *prod, ulong prod_at, __global u64 *last, ulong last_at,
                __global u64 *md_between, ulong md_between_at, uint md_outs, uint md_chunks,
                __global u64 *dst, ulong dst_at, uint dst_stride,
                __global const u64 *restrict inv, ulong inv_at,
                __global const u64 *acc, ulong acc_at, uint acc_polys,
                uint md_kind, ulong t, ulong t_r0, ulong t_r1, ulong inv_t,
                __global u64 *counters, ulong counters_at,
                uint end1, uint end2, uint end3, uint end4, uint tickets, uint per_group)
{
    __local u64 lmem[CHAIN_WORDS];
#if KS_LOCAL_ROOTS
    __local ulong2 lroots[B * G];
#else
    __local ulong2 *lroots = 0;
#endif
    __local uint slot;
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    inv_root_powers += inv_root_powers_at;
    src += src_at;
    between += between_at;
    target += target_at;
    key += key_at;
    prod += prod_at;
    last += last_at;
    md_between += md_between_at;
    dst += dst_at;
    inv += inv_at;
    acc += acc_at;
    counters += counters_at;
    const uint ends[5] = {end1, end2, end3, end4, tickets};
    ks_chained_body(false, false, values, root_powers, params, coeff_modulus_size, inv_root_powers,
                    0, 0, src, src_first, sum_src_one(src), 0, false, 0, 0, between, ks_outs,
                    ks_chunks, target, target_first, key, key_stride_primes, key_special_index,
                    reduce_every, prod, last, md_between, md_outs, md_chunks, dst, dst_stride, inv,
                    acc, acc_polys, md_kind, bgv_plain_of(t, t_r0, t_r1, inv_t),
                    (volatile __global uint *)counters, ends, per_group, 1, no_more_jobs(), lmem,
                    lroots, &slot);
}

// SEAL's apply_galois_ntt with galois_elt on both polynomials of src (K residues each, in
// NTT form; the sum of src0 .. src7 as sum_src reads it, unshifted: SEAL's adds and subs
// of them, then the rotation of the sum) into `permuted`, then the key switch of
// permuted's second polynomial into dst, plus permuted's first: a rotation. With
// times_plain (1; else 0, and plain is not read) src (one term) times the plaintext `plain`
// (K residues in NTT form) is rotated: SEAL's multiply_plain_ntt and the rotation of its
// product (inv_block_galois_group). With `jobs` > 1 (at most KS_JOBS_MAX) the same for the
// rotation of ciphertext job_src1 (times the plaintext job_plain1 where bit 1 of plain_jobs
// is set) by galois_elt1 with job_key1 into dst1 .. up to job jobs - 1, independent of job
// 0 and of each other (see ks_chained_body); the intermediates and permuted hold `jobs`
// jobs' and the ends count every job's groups.
__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ks_chained_galois(__global u64 *restrict values, ulong values_at,
                       __global const u64 *restrict root_powers, ulong root_powers_at,
                       __global const u64 *restrict params, ulong params_at,
                       uint coeff_modulus_size,
                       __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                       __global const u64 *src0, ulong src0_at,
                       __global const u64 *src1, ulong src1_at,
                       __global const u64 *src2, ulong src2_at,
                       __global const u64 *src3, ulong src3_at,
                       __global const u64 *src4, ulong src4_at,
                       __global const u64 *src5, ulong src5_at,
                       __global const u64 *src6, ulong src6_at,
                       __global const u64 *src7, ulong src7_at,
                       uint src_terms, uint src_negate, ulong src_shifts_lo,
                       ulong src_shifts_hi,
                       __global const u64 *plain, ulong plain_at, uint times_plain,
                       uint galois_elt, __global u64 *permuted, ulong permuted_at,
                       __global u64 *between, ulong between_at, uint ks_outs, uint ks_chunks,
                       __global const u64 *restrict key, ulong key_at, uint key_stride_primes,
                       uint key_special_index, uint reduce_every,
                       __global u64 *prod, ulong prod_at, __global u64 *last, ulong last_at,
                       __global u64 *md_between, ulong md_between_at, uint md_outs,
                       uint md_chunks, __global u64 *dst, ulong dst_at,
                       __global const u64 *restrict inv, ulong inv_at,
                       uint md_kind, ulong t, ulong t_r0, ulong t_r1, ulong inv_t,
                       uint jobs, uint plain_jobs, __global const u64 *job_src1,
                       ulong job_src1_at, __global const u64 *job_plain1, ulong job_plain1_at,
                       __global const u64 *job_key1, ulong job_key1_at, uint galois_elt1,
                       __global u64 *dst1, ulong dst1_at, __global const u64 *job_src2,
                       ulong job_src2_at, __global const u64 *job_plain2, ulong job_plain2_at,
                       __global const u64 *job_key2, ulong job_key2_at, uint galois_elt2,
                       __global u64 *dst2, ulong dst2_at, __global const u64 *job_src3,
                       ulong job_src3_at, __global const u64 *job_plain3, ulong job_plain3_at,
                       __global const u64 *job_key3, ulong job_key3_at, uint galois_elt3,
                       __global u64 *dst3, ulong dst3_at,
                       __global u64 *counters, ulong counters_at,
                       uint end1, uint end2, uint end3, uint end4, uint tickets,
                       uint per_group)
{
    __local u64 lmem[CHAIN_WORDS];
#if KS_LOCAL_ROOTS
    __local ulong2 lroots[B * G];
#else
    __local ulong2 *lroots = 0;
#endif
    __local uint slot;
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    inv_root_powers += inv_root_powers_at;
    src0 += src0_at;
    src1 += src1_at;
    src2 += src2_at;
    src3 += src3_at;
    src4 += src4_at;
    src5 += src5_at;
    src6 += src6_at;
    src7 += src7_at;
    plain += plain_at;
    permuted += permuted_at;
    between += between_at;
    key += key_at;
    prod += prod_at;
    last += last_at;
    md_between += md_between_at;
    dst += dst_at;
    inv += inv_at;
    counters += counters_at;
    const uint K = coeff_modulus_size;
    const uint ends[5] = {end1, end2, end3, end4, tickets};
    const sum_src src = sum_src_of(src0, src1, src2, src3, src4, src5, src6, src7, src_terms,
                                   src_negate, src_shifts_lo, src_shifts_hi);
    job_src1 += job_src1_at;
    job_plain1 += job_plain1_at;
    job_key1 += job_key1_at;
    dst1 += dst1_at;
    job_src2 += job_src2_at;
    job_plain2 += job_plain2_at;
    job_key2 += job_key2_at;
    dst2 += dst2_at;
    job_src3 += job_src3_at;
    job_plain3 += job_plain3_at;
    job_key3 += job_key3_at;
    dst3 += dst3_at;
    const ks_more_jobs more = {{job_src1, job_src2, job_src3},
                               {job_plain1, job_plain2, job_plain3},
                               {dst1, dst2, dst3},
                               {job_key1, job_key2, job_key3},
                               {galois_elt1, galois_elt2, galois_elt3},
                               plain_jobs};
    ks_chained_body(true, false, values, root_powers, params, K, inv_root_powers, 0, 0, src0, 0,
                    src, plain, times_plain != 0, galois_elt, permuted, between, ks_outs, ks_chunks,
                    permuted, K, key, key_stride_primes, key_special_index, reduce_every, prod,
                    last, md_between, md_outs, md_chunks, dst, K, inv, permuted, 1, md_kind,
                    bgv_plain_of(t, t_r0, t_r1, inv_t), (volatile __global uint *)counters, ends,
                    per_group, jobs, more, lmem, lroots, &slot);
}

// SEAL's ckks_multiply of a and b (two polynomials of K residues each in NTT form; a may
// be b) into dst's three polynomials, then relinearize_internal's key switch of the third
// into the first two: a multiply and its relinearization in one launch. With `jobs` > 1
// (at most KS_JOBS_MAX) the same for (a1, b1, dst1) .. up to job jobs - 1, independent of
// job 0 and of each other (see ks_chained_body); the intermediates hold `jobs` jobs' and
// the ends count every job's groups.
__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ks_chained_tensor(__global u64 *restrict values, ulong values_at,
                       __global const u64 *restrict root_powers, ulong root_powers_at,
                       __global const u64 *restrict params, ulong params_at,
                       uint coeff_modulus_size,
                       __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                       __global const u64 *a, ulong a_at, __global const u64 *b, ulong b_at,
                       __global u64 *between, ulong between_at, uint ks_outs, uint ks_chunks,
                       __global const u64 *restrict key, ulong key_at, uint key_stride_primes,
                       uint key_special_index, uint reduce_every,
                       __global u64 *prod, ulong prod_at, __global u64 *last, ulong last_at,
                       __global u64 *md_between, ulong md_between_at, uint md_outs,
                       uint md_chunks, __global u64 *dst, ulong dst_at,
                       __global const u64 *restrict inv, ulong inv_at,
                       uint md_kind, ulong t, ulong t_r0, ulong t_r1, ulong inv_t,
                       uint jobs, __global const u64 *a1, ulong a1_at,
                       __global const u64 *b1, ulong b1_at, __global u64 *dst1, ulong dst1_at,
                       __global const u64 *a2, ulong a2_at, __global const u64 *b2, ulong b2_at,
                       __global u64 *dst2, ulong dst2_at, __global const u64 *a3, ulong a3_at,
                       __global const u64 *b3, ulong b3_at, __global u64 *dst3, ulong dst3_at,
                       __global u64 *counters, ulong counters_at, uint end0, uint end1,
                       uint end2, uint end3, uint end4, uint tickets, uint per_group)
{
    __local u64 lmem[CHAIN_WORDS];
#if KS_LOCAL_ROOTS
    __local ulong2 lroots[B * G];
#else
    __local ulong2 *lroots = 0;
#endif
    __local uint slot;
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    inv_root_powers += inv_root_powers_at;
    a += a_at;
    b += b_at;
    between += between_at;
    key += key_at;
    prod += prod_at;
    last += last_at;
    md_between += md_between_at;
    dst += dst_at;
    inv += inv_at;
    counters += counters_at;
    const uint K = coeff_modulus_size;
    const uint ends[6] = {end0, end1, end2, end3, end4, tickets};
    a1 += a1_at;
    b1 += b1_at;
    dst1 += dst1_at;
    a2 += a2_at;
    b2 += b2_at;
    dst2 += dst2_at;
    a3 += a3_at;
    b3 += b3_at;
    dst3 += dst3_at;
    const ks_more_jobs more = {
        {a1, a2, a3}, {b1, b2, b3}, {dst1, dst2, dst3}, {0, 0, 0}, {0, 0, 0}, 0};
    ks_chained_body(false, true, values, root_powers, params, K, inv_root_powers, a, b, dst, 2 * K,
                    sum_src_one(dst), 0, false, 0, 0, between, ks_outs, ks_chunks, dst, 2 * K, key,
                    key_stride_primes, key_special_index, reduce_every, prod, last, md_between,
                    md_outs, md_chunks, dst, K, inv, dst, 2, md_kind,
                    bgv_plain_of(t, t_r0, t_r1, inv_t), (volatile __global uint *)counters, ends,
                    per_group, jobs, more, lmem, lroots, &slot);
}


// SEAL's GaloisTool::apply_galois in coefficient form (integer.cl's integer_apply_galois,
// the same words) on block group `group` of a launch over residues of src (a sum, read on
// load): coefficient i of residue r (prime r % coeff_modulus_size) goes to index (i *
// galois_elt) mod N of residue r of dst, negated mod q where (i * galois_elt) mod 2N >= N
// (X^N = -1; SEAL negates 0 to 0). galois_elt is odd and < 2N, so every word of dst is
// written once. dst is none of src's terms. No barriers; `lid` and `active` as in
// fwd_block_steps.
ALWAYS_INLINE void galois_coeff_group(__global u64 *dst, sum_src src,
                                      __global const u64 *params, uint coeff_modulus_size,
                                      uint galois_elt, uint group, uint lid, bool active)
{
    if (!active)
        return;
    const uint residue = group / GROUPS_PER_BLOCK_RESIDUE;
    const uint first = (group % GROUPS_PER_BLOCK_RESIDUE) * (B * G);
    const u64 q = params[(residue % coeff_modulus_size) * PARAMS_STRIDE];
    __global u64 *out = dst + (size_t)residue * N;
#pragma unroll
    for (uint i = 0; i < R; i++) {
        const uint k = first + lid + i * BLOCK_WG;
        // k < 2^17 and galois_elt < 2^18: the product fits 64 bits.
        const ulong raw = (ulong)k * galois_elt;
        u64 v = load_sum(src, (size_t)residue * N + k, q, 8);
        if ((raw >> LOG_N) & 1)
            v = negate_uint_mod(v, q);
        out[raw & (N - 1)] = v;
    }
}

// The inverse's strided pass of residue r (prime r % coeff_modulus_size) of `in`, after
// its block pass, fully reduced, into residue r of dst (not `in`). Work group `group`
// over lmem (S * C words); `lid` and `active` as in fwd_block_steps.
ALWAYS_INLINE void inv_strided_into_group(__global u64 *dst, __global const u64 *in,
                                          __global const u64 *params, uint coeff_modulus_size,
                                          __global const u64 *inv_root_powers,
                                          __local u64 *lmem, uint group, uint lid, bool active)
{
    const uint r = group / GROUPS_PER_STRIDED_RESIDUE;
    const uint prime = r % coeff_modulus_size;
    __global const u64 *pr = params + prime * PARAMS_STRIDE;
    const uint c = lid & (C - 1);
    const uint u = lid >> LOG_C;
    const size_t column = (size_t)r * N + (group % GROUPS_PER_STRIDED_RESIDUE) * C + c;
    u64 x[R];
    inv_strided_steps(x, in + column, lmem + c,
                      (__global const ulong2 *)inv_root_powers + prime * N, pr, u, active);
    if (!active)
        return;
    const u64 q = pr[0];
#pragma unroll
    for (uint i = 0; i < R; i++) {
        // Where the inverse's steps leave register i (see inv_strided_steps).
        const size_t word = column + (size_t)step_pos(LOG_R, LOG_S - LOG_R, u, S / R, i) * G;
        dst[word] = reduce_once(x[i], q);
    }
}

// The mod-down's end in coefficient form: the inverse's strided pass of residue r = p *
// coeff_modulus_size + i (prime i) of a key switch's pair (prod, after its block pass) and
// of the special prime's residue p (last, after its block pass under params' prime
// coeff_modulus_size), both over the group's columns, then, word by word,
//     dst[r] = (x - sub(s)) * q_special^-1 + acc[r] mod q_i
// x prod's coefficient, s the special one and sub md_kind's subtrahend under q_i
// (apply_load: the rounded special coefficient, or BGV's delta with md_plain), plus acc
// for the first acc_polys polynomials: SEAL's switch_key_inplace from its "modulus
// switching with scaling" on, in coefficient form. Every special column is transformed
// by the coeff_modulus_size groups that need it. dst may be acc (each word is read, then
// written, by one work item); neither is prod or last. Work group `group` over lmem (S * C
// words); `lid` and `active` as in fwd_block_steps.
ALWAYS_INLINE void inv_strided_moddown_group(__global u64 *dst, __global const u64 *prod,
                                             __global const u64 *last,
                                             __global const u64 *params,
                                             uint coeff_modulus_size,
                                             __global const u64 *inv_root_powers,
                                             __global const u64 *inv, uint md_kind,
                                             bgv_plain md_plain, __global const u64 *acc,
                                             uint acc_polys, __local u64 *lmem, uint group,
                                             uint lid, bool active)
{
    const uint K = coeff_modulus_size;
    const uint r = group / GROUPS_PER_STRIDED_RESIDUE;
    const uint poly = r / K;
    const uint prime = r % K;
    const bool add = poly < acc_polys;
    __global const u64 *pr = params + prime * PARAMS_STRIDE;
    __global const ulong2 *iw = (__global const ulong2 *)inv_root_powers;
    const uint c = lid & (C - 1);
    const uint u = lid >> LOG_C;
    const size_t column = (group % GROUPS_PER_STRIDED_RESIDUE) * C + c;
    u64 s[R], x[R];
    inv_strided_steps(s, last + (size_t)poly * N + column, lmem + c, iw + (size_t)K * N,
                      params + K * PARAMS_STRIDE, u, active);
    // The special transform's last reads of lmem are done before the next one writes it.
    barrier(CLK_LOCAL_MEM_FENCE);
    inv_strided_steps(x, prod + (size_t)r * N + column, lmem + c, iw + (size_t)prime * N, pr, u,
                      active);
    if (!active)
        return;
    const load_op ld = prime_load(md_kind, params, K, prime, md_plain);
    const u64 q = pr[0], inv_i = inv[2 * prime], inv_i_q = inv[2 * prime + 1];
#pragma unroll
    for (uint i = 0; i < R; i++) {
        // Where the inverse's steps leave register i (see inv_strided_steps).
        const size_t word =
            (size_t)r * N + column + (size_t)step_pos(LOG_R, LOG_S - LOG_R, u, S / R, i) * G;
        const u64 y = moddown_finish(reduce_once(x[i], q), apply_load(ld, s[i]), inv_i, inv_i_q, q);
        dst[word] = add ? add_uint_mod(acc[word], y, q) : y;
    }
}

// SEAL's switch_key_inplace of a target in coefficient form, as SEAL keeps BFV's
// ciphertexts, in one launch of four passes (tickets below end1 run pass 1, below end2
// pass 2, below end3 pass 3, below `tickets` pass 4):
//   1. a rotation's permutation (galois_coeff_group) of both polynomials of src (K residues
//      each; the sum of src0 .. src7 as sum_src reads it) into permuted, whose second
//      polynomial is then the target and whose first the addend; a relinearization has none
//      (end1 = 0, and the sources, galois_elt and permuted are not read);
//   2. the decomposition and the forward first passes, from the target's coefficients
//      (residues target_first .. target_first + K - 1 of target; inv_fwd_strided_group with
//      coeff_in): values;
//   3. the forward block passes with the inner product with the key, and the inverse's
//      first pass of every row (ks_block_group with coeff_target and inverse_rows): prod
//      (the K data primes' rows), last (the special prime's);
//   4. the inverse's second passes and the division in coefficient form, plus acc's first
//      acc_polys polynomials, into dst (inv_strided_moddown_group).
// These are SEAL's steps: it too divides in coefficient form, (INTT(prod) - r) q_special^-1
// + acc mod q_i, r the rounded special residue (BGV's delta with md_kind LOAD_MODDOWN_BGV:
// SEAL 4.0's BGV in coefficient form). Every buffer a pass writes is read only by later
// passes; dst, written by pass 4 alone, may hold the target (a relinearization's, after
// dst's two polynomials), be acc or a source.
__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ks_chained_coeff(__global u64 *restrict values, ulong values_at,
                      __global const u64 *restrict root_powers, ulong root_powers_at,
                      __global const u64 *restrict params, ulong params_at,
                      uint coeff_modulus_size,
                      __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                      __global const u64 *src0, ulong src0_at,
                      __global const u64 *src1, ulong src1_at,
                      __global const u64 *src2, ulong src2_at,
                      __global const u64 *src3, ulong src3_at,
                      __global const u64 *src4, ulong src4_at,
                      __global const u64 *src5, ulong src5_at,
                      __global const u64 *src6, ulong src6_at,
                      __global const u64 *src7, ulong src7_at,
                      uint src_terms, uint src_negate, ulong src_shifts_lo,
                      ulong src_shifts_hi, uint galois_elt,
                      __global u64 *permuted, ulong permuted_at,
                      __global const u64 *target, ulong target_at, uint target_first,
                      uint ks_outs, uint ks_chunks,
                      __global const u64 *restrict key, ulong key_at, uint key_stride_primes,
                      uint key_special_index, uint reduce_every,
                      __global u64 *prod, ulong prod_at, __global u64 *last, ulong last_at,
                      __global u64 *dst, ulong dst_at,
                      __global const u64 *restrict inv, ulong inv_at,
                      __global const u64 *acc, ulong acc_at, uint acc_polys,
                      uint md_kind, ulong t, ulong t_r0, ulong t_r1, ulong inv_t,
                      __global u64 *counters, ulong counters_at, uint end1, uint end2,
                      uint end3, uint tickets, uint per_group)
{
    __local u64 lmem[CHAIN_WORDS];
#if KS_LOCAL_ROOTS
    __local ulong2 lroots[B * G];
#else
    __local ulong2 *lroots = 0;
#endif
    __local uint slot;
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    inv_root_powers += inv_root_powers_at;
    src0 += src0_at;
    src1 += src1_at;
    src2 += src2_at;
    src3 += src3_at;
    src4 += src4_at;
    src5 += src5_at;
    src6 += src6_at;
    src7 += src7_at;
    const sum_src src = sum_src_of(src0, src1, src2, src3, src4, src5, src6, src7, src_terms,
                                   src_negate, src_shifts_lo, src_shifts_hi);
    permuted += permuted_at;
    target += target_at;
    key += key_at;
    prod += prod_at;
    last += last_at;
    dst += dst_at;
    inv += inv_at;
    acc += acc_at;
    counters += counters_at;
    volatile __global uint *count = (volatile __global uint *)counters;
    const uint K = coeff_modulus_size;
    const uint lid = get_local_id(0);
    const uint ends[4] = {end1, end2, end3, tickets};
    EACH_TURN(per_group) {
        uint g;
        const uint pass = chain_pass(chain_ticket(count, &slot), ends, 4, &g);
        RUN(1, galois_coeff_group(permuted, src, params, K, galois_elt, OWN(1)))
        chain_hand_over(count, 1, end1, pass);
        RUN(2, inv_fwd_strided_group(values, root_powers, params, K + 1,
                                     target + (size_t)target_first * N, LOAD_DECOMPOSE, 0,
                                     no_plain(), true, ks_outs, ks_chunks, inv_root_powers, lmem,
                                     OWN(2)))
        chain_hand_over(count, 2, end2 - end1, pass);
        // t_target is read only by one-pass layouts (LOG_S = 0), which do not chain.
        RUN(3, ks_block_group(values, root_powers, params, K + 1, values, target, target_first,
                              true, key, key_stride_primes, key_special_index, reduce_every,
                              prod, last, true, inv_root_powers, lmem, lroots, OWN(3)))
        chain_hand_over(count, 3, end3 - end2, pass);
        RUN(4, inv_strided_moddown_group(dst, prod, last, params, K, inv_root_powers, inv,
                                         md_kind, bgv_plain_of(t, t_r0, t_r1, inv_t), acc,
                                         acc_polys, lmem, OWN(4)))
    }
    chain_finish(count, (uint)get_num_groups(0));
}

// A word in [0, 4q) reduced to [0, q).
ALWAYS_INLINE u64 reduce_4q(u64 x, u64 q)
{
    return reduce_once(reduce_once(x, 2 * q), q);
}

// multiply_plain_chained's pass 1: the forward strided pass of residue r of src (a sum; r <
// polys * coeff_modulus_size) or, for r = polys * coeff_modulus_size + j, of the plaintext
// lifted under prime j on load (plain.cl's plain_lift with scalar 1: m_k = plain[k] mod t,
// zero for k >= plain_count, as m_k mod q_j, or (m_k - t) mod q_j for m_k >= threshold),
// into residue r of values. Work group `group` over lmem (S * C words); `lid` and `active`
// as in fwd_block_steps.
ALWAYS_INLINE void fwd_strided_lift_group(__global u64 *values, __global const u64 *root_powers,
                                          __global const u64 *params, uint coeff_modulus_size,
                                          sum_src src, uint polys,
                                          __global const u64 *plain, uint plain_count, u64 t,
                                          u64 t_r1, u64 threshold, __local u64 *lmem,
                                          uint group, uint lid, bool active)
{
    const uint r = group / GROUPS_PER_STRIDED_RESIDUE;
    const uint prime = r % coeff_modulus_size;
    const bool lifted = r >= polys * coeff_modulus_size;
    __global const u64 *pr = params + prime * PARAMS_STRIDE;
    const u64 q = pr[0], r1 = pr[5];
    const uint c = lid & (C - 1);
    const uint u = lid >> LOG_C;
    const size_t column = (group % GROUPS_PER_STRIDED_RESIDUE) * C + c;
    u64 v[R];
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++) {
            // Where the forward's first step takes register i (see fwd_strided_steps).
            const size_t k = column + (size_t)step_pos(LOG_R, LOG_S - LOG_R, u, S / R, i) * G;
            if (lifted) {
                const u64 m = k < plain_count ? barrett_reduce_64(plain[k], t, t_r1) : 0;
                u64 x = barrett_reduce_64(m, q, r1);
                if (m >= threshold)
                    x = sub_uint_mod(x, barrett_reduce_64(t, q, r1), q);
                v[i] = x;
            } else {
                v[i] = load_sum(src, (size_t)r * N + k, q, 4);
            }
        }
    }
    fwd_strided_steps(v, values + (size_t)r * N + column, lmem + c,
                      (__global const ulong2 *)root_powers + prime * N, q, u, active);
}

// multiply_plain_chained's pass 2, block group `group` of residue r = p * coeff_modulus_size
// + j of values (r < polys * coeff_modulus_size): the forward block passes of the
// plaintext's residue j (values' residue polys * coeff_modulus_size + j) and of residue r,
// their product mod q_j, and the inverse's block pass, in place in residue r (no other
// group reads these words of it). Over lmem (B * PADDED_G words); `lid` and `active` as in
// fwd_block_steps.
ALWAYS_INLINE void block_multiply_group(__global u64 *values, __global const u64 *root_powers,
                                        __global const u64 *params, uint coeff_modulus_size,
                                        uint polys, __global const u64 *inv_root_powers,
                                        __local u64 *lmem, uint group, uint lid, bool active)
{
    const uint r = group / GROUPS_PER_BLOCK_RESIDUE;
    const uint group_in_residue = group % GROUPS_PER_BLOCK_RESIDUE;
    const uint prime = r % coeff_modulus_size;
    __global const u64 *pr = params + prime * PARAMS_STRIDE;
    const u64 q = pr[0], r1 = pr[5], r0 = pr[6];
    __global const ulong2 *w = (__global const ulong2 *)root_powers + prime * N;
    __global u64 *residue = values + (size_t)r * N;
    u64 m[R];
    fwd_block_transform(values + ((size_t)polys * coeff_modulus_size + prime) * N, lmem, w, 0,
                        false, q, group_in_residue, lid, active);
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++)
            m[i] = reduce_4q(lmem[block_slot(lid + i * BLOCK_WG)], q);
    }
    // Every read of lmem happens before the next transform writes it.
    barrier(CLK_LOCAL_MEM_FENCE);
    fwd_block_transform(residue, lmem, w, 0, false, q, group_in_residue, lid, active);
    if (active) {
#pragma unroll
        for (uint i = 0; i < R; i++) {
            const uint e = lid + i * BLOCK_WG;
            lmem[block_slot(e)] = multiply_uint_mod(reduce_4q(lmem[block_slot(e)], q), m[i], q,
                                                    r0, r1);
        }
    }
    // inv_block_transform passes a barrier before it reads lmem.
    inv_block_transform(lmem, residue, (__global const ulong2 *)inv_root_powers + prime * N, pr,
                        group_in_residue, 0, lid, active);
}

// SEAL's multiply_plain_normal in one launch: src (polys polynomials of K =
// coeff_modulus_size residues, coefficient form, canonical; the sum of src0 .. src3 as
// sum_src reads it) times a plaintext of plain_count coefficients mod t (t_r1 its Barrett
// ratio's high word), lifted to Z_q with upper-half coefficients (from `threshold`)
// standing for themselves minus t, into ct (which may be a source).
// Three passes (tickets below end1 run pass 1, below end2 pass 2, below `tickets` pass 3):
//   1. the forward strided passes of src's residues and of the lifted plaintext's
//      (fwd_strided_lift_group): values ((polys + 1) K residues);
//   2. the forward block passes, the dyadic product and the inverse's block pass
//      (block_multiply_group), in place in values' first polys K residues;
//   3. the inverse's strided pass, fully reduced, into ct (inv_strided_into_group).
// Every step is exact mod q_j and the result canonical: SEAL's words (NTT of both, dyadic
// product, inverse NTT). The sources are read by pass 1 and ct written by pass 3 only.
__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void multiply_plain_chained(__global u64 *restrict values, ulong values_at,
                            __global const u64 *restrict root_powers, ulong root_powers_at,
                            __global const u64 *restrict params, ulong params_at,
                            uint coeff_modulus_size,
                            __global const u64 *restrict inv_root_powers,
                            ulong inv_root_powers_at, __global u64 *ct, ulong ct_at,
                            __global const u64 *src0, ulong src0_at,
                            __global const u64 *src1, ulong src1_at,
                            __global const u64 *src2, ulong src2_at,
                            __global const u64 *src3, ulong src3_at,
                            uint src_terms, uint src_negate, ulong src_shifts_lo,
                            uint polys, __global const u64 *restrict plain, ulong plain_at,
                            uint plain_count, ulong t, ulong t_r1, ulong threshold,
                            __global u64 *counters, ulong counters_at, uint end1, uint end2,
                            uint tickets, uint per_group)
{
    __local u64 lmem[CHAIN_WORDS];
    __local uint slot;
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    inv_root_powers += inv_root_powers_at;
    ct += ct_at;
    src0 += src0_at;
    src1 += src1_at;
    src2 += src2_at;
    src3 += src3_at;
    // Four slots (load_sum's `slots`): the others are never read.
    const sum_src src = sum_src_of(src0, src1, src2, src3, src0, src0, src0, src0, src_terms,
                                   src_negate, src_shifts_lo, 0);
    plain += plain_at;
    counters += counters_at;
    volatile __global uint *count = (volatile __global uint *)counters;
    const uint K = coeff_modulus_size;
    const uint lid = get_local_id(0);
    const uint ends[3] = {end1, end2, tickets};
    EACH_TURN(per_group) {
        uint g;
        const uint pass = chain_pass(chain_ticket(count, &slot), ends, 3, &g);
        RUN(1, fwd_strided_lift_group(values, root_powers, params, K, src, polys, plain,
                                      plain_count, t, t_r1, threshold, lmem, OWN(1)))
        chain_hand_over(count, 1, end1, pass);
        RUN(2, block_multiply_group(values, root_powers, params, K, polys, inv_root_powers,
                                    lmem, OWN(2)))
        chain_hand_over(count, 2, end2 - end1, pass);
        RUN(3, inv_strided_into_group(ct, values, params, K, inv_root_powers, lmem, OWN(3)))
    }
    chain_finish(count, (uint)get_num_groups(0));
}

// A ciphertext's words as a sum of up to eight terms (sum: sum_src, with its shifts and
// signs), term j times plaintext j (pj: K residues, one for all polynomials; word k of
// residue prime) where bit j of `products` is set: what SEAL's add_inplace, sub_inplace and
// multiply_plain by X^shift (coefficient form) of the terms, or multiply_plain_ntt of them
// into temporaries added or subtracted (NTT form: dyadic_product_coeffmod), leave. Every
// step is canonical mod q and linear, so the word is the canonical signed sum of the shifted
// or multiplied terms in any order (a term's sign may come before its product: -x p = -(x p)
// mod q). A term is shifted or multiplied, never both (the host's Sources).
typedef struct {
    sum_src sum;
    __global const u64 *p0, *p1, *p2, *p3, *p4, *p5, *p6, *p7;
    uint products;
} sum_pass_src;

// v plus word w of term j (its words t, its plaintext p: word pw of it), where the sum has
// term j; `pr` the prime's params.
ALWAYS_INLINE u64 sum_pass_term_into(u64 v, __global const u64 *t, __global const u64 *p,
                                     uint j, sum_pass_src s, size_t w, size_t pw,
                                     __global const u64 *pr)
{
    if (j >= s.sum.terms)
        return v;
    const u64 q = pr[0];
    u64 x = sum_term_word(t, j, s.sum, w, q);
    if ((s.products >> j) & 1)
        x = multiply_uint_mod(x, p[pw], q, pr[6], pr[5]);
    return add_uint_mod(v, x, q);
}

// Work group `group`'s words of the sum, one an item: word w = group BLOCK_WG + lid (of
// residue w / N, prime (w / N) mod coeff_modulus_size) into values. An unshifted term may be
// values itself (each item reads its word before writing it); no shifted term and no
// plaintext may. No barrier: an inactive group only returns.
ALWAYS_INLINE void sum_pass_group(__global u64 *values, sum_pass_src src,
                                  __global const u64 *params, uint coeff_modulus_size,
                                  uint group, uint lid, bool active)
{
    if (!active)
        return;
    const size_t w = (size_t)group * BLOCK_WG + lid;
    const uint prime = (uint)(w >> LOG_N) % coeff_modulus_size;
    const size_t pw = (size_t)prime * N + (w & (N - 1));
    __global const u64 *pr = params + prime * PARAMS_STRIDE;
    u64 v = sum_pass_term_into(0, src.sum.t0, src.p0, 0, src, w, pw, pr);
    v = sum_pass_term_into(v, src.sum.t1, src.p1, 1, src, w, pw, pr);
    v = sum_pass_term_into(v, src.sum.t2, src.p2, 2, src, w, pw, pr);
    v = sum_pass_term_into(v, src.sum.t3, src.p3, 3, src, w, pw, pr);
    v = sum_pass_term_into(v, src.sum.t4, src.p4, 4, src, w, pw, pr);
    v = sum_pass_term_into(v, src.sum.t5, src.p5, 5, src, w, pw, pr);
    v = sum_pass_term_into(v, src.sum.t6, src.p6, 6, src, w, pw, pr);
    values[w] = sum_pass_term_into(v, src.sum.t7, src.p7, 7, src, w, pw, pr);
}

// The sum of no terms, for the passes that read no sum (never read).
ALWAYS_INLINE sum_pass_src sum_pass_none(__global const u64 *values)
{
    const sum_pass_src s = {sum_src_one(values), values, values, values, values,
                            values, values, values, values, 0};
    return s;
}

// SEAL's divide_and_round_q_last_ntt_inplace in one launch (a rescale; with md_kind
// LOAD_MODDOWN_BGV BGV's mod_t_and_divide_q_last_ntt_inplace, a mod switch): the mod-down of
// ops/moddown.rs, its three launches chained. Residue src_first of each of polys
// polynomials of src (src_stride residues apart, in NTT form) is the one dropped, under
// the plan's prime last_prime:
//   1. its inverse's first pass (inv_block_gather_group on last_prime's tables): values;
//   2. the inverse's second pass, the rounding (or BGV's share) and the forward first
//      passes under the `coeff_modulus_size` primes kept (inv_fwd_strided_group, md_kind):
//      md_between;
//   3. the forward block passes and the division (moddown_block_group): dst, plus acc's
//      first acc_polys polynomials.
// Tickets below end1 run pass 1, below end2 pass 2, below `tickets` pass 3 (moddown_chained).
// moddown_sum_chained rescales a sum (sum_pass_src: plaintext products in NTT form added,
// SEAL's multiply_plain into temporaries and their adds, or one such product) that the
// backend deferred: a pass before the three writes the sum's words into src, one a work
// item over every word of its polys * src_stride residues (sum_pass_group; tickets below
// end0 run it, and the others' ends follow), so the rescale takes no launch of the sum's.
// `summed` is a constant at every call.
ALWAYS_INLINE void moddown_chained_body(
    const bool summed, sum_pass_src sum, __global u64 *values,
    __global const u64 *root_powers, __global const u64 *params, uint coeff_modulus_size,
    __global const u64 *inv_root_powers, __global u64 *src, uint src_stride, uint src_first,
    uint last_prime, __global u64 *md_between, uint md_outs, uint md_chunks,
    __global u64 *dst, uint dst_stride, __global const u64 *inv, __global const u64 *acc,
    uint acc_polys, uint md_kind, ulong t, ulong t_r0, ulong t_r1, ulong inv_t,
    volatile __global uint *count, uint end0, uint end1, uint end2, uint tickets,
    uint per_group, __local u64 *lmem, __local uint *slot)
{
    const uint lid = get_local_id(0);
    const uint o = summed ? 1 : 0;
    const uint ends[4] = {summed ? end0 : end1, summed ? end1 : end2, summed ? end2 : tickets,
                          tickets};
    EACH_TURN(per_group) {
        uint g;
        const uint pass = chain_pass(chain_ticket(count, slot), ends, 3 + o, &g);
        if (summed) {
            RUN(1, sum_pass_group(src, sum, params, src_stride, OWN(1)))
            chain_hand_over(count, 1, end0, pass);
        }
        // One prime's tables: last_prime's, as prime 0 of a one-prime plan.
        RUN(o + 1, inv_block_gather_group(values, inv_root_powers + 2 * (size_t)last_prime * N,
                                          params + last_prime * PARAMS_STRIDE, 1, 1, src,
                                          src_stride, src_first, lmem, OWN(o + 1)))
        chain_hand_over(count, o + 1, summed ? end1 - end0 : end1, pass);
        RUN(o + 2, inv_fwd_strided_group(md_between, root_powers, params, coeff_modulus_size,
                                         values, md_kind, last_prime,
                                         bgv_plain_of(t, t_r0, t_r1, inv_t), false, md_outs,
                                         md_chunks, inv_root_powers, lmem, OWN(o + 2)))
        chain_hand_over(count, o + 2, end2 - end1, pass);
        RUN(o + 3, moddown_block_group(md_between, root_powers, params, coeff_modulus_size,
                                       values, last_prime, dst, dst_stride, src, src_stride,
                                       inv, acc, acc_polys, lmem, OWN(o + 3)))
    }
    chain_finish(count, (uint)get_num_groups(0));
}

__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void moddown_chained(__global u64 *restrict values, ulong values_at,
                     __global const u64 *restrict root_powers, ulong root_powers_at,
                     __global const u64 *restrict params, ulong params_at,
                     uint coeff_modulus_size,
                     __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                     __global const u64 *src, ulong src_at, uint src_stride, uint src_first,
                     uint last_prime, __global u64 *md_between, ulong md_between_at,
                     uint md_outs, uint md_chunks, __global u64 *dst, ulong dst_at,
                     uint dst_stride, __global const u64 *restrict inv, ulong inv_at,
                     __global const u64 *acc, ulong acc_at, uint acc_polys,
                     uint md_kind, ulong t, ulong t_r0, ulong t_r1, ulong inv_t,
                     __global u64 *counters, ulong counters_at, uint end1, uint end2,
                     uint tickets, uint per_group)
{
    __local u64 lmem[CHAIN_WORDS];
    __local uint slot;
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    inv_root_powers += inv_root_powers_at;
    src += src_at;
    md_between += md_between_at;
    dst += dst_at;
    inv += inv_at;
    acc += acc_at;
    counters += counters_at;
    // src is only read without a sum (the body writes it in the sum's pass alone).
    moddown_chained_body(false, sum_pass_none(src), values, root_powers, params,
                         coeff_modulus_size, inv_root_powers, (__global u64 *)src, src_stride,
                         src_first, last_prime, md_between, md_outs, md_chunks, dst,
                         dst_stride, inv, acc, acc_polys, md_kind, t, t_r0, t_r1, inv_t,
                         (volatile __global uint *)counters, 0, end1, end2, tickets,
                         per_group, lmem, &slot);
}

__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void moddown_sum_chained(__global u64 *restrict values, ulong values_at,
                         __global const u64 *restrict root_powers, ulong root_powers_at,
                         __global const u64 *restrict params, ulong params_at,
                         uint coeff_modulus_size,
                         __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                         __global const u64 *src0, ulong src0_at,
                         __global const u64 *src1, ulong src1_at,
                         __global const u64 *src2, ulong src2_at,
                         __global const u64 *src3, ulong src3_at,
                         __global const u64 *src4, ulong src4_at,
                         __global const u64 *src5, ulong src5_at,
                         __global const u64 *src6, ulong src6_at,
                         __global const u64 *src7, ulong src7_at,
                         __global const u64 *plain0, ulong plain0_at,
                         __global const u64 *plain1, ulong plain1_at,
                         __global const u64 *plain2, ulong plain2_at,
                         __global const u64 *plain3, ulong plain3_at,
                         __global const u64 *plain4, ulong plain4_at,
                         __global const u64 *plain5, ulong plain5_at,
                         __global const u64 *plain6, ulong plain6_at,
                         __global const u64 *plain7, ulong plain7_at,
                         uint src_terms, uint src_negate, uint src_products,
                         ulong src_shifts_lo, ulong src_shifts_hi, __global u64 *summed,
                         ulong summed_at, uint src_stride, uint src_first, uint last_prime,
                         __global u64 *md_between, ulong md_between_at, uint md_outs,
                         uint md_chunks, __global u64 *dst, ulong dst_at, uint dst_stride,
                         __global const u64 *restrict inv, ulong inv_at,
                         __global const u64 *acc, ulong acc_at, uint acc_polys, uint md_kind,
                         ulong t, ulong t_r0, ulong t_r1, ulong inv_t, __global u64 *counters,
                         ulong counters_at, uint end0, uint end1, uint end2, uint tickets,
                         uint per_group)
{
    __local u64 lmem[CHAIN_WORDS];
    __local uint slot;
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    inv_root_powers += inv_root_powers_at;
    src0 += src0_at;
    src1 += src1_at;
    src2 += src2_at;
    src3 += src3_at;
    src4 += src4_at;
    src5 += src5_at;
    src6 += src6_at;
    src7 += src7_at;
    plain0 += plain0_at;
    plain1 += plain1_at;
    plain2 += plain2_at;
    plain3 += plain3_at;
    plain4 += plain4_at;
    plain5 += plain5_at;
    plain6 += plain6_at;
    plain7 += plain7_at;
    summed += summed_at;
    md_between += md_between_at;
    dst += dst_at;
    inv += inv_at;
    acc += acc_at;
    counters += counters_at;
    const sum_pass_src sum = {
        sum_src_of(src0, src1, src2, src3, src4, src5, src6, src7, src_terms, src_negate,
                   src_shifts_lo, src_shifts_hi),
        plain0, plain1, plain2, plain3, plain4, plain5, plain6, plain7, src_products};
    moddown_chained_body(true, sum, values, root_powers, params, coeff_modulus_size,
                         inv_root_powers, summed, src_stride, src_first, last_prime,
                         md_between, md_outs, md_chunks, dst, dst_stride, inv, acc, acc_polys,
                         md_kind, t, t_r0, t_r1, inv_t, (volatile __global uint *)counters,
                         end0, end1, end2, tickets, per_group, lmem, &slot);
}

// ---------------------------------------------------------------------------------------
// A plain transform in one launch: ntt.cl's two passes of a two-pass layout chained, in
// place over the launch's residues of `values` (coeff_modulus_size per polynomial), the
// same words as NttPlan::transform's two launches (every butterfly is SEAL's, whichever
// columns a strided work group takes). Each group writes only the words it read (its
// columns or its blocks), and the second pass reads what the first wrote after the
// hand-over.
//
// The forward transform (SEAL's ntt_negacyclic_harvey with `reduce`, else its _lazy,
// [0, 4q)): the strided passes (fwd_strided_group), then the block passes, reduced with
// `reduce` (fwd_block_group). The inverse (SEAL's inverse_ntt_negacyclic_harvey, else its
// _lazy, [0, 2q); input in [0, 2q)): the block passes (inv_block_group), then the strided
// passes, reduced with `reduce` (inv_strided_group). `tables` are root_powers, or
// inv_root_powers for the inverse; `counters` are the queue's.
//
// ntt_fwd_chained and ntt_inv_chained transform values (tickets below end1 run the first
// pass, below `tickets` the second). ntt_fwd_sum_chained and ntt_inv_sum_chained
// transform a sum (sum_pass_src) into values: a pass before the two writes the sum's words
// into values, one a work item over every word (sum_pass_group; tickets below end1 run it,
// below end2 the first transform pass, below `tickets` the second). Read on the first
// transform pass's loads instead, a word's terms ran on that pass's few work groups a
// residue: on the H200 an inverse of seven plaintext products took 26-27 us against 23 for
// the sum's own launch and the plain inverse together, where the pass of its own takes 21.

// The transform's passes in one launch, in place in values, after the sum's pass where
// `summed` (both flags constants at every call): ends {end1, end2, tickets} of the passes
// (without the sum: {end1, tickets}, end2 unread).
ALWAYS_INLINE void ntt_chained_body(const bool inverse, const bool summed,
                                    __global u64 *values, sum_pass_src src,
                                    __global const u64 *tables, __global const u64 *params,
                                    uint coeff_modulus_size, uint reduce,
                                    volatile __global uint *counters, uint end1, uint end2,
                                    uint tickets, uint per_group, __local u64 *lmem,
                                    __local uint *slot)
{
    const uint K = coeff_modulus_size;
    const uint lid = get_local_id(0);
    const uint o = summed ? 1 : 0;
    const uint ends[3] = {end1, summed ? end2 : tickets, tickets};
    EACH_TURN(per_group) {
        uint g;
        const uint pass = chain_pass(chain_ticket(counters, slot), ends, 2 + o, &g);
        if (summed) {
            RUN(1, sum_pass_group(values, src, params, K, OWN(1)))
            chain_hand_over(counters, 1, end1, pass);
        }
        if (inverse) {
            RUN(o + 1, inv_block_group(values, tables, params, K, reduce, lmem, OWN(o + 1)))
        } else {
            RUN(o + 1, fwd_strided_group(values, tables, params, K, lmem, OWN(o + 1)))
        }
        chain_hand_over(counters, o + 1, summed ? end2 - end1 : end1, pass);
        if (inverse) {
            RUN(o + 2, inv_strided_group(values, tables, params, K, reduce, lmem, OWN(o + 2)))
        } else {
            RUN(o + 2, fwd_block_group(values, tables, params, K, reduce, lmem, OWN(o + 2)))
        }
    }
    chain_finish(counters, (uint)get_num_groups(0));
}

__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_fwd_chained(__global u64 *restrict values, ulong values_at,
                     __global const u64 *restrict root_powers, ulong root_powers_at,
                     __global const u64 *restrict params, ulong params_at,
                     uint coeff_modulus_size, uint reduce, __global u64 *counters,
                     ulong counters_at, uint end1, uint tickets, uint per_group)
{
    __local u64 lmem[CHAIN_WORDS];
    __local uint slot;
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    counters += counters_at;
    ntt_chained_body(false, false, values, sum_pass_none(values), root_powers, params,
                     coeff_modulus_size, reduce, (volatile __global uint *)counters, end1,
                     tickets, tickets, per_group, lmem, &slot);
}

__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_inv_chained(__global u64 *restrict values, ulong values_at,
                     __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                     __global const u64 *restrict params, ulong params_at,
                     uint coeff_modulus_size, uint reduce, __global u64 *counters,
                     ulong counters_at, uint end1, uint tickets, uint per_group)
{
    __local u64 lmem[CHAIN_WORDS];
    __local uint slot;
    values += values_at;
    inv_root_powers += inv_root_powers_at;
    params += params_at;
    counters += counters_at;
    ntt_chained_body(true, false, values, sum_pass_none(values), inv_root_powers, params,
                     coeff_modulus_size, reduce, (volatile __global uint *)counters, end1,
                     tickets, tickets, per_group, lmem, &slot);
}

__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_fwd_sum_chained(__global u64 *values, ulong values_at,
                        __global const u64 *restrict root_powers, ulong root_powers_at,
                        __global const u64 *restrict params, ulong params_at,
                        uint coeff_modulus_size,
                        __global const u64 *src0, ulong src0_at,
                        __global const u64 *src1, ulong src1_at,
                        __global const u64 *src2, ulong src2_at,
                        __global const u64 *src3, ulong src3_at,
                        __global const u64 *src4, ulong src4_at,
                        __global const u64 *src5, ulong src5_at,
                        __global const u64 *src6, ulong src6_at,
                        __global const u64 *src7, ulong src7_at,
                        __global const u64 *plain0, ulong plain0_at,
                        __global const u64 *plain1, ulong plain1_at,
                        __global const u64 *plain2, ulong plain2_at,
                        __global const u64 *plain3, ulong plain3_at,
                        __global const u64 *plain4, ulong plain4_at,
                        __global const u64 *plain5, ulong plain5_at,
                        __global const u64 *plain6, ulong plain6_at,
                        __global const u64 *plain7, ulong plain7_at,
                        uint src_terms, uint src_negate, uint src_products, ulong src_shifts_lo,
                        ulong src_shifts_hi, uint reduce, __global u64 *counters,
                        ulong counters_at, uint end1, uint end2, uint tickets, uint per_group)
{
    __local u64 lmem[CHAIN_WORDS];
    __local uint slot;
    values += values_at;
    root_powers += root_powers_at;
    params += params_at;
    counters += counters_at;
    src0 += src0_at;
    src1 += src1_at;
    src2 += src2_at;
    src3 += src3_at;
    src4 += src4_at;
    src5 += src5_at;
    src6 += src6_at;
    src7 += src7_at;
    plain0 += plain0_at;
    plain1 += plain1_at;
    plain2 += plain2_at;
    plain3 += plain3_at;
    plain4 += plain4_at;
    plain5 += plain5_at;
    plain6 += plain6_at;
    plain7 += plain7_at;
    const sum_pass_src src = {
        sum_src_of(src0, src1, src2, src3, src4, src5, src6, src7, src_terms, src_negate,
                   src_shifts_lo, src_shifts_hi),
        plain0, plain1, plain2, plain3, plain4, plain5, plain6, plain7, src_products};
    ntt_chained_body(false, true, values, src, root_powers, params, coeff_modulus_size, reduce,
                     (volatile __global uint *)counters, end1, end2, tickets, per_group, lmem,
                     &slot);
}

__kernel __attribute__((reqd_work_group_size(BLOCK_WG, 1, 1)))
void ntt_inv_sum_chained(__global u64 *values, ulong values_at,
                        __global const u64 *restrict inv_root_powers, ulong inv_root_powers_at,
                        __global const u64 *restrict params, ulong params_at,
                        uint coeff_modulus_size,
                        __global const u64 *src0, ulong src0_at,
                        __global const u64 *src1, ulong src1_at,
                        __global const u64 *src2, ulong src2_at,
                        __global const u64 *src3, ulong src3_at,
                        __global const u64 *src4, ulong src4_at,
                        __global const u64 *src5, ulong src5_at,
                        __global const u64 *src6, ulong src6_at,
                        __global const u64 *src7, ulong src7_at,
                        __global const u64 *plain0, ulong plain0_at,
                        __global const u64 *plain1, ulong plain1_at,
                        __global const u64 *plain2, ulong plain2_at,
                        __global const u64 *plain3, ulong plain3_at,
                        __global const u64 *plain4, ulong plain4_at,
                        __global const u64 *plain5, ulong plain5_at,
                        __global const u64 *plain6, ulong plain6_at,
                        __global const u64 *plain7, ulong plain7_at,
                        uint src_terms, uint src_negate, uint src_products, ulong src_shifts_lo,
                        ulong src_shifts_hi, uint reduce, __global u64 *counters,
                        ulong counters_at, uint end1, uint end2, uint tickets, uint per_group)
{
    __local u64 lmem[CHAIN_WORDS];
    __local uint slot;
    values += values_at;
    inv_root_powers += inv_root_powers_at;
    params += params_at;
    counters += counters_at;
    src0 += src0_at;
    src1 += src1_at;
    src2 += src2_at;
    src3 += src3_at;
    src4 += src4_at;
    src5 += src5_at;
    src6 += src6_at;
    src7 += src7_at;
    plain0 += plain0_at;
    plain1 += plain1_at;
    plain2 += plain2_at;
    plain3 += plain3_at;
    plain4 += plain4_at;
    plain5 += plain5_at;
    plain6 += plain6_at;
    plain7 += plain7_at;
    const sum_pass_src src = {
        sum_src_of(src0, src1, src2, src3, src4, src5, src6, src7, src_terms, src_negate,
                   src_shifts_lo, src_shifts_hi),
        plain0, plain1, plain2, plain3, plain4, plain5, plain6, plain7, src_products};
    ntt_chained_body(true, true, values, src, inv_root_powers, params, coeff_modulus_size, reduce,
                     (volatile __global uint *)counters, end1, end2, tickets, per_group, lmem,
                     &slot);
}

#endif // LOG_S != 0 && KS_ROWS == 1 && STRIDED_WG == BLOCK_WG
