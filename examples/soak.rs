//! Soak runs of a long-lived server on the GPU backend (`seal_opencl_testkit::soak`).
//!
//! ```text
//! cargo run --release --example soak -- [--sets 1000] [--operations 100000] [--log-n 13]
//!     [--every 100] [--out FILE]
//! ```
//! 1. Clients: `--sets` key sets (a fresh KeyGenerator each, as that many clients: relin
//!    keys and Galois keys for steps 1 and -1), served MulLin and rotations, 8 connected at
//!    once and an earlier one served again each round. Prints the device memory (pool and
//!    key cache) every `--every` sets; fails if key bytes exceed the cap
//!    (`SEAL_OPENCL_MAX_KEY_BYTES`, default a quarter of the device) or pool misses grow
//!    once more than 8 clients came.
//! 2. A server that never decrypts: `--operations` requests (MulLin + rescale, rotation,
//!    addition) with every result saved with SEAL's `save` and dropped; fails if pool misses
//!    or pool bytes grow after the first `--every` x 10 operations.
//!
//! Every result is compared with SEAL's CPU result. Parameters: N = 2^`--log-n`, primes
//! {60, 40 x 4, 60}, scale 2^40. `--out`: a JSON summary. Exits 1 on any failure.

use std::path::PathBuf;
use std::time::Instant;

use serde_json::json;

mod common;

use common::Flags;
use seal_opencl::ffi::DeviceMemory;
use seal_opencl::{Error, Result};
use seal_opencl_testkit::soak::{self, Reports, Soak};

struct Args {
    sets: usize,
    operations: usize,
    log_n: u32,
    every: usize,
    out: Option<PathBuf>,
}

fn parse_args() -> Result<Args> {
    let mut args = Args {
        sets: 1000,
        operations: 100_000,
        log_n: 13,
        every: 100,
        out: None,
    };
    let mut flags = Flags::from_env();
    while let Some(flag) = flags.next_flag() {
        match flag.as_str() {
            "--sets" => args.sets = flags.number(&flag)?,
            "--operations" => args.operations = flags.number(&flag)?,
            "--log-n" => args.log_n = flags.number(&flag)?,
            "--every" => args.every = flags.number::<usize>(&flag)?.max(1),
            "--out" => args.out = Some(PathBuf::from(flags.value(&flag)?)),
            _ => return Err(Error::InvalidArgument(format!("unknown flag {flag}"))),
        }
    }
    Ok(args)
}

fn mib(bytes: u64) -> f64 {
    bytes as f64 / (1 << 20) as f64
}

fn line(what: &str, done: usize, m: &DeviceMemory, start: Instant) {
    println!(
        "{what} {done:>7}: pool {:>9.1} MiB held (peak {:>9.1}), {:>6} misses, {:>9} hits; keys \
         {:>4} vectors {:>9.1} MiB of {:>9.1} MiB, {:>6} evicted; {:>7.1} s",
        mib(m.pool_bytes_held),
        mib(m.pool_peak_bytes_held),
        m.pool_misses,
        m.pool_hits,
        m.key_vectors,
        mib(m.key_bytes),
        mib(m.max_key_bytes),
        m.key_evictions,
        start.elapsed().as_secs_f64()
    );
}

fn main() {
    common::exit_on_error("soak: FAILED", 1, run);
}

fn run() -> Result<()> {
    let args = parse_args()?;
    seal_opencl::ffi::install_backend().map_err(|e| Error::Logic(e.to_string()))?;
    let device = common::device_description()?;
    println!(
        "device: {device}; N = 2^{}, primes 60, 40 x 4, 60",
        args.log_n
    );
    let mut s = Soak::new(args.log_n, &[60, 40, 40, 40, 40, 60], 40, 1)?;

    let start = Instant::now();
    let clients = soak::clients(
        &mut s,
        args.sets,
        Reports::every(args.every, |done, m| line("key sets", done, m, start)),
    )?;
    println!(
        "{} key sets, {} requests, all equal to SEAL's CPU results; peak key cache {:.1} MiB \
         (cap {:.1} MiB), peak pool {:.1} MiB",
        clients.key_sets,
        clients.requests,
        mib(clients.peak_key_bytes),
        mib(clients.last.max_key_bytes),
        mib(clients.peak_pool_bytes)
    );

    let start = Instant::now();
    let every = (args.every * 10).min(args.operations.max(1));
    let server = soak::server(
        &mut s,
        args.operations,
        Reports::every(every, |done, m| line("operations", done, m, start)),
    )?;
    println!(
        "{} operations saved, all equal to SEAL's CPU results; pool misses {} and bytes held \
         {:.1} MiB since the warm-up ({} operations)",
        server.operations,
        server.last.pool_misses,
        mib(server.last.pool_bytes_held),
        every
    );

    if let Some(path) = &args.out {
        let memory = |m: &DeviceMemory| {
            json!({
                "pool_bytes_held": m.pool_bytes_held,
                "pool_peak_bytes_held": m.pool_peak_bytes_held,
                "pool_misses": m.pool_misses,
                "pool_hits": m.pool_hits,
                "key_vectors": m.key_vectors,
                "key_bytes": m.key_bytes,
                "max_key_bytes": m.max_key_bytes,
                "key_evictions": m.key_evictions,
            })
        };
        let report = json!({
            "bench": "soak",
            "device": device,
            "log_n": args.log_n,
            "key_sets": clients.key_sets,
            "client_requests": clients.requests,
            "peak_key_bytes": clients.peak_key_bytes,
            "peak_pool_bytes_clients": clients.peak_pool_bytes,
            "after_clients": memory(&clients.last),
            "server_operations": server.operations,
            "server_after_warm_up": memory(&server.after_warm_up),
            "server_end": memory(&server.last),
            "mismatches": 0,
        });
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::Io(e.to_string()))?;
        }
        std::fs::write(
            path,
            serde_json::to_string_pretty(&report).unwrap_or_default(),
        )
        .map_err(|e| Error::Io(format!("{}: {e}", path.display())))?;
    }
    Ok(())
}
