//! The CKKS routines (MulLin, MulLinRS, SqrLinRS, MulLinRSModSwAdd,
//! Rotate) over SEAL's API (`seal_c`), with everything they need: one parameter set, its
//! keys and tools, and random encrypted inputs. Shared by the main job
//! (`examples/ckks_routines.rs`) and the benchmarks, which run each routine on CPU
//! ciphertexts and on `.gpu()` ciphertexts and compare the words.

use std::time::{Duration, Instant};

use rand::Rng;

use crate::seal_c::{
    self, Ciphertext, CkksContext, CkksEncoder, Decryptor, Encryptor, Evaluator, GaloisKeys,
    KeyGenerator, Plaintext, RelinKeys, SecLevelType,
};
use seal_opencl::error::{Error, Result};
use seal_opencl::profiler::Profiler;

/// One of the CKKS routines.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Routine {
    /// multiply, relinearize.
    MulLin,
    /// multiply, relinearize, rescale_to_next.
    MulLinRs,
    /// square, relinearize, rescale_to_next.
    SqrLinRs,
    /// MulLinRS, then mod_switch_to_next of a second operand and add.
    MulLinRsModSwAdd,
    /// rotate_vector by one slot.
    Rotate,
}

impl Routine {
    pub const ALL: [Routine; 5] = [
        Routine::MulLin,
        Routine::MulLinRs,
        Routine::SqrLinRs,
        Routine::MulLinRsModSwAdd,
        Routine::Rotate,
    ];

    /// The paper's name.
    pub fn name(self) -> &'static str {
        match self {
            Routine::MulLin => "MulLin",
            Routine::MulLinRs => "MulLinRS",
            Routine::SqrLinRs => "SqrLinRS",
            Routine::MulLinRsModSwAdd => "MulLinRSModSwAdd",
            Routine::Rotate => "Rotate",
        }
    }

    /// Runs the routine: `a` becomes the result; `b` is the second operand (at the same
    /// level and scale as `a`), left unchanged.
    pub fn run(self, w: &Workload, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        let ev = &w.evaluator;
        match self {
            Routine::MulLin => {
                ev.multiply_inplace(a, b)?;
                ev.relinearize_inplace(a, &w.relin_keys)
            }
            Routine::MulLinRs => {
                Routine::MulLin.run(w, a, b)?;
                ev.rescale_to_next_inplace(a)
            }
            Routine::SqrLinRs => {
                ev.square_inplace(a)?;
                ev.relinearize_inplace(a, &w.relin_keys)?;
                ev.rescale_to_next_inplace(a)
            }
            Routine::MulLinRsModSwAdd => {
                Routine::MulLinRs.run(w, a, b)?;
                let mut c = b.try_clone()?;
                ev.mod_switch_to_next_inplace(&mut c)?;
                // After the rescale a's scale is b's squared over the dropped prime: close
                // to b's but not equal, and add needs equal scales.
                c.set_scale(a.scale());
                ev.add_inplace(a, &c)
            }
            Routine::Rotate => ev.rotate_vector_inplace(a, 1, &w.galois_keys),
        }
    }
}

impl std::str::FromStr for Routine {
    type Err = Error;

    fn from_str(s: &str) -> Result<Routine> {
        Routine::ALL
            .into_iter()
            .find(|r| r.name().eq_ignore_ascii_case(s.trim()))
            .ok_or_else(|| crate::invalid(format!("no routine named {s:?}")))
    }
}

/// The data primes the routines use by default at N = 2^`log_n`: 8 at 2^15 and
/// 2^16 (and above), at 2^13 and 2^14 as many as SEAL's 128-bit security table allows with
/// [`default_bit_sizes`] (SEAL's table stops at 2^15; 2^16 runs with its check off).
///
/// Errors: N below 2^13, where SEAL's table allows fewer bits (109 at 2^12) than one
/// data prime and the special prime take (120).
pub fn default_data_primes(log_n: u32) -> Result<usize> {
    // SEAL's CoeffModulus::MaxBitCount(N, sec_level_type::tc128).
    let max_bits = match log_n {
        13 => 218,
        14 => 438,
        15.. => return Ok(8),
        _ => {
            return Err(crate::invalid(format!(
                "the routines need N >= 2^13: at 2^{log_n} SEAL's 128-bit bound leaves fewer \
                 bits than a 60-bit data prime and a 60-bit special prime take"
            )))
        }
    };
    // 60 + 50 (d - 1) + 60 <= max_bits.
    Ok((max_bits - 120) / 50 + 1)
}

/// SEAL's coefficient modulus bit sizes for `data_primes` data primes: a 60-bit first
/// prime, 50-bit primes, and a 60-bit special prime (the setting for 8 data primes:
/// {60, 50 x 7, 60}).
pub fn default_bit_sizes(data_primes: usize) -> Vec<i32> {
    let mut bits = vec![60];
    bits.extend(std::iter::repeat_n(50, data_primes.saturating_sub(1)));
    bits.push(60);
    bits
}

/// A parameter set with the keys, tools and scale the routines use.
pub struct Workload {
    pub context: CkksContext,
    pub encoder: CkksEncoder,
    pub encryptor: Encryptor,
    pub decryptor: Decryptor,
    pub evaluator: Evaluator,
    pub relin_keys: RelinKeys,
    pub galois_keys: GaloisKeys,
    pub scale: f64,
}

impl Workload {
    /// N = `poly_modulus_degree`, the given bit sizes, and the scale 2^`scale_bits`. SEAL's
    /// 128-bit security check applies up to N = 2^15 (its table's end; above it the check
    /// is off). Galois keys for a rotation by one slot.
    pub fn new(poly_modulus_degree: u64, bit_sizes: &[i32], scale_bits: i32) -> Result<Workload> {
        let security = if poly_modulus_degree > 32768 {
            SecLevelType::None
        } else {
            SecLevelType::TC128
        };
        Workload::with_security(poly_modulus_degree, bit_sizes, scale_bits, security)
    }

    /// As [`Workload::new`] with SEAL's security check chosen by the caller (`None` lets
    /// the benchmarks run 9 primes at N = 2^13 and 2^14).
    pub fn with_security(
        poly_modulus_degree: u64,
        bit_sizes: &[i32],
        scale_bits: i32,
        security: SecLevelType,
    ) -> Result<Workload> {
        let context = CkksContext::new_with_security(poly_modulus_degree, bit_sizes, security)?;
        let keygen = KeyGenerator::new(&context)?;
        let public_key = keygen.public_key()?;
        Ok(Workload {
            encoder: CkksEncoder::new(&context)?,
            encryptor: Encryptor::new(&context, &public_key)?,
            decryptor: Decryptor::new(&context, &keygen.secret_key()?)?,
            evaluator: Evaluator::new(&context)?,
            relin_keys: keygen.relin_keys()?,
            galois_keys: keygen.galois_keys_from_steps(&[1])?,
            scale: 2f64.powi(scale_bits),
            context,
        })
    }

    /// An encoding of random slots in [-1, 1) at the first data level and the scale.
    pub fn plain_random(&self, rng: &mut impl Rng) -> Result<Plaintext> {
        let values: Vec<f64> = (0..self.encoder.slot_count())
            .map(|_| rng.gen_range(-1.0..1.0))
            .collect();
        self.encoder
            .encode(&values, &self.context.first_parms_id(), self.scale)
    }

    /// A fresh encryption of [`Workload::plain_random`].
    pub fn encrypt_random(&self, rng: &mut impl Rng) -> Result<Ciphertext> {
        self.encryptor.encrypt(&self.plain_random(rng)?)
    }
}

/// Marks each ciphertext for the device and makes it resident there (two negations, so
/// the words are unchanged), then waits: a timed operation on them then starts from
/// device data.
pub fn to_device(evaluator: &Evaluator, cts: &mut [&mut Ciphertext]) -> Result<()> {
    for x in cts.iter_mut() {
        x.gpu()?;
        evaluator.negate_inplace(x)?;
        evaluator.negate_inplace(x)?;
    }
    seal_c::synchronize()
}

/// The middle element after sorting (the upper one of an even count).
pub fn median(mut times: Vec<Duration>) -> Duration {
    times.sort();
    times[times.len() / 2]
}

/// Runs `op` `reps` (>= 1) times, each on a fresh copy of `a`, and returns the median
/// time and the last result. With `profiler` (a device run), `a`'s copy is made resident
/// first ([`to_device`]), the profiler's events are cleared, each run's copy is made
/// (device to device) before the clock starts, and each run ends with a synchronisation,
/// so the profiler then holds exactly the launches of the `reps` runs.
pub fn time_op(
    evaluator: &Evaluator,
    a: &Ciphertext,
    reps: usize,
    profiler: Option<&Profiler>,
    mut op: impl FnMut(&mut Ciphertext) -> Result<()>,
) -> Result<(Duration, Ciphertext)> {
    let mut a = a.try_clone()?;
    if let Some(profiler) = profiler {
        to_device(evaluator, &mut [&mut a])?;
        profiler.clear_events();
    }
    let mut times = Vec::with_capacity(reps);
    let mut last = None;
    for _ in 0..reps.max(1) {
        let mut x = a.try_clone()?;
        if profiler.is_some() {
            seal_c::synchronize()?;
        }
        let start = Instant::now();
        op(&mut x)?;
        if profiler.is_some() {
            seal_c::synchronize()?;
        }
        times.push(start.elapsed());
        last = Some(x);
    }
    Ok((median(times), last.expect("reps >= 1")))
}

/// [`time_op`] of `routine` with second operand `b` (made resident too on a device run).
pub fn time_routine(
    w: &Workload,
    routine: Routine,
    a: &Ciphertext,
    b: &Ciphertext,
    reps: usize,
    profiler: Option<&Profiler>,
) -> Result<(Duration, Ciphertext)> {
    let mut b = b.try_clone()?;
    if profiler.is_some() {
        to_device(&w.evaluator, &mut [&mut b])?;
    }
    time_op(&w.evaluator, a, reps, profiler, |x| routine.run(w, x, &b))
}
