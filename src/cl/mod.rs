//! The OpenCL runtime: which device we run on, its context, programs built from the
//! embedded kernel sources (cached per device, source and options), and the launch of
//! kernels. This is the only module that talks to `ocl`; the rest of the crate uses the
//! types re-exported here.

/// `$device.info(DeviceInfo::$info)`'s value as `Some`, `?` on the query's error; None when
/// the driver answers with another variant.
macro_rules! device_info {
    ($device:expr, $info:ident) => {
        match $device.info(ocl::enums::DeviceInfo::$info)? {
            ocl::enums::DeviceInfoResult::$info(value) => Some(value),
            _ => None,
        }
    };
}

mod issue;
mod pinned;
mod select;
mod sig;
pub mod sources;
mod subdevice;
mod sync;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use ocl::flags::{CommandQueueProperties, DeviceType};
use parking_lot::Mutex;

pub use issue::{drain, launch, shared_kernel, IssueThread, SharedKernel};
pub use ocl::{Buffer, Event, EventList, Kernel, Program, Queue, SpatialDims};
pub use pinned::{pinned_bytes_in_use, PinnedHost};
pub use select::{list_devices, DeviceEntry, DeviceSelector};
pub(crate) use sig::kernel_sigs;
pub use sig::{check_source, declared_kernels, ArgType, Declared, KernelSig};
pub use subdevice::{
    create_sub_devices, partition_support, PartitionScheme, PartitionSupport, SubDevice,
};
use sync::enqueue_raw;
pub use sync::{
    complete_user_event, enqueue_barrier, enqueue_on, event_times, finish, is_complete,
    kernel_name, marker, order_after, read_yielding, same_queue, wait, EventTimes,
};

use crate::error::{Error, Result};

/// What we need to know about a device to plan kernels for it.
#[derive(Clone, Debug)]
pub struct DeviceInfoSummary {
    pub name: String,
    pub vendor: String,
    pub platform: String,
    pub is_gpu: bool,
    /// `CL_DEVICE_TYPE_CPU` (PoCL's): work groups are threads over one coherent memory.
    pub is_cpu: bool,
    pub local_mem_bytes: u64,
    pub max_work_group_size: usize,
    /// Compute units (`CL_DEVICE_MAX_COMPUTE_UNITS`: an NVIDIA GPU's SMs).
    pub compute_units: u32,
    /// Largest single buffer (`CL_DEVICE_MAX_MEM_ALLOC_SIZE`).
    pub max_alloc_bytes: u64,
    pub global_mem_bytes: u64,
    /// The alignment of a buffer's base address (`CL_DEVICE_MEM_BASE_ADDR_ALIGN`, in bytes);
    /// the pool aligns regions to it.
    pub base_addr_align_bytes: u64,
    /// Doubles (`cl_khr_fp64` among the device's extensions): the encoding kernels need them.
    pub fp64: bool,
}

/// One device (or sub-device) of an OpenCL context, with the context's program cache.
///
/// The context may hold several devices ([`Context::shared`]): the tiles of a machine share
/// one, so a buffer made for one tile can be used on another's queue (the driver moves it)
/// and an event of one tile's queue can be waited on by another's. Programs are cached per
/// context and (source text, build options) and built for every device of the context at
/// once, so identical GPUs compile each program once; each `Context` value is the view of
/// one device (its queues, its limits).
pub struct Context {
    device: ocl::Device,
    info: DeviceInfoSummary,
    shared: Arc<SharedContext>,
}

/// What the devices of one OpenCL context share.
struct SharedContext {
    context: ocl::Context,
    devices: Vec<ocl::Device>,
    programs: Mutex<HashMap<ProgramKey, Program>>,
    /// Where programs are written as they are built ([`Context::dump_programs_to`]).
    dump_programs: Mutex<Option<std::path::PathBuf>>,
    /// The sub-devices the context holds, if they are. Declared last so that they are
    /// released after the context that uses them.
    _sub_devices: Vec<SubDevice>,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct ProgramKey {
    source_hash: u64,
    options: String,
}

/// A device for [`Context::shared`]: a whole device, or a sub-device the context keeps alive.
pub enum ContextDevice {
    Whole(ocl::Device),
    Sub(SubDevice),
}

impl ContextDevice {
    fn device(&self) -> ocl::Device {
        match self {
            ContextDevice::Whole(device) => *device,
            ContextDevice::Sub(sub) => sub.device(),
        }
    }
}

impl Context {
    /// From now on every program this context (and every view sharing it) builds is
    /// written into `dir` as its devices' binaries (on NVIDIA the PTX its compiler made):
    /// to read what a kernel compiled to, e.g. with `ptxas -v` and `cuobjdump`.
    pub fn dump_programs_to(&self, dir: std::path::PathBuf) {
        *self.shared.dump_programs.lock() = Some(dir);
    }

    pub fn new(selector: &DeviceSelector) -> Result<Arc<Context>> {
        let entry = selector.resolve()?;
        Self::for_device(entry.platform, entry.device)
    }

    /// A context holding exactly `device` (a whole device or a sub-device).
    pub fn for_device(platform: ocl::Platform, device: ocl::Device) -> Result<Arc<Context>> {
        Self::single(platform, ContextDevice::Whole(device))
    }

    /// A context holding exactly the sub-device `sub` (a tile), which it keeps alive.
    pub fn for_sub_device(platform: ocl::Platform, sub: SubDevice) -> Result<Arc<Context>> {
        Self::single(platform, ContextDevice::Sub(sub))
    }

    fn single(platform: ocl::Platform, device: ContextDevice) -> Result<Arc<Context>> {
        let mut views = Self::shared(platform, vec![device])?;
        Ok(views.pop().expect("one view per device"))
    }

    /// One OpenCL context over every device of `devices` (all of `platform`); returns the
    /// view of each, in order.
    pub fn shared(
        platform: ocl::Platform,
        devices: Vec<ContextDevice>,
    ) -> Result<Vec<Arc<Context>>> {
        let ids: Vec<ocl::Device> = devices.iter().map(ContextDevice::device).collect();
        if ids.is_empty() {
            return Err(Error::invalid(
                "an OpenCL context needs at least one device",
            ));
        }
        let context = ocl::Context::builder()
            .platform(platform)
            .devices(&ids[..])
            .build()?;
        let infos = ids
            .iter()
            .map(|device| summarize(&platform, device))
            .collect::<Result<Vec<_>>>()?;
        tracing::debug!(devices = ids.len(), device = %infos[0].name, platform = %infos[0].platform, "OpenCL context created");
        let shared = Arc::new(SharedContext {
            context,
            devices: ids.clone(),
            programs: Mutex::new(HashMap::new()),
            dump_programs: Mutex::new(None),
            _sub_devices: devices
                .into_iter()
                .filter_map(|d| match d {
                    ContextDevice::Sub(sub) => Some(sub),
                    ContextDevice::Whole(_) => None,
                })
                .collect(),
        });
        Ok(ids
            .into_iter()
            .zip(infos)
            .map(|(device, info)| {
                Arc::new(Context {
                    device,
                    info,
                    shared: shared.clone(),
                })
            })
            .collect())
    }

    /// Whether `self` and `other` are views of the same OpenCL context (buffers and events
    /// of one can be used with the other's queues).
    pub fn same_context(&self, other: &Context) -> bool {
        Arc::ptr_eq(&self.shared, &other.shared)
    }

    pub fn info(&self) -> &DeviceInfoSummary {
        &self.info
    }

    pub fn device(&self) -> ocl::Device {
        self.device
    }

    /// The most work items a work group of `kernel` may have on this context's device,
    /// after the registers and local memory its build uses (NVIDIA's OpenCL gives a
    /// kernel no more registers per work item than its required work-group size leaves,
    /// but the driver decides).
    pub fn kernel_work_group_size(&self, kernel: &Kernel) -> Result<usize> {
        match kernel.wg_info(self.device, ocl::enums::KernelWorkGroupInfo::WorkGroupSize)? {
            ocl::enums::KernelWorkGroupInfoResult::WorkGroupSize(n) => Ok(n),
            other => Err(Error::invalid(format!(
                "CL_KERNEL_WORK_GROUP_SIZE: unexpected answer {other:?}"
            ))),
        }
    }

    /// A new in-order queue; with `profiling` its events carry device timestamps.
    pub fn queue(&self, profiling: bool) -> Result<Queue> {
        let props = profiling.then_some(CommandQueueProperties::PROFILING_ENABLE);
        Ok(Queue::new(&self.shared.context, self.device, props)?)
    }

    /// The program built from `sources` (concatenated in order) with `options` for every
    /// device of the context, built on first use and cached. A failed build returns the
    /// compiler log.
    pub fn program(&self, sources: &[&str], options: &str) -> Result<Program> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        sources.hash(&mut hasher);
        let key = ProgramKey {
            source_hash: hasher.finish(),
            options: options.to_string(),
        };
        let mut programs = self.shared.programs.lock();
        if let Some(p) = programs.get(&key) {
            return Ok(p.clone());
        }
        let program = Program::builder()
            .devices(&self.shared.devices[..])
            .src(sources.concat())
            .cmplr_opt(options)
            .build(&self.shared.context)
            .map_err(|e| Error::ProgramBuild {
                device: self.info.name.clone(),
                options: options.to_string(),
                log: e.to_string(),
            })?;
        tracing::debug!(device = %self.info.name, options, "OpenCL program built");
        if let Some(dir) = self.shared.dump_programs.lock().as_deref() {
            dump_program(&program, key.source_hash, options, dir);
        }
        programs.insert(key, program.clone());
        Ok(program)
    }

    /// A device allocation of `len` words (a new OpenCL memory object), uninitialised, as
    /// one region.
    pub fn buffer(&self, queue: &Queue, len: usize) -> Result<Region> {
        if len == 0 {
            return Err(Error::invalid("device buffers must hold at least one word"));
        }
        let buffer = Buffer::<u64>::builder()
            .queue(queue.clone())
            .len(len)
            .build()?;
        Ok(Region {
            buffer: Arc::new(buffer),
            offset: 0,
            words: len,
        })
    }

    /// A device allocation holding a copy of `data` (blocking upload on `queue`).
    pub fn upload(&self, queue: &Queue, data: &[u64]) -> Result<Region> {
        let region = self.buffer(queue, data.len())?;
        write(queue, &region, 0, data)?;
        Ok(region)
    }
}

/// Writes `program`'s binaries as `<dir>/<source hash>-<options hash>-<device>.bin`, with
/// the build options beside them in `.options` and each device's build log in `.log`. A
/// diagnostic: a failure is logged, never an error.
fn dump_program(program: &Program, source_hash: u64, options: &str, dir: &std::path::Path) {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    options.hash(&mut hasher);
    let stem = format!("{source_hash:016x}-{:016x}", hasher.finish());
    let write = || -> std::io::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join(format!("{stem}.options")), options)?;
        if let Ok(ocl::enums::ProgramInfoResult::Binaries(binaries)) =
            program.info(ocl::enums::ProgramInfo::Binaries)
        {
            for (device, binary) in binaries.iter().enumerate() {
                std::fs::write(dir.join(format!("{stem}-{device}.bin")), binary)?;
            }
        }
        for (index, device) in program.devices().unwrap_or_default().iter().enumerate() {
            if let Ok(log) = program.build_info(
                ocl::Device::from(*device),
                ocl::enums::ProgramBuildInfo::BuildLog,
            ) {
                std::fs::write(dir.join(format!("{stem}-{index}.log")), log.to_string())?;
            }
        }
        Ok(())
    };
    if let Err(e) = write() {
        tracing::warn!("could not write program binaries to {}: {e}", dir.display());
    }
}

/// Reads a region back to the host with a blocking read on `queue`.
pub fn download(queue: &Queue, region: &Region) -> Result<Vec<u64>> {
    let mut out = vec![0u64; region.words];
    read(queue, region, 0, &mut out)?;
    Ok(out)
}

/// Copies words `offset ..` of `region` (as many as `out` holds) into `out` with a
/// blocking read on `queue`.
pub fn read(queue: &Queue, region: &Region, offset: usize, out: &mut [u64]) -> Result<()> {
    let at = region.at("read", offset, out.len())?;
    if !out.is_empty() {
        drain(queue)?;
        region.buffer.read(out).queue(queue).offset(at).enq()?;
    }
    Ok(())
}

/// Copies `data` into `region` from word `offset` with a blocking write on `queue`.
pub fn write(queue: &Queue, region: &Region, offset: usize, data: &[u64]) -> Result<()> {
    let at = region.at("write", offset, data.len())?;
    if !data.is_empty() {
        drain(queue)?;
        region.buffer.write(data).queue(queue).offset(at).enq()?;
    }
    Ok(())
}

/// Fills `region` with `pattern` on `queue`, so that words a kernel fails to write stand
/// out (tests, the pool's poison setting).
pub fn poison(queue: &Queue, region: &Region, pattern: u64) -> Result<()> {
    fill_range(queue, region, 0, region.words, pattern)
}

/// The device `queue` runs on. `ocl::Queue::device` panics when the driver's query fails
/// (a lost device); this returns the error.
pub fn queue_device(queue: &Queue) -> Result<ocl::Device> {
    match queue
        .info(ocl::enums::CommandQueueInfo::Device)
        .map_err(ocl::Error::from)?
    {
        ocl::enums::CommandQueueInfoResult::Device(device) => Ok(device.into()),
        other => Err(Error::Logic(format!(
            "the driver answered a queue's device query with {other:?}"
        ))),
    }
}

/// A run of words of a device buffer: what a kernel argument, a copy, a fill or a
/// transfer works on. The pool hands out regions of its slabs, so a new ciphertext is no
/// new OpenCL memory object (a driver charges the first command using each new object).
/// The buffer is shared: cloning a region or taking a part of it creates no memory object.
///
/// Invariant: `offset + words <= buffer.len()`, `words >= 1`.
#[derive(Clone)]
pub struct Region {
    buffer: Arc<Buffer<u64>>,
    offset: usize,
    words: usize,
}

impl Region {
    /// The OpenCL buffer the region lies in (all of it, from word 0).
    pub fn buffer(&self) -> &Buffer<u64> {
        &self.buffer
    }

    /// The word of [`Region::buffer`] where the region starts.
    pub fn offset(&self) -> usize {
        self.offset
    }

    /// The words the region holds.
    pub fn words(&self) -> usize {
        self.words
    }

    /// The region of `words` words from word `offset` of this one, in the same buffer.
    /// Errors: no words, or words past this region's end.
    pub fn part(&self, offset: usize, words: usize) -> Result<Region> {
        if words == 0 {
            return Err(Error::invalid("a region must hold at least one word"));
        }
        Ok(Region {
            buffer: self.buffer.clone(),
            offset: self.at("part", offset, words)?,
            words,
        })
    }

    /// Whether the two regions share a word (launchers check aliasing with this).
    pub fn overlaps(&self, other: &Region) -> bool {
        self.same_buffer(other)
            && self.offset < other.offset + other.words
            && other.offset < self.offset + self.words
    }

    /// Whether the two regions start at the same word of one buffer (a kernel that reads
    /// each word before writing it may take one as both input and output).
    pub fn same_start(&self, other: &Region) -> bool {
        self.same_buffer(other) && self.offset == other.offset
    }

    fn same_buffer(&self, other: &Region) -> bool {
        self.buffer.as_core().as_ptr() == other.buffer.as_core().as_ptr()
    }

    /// The buffer's word at `offset` of the region, where `len` words from there lie
    /// inside it; else an error naming `what`.
    fn at(&self, what: &str, offset: usize, len: usize) -> Result<usize> {
        match offset.checked_add(len) {
            Some(end) if end <= self.words => Ok(self.offset + offset),
            _ => Err(Error::invalid(format!(
                "{what} of {len} words at {offset} exceeds a region of {} words",
                self.words
            ))),
        }
    }
}

impl std::fmt::Debug for Region {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Region")
            .field("buffer", &self.buffer.as_core().as_ptr())
            .field("offset", &self.offset)
            .field("words", &self.words)
            .finish()
    }
}

/// One argument of a kernel launch: a region of words or a 32- or 64-bit scalar.
#[derive(Clone, Copy)]
pub enum KernelArg<'a> {
    Buf(&'a Region),
    U32(u32),
    U64(u64),
}

/// One argument bound to its OpenCL parameter index: a buffer (held) and its first word,
/// or a scalar. [`KernelSig::bind`] makes them, checked against the kernel's signature; a
/// launch handed to an issue thread carries them until its enqueue.
#[derive(Clone)]
pub enum BoundArg {
    Buf(Arc<Buffer<u64>>, u64),
    U32(u32),
    U64(u64),
}

impl KernelArg<'_> {
    /// This argument held for a launch.
    fn bound(&self) -> BoundArg {
        match *self {
            KernelArg::Buf(region) => BoundArg::Buf(region.buffer.clone(), region.offset as u64),
            KernelArg::U32(v) => BoundArg::U32(v),
            KernelArg::U64(v) => BoundArg::U64(v),
        }
    }
}

/// Sets the OpenCL arguments `args` (index, value) of `kernel` with nothing but
/// `clSetKernelArg`: no type lookup and, for a buffer, no retain in the kernel object and
/// no release of the previous one (ocl's `set_arg` does both, several driver calls per
/// argument on every launch). A region sets two: its buffer at its index and its offset in
/// words (`ulong`) at the next.
///
/// # Safety
/// The kernel must not be enqueued again without every argument set anew (the buffer may be
/// freed once the launch that uses it is enqueued: an enqueued command keeps the memory
/// objects it uses alive, OpenCL 1.2 section 5.2.2), and each argument must have the type
/// the kernel declares at its index (a region: a pointer, then a `ulong`).
/// [`KernelSig::bind`] binds every argument, checked against the kernel's signature, and
/// the callers of this function hold the kernel's lock until the enqueue.
pub unsafe fn apply_args(kernel: &Kernel, args: &[(u32, BoundArg)]) -> Result<()> {
    for (index, arg) in args {
        let value = match arg {
            BoundArg::Buf(buffer, offset) => {
                // SAFETY: the caller's guarantee: the kernel declares a `ulong` after the
                // pointer.
                unsafe { kernel.set_arg_unchecked(index + 1, ocl::core::ArgVal::scalar(offset)) }?;
                ocl::core::ArgVal::mem(buffer.as_core())
            }
            BoundArg::U32(v) => ocl::core::ArgVal::scalar(v),
            BoundArg::U64(v) => ocl::core::ArgVal::scalar(v),
        };
        // SAFETY: the caller's guarantee (see `# Safety`).
        unsafe { kernel.set_arg_unchecked(*index, value) }?;
    }
    Ok(())
}

/// Enqueues `kernel` on its default queue over `global` work items (work groups of
/// `local` if given); see [`enqueue_on`] for another queue.
///
/// # Safety
/// Every buffer argument of `kernel` must be large enough for every index the kernel
/// computes from `global` (and `local`); the launchers in `ntt` and `arith` check this
/// against the buffer lengths before calling.
pub unsafe fn enqueue(
    kernel: &Kernel,
    global: impl Into<SpatialDims>,
    local: Option<SpatialDims>,
    event: Option<&mut Event>,
) -> Result<()> {
    let queue = kernel
        .default_queue()
        .ok_or_else(|| Error::Logic("kernel has no default queue".into()))?
        .clone();
    // SAFETY: the caller's guarantee (see `# Safety`) is the one `enqueue_on` needs.
    unsafe { enqueue_on(&queue, kernel, global, local, event) }
}

/// Enqueues on `queue` a device-to-device copy of all of `src` into `dst` (same words,
/// not overlapping); `event`, if given, receives the copy's event (benchmarks time NTTs
/// against it).
pub fn copy(queue: &Queue, src: &Region, dst: &Region, event: Option<&mut Event>) -> Result<()> {
    if src.words != dst.words {
        return Err(Error::invalid(format!(
            "copy of {} words into a region of {}",
            src.words, dst.words
        )));
    }
    if src.overlaps(dst) {
        return Err(Error::invalid(
            "copy between overlapping ranges of one buffer",
        ));
    }
    let mut cmd = src.buffer.cmd().queue(queue).offset(src.offset).copy(
        &*dst.buffer,
        Some(dst.offset),
        Some(src.words),
    );
    if let Some(event) = event {
        cmd = cmd.enew(event);
    }
    drain(queue)?;
    cmd.enq()?;
    Ok(())
}

/// Enqueues on `queue` a device-to-device copy of `len` words from `src` at `src_offset`
/// to `dst` at `dst_offset` (offsets in the regions). The ranges must lie inside the
/// regions and must not overlap (OpenCL's rule for clEnqueueCopyBuffer).
pub fn copy_range(
    queue: &Queue,
    src: &Region,
    src_offset: usize,
    dst: &Region,
    dst_offset: usize,
    len: usize,
) -> Result<()> {
    if len == 0 {
        src.at("copy source", src_offset, 0)?;
        dst.at("copy destination", dst_offset, 0)?;
        return Ok(());
    }
    copy(
        queue,
        &src.part(src_offset, len)?,
        &dst.part(dst_offset, len)?,
        None,
    )
}

/// Enqueues on `queue` the filling of `len` words of `region` from `offset` with `value`.
pub fn fill_range(
    queue: &Queue,
    region: &Region,
    offset: usize,
    len: usize,
    value: u64,
) -> Result<()> {
    let at = region.at("fill", offset, len)?;
    if len == 0 {
        return Ok(());
    }
    drain(queue)?;
    region
        .buffer
        .cmd()
        .queue(queue)
        .offset(at)
        .fill(value, Some(len))
        .enq()?;
    Ok(())
}

/// Device time of a completed, profiled event, in nanoseconds.
pub fn event_nanos(event: &Event) -> Result<u64> {
    use ocl::enums::{ProfilingInfo, ProfilingInfoResult};
    let start = event.profiling_info(ProfilingInfo::Start)?;
    let end = event.profiling_info(ProfilingInfo::End)?;
    match (start, end) {
        (ProfilingInfoResult::Start(s), ProfilingInfoResult::End(e)) => Ok(e.saturating_sub(s)),
        _ => Err(Error::OpenCl("unexpected profiling info result".into())),
    }
}

fn summarize(platform: &ocl::Platform, device: &ocl::Device) -> Result<DeviceInfoSummary> {
    let kind = device_info!(device, Type);
    let is_gpu = kind.is_some_and(|t| t.contains(DeviceType::GPU));
    let is_cpu = kind.is_some_and(|t| t.contains(DeviceType::CPU));
    let local_mem_bytes = device_info!(device, LocalMemSize).unwrap_or(0);
    let max_alloc_bytes = device_info!(device, MaxMemAllocSize).unwrap_or(0);
    let global_mem_bytes = device_info!(device, GlobalMemSize).unwrap_or(0);
    let base_addr_align_bits = device_info!(device, MemBaseAddrAlign).unwrap_or(0);
    let compute_units = device_info!(device, MaxComputeUnits).unwrap_or(1);
    let fp64 = device_info!(device, Extensions).is_some_and(|e| e.contains("cl_khr_fp64"));
    Ok(DeviceInfoSummary {
        name: device.name()?,
        vendor: device.vendor()?,
        platform: platform.name()?,
        is_gpu,
        is_cpu,
        local_mem_bytes,
        max_work_group_size: device.max_wg_size()?,
        compute_units,
        max_alloc_bytes,
        global_mem_bytes,
        base_addr_align_bytes: u64::from(base_addr_align_bits / 8).max(1),
        fp64,
    })
}
