//! What the SEAL-level tests of the GPU backend share (`seal_gpu*`, `seal_backend_*`,
//! `profiler`): parameter sets with every key, marking, word-for-word comparison of a device
//! ciphertext with its CPU counterpart, every routed operation as a table.

use std::sync::OnceLock;

use rand::Rng;

use crate::harness::rng;
use crate::seal_c::*;

/// The settings the fixture installs with, fixed by the first install of the process.
static SETTINGS: OnceLock<Vec<(&'static str, String)>> = OnceLock::new();

/// Installs the backend once per process: the environment's settings, pooled buffers
/// poisoned (words a kernel fails to write show up), then `settings` over them. A later call
/// installs nothing; it panics if `settings` differ from what the process's backend was
/// installed with (a test file that needs its own settings passes them on every call).
pub fn install_with(settings: &[(&'static str, &str)]) {
    let installed = SETTINGS.get_or_init(|| {
        let mut all = seal_opencl::config::env_settings();
        all.push((seal_opencl::config::POISON.name, "1".into()));
        all.extend(
            settings
                .iter()
                .map(|&(name, value)| (name, value.to_string())),
        );
        install_settings(&all);
        all
    });
    for &(name, value) in settings {
        let current = installed.iter().rev().find(|(n, _)| *n == name);
        assert!(
            current.is_some_and(|(_, v)| v == value),
            "{name}={value:?} asked for, but this process's backend was installed with {current:?}"
        );
    }
}

/// [`install_with`] the environment's settings and poisoned buffers.
pub fn install() {
    install_with(&[]);
}

/// Uninstalls the backend and installs a fresh one with the settings of the process's
/// first install.
pub fn reinstall() {
    install();
    seal_opencl::ffi::uninstall_backend().unwrap();
    install_settings(SETTINGS.get().expect("installed above"));
}

fn install_settings(settings: &[(&'static str, String)]) {
    seal_opencl::ffi::install_backend_with(settings).expect("an OpenCL device for the backend");
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

impl Default for Fixture {
    fn default() -> Self {
        Fixture::new()
    }
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture::with_params(4096, &[35, 30, 35], 30)
    }

    /// [`Fixture::new`] and a random generator whose seed is printed: what most tests start
    /// from.
    pub fn with_rng() -> (Fixture, rand::rngs::StdRng) {
        (Fixture::new(), rng())
    }

    /// N = `n`, the primes of `bits` (SEAL's 128-bit security check applies), scale
    /// 2^`scale_bits`, Galois keys for [`STEPS`].
    pub fn with_params(n: u64, bits: &[i32], scale_bits: i32) -> Fixture {
        install();
        Fixture::of_context(CkksContext::new(n, bits).unwrap(), &STEPS, scale_bits)
    }

    /// Keys and tools of `ctx`: Galois keys for `steps`, scale 2^`scale_bits`. Installs
    /// nothing (tests of SEAL's CPU path use it as it is).
    pub fn of_context(ctx: CkksContext, steps: &[i32], scale_bits: i32) -> Fixture {
        let keygen = KeyGenerator::new(&ctx).unwrap();
        let pk = keygen.public_key().unwrap();
        let sk = keygen.secret_key().unwrap();
        Fixture {
            encoder: CkksEncoder::new(&ctx).unwrap(),
            encryptor: Encryptor::new(&ctx, &pk).unwrap(),
            decryptor: Decryptor::new(&ctx, &sk).unwrap(),
            evaluator: Evaluator::new(&ctx).unwrap(),
            relin: keygen.relin_keys().unwrap(),
            galois: keygen.galois_keys_from_steps(steps).unwrap(),
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

    /// Fresh operands of a binary operation: two encryptions and a plaintext of random
    /// values at the first level.
    pub fn operands(&self, rng: &mut impl Rng) -> (Ciphertext, Ciphertext, Plaintext) {
        (self.encrypt(rng), self.encrypt(rng), self.plain(rng))
    }

    /// SEAL's MulLin of `a` and `b` on the CPU path (a relinearized product): the words a
    /// device MulLin must give.
    pub fn mul_lin(&self, a: &Ciphertext, b: &Ciphertext) -> Ciphertext {
        let mut product = a.clone();
        self.evaluator.multiply_inplace(&mut product, b).unwrap();
        self.evaluator
            .relinearize_inplace(&mut product, &self.relin)
            .unwrap();
        product
    }

    /// `ct` with polynomial 1 (and any beyond) zero: transparent.
    pub fn transparent(&self, ct: &Ciphertext) -> Ciphertext {
        let mut words = ct.data().unwrap();
        let poly = (ct.coeff_modulus_size() * ct.poly_modulus_degree()) as usize;
        words[poly..].fill(0);
        let mut t = ct.clone();
        t.set_data(&self.ctx, &words).unwrap();
        assert!(t.is_transparent());
        t
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

impl Default for BackendParams {
    fn default() -> Self {
        BackendParams::new()
    }
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
            plain_modulus: 0,
            scheme: seal_opencl::seal_backend::Scheme::Ckks,
        }
    }
}

/// The backend behind SEAL on `devices`, with the NTT of `SEAL_OPENCL_NTT`, for tests that
/// drive it without SEAL's Evaluator.
pub fn backend_on(devices: seal_opencl::device::Devices) -> seal_opencl::seal_backend::Backend {
    seal_opencl::seal_backend::Backend::new(
        devices,
        seal_opencl::config::Config::from_env()
            .unwrap()
            .experiment
            .ntt(),
    )
    .unwrap()
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
    crate::routines::to_device(&fx.evaluator, &mut [&mut g]).unwrap();
    assert!(g.on_gpu());
    g
}

pub fn plain_on_gpu(p: &Plaintext) -> Plaintext {
    let mut g = p.try_clone().unwrap();
    g.gpu().unwrap();
    assert!(g.on_gpu());
    g
}

/// Runs `op` on a CPU copy and on a device copy ([`on_gpu`]) of `a`: the results must have
/// the same metadata and words ([`assert_same`]).
pub fn assert_same_on_both(a: &Ciphertext, mut op: impl FnMut(&mut Ciphertext), what: &str) {
    let (mut cpu, mut gpu) = (a.clone(), on_gpu(a));
    op(&mut cpu);
    op(&mut gpu);
    assert_same(&cpu, &gpu, what);
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

/// A routed operation (or a chain) on (a, b, plain); `a` is the result.
pub type Op = fn(&Fixture, &mut Ciphertext, &Ciphertext, &Plaintext);

/// Every routed operation, and chains of them, as (name, op on (a, b, plain)); `a` is the
/// result. Each runs once on CPU ciphertexts and once on device ciphertexts.
pub fn operations() -> Vec<(&'static str, Op)> {
    vec![
        ("negate", |f, a, _, _| {
            f.evaluator.negate_inplace(a).unwrap()
        }),
        ("negate into", |f, a, _, _| {
            let mut d = Ciphertext::new().unwrap();
            f.evaluator.negate(a, &mut d).unwrap();
            *a = d;
        }),
        ("add", |f, a, b, _| f.evaluator.add_inplace(a, b).unwrap()),
        ("add to itself", |f, a, _, _| {
            let copy = a.clone();
            f.evaluator.add(&copy, &copy, a).unwrap()
        }),
        ("add_many", |f, a, b, _| {
            let c = a.clone();
            f.evaluator.add_many(&[&c, b, &c], a).unwrap()
        }),
        ("sub", |f, a, b, _| f.evaluator.sub_inplace(a, b).unwrap()),
        ("multiply", |f, a, b, _| {
            f.evaluator.multiply_inplace(a, b).unwrap()
        }),
        ("multiply by itself", |f, a, _, _| {
            let copy = a.clone();
            f.evaluator.multiply(&copy, &copy, a).unwrap()
        }),
        ("square", |f, a, _, _| {
            f.evaluator.square_inplace(a).unwrap()
        }),
        ("size 3 + size 2 and size 2 - size 3", |f, a, b, _| {
            let mut three = a.clone();
            f.evaluator.multiply_inplace(&mut three, b).unwrap();
            let mut two = three.clone();
            f.evaluator.relinearize_inplace(&mut two, &f.relin).unwrap();
            let mut grown = two.clone();
            f.evaluator.sub_inplace(&mut grown, &three).unwrap();
            f.evaluator.add_inplace(&mut three, &two).unwrap();
            f.evaluator.add_inplace(&mut three, &grown).unwrap();
            *a = three;
        }),
        ("multiply size 3 by size 2", |f, a, b, _| {
            // SEAL's relin keys stop at the square of the secret, so a size 4 result stays
            // unrelinearized; b's words at scale 1 keep the scale in bounds.
            f.evaluator.multiply_inplace(a, b).unwrap();
            let mut c = b.clone();
            c.set_scale(1.0);
            f.evaluator.multiply_inplace(a, &c).unwrap();
        }),
        ("MulLin", |f, a, b, _| {
            f.evaluator.multiply_inplace(a, b).unwrap();
            f.evaluator.relinearize_inplace(a, &f.relin).unwrap();
        }),
        ("MulLinRS", |f, a, b, _| {
            f.evaluator.multiply_inplace(a, b).unwrap();
            f.evaluator.relinearize_inplace(a, &f.relin).unwrap();
            f.evaluator.rescale_to_next_inplace(a).unwrap();
        }),
        ("SqrLinRS", |f, a, _, _| {
            f.evaluator.square_inplace(a).unwrap();
            f.evaluator.relinearize_inplace(a, &f.relin).unwrap();
            f.evaluator.rescale_to_next_inplace(a).unwrap();
        }),
        ("MulLinRSModSwAdd", |f, a, b, _| {
            f.evaluator.multiply_inplace(a, b).unwrap();
            f.evaluator.relinearize_inplace(a, &f.relin).unwrap();
            f.evaluator.rescale_to_next_inplace(a).unwrap();
            let mut c = b.clone();
            f.evaluator.mod_switch_to_next_inplace(&mut c).unwrap();
            c.set_scale(a.scale());
            f.evaluator.add_inplace(a, &c).unwrap();
        }),
        ("rescale_to_next into a fresh destination", |f, a, b, _| {
            f.evaluator.multiply_inplace(a, b).unwrap();
            let mut d = Ciphertext::new().unwrap();
            f.evaluator.rescale_to_next(a, &mut d).unwrap();
            *a = d;
        }),
        ("rescale_to the last level", |f, a, _, _| {
            let last = f.ctx.last_parms_id();
            f.evaluator.rescale_to_inplace(a, &last).unwrap();
        }),
        ("mod_switch_to_next", |f, a, _, _| {
            f.evaluator.mod_switch_to_next_inplace(a).unwrap()
        }),
        ("mod_switch_to the last level", |f, a, _, _| {
            let last = f.ctx.last_parms_id();
            let mut d = Ciphertext::new().unwrap();
            f.evaluator.mod_switch_to(a, &last, &mut d).unwrap();
            *a = d;
        }),
        ("multiply_plain", |f, a, _, p| {
            f.evaluator.multiply_plain_inplace(a, p).unwrap()
        }),
        ("add_plain", |f, a, _, p| {
            f.evaluator.add_plain_inplace(a, p).unwrap()
        }),
        ("sub_plain", |f, a, _, p| {
            f.evaluator.sub_plain_inplace(a, p).unwrap()
        }),
        (
            "mod_switch a plaintext, then multiply_plain",
            |f, a, _, p| {
                let mut q = p.try_clone().unwrap();
                if a.on_gpu() {
                    q.gpu().unwrap();
                }
                f.evaluator
                    .mod_switch_to_next_plain_inplace(&mut q)
                    .unwrap();
                q.set_scale(1.0);
                f.evaluator.mod_switch_to_next_inplace(a).unwrap();
                f.evaluator.multiply_plain_inplace(a, &q).unwrap();
            },
        ),
        ("rotate +1", |f, a, _, _| {
            f.evaluator.rotate_vector_inplace(a, 1, &f.galois).unwrap()
        }),
        ("rotate -1", |f, a, _, _| {
            f.evaluator.rotate_vector_inplace(a, -1, &f.galois).unwrap()
        }),
        ("rotate +5", |f, a, _, _| {
            f.evaluator.rotate_vector_inplace(a, 5, &f.galois).unwrap()
        }),
        ("rotate -7", |f, a, _, _| {
            f.evaluator.rotate_vector_inplace(a, -7, &f.galois).unwrap()
        }),
        ("rotate +3 (NAF: +4 then -1)", |f, a, _, _| {
            f.evaluator.rotate_vector_inplace(a, 3, &f.galois).unwrap()
        }),
        ("complex_conjugate", |f, a, _, _| {
            f.evaluator.complex_conjugate_inplace(a, &f.galois).unwrap()
        }),
        ("Rotate after MulLinRS", |f, a, b, _| {
            f.evaluator.multiply_inplace(a, b).unwrap();
            f.evaluator.relinearize_inplace(a, &f.relin).unwrap();
            f.evaluator.rescale_to_next_inplace(a).unwrap();
            f.evaluator.rotate_vector_inplace(a, 16, &f.galois).unwrap();
        }),
        ("transform_from_ntt then transform_to_ntt", |f, a, b, _| {
            f.evaluator.add_inplace(a, b).unwrap();
            f.evaluator.transform_from_ntt_inplace(a).unwrap();
            let mut coeffs = a.clone();
            f.evaluator.transform_to_ntt_inplace(&mut coeffs).unwrap();
            *a = coeffs;
        }),
    ]
}

/// Runs every one of [`operations`] on fresh random CPU ciphertexts and on their device
/// copies (issued by the calling thread): same metadata and words ([`assert_same`]), the
/// same decryption, and no CPU fallback. `name` labels failures.
pub fn check_operations(fx: &Fixture, name: &str) {
    let mut rng = rng();
    for (op_name, op) in operations() {
        let (a, b, p) = fx.operands(&mut rng);
        let mut cpu = a.clone();
        op(fx, &mut cpu, &b, &p);
        let mut gpu = on_gpu(&a);
        op(fx, &mut gpu, &on_gpu(&b), &plain_on_gpu(&p));
        assert_same_decryption(fx, &cpu, &gpu, &format!("{name}: {op_name}"));
    }
    assert_no_cpu_fallback();
}

/// Same metadata and words ([`assert_same`]), the device mark kept, and the same
/// decryption.
pub fn assert_same_decryption(fx: &Fixture, cpu: &Ciphertext, gpu: &Ciphertext, what: &str) {
    assert_same(cpu, gpu, what);
    assert!(gpu.on_gpu(), "{what}: the result lost its device mark");
    if cpu.size() == 2 && cpu.is_ntt_form() {
        let dc = fx.decryptor.decrypt(cpu).unwrap();
        let dg = fx.decryptor.decrypt(gpu).unwrap();
        assert_eq!(dc.data().unwrap(), dg.data().unwrap(), "{what}: decryption");
    }
}
