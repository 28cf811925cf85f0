// Uses: arith.cl
// The test kernel of the helpers of arith.cl (tests/arith.rs runs it against their host
// references): item i applies helper number `helper` (the order of tests/arith.rs's HELPERS)
// to x = a[i], y = b[i] and c (under q with its Barrett words r0, r1) and writes out[i]. The
// Dhem-Quisquater helpers take mu from c[i], the Shoup ones the operand w = y and its
// quotient c[i]; the butterflies take (x, y) with root c[2i], quotient c[2i+1] and write
// out[2i], out[2i+1]. Built only by tests/arith.rs (after arith.cl), never into the
// operation programs.

__kernel void test_arith(__global const u64 *a, ulong a_at, __global const u64 *b, ulong b_at,
                         __global const u64 *c, ulong c_at, __global u64 *out, ulong out_at,
                         u64 q, u64 r0, u64 r1, uint helper)
{
    a += a_at;
    b += b_at;
    c += c_at;
    out += out_at;
    size_t i = get_global_id(0);
    u64 x = a[i], y = b[i];
    switch (helper) {
    case 0: // add_uint_mod
        out[i] = add_uint_mod(x, y, q);
        break;
    case 1: // sub_uint_mod
        out[i] = sub_uint_mod(x, y, q);
        break;
    case 2: // negate_uint_mod
        out[i] = negate_uint_mod(x, q);
        break;
    case 3: // barrett_reduce_64
        out[i] = barrett_reduce_64(x, q, r1);
        break;
    case 4: // barrett_reduce_128
        out[i] = barrett_reduce_128(x, y, q, r0, r1);
        break;
    case 5: // multiply_uint_mod
        out[i] = multiply_uint_mod(x, y, q, r0, r1);
        break;
    case 6: // barrett_reduce_dq
        out[i] = barrett_reduce_dq(x, y, q, c[i]);
        break;
    case 7: // multiply_uint_mod_dq
        out[i] = multiply_uint_mod_dq(x, y, q, c[i]);
        break;
    case 8: // multiply_uint_mod_shoup
        out[i] = multiply_uint_mod_shoup(x, y, c[i], q);
        break;
    case 9: // multiply_uint_mod_shoup_lazy
        out[i] = multiply_uint_mod_shoup_lazy(x, y, c[i], q);
        break;
    case 10: // mad_uint_mod
        out[i] = mad_uint_mod(x, y, c[i], q, r0, r1);
        break;
    case 11: // butterfly_forward_lazy
        butterfly_forward_lazy(&x, &y, c[2 * i], c[2 * i + 1], q);
        out[2 * i] = x;
        out[2 * i + 1] = y;
        break;
    case 12: // butterfly_inverse_lazy
        butterfly_inverse_lazy(&x, &y, c[2 * i], c[2 * i + 1], q);
        out[2 * i] = x;
        out[2 * i + 1] = y;
        break;
    }
}
