//! The encoding kernels (`opencl/encode.cl` through `ckks::encode::EncodeKernels`) equal
//! their host references (`ckks::encode::fft_from_rev`, `round_to_residues`) word for word:
//! random complex values and unit roots at N = 2^1 .. 2^13 (one block of values, several,
//! and the blocks' size limit), with coefficients of 20 to 61 bits, positive and negative,
//! and halves among them; outputs poisoned and guarded. SEAL's own encodings are compared
//! with the device's in `seal_gpu_encode.rs`. Bad arguments are `InvalidArgument` errors.

use rand::rngs::StdRng;
use rand::Rng;
use seal_opencl::arith::Modulus;
use seal_opencl::ckks::encode::{
    coefficients_fit, fft_from_rev, modulus_bits_at_least, round_to_residues, EncodeKernels,
};
use seal_opencl::ckks::kernels::ModuliTable;
use seal_opencl::cl::Region;
use seal_opencl::config::Config;
use seal_opencl::device::{DeviceOptions, Devices, Graph, Partition};
use seal_opencl::ErrorKind;
use seal_opencl_testkit::guarded::{down, poisoned, upload};
use seal_opencl_testkit::harness::{primes, rng};

fn devices() -> Devices {
    Devices::new(DeviceOptions {
        selector: Config::from_env().unwrap().device,
        partition: Partition::WholeDevices,
        ..Default::default()
    })
    .expect("devices")
}

fn words(values: &[f64]) -> Vec<u64> {
    values.iter().map(|v| v.to_bits()).collect()
}

/// N unit roots e^(i theta), random angles: the transform's arithmetic, not SEAL's table.
fn unit_roots(rng: &mut StdRng, n: usize) -> Vec<u64> {
    let angles: Vec<f64> = (0..n)
        .map(|_| rng.gen_range(0.0..std::f64::consts::TAU))
        .collect();
    words(
        &angles
            .iter()
            .flat_map(|a| [a.cos(), a.sin()])
            .collect::<Vec<_>>(),
    )
}

/// N random complex values in the unit square, every eighth an exact small integer pair
/// (so that halves occur after the scaling below), and the fix scaling them to coefficients
/// of about `bits` bits.
fn values_for(rng: &mut StdRng, n: usize, bits: i32) -> (Vec<u64>, f64) {
    let values: Vec<f64> = (0..2 * n)
        .map(|i| {
            if i % 8 == 0 {
                f64::from(rng.gen_range(-3..=3))
            } else {
                rng.gen_range(-1.0..1.0)
            }
        })
        .collect();
    (words(&values), f64::powi(2.0, bits) / (n as f64))
}

/// The device's encoding of `values` against the host references', for each prime count.
fn check(graph: &Graph, kernels: &EncodeKernels, moduli: &[Modulus], log_n: u32, rng: &mut StdRng) {
    let n = 1usize << log_n;
    let table = ModuliTable::new(graph.context(), graph.queue(), moduli).unwrap();
    let roots = unit_roots(rng, n);
    let device_roots = kernels.roots(graph.queue(), &roots).unwrap();
    for bits in [20, 40, 50, 58] {
        let (values, fix) = values_for(rng, n, bits);
        let mut expected = values.clone();
        fft_from_rev(&mut expected, &roots, fix);
        assert!(
            coefficients_fit(&values, fix, 200),
            "test values too large at {bits} bits"
        );
        for k in [1, moduli.len()] {
            let mut residues = vec![0u64; k * n];
            round_to_residues(&expected, &moduli[..k], &mut residues);
            let z = upload(graph, &values);
            let dst = poisoned(graph, k * n);
            kernels
                .encode(graph, &z, &device_roots, fix, &dst, &table, k)
                .unwrap();
            let got = down(graph, &dst);
            let first = got.iter().zip(&residues).position(|(a, b)| a != b);
            assert!(
                first.is_none(),
                "N = 2^{log_n}, {bits}-bit coefficients, K = {k}: word {} differs ({:#x} != {:#x})",
                first.unwrap(),
                got[first.unwrap()],
                residues[first.unwrap()]
            );
        }
    }
}

#[test]
fn encoding_kernels_equal_the_host_references() {
    let devices = devices();
    let graph = devices.graph();
    if !graph.context().info().fp64 {
        eprintln!("the device has no doubles (cl_khr_fp64): SEAL's CPU encodes");
        return;
    }
    let mut rng = rng();
    for log_n in [1, 2, 5, 11, 12, 13] {
        let kernels = EncodeKernels::new(graph.context(), log_n).unwrap();
        let moduli = primes(log_n.max(4), &[60, 40, 50]);
        check(&graph, &kernels, &moduli, log_n, &mut rng);
    }
}

#[test]
fn bad_arguments_are_errors() {
    let devices = devices();
    let graph = devices.graph();
    if !graph.context().info().fp64 {
        return;
    }
    let log_n = 5;
    let n = 1usize << log_n;
    let kernels = EncodeKernels::new(graph.context(), log_n).unwrap();
    let moduli = primes(log_n, &[40, 40]);
    let table = ModuliTable::new(graph.context(), graph.queue(), &moduli).unwrap();
    let roots = kernels.roots(graph.queue(), &vec![0; 2 * n]).unwrap();
    let z = poisoned(&graph, 2 * n);
    let dst = poisoned(&graph, 2 * n);
    let short = poisoned(&graph, 2 * n - 1);
    let cases: [(&str, &Region, &Region, usize); 5] = [
        ("K = 0", &z, &dst, 0),
        ("K beyond the table", &z, &dst, 3),
        ("dst is values", &z, &z, 1),
        ("values short", &short, &dst, 1),
        ("dst short for K = 2", &z, &short, 2),
    ];
    for (what, values, out, k) in cases {
        let err = kernels
            .encode(&graph, values, &roots, 1.0, out, &table, k)
            .expect_err(what);
        assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{what}: {err}");
    }
    assert_eq!(modulus_bits_at_least(&moduli), 79);
    assert!(EncodeKernels::new(graph.context(), 18).is_err());
}
