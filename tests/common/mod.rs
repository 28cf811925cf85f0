//! Helpers shared by the runtime tests: tiny kernels written for the tests (the real
//! NTT and CKKS kernels live elsewhere), their host references, and a watchdog that
//! keeps a test from hanging when the code under test waits where it must not.
#![allow(dead_code)] // each test binary uses its own subset

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use seal_opencl::cl::{self, Buffer, Context, Event, Kernel, Queue};

/// `fill`: x[i] = v ^ i. `spin`: `rounds` steps of an LCG per word (compute-heavy and
/// impossible to fold away), so a launch takes measurable time.
pub const KERNELS: &str = r#"
__kernel void fill(__global ulong *x, ulong v) {
    size_t i = get_global_id(0);
    x[i] = v ^ i;
}
__kernel void spin(__global ulong *x, uint rounds) {
    size_t i = get_global_id(0);
    ulong v = x[i];
    for (uint r = 0; r < rounds; ++r) {
        v = v * 6364136223846793005UL + 1442695040888963407UL;
        v ^= v >> 29;
    }
    x[i] = v;
}
"#;

pub fn fill_host(v: u64, words: usize) -> Vec<u64> {
    (0..words as u64).map(|i| v ^ i).collect()
}

pub fn spin_host(x: &mut [u64], rounds: u32) {
    for w in x.iter_mut() {
        let mut v = *w;
        for _ in 0..rounds {
            v = v
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            v ^= v >> 29;
        }
        *w = v;
    }
}

/// A kernel from [`KERNELS`] with placeholder arguments, to be set per launch.
pub fn kernel(ctx: &Context, queue: &Queue, name: &str) -> Kernel {
    let program = ctx.program(&[KERNELS], "").expect("test kernels build");
    let mut b = Kernel::builder();
    b.program(&program).name(name).queue(queue.clone());
    b.arg(None::<&Buffer<u64>>);
    match name {
        "fill" => b.arg(0u64),
        _ => b.arg(0u32),
    };
    b.build().expect("kernel")
}

/// Enqueues `fill` of `words` words of `buf` with `v` on `queue`; returns its event.
pub fn enqueue_fill(k: &Kernel, queue: &Queue, buf: &Buffer<u64>, words: usize, v: u64) -> Event {
    assert!(words <= buf.len());
    k.set_arg(0, buf).unwrap();
    k.set_arg(1, v).unwrap();
    let mut ev = Event::empty();
    // SAFETY: `fill` writes x[i] for i < words, and the buffer holds at least `words`.
    unsafe { cl::enqueue_on(queue, k, words, None, Some(&mut ev)).unwrap() };
    ev
}

/// Enqueues `spin` over `words` words of `buf` on `queue`; returns its event.
pub fn enqueue_spin(
    k: &Kernel,
    queue: &Queue,
    buf: &Buffer<u64>,
    words: usize,
    rounds: u32,
) -> Event {
    assert!(words <= buf.len());
    k.set_arg(0, buf).unwrap();
    k.set_arg(1, rounds).unwrap();
    let mut ev = Event::empty();
    // SAFETY: `spin` touches x[i] for i < words, and the buffer holds at least `words`.
    unsafe { cl::enqueue_on(queue, k, words, None, Some(&mut ev)).unwrap() };
    ev
}

/// Holds `queue` still: nothing enqueued on it afterwards runs until `release`.
pub struct Blocker {
    event: Event,
    released: Arc<AtomicBool>,
    by_watchdog: Arc<AtomicBool>,
}

impl Blocker {
    /// Blocks `queue`. If the test has not released it after `timeout` (because the code
    /// under test waited on the blocked work), a watchdog releases it so the test ends,
    /// and [`Blocker::release`] then fails the test.
    pub fn new(ctx: &Context, queue: &Queue, timeout: Duration) -> Blocker {
        let event = ctx.user_event().unwrap();
        cl::enqueue_barrier(queue, std::slice::from_ref(&event)).unwrap();
        let released = Arc::new(AtomicBool::new(false));
        let by_watchdog = Arc::new(AtomicBool::new(false));
        {
            let (event, released, by_watchdog) =
                (event.clone(), released.clone(), by_watchdog.clone());
            std::thread::spawn(move || {
                let step = Duration::from_millis(20);
                let mut waited = Duration::ZERO;
                while waited < timeout {
                    if released.load(Ordering::Acquire) {
                        return;
                    }
                    std::thread::sleep(step);
                    waited += step;
                }
                if !released.swap(true, Ordering::AcqRel) {
                    by_watchdog.store(true, Ordering::Release);
                    cl::complete_user_event(&event).unwrap();
                }
            });
        }
        Blocker {
            event,
            released,
            by_watchdog,
        }
    }

    /// Lets the queue run. Panics if the watchdog had to do it.
    pub fn release(&self) {
        if !self.released.swap(true, Ordering::AcqRel) {
            cl::complete_user_event(&self.event).unwrap();
        }
        assert!(
            !self.by_watchdog.load(Ordering::Acquire),
            "the host waited on a blocked queue: the watchdog had to release it"
        );
    }
}

impl Drop for Blocker {
    /// A test that failed before `release` must not leave the queue blocked.
    fn drop(&mut self) {
        if !self.released.swap(true, Ordering::AcqRel) {
            let _ = cl::complete_user_event(&self.event);
        }
    }
}

/// Whether `event` is still incomplete after giving the device `ms` milliseconds.
pub fn still_pending_after(event: &Event, ms: u64) -> bool {
    std::thread::sleep(Duration::from_millis(ms));
    !cl::is_complete(event).unwrap()
}
