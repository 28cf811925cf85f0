//! The buffer pool: exclusive ownership under concurrency, best fit, reuse ordered behind
//! the previous holder without host waits, poison, flush / deactivate / uncached,
//! statistics and out-of-memory handling.

mod common;

use std::collections::HashSet;
use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use rand::{Rng, SeedableRng};
use seal_opencl::cl::{self, Context, DeviceSelector, Queue};
use seal_opencl::memcache::{Memcache, MemcacheConfig, MemcacheStats, MAX_FIT_RATIO};
use seal_opencl::{Error, ErrorKind};

use common::{enqueue_fill, fill_host, kernel, still_pending_after, Blocker};

const WATCHDOG: Duration = Duration::from_secs(20);

fn context() -> Arc<Context> {
    Context::new(&DeviceSelector::Default).expect("an OpenCL device")
}

/// Asserts `fields` of the pool's statistics equal `want`, showing all of them otherwise.
#[track_caller]
fn assert_stats<T: PartialEq + Debug>(
    pool: &Memcache,
    fields: impl Fn(&MemcacheStats) -> T,
    want: T,
) {
    let s = pool.stats();
    assert_eq!(fields(&s), want, "{s}");
}

/// A context, a queue on it, and a pool over the context with `config`.
fn pool_with(config: MemcacheConfig) -> (Arc<Context>, Queue, Memcache) {
    let ctx = context();
    let q = ctx.queue(false).unwrap();
    let pool = Memcache::new(ctx.clone(), config);
    (ctx, q, pool)
}

#[test]
fn threads_never_share_a_buffer_and_counts_balance() {
    threads_share_no_buffer(MemcacheConfig::default());
}

/// The same with slabs of 64 KiB: buffers are regions of several slabs, their words
/// apart; every slab goes back when the pool is flushed.
#[test]
fn threads_never_share_a_region_of_a_slab() {
    threads_share_no_buffer(MemcacheConfig {
        slab_bytes: 64 << 10,
        ..Default::default()
    });
}

fn threads_share_no_buffer(config: MemcacheConfig) {
    const THREADS: u64 = 4;
    const ITERS: u64 = 500;
    const SIZES: [usize; 4] = [1000, 1536, 2048, 3000];
    let ctx = context();
    let pool = Memcache::new(ctx.clone(), config);
    let held: Arc<Mutex<HashSet<u64>>> = Arc::default();

    crossbeam::scope(|s| {
        for t in 0..THREADS {
            let (ctx, pool, held) = (ctx.clone(), pool.clone(), held.clone());
            s.spawn(move |_| {
                // One queue per thread: buffers move between queues all the time.
                let q = ctx.queue(false).unwrap();
                let fill = kernel(&ctx, &q, "fill");
                let mut rng = rand::rngs::StdRng::seed_from_u64(t);
                let mut keep = Vec::new();
                for i in 0..ITERS {
                    let words = SIZES[rng.gen_range(0..SIZES.len())];
                    let buf = pool.alloc(&q, words).unwrap();
                    assert!(buf.capacity() >= words && buf.capacity() <= words * MAX_FIT_RATIO);
                    assert!(
                        held.lock().insert(buf.id()),
                        "buffer {} handed to two holders",
                        buf.id()
                    );
                    let pattern = (t << 56) | (i << 24);
                    let _ = enqueue_fill(&fill, &q, buf.buffer(), words, pattern);
                    // Let other threads run between the write and the check.
                    std::thread::yield_now();
                    assert_eq!(
                        buf.read().unwrap(),
                        fill_host(pattern, words),
                        "thread {t} iteration {i}"
                    );
                    // Leave a write in flight behind: the next holder (any queue) must
                    // be ordered after it, or its own pattern gets overwritten.
                    let _ = enqueue_fill(&fill, &q, buf.buffer(), buf.capacity(), !pattern);
                    held.lock().remove(&buf.id());
                    if rng.gen_bool(0.3) && keep.len() < 3 {
                        keep.push(buf); // hold a few for a while
                    } else {
                        drop(buf);
                    }
                    if rng.gen_bool(0.2) {
                        keep.clear();
                    }
                }
            });
        }
    })
    .unwrap();

    let s = pool.stats();
    assert_eq!(s.hits + s.misses, THREADS * ITERS, "{s}");
    assert!(
        s.hits > s.misses,
        "the pool should serve most requests: {s}"
    );
    assert_eq!(
        (s.live_buffers, s.bytes_in_use, s.ready_to_free),
        (0, 0, 0),
        "{s}"
    );
    assert_eq!(
        s.free_buffers as u64, s.misses,
        "every buffer came back: {s}"
    );
    if config.slab_bytes > 0 {
        assert_eq!(s.sub_allocations, s.misses, "every miss from a slab: {s}");
        assert!(s.device_allocations < s.misses && s.slabs > 1, "{s}");
    } else {
        assert_eq!(s.device_allocations, s.misses, "{s}");
    }
    let (flushed, bytes) = pool.flush();
    let s = pool.stats();
    assert_eq!(flushed as u64, s.misses);
    assert!(
        bytes > 0 && s.bytes_held == 0 && s.free_buffers == 0 && s.slabs == 0,
        "{s}"
    );
    assert_eq!(s.device_releases, s.device_allocations, "no leak: {s}");
}

/// Slabs: new buffers are regions carved from one slab until it is full (one device
/// allocation), poisoned and apart; a request over half a slab gets an allocation of its
/// own; reuse comes from the free pool; a slab goes back to the device with its last
/// region; a limit under a slab's size gives buffers of their own.
#[test]
fn slabs_carve_regions() {
    const POISON: u64 = 0xDEAD_BEEF_0BAD_F00D;
    let slab_bytes = 1 << 20;
    let (ctx, q, pool) = pool_with(MemcacheConfig {
        slab_bytes,
        poison: Some(POISON),
        ..Default::default()
    });
    let fill = kernel(&ctx, &q, "fill");
    let bufs: Vec<_> = [1000, 3000, 5000]
        .iter()
        .map(|&w| pool.alloc(&q, w).unwrap())
        .collect();
    let s = pool.stats();
    assert_eq!(
        (s.misses, s.sub_allocations, s.device_allocations, s.slabs),
        (3, 3, 1, 1),
        "{s}"
    );
    assert_eq!(s.bytes_held, slab_bytes, "{s}");
    for (i, b) in bufs.iter().enumerate() {
        assert!(b.read().unwrap().iter().all(|&w| w == POISON), "poisoned");
        let _ = enqueue_fill(&fill, &q, b.buffer(), b.words(), i as u64);
    }
    for (i, b) in bufs.iter().enumerate() {
        assert_eq!(b.read().unwrap(), fill_host(i as u64, b.words()), "apart");
    }
    // Over half a slab: its own allocation.
    let big = pool.alloc(&q, (slab_bytes as usize / 8) / 2 + 1).unwrap();
    assert_eq!(pool.stats().device_allocations, 2);
    // Half a slab fits after the first three, another does not: a second slab.
    let halves: Vec<_> = (0..2).map(|_| pool.alloc(&q, 65_536).unwrap()).collect();
    let s = pool.stats();
    assert_eq!((s.device_allocations, s.slabs), (3, 2), "{s}");
    drop((bufs, big, halves));
    let reused = pool.alloc(&q, 3000).unwrap();
    assert_eq!(pool.stats().hits, 1);
    drop(reused);
    pool.flush();
    let s = pool.stats();
    assert_eq!((s.bytes_held, s.slabs, s.device_releases), (0, 0, 3), "{s}");

    let limited = Memcache::new(
        ctx,
        MemcacheConfig {
            slab_bytes,
            max_bytes_held: Some(slab_bytes / 2),
            ..Default::default()
        },
    );
    let own = limited.alloc(&q, 1000).unwrap();
    assert_stats(
        &limited,
        |s| (s.device_allocations, s.sub_allocations, s.bytes_held),
        (1, 0, 8000),
    );
    drop(own);
}

#[test]
fn best_fit_takes_the_smallest_fitting_buffer_within_twice_the_request() {
    let (_ctx, q, pool) = pool_with(MemcacheConfig::default());
    let ids: Vec<(usize, u64)> = [100, 200, 400]
        .iter()
        .map(|&w| (w, pool.alloc(&q, w).unwrap().id()))
        .collect(); // each handle dropped at once
    let id_of = |w: usize| ids.iter().find(|(c, _)| *c == w).unwrap().1;

    let a = pool.alloc(&q, 150).unwrap();
    assert_eq!((a.id(), a.capacity(), a.words()), (id_of(200), 200, 150));
    let b = pool.alloc(&q, 90).unwrap();
    assert_eq!((b.id(), b.capacity()), (id_of(100), 100));
    // 400 words for a request of 150 wastes more than half: a new buffer instead.
    let c = pool.alloc(&q, 150).unwrap();
    assert_eq!(c.capacity(), 150);
    assert!(![id_of(100), id_of(200), id_of(400)].contains(&c.id()));
    let d = pool.alloc(&q, 300).unwrap();
    assert_eq!((d.id(), d.capacity()), (id_of(400), 400));
    let s = pool.stats();
    assert_eq!((s.hits, s.misses, s.live_buffers), (3, 4, 4), "{s}");
}

#[test]
fn reuse_on_the_same_queue_needs_no_host_wait() {
    let (ctx, q, pool) = pool_with(MemcacheConfig::default());
    let fill = kernel(&ctx, &q, "fill");
    let words = 512;

    let blocker = Blocker::new(&ctx, &q, WATCHDOG);
    let first = pool.alloc(&q, words).unwrap();
    let id = first.id();
    let old = enqueue_fill(&fill, &q, first.buffer(), words, 1);
    drop(first);
    let second = pool.alloc(&q, words).unwrap();
    assert_eq!(second.id(), id, "freed buffer is reused at once");
    let new = enqueue_fill(&fill, &q, second.buffer(), words, 2);
    assert!(!cl::is_complete(&old).unwrap() && !cl::is_complete(&new).unwrap());
    blocker.release();
    assert_eq!(second.read().unwrap(), fill_host(2, words));
}

#[test]
fn reuse_on_another_queue_waits_on_the_device_for_the_previous_holder() {
    reuse_waits_for_the_earlier_use(
        A,
        B,
        "queue B's write ran while A's earlier write to the same buffer was pending",
    );
}

/// The two queues of [`reuse_waits_for_the_earlier_use`]: A, where the buffer is first
/// allocated, and B.
const A: usize = 0;
const B: usize = 1;

/// A buffer allocated on queue A is written on queue `used_on` (held up behind that queue,
/// blocked; a write on B is recorded with `record_use`), freed, allocated again on
/// `reused_on` and written there: that second write must wait on the device for the first
/// (still pending after 100 ms, `what` otherwise) and land last.
fn reuse_waits_for_the_earlier_use(used_on: usize, reused_on: usize, what: &str) {
    let ctx = context();
    let queues = [ctx.queue(false).unwrap(), ctx.queue(false).unwrap()];
    let fills = queues.each_ref().map(|q| kernel(&ctx, q, "fill"));
    let pool = Memcache::new(ctx.clone(), MemcacheConfig::default());
    let words = 4096;

    let blocker = Blocker::new(&ctx, &queues[used_on], WATCHDOG);
    let mut first = pool.alloc(&queues[A], words).unwrap();
    let id = first.id();
    let earlier = enqueue_fill(&fills[used_on], &queues[used_on], first.buffer(), words, 1);
    if used_on != A {
        first.record_use(&earlier);
    }
    drop(first);
    let second = pool.alloc(&queues[reused_on], words).unwrap();
    assert_eq!(second.id(), id);
    let new = enqueue_fill(
        &fills[reused_on],
        &queues[reused_on],
        second.buffer(),
        words,
        2,
    );
    assert!(still_pending_after(&new, 100), "{what}");
    blocker.release();
    assert_eq!(
        second.read().unwrap(),
        fill_host(2, words),
        "the second write must land last"
    );
}

#[test]
fn recorded_uses_on_other_queues_are_waited_for() {
    reuse_waits_for_the_earlier_use(B, A, "the recorded use on queue B was not waited for");
}

#[test]
fn poison_covers_new_and_reused_buffers() {
    const POISON: u64 = 0xDEAD_BEEF_0BAD_F00D;
    let (_ctx, q, pool) = pool_with(MemcacheConfig {
        poison: Some(POISON),
        ..Default::default()
    });
    let a = pool.alloc(&q, 300).unwrap();
    assert!(a.read().unwrap().iter().all(|&w| w == POISON));
    a.write(&[7; 300]).unwrap();
    let id = a.id();
    a.free();
    let b = pool.alloc(&q, 280).unwrap();
    assert_eq!(b.id(), id);
    assert!(
        b.read().unwrap().iter().all(|&w| w == POISON),
        "a reused buffer must not show the previous holder's data"
    );
}

#[test]
fn flush_deactivate_and_uncached_release_device_memory() {
    let (_ctx, q, pool) = pool_with(MemcacheConfig::default());
    drop((
        pool.alloc(&q, 100).unwrap(),
        pool.alloc(&q, 200).unwrap(),
        pool.alloc(&q, 300).unwrap(),
    ));
    assert_stats(
        &pool,
        |s| (s.free_buffers, s.bytes_held, s.peak_bytes_held),
        (3, 4800, 4800),
    );
    assert_eq!(pool.flush(), (3, 4800));
    assert_stats(
        &pool,
        |s| (s.free_buffers, s.bytes_held, s.device_releases),
        (0, 0, 3),
    );

    let u = pool.alloc_uncached(&q, 64).unwrap();
    assert_eq!(pool.stats().bytes_in_use, 512);
    drop(u);
    assert_stats(
        &pool,
        |s| (s.uncached, s.free_buffers, s.bytes_held, s.device_releases),
        (1, 0, 0, 4),
    );

    drop(pool.alloc(&q, 100).unwrap());
    assert_eq!(pool.stats().free_buffers, 1);
    pool.deactivate();
    assert!(!pool.is_active());
    assert_eq!(pool.stats().free_buffers, 0, "deactivate flushes");
    let a = pool.alloc(&q, 100).unwrap();
    drop(a);
    let s = pool.stats();
    assert_eq!((s.uncached, s.free_buffers, s.bytes_held), (2, 0, 0), "{s}");
    assert_eq!(s.device_allocations, s.device_releases, "{s}");
}

#[test]
fn out_of_memory_flushes_once_then_fails_with_a_clear_error() {
    let (_ctx, q, pool) = pool_with(MemcacheConfig {
        max_bytes_held: Some(10_000 * 8),
        ..Default::default()
    });
    // Parked in the free pool; 4000 + 8000 words exceed the limit, and releasing the free
    // 4000 makes room.
    drop(pool.alloc(&q, 4000).unwrap());
    let big = pool.alloc(&q, 8000).unwrap();
    assert_stats(
        &pool,
        |s| (s.oom_retries, s.free_buffers, s.bytes_held),
        (1, 0, 64_000),
    );

    // Nothing left to release: the second try fails too.
    let err = pool.alloc(&q, 4000).unwrap_err();
    assert!(matches!(err, Error::OutOfMemory(_)), "{err:?}");
    assert_eq!(err.kind(), ErrorKind::Runtime);
    let text = err.to_string();
    assert!(
        text.contains("4000 words") && text.contains("limit"),
        "{text}"
    );
    assert_stats(
        &pool,
        |s| (s.oom_retries, s.live_buffers, s.bytes_held),
        (2, 1, 64_000),
    );

    drop(big);
    assert!(
        pool.alloc(&q, 4000).is_ok(),
        "the pool recovers once memory is free"
    );
}

#[test]
fn impossible_requests_are_invalid_arguments() {
    let (ctx, q, pool) = pool_with(MemcacheConfig::default());
    assert!(matches!(pool.alloc(&q, 0), Err(Error::InvalidArgument(_))));
    let too_big = (ctx.info().max_alloc_bytes / 8 + 1) as usize;
    let err = pool.alloc(&q, too_big).unwrap_err();
    assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");
    assert_eq!(pool.stats().device_allocations, 0);
}

/// The cl_mem of a buffer's device words.
fn mem_object(buf: &seal_opencl::memcache::PoolBuffer) -> usize {
    buf.buffer().buffer().as_core().as_ptr() as usize
}

/// A pool allocation is no new OpenCL memory object: the regions of one slab share the
/// slab's cl_mem, each at its own aligned offset after the previous one; a buffer over half
/// a slab, and every buffer of a pool without slabs, is an object of its own at offset 0.
#[test]
fn regions_of_a_slab_share_its_memory_object() {
    let slab_bytes = 1 << 20;
    let (ctx, q, pool) = pool_with(MemcacheConfig {
        slab_bytes,
        ..Default::default()
    });
    let bufs: Vec<_> = [1000, 3000, 5000]
        .iter()
        .map(|&w| pool.alloc(&q, w).unwrap())
        .collect();
    let align = ctx
        .info()
        .base_addr_align_bytes
        .max(seal_opencl::memcache::REGION_ALIGN_BYTES) as usize
        / 8;
    assert_eq!(bufs[0].buffer().offset(), 0);
    for pair in bufs.windows(2) {
        let (a, b) = (pair[0].buffer(), pair[1].buffer());
        assert_eq!(
            mem_object(&pair[0]),
            mem_object(&pair[1]),
            "one memory object"
        );
        assert_eq!(b.offset(), (a.offset() + a.words()).next_multiple_of(align));
        assert!(!a.overlaps(b) && !a.same_start(b));
    }
    assert_eq!(bufs[0].buffer().buffer().len(), slab_bytes as usize / 8);
    let big = pool.alloc(&q, slab_bytes as usize / 8 / 2 + 1).unwrap();
    assert_ne!(mem_object(&big), mem_object(&bufs[0]));
    assert_eq!(big.buffer().offset(), 0);

    let (_, q, own) = pool_with(MemcacheConfig::default());
    let (a, b) = (own.alloc(&q, 1000).unwrap(), own.alloc(&q, 1000).unwrap());
    assert_ne!(mem_object(&a), mem_object(&b));
    assert_eq!((a.buffer().offset(), b.buffer().offset()), (0, 0));
}

/// A transform on a region at a non-zero offset of a slab gives the words it gives on a
/// buffer of its own, and leaves the poisoned regions before and after it untouched;
/// reads, writes and fills of a region stay inside it.
#[test]
fn a_kernel_on_a_region_leaves_its_neighbours_intact() {
    use seal_opencl::ntt::{NttPlan, NttStrategy};
    const POISON: u64 = 0x5EA1_0FF5_E7DE_AD00;
    let (log_n, words) = (12, 2 << 12);
    let (ctx, q, pool) = pool_with(MemcacheConfig {
        slab_bytes: 1 << 20,
        poison: Some(POISON),
        ..Default::default()
    });
    let moduli = seal_opencl_testkit::harness::primes(log_n, &[50, 40]);
    let mut rng = seal_opencl_testkit::harness::rng();
    let input: Vec<u64> = (0..words)
        .map(|i| rng.gen_range(0..moduli[i >> log_n].value()))
        .collect();
    let [before, region, after] = [0; 3].map(|_| pool.alloc(&q, words).unwrap());
    assert!(region.buffer().offset() > 0);
    assert_eq!(mem_object(&before), mem_object(&after));
    for strategy in [NttStrategy::Naive, NttStrategy::STAGED] {
        let plan = NttPlan::new(&ctx, &q, log_n, &moduli, strategy).unwrap();
        let own = ctx.upload(&q, &input).unwrap();
        plan.ntt_negacyclic_harvey(&q, &own, 1).unwrap();
        region.write(&input).unwrap();
        plan.ntt_negacyclic_harvey(&q, region.buffer(), 1).unwrap();
        let want = cl::download(&q, &own).unwrap();
        assert_eq!(
            region.read().unwrap(),
            want,
            "{strategy}: same words as alone"
        );
        for neighbour in [&before, &after] {
            assert!(
                neighbour.read().unwrap().iter().all(|&w| w == POISON),
                "{strategy}: a neighbour was written"
            );
        }
    }
    // A fill and a write at an offset inside the region, read back from there.
    cl::fill_range(&q, region.buffer(), 10, 5, 7).unwrap();
    cl::write(&q, region.buffer(), 20, &[1, 2, 3]).unwrap();
    let mut got = [0u64; 16];
    cl::read(&q, region.buffer(), 10, &mut got).unwrap();
    assert_eq!(got[..5], [7; 5]);
    assert_eq!(got[10..13], [1, 2, 3]);
    assert!(cl::fill_range(&q, region.buffer(), words - 1, 2, 0).is_err());
    assert!(before.read().unwrap().iter().all(|&w| w == POISON));
    assert!(after.read().unwrap().iter().all(|&w| w == POISON));
}
