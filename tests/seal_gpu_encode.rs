//! CKKSEncoder::encode into a plaintext bound for the device (seal-patch 0011): SEAL computes
//! the residues on the host and the backend transforms them to NTT form
//! (`transform_encoding_to_ntt`); with `SEAL_OPENCL_ENCODE=fft` (by default from N = 2^14 on)
//! SEAL places the values and the backend runs SEAL's FFT, rounding, reduction and NTT
//! (`encode_values`), except where the coefficients may not fit 62 bits (values large enough
//! for SEAL's 128-bit path). The plaintext must hold the words and metadata SEAL's CPU
//! encoding writes, at every level of several parameter sets, for real and complex values, on
//! every path; an unmarked plaintext stays SEAL's CPU path unless `SEAL_GPU_ROUTE_ALL` is on,
//! and with `SEAL_OPENCL_ENCODE=host` every encoding does.

use rand::Rng;
use seal_opencl::ErrorKind;
use seal_opencl_testkit::child_test;
use seal_opencl_testkit::fixture::*;
use seal_opencl_testkit::harness::{launches, rng};
use seal_opencl_testkit::seal_c::{CkksContext, CkksEncoder, ParmsId, Plaintext};

/// The plaintexts' metadata and words agree (a host read of `gpu`: downloads it).
fn assert_same_plain(cpu: &Plaintext, gpu: &Plaintext, what: &str) {
    assert_eq!(gpu.parms_id(), cpu.parms_id(), "{what}: parms_id");
    assert_eq!(
        gpu.scale().to_bits(),
        cpu.scale().to_bits(),
        "{what}: scale"
    );
    assert!(gpu.is_ntt_form() && cpu.is_ntt_form(), "{what}: NTT form");
    assert_words(&cpu.data().unwrap(), &gpu.data().unwrap(), what);
}

/// A marked plaintext the device encodes into.
fn marked() -> Plaintext {
    let mut p = Plaintext::new().unwrap();
    p.gpu().unwrap();
    p
}

/// `values` encoded at `parms_id` into a fresh marked plaintext: on the device.
fn encoded_on_device(
    encoder: &CkksEncoder,
    values: &[f64],
    parms_id: &ParmsId,
    scale: f64,
) -> Plaintext {
    let mut p = marked();
    encoder
        .encode_into(values, parms_id, scale, &mut p)
        .unwrap();
    p
}

/// `values` encoded at `parms_id` on the CPU (an unmarked plaintext) and on the device (a
/// marked one, and `reused`, marked and holding an earlier encoding): the same words.
fn check_encoding(
    encoder: &CkksEncoder,
    values: &[f64],
    parms_id: &ParmsId,
    scale: f64,
    reused: &mut Plaintext,
    what: &str,
) {
    let cpu = encoder.encode(values, parms_id, scale).unwrap();
    assert!(
        !cpu.on_gpu(),
        "{what}: an unmarked plaintext stays on the host"
    );
    let gpu = encoded_on_device(encoder, values, parms_id, scale);
    assert!(gpu.on_gpu(), "{what}");
    assert_same_plain(&cpu, &gpu, what);
    encoder
        .encode_into(values, parms_id, scale, reused)
        .unwrap();
    assert_same_plain(&cpu, reused, &format!("{what}, into a reused plaintext"));
}

/// Every level of N = 2^12 {35,30,35}, 2^13 {50,40x4} and {60,30,45,30,50}: full and partial
/// slot vectors of real values, values large enough for SEAL's 128-bit decomposition path, and
/// complex values.
#[test]
fn encodings_match_seal_cpu_at_every_level() {
    match_seal_cpu_at_every_level();
}

fn match_seal_cpu_at_every_level() {
    install();
    let mut rng = rng();
    for (n, bits, scale_bits) in [
        (4096u64, &[35, 30, 35][..], 30),
        (8192, &[50, 40, 40, 40, 40], 40),
        (8192, &[60, 30, 45, 30, 50], 30),
    ] {
        let ctx = CkksContext::new(n, bits).unwrap();
        let encoder = CkksEncoder::new(&ctx).unwrap();
        let scale = 2f64.powi(scale_bits);
        let mut reused = marked();
        for (level, parms_id) in ctx.parms_id_chain().unwrap().iter().enumerate() {
            let what = format!("N=2^{} {bits:?} level {level}", n.trailing_zeros());
            let slots = encoder.slot_count();
            let full: Vec<f64> = (0..slots).map(|_| rng.gen_range(-1.0..1.0)).collect();
            check_encoding(&encoder, &full, parms_id, scale, &mut reused, &what);
            let partial = &full[..slots / 3];
            check_encoding(&encoder, partial, parms_id, scale, &mut reused, &what);
            // |coefficient| ~ 2^70: SEAL's decomposition into two words.
            let large: Vec<f64> = full
                .iter()
                .map(|v| v * 2f64.powi(70 - scale_bits))
                .collect();
            if 80 < bits.iter().take(bits.len() - level - 1).sum::<i32>() {
                check_encoding(&encoder, &large, parms_id, scale, &mut reused, &what);
            }
            let complex: Vec<(f64, f64)> = (0..slots)
                .map(|_| (rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)))
                .collect();
            let cpu = encoder.encode_complex(&complex, parms_id, scale).unwrap();
            let mut gpu = marked();
            encoder
                .encode_complex_into(&complex, parms_id, scale, &mut gpu)
                .unwrap();
            assert_same_plain(&cpu, &gpu, &format!("{what}, complex"));
        }
    }
    assert_no_cpu_fallback();
}

/// A device encoding decodes to the values and multiplies a device ciphertext as SEAL's CPU
/// encoding does (the same words, so the same product).
#[test]
fn device_encodings_multiply_as_seal_cpu_encodings() {
    multiply_as_seal_cpu_encodings();
}

fn multiply_as_seal_cpu_encodings() {
    let (fx, mut rng) = Fixture::with_rng();
    let values = fx.values(&mut rng);
    let parms_id = fx.ctx.first_parms_id();
    let cpu = fx.encoder.encode(&values, &parms_id, fx.scale).unwrap();
    let gpu = encoded_on_device(&fx.encoder, &values, &parms_id, fx.scale);
    let decoded = fx.encoder.decode(&gpu).unwrap();
    assert_eq!(decoded, fx.encoder.decode(&cpu).unwrap());
    let a = fx.encrypt(&mut rng);
    let (mut on_cpu, mut on_device) = (a.clone(), on_gpu(&a));
    fx.evaluator
        .multiply_plain_inplace(&mut on_cpu, &cpu)
        .unwrap();
    fx.evaluator
        .multiply_plain_inplace(&mut on_device, &gpu)
        .unwrap();
    assert_same(&on_cpu, &on_device, "multiply_plain by a device encoding");
    assert_no_cpu_fallback();
}

/// Values too large for the level's modulus: SEAL throws `invalid_argument` at the call (its
/// check comes before any word is written), and the marked destination keeps its encoding.
#[test]
fn refused_encodings_keep_the_destination() {
    refused_keep_the_destination();
}

fn refused_keep_the_destination() {
    let (fx, mut rng) = Fixture::with_rng();
    let values = fx.values(&mut rng);
    let parms_id = fx.ctx.first_parms_id();
    let mut gpu = encoded_on_device(&fx.encoder, &values, &parms_id, fx.scale);
    let before = gpu.data().unwrap();
    let huge = vec![2f64.powi(60); fx.encoder.slot_count()];
    let err = fx
        .encoder
        .encode_into(&huge, &parms_id, fx.scale, &mut gpu)
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument, "{err}");
    assert_eq!(gpu.data().unwrap(), before);
    assert_eq!(gpu.parms_id(), parms_id);
}

/// The launches of encoding `values` into `dst` at the fixture's first level and scale.
fn encoding_launches(
    profiler: &seal_opencl::profiler::Profiler,
    fx: &Fixture,
    values: &[f64],
    dst: &mut Plaintext,
) -> u64 {
    let parms_id = fx.ctx.first_parms_id();
    launches(profiler, None, || {
        fx.encoder
            .encode_into(values, &parms_id, fx.scale, dst)
            .unwrap();
    })
}

/// The global profiler, a fixture, its random values and a marked plaintext they were
/// encoded into once (tables and programs built), for counting an encoding's launches.
fn warmed_encoding() -> (
    std::sync::Arc<seal_opencl::profiler::Profiler>,
    Fixture,
    Vec<f64>,
    Plaintext,
) {
    let profiler = seal_opencl::profiler::enable_global();
    let (fx, mut rng) = Fixture::with_rng();
    let values = fx.values(&mut rng);
    let mut gpu = marked();
    encoding_launches(&profiler, &fx, &values, &mut gpu);
    (profiler, fx, values, gpu)
}

/// [`warmed_encoding`], then one more encoding of its values: `launches` launches, and SEAL's
/// CPU encoding's words (`what` names the path).
fn counted_encoding(
    launches: u64,
    what: &str,
) -> (
    std::sync::Arc<seal_opencl::profiler::Profiler>,
    Fixture,
    Vec<f64>,
    Plaintext,
) {
    let (profiler, fx, values, mut gpu) = warmed_encoding();
    assert_eq!(
        encoding_launches(&profiler, &fx, &values, &mut gpu),
        launches,
        "{what}"
    );
    let cpu = fx
        .encoder
        .encode(&values, &fx.ctx.first_parms_id(), fx.scale)
        .unwrap();
    assert_same_plain(&cpu, &gpu, what);
    (profiler, fx, values, gpu)
}

child_test! {
    /// By default SEAL's host computes a marked destination's residues and the device
    /// transforms them (one launch); an unmarked destination launches nothing without
    /// SEAL_GPU_ROUTE_ALL. In a child process, since it installs the backend with the global
    /// profiler on.
    fn marked_encodings_launch_one_transform() [] {
        let (profiler, fx, values, _) = counted_encoding(1, "the host's FFT");
        let launched = launches(&profiler, None, || {
            fx.encoder.encode(&values, &fx.ctx.first_parms_id(), fx.scale).unwrap();
        });
        assert_eq!(launched, 0);
    }
}

child_test! {
    /// With SEAL_OPENCL_ENCODE=fft the device runs the FFT, rounding and reduction too:
    /// every encoding of the tests above matches SEAL's CPU encoding word for word, a refused
    /// one keeps its destination, and a marked destination's encoding launches the FFT's two
    /// kernels and the forward transform (one launch at this N); with coefficients past the
    /// bound only the transform (SEAL's host computes the residues).
    fn device_fft_encodings_match_seal() [("SEAL_OPENCL_ENCODE", "fft")] {
        // The profiler first: it counts only on a backend installed after it.
        let (profiler, fx, values, mut gpu) = counted_encoding(3, "the device's FFT");
        // Values of 2^34: the bound on the coefficients (scale / N times the values' sum,
        // about 2^63) refuses the device's FFT, and SEAL's check takes them (the largest is
        // about 2^60, below the level's 65 bits): the host's residues, the device's NTT.
        let large: Vec<f64> = values.iter().map(|v| v * 2f64.powi(34)).collect();
        assert_eq!(encoding_launches(&profiler, &fx, &large, &mut gpu), 1);
        match_seal_cpu_at_every_level();
        multiply_as_seal_cpu_encodings();
        refused_keep_the_destination();
    }
}

child_test! {
    /// By default (`auto`) encodings at N >= 2^14 run their FFT on the device too: a marked
    /// destination's encoding launches the FFT's two kernels and the forward transform (one
    /// chained launch at 2^14), with SEAL's CPU encoding's words.
    fn default_encodings_from_2_14_run_the_fft_on_the_device() [] {
        // The profiler first: it counts only on a backend installed after it.
        let profiler = seal_opencl::profiler::enable_global();
        install();
        let ctx = CkksContext::new(16384, &[40, 30, 40]).unwrap();
        let encoder = CkksEncoder::new(&ctx).unwrap();
        let mut rng = rng();
        let values: Vec<f64> = (0..encoder.slot_count())
            .map(|_| rng.gen_range(-1.0..1.0))
            .collect();
        let (parms_id, scale) = (ctx.first_parms_id(), 2f64.powi(30));
        let mut gpu = marked();
        let encode = |dst: &mut Plaintext| {
            launches(&profiler, None, || {
                encoder.encode_into(&values, &parms_id, scale, dst).unwrap();
            })
        };
        encode(&mut gpu);
        assert_eq!(encode(&mut gpu), 3, "the device's FFT at 2^14");
        let cpu = encoder.encode(&values, &parms_id, scale).unwrap();
        assert_same_plain(&cpu, &gpu, "the device's FFT at 2^14");
    }
}

child_test! {
    /// With SEAL_OPENCL_ENCODE=host SEAL's CPU encodes a marked destination (no launch, its
    /// words on the host), and a routed multiply_plain by it uploads it: SEAL's product.
    fn host_encodings_launch_nothing() [("SEAL_OPENCL_ENCODE", "host")] {
        counted_encoding(0, "SEAL's CPU encoding");
        multiply_as_seal_cpu_encodings();
    }
}

child_test! {
    /// Under SEAL_GPU_ROUTE_ALL an unmarked destination is encoded on the device once a
    /// backend is installed (the encoder installs none), and is marked by it.
    fn route_all_encodes_on_the_device() [("SEAL_GPU_ROUTE_ALL", "1")] {
        let ctx = CkksContext::new(4096, &[35, 30, 35]).unwrap();
        let encoder = CkksEncoder::new(&ctx).unwrap();
        let values = vec![0.25; encoder.slot_count()];
        let before = encoder.encode(&values, &ctx.first_parms_id(), 2f64.powi(30)).unwrap();
        assert!(!before.on_gpu(), "no backend installed yet");
        install();
        let after = encoder.encode(&values, &ctx.first_parms_id(), 2f64.powi(30)).unwrap();
        assert!(after.on_gpu());
        assert_same_plain(&before, &after, "route-all");
    }
}
