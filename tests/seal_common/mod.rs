//! Helpers shared by the SEAL-level tests of the GPU backend (`seal_gpu`, `seal_gpu_state`,
//! `seal_gpu_errors`, `seal_gpu_oom`, `seal_gpu_logs`): parameter sets with every key,
//! marking, word-for-word comparison of a device ciphertext with its CPU counterpart, child
//! processes.
#![allow(dead_code)] // each test binary uses its own subset

use std::sync::Once;

use rand::{Rng, SeedableRng};
use seal_opencl::seal_c::*;

/// Installs the backend once per process, with pooled buffers poisoned so that words a
/// kernel fails to write show up. `SEAL_OPENCL_*` variables a test file needs must be set
/// before the first call (the backend reads the environment when it is installed).
pub fn install() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        std::env::set_var("SEAL_OPENCL_POISON", "1");
        seal_opencl::ffi::install_backend().expect("an OpenCL device for the backend");
    });
}

/// Rotation steps the fixture's Galois keys cover (0: complex conjugation); 2 is
/// deliberately missing (its NAF is the single step 2, so rotating by 2 has no key);
/// rotate_vector by a step without its own key goes through SEAL's NAF decomposition into
/// several apply_galois calls (3 = 4 - 1).
pub const STEPS: [i32; 7] = [0, 1, -1, 4, 5, -7, 16];

/// One parameter set (N = 2^12, primes {35, 30, 35}: two data levels) with every key and
/// tool the operations need.
pub struct Fixture {
    pub ctx: CkksContext,
    pub keygen: KeyGenerator,
    pub encoder: CkksEncoder,
    pub encryptor: Encryptor,
    pub decryptor: Decryptor,
    pub evaluator: Evaluator,
    pub relin: RelinKeys,
    pub galois: GaloisKeys,
    pub scale: f64,
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture::with_params(4096, &[35, 30, 35], 30)
    }

    /// N = `n`, the primes of `bits` (SEAL's 128-bit security check applies), scale
    /// 2^`scale_bits`, Galois keys for [`STEPS`].
    pub fn with_params(n: u64, bits: &[i32], scale_bits: i32) -> Fixture {
        install();
        let ctx = CkksContext::new(n, bits).unwrap();
        let keygen = KeyGenerator::new(&ctx).unwrap();
        let pk = keygen.public_key().unwrap();
        let sk = keygen.secret_key().unwrap();
        Fixture {
            encoder: CkksEncoder::new(&ctx).unwrap(),
            encryptor: Encryptor::new(&ctx, &pk).unwrap(),
            decryptor: Decryptor::new(&ctx, &sk).unwrap(),
            evaluator: Evaluator::new(&ctx).unwrap(),
            relin: keygen.relin_keys().unwrap(),
            galois: keygen.galois_keys_from_steps(&STEPS).unwrap(),
            scale: 2f64.powi(scale_bits),
            keygen,
            ctx,
        }
    }

    pub fn values(&self, rng: &mut impl Rng) -> Vec<f64> {
        (0..self.encoder.slot_count())
            .map(|_| rng.gen_range(-1.0..1.0))
            .collect()
    }

    /// Random values at the first level and the fixture's scale.
    pub fn plain(&self, rng: &mut impl Rng) -> Plaintext {
        self.encoder
            .encode(&self.values(rng), &self.ctx.first_parms_id(), self.scale)
            .unwrap()
    }

    pub fn encrypt(&self, rng: &mut impl Rng) -> Ciphertext {
        self.encryptor.encrypt(&self.plain(rng)).unwrap()
    }

    /// An unmarked ciphertext with `ct`'s metadata and words (`ct` at the first level,
    /// size 2): reading a marked ciphertext's words is a host read, copying it would copy
    /// the mark.
    pub fn host_copy(&self, ct: &Ciphertext) -> Ciphertext {
        assert_eq!(ct.parms_id(), self.ctx.first_parms_id(), "host_copy: level");
        assert_eq!(ct.size(), 2, "host_copy: size");
        let mut copy = self.encryptor.encrypt(&self.plain(&mut rng())).unwrap();
        copy.set_data(&self.ctx, &ct.data().unwrap()).unwrap();
        copy.set_scale(ct.scale());
        assert!(!copy.on_gpu());
        copy
    }
}

/// N of [`BackendParams`].
pub const BACKEND_N: usize = 4096;

/// A parameter set for tests that drive `seal_backend::Backend` directly, without SEAL's
/// Evaluator: SEAL's context (N = 2^12, primes {35, 30, 35}) for its primes and parms_id.
pub struct BackendParams {
    pub ctx: CkksContext,
    pub key_moduli: Vec<u64>,
}

impl BackendParams {
    pub fn new() -> BackendParams {
        let ctx = CkksContext::new(BACKEND_N as u64, &[35, 30, 35]).unwrap();
        let key_moduli = ctx.coeff_modulus(&ctx.key_parms_id()).unwrap();
        BackendParams { ctx, key_moduli }
    }

    /// The backend's view of the first level (2 data primes).
    pub fn level(&self) -> seal_opencl::seal_backend::Level<'_> {
        seal_opencl::seal_backend::Level {
            key_parms_id: self.ctx.key_parms_id(),
            log_n: BACKEND_N.trailing_zeros(),
            key_moduli: &self.key_moduli,
            using_keyswitching: true,
            primes: 2,
        }
    }
}

/// The backend behind SEAL on `devices`, with the NTT of `SEAL_OPENCL_NTT`, for tests that
/// drive it without SEAL's Evaluator.
pub fn backend_on(devices: seal_opencl::device::Devices) -> seal_opencl::seal_backend::Backend {
    seal_opencl::seal_backend::Backend::new(
        devices,
        seal_opencl::ntt::NttStrategy::from_env().unwrap(),
    )
    .unwrap()
}

/// A random generator whose seed is printed, so a failure can be replayed.
pub fn rng() -> rand::rngs::StdRng {
    let seed = rand::random();
    eprintln!("seed {seed}");
    rand::rngs::StdRng::seed_from_u64(seed)
}

/// A copy marked for the device (host newer: uploaded by the first routed operation).
pub fn on_gpu(ct: &Ciphertext) -> Ciphertext {
    let mut g = ct.clone();
    g.gpu().unwrap();
    assert!(g.on_gpu());
    g
}

/// A marked copy whose device image is the only current copy (device newer): negated
/// twice on the device, so the words are `ct`'s.
pub fn resident(fx: &Fixture, ct: &Ciphertext) -> Ciphertext {
    let mut g = ct.clone();
    seal_opencl::routines::to_device(&fx.evaluator, &mut [&mut g]).unwrap();
    assert!(g.on_gpu());
    g
}

pub fn plain_on_gpu(p: &Plaintext) -> Plaintext {
    let mut g = p.try_clone().unwrap();
    g.gpu().unwrap();
    assert!(g.on_gpu());
    g
}

/// Same metadata and words (a host read of `gpu`: downloads when the device is newer).
pub fn assert_same(cpu: &Ciphertext, gpu: &Ciphertext, what: &str) {
    assert_eq!(gpu.size(), cpu.size(), "{what}: size");
    assert_eq!(gpu.parms_id(), cpu.parms_id(), "{what}: parms_id");
    assert_eq!(
        gpu.scale().to_bits(),
        cpu.scale().to_bits(),
        "{what}: scale"
    );
    assert_eq!(gpu.is_ntt_form(), cpu.is_ntt_form(), "{what}: NTT form");
    assert_words(&cpu.data().unwrap(), &gpu.data().unwrap(), what);
}

/// Word-for-word equality, reporting how many words differ and the first.
pub fn assert_words(want: &[u64], got: &[u64], what: &str) {
    assert_eq!(want.len(), got.len(), "{what}: word count");
    if let Some(i) = (0..want.len()).find(|&i| want[i] != got[i]) {
        let differ = (0..want.len()).filter(|&i| want[i] != got[i]).count();
        panic!(
            "{what}: {differ} of {} words differ, first at {i}: want {:#x}, got {:#x}",
            want.len(),
            want[i],
            got[i]
        );
    }
}

/// Every operation on marked operands so far ran on the device (SEAL reports a CPU
/// fallback once per operation name and process).
pub fn assert_no_cpu_fallback() {
    assert_eq!(
        seal_opencl::ffi::cpu_fallbacks(),
        Vec::<String>::new(),
        "operations that ran on the CPU instead of the device"
    );
}

/// Set in the environment of a child process started by [`run_child`].
pub const CHILD_ENV_VAR: &str = "SEAL_GPU_TEST_CHILD";

/// Whether this process is a child started by [`run_child`]. Child tests are `#[ignore]`d
/// and return at once unless this holds, so `--include-ignored` in the parent stays safe.
pub fn is_child() -> bool {
    std::env::var_os(CHILD_ENV_VAR).is_some()
}

/// Runs the ignored test `name` of this test binary in a child process with `env` set:
/// for settings the backend reads once when it is installed, and for code that might end
/// the process. Fails unless the child succeeds and prints `CHILD OK`.
pub fn run_child(name: &str, env: &[(&str, &str)]) {
    run_child_output(name, env);
}

/// [`run_child`], returning what the child wrote (for a test of its stderr).
pub fn run_child_output(name: &str, env: &[(&str, &str)]) -> std::process::Output {
    let out = std::process::Command::new(std::env::current_exe().unwrap())
        .env(CHILD_ENV_VAR, "1")
        .envs(env.iter().copied())
        .args(["--ignored", "--exact", name, "--nocapture"])
        .output()
        .unwrap();
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success() && text.contains("CHILD OK"),
        "{name} ended with {}:\n{text}",
        out.status
    );
    out
}
