//! The OpenCL runtime: device choice, program cache, build errors, buffers.

use std::sync::{Arc, Mutex, MutexGuard};

use seal_opencl::cl::{self, ArgType, Context, DeviceSelector, KernelArg, KernelSig};
use seal_opencl::Error;

#[test]
fn default_device_is_found_and_described() {
    let ctx = Context::new(&DeviceSelector::Default).expect("an OpenCL device");
    let info = ctx.info();
    assert!(!info.name.is_empty());
    assert!(info.max_work_group_size >= 1);
}

#[test]
fn unknown_index_lists_available_devices() {
    let err = match Context::new(&DeviceSelector::Index(99, 0)) {
        Err(e) => e,
        Ok(_) => panic!("platform 99 should not exist"),
    };
    match &err {
        Error::NoDevice { available, .. } => {
            let first = &cl::list_devices().unwrap()[0];
            assert!(available.contains(&first.device_name), "{err}");
        }
        other => panic!("expected NoDevice, got {other:?}"),
    }
}

#[test]
fn programs_are_cached_and_build_errors_carry_the_log() {
    let ctx = Context::new(&DeviceSelector::Default).unwrap();
    let src = "__kernel void k(__global ulong *x) { x[get_global_id(0)] = FILL; }";
    let a = ctx.program(&[src], "-D FILL=7").unwrap();
    let b = ctx.program(&[src], "-D FILL=7").unwrap();
    assert_eq!(
        a.as_core().as_ptr(),
        b.as_core().as_ptr(),
        "second request must hit the cache"
    );
    let c = ctx.program(&[src], "-D FILL=8").unwrap();
    assert_ne!(
        a.as_core().as_ptr(),
        c.as_core().as_ptr(),
        "options are part of the key"
    );

    let broken = "__kernel void k(__global ulong *x) { x[0] = undefined_name_xyz; }";
    match ctx.program(&[broken], "") {
        Err(Error::ProgramBuild { log, .. }) => {
            assert!(
                log.contains("undefined_name_xyz"),
                "log should name the error: {log}"
            )
        }
        Err(other) => panic!("expected ProgramBuild, got {other:?}"),
        Ok(_) => panic!("broken source must not build"),
    }
}

/// The default device's context with each kind of device words: SVM regions where the
/// device shares SVM (PoCL and NVIDIA's driver do), and memory objects. One test at a time
/// holds them, since one context of a process at a time may use SVM.
fn each_kind_of_words() -> (MutexGuard<'static, ()>, [Arc<Context>; 2]) {
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let contexts = [
        Context::new(&DeviceSelector::Default).unwrap(),
        Context::without_svm(&DeviceSelector::Default).unwrap(),
    ];
    (guard, contexts)
}

const WRITE_TRIPLE: &str =
    "__kernel void k(__global ulong *x) { x[get_global_id(0)] = get_global_id(0) * 3; }";
const K: KernelSig = KernelSig {
    name: "k",
    params: &[("x", ArgType::Buf)],
};

/// Enqueues K's `kernel` on `q` over the first `n` words of `buf`.
fn write_triple(q: &cl::Queue, kernel: &cl::Kernel, buf: &cl::Buffer<u64>, n: usize) {
    assert!(n <= buf.len());
    // SAFETY: `kernel` was built from K, whose one argument is set here; it writes x[gid]
    // for gid < n, inside the buffer.
    unsafe {
        K.set(kernel, &[("x", KernelArg::Buf(buf))], &[]).unwrap();
        cl::enqueue_on(q, kernel, n, None, None).unwrap();
    }
}

#[test]
fn kernel_writes_every_word_of_a_poisoned_buffer() {
    let (_one_at_a_time, contexts) = each_kind_of_words();
    for ctx in contexts {
        let q = ctx.queue(false).unwrap();
        let program = ctx.program(&[WRITE_TRIPLE], "").unwrap();
        let n = 4096;
        let buf = ctx.buffer(&q, n).unwrap();
        assert_eq!(buf.is_svm(), ctx.uses_svm());
        cl::poison(&buf, 0xDEAD_BEEF_DEAD_BEEF).unwrap();
        write_triple(&q, &K.build(&program, &[]).unwrap(), &buf, n);
        let out = cl::download(&buf).unwrap();
        assert!(
            out.iter().enumerate().all(|(i, &v)| v == i as u64 * 3),
            "{buf:?}"
        );
    }
}

/// Regions (sub-buffers) of a buffer: a kernel given a region writes only its words, and
/// copies, fills and reads address words by region; `same_buffer` tells regions apart.
#[test]
fn regions_of_a_buffer_are_buffers_of_their_own() {
    let (_one_at_a_time, contexts) = each_kind_of_words();
    for ctx in contexts {
        let q = ctx.queue(false).unwrap();
        let program = ctx.program(&[WRITE_TRIPLE], "").unwrap();
        let kernel = K.build(&program, &[]).unwrap();
        let (n, align) = (4096, 1024);
        let whole = ctx.upload(&q, &vec![7; 3 * n]).unwrap();
        let (a, b) = (
            cl::sub_buffer(&whole, align, n).unwrap(),
            cl::sub_buffer(&whole, align + n, n).unwrap(),
        );
        assert!(cl::same_buffer(&a, &cl::sub_buffer(&whole, align, n).unwrap()) || !ctx.uses_svm());
        assert!(!cl::same_buffer(&a, &b) && !cl::same_buffer(&a, &whole));
        write_triple(&q, &kernel, &a, n);
        cl::copy(&q, &a, &b, None).unwrap();
        cl::fill_range(&q, &b, 1, 2, 5).unwrap();
        cl::copy_range(&q, &b, 0, &whole, 0, 4).unwrap();
        let mut want = vec![7; 3 * n];
        for i in 0..n {
            want[align + i] = i as u64 * 3;
            want[align + n + i] = if i == 1 || i == 2 { 5 } else { i as u64 * 3 };
        }
        want[..4].copy_from_slice(&[0, 5, 5, 9]);
        q.finish().unwrap();
        assert_eq!(cl::download(&whole).unwrap(), want, "{whole:?}");
        let mut head = vec![0; 3];
        cl::read(&b, &mut head).unwrap();
        assert_eq!(head, [0, 5, 5]);
        assert!(
            cl::sub_buffer(&whole, 2 * n + 1, n).is_err(),
            "past the end"
        );
    }
}

/// Device words freed while a command still uses them: the command finishes first (an SVM
/// allocation waits for its context's queues; a memory object is kept by the command).
#[test]
fn words_dropped_while_a_kernel_runs_stay_until_it_ends() {
    let (_one_at_a_time, contexts) = each_kind_of_words();
    for ctx in contexts {
        let q = ctx.queue(false).unwrap();
        let program = ctx.program(&[WRITE_TRIPLE], "").unwrap();
        let kernel = K.build(&program, &[]).unwrap();
        let held = ctx.user_event().unwrap();
        cl::enqueue_barrier(&q, std::slice::from_ref(&held)).unwrap();
        let n = 1 << 16;
        let buf = ctx.buffer(&q, n).unwrap();
        write_triple(&q, &kernel, &buf, n);
        let release = std::thread::spawn(move || {
            std::thread::sleep(std::time::Duration::from_millis(50));
            cl::complete_user_event(&held).unwrap();
        });
        drop(buf);
        q.finish().unwrap();
        release.join().unwrap();
    }
}
