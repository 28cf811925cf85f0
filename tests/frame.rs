//! Compute frames: buffers freed inside a frame wait for its end; the end synchronises;
//! the host never waits inside a frame.

mod common;

use std::sync::Arc;
use std::time::Duration;

use seal_opencl::cl::{self, Context, DeviceSelector, Queue};
use seal_opencl::frame::{FrameControl, FrameReport};
use seal_opencl::memcache::{Memcache, MemcacheConfig, PoolBuffer};

use common::{enqueue_fill, enqueue_spin, kernel, Blocker};

fn setup() -> (Arc<Context>, Queue, Memcache, FrameControl) {
    let ctx = Context::new(&DeviceSelector::Default).expect("an OpenCL device");
    let q = ctx.queue(false).unwrap();
    let pool = Memcache::new(ctx.clone(), MemcacheConfig::default());
    let frames = FrameControl::new(vec![pool.clone()], vec![q.clone()], None);
    (ctx, q, pool, frames)
}

/// Allocates 1000 words with `alloc` before a frame starts and 2000 inside it, frees both
/// inside the frame, and checks that the pool then holds `parked` buffers waiting for the
/// frame's end and `free` ones (none live). Returns the two buffers' ids.
fn free_two_inside_a_frame(
    q: &Queue,
    pool: &Memcache,
    frames: &FrameControl,
    alloc: fn(&Memcache, &Queue, usize) -> seal_opencl::Result<PoolBuffer>,
    (parked, free): (usize, usize),
) -> (u64, u64) {
    let before = alloc(pool, q, 1000).unwrap();
    frames.start_compute_frame();
    let inside = alloc(pool, q, 2000).unwrap();
    let ids = (before.id(), inside.id());
    drop((before, inside));
    let s = pool.stats();
    assert_eq!(
        (s.ready_to_free, s.free_buffers, s.live_buffers),
        (parked, free, 0),
        "{s}"
    );
    ids
}

#[test]
fn a_buffer_freed_inside_a_frame_is_reused_only_after_the_end() {
    let (_ctx, q, pool, frames) = setup();
    let (before_id, inside_id) =
        free_two_inside_a_frame(&q, &pool, &frames, Memcache::alloc, (2, 0));

    let again = [pool.alloc(&q, 1000).unwrap(), pool.alloc(&q, 2000).unwrap()];
    assert!(
        again
            .iter()
            .all(|b| b.id() != before_id && b.id() != inside_id),
        "a retained buffer was handed out inside the frame"
    );
    let report = frames.end_compute_frame().unwrap();
    assert_eq!(
        report,
        FrameReport {
            was_open: true,
            // The two parked ones; `again` was allocated inside too but is still held.
            buffers_returned: 2,
            bytes_returned: 24_000,
        }
    );
    let after = [pool.alloc(&q, 1000).unwrap(), pool.alloc(&q, 2000).unwrap()];
    assert_eq!(
        (after[0].id(), after[1].id()),
        (before_id, inside_id),
        "after the end they are reused"
    );

    // Buffers allocated in the frame but freed after it go straight back.
    let again_ids: Vec<u64> = again.iter().map(|b| b.id()).collect();
    drop(again);
    assert_eq!(pool.stats().ready_to_free, 0);
    assert_eq!(pool.alloc(&q, 1000).unwrap().id(), again_ids[0]);
}

#[test]
fn outside_a_frame_freed_buffers_are_reused_at_once() {
    let (_ctx, q, pool, _frames) = setup();
    let id = pool.alloc(&q, 500).unwrap().id();
    assert_eq!(pool.alloc(&q, 500).unwrap().id(), id);
}

#[test]
fn starting_twice_opens_once_and_ending_without_a_frame_is_harmless() {
    let (_ctx, q, pool, frames) = setup();
    assert_eq!(
        frames.end_compute_frame().unwrap(),
        FrameReport::default(),
        "decrypt without any GPU operation ends no frame"
    );
    assert!(!frames.is_open());
    frames.start_compute_frame();
    assert!(frames.is_open());
    let a = pool.alloc(&q, 100).unwrap();
    frames.start_compute_frame(); // a second start: the frame stays the same
    drop(a);
    assert_eq!(pool.stats().ready_to_free, 1);
    let report = frames.end_compute_frame().unwrap();
    assert!(report.was_open && report.buffers_returned == 1);
    assert!(!frames.is_open());
}

#[test]
fn ending_a_frame_waits_for_every_queue() {
    let (ctx, q, pool, _) = setup();
    let q2 = ctx.queue(false).unwrap();
    let frames = FrameControl::new(vec![pool.clone()], vec![q.clone(), q2.clone()], None);
    let words = 2048;
    let (spin, spin2) = (kernel(&ctx, &q, "spin"), kernel(&ctx, &q2, "spin"));
    frames.start_compute_frame();
    let (a, b) = (
        pool.alloc(&q, words).unwrap(),
        pool.alloc(&q2, words).unwrap(),
    );
    let e1 = enqueue_spin(&spin, &q, a.buffer(), words, 20_000);
    let e2 = enqueue_spin(&spin2, &q2, b.buffer(), words, 20_000);
    drop((a, b));
    frames.end_compute_frame().unwrap();
    assert!(cl::is_complete(&e1).unwrap() && cl::is_complete(&e2).unwrap());
}

#[test]
fn the_host_never_waits_inside_a_frame() {
    let (ctx, q, pool, frames) = setup();
    let fill = kernel(&ctx, &q, "fill");
    let blocker = Blocker::new(&ctx, &q, Duration::from_secs(20));
    frames.start_compute_frame();
    for round in 0..20u64 {
        let buf = pool.alloc(&q, 256).unwrap();
        let _ = enqueue_fill(&fill, &q, buf.buffer(), 256, round);
        frames.start_compute_frame();
        drop(buf);
    }
    let s = pool.stats();
    assert_eq!((s.misses, s.ready_to_free), (20, 20), "{s}");
    blocker.release(); // fails if any call above had to wait for the blocked queue
    assert_eq!(frames.end_compute_frame().unwrap().buffers_returned, 20);
}

#[test]
fn a_scratch_buffer_is_never_retained() {
    let (_ctx, q, pool, frames) = setup();
    let (before_id, inside_id) =
        free_two_inside_a_frame(&q, &pool, &frames, Memcache::alloc_scratch, (0, 2));
    // Reused inside the same frame: the queue orders the new holder behind the old one.
    let again = [
        pool.alloc_scratch(&q, 1000).unwrap(),
        pool.alloc(&q, 2000).unwrap(),
    ];
    assert_eq!((again[0].id(), again[1].id()), (before_id, inside_id));
    drop(again);
    // A scratch buffer handed out as an ordinary one is retained like any other.
    assert_eq!(pool.stats().ready_to_free, 1);
    frames.end_compute_frame().unwrap();
}
