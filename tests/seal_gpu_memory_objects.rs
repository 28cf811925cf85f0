//! Device words as OpenCL memory objects (`SEAL_OPENCL_SVM=off`, as on a context of several
//! devices or a device without SVM) keep the bit-exact rule: every routine on `.gpu()`
//! ciphertexts gives SEAL's CPU words, in place and into new ciphertexts (pool misses carve
//! sub-buffers). The rest of the suite runs with SVM regions where the device shares SVM.
//! Its own test binary, because the setting is the process's backend's.

use seal_opencl_testkit::routines::{Routine, Workload};

#[test]
fn routines_on_memory_objects_match_seal() {
    use seal_opencl::config::SVM;
    seal_opencl_testkit::fixture::install_with(&[(SVM.name, "off")]);
    let memory = seal_opencl::ffi::installed_device_memory().unwrap();
    assert!(!memory.svm_words, "the setting was not applied");
    let mut rng = seal_opencl_testkit::harness::rng();
    let w = Workload::new(8192, &[50, 40, 40, 40, 40], 40).unwrap();
    let (a, b) = (
        w.encrypt_random(&mut rng).unwrap(),
        w.encrypt_random(&mut rng).unwrap(),
    );
    let gpu = seal_opencl_testkit::fixture::on_gpu;
    for routine in Routine::ALL {
        let mut cpu = a.try_clone().unwrap();
        routine.run(&w, &mut cpu, &b).unwrap();
        // Twice on new objects: the first takes new buffers from the pool, the second
        // buffers given back by the first.
        for round in 0..2 {
            let mut dev = gpu(&a);
            routine.run(&w, &mut dev, &gpu(&b)).unwrap();
            assert!(dev.on_gpu(), "{}: lost its device mark", routine.name());
            assert!(
                cpu.data().unwrap() == dev.data().unwrap(),
                "{} (round {round}): words differ",
                routine.name()
            );
        }
    }
    assert!(
        seal_opencl::ffi::cpu_fallbacks().is_empty(),
        "ran on the CPU: {:?}",
        seal_opencl::ffi::cpu_fallbacks()
    );
}
