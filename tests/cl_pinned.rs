//! Page-locked host memory (`cl::PinnedHost`): blocks reused for requests within twice their
//! size, the byte cap (free blocks give way first, then the request gets none), and uploads
//! from memory outside the blocks left to the caller's blocking write.

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
