//! The benchmarks' naive baseline switches (`SEAL_OPENCL_FUSED=0`: the tensor product as
//! separate dyadic-product and add kernels; `SEAL_OPENCL_MEMCACHE=off`: no buffer pool)
//! keep the bit-exact rule: multiply (2 x 2 and 3 x 2 polynomials), square and MulLin on
//! `.gpu()` ciphertexts give SEAL's CPU words. Its own test binary, because the switches
//! are the process's backend's settings.

use seal_opencl_testkit::routines::{Routine, Workload};
use seal_opencl_testkit::seal_c::Ciphertext;

#[test]
fn unfused_tensor_without_memcache_matches_seal() {
    use seal_opencl::config::{FUSED, MEMCACHE};
    seal_opencl_testkit::fixture::install_with(&[(FUSED.name, "0"), (MEMCACHE.name, "off")]);
    let mut rng = seal_opencl_testkit::harness::rng();
    let w = Workload::new(8192, &[60, 40, 40, 60], 40).unwrap();
    let ev = &w.evaluator;
    let (a, b) = (
        w.encrypt_random(&mut rng).unwrap(),
        w.encrypt_random(&mut rng).unwrap(),
    );
    let gpu = seal_opencl_testkit::fixture::on_gpu;
    let same = |cpu: &Ciphertext, dev: &Ciphertext, what: &str| {
        assert!(dev.on_gpu(), "{what}: lost its device mark");
        assert_eq!(cpu.size(), dev.size(), "{what}: size");
        assert!(
            cpu.data().unwrap() == dev.data().unwrap(),
            "{what}: words differ"
        );
    };

    // 2 x 2, then the size-3 product times a size-2 ciphertext (3 x 2, four outputs).
    let (mut c, mut g) = (a.try_clone().unwrap(), gpu(&a));
    ev.multiply_inplace(&mut c, &b).unwrap();
    ev.multiply_inplace(&mut g, &gpu(&b)).unwrap();
    same(&c, &g, "multiply 2 x 2");
    ev.multiply_inplace(&mut c, &b).unwrap();
    ev.multiply_inplace(&mut g, &gpu(&b)).unwrap();
    same(&c, &g, "multiply 3 x 2");

    let (mut c, mut g) = (a.try_clone().unwrap(), gpu(&a));
    ev.square_inplace(&mut c).unwrap();
    ev.square_inplace(&mut g).unwrap();
    same(&c, &g, "square");

    let (mut c, mut g) = (a.try_clone().unwrap(), gpu(&a));
    Routine::MulLin.run(&w, &mut c, &b).unwrap();
    Routine::MulLin.run(&w, &mut g, &gpu(&b)).unwrap();
    same(&c, &g, "MulLin");
    assert!(
        seal_opencl::ffi::cpu_fallbacks().is_empty(),
        "ran on the CPU: {:?}",
        seal_opencl::ffi::cpu_fallbacks()
    );
}
