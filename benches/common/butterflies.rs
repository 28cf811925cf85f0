//! Butterflies in registers, no memory traffic: the NTT's Harvey butterfly
//! (X, Y) -> (X + W Y, X - W Y) mod q with values kept lazily in [0, 4q), its product by
//! Shoup's method on 64-bit words (`int`, the arithmetic of ntt.cl) against the same
//! butterfly on doubles (`f64`, for q < 2^50): the product W Y = h + l split exactly by an
//! FMA (h = W Y rounded, l = fma(W, Y, -h)), the quotient c = floor(h / q) estimated with a
//! precomputed 1 / q, and T = fma(-c, q, h) + l exact. With W < q, Y < 2q and q < 2^50,
//! |l| <= 2^47 and the estimate is within 0.75 of W Y / q, so T lies in [-q, 2q) and one
//! conditional add of q brings it to [0, 2q); every intermediate is an integer below 2^53,
//! so no step rounds. The bench measures the device's butterfly rate with each arithmetic;
//! tests/butterflies.rs checks both kernels against [`reference`] on PoCL.
//!
//! Each work item holds 8 values of one prime and runs `rounds` rounds of the three layers
//! of a radix-8 block on them (pairs at distance 1, 2, 4), layer s of round r with twiddle
//! `w[(r + s) % 4]`; at the end it reduces its values to [0, q).

use std::time::Duration;

use seal_opencl::arith::{add_uint_mod, multiply_uint_mod, sub_uint_mod, Modulus, ShoupOperand};
use seal_opencl::cl::KernelArg::{Buf, U32, U64};
use seal_opencl::cl::{self, ArgType, Context, Event, KernelSig, Queue};
use seal_opencl::Result;

/// Values per work item and twiddles per kernel.
pub const VALUES: usize = 8;
pub const TWIDDLES: usize = 4;
/// Butterflies per work item per round: 3 layers of 4.
pub const PER_ROUND: usize = 12;

pub const SOURCE: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef ulong u64;

// The radix-8 block's three layers on v[0..8), BF(x, y, t) one butterfly with twiddle t.
#define BLOCK(BF, r)                                                          \
    for (uint s = 0; s < 3; s++) {                                            \
        uint t = (r + s) & 3, d = 1u << s;                                    \
        for (uint k = 0; k < 8; k++)                                          \
            if ((k & d) == 0) BF(v[k], v[k + d], t);                          \
    }

// `rounds` rounds on v[0..8) with butterfly BF, then each value (type T) brought from
// [0, 4q) to [0, Q) and stored.
#define ROUNDS_THEN_STORE(BF, T, Q)                                           \
    for (uint r = 0; r < rounds; r++) {                                       \
        _Pragma("unroll") BLOCK(BF, r)                                        \
    }                                                                         \
    for (uint k = 0; k < 8; k++) {                                            \
        T a = v[k] >= two_q ? v[k] - two_q : v[k];                            \
        x[k * items + g] = (u64)(a >= (Q) ? a - (Q) : a);                     \
    }

__kernel void butterflies_int(__global u64 *x, ulong x_at, __global const u64 *tw,
                              ulong tw_at, ulong q, uint rounds)
{
    x += x_at;
    tw += tw_at;
    size_t g = get_global_id(0), items = get_global_size(0);
    u64 two_q = 2 * q, v[8], w[4], wq[4];
    for (uint k = 0; k < 4; k++) { w[k] = tw[k]; wq[k] = tw[4 + k]; }
    for (uint k = 0; k < 8; k++) v[k] = x[k * items + g];
#define BF_INT(X, Y, t) {                                                     \
        u64 x_ = (X) >= two_q ? (X) - two_q : (X);                            \
        u64 t_ = w[t] * (Y) - mul_hi((Y), wq[t]) * q;                         \
        (X) = x_ + t_;                                                        \
        (Y) = x_ - t_ + two_q; }
    ROUNDS_THEN_STORE(BF_INT, u64, q)
}

__kernel void butterflies_f64(__global u64 *x, ulong x_at, __global const u64 *tw,
                              ulong tw_at, ulong q, uint rounds)
{
    x += x_at;
    tw += tw_at;
    size_t g = get_global_id(0), items = get_global_size(0);
    double qd = (double)q, two_q = 2.0 * qd, qinv = 1.0 / qd, v[8], w[4];
    for (uint k = 0; k < 4; k++) w[k] = (double)tw[k];
    for (uint k = 0; k < 8; k++) v[k] = (double)x[k * items + g];
#define BF_F64(X, Y, t) {                                                     \
        double x_ = (X) >= two_q ? (X) - two_q : (X);                         \
        double y_ = (Y) >= two_q ? (Y) - two_q : (Y);                         \
        double h_ = w[t] * y_;                                                \
        double l_ = fma(w[t], y_, -h_);                                       \
        double c_ = floor(h_ * qinv);                                         \
        double t_ = fma(-c_, qd, h_) + l_;                                    \
        t_ = t_ < 0.0 ? t_ + qd : t_;                                         \
        (X) = x_ + t_;                                                        \
        (Y) = x_ - t_ + two_q; }
    ROUNDS_THEN_STORE(BF_F64, double, qd)
}
"#;

/// The arithmetic of a kernel.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arith {
    Int,
    F64,
}

impl Arith {
    pub const ALL: [Arith; 2] = [Arith::Int, Arith::F64];

    pub fn name(self) -> &'static str {
        match self {
            Arith::Int => "int",
            Arith::F64 => "f64",
        }
    }

    /// Whether the kernel is exact for `q`.
    pub fn allows(self, q: &Modulus) -> bool {
        self == Arith::Int || q.value() < 1 << 50
    }

    fn sig(self) -> KernelSig {
        KernelSig {
            name: match self {
                Arith::Int => "butterflies_int",
                Arith::F64 => "butterflies_f64",
            },
            params: &[
                ("x", ArgType::Buf),
                ("tw", ArgType::Buf),
                ("q", ArgType::U64),
                ("rounds", ArgType::U32),
            ],
        }
    }
}

/// The twiddles of the kernels' table: `w` and their Shoup words.
pub fn table(q: &Modulus, w: &[u64; TWIDDLES]) -> Vec<u64> {
    let mut t = w.to_vec();
    t.extend(w.iter().map(|&w| ShoupOperand::new(w, q).quotient));
    t
}

/// The host reference: `values` (item-major: value k of item g at k * items + g, each in
/// [0, q)) after `rounds` rounds, canonical.
pub fn reference(
    values: &[u64],
    items: usize,
    q: &Modulus,
    w: &[u64; TWIDDLES],
    rounds: u32,
) -> Vec<u64> {
    let mut out = values.to_vec();
    for g in 0..items {
        let mut v: Vec<u64> = (0..VALUES).map(|k| values[k * items + g]).collect();
        for r in 0..rounds as usize {
            for s in 0..3 {
                let (t, d) = ((r + s) % TWIDDLES, 1 << s);
                for k in (0..VALUES).filter(|k| k & d == 0) {
                    let wy = multiply_uint_mod(w[t], v[k + d], q);
                    (v[k], v[k + d]) = (add_uint_mod(v[k], wy, q), sub_uint_mod(v[k], wy, q));
                }
            }
        }
        for k in 0..VALUES {
            out[k * items + g] = v[k];
        }
    }
    out
}

/// Runs `arith`'s kernel over `values` (item-major, `values.len() / VALUES` items) on
/// `queue`: the results, and the kernel's device time.
pub fn run(
    ctx: &Context,
    queue: &Queue,
    arith: Arith,
    values: &[u64],
    q: &Modulus,
    w: &[u64; TWIDDLES],
    rounds: u32,
) -> Result<(Vec<u64>, Duration)> {
    let sig = arith.sig();
    let kernel = sig.build(&ctx.program(&[SOURCE], "")?, &[])?;
    let x = ctx.upload(queue, values)?;
    let tw = ctx.upload(queue, &table(q, w))?;
    let items = values.len() / VALUES;
    let mut event = Event::empty();
    // SAFETY: every argument of the signature is set here; item g < items touches words
    // k * items + g < values.len() of x and the 2 * TWIDDLES words of tw.
    unsafe {
        sig.set(
            &kernel,
            &[
                ("x", Buf(&x)),
                ("tw", Buf(&tw)),
                ("q", U64(q.value())),
                ("rounds", U32(rounds)),
            ],
            &[],
        )?;
        cl::enqueue_on(queue, &kernel, items, None, Some(&mut event))?;
    }
    queue.finish()?;
    let t = cl::event_times(&event)?;
    Ok((
        cl::download(queue, &x)?,
        Duration::from_nanos(t.end - t.start),
    ))
}
