//! The fuzzer's run of a [`Program`]: the live objects on both paths, each step on both,
//! and the comparison of their results and errors.

use rand::{Rng, SeedableRng};
use seal_opencl::error::{Error, Result};

use super::{Counts, Failure, Kind, Program, Setup, Step, MAX_CTS, MAX_PLAINS, ROTATIONS};
use crate::seal_c::{hresult_of, Ciphertext, ParmsId, Plaintext};

/// A SEAL object on both paths.
struct Pair<T> {
    cpu: T,
    gpu: T,
}

/// The live objects of a run.
pub(super) struct World<'s> {
    setup: &'s Setup,
    rng: rand::rngs::StdRng,
    cts: Vec<Pair<Ciphertext>>,
    plains: Vec<Pair<Plaintext>>,
    pub(super) counts: Counts,
    /// The operations as run, one line each (for a reproducer).
    pub(super) trace: Vec<String>,
}

/// How a CPU object and its GPU counterpart differ (None: same metadata and words): their
/// metadata `meta` (its parts named by `fields`) first, then their words, which `words`
/// reads only where the metadata agree. Reading the GPU object's words is a host read (a
/// download when the device is newer).
fn difference<M: PartialEq + std::fmt::Debug>(
    fields: &str,
    meta: [M; 2],
    words: impl FnOnce() -> Result<[Vec<u64>; 2]>,
) -> Result<Option<String>> {
    let [cpu, gpu] = meta;
    if cpu != gpu {
        return Ok(Some(format!("{fields} {cpu:?} != {gpu:?}")));
    }
    let [cpu, gpu] = words()?;
    Ok(word_difference(&cpu, &gpu))
}

fn ct_difference(cpu: &Ciphertext, gpu: &Ciphertext) -> Result<Option<String>> {
    let meta = |c: &Ciphertext| (c.size(), c.parms_id(), c.scale().to_bits(), c.is_ntt_form());
    let fields = "metadata (size, parms_id, scale bits, NTT)";
    difference(fields, [meta(cpu), meta(gpu)], || {
        Ok([cpu.data()?, gpu.data()?])
    })
}

fn plain_difference(cpu: &Plaintext, gpu: &Plaintext) -> Result<Option<String>> {
    let meta = |p: &Plaintext| {
        (
            p.coeff_count(),
            p.parms_id(),
            p.scale().to_bits(),
            p.is_ntt_form(),
        )
    };
    let fields = "plaintext metadata (coeff_count, parms_id, scale bits, NTT)";
    difference(fields, [meta(cpu), meta(gpu)], || {
        Ok([cpu.data()?, gpu.data()?])
    })
}

fn word_difference(want: &[u64], got: &[u64]) -> Option<String> {
    let i = (0..want.len()).find(|&i| want[i] != got[i])?;
    let differ = (0..want.len()).filter(|&i| want[i] != got[i]).count();
    Some(format!(
        "{differ} of {} words differ, first at {i}: CPU {:#x}, GPU {:#x}",
        want.len(),
        want[i],
        got[i]
    ))
}

/// Where an operation writes: its first operand, or a new ciphertext.
enum Target<'a> {
    InPlace(&'a mut Ciphertext),
    To(&'a Ciphertext, &'a mut Ciphertext),
}

/// Calls `$ev.$to(src, args.., dest)` or `$ev.$inplace(a, args..)` for `$target`.
macro_rules! call {
    ($ev:expr, $target:expr, $to:ident, $inplace:ident $(, $arg:expr)*) => {
        match $target {
            Target::InPlace(x) => $ev.$inplace(x $(, $arg)*),
            Target::To(x, dest) => $ev.$to(x $(, $arg)*, dest),
        }
    };
}

/// The second operand of a binary operation, per path.
#[derive(Clone, Copy)]
enum Second {
    None,
    Ct(usize),
    Plain(usize),
}

impl<'s> World<'s> {
    pub(super) fn new(setup: &'s Setup, seed: u64) -> World<'s> {
        World {
            setup,
            rng: rand::rngs::StdRng::seed_from_u64(seed),
            cts: Vec::new(),
            plains: Vec::new(),
            counts: Counts::default(),
            trace: Vec::new(),
        }
    }

    pub(super) fn run(&mut self, program: &Program) -> Result<std::result::Result<(), Failure>> {
        for (i, step) in program.steps.iter().enumerate() {
            if let Err(what) = self.step(step)? {
                return Ok(Err(Failure { step: i, what }));
            }
        }
        for i in 0..self.cts.len() {
            if let Err(what) = self.compare_ct(i, "at the end")? {
                return Ok(Err(Failure {
                    step: program.steps.len(),
                    what,
                }));
            }
        }
        for i in 0..self.plains.len() {
            if let Err(what) = self.compare_plain(i)? {
                return Ok(Err(Failure {
                    step: program.steps.len(),
                    what,
                }));
            }
        }
        Ok(Ok(()))
    }

    fn compare_ct(&self, i: usize, when: &str) -> Result<std::result::Result<(), String>> {
        let p = &self.cts[i];
        Ok(match ct_difference(&p.cpu, &p.gpu)? {
            Some(d) => Err(format!("c{i} {when}: {d}")),
            None => Ok(()),
        })
    }

    fn compare_plain(&self, i: usize) -> Result<std::result::Result<(), String>> {
        let p = &self.plains[i];
        Ok(match plain_difference(&p.cpu, &p.gpu)? {
            Some(d) => Err(format!("p{i}: {d}")),
            None => Ok(()),
        })
    }

    fn note(&mut self, line: String) {
        self.trace.push(line);
    }

    /// One step. `Ok(Err(what))` is a difference between the paths.
    fn step(&mut self, s: &Step) -> Result<std::result::Result<(), String>> {
        let setup = self.setup;
        let level = |arg: usize| setup.chain[arg % setup.chain.len()];
        let scale = setup.scales[s.arg % setup.scales.len()];
        match s.kind {
            Kind::Encrypt => {
                let id = level(s.arg);
                let Some(plain) =
                    self.encode(&id, setup.scales[s.b % setup.scales.len()], false)?
                else {
                    return self.skipped(s);
                };
                let cpu = setup.encryptor.encrypt(&plain)?;
                let mut gpu = cpu.try_clone()?;
                if s.mixed {
                    crate::routines::to_device(&setup.evaluator, &mut [&mut gpu])?;
                } else {
                    gpu.gpu()?;
                }
                let line = format!(
                    "encrypt at {} scale {} ({})",
                    setup.level_name(&id),
                    cpu.scale(),
                    if s.mixed { "resident" } else { "host newer" }
                );
                self.counts.other += 1;
                Ok(self.add_ct(s.c, Pair { cpu, gpu }, line)?.map(drop))
            }
            Kind::Foreign => {
                let cpu = setup.foreign.0.try_clone()?;
                let mut gpu = cpu.try_clone()?;
                gpu.gpu()?;
                self.counts.other += 1;
                Ok(self
                    .add_ct(
                        s.c,
                        Pair { cpu, gpu },
                        "a ciphertext of another parameter set".into(),
                    )?
                    .map(drop))
            }
            Kind::Encode | Kind::EncodeZero => {
                let id = level(s.arg);
                let Some(cpu) = self.encode(
                    &id,
                    setup.scales[s.b % setup.scales.len()],
                    s.kind == Kind::EncodeZero,
                )?
                else {
                    return self.skipped(s);
                };
                let mut gpu = cpu.try_clone()?;
                if !s.mixed {
                    gpu.gpu()?;
                }
                self.note(format!(
                    "p{} = encode{} at {} scale {} ({})",
                    s.c % MAX_PLAINS,
                    if s.kind == Kind::EncodeZero {
                        " zeros"
                    } else {
                        ""
                    },
                    setup.level_name(&id),
                    cpu.scale(),
                    if s.mixed { "unmarked" } else { "marked" }
                ));
                self.counts.other += 1;
                let pair = Pair { cpu, gpu };
                if self.plains.len() < MAX_PLAINS {
                    self.plains.push(pair);
                } else {
                    let i = s.c % MAX_PLAINS;
                    if let Err(what) = self.compare_plain(i)? {
                        return Ok(Err(what));
                    }
                    self.plains[i] = pair;
                }
                Ok(Ok(()))
            }
            Kind::SetScale => {
                if self.cts.is_empty() {
                    return self.skipped(s);
                }
                let i = s.a % self.cts.len();
                self.cts[i].cpu.set_scale(scale);
                self.cts[i].gpu.set_scale(scale);
                self.note(format!("c{i}.set_scale({scale})"));
                self.counts.other += 1;
                Ok(Ok(()))
            }
            Kind::ModSwitchPlainToNext => self.mod_switch_plain(s),
            _ => self.evaluate(s),
        }
    }

    fn skipped(&mut self, s: &Step) -> Result<std::result::Result<(), String>> {
        self.counts.other += 1;
        self.note(format!("(skipped {:?})", s.kind));
        Ok(Ok(()))
    }

    /// Random values (or zeros) at level `id` and `scale`; None where SEAL's encoder refuses
    /// the scale (not a fuzzing result: the encoder is not routed).
    fn encode(&mut self, id: &ParmsId, scale: f64, zero: bool) -> Result<Option<Plaintext>> {
        let slots = self.setup.encoder.slot_count();
        let values: Vec<f64> = (0..slots)
            .map(|_| {
                if zero {
                    0.0
                } else {
                    self.rng.gen_range(-1.0..1.0)
                }
            })
            .collect();
        Ok(self.setup.encoder.encode(&values, id, scale).ok())
    }

    /// Keeps `pair` as a live ciphertext (replacing slot `slot` when full, after comparing
    /// the one it replaces); `Ok(Ok(i))`: it is `c{i}`.
    fn add_ct(
        &mut self,
        slot: usize,
        pair: Pair<Ciphertext>,
        what: String,
    ) -> Result<std::result::Result<usize, String>> {
        let i = if self.cts.len() < MAX_CTS {
            self.cts.push(pair);
            self.cts.len() - 1
        } else {
            let i = slot % MAX_CTS;
            if let Err(what) = self.compare_ct(i, "when replaced")? {
                return Ok(Err(what));
            }
            self.cts[i] = pair;
            i
        };
        self.note(format!("c{i} = {what}"));
        Ok(Ok(i))
    }

    fn mod_switch_plain(&mut self, s: &Step) -> Result<std::result::Result<(), String>> {
        if self.plains.is_empty() {
            return self.skipped(s);
        }
        let ev = &self.setup.evaluator;
        let i = s.a % self.plains.len();
        let before = self.plains[i].cpu.try_clone()?;
        let line = format!("p{i}.mod_switch_to_next (in place)");
        let p = &mut self.plains[i];
        let (cpu, gpu) = (
            ev.mod_switch_to_next_plain_inplace(&mut p.cpu),
            ev.mod_switch_to_next_plain_inplace(&mut p.gpu),
        );
        let outcome = match (&cpu, &gpu) {
            (Ok(()), Ok(())) => {
                self.counts.valid += 1;
                if s.check {
                    self.compare_plain(i)?
                } else {
                    Ok(())
                }
            }
            (Err(c), Err(g)) if hresult_of(c) == hresult_of(g) => {
                self.counts.invalid += 1;
                match plain_difference(&before, &self.plains[i].gpu)? {
                    Some(d) => Err(format!("p{i} changed by a failed call: {d}")),
                    None => {
                        self.plains[i].cpu = before;
                        Ok(())
                    }
                }
            }
            _ => Err(format!("CPU {cpu:?}, GPU {gpu:?}")),
        };
        self.note(format!("{line}: {}", outcome_text(&cpu)));
        Ok(outcome.map_err(|d| format!("{line}: {d}")))
    }

    /// One Evaluator call on both paths, compared.
    fn evaluate(&mut self, s: &Step) -> Result<std::result::Result<(), String>> {
        if self.cts.is_empty() {
            return self.skipped(s);
        }
        let setup = self.setup;
        let n = self.cts.len();
        let a = s.a % n;
        let second = match s.kind {
            Kind::Add | Kind::Sub | Kind::Multiply | Kind::AddMany => {
                Second::Ct(self.pick(&self.cts, a, s.b, |c| (c.parms_id(), c.scale().to_bits())))
            }
            Kind::MultiplyPlain | Kind::AddPlain | Kind::SubPlain if self.plains.is_empty() => {
                return self.skipped(s)
            }
            Kind::MultiplyPlain => {
                Second::Plain(self.pick(&self.plains, a, s.b, |p| (p.parms_id(), 0)))
            }
            Kind::AddPlain | Kind::SubPlain => {
                Second::Plain(self.pick(&self.plains, a, s.b, |p| {
                    (p.parms_id(), p.scale().to_bits())
                }))
            }
            _ => Second::None,
        };
        if s.kind.switches_keys() && setup.keys.is_none() {
            return self.skipped(s);
        }
        // A binary operation with both operands the same ciphertext can only write a new one.
        let inplace = s.inplace && !matches!(second, Second::Ct(b) if b == a);
        let line = self.describe(s, a, second, inplace);

        let before = self.cts[a].cpu.try_clone()?;
        let mut fresh = (Ciphertext::new()?, Ciphertext::new()?);
        let cpu = self.call(s, a, second, inplace, false, &mut fresh.0);
        let gpu = self.call(s, a, second, inplace, true, &mut fresh.1);
        let outcome = match (&cpu, &gpu) {
            (Ok(()), Ok(())) => {
                self.counts.valid += 1;
                if inplace {
                    if s.check {
                        self.compare_ct(a, "")?
                    } else {
                        Ok(())
                    }
                } else {
                    let (cpu, gpu) = fresh;
                    match self.add_ct(s.c, Pair { cpu, gpu }, line.clone())? {
                        Ok(i) if s.check => self.compare_ct(i, "")?,
                        other => other.map(drop),
                    }
                }
            }
            (Err(c), Err(g)) if hresult_of(c) == hresult_of(g) => {
                self.counts.invalid += 1;
                self.after_failure(a, second, &before)?
            }
            _ => Err(format!("CPU {cpu:?}, GPU {gpu:?}")),
        };
        if inplace || cpu.is_err() {
            self.note(format!("{line}: {}", outcome_text(&cpu)));
        }
        Ok(outcome.map_err(|d| format!("{line}: {d}")))
    }

    /// After both paths failed alike: the GPU path's operands are intact or changed as SEAL's
    /// CPU path changed its own; the CPU copy of `a` is restored where only it changed.
    fn after_failure(
        &mut self,
        a: usize,
        second: Second,
        before: &Ciphertext,
    ) -> Result<std::result::Result<(), String>> {
        if let Some(d) = ct_difference(before, &self.cts[a].gpu)? {
            if ct_difference(&self.cts[a].cpu, &self.cts[a].gpu)?.is_some() {
                return Ok(Err(format!("c{a} changed by a failed call: {d}")));
            }
        } else {
            self.cts[a].cpu = before.try_clone()?;
        }
        Ok(match second {
            Second::Ct(b) if b != a => self.compare_ct(b, "(second operand of a failed call)")?,
            Second::Plain(p) => self.compare_plain(p)?,
            _ => Ok(()),
        })
    }

    /// The second operand for `c{a}` among `pool`: three times in four the first from
    /// `pick` on that agrees with `a` on `key` (level and scale, so that chains of valid
    /// operations get long), else (or if none does) simply `pick` modulo the count.
    fn pick<T>(
        &self,
        pool: &[Pair<T>],
        a: usize,
        pick: usize,
        key: impl Fn(&T) -> (ParmsId, u64),
    ) -> usize {
        let n = pool.len();
        let a = &self.cts[a].cpu;
        let want = (a.parms_id(), a.scale().to_bits());
        let matches = |j: &usize| {
            let (id, scale) = key(&pool[*j].cpu);
            id == want.0 && (scale == 0 || scale == want.1)
        };
        let start = pick / 4;
        if !pick.is_multiple_of(4) {
            if let Some(j) = (start..start + n).map(|j| j % n).find(matches) {
                return j;
            }
        }
        start % n
    }

    fn describe(&self, s: &Step, a: usize, second: Second, inplace: bool) -> String {
        let c = &self.cts[a].cpu;
        let mut args = format!(
            "c{a} [size {} {} scale {}{}]",
            c.size(),
            self.setup.level_name(&c.parms_id()),
            c.scale(),
            if c.is_ntt_form() { "" } else { " not NTT" }
        );
        match second {
            Second::Ct(b) => args += &format!(", c{b}"),
            Second::Plain(p) => args += &format!(", p{p}"),
            Second::None => {}
        }
        match s.kind {
            Kind::RescaleTo | Kind::ModSwitchTo => {
                let id = self.setup.chain[s.arg % self.setup.chain.len()];
                args += &format!(", {}", self.setup.level_name(&id));
            }
            Kind::RotateVector => args += &format!(", {}", ROTATIONS[s.arg % ROTATIONS.len()]),
            Kind::ApplyGalois => args += &format!(", {}", self.galois_elt(s.arg)),
            _ => {}
        }
        let mut mixed = if s.mixed && !matches!(second, Second::None) {
            " (GPU path: second operand unmarked)"
        } else {
            ""
        }
        .to_string();
        if s.kind.switches_keys() && s.foreign_keys() {
            mixed += " (keys of another parameter set)";
        }
        let op = format!("{:?}", s.kind).to_lowercase();
        if inplace {
            format!("{op}_inplace({args}){mixed}")
        } else {
            format!("{op}({args}){mixed}")
        }
    }

    /// A Galois element: odd ones (with or without a key) and an even one (invalid).
    fn galois_elt(&self, arg: usize) -> u32 {
        let two_n = 2u32 << self.setup.params.log_n;
        [3, 5, 25, two_n - 1, 4][arg % 5]
    }

    /// The step's call on one path (`gpu`): in place on `a` or into `fresh`.
    fn call(
        &mut self,
        s: &Step,
        a: usize,
        second: Second,
        inplace: bool,
        gpu: bool,
        fresh: &mut Ciphertext,
    ) -> Result<()> {
        let setup = self.setup;
        let ev = &setup.evaluator;
        let elt = self.galois_elt(s.arg);
        // The second operand, a copy so that it may alias `a` (copies keep the mark; the
        // GPU path's `mixed` copy is the unmarked CPU one).
        let b = match second {
            Second::Ct(b) if gpu && s.mixed => Some(self.cts[b].cpu.try_clone()?),
            Second::Ct(b) if gpu => Some(self.cts[b].gpu.try_clone()?),
            Second::Ct(b) => Some(self.cts[b].cpu.try_clone()?),
            _ => None,
        };
        let plain = match second {
            Second::Plain(p) if gpu && !s.mixed => Some(&self.plains[p].gpu),
            Second::Plain(p) => Some(&self.plains[p].cpu),
            _ => None,
        };
        let x = if gpu {
            &mut self.cts[a].gpu
        } else {
            &mut self.cts[a].cpu
        };
        let target = if inplace {
            Target::InPlace(x)
        } else {
            Target::To(x, fresh)
        };
        let level = setup.chain[s.arg % setup.chain.len()];
        let keys = if s.foreign_keys() {
            Some((&setup.foreign.1, &setup.foreign.2))
        } else {
            setup.keys.as_ref().map(|(r, g)| (r, g))
        };
        // The operands a kind needs; a missing one is a harness error.
        let b = || b.as_ref().ok_or_else(|| missing("second ciphertext"));
        let plain = || plain.ok_or_else(|| missing("plaintext"));
        let relin = || keys.map(|k| k.0).ok_or_else(|| missing("keys"));
        let galois = || keys.map(|k| k.1).ok_or_else(|| missing("keys"));
        match s.kind {
            Kind::Negate => call!(ev, target, negate, negate_inplace),
            Kind::Add => call!(ev, target, add, add_inplace, b()?),
            Kind::Sub => call!(ev, target, sub, sub_inplace, b()?),
            Kind::Multiply => call!(ev, target, multiply, multiply_inplace, b()?),
            Kind::AddMany => match target {
                Target::InPlace(x) => {
                    let sum = x.try_clone()?;
                    ev.add_many(&[&sum, b()?, &sum], x)
                }
                Target::To(x, dest) => ev.add_many(&[x, b()?], dest),
            },
            Kind::Square => call!(ev, target, square, square_inplace),
            Kind::Relinearize => call!(ev, target, relinearize, relinearize_inplace, relin()?),
            Kind::RescaleToNext => call!(ev, target, rescale_to_next, rescale_to_next_inplace),
            Kind::RescaleTo => call!(ev, target, rescale_to, rescale_to_inplace, &level),
            Kind::ModSwitchToNext => {
                call!(ev, target, mod_switch_to_next, mod_switch_to_next_inplace)
            }
            Kind::ModSwitchTo => call!(ev, target, mod_switch_to, mod_switch_to_inplace, &level),
            Kind::MultiplyPlain => {
                call!(ev, target, multiply_plain, multiply_plain_inplace, plain()?)
            }
            Kind::AddPlain => call!(ev, target, add_plain, add_plain_inplace, plain()?),
            Kind::SubPlain => call!(ev, target, sub_plain, sub_plain_inplace, plain()?),
            Kind::RotateVector => call!(
                ev,
                target,
                rotate_vector,
                rotate_vector_inplace,
                ROTATIONS[s.arg % ROTATIONS.len()],
                galois()?
            ),
            Kind::ComplexConjugate => call!(
                ev,
                target,
                complex_conjugate,
                complex_conjugate_inplace,
                galois()?
            ),
            Kind::ApplyGalois => {
                call!(
                    ev,
                    target,
                    apply_galois,
                    apply_galois_inplace,
                    elt,
                    galois()?
                )
            }
            Kind::TransformToNtt => call!(ev, target, transform_to_ntt, transform_to_ntt_inplace),
            Kind::TransformFromNtt => {
                call!(ev, target, transform_from_ntt, transform_from_ntt_inplace)
            }
            Kind::Encrypt
            | Kind::Foreign
            | Kind::Encode
            | Kind::EncodeZero
            | Kind::SetScale
            | Kind::ModSwitchPlainToNext => Err(Error::Logic(format!(
                "fuzz: {:?} is not an Evaluator call on ciphertexts",
                s.kind
            ))),
        }
    }
}

/// A step's operand that its kind needs and the caller did not pick.
fn missing(what: &str) -> Error {
    Error::Logic(format!("fuzz: the step has no {what}"))
}

fn outcome_text(r: &Result<()>) -> String {
    match r {
        Ok(()) => "ok".into(),
        Err(e) => format!("throws ({e})"),
    }
}
