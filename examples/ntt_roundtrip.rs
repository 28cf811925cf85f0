//! NTT round trips on the default OpenCL device (the first GPU, else the CPU through PoCL;
//! `SEAL_OPENCL_DEVICE` overrides): for N = 2^12 .. 2^16 and L = 8 primes, a forward and
//! an inverse NTT of a random polynomial with both strategies, each output checked word
//! for word against the host reference (SEAL's algorithm), with device times.
//!
//! ```text
//! cargo run --release --example ntt_roundtrip
//! ```

use rand::{Rng, SeedableRng};

use seal_opencl::arith::{coeff_modulus_create, Modulus};
use seal_opencl::cl::{self, Context, Event};
use seal_opencl::config::Config;
use seal_opencl::ntt::{create_ntt_tables, host, NttPlan, NttStrategy};
use seal_opencl::{Error, Result};

const PRIMES: usize = 8;

/// Device time of a transform: start of its first kernel to end of its last, in us.
fn span_us(events: &[Event]) -> Result<f64> {
    let (first, last) = (&events[0], &events[events.len() - 1]);
    cl::wait(last)?;
    Ok((cl::event_times(last)?.end - cl::event_times(first)?.start) as f64 / 1e3)
}

fn main() -> Result<()> {
    let ctx = Context::new(&Config::from_env()?.device)?;
    let queue = ctx.queue(true)?;
    let info = ctx.info();
    let kind = if info.is_gpu { "GPU" } else { "CPU" };
    println!(
        "device: {} ({}, {kind}); set SEAL_OPENCL_DEVICE=gpu|cpu|P:D to choose another",
        info.name, info.platform
    );
    println!(
        "{:>6} {:>3} {:<7} {:>9} {:>12} {:>12}  ok",
        "N", "L", "strategy", "launches", "forward us", "inverse us"
    );
    let mut rng = rand::rngs::StdRng::seed_from_u64(rand::random());
    let mut failures = 0;
    for log_n in 12..=16u32 {
        // Primes of 60, 50, 55, .. bits, as SEAL's CoeffModulus::Create picks them.
        let bits: Vec<i32> = (0..PRIMES as i32).map(|i| 60 - 5 * (i % 3)).collect();
        let moduli: Vec<Modulus> = coeff_modulus_create(1 << log_n, &bits)?
            .into_iter()
            .map(Modulus::new)
            .collect::<Result<_>>()?;
        let tables = create_ntt_tables(log_n, &moduli)?;
        let input: Vec<u64> = (0..PRIMES << log_n)
            .map(|i| rng.gen_range(0..moduli[i >> log_n].value()))
            .collect();
        let mut want = input.clone();
        host::transform_batch(&mut want, &tables, host::ntt_negacyclic_harvey);

        for strategy in [NttStrategy::Naive, NttStrategy::STAGED] {
            let plan = NttPlan::from_tables(&ctx, &queue, &tables, strategy)?;
            let buf = ctx.upload(&queue, &input)?;
            // Warm-up round trip (first launches carry one-time driver costs).
            plan.ntt_negacyclic_harvey(&queue, &buf, 1)?;
            plan.inverse_ntt_negacyclic_harvey(&queue, &buf, 1)?;
            let forward_us = span_us(&plan.ntt_negacyclic_harvey(&queue, &buf, 1)?)?;
            let forward_ok = cl::download(&queue, &buf)? == want;
            let inverse_us = span_us(&plan.inverse_ntt_negacyclic_harvey(&queue, &buf, 1)?)?;
            let ok = forward_ok && cl::download(&queue, &buf)? == input;
            failures += usize::from(!ok);
            println!(
                "{:>6} {:>3} {:<7} {:>9} {:>12.1} {:>12.1}  {}",
                format!("2^{log_n}"),
                PRIMES,
                strategy.to_string(),
                plan.launches_per_transform(),
                forward_us,
                inverse_us,
                if ok { "yes" } else { "NO" }
            );
        }
    }
    if failures > 0 {
        return Err(Error::Logic(format!(
            "{failures} round trips differ from the host reference"
        )));
    }
    println!("all outputs equal the host reference word for word");
    Ok(())
}
