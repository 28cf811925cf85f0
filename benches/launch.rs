//! The host's cost of one kernel launch by the state of the queue it enters: what a
//! launch-bound program (PIR's 13.8k launches a request, TenSEAL's 5.6k an inference)
//! pays per launch, and which way of submitting pays least.
//!
//! ```text
//! cargo bench --bench launch -- [--quick] [--json PATH] [--launches N] [--reps N]
//!                               [--device-us LIST] [--regions LIST]
//! ```
//! A launch is one kernel over 8192 work items (the width of a small ring's element-wise
//! kernel) that spins for about `--device-us` microseconds of device time (0: the empty
//! kernel) and writes one word per item to each of `--regions` buffer regions (1, or 10:
//! a chained key switch's count of arguments, each region two of them). The kernel's
//! arguments are set before every launch, as the backend does.
//!
//! Each row enqueues `--launches` launches on one in-order queue and reports, per launch,
//! the host's time inside the enqueue calls (`issue`) and the time from the first enqueue
//! until the queue finished (`wall`), medians over `--reps`:
//! - `synchronized`: every launch waited for before the next (`issue` is one enqueue into
//!   an idle queue);
//! - `stream`: back to back, as an application issues them; the device keeps up with the
//!   host when a launch's device time is under the host's issue time;
//! - `busy`: the stream (at most `BUSY_LAUNCHES` of it) behind one long kernel, so that every
//!   enqueue finds the device busy and the commands before it still pending, yet fewer
//!   pending than the driver holds before an enqueue blocks (about a thousand on NVIDIA's:
//!   a stream the device falls behind blocks the host there, which `stream` shows for
//!   kernels longer than the issue; its `wall` includes the long kernel);
//! - `gated`: the stream behind a barrier on a user event, released after the last
//!   enqueue: nothing can be submitted while the host enqueues (`wall` includes the release
//!   and the device's run of the whole stream);
//! - `gated by 32`: a new gate every 32 launches, the previous one released when the next
//!   is in place (a backend that holds an operation's or a few operations' launches).
//!
//! Device times come from the queue's profiling on a separate queue (calibration only).

mod common;

use std::time::Instant;

use serde::Serialize;

use seal_opencl::cl::{self, ArgType, Event, Kernel, KernelArg, KernelSig, Queue, Region};
use seal_opencl::config::Config;
use seal_opencl::device::Devices;
use seal_opencl::Result;

use common::{median, Args, Run};

const USAGE: &str = "cargo bench --bench launch -- [--quick] [--json PATH] [--launches N] \
                     [--reps N] [--device-us LIST] [--regions LIST]";

/// Work items of every launch.
const ITEMS: usize = 8192;
/// Work-group size of every launch.
const GROUP: usize = 256;
/// The launches of a `busy` row: under the ~1000 pending commands at which NVIDIA's driver
/// blocks an enqueue.
const BUSY_LAUNCHES: usize = 500;
/// The most buffer regions a launch writes (the `spin` kernel's arguments).
const MAX_REGIONS: usize = 10;

/// `spin`: item i runs `iters` steps of an LCG from i and stores the result at word i of
/// each of the first `regions` regions (the rest are set but not written).
const SPIN_SOURCE: &str = r#"
__kernel void spin(ulong iters, uint regions,
                   __global ulong *r0, ulong r0_at, __global ulong *r1, ulong r1_at,
                   __global ulong *r2, ulong r2_at, __global ulong *r3, ulong r3_at,
                   __global ulong *r4, ulong r4_at, __global ulong *r5, ulong r5_at,
                   __global ulong *r6, ulong r6_at, __global ulong *r7, ulong r7_at,
                   __global ulong *r8, ulong r8_at, __global ulong *r9, ulong r9_at) {
    r0 += r0_at; r1 += r1_at; r2 += r2_at; r3 += r3_at; r4 += r4_at;
    r5 += r5_at; r6 += r6_at; r7 += r7_at; r8 += r8_at; r9 += r9_at;
    size_t i = get_global_id(0);
    ulong x = i;
    for (ulong k = 0; k < iters; k++) x = x * 6364136223846793005UL + 1442695040888963407UL;
    __global ulong *r[10] = {r0, r1, r2, r3, r4, r5, r6, r7, r8, r9};
    for (uint j = 0; j < regions; j++) r[j][i] = x;
}
"#;

const SPIN: KernelSig = KernelSig {
    name: "spin",
    params: &[
        ("iters", ArgType::U64),
        ("regions", ArgType::U32),
        ("r0", ArgType::Buf),
        ("r1", ArgType::Buf),
        ("r2", ArgType::Buf),
        ("r3", ArgType::Buf),
        ("r4", ArgType::Buf),
        ("r5", ArgType::Buf),
        ("r6", ArgType::Buf),
        ("r7", ArgType::Buf),
        ("r8", ArgType::Buf),
        ("r9", ArgType::Buf),
    ],
};
const REGION_NAMES: [&str; MAX_REGIONS] =
    ["r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7", "r8", "r9"];

/// One kernel and its buffers; `launch` sets every argument and enqueues.
struct Spin {
    kernel: Kernel,
    regions: Vec<Region>,
}

impl Spin {
    /// Sets the arguments (`regions` written, the other regions set all the same) and
    /// enqueues one launch on `queue`.
    fn launch(
        &self,
        queue: &Queue,
        iters: u64,
        regions: usize,
        event: Option<&mut Event>,
    ) -> Result<()> {
        let mut args: Vec<(&str, KernelArg)> = vec![
            ("iters", KernelArg::U64(iters)),
            ("regions", KernelArg::U32(regions as u32)),
        ];
        // A launch with one region sets one buffer; the other slots keep the first
        // launch's, as a kernel of one buffer argument would.
        args.extend(
            REGION_NAMES
                .iter()
                .zip(&self.regions)
                .take(regions)
                .map(|(name, region)| (*name, KernelArg::Buf(region))),
        );
        let preset: Vec<&str> = REGION_NAMES[regions..].to_vec();
        // SAFETY: every region holds ITEMS words and the kernel writes words 0..ITEMS of
        // the first `regions` of them; the slots not set here were set when the kernel was
        // built (main's `fixed`) to regions of the same size, which `self` keeps alive. The
        // kernel is used by one thread.
        unsafe {
            SPIN.set(&self.kernel, &args, &preset)?;
            cl::enqueue_on(queue, &self.kernel, ITEMS, Some(GROUP.into()), event)
        }
    }
}

#[derive(Serialize)]
struct Row {
    mode: &'static str,
    device_us: f64,
    regions: usize,
    /// Host time inside the enqueue calls, per launch (median over reps).
    issue_us: f64,
    /// First enqueue to queue finished, per launch (median over reps).
    wall_us: f64,
}

#[derive(Serialize)]
struct Report {
    items: usize,
    group: usize,
    launches: usize,
    reps: usize,
    /// Device time of the empty kernel and of one spin step, from profiling.
    empty_kernel_us: f64,
    ns_per_iter: f64,
    rows: Vec<Row>,
}

/// Device time of one launch of `iters` steps (median of 5), on a profiling queue.
fn device_us(spin: &Spin, queue: &Queue, iters: u64) -> Result<f64> {
    let mut times = Vec::new();
    for _ in 0..5 {
        let mut event = Event::empty();
        spin.launch(queue, iters, 1, Some(&mut event))?;
        queue.finish()?;
        times.push(cl::event_nanos(&event)? as f64 / 1e3);
    }
    Ok(median(times))
}

/// Per-launch (issue, wall) in microseconds of `launches` launches in `mode`.
fn one_rep(
    spin: &Spin,
    queue: &Queue,
    gate_context: &cl::Context,
    mode: &str,
    (iters, regions, launches): (u64, usize, usize),
    busy_iters: u64,
) -> Result<(f64, f64)> {
    queue.finish()?;
    let launches = if mode == "busy" {
        launches.min(BUSY_LAUNCHES)
    } else {
        launches
    };
    let mut issue = 0f64;
    let start = Instant::now();
    let new_gate = || -> Result<Event> {
        let gate = gate_context.user_event()?;
        cl::enqueue_barrier(queue, std::slice::from_ref(&gate))?;
        Ok(gate)
    };
    let mut gate = match mode {
        "gated" | "gated by 32" => Some(new_gate()?),
        "busy" => {
            spin.launch(queue, busy_iters, 1, None)?;
            None
        }
        _ => None,
    };
    for k in 0..launches {
        let t = Instant::now();
        if mode == "gated by 32" && k > 0 && k % 32 == 0 {
            let next = new_gate()?;
            if let Some(held) = gate.replace(next) {
                cl::complete_user_event(&held)?;
            }
        }
        spin.launch(queue, iters, regions, None)?;
        issue += t.elapsed().as_secs_f64();
        if mode == "synchronized" {
            queue.finish()?;
        }
    }
    if let Some(gate) = &gate {
        cl::complete_user_event(gate)?;
    }
    queue.finish()?;
    let wall = start.elapsed().as_secs_f64();
    let per = 1e6 / launches as f64;
    Ok((issue * per, wall * per))
}

fn main() -> Result<()> {
    let args = Args::parse(USAGE, &["--launches", "--reps", "--device-us", "--regions"])?;
    let launches = args.count("--launches", 200, 2000)?;
    let reps = args.count("--reps", 2, 7)?;
    let targets: Vec<f64> =
        args.list("--device-us", &[0.0, 20.0], &[0.0, 3.0, 10.0, 20.0, 40.0])?;
    let region_counts: Vec<usize> = args.list("--regions", &[1, 10], &[1, 10])?;
    if region_counts.iter().any(|&r| r == 0 || r > MAX_REGIONS) {
        return Err(seal_opencl::Error::InvalidArgument(format!(
            "--regions: each count must be 1 to {MAX_REGIONS}"
        )));
    }
    cl::check_source(SPIN_SOURCE, &[&SPIN]).map_err(seal_opencl::Error::Logic)?;
    let mut run = Run::new("launch", args.quick)?;
    run.banner();

    let devices = Devices::new(Config::from_env()?.device_options())?;
    let graph = devices.tiles()[0].graph(0)?;
    let context = graph.context();
    let queue = graph.queue();
    let program = context.program(&[SPIN_SOURCE], "")?;
    let regions = (0..MAX_REGIONS)
        .map(|_| context.buffer(queue, ITEMS))
        .collect::<Result<Vec<_>>>()?;
    let fixed: Vec<(&str, KernelArg)> = REGION_NAMES
        .iter()
        .zip(&regions)
        .map(|(name, region)| (*name, KernelArg::Buf(region)))
        .collect();
    let spin = Spin {
        kernel: SPIN.build(&program, &fixed)?,
        regions,
    };

    // Calibration: device time is linear in the steps; fit it from the empty kernel and
    // a long one.
    let profiling = context.queue(true)?;
    let empty_us = device_us(&spin, &profiling, 0)?;
    let mut long_iters = 1u64 << 10;
    let mut long_us = device_us(&spin, &profiling, long_iters)?;
    while long_us < 1000.0 && long_iters < 1 << 40 {
        long_iters *= 2;
        long_us = device_us(&spin, &profiling, long_iters)?;
    }
    let ns_per_iter = (long_us - empty_us).max(1e-9) * 1e3 / long_iters as f64;
    let iters_for = |us: f64| ((us - empty_us).max(0.0) * 1e3 / ns_per_iter) as u64;
    println!(
        "{ITEMS} items in groups of {GROUP}; empty kernel {empty_us:.1} us of device time, \
         {ns_per_iter:.3} ns a step; {launches} launches a row, median of {reps}"
    );

    let mut rows = Vec::new();
    println!(
        "\n{:<14} {:>10} {:>8} {:>10} {:>10}",
        "mode", "device us", "regions", "issue us", "wall us"
    );
    for &target in &targets {
        let iters = iters_for(target);
        let device = device_us(&spin, &profiling, iters)?;
        // Long enough that the busy row's enqueues all find the device busy.
        let busy_iters = iters_for(launches.min(BUSY_LAUNCHES) as f64 * 40.0 + 1000.0);
        for &regions in &region_counts {
            for mode in ["synchronized", "stream", "busy", "gated", "gated by 32"] {
                let mut issue = Vec::new();
                let mut wall = Vec::new();
                // Rep 0 warms up (the kernel's first launch in this mode) and is dropped.
                for rep in 0..=reps {
                    let (i, w) = one_rep(
                        &spin,
                        queue,
                        context,
                        mode,
                        (iters, regions, launches),
                        busy_iters,
                    )?;
                    if rep > 0 {
                        issue.push(i);
                        wall.push(w);
                    }
                }
                let row = Row {
                    mode,
                    device_us: device,
                    regions,
                    issue_us: median(issue),
                    wall_us: median(wall),
                };
                println!(
                    "{:<14} {:>10.1} {:>8} {:>10.2} {:>10.2}",
                    row.mode, row.device_us, row.regions, row.issue_us, row.wall_us
                );
                rows.push(row);
            }
        }
    }

    let report = Report {
        items: ITEMS,
        group: GROUP,
        launches,
        reps,
        empty_kernel_us: empty_us,
        ns_per_iter,
        rows,
    };
    common::write_json(&args, &mut run, &report)
}
