//! Tiles and queues: partitioning, independent graphs on different queues (same results
//! as one queue, and no waiting on each other), round-robin graphs, the sync-after-launch
//! switch, frames over every tile.
//!
//! On a CPU device (PoCL in CI) the device is split into two sub-devices; on a GPU the
//! tiles are whatever the driver exposes, and every GPU of the platform takes part.

mod common;

use std::time::Duration;

use seal_opencl::cl::{self, DeviceSelector, Event, KernelArg, Region, SharedKernel};
use seal_opencl::device::{DeviceOptions, DeviceSet, Devices, Graph, Partition};
use seal_opencl::Error;

use common::{fill_host, spin_host, still_pending_after, Blocker, FILL, SPIN};

/// Several GPUs where the machine has them (each a tile), else the CPU device (PoCL,
/// present on CI and on the GPU machine) split into two sub-devices: one GPU cannot be
/// partitioned by NVIDIA's driver, so it cannot give two tiles.
fn two_tiles_or_more(queues_per_tile: usize) -> Devices {
    let gpus = cl::list_devices()
        .unwrap()
        .iter()
        .filter(|d| d.is_gpu)
        .count();
    let (selector, partition) = if gpus >= 2 {
        (DeviceSelector::Gpu, Partition::Auto)
    } else {
        (DeviceSelector::Cpu, Partition::Split(2))
    };
    Devices::new(DeviceOptions {
        selector,
        partition,
        queues_per_tile,
        ..Default::default()
    })
    .expect("devices")
}

fn graph_kernel(g: &Graph, name: &str) -> SharedKernel {
    cl::shared_kernel(common::kernel(g.context(), g.queue(), name))
}

/// `fill` of `words` words of `region` with `v` launched on `g`; its event.
fn fill_on(g: &Graph, k: &SharedKernel, region: &Region, words: usize, v: u64) -> Event {
    assert!(words <= region.words());
    let args = [("x", KernelArg::Buf(region)), ("v", KernelArg::U64(v))];
    // SAFETY: `k` was built from FILL; `fill` writes x[i] for i < words, inside the region.
    unsafe { g.launch_event(k, &FILL, &args, words, None) }.unwrap()
}

/// `spin` over `words` words of `region` launched on `g`; its event.
fn spin_on(g: &Graph, k: &SharedKernel, region: &Region, words: usize, rounds: u32) -> Event {
    assert!(words <= region.words());
    let args = [
        ("x", KernelArg::Buf(region)),
        ("rounds", KernelArg::U32(rounds)),
    ];
    // SAFETY: `k` was built from SPIN; `spin` touches x[i] for i < words, inside the region.
    unsafe { g.launch_event(k, &SPIN, &args, words, None) }.unwrap()
}

const WORDS: usize = 4096;
const ROUNDS: u32 = 500;

/// One independent job: fill with a job-specific pattern, then spin. Enqueued only.
fn enqueue_job(
    g: &Graph,
    fill: &SharedKernel,
    spin: &SharedKernel,
    job: u64,
) -> seal_opencl::memcache::PoolBuffer {
    let buf = g.alloc(WORDS).unwrap();
    let x = KernelArg::Buf(buf.buffer());
    // SAFETY: the kernels were built from FILL and SPIN; both touch x[i] for i < WORDS and
    // the buffer holds WORDS words.
    unsafe {
        let fill_args = [("x", x), ("v", KernelArg::U64(job << 32))];
        g.launch(fill, &FILL, &fill_args, WORDS, None).unwrap();
        let spin_args = [("x", x), ("rounds", KernelArg::U32(ROUNDS))];
        g.launch(spin, &SPIN, &spin_args, WORDS, None).unwrap();
    }
    buf
}

fn expected(job: u64) -> Vec<u64> {
    let mut x = fill_host(job << 32, WORDS);
    spin_host(&mut x, ROUNDS);
    x
}

#[test]
fn a_cpu_device_splits_into_two_tiles() {
    let devices = two_tiles_or_more(1);
    assert!(
        devices.tiles().len() >= 2,
        "{} tiles",
        devices.tiles().len()
    );
    if !DeviceSelector::Default.resolve().unwrap().is_gpu {
        assert_eq!(devices.tiles().len(), 2);
        assert!(devices.tiles().iter().all(|t| t.is_sub_device()));
        assert!(devices
            .tiles()
            .iter()
            .all(|t| t.context().info().name == devices.tiles()[0].context().info().name));
    }
    // One OpenCL context over every tile: buffers and events cross tiles.
    let first = devices.tiles()[0].context();
    assert!(devices
        .tiles()
        .iter()
        .all(|t| t.context().same_context(first)));
}

/// `SEAL_OPENCL_DEVICES`: `all` or a list of indices among the selector's devices; an index
/// past them is an error naming them, as are malformed or repeated entries.
#[test]
fn the_device_list_chooses_devices() {
    assert_eq!("all".parse::<DeviceSet>().unwrap(), DeviceSet::All);
    assert_eq!(
        " 1, 0 ".parse::<DeviceSet>().unwrap(),
        DeviceSet::Only(vec![1, 0])
    );
    for bad in ["0,0", "-1", "one", "0,,1"] {
        assert!(bad.parse::<DeviceSet>().is_err(), "{bad}");
    }
    let only_first = Devices::new(DeviceOptions {
        devices: DeviceSet::Only(vec![0]),
        partition: Partition::WholeDevices,
        ..Default::default()
    })
    .unwrap();
    assert_eq!(only_first.tiles().len(), 1);
    let err = Devices::new(DeviceOptions {
        devices: DeviceSet::Only(vec![0, 64]),
        ..Default::default()
    })
    .err()
    .expect("no device 64");
    assert!(
        matches!(&err, Error::InvalidArgument(m) if m.contains("device 64")),
        "{err:?}"
    );
}

#[test]
fn independent_graphs_on_separate_queues_match_one_queue() {
    const JOBS: u64 = 6;
    let devices = two_tiles_or_more(2);
    let graphs: Vec<Graph> = (0..devices.tiles().len() * 2)
        .map(|_| devices.graph())
        .collect();

    // All jobs on one queue.
    let one = &graphs[0];
    let (fill, spin) = (graph_kernel(one, "fill"), graph_kernel(one, "spin"));
    let bufs: Vec<_> = (0..JOBS)
        .map(|j| enqueue_job(one, &fill, &spin, j))
        .collect();
    let on_one: Vec<Vec<u64>> = bufs.iter().map(|b| b.read().unwrap()).collect();
    drop(bufs);

    // The same jobs spread over every queue of every tile, all in flight together.
    let kernels: Vec<(SharedKernel, SharedKernel)> = graphs
        .iter()
        .map(|g| (graph_kernel(g, "fill"), graph_kernel(g, "spin")))
        .collect();
    let bufs: Vec<_> = (0..JOBS)
        .map(|j| {
            let k = j as usize % graphs.len();
            enqueue_job(&graphs[k], &kernels[k].0, &kernels[k].1, j)
        })
        .collect();
    devices.finish().unwrap();
    for (j, buf) in bufs.iter().enumerate() {
        let got = buf.read().unwrap();
        assert_eq!(
            got, on_one[j],
            "job {j}: spread over queues differs from one queue"
        );
        assert_eq!(
            got,
            expected(j as u64),
            "job {j}: differs from the host reference"
        );
    }
}

#[test]
fn graphs_on_different_queues_do_not_wait_for_each_other() {
    // Across tiles, and across the queues of one tile.
    let devices = two_tiles_or_more(2);
    let t0 = &devices.tiles()[0];
    let pairs = [
        (t0.graph(0).unwrap(), devices.tiles()[1].graph(0).unwrap()),
        (t0.graph(0).unwrap(), t0.graph(1).unwrap()),
    ];
    for (held, free) in pairs {
        let blocker = Blocker::new(held.context(), held.queue(), Duration::from_secs(20));
        let (fill_h, spin_h) = (graph_kernel(&held, "fill"), graph_kernel(&held, "spin"));
        let stuck = enqueue_job(&held, &fill_h, &spin_h, 1);
        let (fill_f, spin_f) = (graph_kernel(&free, "fill"), graph_kernel(&free, "spin"));
        let done = enqueue_job(&free, &fill_f, &spin_f, 2);
        free.finish().unwrap();
        assert_eq!(done.read().unwrap(), expected(2));
        let probe = held.alloc(1).unwrap();
        let k = graph_kernel(&held, "fill");
        let ev = fill_on(&held, &k, probe.buffer(), 1, 0);
        assert!(
            still_pending_after(&ev, 20),
            "the held queue ran: it was not blocked"
        );
        blocker.release();
        held.finish().unwrap();
        assert_eq!(stuck.read().unwrap(), expected(1));
    }
}

#[test]
fn graphs_are_handed_out_round_robin_over_tiles_then_queues() {
    let devices = two_tiles_or_more(2);
    let tiles = devices.tiles().len();
    let order: Vec<(usize, usize)> = (0..tiles * 2 + 1)
        .map(|_| {
            let g = devices.graph();
            (g.tile().index(), g.queue_index())
        })
        .collect();
    for (k, &(tile, queue)) in order.iter().enumerate() {
        assert_eq!((tile, queue), (k % tiles, (k / tiles) % 2), "graph {k}");
    }
    assert!(matches!(
        devices.tiles()[0].graph(2),
        Err(Error::InvalidArgument(_))
    ));
}

#[test]
fn auto_partition_uses_hardware_tiles_or_whole_devices() {
    let devices = Devices::new(DeviceOptions::default()).unwrap();
    for tile in devices.tiles() {
        let support = cl::partition_support(tile.context().device()).unwrap();
        if !tile.is_sub_device() {
            assert!(
                !support.by_affinity_next_partitionable,
                "a partitionable device was used whole"
            );
        }
    }
    let whole = Devices::new(DeviceOptions {
        partition: Partition::WholeDevices,
        ..Default::default()
    })
    .unwrap();
    assert!(whole.tiles().iter().all(|t| !t.is_sub_device()));
}

#[test]
fn impossible_splits_and_bad_switches_are_errors() {
    let err = Devices::new(DeviceOptions {
        partition: Partition::Split(100_000),
        ..Default::default()
    })
    .err()
    .expect("no device has 100000 compute units");
    assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
    assert_eq!("auto".parse::<Partition>().unwrap(), Partition::Auto);
    assert_eq!(
        "whole".parse::<Partition>().unwrap(),
        Partition::WholeDevices
    );
    assert_eq!(" 2 ".parse::<Partition>().unwrap(), Partition::Split(2));
    for bad in ["0", "-1", "two"] {
        assert!(bad.parse::<Partition>().is_err(), "{bad}");
    }
    assert!(Devices::new(DeviceOptions {
        queues_per_tile: 0,
        ..Default::default()
    })
    .is_err());
}

#[test]
fn the_sync_switch_waits_after_every_launch() {
    for sync in [true, false] {
        let devices = Devices::new(DeviceOptions {
            sync_each_launch: sync,
            ..Default::default()
        })
        .unwrap();
        let g = devices.graph();
        let buf = g.alloc(WORDS).unwrap();
        let spin = graph_kernel(&g, "spin");
        // Off, a blocked queue proves the launch returned without waiting.
        let blocker =
            (!sync).then(|| Blocker::new(g.context(), g.queue(), Duration::from_secs(20)));
        let ev = spin_on(&g, &spin, buf.buffer(), WORDS, 20_000);
        assert_eq!(
            cl::is_complete(&ev).unwrap(),
            sync,
            "sync_each_launch = {sync}"
        );
        if let Some(b) = blocker {
            b.release();
        }
        g.finish().unwrap();
    }
}

#[test]
fn frames_cover_every_tile() {
    let devices = two_tiles_or_more(1);
    let frames = devices.frames();
    frames.start_compute_frame();
    let ids: Vec<u64> = devices
        .tiles()
        .iter()
        .map(|t| t.graph(0).unwrap().alloc(100).unwrap().id())
        .collect();
    for t in devices.tiles() {
        let again = t.graph(0).unwrap().alloc(100).unwrap();
        assert_ne!(
            again.id(),
            ids[t.index()],
            "tile {} reused a buffer inside the frame",
            t.index()
        );
        assert_eq!(t.memcache().stats().ready_to_free, 1);
    }
    let report = frames.end_compute_frame().unwrap();
    assert_eq!(report.buffers_returned, 2 * devices.tiles().len());
}

/// With the `issue_thread` setting, launches without an event go to each queue's issue
/// thread; a copy, a read, a marker for another queue and a launch with an event each wait
/// for it first, so every command reaches its queue in the order of the calls: the words
/// are those of the same calls without the threads.
#[test]
fn the_issue_thread_keeps_every_queue_in_call_order() {
    let run = |issue_thread: bool| -> Vec<Vec<u64>> {
        let devices = Devices::new(DeviceOptions {
            queues_per_tile: 2,
            issue_thread,
            ..Default::default()
        })
        .unwrap();
        let (g0, g1) = (devices.graph(), devices.graph());
        let (fill0, spin0) = (graph_kernel(&g0, "fill"), graph_kernel(&g0, "spin"));
        let spin1 = graph_kernel(&g1, "spin");
        let (a, b) = (g0.alloc(WORDS).unwrap(), g0.alloc(WORDS).unwrap());
        let mut out = Vec::new();
        for round in 0..20u64 {
            // fill a, spin a (handed over), copy a into b (waits for them), spin b.
            let job = enqueue_job(&g0, &fill0, &spin0, round);
            cl::copy(g0.queue(), job.buffer(), a.buffer(), None).unwrap();
            cl::copy(g0.queue(), a.buffer(), b.buffer(), None).unwrap();
            let args = [
                ("x", KernelArg::Buf(b.buffer())),
                ("rounds", KernelArg::U32(3)),
            ];
            // SAFETY: built from SPIN; it touches x[i] for i < WORDS, inside b.
            unsafe { g0.launch(&spin0, &SPIN, &args, WORDS, None) }.unwrap();
            // The other queue spins a after everything enqueued on g0 so far.
            cl::order_after(g1.queue(), g0.queue(), &[]).unwrap();
            let args = [
                ("x", KernelArg::Buf(a.buffer())),
                ("rounds", KernelArg::U32(5)),
            ];
            // SAFETY: as above, inside a.
            unsafe { g1.launch(&spin1, &SPIN, &args, WORDS, None) }.unwrap();
            out.push(b.read().unwrap());
            g1.finish().unwrap();
            out.push(a.read().unwrap());
        }
        out
    };
    let without = run(false);
    let mut want = expected(0);
    spin_host(&mut want, 3);
    assert_eq!(
        without[0], want,
        "the reference run computes what it should"
    );
    assert_eq!(run(true), without);
}

/// A launch the issue thread cannot enqueue (here a work group larger than any device's)
/// fails its queue: the launches handed over after it are dropped, and every later drain,
/// launch and wait on the queue returns the driver's error; the other queues go on.
#[test]
fn a_failed_launch_on_the_issue_thread_fails_its_queue() {
    const HUGE: usize = 1 << 20;
    let devices = Devices::new(DeviceOptions {
        queues_per_tile: 2,
        issue_thread: true,
        ..Default::default()
    })
    .unwrap();
    let (g0, g1) = (devices.graph(), devices.graph());
    let fill = graph_kernel(&g0, "fill");
    let buf = g0.alloc(HUGE).unwrap();
    let args = [
        ("x", KernelArg::Buf(buf.buffer())),
        ("v", KernelArg::U64(7)),
    ];
    // SAFETY: built from FILL; `fill` writes x[i] for i < HUGE, the buffer's words.
    unsafe { g0.launch(&fill, &FILL, &args, HUGE, Some(HUGE.into())) }
        .expect("handed over: the failure comes from the thread");
    let err = cl::drain(g0.queue()).expect_err("the queue failed");
    assert!(err.to_string().contains("failed"), "{err}");
    // SAFETY: as above, in work groups of one.
    let again = unsafe { g0.launch(&fill, &FILL, &args, 64, Some(1.into())) };
    assert!(again.is_err(), "a failed queue takes no launch");
    assert!(g0.finish().is_err());
    let other = g1.alloc(WORDS).unwrap();
    let fill1 = graph_kernel(&g1, "fill");
    let args = [
        ("x", KernelArg::Buf(other.buffer())),
        ("v", KernelArg::U64(7)),
    ];
    // SAFETY: as above, on the other queue, inside its buffer.
    unsafe { g1.launch(&fill1, &FILL, &args, WORDS, None) }.unwrap();
    assert_eq!(other.read().unwrap(), fill_host(7, WORDS));
}
