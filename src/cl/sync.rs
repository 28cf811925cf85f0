//! Ordering between queues and events without blocking the host: kernel launches on a
//! chosen queue, barriers, markers, user events and event timestamps. The runtime
//! (memcache, device, profiler) builds on these. And the host's wait for a read
//! ([`read_yielding`]).

use ocl::enums::{ProfilingInfo, ProfilingInfoResult};

use super::issue::drain;
use super::{Context, Event, EventList, Kernel, Queue, Region, SpatialDims};
use crate::error::Result;

impl Context {
    /// A user event: commands that wait on it stay queued until `complete_user_event`.
    /// Tests use it to hold a queue still and observe ordering deterministically.
    pub fn user_event(&self) -> Result<Event> {
        Ok(Event::user(&self.shared.context)?)
    }
}

/// Marks a user event (from `Context::user_event`) complete, releasing its waiters.
pub fn complete_user_event(event: &Event) -> Result<()> {
    Ok(event.set_complete().map_err(ocl::Error::from)?)
}

/// Whether the command behind `event` has finished (a cheap, non-blocking query).
pub fn is_complete(event: &Event) -> Result<bool> {
    Ok(event.is_complete().map_err(ocl::Error::from)?)
}

/// Blocks until `event` has completed.
pub fn wait(event: &Event) -> Result<()> {
    Ok(event.wait_for().map_err(ocl::Error::from)?)
}

/// Copies words `offset ..` of `region` into `out` on `queue` and
/// returns when they are there, without a blocking read: the read is enqueued, the queue
/// flushed, and the read's event polled, the CPU yielded between polls. For the host reads
/// of SEAL objects, which a server's threads issue at once: a blocking read parks the
/// thread in the driver, while yielding lets the other threads issue (REPORT.md has the
/// request rates). A failed read is the error of the final wait.
pub fn read_yielding(region: &Region, queue: &Queue, offset: usize, out: &mut [u64]) -> Result<()> {
    let mut event = Event::empty();
    let at = region.at("read", offset, out.len())?;
    drain(queue)?;
    // SAFETY: the read writes `out` after `enq` returns; `out` stays borrowed by this
    // function until the wait below has seen the read end (complete or failed), and the
    // words lie inside the region (checked above).
    unsafe {
        region
            .buffer()
            .read(&mut *out)
            .queue(queue)
            .offset(at)
            .block(false)
            .enew(&mut event)
            .enq()?;
    }
    // From here `out` must not be given back before the read has ended, whatever fails: a
    // failed flush is reported after the wait.
    let flushed = queue.flush();
    // A failed command's status is an error code, which `is_complete` returns as an error:
    // the loop ends either way, and the wait reports it.
    while !event.is_complete().unwrap_or(true) {
        std::thread::yield_now();
    }
    wait(&event)?;
    Ok(flushed?)
}

/// Whether `a` and `b` are the same OpenCL command queue.
pub fn same_queue(a: &Queue, b: &Queue) -> bool {
    a.as_core().as_ptr() == b.as_core().as_ptr()
}

/// Enqueues `kernel` on `queue` (not the kernel's default queue) over `global` work
/// items, after the launches handed to the queue's issue thread; `event`, if given,
/// receives the launch's event. The kernel's arguments are the caller's to set; the
/// library's launches go through [`super::launch`].
///
/// # Safety
/// Every buffer argument of `kernel` must be large enough for
/// every index the kernel computes from `global` (and `local`).
pub unsafe fn enqueue_on(
    queue: &Queue,
    kernel: &Kernel,
    global: impl Into<SpatialDims>,
    local: Option<SpatialDims>,
    event: Option<&mut Event>,
) -> Result<()> {
    drain(queue)?;
    // SAFETY: the caller's guarantee.
    unsafe { enqueue_raw(queue, kernel, global, local, event) }
}

/// [`enqueue_on`] without draining the queue's issue thread (which the caller did, or is).
///
/// # Safety
/// As for [`enqueue_on`].
pub(super) unsafe fn enqueue_raw(
    queue: &Queue,
    kernel: &Kernel,
    global: impl Into<SpatialDims>,
    local: Option<SpatialDims>,
    event: Option<&mut Event>,
) -> Result<()> {
    let mut cmd = kernel.cmd().queue(queue).global_work_size(global);
    if let Some(local) = local {
        cmd = cmd.local_work_size(local);
    }
    if let Some(event) = event {
        cmd = cmd.enew(event);
    }
    // SAFETY: the caller guarantees the buffer sizes (see `# Safety`); ocl checks that
    // every argument is set.
    unsafe { cmd.enq()? };
    Ok(())
}

/// Makes every command enqueued on `queue` after this call wait for `events`, on the
/// device: the host does not wait. No-op for an empty list.
pub fn enqueue_barrier(queue: &Queue, events: &[Event]) -> Result<()> {
    if events.is_empty() {
        return Ok(());
    }
    drain(queue)?;
    let list = EventList::from(events);
    ocl::core::enqueue_barrier_with_wait_list(
        queue.as_core(),
        Some(&list),
        None::<&mut Event>,
        Some(&queue.device_version()),
    )
    .map_err(ocl::Error::from)?;
    Ok(())
}

/// Makes every command enqueued on `next` after this call start only after every command
/// enqueued on `prev` so far, and every event in `also`, has completed. The host does
/// not wait: a marker on `prev` and a barrier on `next` carry the dependency. When
/// `next` is `prev` (in-order), only `also` needs a barrier.
pub fn order_after(next: &Queue, prev: &Queue, also: &[Event]) -> Result<()> {
    if same_queue(next, prev) {
        return enqueue_barrier(next, also);
    }
    let marker = marker(prev)?;
    let mut events = Vec::with_capacity(also.len() + 1);
    events.extend_from_slice(also);
    events.push(marker);
    enqueue_barrier(next, &events)
}

/// A marker on `queue`: its event completes once every command enqueued on the queue
/// before it has.
pub fn marker(queue: &Queue) -> Result<Event> {
    drain(queue)?;
    Ok(queue.enqueue_marker::<&EventList>(None)?)
}

/// Waits for every command of `queue`, those handed to its issue thread included.
pub fn finish(queue: &Queue) -> Result<()> {
    drain(queue)?;
    Ok(queue.finish()?)
}

/// The four device timestamps of a completed, profiled command, in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct EventTimes {
    pub queued: u64,
    pub submit: u64,
    pub start: u64,
    pub end: u64,
}

/// The timestamps of a completed event from a queue created with profiling.
pub fn event_times(event: &Event) -> Result<EventTimes> {
    let get = |what: ProfilingInfo| -> Result<u64> {
        // Every variant carries one timestamp; the driver answers the one asked for.
        match event.profiling_info(what)? {
            ProfilingInfoResult::Queued(t)
            | ProfilingInfoResult::Submit(t)
            | ProfilingInfoResult::Start(t)
            | ProfilingInfoResult::End(t) => Ok(t),
        }
    };
    Ok(EventTimes {
        queued: get(ProfilingInfo::Queued)?,
        submit: get(ProfilingInfo::Submit)?,
        start: get(ProfilingInfo::Start)?,
        end: get(ProfilingInfo::End)?,
    })
}

/// The name a kernel was built under (used by the profiler to group launches).
pub fn kernel_name(kernel: &Kernel) -> Result<String> {
    Ok(kernel.name()?)
}
