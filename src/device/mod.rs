//! Devices, tiles and queues (the multi-tile queues of the XeHE paper, III-H).
//!
//! A *tile* is a sub-device where the driver partitions the device into its hardware
//! tiles (affinity domain "next partitionable", e.g. Intel's multi-tile GPUs), otherwise
//! a whole device; every device of the chosen kind on the chosen platform (or those
//! `SEAL_OPENCL_DEVICES` names) becomes tiles, so a machine with several GPUs gets at least
//! one tile per GPU. All tiles share one OpenCL context (so one program build serves them
//! all, a buffer of one tile can be copied on another's queue, and an event of one tile's
//! queue can be waited on by another's); each tile has its own [`Memcache`] and one or more
//! in-order queues.
//!
//! A [`Graph`] (a chain of operations) is bound to one queue of one tile; its commands run
//! in order, and independent graphs on different queues run concurrently. The SEAL backend
//! (`crate::seal_backend`) gives each issuing thread one graph (tiles round robin, or the
//! tile the thread was bound to); a buffer used on several queues, of one tile or of
//! several, is ordered between them by [`BufferUses`], and an image used on another tile
//! moves there on the device; read-only data (parameter tables, keys) is uploaded once per
//! tile, with blocking writes, by the backend.
//!
//! Settings come from [`DeviceOptions`] (`crate::config::Config::device_options` makes them).

mod uses;

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use parking_lot::{Mutex, MutexGuard};

use crate::cl::{
    self, Context, ContextDevice, DeviceSelector, Event, KernelSig, PartitionScheme, Queue, Region,
    SpatialDims,
};
use crate::error::{Error, Result};
use crate::frame::FrameControl;
use crate::memcache::{Memcache, MemcacheConfig, PoolBuffer, DEFAULT_SLAB_BYTES};
use crate::profiler::{timed_wait, Profiler, Wait};
pub use uses::BufferUses;

/// How each device of the platform becomes tiles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Partition {
    /// Hardware tiles where the driver exposes them (affinity domain "next
    /// partitionable"), otherwise the whole device. Equal splits are not tried
    /// automatically: they do not follow hardware tiles, and on a CPU device they would
    /// turn every core into a tile.
    Auto,
    /// One tile per device, never partitioned.
    WholeDevices,
    /// Each device split equally into this many sub-devices (fails where the driver
    /// cannot partition equally or has fewer compute units).
    Split(u32),
}

impl std::str::FromStr for Partition {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "auto" => Ok(Partition::Auto),
            "whole" => Ok(Partition::WholeDevices),
            n => match n.parse::<u32>() {
                Ok(n) if n >= 1 => Ok(Partition::Split(n)),
                _ => Err(Error::invalid(format!(
                    "tiles {s:?} is not `auto`, `whole` or a number of tiles >= 1"
                ))),
            },
        }
    }
}

/// Which of the platform's devices (those the selector's kind takes, in the platform's
/// order) become tiles.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceSet {
    All,
    /// Positions in that list, each at most once.
    Only(Vec<usize>),
}

impl std::str::FromStr for DeviceSet {
    type Err = Error;

    fn from_str(s: &str) -> Result<Self> {
        let bad = || {
            Error::invalid(format!(
                "devices {s:?} is not `all` or a list of device indices such as `0,1`"
            ))
        };
        match s.trim().to_ascii_lowercase().as_str() {
            "" | "all" => Ok(DeviceSet::All),
            list => {
                let mut indices = Vec::new();
                for item in list.split(',') {
                    let index = item.trim().parse::<usize>().map_err(|_| bad())?;
                    if indices.contains(&index) {
                        return Err(bad());
                    }
                    indices.push(index);
                }
                Ok(DeviceSet::Only(indices))
            }
        }
    }
}

impl DeviceSet {
    /// The chosen devices of `devices`, in the set's order; an index past the end is an
    /// error naming the devices there are.
    fn choose(&self, devices: Vec<cl::DeviceEntry>) -> Result<Vec<cl::DeviceEntry>> {
        let DeviceSet::Only(indices) = self else {
            return Ok(devices);
        };
        indices
            .iter()
            .map(|&i| {
                devices.get(i).cloned().ok_or_else(|| {
                    let names: Vec<String> = devices.iter().map(|d| d.to_string()).collect();
                    Error::invalid(format!(
                        "device {i} does not exist; the selected kind has {} device(s): {}",
                        devices.len(),
                        names.join("; ")
                    ))
                })
            })
            .collect()
    }
}

/// Everything that decides how [`Devices`] are set up.
#[derive(Clone)]
pub struct DeviceOptions {
    pub selector: DeviceSelector,
    /// Which of the selector's devices are used.
    pub devices: DeviceSet,
    pub partition: Partition,
    pub queues_per_tile: usize,
    /// Wait for every kernel right after launching it (debug).
    pub sync_each_launch: bool,
    /// Each queue's kernel launches enqueued by a thread of its own (`cl::IssueThread`).
    pub issue_thread: bool,
    /// Record every launch here; queues are created with profiling only when set.
    pub profiler: Option<Arc<Profiler>>,
    pub memcache: MemcacheConfig,
    /// `false`: every tile's memcache is deactivated from the start.
    pub memcache_active: bool,
    /// Compiled programs are written into this directory (`Experiment::dump_programs`).
    pub dump_programs: Option<std::path::PathBuf>,
}

/// Queues per tile by default: two, so that two threads issuing SEAL operations at once
/// neither wait for each other's issue lock nor serialise their kernels, while more
/// threads share them (every queue in use costs the driver issue time; REPORT.md has the
/// measurement).
pub const DEFAULT_QUEUES: usize = 2;

/// The word the `poison` setting's `1` fills buffers with.
pub const DEFAULT_POISON: u64 = 0xBAD0_BAD0_BAD0_BAD0;

impl Default for DeviceOptions {
    /// The first GPU (else the first CPU device) and every device of its kind, whole or
    /// in hardware tiles, [`DEFAULT_QUEUES`] queues each with its issue thread, pooled
    /// buffers in slabs; no profiler, no poison, no cap.
    fn default() -> Self {
        DeviceOptions {
            selector: DeviceSelector::Default,
            devices: DeviceSet::All,
            partition: Partition::Auto,
            queues_per_tile: DEFAULT_QUEUES,
            sync_each_launch: false,
            issue_thread: true,
            profiler: None,
            memcache: MemcacheConfig {
                slab_bytes: DEFAULT_SLAB_BYTES,
                ..MemcacheConfig::default()
            },
            memcache_active: true,
            dump_programs: None,
        }
    }
}

/// Every tile of the chosen platform, and the frames over all of them.
pub struct Devices {
    tiles: Vec<Arc<Tile>>,
    frames: FrameControl,
    next_graph: AtomicUsize,
}

impl Devices {
    /// Resolves the selector; takes every device of its platform of the same type (GPU
    /// or CPU), or exactly the named device for `P:D`; partitions them; builds the tiles.
    pub fn new(options: DeviceOptions) -> Result<Devices> {
        if options.queues_per_tile == 0 {
            return Err(Error::invalid("a tile needs at least one queue"));
        }
        let _span = tracing::info_span!("devices_new").entered();
        let chosen = options.selector.resolve()?;
        let chosen_name = chosen.to_string();
        tracing::info!(device = %chosen_name, selector = ?options.selector, "OpenCL device chosen");
        let devices: Vec<cl::DeviceEntry> = options.devices.choose(match options.selector {
            DeviceSelector::Index(..) => vec![chosen],
            _ => cl::list_devices()?
                .into_iter()
                .filter(|d| {
                    d.platform_index == chosen.platform_index
                        && d.is_gpu == chosen.is_gpu
                        && d.is_cpu == chosen.is_cpu
                })
                .collect(),
        })?;
        // One context over every tile, so buffers and events cross tiles (the SEAL backend
        // moves operands between them on the device).
        let mut placement = Vec::new();
        let mut context_devices = Vec::new();
        for (device_index, entry) in devices.iter().enumerate() {
            for device in tile_devices(entry, options.partition)? {
                placement.push((device_index, matches!(device, ContextDevice::Sub(_))));
                context_devices.push(device);
            }
        }
        let contexts = match devices.first() {
            Some(entry) if !context_devices.is_empty() => {
                Context::shared(entry.platform, context_devices)?
            }
            _ => Vec::new(),
        };
        if let (Some(dir), Some(context)) = (&options.dump_programs, contexts.first()) {
            context.dump_programs_to(dir.clone());
        }
        let tiles = placement
            .into_iter()
            .zip(contexts)
            .enumerate()
            .map(|(index, ((device_index, sub_device), context))| {
                Tile::new(index, device_index, sub_device, context, &options).map(Arc::new)
            })
            .collect::<Result<Vec<_>>>()?;
        if tiles.is_empty() {
            return Err(Error::NoDevice {
                wanted: format!("{:?} with {:?}", options.selector, options.partition),
                available: format!("  {chosen_name} gave no tiles\n"),
            });
        }
        let frames = FrameControl::new(
            tiles.iter().map(|t| t.memcache.clone()).collect(),
            tiles
                .iter()
                .flat_map(|t| t.queues.iter().cloned())
                .collect(),
            options.profiler.clone(),
        );
        tracing::info!(
            tiles = tiles.len(),
            devices = devices.len(),
            queues_per_tile = options.queues_per_tile,
            "devices ready"
        );
        Ok(Devices {
            tiles,
            frames,
            next_graph: AtomicUsize::new(0),
        })
    }

    pub fn tiles(&self) -> &[Arc<Tile>] {
        &self.tiles
    }

    /// The next graph, round-robin: first one per tile, then the further queues of each
    /// tile, so independent graphs spread over the hardware first.
    pub fn graph(&self) -> Graph {
        let k = self.next_graph.fetch_add(1, Ordering::Relaxed);
        let tile = &self.tiles[k % self.tiles.len()];
        Graph {
            tile: tile.clone(),
            queue: (k / self.tiles.len()) % tile.queues.len(),
        }
    }

    /// The frames over every tile's pool and queues.
    pub fn frames(&self) -> &FrameControl {
        &self.frames
    }

    /// Waits for every queue of every tile.
    pub fn finish(&self) -> Result<()> {
        self.tiles.iter().try_for_each(|t| t.finish())
    }

    /// Waits for every queue an operation was issued on since its last wait here
    /// ([`Graph::issuing`]): everything issued before the call has finished when it
    /// returns, and idle queues cost nothing (a synchronize with 8 queues and one busy
    /// thread waits once, not 8 times).
    pub fn finish_issued(&self) -> Result<()> {
        self.tiles.iter().try_for_each(|t| t.finish_issued())
    }
}

/// The devices (the whole device or its sub-devices) that `entry` becomes under `partition`.
fn tile_devices(entry: &cl::DeviceEntry, partition: Partition) -> Result<Vec<ContextDevice>> {
    let whole = || vec![ContextDevice::Whole(entry.device)];
    let split = |scheme| -> Result<Vec<ContextDevice>> {
        Ok(cl::create_sub_devices(entry.device, scheme)?
            .into_iter()
            .map(ContextDevice::Sub)
            .collect())
    };
    match partition {
        Partition::WholeDevices => Ok(whole()),
        Partition::Auto => {
            let support = cl::partition_support(entry.device)?;
            if !support.by_affinity_next_partitionable {
                return Ok(whole());
            }
            match split(PartitionScheme::AffinityNextPartitionable) {
                Ok(tiles) if !tiles.is_empty() => Ok(tiles),
                Ok(_) => Ok(whole()),
                Err(e) => {
                    // Nothing for the user to do: the whole device works, as with `whole`.
                    tracing::info!(device = %entry, error = %e, "tile partition failed; using the whole device");
                    Ok(whole())
                }
            }
        }
        Partition::Split(n) => {
            let support = cl::partition_support(entry.device)?;
            if !support.equally || support.compute_units < n {
                return Err(Error::invalid(format!(
                    "{entry} cannot be split equally into {n} tiles ({} compute units, equal partition {})",
                    support.compute_units,
                    if support.equally { "supported" } else { "not supported" }
                )));
            }
            let mut tiles = split(PartitionScheme::Equally {
                compute_units: support.compute_units / n,
            })?;
            // compute_units / n units each can leave room for more than n sub-devices.
            tiles.truncate(n as usize);
            Ok(tiles)
        }
    }
}

/// One tile: a (sub-)device with its context, queues and buffer pool.
pub struct Tile {
    index: usize,
    device_index: usize,
    sub_device: bool,
    context: Arc<Context>,
    queues: Vec<Queue>,
    /// One per queue: held while one operation enqueues its commands (`Graph::issuing`).
    issue_locks: Vec<Mutex<()>>,
    /// One per queue: an operation was issued on it since `finish_issued` last waited.
    issued: Vec<AtomicBool>,
    /// One per queue: zeroed words for the launches whose work groups hand over through
    /// counters (`Graph::chain_counters`).
    chain_counters: Vec<Region>,
    memcache: Memcache,
    sync_each_launch: bool,
    /// One per queue with the `issue_thread` setting (each holds its queue), else none.
    _issue_threads: Vec<cl::IssueThread>,
    profiler: Option<Arc<Profiler>>,
}

impl Tile {
    fn new(
        index: usize,
        device_index: usize,
        sub_device: bool,
        context: Arc<Context>,
        options: &DeviceOptions,
    ) -> Result<Tile> {
        let profiling = options.profiler.is_some();
        let queues = (0..options.queues_per_tile)
            .map(|_| context.queue(profiling))
            .collect::<Result<Vec<_>>>()?;
        if let Some(profiler) = &options.profiler {
            let kind = if sub_device { " (sub-device)" } else { "" };
            profiler.name_tile(index, &format!("{}{kind}", context.info().name));
        }
        let memcache = Memcache::new(context.clone(), options.memcache);
        if !options.memcache_active {
            memcache.deactivate();
        }
        let chain_counters = queues
            .iter()
            .map(|queue| context.upload(queue, &[0; CHAIN_COUNTER_WORDS]))
            .collect::<Result<Vec<_>>>()?;
        let issue_threads = match options.issue_thread {
            true => queues
                .iter()
                .map(cl::IssueThread::start)
                .collect::<Result<Vec<_>>>()?,
            false => Vec::new(),
        };
        Ok(Tile {
            index,
            device_index,
            sub_device,
            memcache,
            chain_counters,
            context,
            issue_locks: queues.iter().map(|_| Mutex::new(())).collect(),
            issued: queues.iter().map(|_| AtomicBool::new(false)).collect(),
            queues,
            sync_each_launch: options.sync_each_launch,
            _issue_threads: issue_threads,
            profiler: options.profiler.clone(),
        })
    }

    /// Position among all tiles of the `Devices`.
    pub fn index(&self) -> usize {
        self.index
    }

    /// Which device of the platform (in the `Devices`' order) this tile is part of.
    pub fn device_index(&self) -> usize {
        self.device_index
    }

    pub fn is_sub_device(&self) -> bool {
        self.sub_device
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.context
    }

    pub fn queues(&self) -> &[Queue] {
        &self.queues
    }

    pub fn memcache(&self) -> &Memcache {
        &self.memcache
    }

    /// A graph bound to queue `queue` of this tile.
    pub fn graph(self: &Arc<Self>, queue: usize) -> Result<Graph> {
        if queue >= self.queues.len() {
            return Err(Error::invalid(format!(
                "tile {} has {} queues; queue {queue} does not exist",
                self.index,
                self.queues.len()
            )));
        }
        Ok(Graph {
            tile: self.clone(),
            queue,
        })
    }

    /// Waits for every queue of this tile.
    pub fn finish(&self) -> Result<()> {
        self.queues.iter().try_for_each(cl::finish)
    }

    /// Waits for the queues of this tile that were issued on since the last call (see
    /// [`Devices::finish_issued`]). The flag is cleared before the wait and set by an
    /// operation only after its commands are enqueued, so an operation racing with this
    /// call is either waited for or leaves its flag for the next call.
    pub fn finish_issued(&self) -> Result<()> {
        timed_wait(self.profiler.as_deref(), Wait::Synchronize, || {
            for (queue, issued) in self.queues.iter().zip(&self.issued) {
                if issued.swap(false, Ordering::AcqRel) {
                    cl::finish(queue).inspect_err(|_| issued.store(true, Ordering::Release))?;
                }
            }
            Ok(())
        })
    }
}

/// One operation issuing on a queue ([`Graph::issuing`]): holds the queue's issue lock and,
/// when dropped (the commands are enqueued), marks the queue for [`Tile::finish_issued`].
pub struct Issuing<'a> {
    _lock: MutexGuard<'a, ()>,
    issued: &'a AtomicBool,
}

impl Drop for Issuing<'_> {
    fn drop(&mut self) {
        self.issued.store(true, Ordering::Release);
    }
}

/// Counter sets of each queue's counters: a chained launch of several key switches hands
/// each over on a set of its own (`job_counters` in `opencl/chain.cl`; at least
/// `crate::ckks::fused::KS_JOBS_MAX`).
pub const CHAIN_COUNTER_SETS: usize = 4;

/// Words of each queue's counters for launches that hand over between work groups
/// ([`Graph::chain_counters`]): [`CHAIN_COUNTER_SETS`] sets of 8 counters of 32 bits, each
/// in a 128-byte line of its own.
pub const CHAIN_COUNTER_WORDS: usize = CHAIN_COUNTER_SETS * 8 * 16;

/// A chain of operations bound to one in-order queue of one tile (the SEAL backend keeps
/// one for every operation). Cloning gives another handle to the same queue.
#[derive(Clone)]
pub struct Graph {
    tile: Arc<Tile>,
    queue: usize,
}

impl Graph {
    pub fn tile(&self) -> &Arc<Tile> {
        &self.tile
    }

    pub fn context(&self) -> &Arc<Context> {
        &self.tile.context
    }

    pub fn queue(&self) -> &Queue {
        &self.tile.queues[self.queue]
    }

    pub fn queue_index(&self) -> usize {
        self.queue
    }

    /// This queue's counters for launches whose work groups hand over through device
    /// memory (`crate::ckks::fused::FusedPasses::chained_key_switch`):
    /// [`CHAIN_COUNTER_WORDS`] words, zero between such launches, which each leave them
    /// zero. The queue runs its commands in order, so two such launches never overlap on
    /// them; no other queue uses them.
    pub fn chain_counters(&self) -> &Region {
        &self.tile.chain_counters[self.queue]
    }

    /// A pooled buffer of `words` words for this graph's queue.
    pub fn alloc(&self, words: usize) -> Result<PoolBuffer> {
        self.tile.memcache.alloc(self.queue(), words)
    }

    /// A pooled temporary for this graph's queue, never retained by frames
    /// (`Memcache::alloc_scratch`): operations free theirs as soon as they are enqueued.
    pub fn alloc_scratch(&self, words: usize) -> Result<PoolBuffer> {
        self.tile.memcache.alloc_scratch(self.queue(), words)
    }

    /// Whether launches on this graph are recorded (a profiler is attached): only then
    /// do launches need events.
    pub fn is_profiling(&self) -> bool {
        self.tile.profiler.is_some()
    }

    /// The profiler launches on this graph are recorded into, if any.
    pub fn profiler(&self) -> Option<&Arc<Profiler>> {
        self.tile.profiler.as_ref()
    }

    /// Held while one operation enqueues its commands on this graph's queue: threads that
    /// share the queue take turns per operation instead of handing the kernel slots, the
    /// pool and the driver's own lock to each other after every launch. The queue runs its
    /// commands in order whatever the interleaving, so nothing runs later for it; graphs on
    /// other queues do not wait for it.
    pub fn issuing(&self) -> Issuing<'_> {
        let lock = &self.tile.issue_locks[self.queue];
        Issuing {
            _lock: timed_wait(self.tile.profiler.as_deref(), Wait::IssueLock, || {
                lock.lock()
            }),
            issued: &self.tile.issued[self.queue],
        }
    }

    /// Records that commands were enqueued on this graph's queue outside an operation's
    /// [`Graph::issuing`] (a deferred product run where its words are needed), so that
    /// `Devices::finish_issued` waits for them too.
    pub fn note_issued(&self) {
        self.tile.issued[self.queue].store(true, Ordering::Release);
    }

    /// Enters a tracing span for operation `name` on this graph (closed when dropped). A
    /// debug span: below `SEAL_OPENCL_LOG=debug` (see `crate::logging`) it is disabled and
    /// costs one comparison with the global maximum level.
    pub fn operation_span(&self, name: &'static str) -> tracing::span::EnteredSpan {
        tracing::debug_span!(
            "operation",
            name,
            tile = self.tile.index,
            queue = self.queue
        )
        .entered()
    }

    /// Sets `args` on `kernel` (built from `sig`; see [`cl::launch`]) and enqueues it on
    /// this graph's queue. With a profiler the launch is recorded under the kernel's name;
    /// with `sync_each_launch` it returns only after the kernel finished. Neither costs
    /// anything when off (no event is even created).
    ///
    /// # Safety
    /// As for [`cl::launch`]: `kernel` was built from `sig`, and every buffer argument is
    /// large enough for every index the kernel computes from `global` (and `local`).
    pub unsafe fn launch<'a, 'b: 'a>(
        &self,
        kernel: &cl::SharedKernel,
        sig: &KernelSig,
        args: impl IntoIterator<Item = &'a (&'a str, cl::KernelArg<'b>)>,
        global: impl Into<SpatialDims>,
        local: Option<SpatialDims>,
    ) -> Result<()> {
        if self.is_profiling() {
            // SAFETY: forwarded from this function's contract.
            unsafe { self.launch_event(kernel, sig, args, global, local) }.map(drop)
        } else {
            // SAFETY: forwarded from this function's contract.
            unsafe { cl::launch(self.queue(), kernel, sig, args, &[], global, local, None) }?;
            self.after_launch()
        }
    }

    /// [`Graph::launch`] returning the launch's event (for another queue to wait on).
    ///
    /// # Safety
    /// As for [`Graph::launch`].
    pub unsafe fn launch_event<'a, 'b: 'a>(
        &self,
        kernel: &cl::SharedKernel,
        sig: &KernelSig,
        args: impl IntoIterator<Item = &'a (&'a str, cl::KernelArg<'b>)>,
        global: impl Into<SpatialDims>,
        local: Option<SpatialDims>,
    ) -> Result<Event> {
        let mut event = Event::empty();
        // SAFETY: forwarded from this function's contract.
        unsafe {
            cl::launch(
                self.queue(),
                kernel,
                sig,
                args,
                &[],
                global,
                local,
                Some(&mut event),
            )
        }?;
        if let Some(profiler) = &self.tile.profiler {
            profiler.record(sig.name, event.clone(), self.tile.index, self.queue);
        }
        self.after_launch()?;
        Ok(event)
    }

    /// Records launches made outside [`Graph::launch`] on this graph's queue (e.g. an
    /// `NttPlan`'s, which return their events) under `name`, the passes of a
    /// multi-launch transform as `name.1`, `name.2`, .. so that the profiler's per-kernel
    /// table shows each pass; applies the debug switch to them. Costs nothing with
    /// profiling and the switch off.
    pub fn note_launches(&self, name: &str, events: Vec<Event>) -> Result<()> {
        if let Some(profiler) = &self.tile.profiler {
            let passes = events.len();
            for (pass, event) in events.into_iter().enumerate() {
                if passes == 1 {
                    profiler.record(name, event, self.tile.index, self.queue);
                } else {
                    let name = format!("{name}.{}", pass + 1);
                    profiler.record(&name, event, self.tile.index, self.queue);
                }
            }
        }
        self.after_launch()
    }

    /// The `sync` setting: wait for the kernel just launched.
    fn after_launch(&self) -> Result<()> {
        if self.tile.sync_each_launch {
            cl::finish(self.queue())?;
        }
        Ok(())
    }

    /// Waits for every command of this graph's queue.
    pub fn finish(&self) -> Result<()> {
        cl::finish(self.queue())
    }
}
