//! Helpers shared by the runtime tests: tiny kernels written for the tests (the real
//! NTT and CKKS kernels live elsewhere), their host references, and a watchdog that
//! keeps a test from hanging when the code under test waits where it must not.
#![allow(dead_code)] // each test binary uses its own subset

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use seal_opencl::cl::{self, ArgType, Context, Event, Kernel, KernelArg, KernelSig, Queue, Region};

/// `fill`: x[i] = v ^ i. `spin`: `rounds` steps of an LCG per word (compute-heavy and
/// impossible to fold away), so a launch takes measurable time.
pub const KERNELS: &str = r#"
__kernel void fill(__global ulong *x, ulong x_at, ulong v) {
    x += x_at;
    size_t i = get_global_id(0);
    x[i] = v ^ i;
}
__kernel void spin(__global ulong *x, ulong x_at, uint rounds) {
    x += x_at;
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

pub const FILL: KernelSig = KernelSig {
    name: "fill",
    params: &[("x", ArgType::Buf), ("v", ArgType::U64)],
};
pub const SPIN: KernelSig = KernelSig {
    name: "spin",
    params: &[("x", ArgType::Buf), ("rounds", ArgType::U32)],
};

/// A kernel from [`KERNELS`] (`fill` or `spin`) with `queue` as its default queue and
/// placeholder arguments, to be set per launch ([`set_fill`], [`set_spin`]).
pub fn kernel(ctx: &Context, queue: &Queue, name: &str) -> Kernel {
    let program = ctx.program(&[KERNELS], "").expect("test kernels build");
    let sig = if name == "fill" { &FILL } else { &SPIN };
    let mut k = sig.build(&program, &[]).expect("kernel");
    k.set_default_queue(queue.clone());
    k
}

/// Sets the arguments of a `fill` kernel from [`kernel`]: `region`, `v`.
pub fn set_fill(k: &Kernel, region: &Region, v: u64) {
    let args = [("x", KernelArg::Buf(region)), ("v", KernelArg::U64(v))];
    // SAFETY: `k` was built from FILL; each launch sets the arguments anew.
    unsafe { FILL.set(k, &args, &[]) }.unwrap();
}

/// Sets the arguments of a `spin` kernel from [`kernel`]: `region`, `rounds`.
pub fn set_spin(k: &Kernel, region: &Region, rounds: u32) {
    let args = [
        ("x", KernelArg::Buf(region)),
        ("rounds", KernelArg::U32(rounds)),
    ];
    // SAFETY: `k` was built from SPIN; each launch sets the arguments anew.
    unsafe { SPIN.set(k, &args, &[]) }.unwrap();
}

/// Enqueues `fill` of `words` words of `buf` with `v` on `queue`; returns its event.
pub fn enqueue_fill(k: &Kernel, queue: &Queue, buf: &Region, words: usize, v: u64) -> Event {
    assert!(words <= buf.words());
    set_fill(k, buf, v);
    let mut ev = Event::empty();
    // SAFETY: `fill` writes x[i] for i < words, and the region holds at least `words`.
    unsafe { cl::enqueue_on(queue, k, words, None, Some(&mut ev)).unwrap() };
    ev
}

/// Enqueues `spin` over `words` words of `buf` on `queue`; returns its event.
pub fn enqueue_spin(k: &Kernel, queue: &Queue, buf: &Region, words: usize, rounds: u32) -> Event {
    assert!(words <= buf.words());
    set_spin(k, buf, rounds);
    let mut ev = Event::empty();
    // SAFETY: `spin` touches x[i] for i < words, and the region holds at least `words`.
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
