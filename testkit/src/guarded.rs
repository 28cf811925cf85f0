//! The kernel tests' outputs: regions in the middle of buffers of their own, poisoned words
//! on each side, so that every kernel runs at a non-zero offset of its buffer (as on a
//! region of a pool's slab) and a word written outside its region shows when the region is
//! read back.

use seal_opencl::cl::{self, Region};
use seal_opencl::device::Graph;

/// What the guards and a poisoned region hold.
pub const POISON: u64 = 0xBAD0_BAD0_BAD0_BAD0;

/// Words of poison on each side of every region (256 bytes, the pool's least region
/// alignment).
pub const GUARD: usize = 32;

/// A region of `words` poisoned words between guards, on `graph`'s queue.
pub fn poisoned(graph: &Graph, words: usize) -> Region {
    let whole = graph
        .context()
        .buffer(graph.queue(), words + 2 * GUARD)
        .unwrap();
    cl::poison(graph.queue(), &whole, POISON).unwrap();
    whole.part(GUARD, words).unwrap()
}

/// A region holding `data` between guards.
pub fn upload(graph: &Graph, data: &[u64]) -> Region {
    let region = poisoned(graph, data.len());
    cl::write(graph.queue(), &region, 0, data).unwrap();
    region
}

/// The words of a region from [`poisoned`] or [`upload`]; panics where a guard word is not
/// poison any more.
pub fn down(graph: &Graph, region: &Region) -> Vec<u64> {
    let mut all = vec![0u64; region.buffer().len()];
    // The read covers the guards, outside the region, so it is enqueued here and not
    // through `cl::read`: after the launches handed to the queue's issue thread.
    cl::drain(graph.queue()).unwrap();
    region
        .buffer()
        .read(&mut all)
        .queue(graph.queue())
        .enq()
        .unwrap();
    let (start, end) = (region.offset(), region.offset() + region.words());
    let outside = all[..start]
        .iter()
        .chain(&all[end..])
        .position(|&w| w != POISON);
    assert_eq!(outside, None, "a word outside the region was written");
    all[start..end].to_vec()
}
