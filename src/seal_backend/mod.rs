//! The backend behind patched SEAL's `seal::gpu::Backend`: device images of ciphertexts
//! and plaintexts, the per-parameter-set device data, the key cache, and SEAL's routed
//! CKKS operations on images. `crate::ffi` is its only caller from C++; it is plain Rust,
//! so it can be tested and used without SEAL.
//!
//! Every thread issues on a graph of its own: one in-order queue of one tile (a device, or
//! a sub-device when partitioned; every tile of `crate::device::Devices`, which share one
//! OpenCL context). Threads take the tiles round robin in the order they first issue, then
//! the queues within each tile ([`Backend::graph`]), unless bound to a tile explicitly
//! ([`Backend::bind_thread`], `seal_opencl::bind_thread_to_device` in Rust and C++). So one
//! thread's operations run in the order it issues them, threads do not wait for each
//! other's issue lock, and their kernels overlap on the device or run on different ones.
//! Each tile has its own device data per parameter set and its own key cache, made and
//! uploaded on the first use there.
//!
//! An image used on several queues (a result handed to another thread, a shared plaintext)
//! orders each use behind those of other queues on the device (`GpuImage::read_on` /
//! `write_on`); an image on another tile than the issuing thread's moves there on the
//! device (see `image.rs`). Keys and parameter tables are uploaded with blocking writes, so
//! every queue of their tile can read them at once. Nothing waits for the device but
//! downloads (for the last writer only) and the end of a compute frame. No frame opens
//! implicitly: a result's buffer goes back to
//! the pool when its image dies (the pool orders its reuse behind the buffer's last use
//! on the device), so a server that never decrypts keeps reusing buffers. Frames retain
//! buffers only when the program opens one (`GpuBackend_StartComputeFrame`, the XeHE
//! paper's compute frames); `Decryptor::decrypt` ends it.
//!
//! Metadata is SEAL's: the backend checks that every image holds exactly the words the
//! SEAL object's metadata says (size * K * N) and moves words; SEAL sets the metadata.

mod batch;
mod deferred;
mod encode;
mod encrypt;
mod image;
mod integer;
mod keys;
mod staging;
mod transfer;
mod transparency;

use std::cell::Cell;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::RwLock;

use batch::{Job, Kind, Room, SwitchBatch};
use deferred::{Deferred, Product};
pub use image::GpuImage;
use image::{copy_other_polys, in_place, rewrite, transform, Rewrite};
pub use integer::Scheme;
pub use keys::{KeyCacheStats, KeyId};
pub use transfer::{PinnedHostRef, Traffic};
pub use transparency::TransparencyCheck;
use transparency::Zeros;

use crate::arith::Modulus;
use crate::ckks::check_galois_elt;
use crate::ckks::context::{CkksContext, KernelChoices, KswitchKey};
use crate::ckks::fused::{DropCorrection, Sources, SOURCE_TERMS_MAX};
use crate::ckks::ops::LevelOps;
use crate::cl::{PinnedHost, Region};
use crate::device::{Devices, Graph};
use crate::error::{Error, Result};
use crate::integer::kernels::IntegerKernels;
use crate::integer::multiply::BehzLevels;
use crate::integer::ops::{key_switch_correction, IntegerScheme};
use crate::memcache::MemcacheStats;
use crate::ntt::{NttDirection, NttStrategy};
use crate::profiler::{timed_wait, Wait};
use keys::KeyCache;
use transfer::TransferCounters;

/// SEAL's most polynomials in a ciphertext (`SEAL_CIPHERTEXT_SIZE_MAX`).
pub const SEAL_CIPHERTEXT_SIZE_MAX: usize = 16;

/// A parameter set (its key level's parms_id) on one tile (its index).
type ContextKey = ([u64; 4], usize);

/// The parameter set and level of one operation. Borrows the primes: they are read only
/// when the parameter set is seen for the first time, so an operation copies nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level<'a> {
    /// The key level's parms_id (names the parameter set).
    pub key_parms_id: [u64; 4],
    /// log2 N.
    pub log_n: u32,
    /// The key level's primes: data primes, then the special prime when key switching.
    pub key_moduli: &'a [u64],
    pub using_keyswitching: bool,
    /// K, the primes of the operation's level.
    pub primes: usize,
    /// BFV's and BGV's plain modulus t; 0 in CKKS.
    pub plain_modulus: u64,
    pub scheme: Scheme,
}

/// The backend: devices, the graphs operations run on, device data per parameter set and
/// tile, keys per tile.
pub struct Backend {
    devices: Devices,
    /// Per tile, one graph per queue; each thread issues on one ([`Backend::graph`]).
    graphs: Vec<Vec<Graph>>,
    /// Per tile, each queue's key switches waiting for each other (`batch.rs`).
    batches: Vec<Vec<Arc<SwitchBatch>>>,
    /// Per tile, the queue the next thread bound there explicitly takes.
    next_bound_queue: Vec<AtomicUsize>,
    strategy: NttStrategy,
    /// The CKKS kernels every context runs ([`Backend::with_kernel_choices`]).
    kernel_choices: KernelChoices,
    /// Read by every operation of every thread, written once per parameter set and tile:
    /// a few entries, looked up by a scan (cheaper than hashing the key on every call).
    contexts: RwLock<Vec<(ContextKey, Arc<CkksContext>)>>,
    /// The integer schemes' kernels per (tile, log2 N), built on first use.
    integer_kernels: RwLock<HashMap<(usize, u32), Arc<IntegerKernels>>>,
    /// BFV's multiplication data per parameter set and tile, built on first use.
    behz: RwLock<HashMap<ContextKey, Arc<BehzLevels>>>,
    /// Per tile: a key is uploaded to each tile where it is used.
    keys: Vec<KeyCache>,
    /// How SEAL's transparency check of results is answered ([`Backend::is_transparent`]).
    transparency: TransparencyCheck,
    /// Page-locked host memory for marked SEAL objects' words (seal-patch 0007); shared
    /// with SEAL's `HostPool`, which keeps it while objects hold its memory.
    pinned: Arc<PinnedHost>,
    /// Transfers and copies so far ([`Backend::traffic`]).
    counters: TransferCounters,
    /// Page-locked blocks of encryption samples being uploaded ([`Backend::encrypt_zero`]).
    staging: staging::Staging,
}

impl Backend {
    pub fn new(devices: Devices, strategy: NttStrategy) -> Result<Backend> {
        let graphs = devices
            .tiles()
            .iter()
            .map(|tile| {
                (0..tile.queues().len())
                    .map(|queue| tile.graph(queue))
                    .collect::<Result<Vec<_>>>()
            })
            .collect::<Result<Vec<_>>>()?;
        let info = devices.tiles()[0].context().info();
        tracing::info!(device = %info.name, %strategy, tiles = graphs.len(), queues_per_tile = graphs[0].len(), "seal-opencl backend ready");
        let keys = devices
            .tiles()
            .iter()
            .map(|tile| {
                KeyCache::new(KeyCache::default_max_bytes(
                    tile.context().info().global_mem_bytes,
                ))
            })
            .collect();
        // Blocks are mapped once, on the first queue; copies from them run on any queue of
        // the context, every tile's included.
        let pinned = Arc::new(PinnedHost::new(
            graphs[0][0].queue().clone(),
            PinnedHost::default_max_bytes(),
        ));
        let batches = graphs
            .iter()
            .map(|queues| queues.iter().cloned().map(SwitchBatch::new).collect())
            .collect();
        Ok(Backend {
            next_bound_queue: graphs.iter().map(|_| AtomicUsize::new(0)).collect(),
            batches,
            devices,
            graphs,
            strategy,
            kernel_choices: KernelChoices::default(),
            contexts: RwLock::new(Vec::new()),
            integer_kernels: RwLock::new(HashMap::new()),
            behz: RwLock::new(HashMap::new()),
            keys,
            transparency: TransparencyCheck::default(),
            pinned,
            counters: TransferCounters::default(),
            staging: staging::Staging::default(),
        })
    }

    /// Runs the CKKS kernels `choices` picks (the default: fused, Dhem-Quisquater's
    /// Barrett).
    pub fn with_kernel_choices(mut self, choices: KernelChoices) -> Backend {
        self.kernel_choices = choices;
        self
    }

    /// Keeps at most `bytes` of page-locked host memory for marked objects, over the whole
    /// process (the default is a quarter of the host's memory; 0: none).
    pub fn with_max_pinned_bytes(mut self, bytes: u64) -> Backend {
        self.pinned = Arc::new(PinnedHost::new(self.graphs[0][0].queue().clone(), bytes));
        self
    }

    /// The page-locked host memory SEAL allocates marked objects' words from.
    pub fn pinned_host(&self) -> &Arc<PinnedHost> {
        &self.pinned
    }

    /// Keeps at most `bytes` of keys on each tile, so the process may hold `bytes` per tile
    /// (least recently used evicted first; the default is a quarter of the tile's memory).
    pub fn with_max_key_bytes(mut self, bytes: u64) -> Backend {
        self.keys = self.graphs.iter().map(|_| KeyCache::new(bytes)).collect();
        self
    }

    /// The graph the calling thread issues on: the queue it was bound to
    /// ([`Backend::bind_thread`]) or else, in the order threads first issue anything, the
    /// tiles round robin and then the queues within each tile, so up to one thread per
    /// queue each has a queue of its own (more share them; the issue lock takes turns per
    /// operation). A binding to a tile or queue this backend does not have (made through
    /// another backend) is ignored.
    pub fn graph(&self) -> &Graph {
        if let Some((tile, queue)) = BOUND.get() {
            if let Some(graph) = self.graphs.get(tile).and_then(|queues| queues.get(queue)) {
                return graph;
            }
        }
        let k = thread_ordinal();
        let queues = &self.graphs[k % self.graphs.len()];
        &queues[(k / self.graphs.len()) % queues.len()]
    }

    /// Binds the calling thread to tile `tile` (a device, or a sub-device when partitioned,
    /// in [`Devices::tiles`]' order): its later operations, uploads and copies run there,
    /// on one of the tile's queues (the tile's next one, round robin over bound threads).
    /// The binding is the thread's, for its life or until it binds again. Errors:
    /// `InvalidArgument` when the backend has no tile `tile`; the binding is then unchanged.
    pub fn bind_thread(&self, tile: usize) -> Result<()> {
        let queues = self.graphs.get(tile).ok_or_else(|| {
            Error::invalid(format!(
                "device {tile} does not exist: the backend uses {} device(s) or tiles \
                 (SEAL_OPENCL_DEVICES, SEAL_OPENCL_TILES), numbered from 0",
                self.graphs.len()
            ))
        })?;
        let queue = self.next_bound_queue[tile].fetch_add(1, Ordering::Relaxed) % queues.len();
        BOUND.set(Some((tile, queue)));
        Ok(())
    }

    /// How many tiles (devices, or sub-devices when partitioned) the backend issues on.
    pub fn tile_count(&self) -> usize {
        self.graphs.len()
    }

    /// The device operations run on, in words.
    pub fn description(&self) -> String {
        let info = self.graph().context().info();
        format!("{} ({})", info.name, info.platform)
    }

    pub fn devices(&self) -> &Devices {
        &self.devices
    }

    /* ---- images ------------------------------------------------------------------- */

    /// A new image holding a copy of `data` (see `GpuImage::upload`: asynchronous from
    /// page-locked words, else blocking).
    pub fn create_image(&self, data: &[u64]) -> Result<GpuImage> {
        let mut image = GpuImage::empty();
        self.upload(&mut image, data)?;
        Ok(image)
    }

    /// An image of no words, for a result operand that has none yet.
    pub fn empty_image(&self) -> GpuImage {
        GpuImage::empty()
    }

    /// Uploads `data` into the image; from page-locked words without blocking, so it is
    /// issued like an operation (`synchronize` waits for it).
    pub fn upload(&self, image: &mut GpuImage, data: &[u64]) -> Result<()> {
        let graph = self.graph();
        let _issuing = graph.issuing();
        let pinned = image.upload(graph, data, &self.pinned)?;
        self.counters.upload(data.len(), pinned);
        Ok(())
    }

    /// Waits for the work writing the image, then copies its first `data.len()` words.
    pub fn download(&self, image: &GpuImage, data: &mut [u64]) -> Result<()> {
        let graph = self.graph();
        timed_wait(graph.profiler().map(|p| &**p), Wait::HostRead, || {
            image.download(data)
        })?;
        self.counters.download(data.len());
        Ok(())
    }

    /// A device-to-device copy (enqueued; no wait).
    pub fn clone_image(&self, image: &GpuImage) -> Result<GpuImage> {
        let graph = self.graph();
        let _issuing = graph.issuing();
        let copy = image.duplicate(graph)?;
        self.counters.image_copy();
        Ok(copy)
    }

    /// The transfers, copies and driver allocations so far, every thread's.
    pub fn traffic(&self) -> Traffic {
        let pools = self.pool_stats();
        self.counters.read(
            pools.misses,
            pools.device_allocations,
            self.pinned.allocations(),
            image::device_copies(),
        )
    }

    /* ---- frames ------------------------------------------------------------------- */

    pub fn start_compute_frame(&self) {
        self.devices.frames().start_compute_frame();
    }

    /// Ends the program's compute frame, waiting for every queue. Without an open frame
    /// (and without a profiler, whose events a frame end resolves) it returns at once:
    /// SEAL's `Decryptor::decrypt` calls it before every download, and the download waits
    /// for its own image's last writer, not for the other threads' work.
    pub fn end_compute_frame(&self) -> Result<()> {
        let frames = self.devices.frames();
        if !frames.is_open() && self.graph().profiler().is_none() {
            return Ok(());
        }
        self.flush_batches()?;
        frames.end_compute_frame().map(drop)
    }

    /// Waits for every operation issued so far (on the queues that were issued on), the
    /// key switches waiting in batches enqueued first.
    pub fn synchronize(&self) -> Result<()> {
        self.flush_batches()?;
        self.devices.finish_issued()
    }

    /// Enqueues every key switch waiting in a batch (`batch.rs`).
    fn flush_batches(&self) -> Result<()> {
        self.batches.iter().flatten().try_for_each(|b| b.flush())
    }

    /// The batch of `graph`'s queue.
    fn batch(&self, graph: &Graph) -> &Arc<SwitchBatch> {
        &self.batches[graph.tile().index()][graph.queue_index()]
    }

    /// How full a batch of key switches gets, `jobs` a launch (a batch setting).
    fn batch_room(&self, jobs: usize) -> Room {
        Room {
            jobs,
            waves: self.kernel_choices.batch_waves,
        }
    }

    /* ---- keys --------------------------------------------------------------------- */

    /// Whether the key vector `key` (with these contents) is on the calling thread's tile.
    pub fn has_key(&self, key: &KeyId) -> bool {
        self.tile_keys().get(key).is_some()
    }

    /// Uploads a key vector to the calling thread's tile: `decomposition_count` public keys
    /// of 2 polynomials over the key level's primes, as SEAL stores them. Replaces an older
    /// upload of the same object and index there.
    pub fn upload_key(
        &self,
        level: &Level,
        key: KeyId,
        decomposition_count: usize,
        words: &[u64],
    ) -> Result<()> {
        let graph = self.graph();
        let context = self.context(graph, level)?;
        let device_key = KswitchKey::upload(&context, graph.queue(), decomposition_count, words)?;
        self.keys[graph.tile().index()].insert(key, device_key);
        Ok(())
    }

    /// Frees the device copies of every key vector of the KSwitchKeys object `object` (SEAL
    /// destroyed it).
    pub fn release_keys(&self, object: u64) {
        self.keys.iter().for_each(|keys| keys.release(object));
    }

    /// The pools' counters and bytes, summed over every tile.
    pub fn pool_stats(&self) -> MemcacheStats {
        let mut sum = MemcacheStats::default();
        for tile in self.devices.tiles() {
            sum += tile.memcache().stats();
        }
        sum
    }

    /// What the key caches hold (key vectors, bytes, the caps, evictions so far), summed
    /// over tiles.
    pub fn key_stats(&self) -> KeyCacheStats {
        let mut sum = KeyCacheStats::default();
        for keys in &self.keys {
            sum += keys.stats();
        }
        sum
    }

    /// The key cache of the calling thread's tile.
    fn tile_keys(&self) -> &KeyCache {
        &self.keys[self.graph().tile().index()]
    }

    fn key(&self, key: &KeyId) -> Result<Arc<KswitchKey>> {
        self.tile_keys().get(key).ok_or_else(|| {
            Error::Logic("key switching key is not on the device (upload_key first)".into())
        })
    }

    /* ---- operations --------------------------------------------------------------- */

    /// The device data of `level`'s parameter set on `graph`'s tile, made on first use.
    fn context(&self, graph: &Graph, level: &Level) -> Result<Arc<CkksContext>> {
        let key = (level.key_parms_id, graph.tile().index());
        let find = |contexts: &[(ContextKey, Arc<CkksContext>)]| {
            contexts
                .iter()
                .find(|(k, _)| *k == key)
                .map(|(_, c)| c.clone())
        };
        if let Some(c) = find(&self.contexts.read()) {
            return Ok(c);
        }
        let mut contexts = self.contexts.write();
        if let Some(c) = find(&contexts) {
            return Ok(c);
        }
        let c = Arc::new(CkksContext::new(
            graph.context(),
            level.log_n,
            level.key_moduli,
            level.using_keyswitching,
            self.strategy,
            self.kernel_choices,
        )?);
        contexts.push((key, c.clone()));
        Ok(c)
    }

    /// Runs `body` with the level's operations; while profiling, records the host time it
    /// took under `name`.
    fn with_ops<T>(
        &self,
        name: &'static str,
        level: &Level,
        body: impl FnOnce(&LevelOps) -> Result<T>,
    ) -> Result<T> {
        let graph = self.graph();
        let _span = graph.operation_span(name);
        let _issuing = graph.issuing();
        let _operation = graph
            .profiler()
            .map(|_| crate::profiler::operation_scope(name));
        let started = graph.profiler().map(|_| std::time::Instant::now());
        let result = self.with_ops_untimed(graph, level, body);
        if let (Some(profiler), Some(started)) = (graph.profiler(), started) {
            profiler.record_host(name, started.elapsed());
        }
        result
    }

    fn with_ops_untimed<T>(
        &self,
        graph: &Graph,
        level: &Level,
        body: impl FnOnce(&LevelOps) -> Result<T>,
    ) -> Result<T> {
        let context = self.context(graph, level)?;
        let ops = LevelOps::new(&context, graph, level.primes)?;
        body(&ops)
    }

    pub fn negate(&self, level: &Level, ct: &mut GpuImage, size: usize) -> Result<()> {
        self.with_ops("negate", level, |ops| {
            ct.expect(size, ops, "encrypted")?;
            let zeros = ct.zeros(ops.poly_words());
            rewrite(ops, ct, zeros, |t| ops.negate(t.dst, t.src(), size))
        })
    }

    /// a += b; sizes may differ (the missing polynomials count as zero, as in SEAL). With b of
    /// a's size on a's tile, b becomes a term of the sum deferred in a (`deferred.rs`), run
    /// when a's words are next used or at its `SUM_TERMS_MAX`-th term.
    pub fn add(
        &self,
        level: &Level,
        a: &mut GpuImage,
        a_size: usize,
        b: &GpuImage,
        b_size: usize,
    ) -> Result<()> {
        self.add_or_sub("add", level, a, a_size, b, b_size, false)
    }

    /// a -= b; sizes may differ; deferred as [`Backend::add`].
    pub fn sub(
        &self,
        level: &Level,
        a: &mut GpuImage,
        a_size: usize,
        b: &GpuImage,
        b_size: usize,
    ) -> Result<()> {
        self.add_or_sub("sub", level, a, a_size, b, b_size, true)
    }

    #[allow(clippy::too_many_arguments)]
    fn add_or_sub(
        &self,
        name: &'static str,
        level: &Level,
        a: &mut GpuImage,
        a_size: usize,
        b: &GpuImage,
        b_size: usize,
        subtract: bool,
    ) -> Result<()> {
        self.with_ops(name, level, |ops| {
            a.expect(a_size, ops, "encrypted1")?;
            b.expect(b_size, ops, "encrypted2")?;
            let zeros = if subtract && a.same_words(b) {
                Zeros::All
            } else {
                a.zeros(ops.poly_words()).sum(b.zeros(ops.poly_words()))
            };
            // b of a's size: a term of the sum deferred in a (see `deferred.rs`).
            if self.kernel_choices.defer_multiply && b_size == a_size {
                let tile = ops.graph().tile().index();
                let room = a.sum_room(ops.graph());
                if let Some(terms) = b.sum_terms(a_size, tile, subtract, room)? {
                    let context = self.context(ops.graph(), level)?;
                    let rotations_read_sums = || Ok(a_size == 2 && self.rotates_sums(ops, level)?);
                    if a.add_to_sum(ops, &context, a_size, terms, rotations_read_sums)? {
                        a.set_zeros(zeros, ops.poly_words());
                        return Ok(());
                    }
                }
            }
            let common = a_size.min(b_size);
            let src = b.read_on(ops.graph())?;
            if b_size > a_size {
                // The result grows: a new buffer of b (or -b), then a added to its first
                // polynomials (a - b = a + (-b) mod q, the same residue).
                let grown = ops.alloc_result(b_size, ops.primes())?;
                if subtract {
                    ops.negate(grown.buffer(), &src, b_size)?;
                } else {
                    ops.copy_tail(grown.buffer(), &src, 0, b_size)?;
                }
                ops.add(
                    grown.buffer(),
                    &*a.read_on(ops.graph())?,
                    grown.buffer(),
                    a_size,
                )?;
                a.replace(ops.graph(), grown, b_size * ops.poly_words());
                a.set_zeros(zeros, ops.poly_words());
                return Ok(());
            }
            rewrite(ops, a, zeros, |target| {
                if target.out_of_place() && a_size > common {
                    // b lacks polynomials that a has: they pass unchanged.
                    ops.copy_tail(target.dst, target.src(), common, a_size - common)?;
                }
                if subtract {
                    ops.sub(target.dst, target.src(), &src, common)
                } else {
                    ops.add(target.dst, target.src(), &src, common)
                }
            })
        })
    }

    /// ct += ct (SEAL's add_inplace with both operands the same object).
    pub fn double_inplace(&self, level: &Level, ct: &mut GpuImage, size: usize) -> Result<()> {
        self.with_ops("add", level, |ops| {
            ct.expect(size, ops, "encrypted1")?;
            let zeros = ct.zeros(ops.poly_words());
            rewrite(ops, ct, zeros, |t| ops.add(t.dst, t.src(), t.src(), size))
        })
    }

    /// ct -= ct: all zero.
    pub fn zero(&self, level: &Level, ct: &mut GpuImage, size: usize) -> Result<()> {
        self.with_ops("sub", level, |ops| {
            ct.expect(size, ops, "encrypted1")?;
            ops.zero(ct.write_on(ops.graph())?, size)?;
            ct.set_zeros(Zeros::All, ops.poly_words());
            Ok(())
        })
    }

    /// a *= b (tensor product; a grows to a_size + b_size - 1 polynomials).
    pub fn multiply(
        &self,
        level: &Level,
        a: &mut GpuImage,
        a_size: usize,
        b: &GpuImage,
        b_size: usize,
    ) -> Result<()> {
        self.tensor("multiply", level, a, a_size, Some((b, b_size)))
    }

    /// ct *= ct.
    pub fn square(&self, level: &Level, ct: &mut GpuImage, size: usize) -> Result<()> {
        self.tensor("square", level, ct, size, None)
    }

    /// a = a (x) b, or a (x) a without `b`, into a new buffer of a_size + b_size - 1
    /// polynomials that becomes a's image. Errors: `InvalidArgument` for a product of more
    /// than [`SEAL_CIPHERTEXT_SIZE_MAX`] polynomials, as SEAL's resize of the destination
    /// throws (the device would compute it; SEAL must not get a ciphertext it refuses).
    fn tensor(
        &self,
        name: &'static str,
        level: &Level,
        a: &mut GpuImage,
        a_size: usize,
        b: Option<(&GpuImage, usize)>,
    ) -> Result<()> {
        let size = a_size + b.map_or(a_size, |(_, b_size)| b_size) - 1;
        if size > SEAL_CIPHERTEXT_SIZE_MAX {
            return Err(Error::InvalidArgument(format!(
                "{name}: the product would have {size} polynomials, more than \
                 SEAL_CIPHERTEXT_SIZE_MAX ({SEAL_CIPHERTEXT_SIZE_MAX})"
            )));
        }
        self.with_ops(name, level, |ops| {
            a.expect(a_size, ops, "encrypted1")?;
            let a_zeros = a.zeros(ops.poly_words());
            let a_buf = a.read_on(ops.graph())?;
            let (b_buf, b_size, zeros) = match b {
                Some((b, b_size)) => {
                    b.expect(b_size, ops, "encrypted2")?;
                    let zeros = a_zeros.product(b.zeros(ops.poly_words()));
                    (Some(b.read_on(ops.graph())?), b_size, zeros)
                }
                None => (None, a_size, a_zeros),
            };
            let product = ops.alloc_result(size, ops.primes())?;
            if let Some(tensor) = self.deferred_tensor(ops, level, a, a_size, b)? {
                drop((a_buf, b_buf));
                a.defer(ops.graph(), product, size * ops.poly_words(), tensor);
                a.set_zeros(zeros, ops.poly_words());
                return Ok(());
            }
            let b_buf = b_buf.as_deref().unwrap_or(&a_buf);
            self.tensor_into(ops, level, product.buffer(), &a_buf, a_size, b_buf, b_size)?;
            drop(a_buf);
            a.replace(ops.graph(), product, size * ops.poly_words());
            a.set_zeros(zeros, ops.poly_words());
            Ok(())
        })
    }

    /// The product of `a` and `b` (or a square) deferred to its relinearization (see
    /// `deferred.rs`), where the setting allows it, both are ciphertexts of two polynomials
    /// whose words lie on `ops`' tile, and they are CKKS's where the level's key switches
    /// run on the fused passes, or BGV's in NTT form (SEAL 4.1 on) where the level chains;
    /// None: run it now.
    fn deferred_tensor(
        &self,
        ops: &LevelOps,
        level: &Level,
        a: &GpuImage,
        a_size: usize,
        b: Option<(&GpuImage, usize)>,
    ) -> Result<Option<Deferred>> {
        if a_size != 2 || b.is_some_and(|(_, b_size)| b_size != 2) {
            return Ok(None);
        }
        // What the relinearization's mod-down subtracts (BGV's correction factor is
        // metadata: SEAL sets the product's and keeps it through the relinearization).
        let correction = match level.scheme {
            Scheme::Ckks if ops.batches_key_switches() => DropCorrection::Round,
            Scheme::Bgv { ntt_form: true } if ops.chains() => key_switch_correction(
                ops.context(),
                IntegerScheme::Bgv {
                    plain_modulus: Modulus::new(level.plain_modulus)?,
                    ntt_form: true,
                },
            )?,
            _ => return Ok(None),
        };
        let b = b.map(|(b, _)| b.shared_words()).transpose()?;
        self.deferred(ops, level, a, Product::Tensor { b, correction })
    }

    /// `a` times `product` deferred (see `deferred.rs`), where the setting allows it and
    /// every factor's words lie on `ops`' tile; None: run it now.
    fn deferred(
        &self,
        ops: &LevelOps,
        level: &Level,
        a: &GpuImage,
        product: Product,
    ) -> Result<Option<Deferred>> {
        if !self.kernel_choices.defer_multiply {
            return Ok(None);
        }
        let tile = ops.graph().tile().index();
        let a = a.shared_words()?;
        if a.tile() != tile || product.other_factor().is_some_and(|w| w.tile() != tile) {
            return Ok(None);
        }
        Ok(Some(Deferred::new(
            self.context(ops.graph(), level)?,
            ops.graph(),
            ops.primes(),
            a,
            product,
        )))
    }

    /// SEAL's relinearize_internal: `keys[i]` switches polynomial `size - 1 - i`. A deferred
    /// product of two polynomials (on this tile) runs with it in one launch.
    pub fn relinearize(
        &self,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
        destination_size: usize,
        keys: &[KeyId],
    ) -> Result<()> {
        self.with_ops("relinearize", level, |ops| {
            ct.expect(size, ops, "encrypted")?;
            if destination_size < 2
                || destination_size >= size
                || keys.len() != size - destination_size
            {
                return Err(Error::invalid(format!(
                    "relinearize from {size} to {destination_size} polynomials with {} keys",
                    keys.len()
                )));
            }
            let device_keys = keys
                .iter()
                .map(|k| self.key(k))
                .collect::<Result<Vec<_>>>()?;
            let keys: Vec<&KswitchKey> = device_keys.iter().map(|k| &**k).collect();
            // Switching zero polynomials adds zero: a transparent input stays transparent.
            let zeros = ct.zeros(ops.poly_words());
            let tile = ops.graph().tile().index();
            let usable = |d: &Deferred| d.is_tensor() && d.tile() == tile;
            let room = self.batch_room(self.kernel_choices.batch_products);
            let consumed = match &device_keys[..] {
                [key] if size == 3 && room.jobs > 1 && ops.batches_key_switches() => ct
                    .defer_to_batch(ops.graph(), usable, |d, dst| {
                        d.join_batch(self.batch(ops.graph()), room, key.clone(), dst)
                    })?,
                _ => false,
            };
            let consumed = consumed
                || match keys[..] {
                    [key] if size == 3 => ct.consume_deferred(ops.graph(), usable, |d, dst| {
                        d.run_relinearized(ops, dst, key)
                    })?,
                    _ => false,
                };
            match keys[..] {
                _ if consumed => {}
                // Words a copy shares (SEAL's out-of-place relinearize copies, then
                // relinearizes the copy) are read, not copied first: the result goes to a
                // new buffer (`rewrite_on`).
                [key] if size == 3 => {
                    let target = ct.rewrite_on(ops.graph())?;
                    if target.out_of_place() {
                        self.relinearize_into(ops, level, target.dst, target.src(), key)?;
                    } else {
                        self.relinearize_in(ops, level, target.dst, size, &keys)?;
                    }
                }
                _ => self.relinearize_in(ops, level, ct.write_on(ops.graph())?, size, &keys)?,
            }
            ct.truncate(destination_size * ops.poly_words());
            ct.set_zeros(zeros, ops.poly_words());
            Ok(())
        })
    }

    /// dst = src rescaled to the next level (SEAL's mod_switch_scale_to_next). Where the
    /// level has the chained rescale of a sum, a plaintext product or a sum of them deferred
    /// in src (`deferred.rs`: multiply_plain into a temporary, then its adds) is rescaled
    /// from its factors in the same launch (src stays deferred).
    pub fn rescale_to_next(
        &self,
        level: &Level,
        src: &GpuImage,
        size: usize,
        dst: &mut GpuImage,
    ) -> Result<()> {
        self.to_next_level("rescale_to_next", level, src, size, dst, |ops, d, s, n| {
            let tile = ops.graph().tile().index();
            let fused = ops.chains_rescale_sum()
                && s.read_deferred(
                    |w| w.reads_as_products(tile, n),
                    |w| ops.rescale_sum(d, Sources::products(&w.product_sources(ops.graph())?)?, n),
                )?;
            if fused {
                return Ok(());
            }
            ops.rescale(d, &*s.read_on(ops.graph())?, n)
        })
    }

    pub fn rescale_to_next_inplace(
        &self,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
    ) -> Result<()> {
        in_place(ct, |src, dst| self.rescale_to_next(level, src, size, dst))
    }

    /// dst = src at the next level: CKKS drops the last prime (SEAL's
    /// mod_switch_drop_to_next), BFV and BGV divide by it (mod_switch_scale_to_next).
    pub fn mod_switch_to_next(
        &self,
        level: &Level,
        src: &GpuImage,
        size: usize,
        dst: &mut GpuImage,
    ) -> Result<()> {
        self.to_next_level(
            "mod_switch_to_next",
            level,
            src,
            size,
            dst,
            |ops, d, s, n| self.mod_switch_into(ops, level, d, &*s.read_on(ops.graph())?, n),
        )
    }

    pub fn mod_switch_to_next_inplace(
        &self,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
    ) -> Result<()> {
        in_place(ct, |src, dst| {
            self.mod_switch_to_next(level, src, size, dst)
        })
    }

    /// `step(ops, target, plain)` after checking that `ct` holds `size` polynomials and
    /// `plain` one at the level; `target` is where ct's new contents go
    /// ([`GpuImage::rewrite_on`]); the result's zeros are `zeros(ct's, plain's)`.
    #[allow(clippy::too_many_arguments)]
    fn with_plain(
        &self,
        name: &'static str,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
        plain: &GpuImage,
        zeros: fn(Zeros, Zeros) -> Zeros,
        step: impl FnOnce(&LevelOps, &Rewrite, &Region) -> Result<()>,
    ) -> Result<()> {
        self.with_ops(name, level, |ops| {
            ct.expect(size, ops, "encrypted")?;
            plain.expect(1, ops, "plain")?;
            let zeros = zeros(ct.zeros(ops.poly_words()), plain.zeros(ops.poly_words()));
            let plain = plain.read_on(ops.graph())?;
            rewrite(ops, ct, zeros, |t| step(ops, t, &plain))
        })
    }

    /// `ct.data(0) += plain` (`-=` with `subtract`) into `target`; ct's other polynomials
    /// pass unchanged.
    fn add_plain_into(
        ops: &LevelOps,
        target: &Rewrite,
        size: usize,
        plain: &Region,
        subtract: bool,
    ) -> Result<()> {
        copy_other_polys(ops, target, size)?;
        if subtract {
            ops.sub(target.dst, target.src(), plain, 1)
        } else {
            ops.add(target.dst, target.src(), plain, 1)
        }
    }

    /// dst = `step(ops, dst, src, size)`: `size` polynomials of src at level K written
    /// to a new buffer at level K - 1, which becomes dst's image (`step` reads src's
    /// words, or its deferred work's inputs).
    fn to_next_level(
        &self,
        name: &'static str,
        level: &Level,
        src: &GpuImage,
        size: usize,
        dst: &mut GpuImage,
        step: impl FnOnce(&LevelOps, &Region, &GpuImage, usize) -> Result<()>,
    ) -> Result<()> {
        self.with_ops(name, level, |ops| {
            src.expect(size, ops, "encrypted")?;
            let primes = ops.primes() - 1;
            if primes == 0 {
                return Err(Error::invalid("end of modulus switching chain reached"));
            }
            let out = ops.alloc_result(size, primes)?;
            step(ops, out.buffer(), src, size)?;
            // Rescaling or dropping a prime maps a zero polynomial to zero.
            let zeros = src.zeros(ops.poly_words());
            let poly_words = primes << level.log_n;
            dst.replace(ops.graph(), out, size * poly_words);
            dst.set_zeros(zeros, poly_words);
            Ok(())
        })
    }

    /// A plaintext in NTT form without its last prime: its first (K - 1) N words.
    pub fn mod_switch_plain_to_next(&self, level: &Level, plain: &mut GpuImage) -> Result<()> {
        self.with_ops("mod_switch_to_next", level, |ops| {
            plain.expect(1, ops, "plain")?;
            if ops.primes() < 2 {
                return Err(Error::invalid("end of modulus switching chain reached"));
            }
            plain.truncate((ops.primes() - 1) * (1 << level.log_n));
            Ok(())
        })
    }

    pub fn multiply_plain(
        &self,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
        plain: &GpuImage,
    ) -> Result<()> {
        if self.kernel_choices.defer_multiply {
            // The product deferred (see `deferred.rs`): checked as `with_plain` checks it.
            let deferred = self.with_ops("multiply_plain", level, |ops| {
                ct.expect(size, ops, "encrypted")?;
                plain.expect(1, ops, "plain")?;
                let product = Product::Plain {
                    plain: plain.shared_words()?,
                    polys: size,
                };
                let Some(deferred) = self.deferred(ops, level, ct, product)? else {
                    return Ok(false);
                };
                let pw = ops.poly_words();
                let zeros = Zeros::times_plain(ct.zeros(pw), plain.zeros(pw));
                ct.defer(
                    ops.graph(),
                    ops.alloc_result(size, ops.primes())?,
                    size * pw,
                    deferred,
                );
                ct.set_zeros(zeros, pw);
                Ok(true)
            })?;
            if deferred {
                return Ok(());
            }
        }
        self.with_plain(
            "multiply_plain",
            level,
            ct,
            size,
            plain,
            Zeros::times_plain,
            |ops, t, p| ops.multiply_plain(t.dst, t.src(), size, p),
        )
    }

    /// ct.data(0) += plain.
    pub fn add_plain(
        &self,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
        plain: &GpuImage,
    ) -> Result<()> {
        self.with_plain(
            "add_plain",
            level,
            ct,
            size,
            plain,
            Zeros::plus_plain,
            |ops, t, p| Self::add_plain_into(ops, t, size, p, false),
        )
    }

    /// ct.data(0) -= plain.
    pub fn sub_plain(
        &self,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
        plain: &GpuImage,
    ) -> Result<()> {
        self.with_plain(
            "sub_plain",
            level,
            ct,
            size,
            plain,
            Zeros::plus_plain,
            |ops, t, p| Self::add_plain_into(ops, t, size, p, true),
        )
    }

    pub fn apply_galois(
        &self,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
        galois_elt: u32,
        key: &KeyId,
    ) -> Result<()> {
        self.with_ops("apply_galois", level, |ops| {
            ct.expect(size, ops, "encrypted")?;
            if size != 2 {
                return Err(Error::invalid("encrypted size must be 2"));
            }
            check_galois_elt(galois_elt, 1 << level.log_n)?;
            let key = self.key(key)?;
            // A permuted zero polynomial is zero, and switching it adds zero.
            let zeros = ct.zeros(ops.poly_words());
            // A CKKS plaintext product (on this tile) is rotated in the permutation's pass;
            // a sum from zero (an out-of-place add, or the copy of an accumulator that
            // SEAL's out-of-place rotate_vector makes) read on its loads, where the rotation
            // chains. Where the level's key switches run on fused passes, chained or not, a
            // CKKS rotation of a plaintext product or of computed words waits in its
            // queue's batch for others to share its launches (`batch.rs`).
            let tile = ops.graph().tile().index();
            let room = self.batch_room(self.kernel_choices.batch_rotations);
            let batched =
                level.scheme == Scheme::Ckks && room.jobs > 1 && ops.batches_key_switches();
            let is_plain_product = |d: &Deferred| d.plain_polys() == Some(2) && d.tile() == tile;
            let consumed = (batched
                && ct.defer_to_batch(ops.graph(), is_plain_product, |d, dst| {
                    d.join_rotation_batch(
                        self.batch(ops.graph()),
                        room,
                        galois_elt,
                        key.clone(),
                        dst,
                    )
                })?)
                || (level.scheme == Scheme::Ckks
                    && ct.consume_deferred(ops.graph(), is_plain_product, |d, dst| {
                        d.run_rotated(ops, dst, galois_elt, &key)
                    })?)
                || (self.rotates_sums(ops, level)?
                    && ct.consume_deferred(
                        ops.graph(),
                        |d| d.reads_as_sources(tile, SOURCE_TERMS_MAX),
                        |d, dst| {
                            let src = Sources::sum(&d.sources(ops.graph())?)?;
                            self.apply_galois_into(ops, level, dst, src, galois_elt, &key)
                        },
                    )?)
                || (batched
                    && ct.rewrite_in_batch(ops.graph(), |src, dst| {
                        let job = Job::Rotation {
                            dst,
                            src,
                            plain: None,
                            galois_elt,
                            key: key.clone(),
                        };
                        let context = self.context(ops.graph(), level)?;
                        self.batch(ops.graph()).join_deferred(
                            context,
                            ops.primes(),
                            Kind::Rotations,
                            job,
                            room,
                        )
                    })?);
            if consumed {
                ct.set_zeros(zeros, ops.poly_words());
                return Ok(());
            }
            rewrite(ops, ct, zeros, |t| {
                self.apply_galois_into(ops, level, t.dst, Sources::one(t.src()), galois_elt, &key)
            })
        })
    }

    pub fn transform_to_ntt(&self, level: &Level, ct: &mut GpuImage, size: usize) -> Result<()> {
        self.forward_transform("transform_to_ntt", "encrypted", level, ct, size)
    }

    /// CKKSEncoder::encode's last step (seal-patch 0011): the forward transform of an
    /// encoding's `size` (one) polynomials of the level's residues, profiled under the
    /// encoder's name.
    pub fn transform_encoding(
        &self,
        level: &Level,
        plain: &mut GpuImage,
        size: usize,
    ) -> Result<()> {
        self.forward_transform("encode_ntt", "plain", level, plain, size)
    }

    /// The forward negacyclic NTT of `size` polynomials of `image` (the operand `what` of
    /// the operation `name`).
    fn forward_transform(
        &self,
        name: &'static str,
        what: &str,
        level: &Level,
        image: &mut GpuImage,
        size: usize,
    ) -> Result<()> {
        self.with_ops(name, level, |ops| {
            image.expect(size, ops, what)?;
            transform(ops, image, size, NttDirection::Forward)
        })
    }

    pub fn transform_from_ntt(&self, level: &Level, ct: &mut GpuImage, size: usize) -> Result<()> {
        self.with_ops("transform_from_ntt", level, |ops| {
            ct.expect(size, ops, "encrypted_ntt")?;
            transform(ops, ct, size, NttDirection::Inverse)
        })
    }
}

thread_local! {
    /// The (tile, queue) the calling thread was bound to by [`Backend::bind_thread`].
    static BOUND: Cell<Option<(usize, usize)>> = const { Cell::new(None) };
}

/// A number of the calling thread's own, given out in the order threads first ask.
fn thread_ordinal() -> usize {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    thread_local! {
        static ORDINAL: usize = NEXT.fetch_add(1, Ordering::Relaxed);
    }
    ORDINAL.with(|ordinal| *ordinal)
}
