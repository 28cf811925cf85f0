//! The soak runs of `seal_opencl_testkit::soak` in small, on PoCL: 20 clients with a key
//! cap of about two clients' keys (`SEAL_OPENCL_MAX_KEY_BYTES`, a cap per device), and a
//! server saving 2000 results without a decrypt. `examples/soak.rs` runs 1000 clients and
//! 10^5 operations on the GPU machine.

use seal_opencl::config::MAX_KEY_BYTES;
use seal_opencl_testkit::fixture::install_with;
use seal_opencl_testkit::soak::{self, Reports, Soak};

/// One client's keys at N = 2^12, primes {40, 30, 30, 50}: relinearization and two Galois
/// keys, 3 key vectors of 3 x 2 polynomials over 4 primes (589824 bytes each).
const CLIENT_KEY_BYTES: u64 = 3 * 589_824;

#[test]
fn clients_and_a_server_keep_device_memory_bounded() {
    install_with(&[(MAX_KEY_BYTES.name, &(2 * CLIENT_KEY_BYTES).to_string())]);
    // The cap is each device's; the counts are summed over the devices.
    let devices = seal_opencl::device_count().unwrap() as u64;
    let mut s = Soak::new(12, &[40, 30, 30, 50], 30, 7).unwrap();
    let mut reports = Vec::new();
    let clients = soak::clients(
        &mut s,
        20,
        Reports::every(5, |done, m| reports.push((done, *m))),
    )
    .unwrap();
    eprintln!("{clients:?}");
    assert_eq!(reports.len(), 4);
    assert_eq!(clients.requests, 40);
    let last = clients.last;
    assert_eq!(last.max_key_bytes, devices * 2 * CLIENT_KEY_BYTES);
    // 8 clients connected and 2 served per round with room for 2: keys were evicted (and
    // uploaded again: every result equals SEAL's), never more than the cap held.
    assert!(last.key_evictions > 0, "{last:?}");
    assert!(clients.peak_key_bytes <= last.max_key_bytes, "{clients:?}");

    let server = soak::server(&mut s, 2000, Reports::every(200, |_, _| {})).unwrap();
    eprintln!("{server:?}");
    assert_eq!(server.operations, 2000);
    assert_eq!(server.last.pool_misses, server.after_warm_up.pool_misses);
    assert!(server.last.pool_hits > server.after_warm_up.pool_hits);
}
