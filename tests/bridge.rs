//! The SEAL bridges: every function of the test kit's oracle (`seal_opencl_testkit::oracle`)
//! against plain u128 arithmetic, the crate's own host arithmetic (`seal_opencl::arith`,
//! written apart from SEAL's C++ and checked against u128 arithmetic in tests/arith.rs) or a
//! naive oracle, the library bridge's C++ -> Rust direction and its error path, and SEAL's C
//! API through `sys`.
//!
//! Random inputs are fresh each run; the seed is printed so a failure can be replayed
//! with `BRIDGE_SEED=<seed>`.

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use seal_opencl::arith::{is_prime, pow_uint_mod, Modulus};
use seal_opencl::cl::{self, DeviceSelector};
use seal_opencl::config::Config;
use seal_opencl::ffi;
use seal_opencl_testkit::{oracle, sys};

fn rng(test: &str) -> StdRng {
    let seed = std::env::var("BRIDGE_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| rand::thread_rng().gen());
    eprintln!("{test}: BRIDGE_SEED={seed}");
    StdRng::seed_from_u64(seed)
}

fn mul_mod(a: u64, b: u64, q: u64) -> u64 {
    ((a as u128 * b as u128) % q as u128) as u64
}

fn pow_mod(base: u64, exp: u64, q: u64) -> u64 {
    pow_uint_mod(base, exp, &Modulus::new(q).unwrap())
}

fn bit_len(x: u64) -> u32 {
    64 - x.leading_zeros()
}

fn reverse_bits(i: usize, bits: i32) -> usize {
    i.reverse_bits() >> (usize::BITS - bits as u32)
}

/// One NTT-friendly prime (1 mod 2n) of each size, from SEAL itself.
fn ntt_primes(log_n: i32, bit_sizes: &[i32]) -> Vec<u64> {
    bit_sizes
        .iter()
        .map(|&bits| oracle::seal_get_primes(2 << log_n, bits, 1).unwrap()[0])
        .collect()
}

/// Moduli of 17 to 61 bits (SEAL's Modulus limit), primes and not.
fn test_moduli() -> Vec<u64> {
    let mut moduli = ntt_primes(10, &[17, 20, 30, 31, 32, 33, 40, 50, 59, 60]);
    moduli.extend([3, 65537, (1 << 61) - 1, (1 << 60) + 12345, 0xffff_ffff]);
    moduli
}

fn edge_values(q: u64) -> Vec<u64> {
    vec![
        0,
        1,
        q - 1,
        q,
        q + 1,
        2 * q - 1,
        u64::MAX / 2,
        u64::MAX - 1,
        u64::MAX,
    ]
}

#[test]
fn barrett_reduction_matches_u128() {
    let mut rng = rng("barrett");
    for q in test_moduli() {
        let mut xs = edge_values(q);
        xs.extend((0..200).map(|_| rng.gen::<u64>()));
        for &x in &xs {
            assert_eq!(
                oracle::seal_barrett_reduce_64(x, q).unwrap(),
                x % q,
                "x={x} q={q}"
            );
        }
        for &lo in &xs {
            for hi in [0, 1, q - 1, rng.gen::<u64>() % q, rng.gen()] {
                let want = (((hi as u128) << 64 | lo as u128) % q as u128) as u64;
                assert_eq!(
                    oracle::seal_barrett_reduce_128(lo, hi, q).unwrap(),
                    want,
                    "lo={lo} hi={hi} q={q}"
                );
            }
        }
    }
}

#[test]
fn multiplication_mod_q_matches_u128() {
    let mut rng = rng("multiply");
    for q in test_moduli() {
        let mut ys: Vec<u64> = vec![0, 1, q - 1];
        ys.extend((0..50).map(|_| rng.gen_range(0..q)));
        let mut xs = edge_values(q);
        xs.extend((0..50).map(|_| rng.gen::<u64>()));
        for &y in &ys {
            let quotient = oracle::seal_shoup_quotient(y, q).unwrap();
            assert_eq!(
                quotient as u128,
                ((y as u128) << 64) / q as u128,
                "y={y} q={q}"
            );
            for &x in &xs {
                let want = mul_mod(x, y, q);
                assert_eq!(
                    oracle::seal_multiply_uint_mod(x, y, q).unwrap(),
                    want,
                    "x={x} y={y} q={q}"
                );
                assert_eq!(
                    oracle::seal_multiply_uint_mod_shoup(x, y, quotient, q).unwrap(),
                    want,
                    "x={x} y={y} q={q}"
                );
            }
        }
    }
}

#[test]
fn arithmetic_rejects_what_seal_debug_would_reject() {
    for err in [
        oracle::seal_barrett_reduce_64(5, 0).unwrap_err(),
        oracle::seal_barrett_reduce_128(5, 0, 1).unwrap_err(),
        oracle::seal_multiply_uint_mod(1, 1, 1 << 62).unwrap_err(),
        oracle::seal_shoup_quotient(17, 17).unwrap_err(),
        oracle::seal_multiply_uint_mod_shoup(1, 20, 0, 17).unwrap_err(),
    ] {
        assert!(!err.what().is_empty());
    }
    assert!(oracle::seal_shoup_quotient(17, 17)
        .unwrap_err()
        .what()
        .contains("less than the modulus"));
}

#[test]
fn get_primes_gives_distinct_primes_one_mod_factor_of_the_asked_size() {
    for (factor, bit_size, count) in [
        (2u64 << 12, 17, 2),
        (2 << 12, 30, 5),
        (2 << 15, 50, 8),
        (2 << 16, 60, 4),
    ] {
        let primes = oracle::seal_get_primes(factor, bit_size, count).unwrap();
        assert_eq!(primes.len(), count);
        assert!(
            primes.windows(2).all(|w| w[0] > w[1]),
            "largest first, no repeats: {primes:?}"
        );
        for &p in &primes {
            assert!(is_prime(p), "{p}");
            assert_eq!(p % factor, 1, "{p} mod {factor}");
            assert_eq!(bit_len(p), bit_size as u32, "{p}");
        }
    }
    assert!(oracle::seal_get_primes(2 << 12, 62, 1)
        .unwrap_err()
        .what()
        .contains("bit_size"));
    assert!(oracle::seal_get_primes(0, 30, 1).is_err());
    // Only a few 17-bit primes are 1 mod 2^14.
    let err = oracle::seal_get_primes(2 << 13, 17, 100).unwrap_err();
    assert!(
        err.what()
            .contains("failed to find enough qualifying primes"),
        "{}",
        err.what()
    );
}

#[test]
fn coeff_modulus_create_follows_the_bit_sizes() {
    let sizes = [60, 40, 40, 60];
    let moduli = oracle::seal_coeff_modulus_create(8192, &sizes).unwrap();
    assert_eq!(moduli.len(), sizes.len());
    for (&q, &bits) in moduli.iter().zip(&sizes) {
        assert!(is_prime(q));
        assert_eq!(bit_len(q), bits as u32);
        assert_eq!(q % (2 * 8192), 1);
    }
    let mut sorted = moduli.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!(sorted.len(), moduli.len(), "distinct");
    assert!(oracle::seal_coeff_modulus_create(8192, &[61]).is_err());
    assert!(oracle::seal_coeff_modulus_create(3000, &[40]).is_err());
}

#[test]
fn ntt_tables_hold_powers_of_a_primitive_root_in_seal_order() {
    for log_n in [1, 4, 10, 13] {
        let n = 1usize << log_n;
        for q in ntt_primes(log_n, &[17, 30, 45, 60]) {
            let t = oracle::seal_ntt_tables(log_n, q).unwrap();
            let shoup = |op: u64| (((op as u128) << 64) / q as u128) as u64;
            assert_eq!(
                pow_mod(t.root, n as u64, q),
                q - 1,
                "root is a primitive 2n-th root"
            );
            assert_eq!(mul_mod(t.root, t.inv_root, q), 1);
            assert_eq!(mul_mod(t.inv_degree, n as u64, q), 1);
            assert_eq!(t.inv_degree_quotient, shoup(t.inv_degree));
            for table in [
                &t.root_powers,
                &t.root_powers_quotient,
                &t.inv_root_powers,
                &t.inv_root_powers_quotient,
            ] {
                assert_eq!(table.len(), n);
            }
            assert_eq!((t.root_powers[0], t.inv_root_powers[0]), (1, 1));
            for i in 1..n {
                assert_eq!(
                    t.root_powers[reverse_bits(i, log_n)],
                    pow_mod(t.root, i as u64, q),
                    "i={i}"
                );
                assert_eq!(
                    t.inv_root_powers[reverse_bits(i - 1, log_n) + 1],
                    pow_mod(t.inv_root, i as u64, q)
                );
            }
            for i in 0..n {
                assert_eq!(t.root_powers_quotient[i], shoup(t.root_powers[i]));
                assert_eq!(t.inv_root_powers_quotient[i], shoup(t.inv_root_powers[i]));
            }
        }
    }
}

#[test]
fn ntt_forward_then_inverse_is_the_identity() {
    let mut rng = rng("ntt round trip");
    for log_n in [1, 5, 12, 15] {
        for q in ntt_primes(log_n, &[20, 50, 60]) {
            let original: Vec<u64> = (0..1usize << log_n).map(|_| rng.gen_range(0..q)).collect();
            let mut data = original.clone();
            oracle::seal_ntt_forward(log_n, q, &mut data).unwrap();
            assert_ne!(data, original, "log_n={log_n} q={q}");
            assert!(data.iter().all(|&c| c < q), "forward output fully reduced");
            oracle::seal_ntt_inverse(log_n, q, &mut data).unwrap();
            assert_eq!(data, original, "log_n={log_n} q={q}");
        }
    }
}

#[test]
fn ntt_of_the_constant_one_is_all_ones() {
    for log_n in [3, 13] {
        for q in ntt_primes(log_n, &[30, 60]) {
            let mut data = vec![0u64; 1 << log_n];
            data[0] = 1;
            oracle::seal_ntt_forward(log_n, q, &mut data).unwrap();
            assert!(data.iter().all(|&c| c == 1), "log_n={log_n} q={q}");
        }
    }
}

/// a * b mod (X^n + 1, q) from the definition: coefficient k sums a_i b_j over i + j = k
/// and subtracts it over i + j = k + n (X^n = -1).
fn negacyclic_product(a: &[u64], b: &[u64], q: u64) -> Vec<u64> {
    let n = a.len();
    (0..n)
        .map(|k| {
            (0..n).fold(0, |c, i| {
                let (j, wraps) = if i <= k {
                    (k - i, false)
                } else {
                    (k + n - i, true)
                };
                let p = mul_mod(a[i], b[j], q);
                if wraps {
                    (c + q - p) % q
                } else {
                    (c + p) % q
                }
            })
        })
        .collect()
}

/// A product in the NTT domain must be the negacyclic convolution, whatever order the
/// NTT uses: this catches wrong twiddles that a round trip cannot.
#[test]
fn ntt_pointwise_product_is_the_negacyclic_convolution() {
    let mut rng = rng("ntt convolution");
    for log_n in [2, 6, 9] {
        let n = 1usize << log_n;
        for q in ntt_primes(log_n, &[25, 60]) {
            let a: Vec<u64> = (0..n).map(|_| rng.gen_range(0..q)).collect();
            let b: Vec<u64> = (0..n).map(|_| rng.gen_range(0..q)).collect();
            let want = negacyclic_product(&a, &b, q);
            let (mut fa, mut fb) = (a.clone(), b.clone());
            oracle::seal_ntt_forward(log_n, q, &mut fa).unwrap();
            oracle::seal_ntt_forward(log_n, q, &mut fb).unwrap();
            let mut product: Vec<u64> = fa
                .iter()
                .zip(&fb)
                .map(|(&x, &y)| mul_mod(x, y, q))
                .collect();
            oracle::seal_ntt_inverse(log_n, q, &mut product).unwrap();
            assert_eq!(product, want, "log_n={log_n} q={q}");
        }
    }
}

#[test]
fn ntt_rejects_bad_input_and_leaves_data_alone() {
    let q = ntt_primes(4, &[30])[0];
    let mut short = vec![1u64; 15];
    assert!(oracle::seal_ntt_forward(4, q, &mut short)
        .unwrap_err()
        .what()
        .contains("coefficients"));
    let mut unreduced = vec![q; 16];
    assert!(oracle::seal_ntt_inverse(4, q, &mut unreduced).is_err());
    assert_eq!(unreduced, vec![q; 16]);
    // 103 is prime but not 1 mod 32.
    assert!(oracle::seal_ntt_tables(4, 103)
        .unwrap_err()
        .what()
        .contains("invalid modulus"));
    for log_n in [0, 18, -1] {
        assert!(oracle::seal_ntt_tables(log_n, q)
            .unwrap_err()
            .what()
            .contains("coeff_count_power"));
    }
}

#[test]
fn cpp_calls_rust_for_the_device_description() {
    let expected = Config::from_env()
        .map(|c| c.device)
        .unwrap()
        .resolve()
        .unwrap()
        .to_string();
    assert_eq!(ffi::describe_backend("").unwrap(), expected);
    let probe = ffi::probe_backend("");
    assert!(probe.ok);
    assert_eq!(probe.text, expected);
    let first = &cl::list_devices().unwrap()[0];
    let selector = format!("{}:{}", first.platform_index, first.device_index);
    assert_eq!(ffi::describe_backend(&selector).unwrap(), first.to_string());
}

#[test]
fn a_rust_error_reaches_cpp_as_rust_error_with_its_message() {
    let wanted = "not-a-device"
        .parse::<DeviceSelector>()
        .unwrap_err()
        .to_string();
    // C++ catches rust::Error and hands back what().
    let probe = ffi::probe_backend("not-a-device");
    assert!(!probe.ok);
    assert_eq!(probe.text, wanted);
    // Uncaught in C++, the same exception comes back to Rust as an Err.
    assert_eq!(
        ffi::describe_backend("not-a-device").unwrap_err().what(),
        wanted
    );

    let probe = ffi::probe_backend("99:0");
    assert!(!probe.ok);
    assert!(
        probe.text.contains("no OpenCL device matches"),
        "{}",
        probe.text
    );
}

/// Checks an HRESULT of SEAL's C API.
fn ok(hr: std::os::raw::c_long, call: &str) {
    assert_eq!(hr, 0, "{call} returned HRESULT {hr:#x}");
}

#[test]
fn c_api_builds_a_valid_ckks_context() {
    const CKKS: u8 = 2; // seal::scheme_type::ckks
    const TC128: i32 = 128; // seal::sec_level_type::tc128
    let mut bit_sizes = [60, 40, 40, 60];
    let mut moduli = [std::ptr::null_mut(); 4];
    let mut params = std::ptr::null_mut();
    let mut context = std::ptr::null_mut();
    let mut values = [0u64; 4];
    let mut params_set = false;
    let mut name = [0u8; 64];
    let mut name_len = 0u64;
    // SAFETY: every pointer passed is either a live local of the size the C API
    // writes through it (4 moduli for 4 bit sizes, a 64-byte name buffer for a short
    // error name) or a handle the C API created above and that is destroyed only below.
    unsafe {
        ok(
            sys::EncParams_Create1(CKKS, &mut params),
            "EncParams_Create1",
        );
        ok(
            sys::EncParams_SetPolyModulusDegree(params, 8192),
            "EncParams_SetPolyModulusDegree",
        );
        ok(
            sys::CoeffModulus_Create1(8192, 4, bit_sizes.as_mut_ptr(), moduli.as_mut_ptr()),
            "CoeffModulus_Create1",
        );
        for (m, v) in moduli.iter().zip(values.iter_mut()) {
            ok(sys::Modulus_Value(*m, v), "Modulus_Value");
        }
        ok(
            sys::EncParams_SetCoeffModulus(params, 4, moduli.as_mut_ptr()),
            "EncParams_SetCoeffModulus",
        );
        ok(
            sys::SEALContext_Create(params, true, TC128, &mut context),
            "SEALContext_Create",
        );
        ok(
            sys::SEALContext_ParametersSet(context, &mut params_set),
            "SEALContext_ParametersSet",
        );
        ok(
            sys::SEALContext_ParameterErrorName(context, std::ptr::null_mut(), &mut name_len),
            "SEALContext_ParameterErrorName",
        );
        assert!(name_len < name.len() as u64);
        ok(
            sys::SEALContext_ParameterErrorName(context, name.as_mut_ptr().cast(), &mut name_len),
            "SEALContext_ParameterErrorName",
        );
        ok(sys::SEALContext_Destroy(context), "SEALContext_Destroy");
        ok(sys::EncParams_Destroy(params), "EncParams_Destroy");
        for m in moduli {
            ok(sys::Modulus_Destroy(m), "Modulus_Destroy");
        }
    }
    assert!(params_set, "SEAL rejected the parameters");
    assert_eq!(&name[..name_len as usize], b"success");
    // The C API and the C++ bridge reach the same SEAL.
    assert_eq!(
        values.to_vec(),
        oracle::seal_coeff_modulus_create(8192, &bit_sizes).unwrap()
    );
}

#[test]
fn c_api_reports_bad_parameters_as_failed_hresults() {
    let mut bit_sizes = [61];
    let mut moduli = [std::ptr::null_mut()];
    // SAFETY: one bit size and room for one modulus handle, as the length says.
    let hr =
        unsafe { sys::CoeffModulus_Create1(8192, 1, bit_sizes.as_mut_ptr(), moduli.as_mut_ptr()) };
    // SEAL's HRESULTs are 32-bit codes in a 64-bit long, so failures are positive here.
    const E_INVALIDARG: std::os::raw::c_long = 0x8007_0057;
    assert_eq!(
        hr, E_INVALIDARG,
        "61-bit coefficient modulus must be rejected"
    );
    assert!(moduli[0].is_null());
}
