//! Uploads of host words that SEAL hands the backend for one call (an encryption's samples,
//! an encoding's values) through page-locked blocks, so that the call returns before the
//! copy ends.

use parking_lot::Mutex;

use crate::cl::{self, Event, PinnedHost, Region};
use crate::device::Graph;
use crate::error::Result;

/// Page-locked blocks holding host words that an upload may still read (SEAL's samples of an
/// encryption, an encoding's values). The samples are secrets: a block is zeroed when its
/// copy finished, then given back.
#[derive(Default)]
pub(super) struct Staging {
    /// (block address, words staged there, the copy reading them).
    pending: Mutex<Vec<(usize, usize, Event)>>,
}

impl Staging {
    /// Copies `data` into `region` on `graph`'s queue without waiting for the device: through a
    /// page-locked block of `pinned` (given back by a later call once the copy finished), or,
    /// when none is left, with a blocking write. Returns whether the copy was from a block.
    pub(super) fn upload(
        &self,
        pinned: &PinnedHost,
        graph: &Graph,
        region: &Region,
        data: &[u64],
    ) -> Result<bool> {
        self.reclaim(pinned);
        let bytes = std::mem::size_of_val(data);
        if let Some(address) = pinned.allocate(bytes) {
            // SAFETY: `allocate` returned a mapped, page-aligned block of at least `bytes`
            // bytes that is ours alone until `deallocate`; nothing else views it meanwhile.
            let block = unsafe { std::slice::from_raw_parts_mut(address as *mut u64, data.len()) };
            block.copy_from_slice(data);
            match pinned.write(graph.queue(), region, block) {
                Ok(Some(event)) => {
                    self.pending.lock().push((address, data.len(), event));
                    return Ok(true);
                }
                Ok(None) => Self::release(pinned, address, data.len()),
                Err(e) => {
                    Self::release(pinned, address, data.len());
                    return Err(e);
                }
            }
        }
        cl::write(graph.queue(), region, 0, data)?;
        Ok(false)
    }

    /// Gives back the blocks whose copies finished.
    fn reclaim(&self, pinned: &PinnedHost) {
        let done: Vec<(usize, usize)> = {
            let mut pending = self.pending.lock();
            let mut done = Vec::new();
            pending.retain(|(address, words, event)| {
                // A failed copy reads nothing any more either.
                let finished = cl::is_complete(event).unwrap_or(true);
                if finished {
                    done.push((*address, *words));
                }
                !finished
            });
            done
        };
        for (address, words) in done {
            Self::release(pinned, address, words);
        }
    }

    /// Zeroes the first `words` words of the block at `address` and gives it back.
    fn release(pinned: &PinnedHost, address: usize, words: usize) {
        // SAFETY: the block is ours (allocated above, not yet given back) and no copy reads
        // it any more (finished, or never enqueued); it holds at least `words` words.
        unsafe { std::ptr::write_bytes(address as *mut u64, 0, words) };
        pinned.deallocate(address);
    }
}
