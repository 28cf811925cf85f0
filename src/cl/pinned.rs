//! Page-locked host memory for the words of SEAL objects marked for the device.
//!
//! A block is an OpenCL buffer made with `CL_MEM_ALLOC_HOST_PTR` and mapped once for its
//! whole life: drivers back such buffers with page-locked memory, and a transfer whose host
//! pointer lies in one is a direct DMA (NVIDIA: no staging copy, several times the
//! bandwidth of pageable memory). SEAL allocates marked objects' words here through
//! `seal::gpu::HostPool` (seal-patch 0007); [`PinnedHost::write`] uploads from such words
//! without blocking.
//!
//! Blocks are kept for reuse when SEAL frees them (a request of `n` bytes takes a free block
//! of `n ..= 2n` bytes). All blocks together, in use or free, stay under a byte cap
//! (`SEAL_OPENCL_MAX_PINNED_BYTES`, default a quarter of the host's memory); past it free
//! blocks are released first, and when that is not enough the request gets no block and SEAL
//! falls back to pageable memory (one warning per process).
//!
//! Asynchronous uploads keep their host words: each block remembers the events of the
//! uploads still reading it. A block freed while some still run drains: it goes back to the
//! free blocks once they finished (looked at by later requests), so an object may be
//! destroyed (or reallocated) while its upload runs, and destroying it does not wait for the
//! device. Host writes wait through the image (`DeviceImage::wait_upload`).

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};

use ocl::flags::{MapFlags, MemFlags};
use ocl::MemMap;
use parking_lot::Mutex;

use super::{is_complete, Buffer, Event, Queue, Region};
use crate::error::{Error, Result};

/// Bytes of the blocks SEAL objects hold, over every pool of the process.
static IN_USE_BYTES: AtomicU64 = AtomicU64::new(0);

/// Bytes of page-locked blocks that SEAL objects hold now, in every pool of the process
/// (free blocks kept for reuse do not count).
pub fn pinned_bytes_in_use() -> u64 {
    IN_USE_BYTES.load(Ordering::Relaxed)
}

/// Block sizes are rounded up to this (a page), so that nearby sizes share blocks.
const BLOCK_ALIGN: usize = 4096;

/// Page-locked host memory, pooled. Thread-safe.
pub struct PinnedHost {
    queue: Queue,
    max_bytes: u64,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Every block by its start address.
    blocks: BTreeMap<usize, Block>,
    /// Free blocks by (bytes, address).
    free: BTreeMap<(usize, usize), ()>,
    /// Blocks SEAL freed while uploads still read them, by address, oldest first: free once
    /// those finished.
    draining: VecDeque<usize>,
    /// Bytes of all blocks, in use or free.
    total: u64,
    /// Blocks allocated from the driver so far.
    allocations: u64,
    /// Whether the fallback to pageable memory was reported.
    warned: bool,
}

struct Block {
    bytes: usize,
    in_use: bool,
    /// Uploads that may still read the block's words (completed ones are dropped lazily).
    reading: Vec<Event>,
    /// Declared before `_buffer`: unmapped before the buffer is released.
    mapping: Mapping,
    _buffer: Buffer<u8>,
}

/// A mapping of a block's buffer into host memory, unmapped when dropped.
struct Mapping(MemMap<u8>);

// SAFETY: `MemMap` is neither Send nor Sync only because it holds the raw pointer of the
// mapped region. OpenCL objects (its buffer and queue) may be used from any thread, the
// region stays mapped until the `Mapping` is dropped, and the pointer is only turned into an
// address for SEAL; reads and writes of the region are SEAL's, ordered by its object rules
// and by the events of `Block::reading`.
unsafe impl Send for Mapping {}
// SAFETY: as for Send; `&Mapping` only gives the address.
unsafe impl Sync for Mapping {}

impl PinnedHost {
    /// A pool on `queue`'s context (maps run on `queue`) holding at most `max_bytes`.
    pub fn new(queue: Queue, max_bytes: u64) -> PinnedHost {
        PinnedHost {
            queue,
            max_bytes,
            state: Mutex::new(State::default()),
        }
    }

    /// The default cap: a quarter of the host's memory (4 GiB when it cannot be read), so
    /// that page-locked words never starve the rest of the system.
    pub fn default_max_bytes() -> u64 {
        host_memory_bytes().map_or(4 << 30, |bytes| bytes / 4)
    }

    /// Bytes of all blocks, in use or free.
    pub fn total_bytes(&self) -> u64 {
        self.state.lock().total
    }

    /// Blocks allocated from the driver so far (requests no free block served).
    pub fn allocations(&self) -> u64 {
        self.state.lock().allocations
    }

    /// A block of at least `bytes` bytes (aligned to a page), or None when the cap leaves
    /// no room or the driver has none: the caller uses pageable memory (reported once).
    pub fn allocate(&self, bytes: usize) -> Option<usize> {
        let bytes = bytes.max(1).div_ceil(BLOCK_ALIGN) * BLOCK_ALIGN;
        let mut state = self.state.lock();
        state.reclaim();
        let reuse = state
            .free
            .range((bytes, 0)..(bytes.saturating_mul(2).saturating_add(1), 0))
            .next()
            .map(|(&key, _)| key);
        if let Some(key) = reuse {
            state.free.remove(&key);
            state
                .blocks
                .get_mut(&key.1)
                .expect("free blocks exist")
                .in_use = true;
            IN_USE_BYTES.fetch_add(key.0 as u64, Ordering::Relaxed);
            return Some(key.1);
        }
        // Free blocks give way to the new one, largest first.
        while state.total + bytes as u64 > self.max_bytes {
            let Some((&key, _)) = state.free.iter().next_back() else {
                break;
            };
            state.free.remove(&key);
            let block = state.blocks.remove(&key.1).expect("free blocks exist");
            state.total -= block.bytes as u64;
        }
        let created = if state.total + bytes as u64 > self.max_bytes {
            Err(Error::invalid(format!(
                "its cap of {} bytes is reached",
                self.max_bytes
            )))
        } else {
            self.create(bytes)
        };
        match created {
            Ok(block) => {
                let address = block.mapping.0.as_ptr() as usize;
                state.total += bytes as u64;
                state.allocations += 1;
                state.blocks.insert(address, block);
                IN_USE_BYTES.fetch_add(bytes as u64, Ordering::Relaxed);
                Some(address)
            }
            Err(e) => {
                if !state.warned {
                    state.warned = true;
                    tracing::warn!(
                        "page-locked host memory for marked SEAL objects is exhausted ({e}): \
                         further ones use pageable memory, and their transfers are slower"
                    );
                }
                None
            }
        }
    }

    /// Takes back the block at `address` (from [`PinnedHost::allocate`]) without waiting: it
    /// is free at once where no upload reads it any more, else it drains until those
    /// finished. An unknown address is ignored.
    pub fn deallocate(&self, address: usize) {
        let mut state = self.state.lock();
        let Some(block) = state.blocks.get_mut(&address) else {
            return;
        };
        if !block.in_use {
            return;
        }
        block.in_use = false;
        IN_USE_BYTES.fetch_sub(block.bytes as u64, Ordering::Relaxed);
        if block.drop_finished_uploads() {
            let key = (block.bytes, address);
            state.free.insert(key, ());
        } else {
            state.draining.push_back(address);
        }
    }

    /// Enqueues the copy of `data` into the start of `region` on `queue` without blocking
    /// when `data` lies in a block in use, and returns its event (the block keeps it until the copy
    /// finished, see [`PinnedHost::deallocate`]); None when it does not (nothing enqueued:
    /// the caller copies with a blocking write).
    pub fn write(&self, queue: &Queue, region: &Region, data: &[u64]) -> Result<Option<Event>> {
        if data.is_empty() || data.len() > region.words() {
            return Ok(None);
        }
        let start = data.as_ptr() as usize;
        let end = start + std::mem::size_of_val(data);
        let mut state = self.state.lock();
        let Some((_, block)) = state.blocks.range_mut(..=start).next_back() else {
            return Ok(None);
        };
        let block_start = block.mapping.0.as_ptr() as usize;
        if !block.in_use || end > block_start + block.bytes {
            return Ok(None);
        }
        block.drop_finished_uploads();
        super::drain(queue)?;
        let mut event = Event::empty();
        // SAFETY: the write reads `data` after this call returns. `data` lies in a mapped block
        // in use, which stays mapped and is not reused until the write finished: a freed block
        // drains until the event recorded below completed (`State::reclaim`), the pool waits for
        // it before it unmaps the block (`Drop for PinnedHost`), and the block's owner (a SEAL
        // object) waits for it (`GpuImage::wait_upload`) before writing the words.
        // The length was checked against the region above.
        unsafe {
            region
                .buffer()
                .write(data)
                .queue(queue)
                .offset(region.offset())
                .block(false)
                .enew(&mut event)
                .enq()?;
        }
        block.reading.push(event.clone());
        Ok(Some(event))
    }

    fn create(&self, bytes: usize) -> Result<Block> {
        let buffer = Buffer::<u8>::builder()
            .queue(self.queue.clone())
            .flags(MemFlags::new().alloc_host_ptr().read_write())
            .len(bytes)
            .build()?;
        // SAFETY: a blocking map of the whole buffer, which no command uses yet; the mapping
        // lives in the same Block as the buffer and is dropped (unmapped) before it.
        let map = unsafe {
            buffer
                .map()
                .flags(MapFlags::new().read().write())
                .len(bytes)
                .enq()?
        };
        Ok(Block {
            bytes,
            in_use: true,
            reading: Vec::new(),
            mapping: Mapping(map),
            _buffer: buffer,
        })
    }
}

impl State {
    /// Frees the draining blocks whose uploads finished, oldest first, up to the first one
    /// still read: a request asks about one running upload at most. Uploads finish about in
    /// the order their blocks were freed; one that finished behind a running one waits for it.
    fn reclaim(&mut self) {
        while let Some(&address) = self.draining.front() {
            let block = self
                .blocks
                .get_mut(&address)
                .expect("draining blocks exist");
            if !block.drop_finished_uploads() {
                return;
            }
            self.free.insert((block.bytes, address), ());
            self.draining.pop_front();
        }
    }
}

impl Block {
    /// Forgets the uploads that finished (a failed one does not read the words any more
    /// either); whether none is left.
    fn drop_finished_uploads(&mut self) -> bool {
        self.reading
            .retain(|event| !is_complete(event).unwrap_or(true));
        self.reading.is_empty()
    }
}

impl Drop for PinnedHost {
    /// Uploads from freed blocks may still run: their words stay mapped until they finished.
    fn drop(&mut self) {
        for block in self.state.get_mut().blocks.values() {
            for event in &block.reading {
                if let Err(e) = event.wait_for() {
                    tracing::debug!("upload from page-locked memory failed: {e}");
                }
            }
        }
    }
}

/// Total memory of the host, from /proc/meminfo (Linux).
fn host_memory_bytes() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}
