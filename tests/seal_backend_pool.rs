//! Device memory stays bounded in a long-running server.
//!
//! Copies of images share their buffer until one side writes, so a copy costs no
//! allocation and no device copy.
//!
//! A server that never decrypts: 10^4 routed operations, each into a fresh result that dies
//! right after, with no compute frame ever ended. The backend opens no frame implicitly, so
//! every result buffer returns to the pool when its image dies: the pool's misses and the
//! device memory it holds stay flat after the first operations (before, every
//! result was retained by an implicit frame until a decrypt, a fresh `clCreateBuffer` each).

use seal_opencl::config::{Config, DEFAULT_POISON};
use seal_opencl::device::Devices;
use seal_opencl::seal_backend::KeyId;
use seal_opencl_testkit::fixture::{backend_on, BackendParams, BACKEND_N as N};
const OPERATIONS: usize = 10_000;
const WARM_UP: usize = 100;

#[test]
fn results_return_to_the_pool_without_a_frame_end() {
    let params = BackendParams::new();
    let (key_moduli, level) = (&params.key_moduli, params.level());
    let backend = backend_on(Devices::new(Config::from_env().unwrap().device_options()).unwrap());
    let words: Vec<u64> = (0..2 * 2 * N)
        .map(|i| (i as u64 * 7919 + 17) % key_moduli[(i / N) % 2])
        .collect();
    // The pool read is tile 0's: the thread issues there, and its operands live there,
    // however many devices there are.
    backend.bind_thread(0).unwrap();
    let (a, b) = (
        backend.create_image(&words).unwrap(),
        backend.create_image(&words).unwrap(),
    );
    let memcache = backend.devices().tiles()[0].memcache();
    let mut after_warm_up = None;
    for i in 0..OPERATIONS {
        if i == WARM_UP {
            after_warm_up = Some(memcache.stats());
        }
        // A copy (sharing a's buffer) multiplied into a product of 3 polynomials (a buffer).
        let mut x = backend.clone_image(&a).unwrap();
        backend.multiply(&level, &mut x, 2, &b, 2).unwrap();
    }
    let (before, after) = (after_warm_up.unwrap(), memcache.stats());
    assert_eq!(
        after.misses, before.misses,
        "pool misses grew over {OPERATIONS} operations: {before} -> {after}"
    );
    assert_eq!(
        after.peak_bytes_held, before.peak_bytes_held,
        "device memory grew: {before} -> {after}"
    );
    assert!(after.hits >= (OPERATIONS - WARM_UP) as u64, "{after}");
    assert!(
        !backend.devices().frames().is_open(),
        "a frame was opened implicitly"
    );
}

/// A copy shares its original's buffer (copy on write): no pool request, no device copy.
/// An operation that can run out of place (negate) gives the side it writes a new buffer and
/// leaves the other's words; once no copy shares the words it writes in place (no pool
/// request); one that writes in place only (transform_to_ntt) copies shared words on the
/// device first. Pooled buffers poisoned.
#[test]
fn copies_share_buffers_until_written() {
    let params = BackendParams::new();
    let (key_moduli, level) = (&params.key_moduli, params.level());
    let poisoned = Config {
        poison: Some(DEFAULT_POISON),
        ..Config::from_env().unwrap()
    };
    let backend = backend_on(Devices::new(poisoned.device_options()).unwrap());
    // The pool read is tile 0's: the thread issues there however many devices there are.
    backend.bind_thread(0).unwrap();
    let prime = |i: usize| key_moduli[(i / N) % 2];
    let words: Vec<u64> = (0..2 * 2 * N)
        .map(|i| (i as u64 * 7919 + 17) % prime(i))
        .collect();
    let negated: Vec<u64> = (0..words.len())
        .map(|i| (prime(i) - words[i]) % prime(i))
        .collect();
    let download = |image: &seal_opencl::seal_backend::GpuImage| {
        let mut out = vec![0; image.len()];
        backend.download(image, &mut out).unwrap();
        out
    };
    let memcache = backend.devices().tiles()[0].memcache();
    let requests = || {
        let s = memcache.stats();
        s.hits + s.misses
    };

    let a = backend.create_image(&words).unwrap();
    let (before, pooled) = (backend.traffic(), requests());
    let mut copy = backend.clone_image(&a).unwrap();
    let after = backend.traffic();
    assert_eq!(requests(), pooled, "a copy requested a buffer");
    assert_eq!(
        after.device_copies, before.device_copies,
        "a copy ran on the device"
    );
    assert_eq!(after.image_copies, before.image_copies + 1);
    assert_eq!(download(&copy), words);

    backend.negate(&level, &mut copy, 2).unwrap();
    assert_eq!(requests(), pooled + 1, "negating a copy: one new buffer");
    assert_eq!(download(&copy), negated, "the negated copy");
    assert_eq!(download(&a), words, "the original of a negated copy");

    let mut second = backend.clone_image(&copy).unwrap();
    drop(copy);
    backend.negate(&level, &mut second, 2).unwrap();
    assert_eq!(
        requests(),
        pooled + 1,
        "negating words no copy shares: in place"
    );
    assert_eq!(download(&second), words);

    let mut third = backend.clone_image(&a).unwrap();
    backend.transform_to_ntt(&level, &mut third, 2).unwrap();
    assert_eq!(
        backend.traffic().device_copies,
        before.device_copies + 1,
        "a write in place to shared words copies them first"
    );
    assert_eq!(download(&a), words, "the original of a transformed copy");
    assert_ne!(download(&third), words);
}

/// Key vectors are freed when their KSwitchKeys object is destroyed (seal-patch 0006 calls
/// `release_keys` from its destructor), each object's alone; a new version of an object's
/// words replaces its upload instead of adding one.
#[test]
fn keys_are_freed_with_their_object() {
    let params = BackendParams::new();
    let (key_moduli, level) = (&params.key_moduli, params.level());
    let backend = backend_on(Devices::new(Config::from_env().unwrap().device_options()).unwrap());
    // Two keys of 2 polynomials over the 3 key primes, as SEAL stores a RelinKeys entry.
    let words = vec![1u64; 2 * 2 * key_moduli.len() * N];
    let key = |object, index, version| KeyId {
        object,
        index,
        version,
    };
    for (object, index) in [(7, 0), (7, 1), (8, 0)] {
        backend
            .upload_key(&level, key(object, index, 0), 2, &words)
            .unwrap();
    }
    assert_eq!(backend.key_stats().key_vectors, 3);
    backend.upload_key(&level, key(7, 0, 1), 2, &words).unwrap();
    assert_eq!(
        backend.key_stats().key_vectors,
        3,
        "a new version replaces the old upload"
    );
    assert!(backend.has_key(&key(7, 0, 1)) && !backend.has_key(&key(7, 0, 0)));
    backend.release_keys(7);
    assert_eq!(backend.key_stats().key_vectors, 1);
    assert!(backend.has_key(&key(8, 0, 0)) && !backend.has_key(&key(7, 1, 0)));
}

/// A server cycling through many clients' keys: the cache keeps at most its byte cap, the
/// least recently used key vectors go first, and an evicted key is uploaded again on its
/// next use (the caller asks `has_key`, as ffi/residency.cc does, and uploads).
#[test]
fn keys_beyond_the_cap_evict_the_least_recently_used() {
    let params = BackendParams::new();
    let (key_moduli, level) = (&params.key_moduli, params.level());
    let words = vec![1u64; 2 * 2 * key_moduli.len() * N];
    let key_bytes = words.len() as u64 * 8;
    let backend = backend_on(Devices::new(Config::from_env().unwrap().device_options()).unwrap())
        .with_max_key_bytes(3 * key_bytes);
    let key = |object| KeyId {
        object,
        index: 0,
        version: 0,
    };
    for object in 0..3 {
        backend.upload_key(&level, key(object), 2, &words).unwrap();
    }
    // Object 0 used again: 1 is now the least recently used.
    assert!(backend.has_key(&key(0)));
    for object in 3..100 {
        backend.upload_key(&level, key(object), 2, &words).unwrap();
        let stats = backend.key_stats();
        assert!(stats.bytes <= stats.max_bytes, "{stats:?}");
        if object == 3 {
            assert!(
                backend.has_key(&key(0)) && !backend.has_key(&key(1)),
                "LRU order"
            );
        }
    }
    let stats = backend.key_stats();
    assert_eq!((stats.key_vectors, stats.evictions), (3, 97), "{stats:?}");
    assert!(backend.has_key(&key(99)) && !backend.has_key(&key(5)));
}
