//! Tiles and queues: partitioning, independent graphs on different queues (same results
//! as one queue, and no waiting on each other), round-robin graphs, the sync-after-launch
//! switch, frames over every tile.
//!
//! On a CPU device (PoCL in CI) the device is split into two sub-devices; on a GPU the
//! tiles are whatever the driver exposes, and every GPU of the platform takes part.

mod common;

use std::time::Duration;

use seal_opencl::cl::{self, DeviceSelector, Kernel};
use seal_opencl::device::{DeviceOptions, DeviceSet, Devices, Graph, Partition};
use seal_opencl::Error;

use common::{fill_host, set_fill, set_spin, spin_host, still_pending_after, Blocker};

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

fn graph_kernel(g: &Graph, name: &str) -> Kernel {
    common::kernel(g.context(), g.queue(), name)
}

const WORDS: usize = 4096;
const ROUNDS: u32 = 500;

/// One independent job: fill with a job-specific pattern, then spin. Enqueued only.
fn enqueue_job(
    g: &Graph,
    fill: &Kernel,
    spin: &Kernel,
    job: u64,
) -> seal_opencl::memcache::PoolBuffer {
    let buf = g.alloc(WORDS).unwrap();
    set_fill(fill, buf.buffer(), job << 32);
    set_spin(spin, buf.buffer(), ROUNDS);
    // SAFETY: both kernels touch x[i] for i < WORDS and the buffer holds WORDS words.
    unsafe {
        g.launch(fill, WORDS, None).unwrap();
        g.launch(spin, WORDS, None).unwrap();
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
    let kernels: Vec<(Kernel, Kernel)> = graphs
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
        set_fill(&k, probe.buffer(), 0);
        // SAFETY: one work item writes x[0] of a one-word buffer.
        let ev = unsafe { held.launch_event(&k, 1, None) }.unwrap();
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
        set_spin(&spin, buf.buffer(), 20_000);
        // Off, a blocked queue proves the launch returned without waiting.
        let blocker =
            (!sync).then(|| Blocker::new(g.context(), g.queue(), Duration::from_secs(20)));
        // SAFETY: `spin` touches x[i] for i < WORDS; the buffer holds WORDS words.
        let ev = unsafe { g.launch_event(&spin, WORDS, None) }.unwrap();
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
