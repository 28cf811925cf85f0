//! The OpenCL runtime: which device we run on, its context, programs built from the
//! embedded kernel sources (cached per device, source and options), and the launch of
//! kernels. This is the only module that talks to `ocl`; the rest of the crate uses the
//! types re-exported here.

mod pinned;
mod select;
pub mod sources;
mod subdevice;
mod sync;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::sync::Arc;

use ocl::enums::{DeviceInfo, DeviceInfoResult};
use ocl::flags::{CommandQueueProperties, DeviceType};
use parking_lot::Mutex;

pub use ocl::{Buffer, Event, EventList, Kernel, Program, Queue, SpatialDims};
pub use pinned::{pinned_bytes_in_use, PinnedHost, MAX_PINNED_BYTES_ENV_VAR};
pub use select::{list_devices, DeviceEntry, DeviceSelector};
pub use subdevice::{
    create_sub_devices, partition_support, PartitionScheme, PartitionSupport, SubDevice,
};
pub use sync::{
    complete_user_event, enqueue_barrier, enqueue_on, event_times, is_complete, kernel_name,
    order_after, same_queue, wait, EventTimes,
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
    /// Largest single buffer (`CL_DEVICE_MAX_MEM_ALLOC_SIZE`).
    pub max_alloc_bytes: u64,
    pub global_mem_bytes: u64,
}

/// An OpenCL context on one device, with its program cache.
///
/// Programs are cached per (source text, build options); the context is per device, so
/// together the key is (device, source hash, options) as DESIGN.md asks.
pub struct Context {
    device: ocl::Device,
    context: ocl::Context,
    info: DeviceInfoSummary,
    programs: Mutex<HashMap<ProgramKey, Program>>,
    /// The sub-device this context runs on, if it is one. Declared last so that it is
    /// released after the context that uses it.
    _sub_device: Option<SubDevice>,
}

#[derive(Clone, PartialEq, Eq, Hash)]
struct ProgramKey {
    source_hash: u64,
    options: String,
}

impl Context {
    /// The device named by `SEAL_OPENCL_DEVICE` (default: first GPU, else first CPU).
    pub fn from_env() -> Result<Arc<Context>> {
        Self::new(&DeviceSelector::from_env()?)
    }

    pub fn new(selector: &DeviceSelector) -> Result<Arc<Context>> {
        let entry = selector.resolve()?;
        Self::for_device(entry.platform, entry.device)
    }

    /// A context holding exactly `device` (a whole device or a sub-device).
    pub fn for_device(platform: ocl::Platform, device: ocl::Device) -> Result<Arc<Context>> {
        Self::build(platform, device, None)
    }

    /// A context holding exactly the sub-device `sub` (a tile), which it keeps alive.
    pub fn for_sub_device(platform: ocl::Platform, sub: SubDevice) -> Result<Arc<Context>> {
        let device = sub.device();
        Self::build(platform, device, Some(sub))
    }

    fn build(
        platform: ocl::Platform,
        device: ocl::Device,
        sub_device: Option<SubDevice>,
    ) -> Result<Arc<Context>> {
        let context = ocl::Context::builder()
            .platform(platform)
            .devices(device)
            .build()?;
        let info = summarize(&platform, &device)?;
        tracing::debug!(device = %info.name, platform = %info.platform, "OpenCL context created");
        Ok(Arc::new(Context {
            device,
            context,
            info,
            programs: Mutex::new(HashMap::new()),
            _sub_device: sub_device,
        }))
    }

    pub fn info(&self) -> &DeviceInfoSummary {
        &self.info
    }

    pub fn device(&self) -> ocl::Device {
        self.device
    }

    /// A new in-order queue; with `profiling` its events carry device timestamps.
    pub fn queue(&self, profiling: bool) -> Result<Queue> {
        let props = profiling.then_some(CommandQueueProperties::PROFILING_ENABLE);
        Ok(Queue::new(&self.context, self.device, props)?)
    }

    /// The program built from `sources` (concatenated in order) with `options`, built on
    /// first use and cached. A failed build returns the compiler log.
    pub fn program(&self, sources: &[&str], options: &str) -> Result<Program> {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        sources.hash(&mut hasher);
        let key = ProgramKey {
            source_hash: hasher.finish(),
            options: options.to_string(),
        };
        let mut programs = self.programs.lock();
        if let Some(p) = programs.get(&key) {
            return Ok(p.clone());
        }
        let program = Program::builder()
            .devices(self.device)
            .src(sources.concat())
            .cmplr_opt(options)
            .build(&self.context)
            .map_err(|e| Error::ProgramBuild {
                device: self.info.name.clone(),
                options: options.to_string(),
                log: e.to_string(),
            })?;
        tracing::debug!(device = %self.info.name, options, "OpenCL program built");
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

/// Whether two buffer handles name the same OpenCL memory object (two distinct
/// sub-buffers of one allocation do not; launchers check aliasing with this).
pub fn same_buffer(a: &Buffer<u64>, b: &Buffer<u64>) -> bool {
    a.as_core().as_ptr() == b.as_core().as_ptr()
}

/// One argument of a kernel launch: a buffer of words or a 32-bit scalar.
#[derive(Clone, Copy)]
pub enum KernelArg<'a> {
    Buf(&'a Buffer<u64>),
    U32(u32),
}

/// Sets argument `index` of `kernel` with nothing but `clSetKernelArg`: no type lookup and,
/// for a buffer, no retain in the kernel object and no release of the previous one (ocl's
/// `set_arg` does both, several driver calls per argument on every launch).
///
/// # Safety
/// The kernel must not be enqueued again without every argument set anew (the buffer may be
/// freed once the launch that uses it is enqueued: an enqueued command keeps the memory
/// objects it uses alive, OpenCL 1.2 section 5.2.2), and `arg` must have the type the
/// kernel declares at `index`. The CKKS and NTT launchers set every argument, checked
/// against the kernel's signature, under the kernel's lock before each enqueue.
pub unsafe fn set_arg_raw(kernel: &Kernel, index: u32, arg: KernelArg) -> Result<()> {
    let value = match arg {
        KernelArg::Buf(b) => ocl::core::ArgVal::mem(b.as_core()),
        KernelArg::U32(ref v) => ocl::core::ArgVal::scalar(v),
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
    let is_gpu = match device.info(DeviceInfo::Type)? {
        DeviceInfoResult::Type(t) => t.contains(DeviceType::GPU),
        _ => false,
    };
    let local_mem_bytes = match device.info(DeviceInfo::LocalMemSize)? {
        DeviceInfoResult::LocalMemSize(s) => s,
        _ => 0,
    };
    let max_alloc_bytes = match device.info(DeviceInfo::MaxMemAllocSize)? {
        DeviceInfoResult::MaxMemAllocSize(s) => s,
        _ => 0,
    };
    let global_mem_bytes = match device.info(DeviceInfo::GlobalMemSize)? {
        DeviceInfoResult::GlobalMemSize(s) => s,
        _ => 0,
    };
    Ok(DeviceInfoSummary {
        name: device.name()?,
        vendor: device.vendor()?,
        platform: platform.name()?,
        is_gpu,
        local_mem_bytes,
        max_work_group_size: device.max_wg_size()?,
        max_alloc_bytes,
        global_mem_bytes,
    })
}
