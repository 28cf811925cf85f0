//! SEAL's CKKS public-key encryption (`Encryptor::encrypt_zero_internal` with the public key,
//! seal-patch 0010): the host draws SEAL's samples as SEAL's samplers draw them, so the random
//! stream is SEAL's; the device does the arithmetic. SEAL's samples are small (u ternary, e_0
//! and e_1 centered binomial, |e| <= 21) and SEAL writes each coefficient's value at every
//! prime (its residue in [0, q_i)): the host hands one signed byte a coefficient, and the
//! device writes the residues (`ckks_lift_signed`).
//!
//! At a level L of K primes with a previous level L' of K' = K + 1 primes (SEAL's CKKS chain:
//! the first data level's previous is the key level), SEAL computes
//! `util::encrypt_zero_asymmetric` at L' and then `divide_and_round_q_last_ntt_inplace` of
//! each polynomial into L. With u the ternary sample, e_0 and e_1 the noise samples (K'
//! residues each, in coefficient form, canonical) and pk_j the first K' residues of the
//! public key's polynomial j (it lies at the key level), for each prime q_i of L':
//!
//! ```text
//! c_j,i = NTT(e_j)_i + NTT(u)_i * pk_j,i  mod q_i    (j = 0, 1)
//! ```
//!
//! SEAL's `ntt_negacyclic_harvey` is fully reduced, `dyadic_product_coeffmod` and
//! `add_poly_coeffmod` are canonical, so every word is a residue in [0, q_i); the device's
//! fully reduced forward NTT and `ckks_sum` of one product term into the noise (the product
//! reduced, then added mod q_i) give the same residues, and the rescale of L'
//! (`LevelOps::rescale`) is SEAL's division. Launches: the NTT of the three samples (1
//! where the level chains, else the plan's 1 or 2 passes), the public key's residues at L'
//! where L' is below the key level (1 copy kernel), the products added into the noise (1),
//! the rescale (1 where the level chains, else 3 or 2), after the samples' residues (1).

use super::transparency::Zeros;
use super::{Backend, GpuImage, Level, Scheme};
use crate::ckks::kernels::{pack_signed, packed_words};
use crate::ckks::SumTerm;
use crate::cl::Region;
use crate::error::{Error, Result};
use crate::ntt::NttDirection;
use zeroize::Zeroize;

impl Backend {
    /// dst = SEAL's public-key encryption of zero at `level` (K primes, CKKS) from SEAL's
    /// samples `u, e_0, e_1` (3 N signed values, coefficient i of polynomial p at p N + i;
    /// SEAL's sample at prime q is the value's residue in [0, q)), `public_key` the public
    /// key's two polynomials at the key level (see the module's documentation). dst's old
    /// contents are replaced; on an error dst is left as it was.
    pub fn encrypt_zero(
        &self,
        level: &Level,
        public_key: &GpuImage,
        samples: &[i8],
        dst: &mut GpuImage,
    ) -> Result<()> {
        let key_primes = level.key_moduli.len();
        if level.scheme != Scheme::Ckks {
            return Err(Error::invalid("encrypt_zero on the device is CKKS's"));
        }
        if level.primes + 1 > key_primes {
            return Err(Error::invalid(
                "parms_id has no previous level to encrypt at on the device",
            ));
        }
        let up = Level {
            primes: level.primes + 1,
            ..*level
        };
        self.with_ops("encrypt_zero", &up, |ops| {
            let (k_up, n, pw) = (ops.primes(), ops.n(), ops.poly_words());
            if samples.len() != 3 * n {
                return Err(Error::invalid(format!(
                    "encrypt_zero: {} samples, 3 polynomials of N = {n} need {}",
                    samples.len(),
                    3 * n
                )));
            }
            if public_key.len() != 2 * key_primes * n {
                return Err(Error::invalid(format!(
                    "public key is not valid for encryption parameters: its device image holds {} \
                     words, 2 polynomials of {key_primes} primes need {}",
                    public_key.len(),
                    2 * key_primes * n
                )));
            }
            let graph = ops.graph();
            // [u | e_0 | e_1] at L' (the values' residues), then NTT(u), NTT(e_0), NTT(e_1),
            // fully reduced as SEAL's. The packed values are secrets: cleared once staged.
            let words = packed_words(samples.len());
            let values = ops.scratch(words)?;
            let mut packed = pack_signed(samples);
            let staged = self
                .staging
                .upload(&self.pinned, graph, values.buffer(), &packed);
            packed.zeroize();
            self.counters.upload(words, staged?);
            let drawn = ops.scratch(3 * pw)?;
            ops.context().kernels().ckks_lift_signed(
                graph,
                drawn.buffer(),
                values.buffer(),
                ops.level().moduli(),
                k_up,
                3,
            )?;
            ops.ntt(drawn.buffer(), [3, k_up], NttDirection::Forward, true)?;
            let u = drawn.buffer().part(0, pw)?;
            let noise = drawn.buffer().part(pw, 2 * pw)?;
            // pk_j's first K' residues, where L' is below the key level.
            let key = public_key.read_on(graph)?;
            let at_level;
            let pk: &Region = if k_up == key_primes {
                &key
            } else {
                at_level = ops.scratch(2 * pw)?;
                ops.context().kernels().ckks_copy_residues(
                    graph,
                    at_level.buffer(),
                    k_up,
                    &key,
                    key_primes,
                    k_up,
                    2,
                )?;
                at_level.buffer()
            };
            // e_j += u * pk_j: c_j at L'.
            let term = SumTerm {
                plain: Some(&u),
                ..SumTerm::words(pk, false)
            };
            ops.sum(&noise, true, &[term], 2)?;
            // Divided and rounded by L''s last prime into L: the result.
            let out = ops.alloc_result(2, k_up - 1)?;
            ops.rescale(out.buffer(), &noise, 2)?;
            let poly_words = (k_up - 1) * n;
            dst.replace(graph, out, 2 * poly_words);
            dst.set_zeros(Zeros::Unknown, poly_words);
            Ok(())
        })
    }
}
