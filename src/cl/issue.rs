//! A queue's issue thread (the `issue_thread` setting, on by default): kernel launches
//! handed to a thread of the queue's own, which sets their arguments and enqueues them in the
//! order they were handed over, so that the driver's enqueue (NVIDIA's OpenCL: 7-16 us a
//! launch, see docs/ARCHITECTURE.md "Queues and threads") runs beside the caller's own work
//! instead of inside it.
//!
//! The invariant: commands reach the queue in the order of the calls that issued them.
//! A launch without an event goes to the thread ([`launch`]); every other command on the
//! queue (copies, fills, reads, writes, markers, barriers, a launch whose event the caller
//! keeps, a wait for the queue) first drains the thread ([`drain`]: returns once every
//! launch handed over before it has been enqueued) and is then enqueued by its caller. A
//! launch holds its buffers (`Arc`s) until it is enqueued, and the enqueued command holds
//! them on the device (OpenCL 1.2 section 5.2.2), so a buffer dropped by its caller
//! meanwhile stays alive.
//!
//! Errors: the caller binds the arguments against the kernel's signature (a mismatch is its
//! call's error), and the buffers a launch uses were allocated, their first use paid, on the
//! caller's thread (`Memcache`: a device out of memory is the allocating call's error). What
//! is left to fail at the enqueue is the driver or the device (a lost device, the driver
//! out of host memory), which only the device can know. A launch the thread fails to
//! enqueue fails the queue: the launches handed over after it are dropped unenqueued (they
//! would read a result that was never computed), and every later launch, drain, read or
//! wait on the queue returns the driver's error (`runtime_error` across the bridge). No word
//! of the failed launch's result or of a later one reaches the host; the queue's images are
//! lost, as after a lost device. With the setting off, each launch is enqueued by its caller
//! and its error is its call's.

use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam::channel::{self, Receiver, Sender, TryRecvError};
use parking_lot::{Condvar, Mutex, RwLock};

use super::{
    apply_args, enqueue_raw, same_queue, BoundArg, Event, Kernel, KernelArg, KernelSig, Queue,
    SpatialDims,
};
use crate::error::{Error, Result};

/// A kernel behind the lock held from setting a launch's arguments to its enqueue (OpenCL
/// captures arguments at the enqueue), shared with the issue threads that launch it.
pub type SharedKernel = Arc<Mutex<Kernel>>;

/// A kernel built elsewhere, made shareable.
pub fn shared_kernel(kernel: Kernel) -> SharedKernel {
    Arc::new(Mutex::new(kernel))
}

/// Launches handed over and not yet enqueued, at most: a caller this far ahead waits for
/// the thread (the driver itself blocks at about a thousand pending commands).
const BACKLOG: usize = 1024;

/// How long the thread polls an empty hand-over, and a caller a thread that has not yet
/// enqueued what it waits for, before sleeping: a caller's next launch usually follows
/// within microseconds, and a launch takes the thread about ten; a sleeping thread wakes
/// later than that.
const POLL: Duration = Duration::from_micros(200);

/// What the thread is handed: a launch, or the end.
enum Message {
    Launch(Launch),
    Stop,
}

/// One launch handed over: the kernel, its bound arguments, its range.
struct Launch {
    kernel: SharedKernel,
    args: Vec<(u32, BoundArg)>,
    global: SpatialDims,
    local: Option<SpatialDims>,
}

impl Launch {
    fn enqueue(&self, queue: &Queue) -> Result<()> {
        let kernel = self.kernel.lock();
        // SAFETY: the arguments were bound and checked against the kernel's signature by
        // the caller of `launch`, whose contract (every index in range) they carry; they
        // are set here, under the kernel's lock, right before its enqueue.
        unsafe {
            apply_args(&kernel, &self.args)?;
            enqueue_raw(queue, &kernel, self.global, self.local, None)
        }
    }
}

/// The issue thread of one queue and what it has done.
struct Issuer {
    queue: Queue,
    sender: Sender<Message>,
    /// Launches handed over so far (counted before each is sent).
    handed: AtomicU64,
    /// Launches the thread has taken off the hand-over (enqueued, or dropped after a
    /// failure).
    done: AtomicU64,
    /// Whether `failure` holds a message: the queue is failed from then on.
    failed: AtomicBool,
    /// The first failure's message.
    failure: Mutex<Option<String>>,
    /// Callers asleep in [`Issuer::drain`]; the thread wakes them after each launch.
    sleepers: AtomicUsize,
    advanced: Condvar,
}

impl Issuer {
    fn check(&self) -> Result<()> {
        if !self.failed.load(Ordering::Acquire) {
            return Ok(());
        }
        let failure = self.failure.lock();
        Err(Error::OpenCl(format!(
            "a kernel launch issued earlier on this queue failed, and the queue with it: {}",
            failure.as_deref().unwrap_or("")
        )))
    }

    /// Waits until every launch handed over before the call has been taken: polling for
    /// up to [`POLL`] (a launch takes the thread about 10 us; a sleeping caller wakes
    /// later than that), then asleep.
    fn drain(&self) -> Result<()> {
        let target = self.handed.load(Ordering::SeqCst);
        let started = Instant::now();
        while self.done.load(Ordering::SeqCst) < target {
            if started.elapsed() > POLL {
                self.sleep_until(target);
                break;
            }
            std::hint::spin_loop();
        }
        self.check()
    }

    fn sleep_until(&self, target: u64) {
        let mut failure = self.failure.lock();
        self.sleepers.fetch_add(1, Ordering::SeqCst);
        while self.done.load(Ordering::SeqCst) < target {
            self.advanced.wait(&mut failure);
        }
        self.sleepers.fetch_sub(1, Ordering::SeqCst);
    }

    fn submit(&self, launch: Launch) -> Result<()> {
        self.check()?;
        self.handed.fetch_add(1, Ordering::SeqCst);
        self.sender
            .send(Message::Launch(launch))
            .map_err(|_| Error::Logic("the queue's issue thread has stopped".into()))
    }

    fn run(&self, receiver: Receiver<Message>) {
        loop {
            let launch = match next(&receiver) {
                Some(Message::Launch(launch)) => launch,
                Some(Message::Stop) | None => return,
            };
            let result = match self.failed.load(Ordering::Acquire) {
                true => Ok(()),
                false => launch.enqueue(&self.queue),
            };
            drop(launch);
            if let Err(e) = result {
                tracing::error!(error = %e, "a launch on the issue thread failed; the queue fails");
                self.failure.lock().get_or_insert(e.to_string());
                self.failed.store(true, Ordering::Release);
            }
            self.done.fetch_add(1, Ordering::SeqCst);
            if self.sleepers.load(Ordering::SeqCst) > 0 {
                // Under the lock: a sleeper checks `done` and sleeps under it, so it either
                // sees this launch or is asleep when notified.
                let _failure = self.failure.lock();
                self.advanced.notify_all();
            }
        }
    }
}

/// The next message, polling for up to [`POLL`] before sleeping; None once every sender is
/// gone.
fn next(receiver: &Receiver<Message>) -> Option<Message> {
    let started = Instant::now();
    while started.elapsed() < POLL {
        match receiver.try_recv() {
            Ok(message) => return Some(message),
            Err(TryRecvError::Disconnected) => return None,
            Err(TryRecvError::Empty) => std::hint::spin_loop(),
        }
    }
    receiver.recv().ok()
}

/// Every running issue thread; `RUNNING` counts them, so that a process without any pays
/// one load per command.
static ISSUERS: RwLock<Vec<Arc<Issuer>>> = RwLock::new(Vec::new());
static RUNNING: AtomicUsize = AtomicUsize::new(0);

fn issuer_of(queue: &Queue) -> Option<Arc<Issuer>> {
    if RUNNING.load(Ordering::Acquire) == 0 {
        return None;
    }
    ISSUERS
        .read()
        .iter()
        .find(|i| same_queue(&i.queue, queue))
        .cloned()
}

/// A queue's issue thread, running while this lives; dropping it unregisters it (the
/// queue is then issued on by its callers again) and joins it once it has enqueued every
/// launch handed over.
pub struct IssueThread {
    issuer: Arc<Issuer>,
    thread: Option<JoinHandle<()>>,
}

impl IssueThread {
    /// Starts `queue`'s issue thread. Errors: the queue has one already; the thread could
    /// not be spawned.
    pub fn start(queue: &Queue) -> Result<IssueThread> {
        let (sender, receiver) = channel::bounded(BACKLOG);
        let issuer = Arc::new(Issuer {
            queue: queue.clone(),
            sender,
            handed: AtomicU64::new(0),
            done: AtomicU64::new(0),
            failed: AtomicBool::new(false),
            failure: Mutex::new(None),
            sleepers: AtomicUsize::new(0),
            advanced: Condvar::new(),
        });
        {
            let mut issuers = ISSUERS.write();
            if issuers.iter().any(|i| same_queue(&i.queue, queue)) {
                return Err(Error::Logic("the queue has an issue thread already".into()));
            }
            issuers.push(issuer.clone());
            RUNNING.fetch_add(1, Ordering::AcqRel);
        }
        let running = issuer.clone();
        let thread = std::thread::Builder::new()
            .name("seal-opencl-issue".into())
            .spawn(move || running.run(receiver));
        match thread {
            Ok(thread) => Ok(IssueThread {
                issuer,
                thread: Some(thread),
            }),
            Err(e) => {
                unregister(&issuer);
                Err(Error::OpenCl(format!(
                    "could not start an issue thread: {e}"
                )))
            }
        }
    }
}

fn unregister(issuer: &Arc<Issuer>) {
    let mut issuers = ISSUERS.write();
    if let Some(at) = issuers.iter().position(|i| Arc::ptr_eq(i, issuer)) {
        issuers.swap_remove(at);
        RUNNING.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Drop for IssueThread {
    fn drop(&mut self) {
        unregister(&self.issuer);
        // The thread holds a sender itself (its issuer's), so the hand-over stays open: it
        // enqueues what was handed over before this message, then stops.
        let _ = self.issuer.sender.send(Message::Stop);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// Waits until every launch handed to `queue`'s issue thread has been enqueued (at once
/// without one). Errors: the queue failed (see the module's doc).
pub fn drain(queue: &Queue) -> Result<()> {
    match issuer_of(queue) {
        Some(issuer) => issuer.drain(),
        None => Ok(()),
    }
}

/// Sets `args` (every parameter of `sig` but those named in `preset`, set when the kernel
/// was built; see [`KernelSig::set`]) on `kernel` and enqueues it on `queue` over `global`
/// work items (work groups of `local`); `event`, if given, receives the launch's event.
/// Where the queue has an issue thread and no event is wanted, the arguments are bound here
/// (checked against the signature, buffers held) and the thread sets them and enqueues;
/// else the caller does, after draining the thread.
///
/// # Safety
/// `kernel` was built from `sig` ([`KernelSig::build`]), and every buffer argument is large
/// enough for every index the kernel computes from `global` (and `local`).
#[allow(clippy::too_many_arguments)] // a launch's parts
pub unsafe fn launch<'a, 'b: 'a>(
    queue: &Queue,
    kernel: &SharedKernel,
    sig: &KernelSig,
    args: impl IntoIterator<Item = &'a (&'a str, KernelArg<'b>)>,
    preset: &[&str],
    global: impl Into<SpatialDims>,
    local: Option<SpatialDims>,
    event: Option<&mut Event>,
) -> Result<()> {
    let args = sig.bind(args, preset)?;
    let global = global.into();
    if event.is_none() {
        if let Some(issuer) = issuer_of(queue) {
            return issuer.submit(Launch {
                kernel: kernel.clone(),
                args,
                global,
                local,
            });
        }
    } else {
        drain(queue)?;
    }
    let kernel = kernel.lock();
    // SAFETY: the arguments were checked against `sig`, the kernel's signature (this
    // function's contract), and are set under the kernel's lock right before the enqueue;
    // the ranges are the caller's contract.
    unsafe {
        apply_args(&kernel, &args)?;
        enqueue_raw(queue, &kernel, global, local, event)
    }
}
