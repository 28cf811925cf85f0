//! Keys through SEAL with a small key cap (`SEAL_OPENCL_MAX_KEY_BYTES`, the setting the
//! backend of this process is installed with): a server cycling through clients, each with
//! its own relinearization and Galois keys, keeps at most the cap on the device, evicts the
//! least recently used keys and uploads them again when a client comes back; every result is
//! SEAL's CPU result. A soak test in small.

use seal_opencl::config::MAX_KEY_BYTES;
use seal_opencl_testkit::fixture::*;
use seal_opencl_testkit::seal_c::*;

/// Room for about two key vectors of the fixture (N = 2^12, 3 key primes, 2 keys of 2
/// polynomials: 393216 bytes each).
const CAP: &str = "800000";

#[test]
fn clients_cycle_through_a_small_key_cap() {
    // A cap that is not a positive number of bytes is refused when installing.
    let err = seal_opencl::ffi::install_backend_with(&[(MAX_KEY_BYTES.name, "lots")])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(MAX_KEY_BYTES.name) && err.contains("lots"),
        "{err}"
    );
    install_with(&[(MAX_KEY_BYTES.name, CAP)]);
    let devices = seal_opencl::device_count().unwrap() as u64;
    let memory = || seal_opencl::ffi::installed_device_memory().unwrap();
    assert_eq!(
        memory().max_key_bytes,
        devices * CAP.parse::<u64>().unwrap(),
        "a cap per device"
    );
    let (fx, mut rng) = Fixture::with_rng();
    let (a, b) = (fx.encrypt(&mut rng), fx.encrypt(&mut rng));
    let clients: Vec<(RelinKeys, GaloisKeys)> = (0..5)
        .map(|_| {
            let keygen = KeyGenerator::new(&fx.ctx).unwrap();
            (
                keygen.relin_keys().unwrap(),
                keygen.galois_keys_from_steps(&[1]).unwrap(),
            )
        })
        .collect();
    for round in 0..3 {
        for (client, (relin, galois)) in clients.iter().enumerate() {
            let (mut cpu, mut gpu) = (a.clone(), on_gpu(&a));
            for x in [&mut cpu, &mut gpu] {
                fx.evaluator.multiply_inplace(x, &b).unwrap();
                fx.evaluator.relinearize_inplace(x, relin).unwrap();
                fx.evaluator.rotate_vector_inplace(x, 1, galois).unwrap();
            }
            assert_same(&cpu, &gpu, &format!("round {round}, client {client}"));
        }
    }
    assert!(
        memory().key_evictions > 0,
        "five clients' keys never fit the cap"
    );
    assert_no_cpu_fallback();
}
