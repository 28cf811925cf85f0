//! Pooled device buffers (the XeHE paper's memcache, III-E): a free pool and an allocated
//! ("live") pool per OpenCL context, so that most allocations are a table lookup instead
//! of a driver call.
//!
//! # Reuse policy
//! A request for `n` words is served by the free buffer with the *smallest* capacity
//! `c` such that `n <= c <= 2n` (best fit, bounded waste). Ciphertext sizes come in a
//! small set fixed by the parameters (k polynomials x L primes x N words), so best fit
//! mostly finds an exact size; taking the smallest fit keeps the large buffers for the
//! large requests, and refusing buffers more than twice the request stops a small
//! temporary from pinning a large buffer (at most half of a buffer is ever wasted). Among
//! equal fits, a buffer last used on the requesting queue wins (see below).
//!
//! # Reuse is safe without host waits
//! A buffer is handed out again only behind every command that used it:
//! - last used on the requesting queue: queues are in order, so the new holder's commands
//!   run after the old holder's; nothing needs to happen;
//! - last used on another queue: a marker on that queue and a barrier on the requesting
//!   queue make the new holder's commands wait, on the device, for everything the old
//!   queue had been given (a superset of the old holder's commands);
//! - commands the holder ran on other queues are recorded with
//!   [`PoolBuffer::record_use`] and waited for the same way.
//!
//! Real releases (uncached buffers, a deactivated cache, `flush`) need nothing: OpenCL
//! keeps a released buffer alive until the commands using it have finished.
//!
//! # Frames
//! While a compute frame is open (see `crate::frame`) every cached buffer carries a retain
//! bit; freeing a retained buffer parks it as ready-to-free in the live pool, and only
//! the end of the frame (after synchronising) returns it to the free pool.
//!
//! # Slabs
//! With [`MemcacheConfig::slab_bytes`] set (the backend's devices set it), device memory
//! comes in slabs: a request that needs a new buffer and fits in half a slab gets a
//! region carved from the current slab (the slab's own OpenCL buffer, an offset and a
//! length: no driver call and no new memory object), and a new slab is allocated only when
//! the current one is full. A driver may charge the first command that uses a new memory
//! object (NVIDIA's: tens of microseconds of host time), so a new slab is touched at once
//! by a one-word fill, and the first command on each of its regions costs nothing extra.
//! Regions are pooled and reused like any buffer; a slab goes back to the driver when its
//! last region is released (flush, deactivate), and its bytes count as held until then.
//! Larger requests, uncached ones and those of a deactivated pool get a device allocation
//! of their own (a region at offset 0 of it).
//!
//! # Out of memory
//! A failed device allocation (or one that would exceed [`MemcacheConfig::max_bytes_held`])
//! flushes the free pool and tries once more; if that fails too the caller gets
//! [`Error::OutOfMemory`] with the pool's numbers. Nothing aborts.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::sync::Arc;

use parking_lot::Mutex;
use serde::{Deserialize, Serialize};

use crate::cl::{self, Context, Event, Queue, Region};
use crate::error::{Error, Result};

/// A free buffer is reused for a request of `n` words only if its capacity is at most
/// this many times `n` (see the module documentation).
pub const MAX_FIT_RATIO: usize = 2;

const WORD_BYTES: u64 = std::mem::size_of::<u64>() as u64;

/// How a request is served.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// From the pool; retained while a frame is open.
    Cached,
    /// From the pool; never retained (see `Memcache::alloc_scratch`).
    Scratch,
    /// A device allocation of its own, released when freed.
    Uncached,
}

/// Tunables of one pool.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct MemcacheConfig {
    /// Most device memory, in bytes, the pool may hold (free, in use and ready-to-free
    /// together); reaching it behaves like the device running out. `None`: only the
    /// device's own limit. Lets one process share a GPU with others.
    pub max_bytes_held: Option<u64>,
    /// Debug: fill every buffer handed out (new or reused) with this word, so a kernel
    /// that reads words nobody wrote, or relies on a previous holder's data, shows it.
    pub poison: Option<u64>,
    /// Bytes of a slab (see the module doc), at most the device's largest allocation; 0:
    /// every buffer is a device allocation of its own.
    pub slab_bytes: u64,
}

/// The least alignment of a region's first word in its slab, in bytes (more where the
/// device's base address alignment asks for more): whole cache lines and memory
/// transactions for the kernels' loads.
pub const REGION_ALIGN_BYTES: u64 = 256;

/// The slab size of the backend's pools: 64 MiB, a few ciphertexts at N = 2^16.
pub const DEFAULT_SLAB_BYTES: u64 = 64 << 20;

/// Counters of one pool. `bytes_*` count buffer capacities.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemcacheStats {
    /// Requests served from the free pool.
    pub hits: u64,
    /// Cached requests that needed a device allocation.
    pub misses: u64,
    /// Requests that bypassed the pool (uncached, or the cache was deactivated).
    pub uncached: u64,
    /// Device allocations made (`clCreateBuffer`: slabs, and buffers of their own for misses
    /// and uncached requests).
    pub device_allocations: u64,
    /// Misses served by a region carved from a slab (no device allocation of their own).
    pub sub_allocations: u64,
    /// Device allocations released (flush, deactivated cache, uncached frees; a slab when
    /// its last region is).
    pub device_releases: u64,
    /// Allocations that failed, flushed the free pool and tried again.
    pub oom_retries: u64,
    /// Device memory the pool holds: free, in use and ready-to-free.
    pub bytes_held: u64,
    /// Device memory handed out and not yet freed.
    pub bytes_in_use: u64,
    /// Largest `bytes_held` seen.
    pub peak_bytes_held: u64,
    /// Buffers in the free pool.
    pub free_buffers: usize,
    /// Buffers handed out and not yet freed.
    pub live_buffers: usize,
    /// Buffers freed inside a frame, waiting for its end.
    pub ready_to_free: usize,
    /// Slabs held.
    pub slabs: usize,
}

/// The sum of two pools' counters (several tiles); `peak_bytes_held` sums the peaks, an
/// upper bound of the peak of the sum.
impl std::ops::AddAssign for MemcacheStats {
    fn add_assign(&mut self, o: MemcacheStats) {
        self.hits += o.hits;
        self.misses += o.misses;
        self.uncached += o.uncached;
        self.device_allocations += o.device_allocations;
        self.sub_allocations += o.sub_allocations;
        self.device_releases += o.device_releases;
        self.oom_retries += o.oom_retries;
        self.bytes_held += o.bytes_held;
        self.bytes_in_use += o.bytes_in_use;
        self.peak_bytes_held += o.peak_bytes_held;
        self.free_buffers += o.free_buffers;
        self.live_buffers += o.live_buffers;
        self.ready_to_free += o.ready_to_free;
        self.slabs += o.slabs;
    }
}

impl fmt::Display for MemcacheStats {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} hits, {} misses ({} from slabs), {} uncached; {} B held ({} free buffers, {} slabs), \
             {} B in use ({} live), {} ready-to-free, peak {} B",
            self.hits,
            self.misses,
            self.sub_allocations,
            self.uncached,
            self.bytes_held,
            self.free_buffers,
            self.slabs,
            self.bytes_in_use,
            self.live_buffers,
            self.ready_to_free,
            self.peak_bytes_held
        )
    }
}

/// A device-buffer pool for one OpenCL context. Cheap to clone (shared); usable from
/// many threads at once.
#[derive(Clone)]
pub struct Memcache {
    inner: Arc<Inner>,
}

struct Inner {
    context: Arc<Context>,
    config: MemcacheConfig,
    state: Mutex<State>,
}

struct State {
    /// `false` after `deactivate`: every request allocates, every free releases.
    active: bool,
    /// A frame is open: new cached buffers are born retained.
    retain_new: bool,
    next_id: u64,
    /// Keyed by (capacity in words, id): the range from `n` upwards is the best fit.
    free: BTreeMap<(usize, u64), Parked>,
    /// Every buffer handed out and not returned to the free pool, by id.
    live: HashMap<u64, Live>,
    /// Slabs by id, while a region of theirs exists.
    slabs: HashMap<u64, Slab>,
    /// The slab new regions are carved from.
    carving: Option<u64>,
    next_slab: u64,
    stats: MemcacheStats,
}

/// A device allocation that regions are carved from, front to back.
struct Slab {
    /// All of the allocation.
    region: Region,
    /// Words carved so far (region origins are aligned).
    carved: usize,
    /// Regions carved and not released (in use, free or ready-to-free).
    subs: usize,
}

/// Device memory given up under the pool's lock, released by the caller outside it (the
/// last region of a device allocation dropped releases it).
#[derive(Default)]
struct Released {
    buffers: Vec<Parked>,
    slabs: Vec<Region>,
}

/// A buffer nobody holds, with what a new holder must wait for.
struct Parked {
    buffer: Region,
    /// The slab it was carved from, if any.
    slab: Option<u64>,
    /// The queue of the last holder.
    queue: Queue,
    /// Commands of the last holder on other queues.
    foreign_uses: Vec<Event>,
}

struct Live {
    capacity: usize,
    /// Came from (and returns to) the pool; uncached buffers are released on free.
    cached: bool,
    retained: bool,
    /// Never retained (`alloc_scratch`).
    scratch: bool,
    /// Freed while retained: parked here until the frame ends.
    ready_to_free: Option<Parked>,
}

impl State {
    fn bytes(capacity: usize) -> u64 {
        capacity as u64 * WORD_BYTES
    }

    /// Takes the best free fit for `len` words out of the free pool (see the module doc).
    fn take_best_fit(&mut self, len: usize, queue: &Queue) -> Option<((usize, u64), Parked)> {
        let key = self.best_fit(len, queue)?;
        self.free.remove(&key).map(|parked| (key, parked))
    }

    /// The best free fit for `len` words, preferring buffers last used on `queue`.
    fn best_fit(&self, len: usize, queue: &Queue) -> Option<(usize, u64)> {
        let upper = len.saturating_mul(MAX_FIT_RATIO);
        let mut first = None;
        for (&(capacity, id), parked) in self.free.range((len, 0)..) {
            if capacity > upper {
                break;
            }
            match first {
                None => first = Some((capacity, id)),
                Some((c, _)) if c < capacity => break,
                Some(_) => {}
            }
            if cl::same_queue(&parked.queue, queue) {
                return Some((capacity, id));
            }
        }
        first
    }

    fn reserve(&mut self, bytes: u64, limit: Option<u64>) -> Result<()> {
        let held = self.stats.bytes_held + bytes;
        if let Some(limit) = limit {
            if held > limit {
                return Err(Error::OutOfMemory(format!(
                    "pool limit of {limit} B reached ({} B held, {bytes} B requested)",
                    self.stats.bytes_held
                )));
            }
        }
        self.stats.bytes_held = held;
        self.stats.peak_bytes_held = self.stats.peak_bytes_held.max(held);
        Ok(())
    }

    /// Takes every free buffer out of the pool (the caller drops them outside the lock).
    fn drain_free(&mut self) -> Released {
        let drained: Vec<(usize, Parked)> = std::mem::take(&mut self.free)
            .into_iter()
            .map(|((capacity, _), parked)| (capacity, parked))
            .collect();
        let mut released = Released::default();
        for (capacity, parked) in drained {
            self.release_device(capacity, parked, &mut released);
        }
        released
    }

    /// Files a buffer nobody holds any more: free pool, or released (into `released`, for
    /// the caller to drop outside the lock).
    fn file(&mut self, id: u64, live: Live, parked: Parked, released: &mut Released) {
        if live.cached && self.active {
            self.free.insert((live.capacity, id), parked);
        } else {
            self.release_device(live.capacity, parked, released);
        }
    }

    /// Gives up a buffer of `capacity` words: a device allocation of its own, or a
    /// region whose slab goes too when it was the slab's last.
    fn release_device(&mut self, capacity: usize, parked: Parked, released: &mut Released) {
        match parked.slab {
            None => {
                self.stats.bytes_held -= Self::bytes(capacity);
                self.stats.device_releases += 1;
            }
            Some(id) => {
                let last = self.slabs.get_mut(&id).is_some_and(|slab| {
                    slab.subs -= 1;
                    slab.subs == 0
                });
                if let Some(slab) = last.then(|| self.slabs.remove(&id)).flatten() {
                    if self.carving == Some(id) {
                        self.carving = None;
                    }
                    self.stats.bytes_held -= Self::bytes(slab.region.words());
                    self.stats.device_releases += 1;
                    released.slabs.push(slab.region);
                }
            }
        }
        released.buffers.push(parked);
    }

    /// A region of `len` words from the carving slab, if it has room (origins aligned to
    /// `align` words).
    fn carve(&mut self, len: usize, align: usize) -> Result<Option<(Region, u64)>> {
        let Some(id) = self.carving else {
            return Ok(None);
        };
        let Some(slab) = self.slabs.get_mut(&id) else {
            return Ok(None);
        };
        let start = slab.carved.next_multiple_of(align);
        if start.saturating_add(len) > slab.region.words() {
            return Ok(None);
        }
        let sub = slab.region.part(start, len)?;
        slab.carved = start + len;
        slab.subs += 1;
        self.stats.sub_allocations += 1;
        Ok(Some((sub, id)))
    }
}

impl Memcache {
    pub fn new(context: Arc<Context>, config: MemcacheConfig) -> Memcache {
        Memcache {
            inner: Arc::new(Inner {
                context,
                config,
                state: Mutex::new(State {
                    active: true,
                    retain_new: false,
                    next_id: 0,
                    free: BTreeMap::new(),
                    live: HashMap::new(),
                    slabs: HashMap::new(),
                    carving: None,
                    next_slab: 0,
                    stats: MemcacheStats::default(),
                }),
            }),
        }
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.inner.context
    }

    pub fn config(&self) -> MemcacheConfig {
        self.inner.config
    }

    /// A buffer of at least `len` words for commands on `queue` (from the free pool when
    /// one fits, else a device allocation). Its contents are unspecified (or the poison
    /// word). Errors: `len == 0` or larger than the device's largest allocation
    /// (InvalidArgument); out of device memory after one flush-and-retry (OutOfMemory).
    pub fn alloc(&self, queue: &Queue, len: usize) -> Result<PoolBuffer> {
        self.allocate(queue, len, Mode::Cached)
    }

    /// As [`Memcache::alloc`], for a temporary whose every use is enqueued on `queue`: it
    /// never carries a retain bit, so freeing it inside a frame returns it to the free pool
    /// at once. That is safe because a later holder on `queue` runs after the temporary's
    /// commands (in-order queue) and one on another queue is ordered behind them (see the
    /// module doc); it keeps a long frame of operations from parking every temporary
    /// until the frame ends.
    pub fn alloc_scratch(&self, queue: &Queue, len: usize) -> Result<PoolBuffer> {
        self.allocate(queue, len, Mode::Scratch)
    }

    /// A buffer of exactly `len` words that bypasses the pool: a device allocation now,
    /// a device release when freed.
    pub fn alloc_uncached(&self, queue: &Queue, len: usize) -> Result<PoolBuffer> {
        self.allocate(queue, len, Mode::Uncached)
    }

    /// Releases every free buffer; returns how many and the device bytes that went back
    /// (a slab's only with its last region). Buffers in use or ready-to-free are
    /// untouched.
    pub fn flush(&self) -> (usize, u64) {
        let (drained, bytes) = {
            let mut state = self.inner.state.lock();
            let held = state.stats.bytes_held;
            let drained = state.drain_free();
            let bytes = held - state.stats.bytes_held;
            (drained, bytes)
        };
        let buffers = drained.buffers.len();
        tracing::debug!(buffers, bytes, "memcache flushed");
        (buffers, bytes)
    }

    /// Flushes the free pool and turns the cache off: from now on every request is a
    /// device allocation and every free a device release.
    pub fn deactivate(&self) {
        let drained = {
            let mut state = self.inner.state.lock();
            state.active = false;
            state.drain_free()
        };
        tracing::debug!(released = drained.buffers.len(), "memcache deactivated");
    }

    pub fn is_active(&self) -> bool {
        self.inner.state.lock().active
    }

    pub fn stats(&self) -> MemcacheStats {
        let state = self.inner.state.lock();
        let mut stats = state.stats;
        stats.free_buffers = state.free.len();
        stats.live_buffers = state.live.len() - stats.ready_to_free;
        stats.slabs = state.slabs.len();
        stats
    }

    /// Frame start: every cached buffer now live, and every one allocated until
    /// `end_frame`, is retained.
    pub(crate) fn start_frame(&self) {
        let mut state = self.inner.state.lock();
        state.retain_new = true;
        for live in state.live.values_mut() {
            live.retained |= live.cached && !live.scratch;
        }
    }

    /// Frame end (the caller has synchronised every queue): clears every retain bit and
    /// files the ready-to-free buffers. Returns how many and their bytes.
    pub(crate) fn end_frame(&self) -> (usize, u64) {
        let mut released = Released::default();
        let mut count = 0;
        let mut bytes = 0;
        {
            let mut state = self.inner.state.lock();
            state.retain_new = false;
            let ready: Vec<u64> = state
                .live
                .iter_mut()
                .filter_map(|(&id, live)| {
                    live.retained = false;
                    live.ready_to_free.is_some().then_some(id)
                })
                .collect();
            for id in ready {
                let Some(mut live) = state.live.remove(&id) else {
                    continue;
                };
                let Some(parked) = live.ready_to_free.take() else {
                    continue;
                };
                count += 1;
                bytes += State::bytes(live.capacity);
                state.stats.ready_to_free -= 1;
                state.file(id, live, parked, &mut released);
            }
        }
        drop(released);
        (count, bytes)
    }

    fn allocate(&self, queue: &Queue, len: usize, mode: Mode) -> Result<PoolBuffer> {
        let uncached = mode == Mode::Uncached;
        let _span = tracing::trace_span!("memcache_alloc", words = len, uncached).entered();
        let max_alloc = self.inner.context.info().max_alloc_bytes;
        if len == 0 {
            return Err(Error::invalid(
                "a device buffer must hold at least one word",
            ));
        }
        let bytes = (len as u64).saturating_mul(WORD_BYTES);
        if max_alloc != 0 && bytes > max_alloc {
            return Err(Error::invalid(format!(
                "a buffer of {len} words ({bytes} B) exceeds the largest allocation of {} ({max_alloc} B)",
                self.inner.context.info().name
            )));
        }

        let cached = {
            let mut state = self.inner.state.lock();
            let cached = !uncached && state.active;
            if cached {
                if let Some(((capacity, id), parked)) = state.take_best_fit(len, queue) {
                    let retained = state.retain_new && mode == Mode::Cached;
                    state.live.insert(
                        id,
                        Live {
                            capacity,
                            cached: true,
                            retained,
                            scratch: mode == Mode::Scratch,
                            ready_to_free: None,
                        },
                    );
                    state.stats.hits += 1;
                    state.stats.bytes_in_use += State::bytes(capacity);
                    drop(state);
                    return self.hand_out(id, len, capacity, parked, queue);
                }
            }
            cached
        };

        let (buffer, slab) = match self.create(queue, len, cached) {
            Err(Error::OutOfMemory(first)) => {
                let (buffers, freed) = self.flush();
                self.inner.state.lock().stats.oom_retries += 1;
                tracing::warn!(words = len, buffers, freed, error = %first, "allocation failed; flushed the free pool, retrying");
                self.create(queue, len, cached).map_err(|e| match e {
                    Error::OutOfMemory(second) => Error::OutOfMemory(format!(
                        "{len} words ({bytes} B) on {}: {second} (also after releasing {buffers} free buffers, {freed} B; pool: {})",
                        self.inner.context.info().name,
                        self.stats()
                    )),
                    other => other,
                })?
            }
            other => other?,
        };

        let id = {
            let mut state = self.inner.state.lock();
            let id = state.next_id;
            state.next_id += 1;
            let retained = cached && state.retain_new && mode == Mode::Cached;
            state.live.insert(
                id,
                Live {
                    capacity: len,
                    cached,
                    retained,
                    scratch: mode == Mode::Scratch,
                    ready_to_free: None,
                },
            );
            state.stats.bytes_in_use += bytes;
            if cached {
                state.stats.misses += 1;
            } else {
                state.stats.uncached += 1;
            }
            id
        };
        let parked = Parked {
            buffer,
            slab,
            queue: queue.clone(),
            foreign_uses: Vec::new(),
        };
        self.hand_out(id, len, len, parked, queue)
    }

    /// A new buffer of `len` words: with `carve` (a cached request) and slabs on, a
    /// region of a slab when it fits in half of one (a new slab, touched on `queue`, when
    /// the current one is full and the limit allows one), else a device allocation of its
    /// own; counted against the pool's limit. Returns the region and its slab.
    fn create(&self, queue: &Queue, len: usize, carve: bool) -> Result<(Region, Option<u64>)> {
        let info = self.inner.context.info();
        let slab_bytes = match info.max_alloc_bytes {
            0 => self.inner.config.slab_bytes,
            max => self.inner.config.slab_bytes.min(max),
        };
        if carve && State::bytes(len) <= slab_bytes / 2 {
            let align = (info.base_addr_align_bytes.max(REGION_ALIGN_BYTES) / WORD_BYTES) as usize;
            if let Some((region, slab_id)) = self.inner.state.lock().carve(len, align)? {
                return Ok((region, Some(slab_id)));
            }
            let reserved = self
                .inner
                .state
                .lock()
                .reserve(slab_bytes, self.inner.config.max_bytes_held);
            if reserved.is_ok() {
                let words = (slab_bytes / WORD_BYTES) as usize;
                let slab = self
                    .inner
                    .context
                    .buffer(queue, words)
                    .and_then(|slab| {
                        // The driver's first-use charge for the new memory object, paid
                        // here once instead of by the first command on a region of it.
                        cl::fill_range(queue, &slab, 0, 1, 0)?;
                        Ok(slab)
                    })
                    .inspect_err(|_| {
                        self.inner.state.lock().stats.bytes_held -= slab_bytes;
                    })?;
                let mut state = self.inner.state.lock();
                let id = state.next_slab;
                state.next_slab += 1;
                state.stats.device_allocations += 1;
                state.slabs.insert(
                    id,
                    Slab {
                        region: slab,
                        carved: 0,
                        subs: 0,
                    },
                );
                state.carving = Some(id);
                if let Some((region, slab_id)) = state.carve(len, align)? {
                    return Ok((region, Some(slab_id)));
                }
            }
            // No room under the limit for a slab: a buffer of its own may still fit.
        }
        let bytes = State::bytes(len);
        self.inner
            .state
            .lock()
            .reserve(bytes, self.inner.config.max_bytes_held)?;
        let buffer = self.inner.context.buffer(queue, len).inspect_err(|_| {
            self.inner.state.lock().stats.bytes_held -= bytes;
        })?;
        self.inner.state.lock().stats.device_allocations += 1;
        Ok((buffer, None))
    }

    /// Orders the new holder behind the old one, records `queue` as its queue, poisons.
    fn hand_out(
        &self,
        id: u64,
        len: usize,
        capacity: usize,
        mut parked: Parked,
        queue: &Queue,
    ) -> Result<PoolBuffer> {
        let ordered = cl::order_after(queue, &parked.queue, &parked.foreign_uses);
        if ordered.is_ok() {
            // A buffer reused on its last holder's queue (the usual case) keeps its queue:
            // cloning an ocl queue is a driver call (clRetainCommandQueue, and its release
            // later).
            if !cl::same_queue(&parked.queue, queue) {
                parked.queue = queue.clone();
            }
            parked.foreign_uses.clear();
        }
        // The handle owns the buffer from here on: on an error below, its drop files the
        // buffer with the dependencies it still has.
        let handle = PoolBuffer {
            id,
            len,
            capacity,
            held: Some(parked),
            pool: self.inner.clone(),
        };
        ordered?;
        if let Some(word) = self.inner.config.poison {
            cl::poison(queue, handle.buffer(), word)?;
        }
        Ok(handle)
    }
}

impl Inner {
    /// The holder dropped its handle.
    fn release(&self, id: u64, parked: Parked) {
        let mut released = Released::default();
        {
            let mut state = self.state.lock();
            let Some(live) = state.live.remove(&id) else {
                // Ids are unique and a handle is dropped once: this cannot happen; if it
                // did, releasing the buffer is the safe choice.
                tracing::error!(id, "memcache: freed a buffer it does not know");
                return;
            };
            state.stats.bytes_in_use -= State::bytes(live.capacity);
            if live.retained {
                state.stats.ready_to_free += 1;
                let ready = Live {
                    ready_to_free: Some(parked),
                    ..live
                };
                state.live.insert(id, ready);
            } else {
                state.file(id, live, parked, &mut released);
            }
        }
        drop(released);
    }
}

/// A buffer held from a [`Memcache`]. Dropping it (or [`PoolBuffer::free`]) gives it back;
/// since the handle is moved into the free, double frees and uses after free do not
/// compile.
///
/// On entry the buffer is ordered behind every earlier user (see the module doc); the
/// holder's commands go on [`PoolBuffer::queue`], or are recorded with `record_use`.
pub struct PoolBuffer {
    id: u64,
    len: usize,
    capacity: usize,
    /// Always `Some` until `drop` takes it.
    held: Option<Parked>,
    pool: Arc<Inner>,
}

impl PoolBuffer {
    /// Identity of the device allocation; the same buffer reused keeps its id.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Words requested.
    pub fn words(&self) -> usize {
        self.len
    }

    /// Words the device buffer holds (`>= words()`, at most `MAX_FIT_RATIO` times).
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// The device words: a region of a slab, or all of an allocation of its own (kernel
    /// argument, copies, transfers). Its commands go on [`PoolBuffer::queue`].
    pub fn buffer(&self) -> &Region {
        &self.parked().buffer
    }

    /// The queue this buffer was handed out for.
    pub fn queue(&self) -> &Queue {
        &self.parked().queue
    }

    /// Records a command on another queue that uses this buffer, so that the next holder
    /// waits for it too. Commands on [`PoolBuffer::queue`] need no record.
    pub fn record_use(&mut self, event: &Event) {
        if let Some(parked) = self.held.as_mut() {
            parked.foreign_uses.push(event.clone());
        }
    }

    /// Uploads `data` to the start of the buffer (blocking).
    pub fn write(&self, data: &[u64]) -> Result<()> {
        self.write_on(self.queue(), data)
    }

    /// Uploads `data` to the start of the buffer with a blocking write on `queue` (which
    /// the caller has ordered behind every use of the buffer).
    pub fn write_on(&self, queue: &Queue, data: &[u64]) -> Result<()> {
        if data.len() > self.len {
            return Err(Error::invalid(format!(
                "writing {} words into a buffer of {}",
                data.len(),
                self.len
            )));
        }
        cl::write(queue, self.buffer(), 0, data)
    }

    /// Downloads the requested words (blocking, on [`PoolBuffer::queue`]).
    pub fn read(&self) -> Result<Vec<u64>> {
        let mut out = vec![0u64; self.len];
        cl::read(self.queue(), self.buffer(), 0, &mut out)?;
        Ok(out)
    }

    /// Gives the buffer back (same as dropping the handle).
    pub fn free(self) {}

    fn parked(&self) -> &Parked {
        self.held
            .as_ref()
            .expect("a PoolBuffer holds its buffer until dropped")
    }
}

impl fmt::Debug for PoolBuffer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolBuffer")
            .field("id", &self.id)
            .field("words", &self.len)
            .field("capacity", &self.capacity)
            .finish()
    }
}

impl Drop for PoolBuffer {
    fn drop(&mut self) {
        if let Some(parked) = self.held.take() {
            let _span = tracing::trace_span!("memcache_free", id = self.id).entered();
            self.pool.release(self.id, parked);
        }
    }
}
