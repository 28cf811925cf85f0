//! Page-locked host memory (`cl::PinnedHost`): blocks reused for requests within twice their
//! size, the byte cap (free blocks give way first, then the request gets none), freed blocks
//! that drain while uploads read them, and uploads from memory outside the blocks left to the
//! caller's blocking write.

use seal_opencl::cl::{Context, DeviceSelector, PinnedHost};

fn pool(max_bytes: u64) -> (std::sync::Arc<Context>, PinnedHost) {
    let ctx = Context::new(&DeviceSelector::Default).expect("an OpenCL device");
    let queue = ctx.queue(false).unwrap();
    (ctx, PinnedHost::new(queue, max_bytes))
}

#[test]
fn blocks_are_reused_and_capped() {
    let (_ctx, pinned) = pool(64 << 10);
    let a = pinned.allocate(10_000).expect("room for a block");
    assert_eq!(a % 64, 0, "blocks are aligned for SEAL's words");
    assert_eq!(
        pinned.total_bytes(),
        12 << 10,
        "sizes are rounded up to pages"
    );
    pinned.deallocate(a);
    assert_eq!(
        pinned.allocate(8192),
        Some(a),
        "a free block within 2x is reused"
    );
    pinned.deallocate(a);
    assert_ne!(
        pinned.allocate(2048),
        Some(a),
        "a free block over twice the request is not taken"
    );
    // 12 KiB (free) + 4 KiB (in use) + 40 KiB = 56 KiB: fits.
    let c = pinned.allocate(40_000).expect("room under the cap");
    assert_eq!(pinned.total_bytes(), 56 << 10);
    // 32 KiB more: the free 12 KiB block goes, and still no room: none.
    assert_eq!(
        pinned.allocate(30_000),
        None,
        "past the cap there is no block"
    );
    assert_eq!(
        pinned.total_bytes(),
        44 << 10,
        "the free block was released"
    );
    pinned.deallocate(c);
    assert_eq!(
        pinned.allocate(30_000),
        Some(c),
        "the freed 40 KiB block serves 32 KiB"
    );
}

#[test]
fn a_zero_cap_gives_no_block() {
    let (_ctx, pinned) = pool(0);
    assert_eq!(pinned.allocate(8), None);
    assert_eq!(pinned.total_bytes(), 0);
}

#[test]
fn words_outside_the_blocks_are_not_written_here() {
    let (ctx, pinned) = pool(1 << 20);
    let queue = ctx.queue(false).unwrap();
    let buffer = ctx.buffer(&queue, 16).unwrap();
    let words: Vec<u64> = (0..16).collect();
    assert!(
        pinned.write(&queue, &buffer, &words).unwrap().is_none(),
        "pageable words: the caller writes them, blocking"
    );
}

/// A block freed while an upload still reads it is taken back at once, without waiting for
/// the device; it drains: a request meanwhile gets another block, and once the upload
/// finished it serves requests again.
#[test]
fn freed_blocks_drain_until_their_uploads_finished() {
    use seal_opencl::cl::{complete_user_event, enqueue_barrier, is_complete};
    let (ctx, pinned) = pool(1 << 20);
    let queue = ctx.queue(false).unwrap();
    let target = ctx.buffer(&queue, 512).unwrap();
    // The queue waits for `gate`, so the upload below stays pending until it completes.
    let gate = ctx.user_event().unwrap();
    enqueue_barrier(&queue, std::slice::from_ref(&gate)).unwrap();
    let a = pinned.allocate(4096).expect("room for a block");
    // SAFETY: `a` is the start of a mapped block of 4096 bytes that this test holds (in use),
    // aligned for u64; nothing else reads or writes it while the slice lives.
    let words = unsafe { std::slice::from_raw_parts_mut(a as *mut u64, 512) };
    words
        .iter_mut()
        .enumerate()
        .for_each(|(i, w)| *w = i as u64);
    let upload = pinned
        .write(&queue, &target, words)
        .unwrap()
        .expect("words in a block: a non-blocking write");
    assert!(!is_complete(&upload).unwrap(), "the gate holds the upload");
    let (freed, returned) = std::sync::mpsc::channel();
    let b = std::thread::scope(|scope| {
        scope.spawn(|| {
            pinned.deallocate(a);
            freed.send(()).unwrap();
        });
        let returned = returned
            .recv_timeout(std::time::Duration::from_secs(10))
            .is_ok();
        // Still gated: the freed block is draining.
        let b = returned.then(|| pinned.allocate(4096).expect("room for a block"));
        complete_user_event(&gate).unwrap();
        assert!(returned, "deallocate waited for the upload");
        b.unwrap()
    });
    assert_ne!(b, a, "a draining block is not handed out");
    queue.finish().unwrap();
    assert_eq!(
        seal_opencl::cl::download(&queue, &target).unwrap(),
        (0..512).collect::<Vec<u64>>(),
        "the upload read the words of the freed block"
    );
    assert_eq!(
        pinned.allocate(4096),
        Some(a),
        "once the upload finished, the block serves requests again"
    );
    assert_eq!(pinned.total_bytes(), 8 << 10);
}
