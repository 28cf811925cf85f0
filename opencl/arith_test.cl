// One-line test kernels, one per helper of arith.cl: out[i] = helper(a[i], b[i], c[i]).
// Built only by tests/arith.rs (after arith.cl), never into the operation programs.

__kernel void test_add_uint_mod(__global const u64 *a, ulong a_at,
                                __global const u64 *b, ulong b_at,
                                __global const u64 *c, ulong c_at, __global u64 *out, ulong out_at,
                                u64 q, u64 r0, u64 r1)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    size_t i = get_global_id(0);
    out[i] = add_uint_mod(a[i], b[i], q);
}

__kernel void test_sub_uint_mod(__global const u64 *a, ulong a_at,
                                __global const u64 *b, ulong b_at,
                                __global const u64 *c, ulong c_at, __global u64 *out, ulong out_at,
                                u64 q, u64 r0, u64 r1)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    size_t i = get_global_id(0);
    out[i] = sub_uint_mod(a[i], b[i], q);
}

__kernel void test_negate_uint_mod(__global const u64 *a, ulong a_at,
                                   __global const u64 *b, ulong b_at,
                                   __global const u64 *c, ulong c_at,
                                   __global u64 *out, ulong out_at, u64 q, u64 r0, u64 r1)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    size_t i = get_global_id(0);
    out[i] = negate_uint_mod(a[i], q);
}

__kernel void test_barrett_reduce_64(__global const u64 *a, ulong a_at,
                                     __global const u64 *b, ulong b_at,
                                     __global const u64 *c, ulong c_at,
                                     __global u64 *out, ulong out_at, u64 q, u64 r0, u64 r1)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    size_t i = get_global_id(0);
    out[i] = barrett_reduce_64(a[i], q, r1);
}

__kernel void test_barrett_reduce_128(__global const u64 *a, ulong a_at,
                                      __global const u64 *b, ulong b_at,
                                      __global const u64 *c, ulong c_at,
                                      __global u64 *out, ulong out_at, u64 q, u64 r0, u64 r1)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    size_t i = get_global_id(0);
    out[i] = barrett_reduce_128(a[i], b[i], q, r0, r1);
}

__kernel void test_multiply_uint_mod(__global const u64 *a, ulong a_at,
                                     __global const u64 *b, ulong b_at,
                                     __global const u64 *c, ulong c_at,
                                     __global u64 *out, ulong out_at, u64 q, u64 r0, u64 r1)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    size_t i = get_global_id(0);
    out[i] = multiply_uint_mod(a[i], b[i], q, r0, r1);
}

// c holds mu = floor(2^(2m+1) / q) in every word.
__kernel void test_barrett_reduce_dq(__global const u64 *a, ulong a_at,
                                     __global const u64 *b, ulong b_at,
                                     __global const u64 *c, ulong c_at, __global u64 *out, ulong out_at,
                                     u64 q, u64 r0, u64 r1)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    size_t i = get_global_id(0);
    out[i] = barrett_reduce_dq(a[i], b[i], q, c[i]);
}

__kernel void test_multiply_uint_mod_dq(__global const u64 *a, ulong a_at,
                                        __global const u64 *b, ulong b_at,
                                        __global const u64 *c, ulong c_at, __global u64 *out, ulong out_at,
                                        u64 q, u64 r0, u64 r1)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    size_t i = get_global_id(0);
    out[i] = multiply_uint_mod_dq(a[i], b[i], q, c[i]);
}

// b holds the operand w, c its Shoup quotient.
__kernel void test_multiply_uint_mod_shoup(__global const u64 *a, ulong a_at,
                                           __global const u64 *b, ulong b_at,
                                           __global const u64 *c, ulong c_at,
                                           __global u64 *out, ulong out_at, u64 q, u64 r0, u64 r1)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    size_t i = get_global_id(0);
    out[i] = multiply_uint_mod_shoup(a[i], b[i], c[i], q);
}

__kernel void test_multiply_uint_mod_shoup_lazy(__global const u64 *a, ulong a_at,
                                                __global const u64 *b, ulong b_at,
                                                __global const u64 *c, ulong c_at,
                                                __global u64 *out, ulong out_at, u64 q, u64 r0,
                                                u64 r1)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    size_t i = get_global_id(0);
    out[i] = multiply_uint_mod_shoup_lazy(a[i], b[i], c[i], q);
}

__kernel void test_mad_uint_mod(__global const u64 *a, ulong a_at,
                                __global const u64 *b, ulong b_at,
                                __global const u64 *c, ulong c_at, __global u64 *out, ulong out_at,
                                u64 q, u64 r0, u64 r1)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    size_t i = get_global_id(0);
    out[i] = mad_uint_mod(a[i], b[i], c[i], q, r0, r1);
}

// Butterflies: (a[i], b[i]) with root w = c[2i], quotient c[2i+1]; out[2i], out[2i+1].
// The body of a butterfly's test kernel, `butterfly` its helper.
#define TEST_BUTTERFLY(butterfly)                            \
    size_t i = get_global_id(0);                             \
    u64 x = a[i], y = b[i];                                  \
    butterfly(&x, &y, c[2 * i], c[2 * i + 1], q);            \
    out[2 * i] = x;                                          \
    out[2 * i + 1] = y;

__kernel void test_butterfly_forward_lazy(__global const u64 *a, ulong a_at,
                                          __global const u64 *b, ulong b_at,
                                          __global const u64 *c, ulong c_at,
                                          __global u64 *out, ulong out_at, u64 q, u64 r0, u64 r1)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    TEST_BUTTERFLY(butterfly_forward_lazy)
}

__kernel void test_butterfly_inverse_lazy(__global const u64 *a, ulong a_at,
                                          __global const u64 *b, ulong b_at,
                                          __global const u64 *c, ulong c_at,
                                          __global u64 *out, ulong out_at, u64 q, u64 r0, u64 r1)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    TEST_BUTTERFLY(butterfly_inverse_lazy)
}
