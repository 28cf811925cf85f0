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

pub use ocl::{Buffer, Event, EventList, Kernel, Program, Queue, SpatialDims};
pub use pinned::{pinned_bytes_in_use, PinnedHost};
pub use select::{list_devices, DeviceEntry, DeviceSelector};
pub(crate) use sig::kernel_sigs;
pub use sig::{check_source, declared_kernels, ArgType, Declared, KernelSig};
pub use subdevice::{
    create_sub_devices, partition_support, PartitionScheme, PartitionSupport, SubDevice,
};
pub use sync::{
    complete_user_event, enqueue_barrier, enqueue_on, event_times, is_complete, kernel_name,
    order_after, read_yielding, same_queue, wait, EventTimes,
};

use crate::error::{Error, Result};

/// What we need to know about a device to plan kernels for it.
#[derive(Clone, Debug)]
pub struct DeviceInfoSummary {
    pub name: String,
    pub vendor: String,
    pub platform: String,
    pub is_gpu: bool,
    pub local_mem_bytes: u64,
    pub max_work_group_size: usize,
    /// Compute units (`CL_DEVICE_MAX_COMPUTE_UNITS`: an NVIDIA GPU's SMs).
    pub compute_units: u32,
    /// Largest single buffer (`CL_DEVICE_MAX_MEM_ALLOC_SIZE`).
    pub max_alloc_bytes: u64,
    pub global_mem_bytes: u64,
    /// The alignment of a sub-buffer's origin (`CL_DEVICE_MEM_BASE_ADDR_ALIGN`, in bytes).
    pub base_addr_align_bytes: u64,
}

impl DeviceInfoSummary {
    /// Whether kernels may use NVIDIA's inline PTX (`asm`, e.g. `shfl.sync`): an NVIDIA GPU
    /// (its vendor or platform named NVIDIA), whose OpenCL C compiler passes `asm`
    /// statements to PTX and runs warps of 32 consecutive local ids.
    pub fn nvidia_ptx(&self) -> bool {
        let nvidia = |s: &str| s.to_ascii_lowercase().contains("nvidia");
        self.is_gpu && (nvidia(&self.vendor) || nvidia(&self.platform))
    }
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

    /// A device buffer of `len` words, uninitialised.
    pub fn buffer(&self, queue: &Queue, len: usize) -> Result<Buffer<u64>> {
        if len == 0 {
            return Err(Error::invalid("device buffers must hold at least one word"));
        }
        Ok(Buffer::<u64>::builder()
            .queue(queue.clone())
            .len(len)
            .build()?)
    }

    /// A device buffer holding a copy of `data` (blocking upload).
    pub fn upload(&self, queue: &Queue, data: &[u64]) -> Result<Buffer<u64>> {
        let buf = self.buffer(queue, data.len())?;
        buf.write(data).enq()?;
        Ok(buf)
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

/// Reads a whole buffer back to the host (blocking).
pub fn download(buf: &Buffer<u64>) -> Result<Vec<u64>> {
    let mut out = vec![0u64; buf.len()];
    buf.read(&mut out).enq()?;
    Ok(out)
}

/// Fills `buf` with `pattern` so that words a kernel fails to write stand out (tests).
pub fn poison(buf: &Buffer<u64>, pattern: u64) -> Result<()> {
    buf.cmd().fill(pattern, None).enq()?;
    Ok(())
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

/// Whether two buffer handles name the same OpenCL memory object (two distinct
/// sub-buffers of one allocation do not; launchers check aliasing with this).
pub fn same_buffer(a: &Buffer<u64>, b: &Buffer<u64>) -> bool {
    a.as_core().as_ptr() == b.as_core().as_ptr()
}

/// One argument of a kernel launch: a buffer of words or a 32- or 64-bit scalar.
#[derive(Clone, Copy)]
pub enum KernelArg<'a> {
    Buf(&'a Buffer<u64>),
    U32(u32),
    U64(u64),
}

/// Sets argument `index` of `kernel` with nothing but `clSetKernelArg`: no type lookup and,
/// for a buffer, no retain in the kernel object and no release of the previous one (ocl's
/// `set_arg` does both, several driver calls per argument on every launch).
///
/// # Safety
/// The kernel must not be enqueued again without every argument set anew (the buffer may be
/// freed once the launch that uses it is enqueued: an enqueued command keeps the memory
/// objects it uses alive, OpenCL 1.2 section 5.2.2), and `arg` must have the type the
/// kernel declares at `index`. [`KernelSig::set`] sets every argument, checked against the
/// kernel's signature, and its callers hold the kernel's lock until the enqueue.
pub unsafe fn set_arg_raw(kernel: &Kernel, index: u32, arg: KernelArg) -> Result<()> {
    let value = match arg {
        KernelArg::Buf(b) => ocl::core::ArgVal::mem(b.as_core()),
        KernelArg::U32(ref v) => ocl::core::ArgVal::scalar(v),
        KernelArg::U64(ref v) => ocl::core::ArgVal::scalar(v),
    };
    // SAFETY: the caller's guarantee (see `# Safety`).
    unsafe { kernel.set_arg_unchecked(index, value) }?;
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

/// Enqueues on `queue` a device-to-device copy of all of `src` into `dst` (same length);
/// `event`, if given, receives the copy's event (benchmarks time NTTs against it).
pub fn copy(
    queue: &Queue,
    src: &Buffer<u64>,
    dst: &Buffer<u64>,
    event: Option<&mut Event>,
) -> Result<()> {
    if src.len() != dst.len() {
        return Err(Error::invalid(format!(
            "copy of {} words into a buffer of {}",
            src.len(),
            dst.len()
        )));
    }
    let mut cmd = src.copy(dst, None, None).queue(queue);
    if let Some(event) = event {
        cmd = cmd.enew(event);
    }
    cmd.enq()?;
    Ok(())
}

/// Enqueues on `queue` a device-to-device copy of `len` words from `src` at `src_offset`
/// to `dst` at `dst_offset`. The ranges must lie inside the buffers and, within one
/// buffer, must not overlap (OpenCL's rule for clEnqueueCopyBuffer).
pub fn copy_range(
    queue: &Queue,
    src: &Buffer<u64>,
    src_offset: usize,
    dst: &Buffer<u64>,
    dst_offset: usize,
    len: usize,
) -> Result<()> {
    check_range("copy source", src, src_offset, len)?;
    check_range("copy destination", dst, dst_offset, len)?;
    if src.as_core().as_ptr() == dst.as_core().as_ptr()
        && src_offset < dst_offset + len
        && dst_offset < src_offset + len
    {
        return Err(Error::invalid(
            "copy between overlapping ranges of one buffer",
        ));
    }
    if len == 0 {
        return Ok(());
    }
    src.cmd()
        .queue(queue)
        .offset(src_offset)
        .copy(dst, Some(dst_offset), Some(len))
        .enq()?;
    Ok(())
}

/// Enqueues on `queue` the filling of `len` words of `buf` from `offset` with `value`.
pub fn fill_range(
    queue: &Queue,
    buf: &Buffer<u64>,
    offset: usize,
    len: usize,
    value: u64,
) -> Result<()> {
    check_range("fill", buf, offset, len)?;
    if len == 0 {
        return Ok(());
    }
    buf.cmd()
        .queue(queue)
        .offset(offset)
        .fill(value, Some(len))
        .enq()?;
    Ok(())
}

/// A buffer that aliases `len` words of `buf` from `offset` (an OpenCL sub-buffer), so that
/// a kernel can work on one polynomial of a ciphertext. `offset` in bytes must be a
/// multiple of the device's base address alignment; polynomial offsets (multiples of
/// N >= 1024 words) always are.
pub fn sub_buffer(buf: &Buffer<u64>, offset: usize, len: usize) -> Result<Buffer<u64>> {
    check_range("sub-buffer", buf, offset, len)?;
    if len == 0 {
        return Err(Error::invalid("a sub-buffer must hold at least one word"));
    }
    Ok(buf.create_sub_buffer(None, offset, len)?)
}

fn check_range(what: &str, buf: &Buffer<u64>, offset: usize, len: usize) -> Result<()> {
    match offset.checked_add(len) {
        Some(end) if end <= buf.len() => Ok(()),
        _ => Err(Error::invalid(format!(
            "{what} of {len} words at {offset} exceeds a buffer of {} words",
            buf.len()
        ))),
    }
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
    let is_gpu = device_info!(device, Type).is_some_and(|t| t.contains(DeviceType::GPU));
    let local_mem_bytes = device_info!(device, LocalMemSize).unwrap_or(0);
    let max_alloc_bytes = device_info!(device, MaxMemAllocSize).unwrap_or(0);
    let global_mem_bytes = device_info!(device, GlobalMemSize).unwrap_or(0);
    let base_addr_align_bits = device_info!(device, MemBaseAddrAlign).unwrap_or(0);
    let compute_units = device_info!(device, MaxComputeUnits).unwrap_or(1);
    Ok(DeviceInfoSummary {
        name: device.name()?,
        vendor: device.vendor()?,
        platform: platform.name()?,
        is_gpu,
        local_mem_bytes,
        max_work_group_size: device.max_wg_size()?,
        compute_units,
        max_alloc_bytes,
        global_mem_bytes,
        base_addr_align_bytes: u64::from(base_addr_align_bits / 8).max(1),
    })
}
