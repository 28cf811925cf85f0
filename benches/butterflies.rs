//! The device's butterfly rate (benches/common/butterflies.rs): the NTT's Harvey butterfly
//! with Shoup's product on 64-bit words (`int`, ntt.cl's arithmetic) and with the FMA-exact
//! product on doubles (`f64`, primes below 2^50), for a 50-bit and a 60-bit prime, each in
//! two layouts: in registers alone (the arithmetic's rate), and staged (values exchanged
//! through local memory after every round, twiddles read from local memory, as a staged
//! NTT's block pass does). Each kernel's output is checked word for word against the host
//! reference before it is timed. The rate bounds what arithmetic alone allows a transform: a
//! transform of L primes at N = 2^n takes L n N / 2 butterflies.
//!
//! ```text
//! cargo bench --bench butterflies -- [--quick] [--items N] [--rounds R] [--reps R] [--json PATH]
//! ```
//! Defaults: 2^20 work items of 8 values, 64 rounds of 12 butterflies, the median of 10
//! launches after a warm-up; `--quick`: 2^12 items, 2 rounds, 2 launches. The items are
//! rounded up to a multiple of the staged layout's group. The table goes to stdout; JSON to
//! `--json PATH`, by default `benches/results/butterflies-<device>-<date>.json` (with
//! `--quick` only when `--json` is given).

mod common;

use rand::{Rng, SeedableRng};
use serde::Serialize;

use common::butterflies::{reference, run, Arith, Layout, GROUP, PER_ROUND, VALUES};
use common::{us, Args, Run};
use seal_opencl::cl::Context;
use seal_opencl::config::Config;
use seal_opencl::{Error, Result};
use seal_opencl_testkit::harness::primes;

const USAGE: &str = "butterflies [--quick] [--items N] [--rounds R] [--reps R] [--json PATH]";

#[derive(Serialize)]
struct Row {
    prime_bits: u32,
    layout: &'static str,
    arith: &'static str,
    median_us: f64,
    butterflies: u64,
    g_butterflies_per_s: f64,
    identical: bool,
}

fn main() -> Result<()> {
    let args = Args::parse(USAGE, &["--items", "--rounds", "--reps"])?;
    let items = args
        .count("--items", 1 << 12, 1 << 20)?
        .next_multiple_of(GROUP);
    let rounds = args.count("--rounds", 2, 64)? as u32;
    let reps = args.count("--reps", 2, 10)?;
    let mut run_info = Run::new("butterflies", args.quick)?;
    run_info.banner();
    let ctx = Context::new(&Config::from_env()?.device)?;
    let queue = ctx.queue(true)?;
    let mut rng = rand::rngs::StdRng::seed_from_u64(rand::random());
    let butterflies = (items * PER_ROUND) as u64 * rounds as u64;
    println!(
        "{items} work items x {VALUES} values, {rounds} rounds of {PER_ROUND} butterflies \
         ({butterflies} per launch), median of {reps} launches"
    );
    println!(
        "{:>10} {:>9} {:>6} {:>10} {:>14}  check",
        "prime bits", "layout", "arith", "us", "G butterflies/s"
    );
    let mut rows = Vec::new();
    for q in primes(16, &[50, 60]) {
        let bits = 64 - q.value().leading_zeros();
        let values: Vec<u64> = (0..items * VALUES)
            .map(|_| rng.gen_range(0..q.value()))
            .collect();
        for layout in Layout::ALL {
            let w: Vec<u64> = (0..layout.twiddles())
                .map(|_| rng.gen_range(0..q.value()))
                .collect();
            for arith in Arith::ALL.into_iter().filter(|a| a.allows(&q)) {
                // The check: up to two groups' worth of items, a few rounds, against the host
                // reference.
                let check_items = items.min(2 * GROUP);
                let sample: Vec<u64> = (0..VALUES)
                    .flat_map(|k| values[k * items..][..check_items].to_vec())
                    .collect();
                let (got, _) = run(&ctx, &queue, arith, layout, &sample, &q, &w, 3)?;
                let identical = got == reference(&sample, check_items, &q, &w, 3, layout);
                let mut times = Vec::new();
                for i in 0..=reps {
                    let (_, t) = run(&ctx, &queue, arith, layout, &values, &q, &w, rounds)?;
                    if i > 0 {
                        times.push(us(t));
                    }
                }
                let median_us = common::median(times);
                let row = Row {
                    prime_bits: bits,
                    layout: layout.name(),
                    arith: arith.name(),
                    median_us,
                    butterflies,
                    g_butterflies_per_s: butterflies as f64 / (median_us * 1e3),
                    identical,
                };
                println!(
                    "{:>10} {:>9} {:>6} {:>10.1} {:>14.1}  {}",
                    row.prime_bits,
                    row.layout,
                    row.arith,
                    row.median_us,
                    row.g_butterflies_per_s,
                    common::check_cell(row.identical)
                );
                rows.push(row);
            }
        }
    }
    let all = rows.iter().all(|r| r.identical);
    #[derive(Serialize)]
    struct Body {
        items: usize,
        values_per_item: usize,
        rounds: u32,
        reps: usize,
        rows: Vec<Row>,
    }
    let body = Body {
        items,
        values_per_item: VALUES,
        rounds,
        reps,
        rows,
    };
    common::write_json(&args, &mut run_info, &body)?;
    if !all {
        return Err(Error::Logic(
            "a kernel differs from the host reference".into(),
        ));
    }
    Ok(())
}
