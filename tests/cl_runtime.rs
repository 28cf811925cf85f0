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

/// Copies, fills, reads and writes of regions land at the regions' offsets in their
/// buffer and nowhere else; ranges past a region's end and copies between overlapping
/// words are errors; overlap and same start are seen within one buffer only.
#[test]
fn transfers_of_regions_work_at_their_offsets() {
    const POISON: u64 = 0xDEAD_BEEF_DEAD_BEEF;
    let ctx = Context::new(&DeviceSelector::Default).unwrap();
    let q = ctx.queue(false).unwrap();
    let whole = ctx.buffer(&q, 1024).unwrap();
    cl::poison(&q, &whole, POISON).unwrap();
    let (a, b) = (whole.part(100, 50).unwrap(), whole.part(300, 50).unwrap());
    let data: Vec<u64> = (1..=40).collect();
    cl::write(&q, &a, 5, &data).unwrap();
    cl::copy_range(&q, &a, 5, &b, 2, 40).unwrap();
    cl::fill_range(&q, &b, 45, 5, 9).unwrap();
    let mut want = vec![POISON; 1024];
    want[105..145].copy_from_slice(&data);
    want[302..342].copy_from_slice(&data);
    want[345..350].fill(9);
    assert_eq!(cl::download(&q, &whole).unwrap(), want);
    let mut got = vec![0; 40];
    cl::read(&q, &b, 2, &mut got).unwrap();
    assert_eq!(got, data);
    got.fill(0);
    cl::read_yielding(&b, &q, 2, &mut got).unwrap();
    assert_eq!(got, data);

    // A whole-region copy between regions of two buffers, into a region at an offset.
    let other = ctx.buffer(&q, 200).unwrap();
    cl::poison(&q, &other, 0).unwrap();
    let c = other.part(64, 50).unwrap();
    cl::copy(&q, &b, &c, None).unwrap();
    let copied = cl::download(&q, &other).unwrap();
    assert_eq!(copied[64..114], want[300..350]);
    assert!(copied[..64].iter().chain(&copied[114..]).all(|&w| w == 0));

    assert!(
        cl::write(&q, &a, 45, &data[..6]).is_err(),
        "past the region"
    );
    assert!(cl::read(&q, &a, 11, &mut got).is_err(), "past the region");
    assert!(a.part(40, 11).is_err() && a.part(0, 0).is_err());
    assert!(
        cl::copy(&q, &a, &whole.part(120, 50).unwrap(), None).is_err(),
        "overlap"
    );
    assert!(cl::copy_range(&q, &a, 0, &a, 10, 20).is_err(), "overlap");
    assert!(
        cl::copy(&q, &a, &c.part(0, 49).unwrap(), None).is_err(),
        "lengths"
    );
    let inside = a.part(10, 5).unwrap();
    assert_eq!((inside.offset(), inside.words()), (110, 5));
    assert!(a.overlaps(&inside) && !a.same_start(&inside) && !a.overlaps(&b));
    assert!(a.same_start(&whole.part(100, 1).unwrap()));
    assert!(!c.overlaps(&whole.part(64, 50).unwrap()), "another buffer");
    assert_eq!(
        cl::download(&q, &whole).unwrap(),
        want,
        "nothing written by an error"
    );
}
