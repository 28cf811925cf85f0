//! Threads issue on queues of their own, and an image moving between them is ordered on
//! the device, also between queues of different tiles, where it moves to the
//! issuing tile: each test holds one thread's queue still with a user event, so
//! a command that skipped the ordering would run early, on the wrong words, and the
//! result would differ.

use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use seal_opencl::cl::{self, Event};
use seal_opencl::config::Config;
use seal_opencl::device::{DeviceOptions, DeviceSet, Devices, Partition};
use seal_opencl::seal_backend::{Backend, GpuImage};
use seal_opencl_testkit::fixture::{backend_on, BackendParams, BACKEND_N as N};

/// A thread that keeps running closures sent to it, so it keeps its queue; it ends when the
/// worker is dropped.
struct Worker {
    jobs: Option<mpsc::Sender<Box<dyn FnOnce() + Send>>>,
    handle: Option<thread::JoinHandle<()>>,
}

impl Worker {
    fn spawn() -> Worker {
        let (jobs, rx) = mpsc::channel::<Box<dyn FnOnce() + Send>>();
        let handle = thread::spawn(move || rx.into_iter().for_each(|job| job()));
        Worker {
            jobs: Some(jobs),
            handle: Some(handle),
        }
    }

    /// Runs `job` on the worker and returns its result.
    fn run<T: Send + 'static>(&self, job: impl FnOnce() -> T + Send + 'static) -> T {
        let (tx, rx) = mpsc::channel();
        let jobs = self.jobs.as_ref().expect("a live worker");
        jobs.send(Box::new(move || tx.send(job()).unwrap()))
            .unwrap();
        rx.recv().unwrap()
    }
}

impl Drop for Worker {
    /// Closes the job channel and joins the thread (a job that panicked has already failed
    /// the test through `run`).
    fn drop(&mut self) {
        drop(self.jobs.take());
        if let Some(handle) = self.handle.take() {
            let _ = handle.join();
        }
    }
}

/// The backend on 4 queues, and two workers that issue on different ones.
fn two_queues() -> (&'static Backend, Worker, Worker) {
    let devices = Devices::new(DeviceOptions {
        queues_per_tile: 4,
        ..Config::from_env().unwrap().device_options()
    })
    .unwrap();
    let backend: &'static Backend = Box::leak(Box::new(backend_on(devices)));
    // Both on tile 0: unbound threads take tiles round robin first (by a process-wide
    // order that tests running at once share), so on a machine with two GPUs a second
    // unbound worker can land on the other device. Bound threads take a tile's queues in
    // turn.
    let bound = || {
        let worker = Worker::spawn();
        let queue = worker.run(move || {
            backend.bind_thread(0).unwrap();
            backend.graph().queue_index()
        });
        (worker, queue)
    };
    let (first, first_queue) = bound();
    let (other, other_queue) = bound();
    assert_ne!(first_queue, other_queue, "two bound workers share a queue");
    (backend, first, other)
}

/// The backend on two tiles (two GPUs where the machine has them, else the CPU device split
/// in two, as `tests/device.rs` makes them), and a worker bound to each.
fn two_tiles() -> (&'static Backend, Worker, Worker) {
    let gpus = cl::list_devices()
        .unwrap()
        .iter()
        .filter(|d| d.is_gpu)
        .count();
    let (selector, devices, partition) = if gpus >= 2 {
        let first_two = DeviceSet::Only(vec![0, 1]);
        (cl::DeviceSelector::Gpu, first_two, Partition::WholeDevices)
    } else {
        (cl::DeviceSelector::Cpu, DeviceSet::All, Partition::Split(2))
    };
    let devices = Devices::new(DeviceOptions {
        selector,
        devices,
        partition,
        ..Config::from_env().unwrap().device_options()
    })
    .unwrap();
    let backend: &'static Backend = Box::leak(Box::new(backend_on(devices)));
    let bound = |tile| {
        let worker = Worker::spawn();
        worker.run(move || backend.bind_thread(tile).unwrap());
        worker
    };
    (backend, bound(0), bound(1))
}

/// Makes `worker`'s queue wait, on the device, until the returned event is completed. The
/// level's device data on its tile is made first (with blocking uploads, which a held
/// queue would never finish).
fn hold(worker: &Worker, backend: &'static Backend, params: &'static BackendParams) -> Event {
    worker.run(move || {
        let mut warm_up = backend.create_image(&words(params, 0)).unwrap();
        backend.negate(&params.level(), &mut warm_up, 2).unwrap();
        let graph = backend.graph();
        let held = graph.context().user_event().unwrap();
        cl::enqueue_barrier(graph.queue(), std::slice::from_ref(&held)).unwrap();
        held
    })
}

/// Two polynomials at the level of [`BackendParams::level`], fully reduced.
fn words(params: &BackendParams, seed: u64) -> Vec<u64> {
    (0..2 * 2 * N)
        .map(|i| (i as u64 * 7919 + seed * 104_729 + 17) % params.key_moduli[(i / N) % 2])
        .collect()
}

fn sum(params: &BackendParams, a: &[u64], b: &[u64], negate_b: bool) -> Vec<u64> {
    (0..a.len())
        .map(|i| {
            let q = params.key_moduli[(i / N) % 2];
            let b = if negate_b { (q - b[i]) % q } else { b[i] };
            (a[i] + b) % q
        })
        .collect()
}

/// x = -x on `worker`'s queue.
fn negate_on(
    worker: &Worker,
    backend: &'static Backend,
    params: &'static BackendParams,
    mut x: GpuImage,
) -> GpuImage {
    worker.run(move || {
        backend.negate(&params.level(), &mut x, 2).unwrap();
        x
    })
}

/// x (the words of `seed`) made on `worker`'s queue, the queue held, and x = -x issued
/// there: x's words, the event that releases the queue, and the (pending) negated x.
fn held_negation(
    worker: &Worker,
    backend: &'static Backend,
    params: &'static BackendParams,
    seed: u64,
) -> (Vec<u64>, Event, GpuImage) {
    let x0 = words(params, seed);
    let x_words = x0.clone();
    let x = worker.run(move || backend.create_image(&x_words).unwrap());
    let held = hold(worker, backend, params);
    (x0, held, negate_on(worker, backend, params, x))
}

/// z += x on `worker`'s queue; both come back.
fn add_on(
    worker: &Worker,
    backend: &'static Backend,
    params: &'static BackendParams,
    mut z: GpuImage,
    x: GpuImage,
) -> (GpuImage, GpuImage) {
    worker.run(move || {
        backend.add(&params.level(), &mut z, 2, &x, 2).unwrap();
        (z, x)
    })
}

/// -x, residue by residue.
fn negated(params: &BackendParams, x: &[u64]) -> Vec<u64> {
    sum(params, &vec![0; x.len()], x, true)
}

fn download(backend: &Backend, image: &GpuImage) -> Vec<u64> {
    let mut out = vec![0u64; image.len()];
    backend.download(image, &mut out).unwrap();
    out
}

fn params() -> &'static BackendParams {
    Box::leak(Box::new(BackendParams::new()))
}

/// Which of x = -x (the writer) and z += x (the reader) is issued first, on a held queue.
#[derive(Clone, Copy, Debug, PartialEq)]
enum First {
    Write,
    Read,
}

/// Both orders of a write and a read of x on two queues of one tile and on two tiles, the
/// first on a held queue: the second waits for it on the device. x written (negated) then
/// read: z + x sees -x (across tiles the read copies x to the reader's tile behind the
/// write). x read then written in place: z + x sees x as it was (across tiles the write
/// moves x to the writer's tile behind the read).
/// Makes the backend and the two workers of a topology.
type Topology = fn() -> (&'static Backend, Worker, Worker);

#[test]
fn the_second_access_on_another_queue_or_tile_waits_for_the_held_first() {
    let topologies: [(&str, Topology); 2] = [("two queues", two_queues), ("two tiles", two_tiles)];
    for (topology, workers) in topologies {
        for first in [First::Write, First::Read] {
            second_waits_for_held_first(workers(), first, &format!("{topology}, {first:?} first"));
        }
    }
}

/// x negated on the writer's queue and z += x on the reader's, `first` of them issued first
/// on its held queue: the second must wait for it on the device, so z + x sees -x only when
/// the write came first.
fn second_waits_for_held_first(
    (backend, writer, reader): (&'static Backend, Worker, Worker),
    first: First,
    what: &str,
) {
    let params = params();
    let (x0, z0) = (words(params, 1), words(params, 2));
    let (x_words, z_words) = (x0.clone(), z0.clone());
    let x = writer.run(move || backend.create_image(&x_words).unwrap());
    let z = reader.run(move || backend.create_image(&z_words).unwrap());
    let (held, z, x) = match first {
        First::Write => {
            let held = hold(&writer, backend, params);
            let x = negate_on(&writer, backend, params, x);
            let (z, x) = add_on(&reader, backend, params, z, x);
            (held, z, x)
        }
        First::Read => {
            let held = hold(&reader, backend, params);
            let (z, x) = add_on(&reader, backend, params, z, x);
            (held, z, negate_on(&writer, backend, params, x))
        }
    };
    cl::complete_user_event(&held).unwrap();
    let negated_first = first == First::Write;
    let want_z = sum(params, &z0, &x0, negated_first);
    assert_eq!(download(backend, &z), want_z, "{what}: z + x");
    assert_eq!(download(backend, &x), negated(params, &x0), "{what}: -x");
}

/// x written (negated) on a held queue, then negated again on another tile: the move to
/// that tile waits for the first write, so x comes back as it was.
#[test]
fn a_write_on_another_tile_moves_the_image_after_its_writer() {
    let params = params();
    let (backend, first, second) = two_tiles();
    let (x0, held, x) = held_negation(&first, backend, params, 10);
    let x = negate_on(&second, backend, params, x);
    cl::complete_user_event(&held).unwrap();
    assert_eq!(download(backend, &x), x0);
}

/// x (allocated on the writer's queue) read on a held queue, then dropped: its buffer goes
/// back to the pool, and the writer's next result, which reuses it, waits for the read.
#[test]
fn a_freed_buffer_is_reused_after_reads_on_other_queues() {
    let params = params();
    let (backend, writer, reader) = two_queues();
    let (x0, y0, z0) = (words(params, 5), words(params, 6), words(params, 7));
    let (x_words, y_words, z_words) = (x0.clone(), y0.clone(), z0.clone());
    let (x, y) = writer.run(move || {
        (
            backend.create_image(&x_words).unwrap(),
            backend.create_image(&y_words).unwrap(),
        )
    });
    let z = reader.run(move || backend.create_image(&z_words).unwrap());
    let held = hold(&reader, backend, params);
    let z = reader.run(move || {
        let mut z = z;
        backend.add(&params.level(), &mut z, 2, &x, 2).unwrap();
        // The add is a term of a deferred sum, holding x's words: the negation runs it.
        backend.negate(&params.level(), &mut z, 2).unwrap();
        z // x dies here, its read still held
    });
    let memcache = backend.devices().tiles()[0].memcache();
    let hits = memcache.stats().hits;
    // A copy of y shares y's buffer; negating it takes a new one.
    let copy = writer.run(move || {
        let mut copy = backend.clone_image(&y).unwrap();
        backend.negate(&params.level(), &mut copy, 2).unwrap();
        copy
    });
    assert_eq!(
        memcache.stats().hits,
        hits + 1,
        "the negated copy did not reuse x's buffer"
    );
    cl::complete_user_event(&held).unwrap();
    let want_z = negated(params, &sum(params, &z0, &x0, false));
    assert_eq!(download(backend, &z), want_z);
    assert_eq!(download(backend, &copy), negated(params, &y0));
}

/// A deferred sum (`src/seal_backend/deferred.rs`) reads its terms behind their writers on
/// other queues, and an add issued on another queue runs the pending sum on its own queue
/// first: z += x and z += y on the reader's queue while x's negation waits on the held
/// writer's queue, the sum run there (z negated) while the writer is still held, z += y on
/// the reader's queue again, then on the writer's.
#[test]
fn deferred_sums_read_their_terms_behind_other_queues_and_run_on_their_own() {
    let params = params();
    let (backend, writer, reader) = two_queues();
    let (z0, y0) = (words(params, 3), words(params, 4));
    // Made before the writer's queue is held: a blocking upload into a pooled buffer the
    // held queue used would wait for it.
    let (z_words, y_words) = (z0.clone(), y0.clone());
    let (z, y) = reader.run(move || {
        (
            backend.create_image(&z_words).unwrap(),
            backend.create_image(&y_words).unwrap(),
        )
    });
    let (x0, held, x) = held_negation(&writer, backend, params, 8);
    let (z, x) = add_on(&reader, backend, params, z, x);
    let (z, y) = add_on(&reader, backend, params, z, y);
    let z = negate_on(&reader, backend, params, z);
    let (z, y) = add_on(&reader, backend, params, z, y);
    let (z, _) = add_on(&writer, backend, params, z, y);
    cl::complete_user_event(&held).unwrap();
    let run_first = negated(
        params,
        &sum(params, &sum(params, &z0, &x0, true), &y0, false),
    );
    let want_z = sum(params, &sum(params, &run_first, &y0, false), &y0, false);
    assert_eq!(download(backend, &z), want_z, "z");
    assert_eq!(download(backend, &x), negated(params, &x0), "-x");
}

/// How long a call that must wait for a held queue is watched for returning early.
const HELD_FOR: Duration = Duration::from_millis(300);

/// Runs `call` on a thread of its own: the thread, and a channel that receives () once
/// `call` returned.
fn on_a_thread(
    call: impl FnOnce() + Send + 'static,
) -> (thread::JoinHandle<()>, mpsc::Receiver<()>) {
    let (done_tx, done_rx) = mpsc::channel();
    let thread = thread::spawn(move || {
        call();
        done_tx.send(()).unwrap();
    });
    (thread, done_rx)
}

/// `call`, run on a thread of its own, does not return while `held` holds a queue it must
/// wait for, and returns once `held` is completed.
fn waits_for_the_held_queue(held: &Event, call: impl FnOnce() + Send + 'static, what: &str) {
    let (thread, done) = on_a_thread(call);
    assert!(
        done.recv_timeout(HELD_FOR).is_err(),
        "{what} returned while a queue was held"
    );
    cl::complete_user_event(held).unwrap();
    done.recv().unwrap();
    thread.join().unwrap();
}

/// Without an open frame, ending one (what SEAL's decrypt does before its download) does
/// not wait for other threads' queues; with a frame open it waits for every queue.
#[test]
fn a_frame_end_waits_for_other_queues_only_when_a_frame_is_open() {
    let params = params();
    let (backend, writer, _) = two_queues();
    let (_, held, x) = held_negation(&writer, backend, params, 9);
    let end_frame = move || backend.end_compute_frame().unwrap();
    let (ending, done) = on_a_thread(end_frame);
    done.recv_timeout(Duration::from_secs(10))
        .expect("ending no frame waited for another thread's queue");
    ending.join().unwrap();
    backend.start_compute_frame();
    waits_for_the_held_queue(&held, end_frame, "ending an open frame");
    drop(x);
}

/// `synchronize` waits for operations issued on any thread's queue, not only the caller's.
#[test]
fn synchronize_waits_for_every_queue_issued_on() {
    let params = params();
    let (backend, writer, _) = two_queues();
    let (x0, held, x) = held_negation(&writer, backend, params, 8);
    waits_for_the_held_queue(&held, move || backend.synchronize().unwrap(), "synchronize");
    assert_eq!(download(backend, &x), negated(params, &x0));
}
