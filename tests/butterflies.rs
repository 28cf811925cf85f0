//! The butterfly kernels of the butterflies bench (benches/common/butterflies.rs): Shoup's
//! product on 64-bit words and the FMA-exact product on doubles, in registers and staged
//! through local memory, each equal the host reference word for word, on fresh random values
//! and twiddles, for primes of 17 to 60 bits (the doubles' kernels for those below 2^50).
//! The kernels work in place: a value they failed to write would stay an input, which the
//! rounds change; a staged exchange that moved a value to the wrong item would too.

#[path = "../benches/common/butterflies.rs"]
#[allow(dead_code)] // the bench's constants this test does not use
mod butterflies;

use butterflies::{reference, run, Arith, Layout, GROUP, VALUES};
use rand::Rng;
use seal_opencl::cl::Context;
use seal_opencl::config::Config;
use seal_opencl_testkit::harness::{primes_17_to_60_bits as primes, rng};

#[test]
fn each_arithmetic_equals_the_reference() {
    let ctx = Context::new(&Config::from_env().unwrap().device).unwrap();
    let queue = ctx.queue(true).unwrap();
    let mut rng = rng();
    let (items, rounds) = (2 * GROUP, 5);
    for q in primes() {
        let mut values: Vec<u64> = (0..items * VALUES)
            .map(|_| rng.gen_range(0..q.value()))
            .collect();
        values[0] = q.value() - 1;
        values[1] = 0;
        for layout in Layout::ALL {
            let mut w: Vec<u64> = (0..layout.twiddles())
                .map(|_| rng.gen_range(0..q.value()))
                .collect();
            w[0] = q.value() - 1; // the largest twiddle
            let want = reference(&values, items, &q, &w, rounds, layout);
            for arith in Arith::ALL.into_iter().filter(|a| a.allows(&q)) {
                let (got, _) = run(&ctx, &queue, arith, layout, &values, &q, &w, rounds).unwrap();
                assert_eq!(
                    got,
                    want,
                    "{} {} butterflies, q = {}",
                    layout.name(),
                    arith.name(),
                    q.value()
                );
            }
        }
    }
}
