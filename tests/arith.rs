//! Modular arithmetic: each host reference in `seal_opencl::arith` equals plain `u128`
//! arithmetic, and each OpenCL helper (through its test kernel) equals the host reference
//! word for word, on edge values and fresh random values, for primes of 17 to 60 bits.

use rand::Rng;
use seal_opencl::arith::{self, Modulus, ShoupOperand};
use seal_opencl::cl::KernelArg::{Buf, U32, U64};
use seal_opencl::cl::{self, sources, ArgType, Context, KernelSig};
use seal_opencl::config::Config;
use seal_opencl_testkit::harness::{primes_17_to_60_bits as primes, rng};

const POISON: u64 = 0xBAD0_BAD0_BAD0_BAD0;

/// Values in [0, bound): the edges 0, 1, bound - 1, bound - 2, then random ones.
fn values(rng: &mut impl Rng, bound: u64, n: usize) -> Vec<u64> {
    let mut v = vec![0, 1 % bound, bound - 1, bound.saturating_sub(2)];
    v.extend((v.len()..n).map(|_| rng.gen_range(0..bound)));
    v
}

/// arith_test.cl's one test kernel: three inputs, the output, the prime with its Barrett
/// words, and the number of the helper to apply (its index in [`HELPERS`]).
const TEST_ARITH: KernelSig = KernelSig {
    name: "test_arith",
    params: &[
        ("a", ArgType::Buf),
        ("b", ArgType::Buf),
        ("c", ArgType::Buf),
        ("out", ArgType::Buf),
        ("q", ArgType::U64),
        ("r0", ArgType::U64),
        ("r1", ArgType::U64),
        ("helper", ArgType::U32),
    ],
};

/// The helpers of arith.cl that `test_arith` applies, in the order of its cases.
const HELPERS: [&str; 13] = [
    "add_uint_mod",
    "sub_uint_mod",
    "negate_uint_mod",
    "barrett_reduce_64",
    "barrett_reduce_128",
    "multiply_uint_mod",
    "barrett_reduce_dq",
    "multiply_uint_mod_dq",
    "multiply_uint_mod_shoup",
    "multiply_uint_mod_shoup_lazy",
    "mad_uint_mod",
    "butterfly_forward_lazy",
    "butterfly_inverse_lazy",
];

#[test]
fn signatures_match_arith_test_cl() {
    cl::check_source(sources::ARITH_TEST, &[&TEST_ARITH]).unwrap();
}

struct Device {
    ctx: std::sync::Arc<Context>,
    queue: cl::Queue,
    program: cl::Program,
}

impl Device {
    fn new() -> Self {
        let ctx = Context::new(&Config::from_env().unwrap().device).unwrap();
        let queue = ctx.queue(false).unwrap();
        let program = ctx
            .program(&[sources::ARITH, sources::ARITH_TEST], "")
            .unwrap();
        Device {
            ctx,
            queue,
            program,
        }
    }

    /// Runs `test_<helper>` over `inputs` a, b, c (a and b of equal lengths, c at least
    /// as long) into a poisoned output of `want.len() / a.len()` words per item, and
    /// checks it against `want` word for word; an error shows the first `shown` inputs.
    fn check(&self, helper: &str, m: &Modulus, inputs: [&[u64]; 3], shown: usize, want: &[u64]) {
        let [a, b, c] = inputs;
        let n = a.len();
        assert!(b.len() == n && c.len() >= n);
        let up = |v: &[u64]| self.ctx.upload(&self.queue, v).unwrap();
        let (da, db, dc) = (up(a), up(b), up(c));
        let out = self.ctx.buffer(&self.queue, want.len()).unwrap();
        cl::poison(&self.queue, &out, POISON).unwrap();
        let number = HELPERS
            .iter()
            .position(|&h| h == helper)
            .expect("a helper of test_arith");
        let [r0, r1, _] = m.const_ratio();
        let args = [
            ("a", Buf(&da)),
            ("b", Buf(&db)),
            ("c", Buf(&dc)),
            ("out", Buf(&out)),
            ("q", U64(m.value())),
            ("r0", U64(r0)),
            ("r1", U64(r1)),
            ("helper", U32(number as u32)),
        ];
        let kernel = TEST_ARITH.build(&self.program, &args).unwrap();
        // SAFETY: test_arith reads a[i], b[i], c[i] (c[2i+1] for butterflies,
        // whose c holds 2n words) and writes out[i * out_per_item ..] for i < n, with
        // out_per_item = want.len() / n.
        unsafe { cl::enqueue_on(&self.queue, &kernel, n, None, None).unwrap() };
        let got = cl::download(&self.queue, &out).unwrap();
        for (i, (g, w)) in got.iter().zip(want).enumerate() {
            let item = i * n / want.len();
            assert_eq!(
                g,
                w,
                "{helper} q={} item {item} inputs {:?}: device {g:#x}, host {w:#x}",
                m.value(),
                inputs[..shown]
                    .iter()
                    .map(|v| v.get(item))
                    .collect::<Vec<_>>()
            );
        }
    }
}

/// Runs `f` with the device, a random source and each prime of `primes` (as a `Modulus`
/// and its value).
fn each_prime(mut f: impl FnMut(&Device, &mut rand::rngs::StdRng, Modulus, u64)) {
    let dev = Device::new();
    let mut rng = rng();
    for m in primes() {
        f(&dev, &mut rng, m, m.value());
    }
}

/// f(i) for i < n, each pair's two words in turn.
fn pairs(n: usize, f: impl Fn(usize) -> (u64, u64)) -> Vec<u64> {
    (0..n).flat_map(|i| <[u64; 2]>::from(f(i))).collect()
}

/// f(a[i], b[i]) for every i.
fn map2(a: &[u64], b: &[u64], f: impl Fn(u64, u64) -> u64) -> Vec<u64> {
    a.iter().zip(b).map(|(&x, &y)| f(x, y)).collect()
}

#[test]
fn add_sub_negate() {
    each_prime(|dev, rng, m, q| {
        let a = values(rng, q, 256);
        let mut b = values(rng, q, 256);
        b.reverse();
        let add = map2(&a, &b, |x, y| arith::add_uint_mod(x, y, &m));
        let sub = map2(&a, &b, |x, y| arith::sub_uint_mod(x, y, &m));
        let neg: Vec<u64> = a.iter().map(|&x| arith::negate_uint_mod(x, &m)).collect();
        for i in 0..a.len() {
            let (x, y, q) = (a[i] as u128, b[i] as u128, q as u128);
            assert_eq!(add[i] as u128, (x + y) % q);
            assert_eq!(sub[i] as u128, (x + q - y) % q);
            assert_eq!(neg[i] as u128, (q - x) % q);
        }
        dev.check("add_uint_mod", &m, [&a, &b, &a], 2, &add);
        dev.check("sub_uint_mod", &m, [&a, &b, &a], 2, &sub);
        dev.check("negate_uint_mod", &m, [&a, &b, &a], 1, &neg);
    });
}

#[test]
fn barrett_reductions() {
    each_prime(|dev, rng, m, q| {
        // 64-bit inputs over the whole word, with multiples of q and their neighbours.
        let mut x = values(rng, u64::MAX, 256);
        x.extend([
            q,
            q + 1,
            2 * q - 1,
            2 * q,
            u64::MAX / q * q,
            u64::MAX / q * q - 1,
        ]);
        let want: Vec<u64> = x.iter().map(|&v| arith::barrett_reduce_64(v, &m)).collect();
        for (v, w) in x.iter().zip(&want) {
            assert_eq!(*w, v % q);
        }
        dev.check("barrett_reduce_64", &m, [&x, &x, &x], 1, &want);

        // 128-bit inputs: every product of two residues (what mulmod feeds it), q^2 - 1,
        // and arbitrary 128-bit words.
        let mut lo = Vec::new();
        let mut hi = Vec::new();
        let mut push = |v: u128| {
            lo.push(v as u64);
            hi.push((v >> 64) as u64);
        };
        push(q as u128 * q as u128 - 1);
        push(u128::MAX);
        for _ in 0..256 {
            push(rng.gen_range(0..q) as u128 * rng.gen_range(0..q) as u128);
            push(rng.gen::<u128>());
        }
        let want = map2(&lo, &hi, |l, h| arith::barrett_reduce_128(l, h, &m));
        for i in 0..lo.len() {
            let v = (hi[i] as u128) << 64 | lo[i] as u128;
            assert_eq!(
                want[i] as u128,
                v % q as u128,
                "barrett128 of {v:#x} mod {q}"
            );
        }
        dev.check("barrett_reduce_128", &m, [&lo, &hi, &lo], 2, &want);
    });
}

#[test]
fn dq_barrett_reductions() {
    let dev = Device::new();
    let mut rng = rng();
    // The 17..60-bit primes, and the extremes of the shifts: m = 2 (no shift of x) and
    // m = 61 (a shift of the product by 64).
    let edges = [3, (1 << 61) - 1].map(|q| Modulus::new(q).unwrap());
    for m in primes().into_iter().chain(edges) {
        let q = m.value();
        let bits = m.bit_count();
        let top = (1u128 << (2 * bits)) - 1;
        let mu = vec![m.dq_ratio(); 520];
        assert_eq!(mu[0] as u128, (1u128 << (2 * bits + 1)) / q as u128);

        // Every x < 2^(2m): the largest, the largest multiple of q and its neighbours,
        // q^2 - 1, products of residues and arbitrary words below the bound.
        let mut lo = Vec::new();
        let mut hi = Vec::new();
        let mut push = |v: u128| {
            lo.push(v as u64);
            hi.push((v >> 64) as u64);
        };
        let top_multiple = top / q as u128 * q as u128;
        for v in [
            0,
            1,
            top,
            top_multiple,
            top_multiple - 1,
            q as u128 * q as u128 - 1,
        ] {
            push(v);
        }
        for _ in 0..256 {
            push(rng.gen_range(0..q) as u128 * rng.gen_range(0..q) as u128);
            push(rng.gen_range(0..=top));
        }
        let want = map2(&lo, &hi, |l, h| arith::barrett_reduce_dq(l, h, &m));
        for i in 0..lo.len() {
            let v = (hi[i] as u128) << 64 | lo[i] as u128;
            assert_eq!(want[i] as u128, v % q as u128, "dq of {v:#x} mod {q}");
        }
        dev.check("barrett_reduce_dq", &m, [&lo, &hi, &mu], 2, &want);

        let a = values(&mut rng, q, 256);
        let b: Vec<u64> = values(&mut rng, q, 256).into_iter().rev().collect();
        let mul = map2(&a, &b, |x, y| arith::multiply_uint_mod_dq(x, y, &m));
        assert_eq!(mul, map2(&a, &b, |x, y| arith::multiply_uint_mod(x, y, &m)));
        dev.check("multiply_uint_mod_dq", &m, [&a, &b, &mu], 2, &mul);
    }
}

#[test]
fn multiplications_and_mad() {
    each_prime(|dev, rng, m, q| {
        let a = values(rng, q, 256);
        let b: Vec<u64> = values(rng, q, 256).into_iter().rev().collect();
        let c = values(rng, q, 256);

        let mul = map2(&a, &b, |x, y| arith::multiply_uint_mod(x, y, &m));
        let mad: Vec<u64> = (0..a.len())
            .map(|i| arith::mad_uint_mod(a[i], b[i], c[i], &m))
            .collect();
        for i in 0..a.len() {
            let (x, y, z, q) = (a[i] as u128, b[i] as u128, c[i] as u128, q as u128);
            assert_eq!(mul[i] as u128, x * y % q);
            assert_eq!(mad[i] as u128, (x * y + z) % q);
        }
        dev.check("multiply_uint_mod", &m, [&a, &b, &a], 2, &mul);
        dev.check("mad_uint_mod", &m, [&a, &b, &c], 3, &mad);

        // Shoup: x may be any 64-bit word (the lazy NTT feeds values up to 4q).
        let x = values(rng, u64::MAX, 256);
        let ops: Vec<ShoupOperand> = b.iter().map(|&w| ShoupOperand::new(w, &m)).collect();
        let w: Vec<u64> = ops.iter().map(|o| o.operand).collect();
        let wq: Vec<u64> = ops.iter().map(|o| o.quotient).collect();
        let lazy: Vec<u64> = (0..x.len())
            .map(|i| arith::multiply_uint_mod_shoup_lazy(x[i], ops[i], &m))
            .collect();
        let full: Vec<u64> = (0..x.len())
            .map(|i| arith::multiply_uint_mod_shoup(x[i], ops[i], &m))
            .collect();
        for i in 0..x.len() {
            let exact = (x[i] as u128 * w[i] as u128 % q as u128) as u64;
            assert!(
                lazy[i] < 2 * q && lazy[i] % q == exact,
                "lazy shoup {} * {}",
                x[i],
                w[i]
            );
            assert_eq!(full[i], exact);
            assert_eq!(wq[i] as u128, ((w[i] as u128) << 64) / q as u128);
        }
        dev.check("multiply_uint_mod_shoup_lazy", &m, [&x, &w, &wq], 2, &lazy);
        dev.check("multiply_uint_mod_shoup", &m, [&x, &w, &wq], 2, &full);
    });
}

#[test]
fn harvey_butterflies() {
    each_prime(|dev, rng, m, q| {
        let roots: Vec<ShoupOperand> = values(rng, q, 256)
            .into_iter()
            .map(|w| ShoupOperand::new(w, &m))
            .collect();
        let packed: Vec<u64> = roots.iter().flat_map(|r| [r.operand, r.quotient]).collect();

        // Forward: inputs anywhere in [0, 4q), including just under 2q and 4q.
        let mut x = values(rng, 4 * q, 256);
        x[2] = 2 * q - 1;
        let y: Vec<u64> = values(rng, 4 * q, 256).into_iter().rev().collect();
        let want = pairs(x.len(), |i| {
            arith::butterfly_forward_lazy(x[i], y[i], roots[i], &m)
        });
        for i in 0..x.len() {
            let (q128, w) = (q as u128, roots[i].operand as u128);
            let wy = w * y[i] as u128 % q128;
            assert!(want[2 * i] < 4 * q && want[2 * i + 1] < 4 * q);
            assert_eq!(want[2 * i] as u128 % q128, (x[i] as u128 + wy) % q128);
            assert_eq!(
                want[2 * i + 1] as u128 % q128,
                (x[i] as u128 + q128 - wy) % q128
            );
        }
        dev.check("butterfly_forward_lazy", &m, [&x, &y, &packed], 2, &want);

        // Inverse: inputs in [0, 2q).
        let x = values(rng, 2 * q, 256);
        let y: Vec<u64> = values(rng, 2 * q, 256).into_iter().rev().collect();
        let want = pairs(x.len(), |i| {
            arith::butterfly_inverse_lazy(x[i], y[i], roots[i], &m)
        });
        for i in 0..x.len() {
            let (q128, w) = (q as u128, roots[i].operand as u128);
            let (a, b) = (x[i] as u128, y[i] as u128);
            assert!(want[2 * i] < 2 * q && want[2 * i + 1] < 2 * q);
            assert_eq!(want[2 * i] as u128 % q128, (a + b) % q128);
            assert_eq!(
                want[2 * i + 1] as u128 % q128,
                (a + 2 * q128 - b) * w % q128
            );
        }
        dev.check("butterfly_inverse_lazy", &m, [&x, &y, &packed], 2, &want);
    });
}

#[test]
fn modulus_rejects_out_of_range_values() {
    assert!(Modulus::new(0).is_err());
    assert!(Modulus::new(1).is_err());
    assert!(Modulus::new(1 << 61).is_err());
    assert!(Modulus::new((1 << 61) - 1).is_ok());
}
