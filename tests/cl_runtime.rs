//! The OpenCL runtime: device choice, program cache, build errors, buffers.

use seal_opencl::cl::{self, Context, DeviceSelector};
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

#[test]
fn kernel_writes_every_word_of_a_poisoned_buffer() {
    let ctx = Context::new(&DeviceSelector::Default).unwrap();
    let q = ctx.queue(false).unwrap();
    let src = "__kernel void k(__global ulong *x) { x[get_global_id(0)] = get_global_id(0) * 3; }";
    let program = ctx.program(&[src], "").unwrap();
    let n = 4096;
    let buf = ctx.buffer(&q, n).unwrap();
    cl::poison(&q, &buf, 0xDEAD_BEEF_DEAD_BEEF).unwrap();
    let kernel = cl::Kernel::builder()
        .program(&program)
        .name("k")
        .queue(q.clone())
        .arg(buf.buffer())
        .build()
        .unwrap();
    // SAFETY: the kernel writes x[gid] for gid < n and the buffer holds n words.
    unsafe { cl::enqueue(&kernel, n, None, None).unwrap() };
    let out = cl::download(&q, &buf).unwrap();
    assert!(out.iter().enumerate().all(|(i, &v)| v == i as u64 * 3));
}
