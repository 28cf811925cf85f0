//! Every tile through SEAL: threads bound to different tiles (`bind_thread_to_device`)
//! run every routed operation, and ciphertexts, plaintexts and keys made on one tile are used
//! on another (handed over a channel, no synchronize), every result identical to SEAL's CPU
//! result. Two tiles: two GPUs where the machine has them, else the CPU device (PoCL) split
//! into two sub-devices, as `tests/device.rs` makes them.

use std::sync::mpsc;
use std::thread;

use seal_opencl::config::Config;
use seal_opencl::device::DeviceSet;
use seal_opencl_testkit::fixture::*;
use seal_opencl_testkit::harness::*;
use seal_opencl_testkit::seal_c::*;

/// Two tiles for the backend this process installs: two GPUs (where the settings use as
/// many), or the CPU device split in two.
fn two_tiles() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let mut gpus = seal_opencl::cl::list_devices()
            .unwrap()
            .iter()
            .filter(|d| d.is_gpu)
            .count();
        if let DeviceSet::Only(chosen) = Config::from_env().unwrap().devices {
            gpus = gpus.min(chosen.len());
        }
        if gpus < 2 {
            use seal_opencl::config::{DEVICE, TILES};
            install_with(&[(DEVICE.name, "cpu"), (TILES.name, "2")]);
        } else {
            install();
        }
        assert_eq!(seal_opencl::device_count().unwrap(), 2, "two tiles");
    });
}

/// N = 2^13 with five primes: two rescales and key switching at every level but the last.
fn fixture() -> Fixture {
    two_tiles();
    Fixture::with_params(8192, &[50, 40, 40, 40, 40], 40)
}

/// Each tile, from its own thread at the same time, runs every routed operation.
#[test]
fn every_operation_on_each_tile_matches_seal() {
    two_tiles();
    let threads: Vec<_> = (0..2)
        .map(|tile| {
            thread::spawn(move || {
                seal_opencl::bind_thread_to_device(tile).unwrap();
                check_operations(&fixture(), &format!("tile {tile}"));
            })
        })
        .collect();
    threads.into_iter().for_each(|t| t.join().unwrap());
}

/// What one step of a chain hands to the next thread: the fixture (keys, evaluator), the
/// ciphertexts and the plaintext, all still on the device of the tile that made them.
struct Hand {
    fx: Fixture,
    a: Ciphertext,
    b: Ciphertext,
    p: Plaintext,
}

/// MulLinRS, multiply_plain, add, rotate and conjugate as a chain whose steps run on tiles
/// `first`, `second`, `first`, `second`: every step's operands were written on the other
/// tile, and the host waits for nothing in between (each thread hands its results over a
/// channel right after issuing). Keys are uploaded to each tile on their first use there.
fn chain_across_tiles(first: i32, second: i32) {
    let fx = fixture();
    let mut rng = rng();
    let (a, b, p) = fx.operands(&mut rng);

    let mut cpu = a.clone();
    let steps: [Op; 4] = [
        |f, a, b, _| {
            f.evaluator.multiply_inplace(a, b).unwrap();
            f.evaluator.relinearize_inplace(a, &f.relin).unwrap();
            f.evaluator.rescale_to_next_inplace(a).unwrap();
        },
        |f, a, b, p| {
            let mut b = b.clone();
            f.evaluator.mod_switch_to_next_inplace(&mut b).unwrap();
            b.set_scale(a.scale());
            f.evaluator.add_inplace(a, &b).unwrap();
            let mut p = p.try_clone().unwrap();
            f.evaluator
                .mod_switch_to_next_plain_inplace(&mut p)
                .unwrap();
            p.set_scale(1.0);
            f.evaluator.multiply_plain_inplace(a, &p).unwrap();
        },
        |f, a, _, _| f.evaluator.rotate_vector_inplace(a, 5, &f.galois).unwrap(),
        |f, a, _, _| {
            f.evaluator.complex_conjugate_inplace(a, &f.galois).unwrap();
            f.evaluator.square_inplace(a).unwrap();
            f.evaluator.relinearize_inplace(a, &f.relin).unwrap();
        },
    ];
    for step in steps {
        step(&fx, &mut cpu, &b, &p);
    }

    let hand = Hand {
        fx,
        a: on_gpu(&a),
        b: on_gpu(&b),
        p: plain_on_gpu(&p),
    };
    // One thread per tile, each running its steps as the hand reaches it. Marked operands
    // are uploaded by the first routed call that uses them, on its thread's tile: a and b
    // by the first step, p by the second.
    let (to_first, first_rx) = mpsc::channel::<Hand>();
    let (to_second, second_rx) = mpsc::channel::<Hand>();
    let (to_main, main_rx) = mpsc::channel::<Hand>();
    let worker =
        |tile: i32, mine: [usize; 2], rx: mpsc::Receiver<Hand>, next: [mpsc::Sender<Hand>; 2]| {
            thread::spawn(move || {
                seal_opencl::bind_thread_to_device(tile).unwrap();
                for (i, next) in mine.into_iter().zip(next) {
                    let mut h = rx.recv().unwrap();
                    steps[i](&h.fx, &mut h.a, &h.b, &h.p);
                    next.send(h).unwrap();
                }
            })
        };
    let threads = [
        worker(first, [0, 2], first_rx, [to_second.clone(), to_second]),
        worker(second, [1, 3], second_rx, [to_first.clone(), to_main]),
    ];
    to_first.send(hand).unwrap();
    let hand = main_rx.recv().unwrap();
    threads.into_iter().for_each(|t| t.join().unwrap());
    assert_same_decryption(
        &hand.fx,
        &cpu,
        &hand.a,
        &format!("chain on tiles {first}, {second}, {first}, {second}"),
    );
    assert_no_cpu_fallback();
}

#[test]
fn operands_from_tile_0_are_used_on_tile_1() {
    chain_across_tiles(0, 1);
}

#[test]
fn operands_from_tile_1_are_used_on_tile_0() {
    chain_across_tiles(1, 0);
}

/// A bad index is `invalid_argument`, and the thread keeps working on the tile it had.
#[test]
fn a_bad_device_index_is_an_error() {
    two_tiles();
    let thread = thread::spawn(|| {
        seal_opencl::bind_thread_to_device(1).unwrap();
        for bad in [2, -1, i32::MAX] {
            let err = seal_opencl::bind_thread_to_device(bad).expect_err("no such device");
            assert!(
                err.what().contains("invalid_argument") || err.what().contains("does not exist"),
                "{bad}: {}",
                err.what()
            );
        }
        let fx = fixture();
        let mut rng = rng();
        let a = fx.encrypt(&mut rng);
        let mut cpu = a.clone();
        fx.evaluator.square_inplace(&mut cpu).unwrap();
        let mut gpu = on_gpu(&a);
        fx.evaluator.square_inplace(&mut gpu).unwrap();
        assert_same(&cpu, &gpu, "square after a bad bind");
    });
    thread.join().unwrap();
}
