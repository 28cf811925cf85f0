//! Device words: what a [`Buffer`] is and the commands that move its words.
//!
//! On a context whose one device shares coarse-grained SVM (OpenCL 2.0's shared virtual
//! memory, `CL_DEVICE_SVM_COARSE_GRAIN_BUFFER`), words live in SVM allocations and a buffer is
//! a region of one, handed to kernels as a pointer (`clSetKernelArgSVMPointer`). Elsewhere a
//! buffer is an OpenCL memory object. The difference matters for the pool's sub-allocation:
//! NVIDIA's driver charges the first command that uses a new memory object 20-85 us of host
//! time, growing with its size (a pool miss would pay it once per new buffer), while a new
//! region of an SVM allocation costs nothing beyond the command (`benches/runtime.rs`,
//! first use). Kernels run as fast on either.
//!
//! All buffers of one context are of one kind, so a kernel argument never switches between
//! a pointer and a memory object; one context of the process at a time uses SVM
//! ([`claim_svm`]). Unlike a memory object, an SVM allocation is not kept
//! alive by the commands that use it: [`SvmAlloc`] finishes every queue of its context
//! before it frees its words, so dropping the last buffer of an allocation while commands
//! still use it is safe, at the cost of a wait (allocations are long-lived: pool slabs,
//! tables).

use std::ffi::c_void;
use std::fmt;
use std::marker::PhantomData;
use std::ptr::NonNull;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use cl_sys::{
    clEnqueueSVMMemFill, clEnqueueSVMMemcpy, clGetDeviceInfo, clSVMAlloc, clSVMFree,
    clSetKernelArgSVMPointer, cl_device_svm_capabilities, cl_event, CL_DEVICE_SVM_CAPABILITIES,
    CL_DEVICE_SVM_COARSE_GRAIN_BUFFER, CL_MEM_READ_WRITE,
};
use ocl::core::ClNullEventPtr;
use parking_lot::Mutex;

use super::{Event, Kernel, Queue, SharedContext};
use crate::error::{from_status, Error, Result};

const WORD_BYTES: usize = std::mem::size_of::<u64>();

/// Held around every clSVMAlloc and clSVMFree of the process: NVIDIA's driver fails
/// allocations (a null answer for a few KiB) while other threads allocate or free SVM on
/// other contexts; serialised, they succeed. Both calls are rare (slabs, tables).
static SVM_CALLS: Mutex<()> = Mutex::new(());

/// Device words on one context, with the queue their commands use by default. The type
/// parameter is the word type, always `u64`: the name `Buffer<u64>` is kept from OpenCL's
/// buffers, which these replace.
pub struct Buffer<T> {
    words: Words,
    queue: Queue,
    _word: PhantomData<T>,
}

#[derive(Clone)]
enum Words {
    Mem(ocl::Buffer<u64>),
    /// Words `offset .. offset + len` of an SVM allocation.
    Svm {
        alloc: Arc<SvmAlloc>,
        offset: usize,
        len: usize,
    },
}

impl Clone for Buffer<u64> {
    fn clone(&self) -> Self {
        Buffer {
            words: self.words.clone(),
            queue: self.queue.clone(),
            _word: PhantomData,
        }
    }
}

impl fmt::Debug for Buffer<u64> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.words {
            Words::Mem(mem) => write!(f, "Buffer(memory object, {} words)", mem.len()),
            Words::Svm { alloc, offset, len } => write!(
                f,
                "Buffer(SVM {:p} + {offset}, {len} words)",
                alloc.ptr.as_ptr()
            ),
        }
    }
}

/// One SVM allocation of a context; freed when the last region of it is dropped, after
/// every queue of the context finished.
pub(super) struct SvmAlloc {
    ptr: NonNull<u64>,
    context: Arc<SharedContext>,
}

// SAFETY: the pointer names device memory that only OpenCL commands read or write (the host
// never dereferences it); OpenCL objects may be used from any thread, and the allocation is
// freed once, in `drop`, when no handle is left.
unsafe impl Send for SvmAlloc {}
// SAFETY: as for Send; `&SvmAlloc` only gives the address to OpenCL calls.
unsafe impl Sync for SvmAlloc {}

impl Drop for SvmAlloc {
    fn drop(&mut self) {
        // OpenCL does not keep SVM words alive for the commands that use them: wait for
        // every command of the context's queues (no new one can name this allocation, whose
        // last handle is going).
        for queue in self.context.queues.lock().iter() {
            if let Err(e) = queue.finish() {
                tracing::warn!("queue failed while freeing device words: {e}");
            }
        }
        let _calls = SVM_CALLS.lock();
        // SAFETY: `ptr` came from clSVMAlloc on this context, is freed only here, and no
        // command uses it any more (above).
        unsafe { clSVMFree(self.context.context.as_ptr(), self.ptr.as_ptr().cast()) };
    }
}

/// Whether a context with SVM words is alive in the process: at most one at a time. With
/// SVM in use on several contexts from several threads at once (tests that make a backend
/// each), NVIDIA's driver failed allocations and crashed; a process's backend is one
/// context, and later contexts use memory objects while it lives.
static SVM_CONTEXT_ALIVE: AtomicBool = AtomicBool::new(false);

/// The process's one SVM context's claim ([`claim_svm`]), held by that context and given
/// back when it is dropped (after its last allocation: each holds the context).
pub(super) struct SvmClaim(());

impl Drop for SvmClaim {
    fn drop(&mut self) {
        SVM_CONTEXT_ALIVE.store(false, Ordering::Release);
    }
}

/// The claim for a context of `device` to use SVM words: None where the device does not
/// share coarse-grained SVM or another context has the claim.
pub(super) fn claim_svm(device: &ocl::Device) -> Option<SvmClaim> {
    let free = !SVM_CONTEXT_ALIVE.load(Ordering::Acquire);
    (free && supports_svm(device) && !SVM_CONTEXT_ALIVE.swap(true, Ordering::AcqRel))
        .then_some(SvmClaim(()))
}

/// Whether `device` shares coarse-grained SVM buffers (an OpenCL 1.2 device answers the
/// query with an error: no).
fn supports_svm(device: &ocl::Device) -> bool {
    let mut caps: cl_device_svm_capabilities = 0;
    // SAFETY: the query writes at most `size_of(caps)` bytes into `caps`.
    let status = unsafe {
        clGetDeviceInfo(
            device.as_raw(),
            CL_DEVICE_SVM_CAPABILITIES,
            std::mem::size_of_val(&caps),
            (&mut caps as *mut cl_device_svm_capabilities).cast(),
            std::ptr::null_mut(),
        )
    };
    status == 0 && caps & CL_DEVICE_SVM_COARSE_GRAIN_BUFFER != 0
}

impl Buffer<u64> {
    /// A memory object of `len` words (uninitialised).
    pub(super) fn mem(context: &ocl::Context, queue: &Queue, len: usize) -> Result<Self> {
        let mem = ocl::Buffer::<u64>::builder()
            .context(context)
            .len(len)
            .build()?;
        Ok(Buffer {
            words: Words::Mem(mem),
            queue: queue.clone(),
            _word: PhantomData,
        })
    }

    /// An SVM allocation of `len` words on `context` (uninitialised), as one buffer.
    pub(super) fn svm(context: &Arc<SharedContext>, queue: &Queue, len: usize) -> Result<Self> {
        let calls = SVM_CALLS.lock();
        // SAFETY: a plain allocation on a live context; a null answer is an error below, and
        // `SvmAlloc` frees it once.
        let ptr = unsafe {
            clSVMAlloc(
                context.context.as_ptr(),
                CL_MEM_READ_WRITE,
                len * WORD_BYTES,
                0,
            )
        };
        drop(calls);
        let ptr = NonNull::new(ptr.cast::<u64>()).ok_or_else(|| {
            Error::OutOfMemory(format!(
                "clSVMAlloc of {len} words ({} B) failed",
                len * WORD_BYTES
            ))
        })?;
        Ok(Buffer {
            words: Words::Svm {
                alloc: Arc::new(SvmAlloc {
                    ptr,
                    context: context.clone(),
                }),
                offset: 0,
                len,
            },
            queue: queue.clone(),
            _word: PhantomData,
        })
    }

    /// Words in the buffer.
    pub fn len(&self) -> usize {
        match &self.words {
            Words::Mem(mem) => mem.len(),
            Words::Svm { len, .. } => *len,
        }
    }

    /// Whether the buffer holds no words (never: every constructor refuses zero words).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether the words are a region of an SVM allocation (else a memory object).
    pub fn is_svm(&self) -> bool {
        matches!(self.words, Words::Svm { .. })
    }

    /// The queue commands on this buffer use when none is named.
    pub fn default_queue(&self) -> &Queue {
        &self.queue
    }

    pub fn set_default_queue(&mut self, queue: Queue) {
        self.queue = queue;
    }

    /// Words `offset .. offset + len` as a buffer of their own: an OpenCL sub-buffer of a
    /// memory object (a new object), a region of an SVM allocation (no driver call). The
    /// range was checked by the caller.
    pub(super) fn region(&self, offset: usize, len: usize) -> Result<Self> {
        let words = match &self.words {
            Words::Mem(mem) => Words::Mem(mem.create_sub_buffer(None, offset, len)?),
            Words::Svm {
                alloc,
                offset: start,
                ..
            } => Words::Svm {
                alloc: alloc.clone(),
                offset: start + offset,
                len,
            },
        };
        Ok(Buffer {
            words,
            queue: self.queue.clone(),
            _word: PhantomData,
        })
    }

    /// Whether both handles name the same words: the same memory object, or the same
    /// region of one SVM allocation.
    pub(super) fn same_words(&self, other: &Self) -> bool {
        match (&self.words, &other.words) {
            (Words::Mem(a), Words::Mem(b)) => a.as_core().as_ptr() == b.as_core().as_ptr(),
            (
                Words::Svm {
                    alloc: a,
                    offset: x,
                    len: m,
                },
                Words::Svm {
                    alloc: b,
                    offset: y,
                    len: n,
                },
            ) => Arc::ptr_eq(a, b) && x == y && m == n,
            _ => false,
        }
    }

    /// The device address of word `offset` of an SVM region.
    fn svm_ptr(&self, offset: usize) -> Option<*mut c_void> {
        match &self.words {
            Words::Mem(_) => None,
            // SAFETY (of the `add`): the region lies inside its allocation and callers pass
            // offsets inside the region, so the address stays inside the allocation.
            Words::Svm {
                alloc, offset: at, ..
            } => Some(unsafe { alloc.ptr.as_ptr().add(at + offset) }.cast()),
        }
    }

    /// Sets argument `index` of `kernel` to these words.
    ///
    /// # Safety
    /// As [`super::set_arg_raw`]: the kernel declares a global pointer at `index`, and every
    /// argument is set anew before each enqueue.
    pub(super) unsafe fn set_as_arg(&self, kernel: &Kernel, index: u32) -> Result<()> {
        match &self.words {
            Words::Mem(mem) => {
                // SAFETY: the caller's contract.
                unsafe { kernel.set_arg_unchecked(index, ocl::core::ArgVal::mem(mem.as_core())) }?;
                Ok(())
            }
            Words::Svm { .. } => {
                let ptr = self.svm_ptr(0).expect("an SVM region");
                // SAFETY: the caller's contract; the pointer lies in a live allocation, which
                // outlives every command using it (`SvmAlloc::drop`).
                let status =
                    unsafe { clSetKernelArgSVMPointer(kernel.as_core().as_ptr(), index, ptr) };
                check("clSetKernelArgSVMPointer", status)
            }
        }
    }
}

/// Checks the range `offset .. offset + len` against `buf`.
pub(super) fn check_range(what: &str, buf: &Buffer<u64>, offset: usize, len: usize) -> Result<()> {
    match offset.checked_add(len) {
        Some(end) if end <= buf.len() => Ok(()),
        _ => Err(Error::invalid(format!(
            "{what} of {len} words at {offset} exceeds a buffer of {} words",
            buf.len()
        ))),
    }
}

fn check(call: &str, status: i32) -> Result<()> {
    match status {
        0 => Ok(()),
        status => Err(from_status(call, status)),
    }
}

/// The event slot a raw enqueue writes (null for none).
fn event_slot(event: Option<&mut Event>) -> *mut cl_event {
    match event {
        Some(mut event) => (&mut event).alloc_new(),
        None => std::ptr::null_mut(),
    }
}

/// Enqueues on `queue` the copy of `bytes` bytes from `src` to `dst`, either of them SVM or
/// host memory, and waits for it when `blocking`.
///
/// # Safety
/// Both ranges are valid for `bytes` bytes and stay so until the copy has finished (when
/// the call returns if `blocking`, else by its event).
unsafe fn svm_memcpy(
    queue: &Queue,
    blocking: bool,
    dst: *mut c_void,
    src: *const c_void,
    bytes: usize,
    event: Option<&mut Event>,
) -> Result<()> {
    // SAFETY: the caller's contract.
    let status = unsafe {
        clEnqueueSVMMemcpy(
            queue.as_ptr(),
            u32::from(blocking),
            dst,
            src,
            bytes,
            0,
            std::ptr::null(),
            event_slot(event),
        )
    };
    check("clEnqueueSVMMemcpy", status)
}

/// Enqueues on `queue` the copy of `len` words of `src` from `src_offset` to `dst` at
/// `dst_offset` (ranges checked by the caller; within one buffer they do not overlap).
pub(super) fn enqueue_copy(
    queue: &Queue,
    src: &Buffer<u64>,
    src_offset: usize,
    dst: &Buffer<u64>,
    dst_offset: usize,
    len: usize,
    event: Option<&mut Event>,
) -> Result<()> {
    match (&src.words, &dst.words) {
        (Words::Mem(s), Words::Mem(d)) => {
            let mut cmd =
                s.cmd()
                    .queue(queue)
                    .offset(src_offset)
                    .copy(d, Some(dst_offset), Some(len));
            if let Some(event) = event {
                cmd = cmd.enew(event);
            }
            cmd.enq()?;
            Ok(())
        }
        (Words::Svm { .. }, Words::Svm { .. }) => {
            let (s, d) = (
                src.svm_ptr(src_offset).expect("SVM"),
                dst.svm_ptr(dst_offset).expect("SVM"),
            );
            // SAFETY: both ranges lie in live allocations (checked by the caller), which
            // outlive the copy (`SvmAlloc::drop`).
            unsafe { svm_memcpy(queue, false, d, s, len * WORD_BYTES, event) }
        }
        _ => Err(Error::Logic(
            "a copy between an SVM region and a memory object (one context has one kind)".into(),
        )),
    }
}

/// Enqueues on `queue` the filling of `len` words of `buf` from `offset` with `value`.
pub(super) fn enqueue_fill(
    queue: &Queue,
    buf: &Buffer<u64>,
    offset: usize,
    len: usize,
    value: u64,
) -> Result<()> {
    match &buf.words {
        Words::Mem(mem) => {
            mem.cmd()
                .queue(queue)
                .offset(offset)
                .fill(value, Some(len))
                .enq()?;
            Ok(())
        }
        Words::Svm { .. } => {
            let ptr = buf.svm_ptr(offset).expect("SVM");
            // SAFETY: the range lies in a live allocation (checked by the caller); OpenCL
            // copies the pattern before the call returns.
            let status = unsafe {
                clEnqueueSVMMemFill(
                    queue.as_ptr(),
                    ptr,
                    (&value as *const u64).cast(),
                    WORD_BYTES,
                    len * WORD_BYTES,
                    0,
                    std::ptr::null(),
                    std::ptr::null_mut(),
                )
            };
            check("clEnqueueSVMMemFill", status)
        }
    }
}

/// Enqueues on `queue` the copy of words `offset ..` of `buf` into `out`, and waits for it
/// when `blocking`.
///
/// # Safety
/// Unless `blocking`, `out` must stay valid and untouched until the read's event (in
/// `event`) has completed.
pub(super) unsafe fn enqueue_read(
    queue: &Queue,
    buf: &Buffer<u64>,
    offset: usize,
    out: &mut [u64],
    blocking: bool,
    event: Option<&mut Event>,
) -> Result<()> {
    check_range("read", buf, offset, out.len())?;
    match &buf.words {
        Words::Mem(mem) => {
            // SAFETY: the caller's contract for a non-blocking read.
            unsafe {
                let mut cmd = mem.read(out).queue(queue).offset(offset).block(blocking);
                if let Some(event) = event {
                    cmd = cmd.enew(event);
                }
                cmd.enq()?;
            }
            Ok(())
        }
        Words::Svm { .. } => {
            let ptr = buf.svm_ptr(offset).expect("SVM");
            let (dst, bytes) = (out.as_mut_ptr().cast(), std::mem::size_of_val(out));
            // SAFETY: the source range lies in a live allocation (checked above); `out` is
            // valid for its length, and for a non-blocking read the caller keeps it so.
            unsafe { svm_memcpy(queue, blocking, dst, ptr, bytes, event) }
        }
    }
}

/// Enqueues on `queue` the copy of `data` into the start of `buf`, and waits for it when
/// `blocking`.
///
/// # Safety
/// Unless `blocking`, `data` must stay valid and unchanged until the write's event (in
/// `event`) has completed.
pub(super) unsafe fn enqueue_write(
    queue: &Queue,
    buf: &Buffer<u64>,
    data: &[u64],
    blocking: bool,
    event: Option<&mut Event>,
) -> Result<()> {
    check_range("write", buf, 0, data.len())?;
    match &buf.words {
        Words::Mem(mem) => {
            // SAFETY: the caller's contract for a non-blocking write.
            unsafe {
                let mut cmd = mem.write(data).queue(queue).block(blocking);
                if let Some(event) = event {
                    cmd = cmd.enew(event);
                }
                cmd.enq()?;
            }
            Ok(())
        }
        Words::Svm { .. } => {
            let ptr = buf.svm_ptr(0).expect("SVM");
            let (src, bytes) = (data.as_ptr().cast(), std::mem::size_of_val(data));
            // SAFETY: the destination range lies in a live allocation (checked above);
            // `data` is valid for its length, and for a non-blocking write the caller keeps
            // it so.
            unsafe { svm_memcpy(queue, blocking, ptr, src, bytes, event) }
        }
    }
}
