//! Differential fuzzing of the GPU backend against SEAL's CPU path.
//!
//! A [`Program`] is a random sequence of [`Step`]s over one parameter set: encryptions and
//! encodings at random levels and scales, and every routed CKKS Evaluator operation on
//! random live operands, valid or not (mismatched levels, scales or NTT forms, size 3 to a
//! rotation, missing Galois keys, the end of the modulus chain, scales out of bounds,
//! transparent results, ...). Every ciphertext and plaintext lives twice: an unmarked CPU
//! copy and a `.gpu()` copy (host newer or already resident). Each Evaluator call runs on
//! both; then
//! - both succeed: the results have the same metadata and words (compared at once when the
//!   step says so, else later, so device-newer results also feed further operations);
//! - both fail: with the same HRESULT (the same C++ exception type), and the GPU path's
//!   operands are intact (words and metadata), or changed exactly as SEAL's CPU path
//!   changed its own (SEAL throws some errors after writing the destination);
//! - anything else is a [`Failure`].
//!
//! A failing program is shrunk ([`shrink`]: delta debugging, dropping runs of steps while it
//! still fails) and printed as the operations it runs ([`trace`]). Steps name operands by
//! index modulo the live objects, so every subsequence of a program is a program.
//!
//! SEAL throws `logic_error` for a transparent result at the operation; the backend checks
//! that later by default, so the fuzzer needs `SEAL_OPENCL_CHECK_TRANSPARENT=eager`
//! ([`install_backend`] sets it before installing the backend).

mod world;

use std::fmt;

use rand::Rng;
use seal_opencl::error::{Error, Result};

use crate::seal_c::{
    Ciphertext, CkksContext, CkksEncoder, Encryptor, Evaluator, GaloisKeys, KeyGenerator, ParmsId,
    RelinKeys, SecLevelType,
};
use world::World;

/// Rotation steps with Galois keys (0: complex conjugation).
const KEY_STEPS: [i32; 5] = [0, 1, -1, 4, -7];
/// Rotation steps the fuzzer asks for: with keys, through SEAL's NAF decomposition (3 = 4 -
/// 1, 5 = 4 + 1), and without any key (2: its NAF is the step itself).
const ROTATIONS: [i32; 8] = [0, 1, -1, 2, 3, 4, 5, -7];
/// Live ciphertexts and plaintexts kept at most (a new one replaces an old one).
const MAX_CTS: usize = 6;
const MAX_PLAINS: usize = 3;

/// Installs the backend for fuzzing: eager transparency checks (see the module doc) and
/// poisoned pool buffers (words a kernel fails to write show up), over the environment's
/// settings. Errors when a backend is installed already.
pub fn install_backend() -> Result<()> {
    use seal_opencl::config::{env_settings, CHECK_TRANSPARENT, POISON};
    let mut settings = env_settings();
    settings.push((CHECK_TRANSPARENT.name, "eager".into()));
    settings.push((POISON.name, "1".into()));
    seal_opencl::ffi::install_backend_with(&settings).map_err(|e| Error::Logic(e.to_string()))
}

/// A parameter set: N = 2^`log_n` and the primes' bit sizes (the last one the special
/// prime when there are two or more; a single prime is a context without key switching).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParamSet {
    pub log_n: u32,
    pub bits: Vec<i32>,
}

impl ParamSet {
    /// A random set: N from 2^12 to 2^`max_log_n`, 1 to 15 primes of 30 to 60 bits.
    pub fn random(rng: &mut impl Rng, max_log_n: u32) -> ParamSet {
        let count = rng.gen_range(1..=15);
        ParamSet {
            log_n: rng.gen_range(12..=max_log_n),
            bits: (0..count).map(|_| rng.gen_range(30..=60)).collect(),
        }
    }

    /// `;`-separated sets (`12:50;13:60,40,40,60`), empty items skipped.
    pub fn parse_list(sets: &str) -> Result<Vec<ParamSet>> {
        sets.split(';')
            .filter(|s| !s.trim().is_empty())
            .map(str::parse)
            .collect()
    }
}

/// `LOG_N:BITS,BITS,...`, e.g. `13:60,40,40,60`; `BITSxCOUNT` repeats (`13:30x15`).
impl std::str::FromStr for ParamSet {
    type Err = Error;

    fn from_str(s: &str) -> Result<ParamSet> {
        let bad = || crate::invalid(format!("parameter set {s:?} is not LOG_N:BITS,BITS,..."));
        let (log_n, bits) = s.split_once(':').ok_or_else(bad)?;
        let mut all = Vec::new();
        for item in bits.split(',') {
            let (b, n) = item.split_once('x').unwrap_or((item, "1"));
            let (b, n): (i32, usize) = (
                b.trim().parse().map_err(|_| bad())?,
                n.trim().parse().map_err(|_| bad())?,
            );
            all.extend(std::iter::repeat_n(b, n));
        }
        Ok(ParamSet {
            log_n: log_n.trim().parse().map_err(|_| bad())?,
            bits: all,
        })
    }
}

impl fmt::Display for ParamSet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let bits: Vec<String> = self.bits.iter().map(i32::to_string).collect();
        write!(f, "{}:{}", self.log_n, bits.join(","))
    }
}

/// One parameter set's SEAL objects: context, levels, tools and keys (none for a single
/// prime: SEAL refuses key switching there).
pub struct Setup {
    pub params: ParamSet,
    /// Data levels, first to last.
    chain: Vec<ParmsId>,
    /// Scales a step picks from: powers of two and primes of the chain.
    scales: Vec<f64>,
    encoder: CkksEncoder,
    encryptor: Encryptor,
    evaluator: Evaluator,
    keys: Option<(RelinKeys, GaloisKeys)>,
    /// A ciphertext and keys of another parameter set (one more prime): SEAL rejects them.
    foreign: (Ciphertext, RelinKeys, GaloisKeys),
}

impl Setup {
    /// Errors: SEAL's, for sets it refuses (no security check is made).
    pub fn new(params: &ParamSet) -> Result<Setup> {
        let ctx =
            CkksContext::new_with_security(1 << params.log_n, &params.bits, SecLevelType::None)?;
        let keygen = KeyGenerator::new(&ctx)?;
        let keys = if ctx.using_keyswitching() {
            Some((
                keygen.relin_keys()?,
                keygen.galois_keys_from_steps(&KEY_STEPS)?,
            ))
        } else {
            None
        };
        let foreign = {
            let mut bits = params.bits.clone();
            bits.insert(0, 30);
            let ctx = CkksContext::new_with_security(1 << params.log_n, &bits, SecLevelType::None)?;
            let keygen = KeyGenerator::new(&ctx)?;
            let plain =
                CkksEncoder::new(&ctx)?.encode(&[0.5], &ctx.first_parms_id(), 2f64.powi(20))?;
            (
                Encryptor::new(&ctx, &keygen.public_key()?)?.encrypt(&plain)?,
                keygen.relin_keys()?,
                keygen.galois_keys_from_steps(&KEY_STEPS)?,
            )
        };
        let chain = ctx.parms_id_chain()?;
        let primes = ctx.coeff_modulus(&chain[0])?;
        // Small scales leave room for products at the lowest levels; large ones and the
        // primes themselves (SEAL's usual choice) go out of bounds sooner.
        let mut scales: Vec<f64> = [10, 15, 20, 25, 30, 40]
            .iter()
            .map(|&b| 2f64.powi(b))
            .collect();
        scales.extend(primes.iter().rev().take(2).map(|&q| q as f64));
        Ok(Setup {
            params: params.clone(),
            encoder: CkksEncoder::new(&ctx)?,
            encryptor: Encryptor::new(&ctx, &keygen.public_key()?)?,
            evaluator: Evaluator::new(&ctx)?,
            keys,
            foreign,
            chain,
            scales,
        })
    }

    fn level_name(&self, id: &ParmsId) -> String {
        match self.chain.iter().position(|p| p == id) {
            Some(i) => format!("L{}", self.chain.len() - 1 - i),
            None => "L?".into(),
        }
    }
}

/// What a step does. Operands are live objects by index (modulo their count).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Encrypt,
    /// A ciphertext of another parameter set.
    Foreign,
    Encode,
    /// An all-zero plaintext: multiplying by it gives a transparent result.
    EncodeZero,
    SetScale,
    Negate,
    Add,
    Sub,
    AddMany,
    Multiply,
    Square,
    Relinearize,
    RescaleToNext,
    RescaleTo,
    ModSwitchToNext,
    ModSwitchTo,
    ModSwitchPlainToNext,
    MultiplyPlain,
    AddPlain,
    SubPlain,
    RotateVector,
    ComplexConjugate,
    ApplyGalois,
    TransformToNtt,
    TransformFromNtt,
}

impl Kind {
    /// Whether the operation needs key-switching keys.
    fn switches_keys(self) -> bool {
        matches!(
            self,
            Kind::Relinearize | Kind::RotateVector | Kind::ComplexConjugate | Kind::ApplyGalois
        )
    }

    /// The draw of [`Program::random`]: operations once each, new operands and the usual
    /// chain (multiply, relinearize, rescale) more often.
    const WEIGHTED: [Kind; 31] = [
        Kind::Encrypt,
        Kind::Foreign,
        Kind::Encrypt,
        Kind::Encrypt,
        Kind::Encode,
        Kind::Encode,
        Kind::EncodeZero,
        Kind::SetScale,
        Kind::Negate,
        Kind::Add,
        Kind::Sub,
        Kind::AddMany,
        Kind::Multiply,
        Kind::Multiply,
        Kind::Square,
        Kind::Relinearize,
        Kind::Relinearize,
        Kind::RescaleToNext,
        Kind::RescaleToNext,
        Kind::RescaleTo,
        Kind::ModSwitchToNext,
        Kind::ModSwitchTo,
        Kind::ModSwitchPlainToNext,
        Kind::MultiplyPlain,
        Kind::AddPlain,
        Kind::SubPlain,
        Kind::RotateVector,
        Kind::ComplexConjugate,
        Kind::ApplyGalois,
        Kind::TransformToNtt,
        Kind::TransformFromNtt,
    ];
}

/// One step: `a`, `b`, `c` pick operands, `arg` a level, scale, rotation or Galois element.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Step {
    pub kind: Kind,
    a: usize,
    b: usize,
    c: usize,
    arg: usize,
    /// In place (the result replaces `a`) or into a new ciphertext.
    inplace: bool,
    /// On the GPU path, the second operand is an unmarked host copy; for new objects, the
    /// GPU copy starts resident (device newer) instead of host newer.
    mixed: bool,
    /// Compare the result at once (else later: when replaced, and at the end).
    check: bool,
}

impl Step {
    /// A key-switching step uses keys of another parameter set one time in eight.
    fn foreign_keys(&self) -> bool {
        self.c.is_multiple_of(8)
    }

    fn random(rng: &mut impl Rng, kind: Kind) -> Step {
        Step {
            kind,
            a: rng.gen_range(0..64),
            b: rng.gen_range(0..64),
            c: rng.gen_range(0..64),
            arg: rng.gen_range(0..64),
            inplace: rng.gen(),
            mixed: rng.gen_bool(0.25),
            check: rng.gen(),
        }
    }
}

/// A random program: its steps, and the seed of the values it encodes.
#[derive(Clone, Debug)]
pub struct Program {
    pub seed: u64,
    pub steps: Vec<Step>,
}

impl Program {
    /// A random program of `len` steps for any parameter set (the first three make two
    /// ciphertexts and a plaintext, so operations have operands from the start).
    pub fn random(rng: &mut impl Rng, len: usize) -> Program {
        let mut steps: Vec<Step> = [Kind::Encrypt, Kind::Encrypt, Kind::Encode]
            .iter()
            .map(|&kind| Step::random(rng, kind))
            .collect();
        while steps.len() < len {
            let kind = Kind::WEIGHTED[rng.gen_range(0..Kind::WEIGHTED.len())];
            steps.push(Step::random(rng, kind));
        }
        steps.truncate(len);
        Program {
            seed: rng.gen(),
            steps,
        }
    }
}

/// A difference between the two paths, at step `step` of the program.
#[derive(Clone, Debug)]
pub struct Failure {
    pub step: usize,
    pub what: String,
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "step {}: {}", self.step, self.what)
    }
}

/// What a run did: Evaluator calls valid on both paths (same words), invalid on both (same
/// exception), and other steps (encryptions, encodings, scale changes, skipped steps).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    pub valid: u64,
    pub invalid: u64,
    pub other: u64,
}

impl Counts {
    pub fn add(&mut self, other: Counts) {
        self.valid += other.valid;
        self.invalid += other.invalid;
        self.other += other.other;
    }
}

/// Runs `program` on `setup`. `Err` is a harness error (SEAL refused to build an operand
/// the program needs in a way that is not a fuzzing result); `Ok(Err(_))` a failure.
pub fn run(setup: &Setup, program: &Program) -> Result<std::result::Result<Counts, Failure>> {
    let mut world = World::new(setup, program.seed);
    Ok(world.run(program)?.map(|()| world.counts))
}

/// The operations `program` runs, one line each, as far as it gets.
pub fn trace(setup: &Setup, program: &Program) -> Result<Vec<String>> {
    let mut world = World::new(setup, program.seed);
    let outcome = world.run(program)?;
    if let Err(failure) = outcome {
        world.trace.push(format!("FAILS: {failure}"));
    }
    Ok(world.trace)
}

/// The shortest program found for which `fails` holds (at most `budget` calls; `program`
/// itself fails): delta debugging, dropping runs of steps, halving the run length when none
/// can go. For a fuzzing failure, `fails` runs the candidate ([`run`]).
pub fn shrink(
    program: &Program,
    budget: usize,
    mut fails: impl FnMut(&Program) -> Result<bool>,
) -> Result<Program> {
    let mut best = program.clone();
    let mut runs = 0;
    let mut chunk = best.steps.len().div_ceil(2);
    while chunk >= 1 && runs < budget {
        let mut i = 0;
        let mut dropped = false;
        while i < best.steps.len() && runs < budget {
            let mut candidate = best.clone();
            candidate
                .steps
                .drain(i..(i + chunk).min(candidate.steps.len()));
            runs += 1;
            if fails(&candidate)? {
                best = candidate;
                dropped = true;
            } else {
                i += chunk;
            }
        }
        if !dropped {
            chunk /= 2;
        }
    }
    Ok(best)
}
