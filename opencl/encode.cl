// Uses: nothing
// CKKSEncoder::encode's host half on the device: SEAL's inverse FFT of the placed values
// (DWTHandler::transform_from_rev with the scalar scale / N), then the rounding of each
// coefficient's real part and its reduction mod every prime of the level (encode_internal's
// path for coefficients below 2^64). Built alone with -D LOG_N=<log2 N> -D LOG_B=<log2 B>,
// B = min(N / 2, 2048). Each kernel mirrors src/ckks/encode.rs word for word.
//
// The words are SEAL's because every floating-point operation is SEAL's, in SEAL's order:
// IEEE double addition, subtraction and multiplication are correctly rounded in OpenCL C
// (cl_khr_fp64) as in C++, a complex product is (a.re b.re - a.im b.im, a.re b.im +
// a.im b.re) as GCC computes std::complex<double>'s for finite operands, and no product is
// contracted into a fused multiply-add (FP_CONTRACT OFF; SEAL's x86-64 build has no FMA).
// round() is C's (half away from zero) and the rest is integer arithmetic.
//
// Values: N complex numbers, re at word 2 i and im at 2 i + 1, in place. Roots: SEAL's
// inv_root_powers_ (N complex numbers, the same layout). SEAL's stage of gap g (g = 1, 2,
// .., N / 2) takes the butterflies (x, x + g) for x in blocks of 2 g, block i with root
// inv_roots[N - N / g + 1 + i]: x' = x + y, y' = (x - y) root; the last (g = N / 2)
// multiplies x' by fix and y' by root * fix instead. Stages of gap g < B stay inside blocks
// of B values (encode_fft_blocks, in local memory); the stages from g = B on pair values
// B apart (encode_fft_finish, in private memory).

#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL FP_CONTRACT OFF

#if !defined(LOG_N) || !defined(LOG_B)
#error "encode.cl needs -D LOG_N=<log2 N> -D LOG_B=<log2 of the block of values>"
#endif

#define N (1u << LOG_N)
#define B (1u << LOG_B)
// Values per work item of encode_fft_finish, B apart.
#define S (1u << (LOG_N - LOG_B))

typedef ulong u64;

// (a.re b.re - a.im b.im, a.re b.im + a.im b.re): std::complex<double>'s product.
inline double2 complex_mul(double2 a, double2 b)
{
    double re = a.x * b.x - a.y * b.y;
    double im = a.x * b.y + a.y * b.x;
    return (double2)(re, im);
}

inline double2 load_complex(__global const double *p, size_t index)
{
    return (double2)(p[2 * index], p[2 * index + 1]);
}

inline void store_complex(__global double *p, size_t index, double2 v)
{
    p[2 * index] = v.x;
    p[2 * index + 1] = v.y;
}

// SEAL's stages of gap 1 .. B / 2 on each block of B values: work group b takes values
// b B .. b B + B - 1 into local memory (B complex numbers, 32 KiB at B = 2048: every full-
// profile device's minimum), runs the stages there and writes them back. Range (N / B) W
// items in groups of W <= B / 2. Gaps are powers of two: indices by shifts and masks.
__kernel void encode_fft_blocks(__global double *values, ulong values_at,
                                __global const double *roots, ulong roots_at)
{
    __local double2 block[B];
    values += values_at;
    roots += roots_at;
    size_t base = get_group_id(0) * (size_t)B;
    uint lid = get_local_id(0);
    uint w = get_local_size(0);
    for (uint k = lid; k < B; k += w) {
        block[k] = load_complex(values, base + k);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint s = 0; s < LOG_B; s++) {
        uint g = 1u << s;
        // Stage g's first root: inv_roots[N - N / g + 1].
        size_t first = N - (N >> s) + 1;
        for (uint t = lid; t < B / 2; t += w) {
            uint j = t & (g - 1);
            uint x = ((t - j) << 1) + j;
            // The block of 2 g values holding x, counted over all N values.
            size_t i = (base + x) >> (s + 1);
            double2 r = load_complex(roots, first + i);
            double2 u = block[x];
            double2 v = block[x + g];
            block[x] = u + v;
            block[x + g] = complex_mul(u - v, r);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint k = lid; k < B; k += w) {
        store_complex(values, base + k, block[k]);
    }
}

// SEAL's stages of gap B .. N / 2 (the last with fix = scale / N), then encode_internal's
// rounding and reduction: item t holds values t + s B for s < S, so a stage of gap B 2^e
// pairs slots s and s + 2^e (bit e of s clear), of block s >> (e + 1). Coefficient x =
// t + s B: c = round(re), dst[j N + x] = |c| mod q_j, negated mod q_j where c is negative
// (SEAL's barrett_reduce_64 and negate_uint_mod); |c| < 2^62 (the caller's bound).
// moduli: MODULI_STRIDE = 4 words per prime, q first. Range B items.
__kernel void encode_fft_finish(__global const double *values, ulong values_at,
                                __global const double *roots, ulong roots_at, ulong fix_bits,
                                __global u64 *dst, ulong dst_at, __global const u64 *moduli,
                                ulong moduli_at, uint K)
{
    values += values_at;
    roots += roots_at;
    dst += dst_at;
    moduli += moduli_at;
    const double fix = as_double(fix_bits);
    size_t t = get_global_id(0);
    double2 v[S];
    for (uint s = 0; s < S; s++) {
        v[s] = load_complex(values, t + s * (size_t)B);
    }
    for (uint e = 0; e + 1 < LOG_N - LOG_B; e++) {
        // Stage g = B 2^e's first root: inv_roots[N - N / g + 1].
        size_t first = N - (N >> (LOG_B + e)) + 1;
        for (uint s = 0; s < S; s++) {
            if (s & (1u << e)) {
                continue;
            }
            double2 r = load_complex(roots, first + (s >> (e + 1)));
            double2 u = v[s];
            double2 w = v[s + (1u << e)];
            v[s] = u + w;
            v[s + (1u << e)] = complex_mul(u - w, r);
        }
    }
    // The last stage, gap N / 2: slots s and s + S / 2.
    double2 scaled_r = load_complex(roots, N - 1) * fix;
    for (uint s = 0; s < S / 2; s++) {
        double2 u = v[s];
        double2 w = v[s + S / 2];
        v[s] = (u + w) * fix;
        v[s + S / 2] = complex_mul(u - w, scaled_r);
    }
    for (uint s = 0; s < S; s++) {
        double c = round(v[s].x);
        int negative = signbit(c);
        u64 magnitude = (u64)fabs(c);
        size_t x = t + s * (size_t)B;
        for (uint j = 0; j < K; j++) {
            u64 q = moduli[4 * j];
            u64 r = magnitude % q;
            dst[((size_t)j << LOG_N) + x] = (negative && r != 0) ? q - r : r;
        }
    }
}
