//! Soak runs of a long-lived SEAL server on the GPU backend, over `seal_c`:
//!
//! - [`clients`]: many clients, each with a fresh `KeyGenerator` (its own relinearization and
//!   Galois keys), served MulLin and rotations; a window of recent clients stays connected
//!   and one of them is served again each round, so evicted keys are uploaded again; the
//!   keys of a client that leaves die with their objects. Device memory (pool and key cache)
//!   is reported as the run goes; key bytes must stay under the cap.
//! - [`server`]: a server that never decrypts: operations on resident ciphertexts whose
//!   results are saved (`Ciphertext::save`, SEAL's serialization) and dropped; the pool's
//!   misses and bytes must stay flat after a warm-up.
//!
//! Every result is compared with SEAL's CPU result (words, or the saved bytes). Used by
//! `examples/soak.rs` (the full runs) and `tests/seal_soak.rs` (small ones on PoCL).

use std::collections::VecDeque;

use rand::{Rng, SeedableRng};

use crate::seal_c::{
    Ciphertext, CkksContext, CkksEncoder, Encryptor, Evaluator, GaloisKeys, KeyGenerator,
    RelinKeys, SecLevelType,
};
use seal_opencl::error::{Error, Result};
use seal_opencl::ffi::{installed_device_memory, DeviceMemory};

/// Clients connected at once in [`clients`].
const WINDOW: usize = 8;

/// The device memory of the installed backend now.
pub fn device_memory() -> Result<DeviceMemory> {
    installed_device_memory().map_err(|e| Error::Logic(e.to_string()))
}

/// One parameter set's tools; keys belong to the clients.
pub struct Soak {
    ctx: CkksContext,
    encoder: CkksEncoder,
    evaluator: Evaluator,
    scale: f64,
    rng: rand::rngs::StdRng,
}

/// One client: its keys and two ciphertexts it sent, on both paths.
struct Client {
    relin: RelinKeys,
    galois: GaloisKeys,
    cpu: (Ciphertext, Ciphertext),
    gpu: (Ciphertext, Ciphertext),
}

/// What a [`clients`] run saw.
#[derive(Clone, Debug, Default)]
pub struct ClientsSummary {
    pub key_sets: usize,
    pub requests: usize,
    /// Largest key cache bytes and pool bytes seen at the reports.
    pub peak_key_bytes: u64,
    pub peak_pool_bytes: u64,
    pub last: DeviceMemory,
}

/// What a [`server`] run saw: the memory after the warm-up and at the end.
#[derive(Clone, Debug, Default)]
pub struct ServerSummary {
    pub operations: usize,
    pub after_warm_up: DeviceMemory,
    pub last: DeviceMemory,
}

impl Soak {
    /// N = 2^`log_n`, primes of `bits` (the last the special prime), scale 2^`scale_bits`.
    /// The backend must be installed.
    pub fn new(log_n: u32, bits: &[i32], scale_bits: i32, seed: u64) -> Result<Soak> {
        let ctx = CkksContext::new_with_security(1 << log_n, bits, SecLevelType::None)?;
        Ok(Soak {
            encoder: CkksEncoder::new(&ctx)?,
            evaluator: Evaluator::new(&ctx)?,
            scale: 2f64.powi(scale_bits),
            rng: rand::rngs::StdRng::seed_from_u64(seed),
            ctx,
        })
    }

    fn encrypt(&mut self, encryptor: &Encryptor) -> Result<Ciphertext> {
        let values: Vec<f64> = (0..self.encoder.slot_count())
            .map(|_| self.rng.gen_range(-1.0..1.0))
            .collect();
        let plain = self
            .encoder
            .encode(&values, &self.ctx.first_parms_id(), self.scale)?;
        encryptor.encrypt(&plain)
    }

    /// A new client: fresh keys, two ciphertexts under its public key, GPU copies marked.
    fn client(&mut self) -> Result<Client> {
        let keygen = KeyGenerator::new(&self.ctx)?;
        let encryptor = Encryptor::new(&self.ctx, &keygen.public_key()?)?;
        let (a, b) = (self.encrypt(&encryptor)?, self.encrypt(&encryptor)?);
        let (mut ga, mut gb) = (a.try_clone()?, b.try_clone()?);
        ga.gpu()?;
        gb.gpu()?;
        Ok(Client {
            relin: keygen.relin_keys()?,
            galois: keygen.galois_keys_from_steps(&[1, -1])?,
            cpu: (a, b),
            gpu: (ga, gb),
        })
    }

    /// MulLin and a rotation by `step` (1 or -1) of a client's ciphertexts on one path.
    fn serve(
        &self,
        c: &Client,
        (a, b): (&Ciphertext, &Ciphertext),
        step: i32,
    ) -> Result<Ciphertext> {
        let ev = &self.evaluator;
        let mut x = Ciphertext::new()?;
        ev.multiply(a, b, &mut x)?;
        ev.relinearize_inplace(&mut x, &c.relin)?;
        ev.rotate_vector_inplace(&mut x, step, &c.galois)?;
        Ok(x)
    }

    /// Serves `c` on both paths and compares the results' words.
    fn serve_both(&self, c: &Client, step: i32, what: &str) -> Result<()> {
        let cpu = self.serve(c, (&c.cpu.0, &c.cpu.1), step)?;
        let gpu = self.serve(c, (&c.gpu.0, &c.gpu.1), step)?;
        same(&cpu.save()?, &gpu.save()?, what)
    }
}

/// Byte-for-byte equality of two saved ciphertexts.
fn same(cpu: &[u8], gpu: &[u8], what: &str) -> Result<()> {
    if cpu == gpu {
        return Ok(());
    }
    let first = cpu.iter().zip(gpu).position(|(x, y)| x != y);
    Err(Error::Logic(format!(
        "{what}: the device result differs from SEAL's CPU result ({} vs {} bytes saved, first \
         difference at byte {first:?})",
        cpu.len(),
        gpu.len()
    )))
}

/// When a run reports the device memory: `report(steps_done, memory)` every `every` steps
/// and after the last, before the run checks that memory.
pub struct Reports<F> {
    every: usize,
    report: F,
}

impl<F: FnMut(usize, &DeviceMemory)> Reports<F> {
    pub fn every(every: usize, report: F) -> Reports<F> {
        Reports { every, report }
    }

    /// The device memory after step `done` of `total`, reported, where a report is due.
    fn due(&mut self, done: usize, total: usize) -> Result<Option<DeviceMemory>> {
        if !done.is_multiple_of(self.every) && done != total {
            return Ok(None);
        }
        let m = device_memory()?;
        (self.report)(done, &m);
        Ok(Some(m))
    }
}

/// `sets` clients, one new per round (the oldest of [`WINDOW`] leaves), each served MulLin
/// and a rotation, plus one earlier client served again, with `reports` per round. Errors:
/// a result that differs from SEAL's CPU result, key bytes over the cap, pool misses that
/// grow once more than [`WINDOW`] clients came (every request needs the same buffers), and
/// SEAL's or the device's errors.
pub fn clients(
    soak: &mut Soak,
    sets: usize,
    mut reports: Reports<impl FnMut(usize, &DeviceMemory)>,
) -> Result<ClientsSummary> {
    let mut live: VecDeque<Client> = VecDeque::new();
    let mut summary = ClientsSummary::default();
    let mut warm_misses = None;
    for set in 1..=sets {
        if live.len() == WINDOW {
            live.pop_front();
        }
        live.push_back(soak.client()?);
        summary.key_sets = set;
        let step = if set % 2 == 0 { 1 } else { -1 };
        soak.serve_both(&live[live.len() - 1], step, &format!("key set {set}"))?;
        let again = soak.rng.gen_range(0..live.len());
        soak.serve_both(
            &live[again],
            -step,
            &format!("key set {set}, an earlier client"),
        )?;
        summary.requests += 2;
        if let Some(m) = reports.due(set, sets)? {
            if m.key_bytes > m.max_key_bytes {
                return Err(Error::Logic(format!(
                    "after {set} key sets the key cache holds {} bytes, over its cap {}",
                    m.key_bytes, m.max_key_bytes
                )));
            }
            // Warm once the window is full and a client has left.
            if set > WINDOW {
                let misses = *warm_misses.get_or_insert(m.pool_misses);
                if m.pool_misses != misses {
                    return Err(Error::Logic(format!(
                        "after {set} key sets the pool missed {} times, {misses} once warm",
                        m.pool_misses
                    )));
                }
            }
            summary.peak_key_bytes = summary.peak_key_bytes.max(m.key_bytes);
            summary.peak_pool_bytes = summary.peak_pool_bytes.max(m.pool_bytes_held);
            summary.last = m;
        }
    }
    Ok(summary)
}

/// A server that never decrypts: `operations` requests on one client's resident
/// ciphertexts (MulLin and rescale, a rotation, an addition, in turn), each result saved
/// with SEAL's `save` (a host read: the download) and compared with SEAL's CPU result, then
/// dropped, with `reports` per operation; the first report ends the warm-up. Errors: a
/// differing result, pool misses or pool bytes that grow after the warm-up, and SEAL's or
/// the device's errors.
pub fn server(
    soak: &mut Soak,
    operations: usize,
    mut reports: Reports<impl FnMut(usize, &DeviceMemory)>,
) -> Result<ServerSummary> {
    let c = soak.client()?;
    let ev = &soak.evaluator;
    let request = |kind: usize, (a, b): (&Ciphertext, &Ciphertext)| -> Result<Ciphertext> {
        let mut x = Ciphertext::new()?;
        match kind {
            0 => {
                ev.multiply(a, b, &mut x)?;
                ev.relinearize_inplace(&mut x, &c.relin)?;
                ev.rescale_to_next_inplace(&mut x)?;
            }
            1 => ev.rotate_vector(a, 1, &c.galois, &mut x)?,
            _ => ev.add(a, b, &mut x)?,
        }
        Ok(x)
    };
    // The inputs never change, so SEAL's answer to each kind is computed once.
    let want: Vec<Vec<u8>> = (0..3)
        .map(|k| request(k, (&c.cpu.0, &c.cpu.1))?.save())
        .collect::<Result<_>>()?;
    let mut summary = ServerSummary::default();
    for i in 1..=operations {
        let kind = i % 3;
        let x = request(kind, (&c.gpu.0, &c.gpu.1))?;
        same(&want[kind], &x.save()?, &format!("operation {i}"))?;
        if let Some(m) = reports.due(i, operations)? {
            if i <= reports.every {
                summary.after_warm_up = m;
            } else if m.pool_misses != summary.after_warm_up.pool_misses
                || m.pool_bytes_held > summary.after_warm_up.pool_bytes_held
            {
                return Err(Error::Logic(format!(
                    "after {i} operations the pool grew since the warm-up: {:?} -> {m:?}",
                    summary.after_warm_up
                )));
            }
            summary.last = m;
        }
        summary.operations = i;
    }
    Ok(summary)
}
