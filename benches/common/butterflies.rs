//! Butterflies without global memory traffic: the NTT's Harvey butterfly
//! (X, Y) -> (X + W Y, X - W Y) mod q with values kept lazily in [0, 4q), its product by
//! Shoup's method on 64-bit words (`int`, the arithmetic of ntt.cl) against the same
//! butterfly on doubles (`f64`, for q < 2^50): the product W Y = h + l split exactly by an
//! FMA (h = W Y rounded, l = fma(W, Y, -h)), the quotient c = floor(h / q) estimated with a
//! precomputed 1 / q, and T = fma(-c, q, h) + l exact. With W < q, Y < 2q and q < 2^50,
//! |l| <= 2^47 and the estimate is within 0.75 of W Y / q, so T lies in [-q, 2q) and one
//! conditional add of q brings it to [0, 2q); every intermediate is an integer below 2^53,
//! so no step rounds. The bench measures the device's butterfly rate with each arithmetic;
//! tests/butterflies.rs checks every kernel against [`reference`] on PoCL. The kernels are
//! built with this module's constants ([`build_options`]).
//!
//! Each work item holds 8 values of one prime and runs `rounds` rounds of the three layers
//! of a radix-8 block on them (pairs at distance 1, 2, 4); at the end it reduces its values
//! to [0, q). Two layouts ([`Layout`]):
//! - `registers`: layer s of round r takes twiddle `w[(r + s) % TWIDDLES]`, held in
//!   registers, and values never leave the registers: the arithmetic alone.
//! - `staged`: as a staged NTT's block pass runs, work groups of [`GROUP`] items exchange
//!   their values through local memory after every round (value k of item i is stored at
//!   slot k [`GROUP`] + i, then item i reads slots 8 i .. 8 i + 7, padded by one word in 8
//!   as ntt.cl pads), and each butterfly reads its twiddle from a table of
//!   [`STAGED_TWIDDLES`] in local memory: `(3 r + s + k + i) % STAGED_TWIDDLES` for the
//!   butterfly at registers (k, k + 2^s) of item i (its index in the group). The
//!   arithmetic with a transform's memory work.

use std::time::Duration;

use seal_opencl::arith::{add_uint_mod, multiply_uint_mod, sub_uint_mod, Modulus, ShoupOperand};
use seal_opencl::cl::KernelArg::{Buf, U32, U64};
use seal_opencl::cl::{self, ArgType, Context, Event, KernelSig, Queue};
use seal_opencl::{Error, Result};

/// Values per work item and twiddles per kernel (`staged`: in its table).
pub const VALUES: usize = 8;
pub const TWIDDLES: usize = 4;
pub const STAGED_TWIDDLES: usize = 64;
/// Work items per group of the `staged` layout.
pub const GROUP: usize = 256;
/// Butterflies per work item per round: 3 layers of 4.
pub const PER_ROUND: usize = 12;

pub const SOURCE: &str = r#"
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
typedef ulong u64;
// Built with -D GROUP, TWIDDLES and STAGED_TWIDDLES (powers of two, GROUP >= STAGED_TWIDDLES).
#define PAD(t) ((t) + ((t) >> 3))

// The radix-8 block's three layers on v[0..8), BF(x, y, t) one butterfly with twiddle
// index TW(r, s, k) for round r, layer s, lower register k.
#define BLOCK(BF, TW, r)                                                      \
    for (uint s = 0; s < 3; s++) {                                            \
        uint d = 1u << s;                                                     \
        for (uint k = 0; k < 8; k++)                                          \
            if ((k & d) == 0) BF(v[k], v[k + d], TW(r, s, k));                \
    }
#define TW_REGISTERS(r, s, k) (((r) + (s)) % TWIDDLES)
#define TW_STAGED(r, s, k) ((3 * (r) + (s) + (k) + lid) % STAGED_TWIDDLES)

// Each value (type T) brought from [0, 4q) to [0, Q) and stored.
#define STORE(T, Q)                                                           \
    for (uint k = 0; k < 8; k++) {                                            \
        T a = v[k] >= two_q ? v[k] - two_q : v[k];                            \
        x[k * items + g] = (u64)(a >= (Q) ? a - (Q) : a);                     \
    }

// The staged layout's exchange after a round: value k of item lid to slot k GROUP + lid,
// then item lid reads slots 8 lid .. 8 lid + 7.
#define EXCHANGE(lv)                                                          \
    for (uint k = 0; k < 8; k++) lv[PAD(k * GROUP + lid)] = v[k];             \
    barrier(CLK_LOCAL_MEM_FENCE);                                             \
    for (uint k = 0; k < 8; k++) v[k] = lv[PAD(lid * 8 + k)];                 \
    barrier(CLK_LOCAL_MEM_FENCE);

// Shoup's lazy product on 64-bit words: W Y mod q in [0, 2q) (ntt.cl's butterfly).
#define BF_INT(X, Y, W, WQ) {                                                 \
        u64 x_ = (X) >= two_q ? (X) - two_q : (X);                            \
        u64 t_ = (W) * (Y) - mul_hi((Y), (WQ)) * q;                           \
        (X) = x_ + t_;                                                        \
        (Y) = x_ - t_ + two_q; }

// The FMA-exact product on doubles (see the module's doc).
#define BF_F64(X, Y, W) {                                                     \
        double x_ = (X) >= two_q ? (X) - two_q : (X);                         \
        double y_ = (Y) >= two_q ? (Y) - two_q : (Y);                         \
        double h_ = (W) * y_;                                                 \
        double l_ = fma((W), y_, -h_);                                        \
        double c_ = floor(h_ * qinv);                                         \
        double t_ = fma(-c_, qd, h_) + l_;                                    \
        t_ = t_ < 0.0 ? t_ + qd : t_;                                         \
        (X) = x_ + t_;                                                        \
        (Y) = x_ - t_ + two_q; }

#define BF_INT_REGISTERS(X, Y, t) BF_INT(X, Y, w[t], wq[t])
#define BF_INT_STAGED(X, Y, t) { ulong2 w_ = lw[t]; BF_INT(X, Y, w_.x, w_.y) }
#define BF_F64_REGISTERS(X, Y, t) BF_F64(X, Y, w[t])
#define BF_F64_STAGED(X, Y, t) BF_F64(X, Y, lw[t])

__kernel void butterflies_int(__global u64 *x, ulong x_at, __global const u64 *tw,
                              ulong tw_at, ulong q, uint rounds)
{
    x += x_at;
    tw += tw_at;
    size_t g = get_global_id(0), items = get_global_size(0);
    u64 two_q = 2 * q, v[8], w[TWIDDLES], wq[TWIDDLES];
    for (uint k = 0; k < TWIDDLES; k++) { w[k] = tw[k]; wq[k] = tw[TWIDDLES + k]; }
    for (uint k = 0; k < 8; k++) v[k] = x[k * items + g];
    for (uint r = 0; r < rounds; r++) {
        _Pragma("unroll") BLOCK(BF_INT_REGISTERS, TW_REGISTERS, r)
    }
    STORE(u64, q)
}

__kernel void butterflies_f64(__global u64 *x, ulong x_at, __global const u64 *tw,
                              ulong tw_at, ulong q, uint rounds)
{
    x += x_at;
    tw += tw_at;
    size_t g = get_global_id(0), items = get_global_size(0);
    double qd = (double)q, two_q = 2.0 * qd, qinv = 1.0 / qd, v[8], w[TWIDDLES];
    for (uint k = 0; k < TWIDDLES; k++) w[k] = (double)tw[k];
    for (uint k = 0; k < 8; k++) v[k] = (double)x[k * items + g];
    for (uint r = 0; r < rounds; r++) {
        _Pragma("unroll") BLOCK(BF_F64_REGISTERS, TW_REGISTERS, r)
    }
    STORE(double, qd)
}

// A staged kernel: values of type T in local memory, roots of type RT staged there by
// ROOT(i) (entry i of the table tw), the arithmetic's constants DECLS, butterfly BF, values
// stored below Q.
#define STAGED_KERNEL(NAME, T, RT, ROOT, DECLS, BF, Q)                        \
__kernel __attribute__((reqd_work_group_size(GROUP, 1, 1)))                   \
void NAME(__global u64 *x, ulong x_at, __global const u64 *tw, ulong tw_at, ulong q, \
          uint rounds)                                                        \
{                                                                             \
    __local T lv[PAD(8 * GROUP)];                                             \
    __local RT lw[STAGED_TWIDDLES];                                           \
    x += x_at;                                                                \
    tw += tw_at;                                                              \
    size_t g = get_global_id(0), items = get_global_size(0);                  \
    uint lid = get_local_id(0);                                               \
    if (lid < STAGED_TWIDDLES) lw[lid] = ROOT(lid);                           \
    barrier(CLK_LOCAL_MEM_FENCE);                                             \
    DECLS;                                                                    \
    T v[8];                                                                   \
    for (uint k = 0; k < 8; k++) v[k] = (T)x[k * items + g];                  \
    for (uint r = 0; r < rounds; r++) {                                       \
        _Pragma("unroll") BLOCK(BF, TW_STAGED, r)                             \
        EXCHANGE(lv)                                                          \
    }                                                                         \
    STORE(T, Q)                                                               \
}

#define ROOT_INT(i) ((ulong2)(tw[i], tw[STAGED_TWIDDLES + (i)]))
#define ROOT_F64(i) ((double)tw[i])
STAGED_KERNEL(staged_int, u64, ulong2, ROOT_INT, u64 two_q = 2 * q, BF_INT_STAGED, q)
STAGED_KERNEL(staged_f64, double, double, ROOT_F64,
              double qd = (double)q; double two_q = 2.0 * qd; double qinv = 1.0 / qd,
              BF_F64_STAGED, qd)
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
}

/// Where the values and twiddles of a kernel live (see the module's doc).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Layout {
    Registers,
    Staged,
}

impl Layout {
    pub const ALL: [Layout; 2] = [Layout::Registers, Layout::Staged];

    pub fn name(self) -> &'static str {
        match self {
            Layout::Registers => "registers",
            Layout::Staged => "staged",
        }
    }

    /// The twiddles of its table.
    pub fn twiddles(self) -> usize {
        match self {
            Layout::Registers => TWIDDLES,
            Layout::Staged => STAGED_TWIDDLES,
        }
    }

    /// Twiddle index of the butterfly at registers (k, k + 2^s) in layer s of round r, for
    /// item i of its group.
    fn twiddle(self, r: usize, s: usize, k: usize, i: usize) -> usize {
        match self {
            Layout::Registers => (r + s) % TWIDDLES,
            Layout::Staged => (3 * r + s + k + i) % STAGED_TWIDDLES,
        }
    }

    /// Work items a launch's item count must be a multiple of.
    pub fn group(self) -> usize {
        match self {
            Layout::Registers => 1,
            Layout::Staged => GROUP,
        }
    }
}

fn sig(arith: Arith, layout: Layout) -> KernelSig {
    KernelSig {
        name: match (layout, arith) {
            (Layout::Registers, Arith::Int) => "butterflies_int",
            (Layout::Registers, Arith::F64) => "butterflies_f64",
            (Layout::Staged, Arith::Int) => "staged_int",
            (Layout::Staged, Arith::F64) => "staged_f64",
        },
        params: &[
            ("x", ArgType::Buf),
            ("tw", ArgType::Buf),
            ("q", ArgType::U64),
            ("rounds", ArgType::U32),
        ],
    }
}

/// The constants [`SOURCE`] is built with.
pub fn build_options() -> String {
    format!("-D GROUP={GROUP} -D TWIDDLES={TWIDDLES} -D STAGED_TWIDDLES={STAGED_TWIDDLES}")
}

/// The twiddles of the kernels' table: `w` and their Shoup words.
pub fn table(q: &Modulus, w: &[u64]) -> Vec<u64> {
    let mut t = w.to_vec();
    t.extend(w.iter().map(|&w| ShoupOperand::new(w, q).quotient));
    t
}

/// The host reference of `layout`'s kernels: `values` (item-major: value k of item g at
/// k * items + g, each in [0, q)) after `rounds` rounds with twiddles `w`
/// (`layout.twiddles()` of them), canonical.
pub fn reference(
    values: &[u64],
    items: usize,
    q: &Modulus,
    w: &[u64],
    rounds: u32,
    layout: Layout,
) -> Vec<u64> {
    assert_eq!(w.len(), layout.twiddles());
    let group = layout.group();
    assert!(items.is_multiple_of(group));
    let mut out = values.to_vec();
    for first in (0..items).step_by(group) {
        let mut v: Vec<[u64; VALUES]> = (first..first + group)
            .map(|g| std::array::from_fn(|k| values[k * items + g]))
            .collect();
        for r in 0..rounds as usize {
            for (i, v) in v.iter_mut().enumerate() {
                for s in 0..3 {
                    let d = 1 << s;
                    for k in (0..VALUES).filter(|k| k & d == 0) {
                        let wy = multiply_uint_mod(w[layout.twiddle(r, s, k, i)], v[k + d], q);
                        (v[k], v[k + d]) = (add_uint_mod(v[k], wy, q), sub_uint_mod(v[k], wy, q));
                    }
                }
            }
            if layout == Layout::Staged {
                // Slot p = k GROUP + i holds value k of item i; item i' reads slots 8 i' + k'.
                v = (0..group)
                    .map(|i| {
                        std::array::from_fn(|k| {
                            v[(i * VALUES + k) % group][(i * VALUES + k) / group]
                        })
                    })
                    .collect();
            }
        }
        for (i, v) in v.iter().enumerate() {
            for (k, &x) in v.iter().enumerate() {
                out[k * items + first + i] = x;
            }
        }
    }
    out
}

/// Runs the kernel of `arith` and `layout` over `values` (item-major, `values.len() /
/// VALUES` items, a multiple of `layout.group()`) on `queue` with twiddles `w`: the
/// results, and the kernel's device time.
#[allow(clippy::too_many_arguments)] // the kernel's choice, its inputs and its rounds
pub fn run(
    ctx: &Context,
    queue: &Queue,
    arith: Arith,
    layout: Layout,
    values: &[u64],
    q: &Modulus,
    w: &[u64],
    rounds: u32,
) -> Result<(Vec<u64>, Duration)> {
    let items = values.len() / VALUES;
    if w.len() != layout.twiddles() || !items.is_multiple_of(layout.group()) {
        return Err(Error::InvalidArgument(format!(
            "{} butterflies: {} twiddles and {items} items (want {} and a multiple of {})",
            layout.name(),
            w.len(),
            layout.twiddles(),
            layout.group()
        )));
    }
    let sig = sig(arith, layout);
    let kernel = sig.build(&ctx.program(&[SOURCE], &build_options())?, &[])?;
    let x = ctx.upload(queue, values)?;
    let tw = ctx.upload(queue, &table(q, w))?;
    let local = (layout == Layout::Staged).then(|| GROUP.into());
    let mut event = Event::empty();
    // SAFETY: every argument of the signature is set here; item g < items touches words
    // k * items + g < values.len() of x and the 2 * layout.twiddles() words of tw (checked
    // above); a staged group's local memory is its own.
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
        cl::enqueue_on(queue, &kernel, items, local, Some(&mut event))?;
    }
    queue.finish()?;
    let t = cl::event_times(&event)?;
    Ok((
        cl::download(queue, &x)?,
        Duration::from_nanos(t.end - t.start),
    ))
}
