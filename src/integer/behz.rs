//! SEAL's BEHZ base extensions for BFV multiplication (Bajard, Eynard, Hasan and Zucca, "A
//! Full RNS Variant of FV like Somewhat Homomorphic Encryption Schemes", SAC 2016): the
//! tables of one level, computed on the host exactly as SEAL's `util::RNSTool::initialize`
//! computes them, and host references of the RNSTool steps `Evaluator::bfv_multiply` runs
//! (`fastbconv_m_tilde`, `sm_mrq`, `fast_floor`, `fastbconv_sk`) and of `bfv_multiply`
//! itself. SEAL 4.0.0 and 4.4.3 agree on every function used here (`util/rns.cpp` differs
//! between them only in `decrypt_scale_and_round` and the BGV helpers).
//!
//! Bases of one level (q = q_0 .. q_{K-1}, the level's coefficient modulus):
//! - B = b_0 .. b_{NB-1}, NB = K, or K + 1 when 32 + bits(t) + bits(prod q) >= 61 (K + 1);
//! - m_sk, a further prime, and Bsk = B U {m_sk} (Bsk's residue NB is m_sk's);
//! - m_tilde = 2^32, the Montgomery factor of `sm_mrq`;
//! - gamma, the prime `decrypt_scale_and_round` uses (chosen here only because SEAL draws
//!   it between m_sk and B).
//!
//! m_sk, gamma and B are, in that order, `get_primes(2N, 61, NB + 2)`: 61-bit primes that
//! are 1 mod 2N, largest first, so Bsk has NTT tables. Every polynomial is SEAL's layout:
//! residue r of an RNS polynomial at words r * N .. (r + 1) * N.
//!
//! The result of each step is fully reduced (each ends in a Barrett or Shoup reduction),
//! so the words equal SEAL's wherever the arithmetic before a reduction agrees modulo the
//! prime; the references below still take SEAL's steps one by one, with SEAL's reductions.

use super::baseconv::{check_len, invert, modulo_uint, product, significant_bits};
pub use super::baseconv::{dot_product_mod, BaseConverter, BEHZ_BASE_MAX};
use crate::arith::{
    add_uint_mod, barrett_reduce_64, get_primes, multiply_uint_mod, multiply_uint_mod_shoup,
    negate_uint_mod, Modulus, ShoupOperand,
};
use crate::error::{Error, Result};
use crate::ntt::host::{inverse_ntt_negacyclic_harvey_lazy, ntt_negacyclic_harvey_lazy};
use crate::ntt::{create_ntt_tables, NttTables, COEFF_COUNT_POWER_MAX, COEFF_COUNT_POWER_MIN};

/// SEAL's `SEAL_INTERNAL_MOD_BIT_COUNT`: the bits of the primes of B and m_sk.
pub const INTERNAL_MOD_BIT_COUNT: u32 = 61;

/// SEAL's `m_tilde`: 2^32, not a prime.
pub const M_TILDE: u64 = 1 << 32;

/// SEAL's `RNSTool` of one BFV level, the parts `bfv_multiply` uses: the bases, their
/// converters and constants, and the NTT tables of q and Bsk.
#[derive(Clone, Debug)]
pub struct BehzTables {
    log_n: u32,
    t: Modulus,
    base_q: Vec<Modulus>,
    /// B, then m_sk.
    base_bsk: Vec<Modulus>,
    m_tilde: Modulus,
    q_to_bsk: BaseConverter,
    q_to_m_tilde: BaseConverter,
    b_to_q: BaseConverter,
    b_to_m_sk: BaseConverter,
    /// prod(B) mod q_i.
    prod_b_mod_q: Vec<u64>,
    /// prod(q)^-1 mod each prime of Bsk.
    inv_prod_q_mod_bsk: Vec<ShoupOperand>,
    /// prod(B)^-1 mod m_sk.
    inv_prod_b_mod_m_sk: ShoupOperand,
    /// m_tilde^-1 mod each prime of Bsk.
    inv_m_tilde_mod_bsk: Vec<ShoupOperand>,
    /// -prod(q)^-1 mod m_tilde.
    neg_inv_prod_q_mod_m_tilde: ShoupOperand,
    /// prod(q) mod each prime of Bsk.
    prod_q_mod_bsk: Vec<u64>,
    ntt_q: Vec<NttTables>,
    ntt_bsk: Vec<NttTables>,
}

impl BehzTables {
    /// SEAL's `RNSTool(N, q, t)` for N = 2^`log_n`, the level's coefficient modulus
    /// `coeff_modulus` (its primes, SEAL's order) and the plain modulus t.
    ///
    /// Errors: N outside 2^1 ..= 2^17; q empty or of [`BEHZ_BASE_MAX`] primes or more (so
    /// that B, which may take one more, has at most 16); a prime of q without NTT tables
    /// for N; t below 2;
    /// no inverse where SEAL throws "invalid rns bases" (q shares a factor with Bsk or
    /// m_tilde).
    pub fn new(log_n: u32, coeff_modulus: &[u64], plain_modulus: u64) -> Result<BehzTables> {
        if !(COEFF_COUNT_POWER_MIN..=COEFF_COUNT_POWER_MAX).contains(&log_n) {
            return Err(Error::invalid(format!(
                "BEHZ tables: N = 2^{log_n} is not in 2^{COEFF_COUNT_POWER_MIN} ..= \
                 2^{COEFF_COUNT_POWER_MAX}"
            )));
        }
        if coeff_modulus.is_empty() || coeff_modulus.len() + 1 > BEHZ_BASE_MAX {
            return Err(Error::invalid(format!(
                "BEHZ tables: {} primes in q; 1 ..= {} supported",
                coeff_modulus.len(),
                BEHZ_BASE_MAX - 1
            )));
        }
        let base_q = coeff_modulus
            .iter()
            .map(|&q| Modulus::new(q))
            .collect::<Result<Vec<_>>>()?;
        let t = Modulus::new(plain_modulus)?;
        let k = base_q.len();
        let prod_q = product(&base_q);

        // SEAL reserves 32 bits for K * n and asks K n t q^2 < q prod(B) m_sk, with the
        // primes of B and m_sk of 61 bits: one more prime in B when the bound fails.
        let bits = INTERNAL_MOD_BIT_COUNT;
        let nb = if 32 + t.bit_count() + significant_bits(&prod_q) >= bits * k as u32 + bits {
            k + 1
        } else {
            k
        };
        let n = 1u64 << log_n;
        let primes = get_primes(2 * n, bits as i32, nb + 2)?;
        let m_sk = Modulus::new(primes[0])?;
        // primes[1] is SEAL's gamma, which only decryption uses.
        let base_b = primes[2..]
            .iter()
            .map(|&p| Modulus::new(p))
            .collect::<Result<Vec<_>>>()?;
        let mut base_bsk = base_b.clone();
        base_bsk.push(m_sk);
        let m_tilde = Modulus::new(M_TILDE)?;
        let prod_b = product(&base_b);

        let ntt_bsk = create_ntt_tables(log_n, &base_bsk)
            .map_err(|_| Error::Logic("invalid rns bases".into()))?;
        let ntt_q = create_ntt_tables(log_n, &base_q)?;

        let inv_prod_q_mod_bsk = base_bsk
            .iter()
            .map(|p| {
                Ok(ShoupOperand::new(
                    invert(modulo_uint(&prod_q, p.value()), p)?,
                    p,
                ))
            })
            .collect::<Result<_>>()?;
        let inv_prod_b_mod_m_sk =
            ShoupOperand::new(invert(modulo_uint(&prod_b, m_sk.value()), &m_sk)?, &m_sk);
        let inv_m_tilde_mod_bsk = base_bsk
            .iter()
            .map(|p| {
                Ok(ShoupOperand::new(
                    invert(barrett_reduce_64(M_TILDE, p), p)?,
                    p,
                ))
            })
            .collect::<Result<_>>()?;
        let inv_q_mod_m_tilde = invert(modulo_uint(&prod_q, M_TILDE), &m_tilde)?;
        let neg_inv_prod_q_mod_m_tilde =
            ShoupOperand::new(negate_uint_mod(inv_q_mod_m_tilde, &m_tilde), &m_tilde);

        Ok(BehzTables {
            log_n,
            t,
            q_to_bsk: BaseConverter::new(&base_q, &base_bsk)?,
            q_to_m_tilde: BaseConverter::new(&base_q, &[m_tilde])?,
            b_to_q: BaseConverter::new(&base_b, &base_q)?,
            b_to_m_sk: BaseConverter::new(&base_b, &[m_sk])?,
            prod_b_mod_q: base_q
                .iter()
                .map(|q| modulo_uint(&prod_b, q.value()))
                .collect(),
            prod_q_mod_bsk: base_bsk
                .iter()
                .map(|p| modulo_uint(&prod_q, p.value()))
                .collect(),
            inv_prod_q_mod_bsk,
            inv_prod_b_mod_m_sk,
            inv_m_tilde_mod_bsk,
            neg_inv_prod_q_mod_m_tilde,
            base_q,
            base_bsk,
            m_tilde,
            ntt_q,
            ntt_bsk,
        })
    }

    pub fn log_n(&self) -> u32 {
        self.log_n
    }

    /// N.
    pub fn coeff_count(&self) -> usize {
        1 << self.log_n
    }

    /// The plain modulus t.
    pub fn plain_modulus(&self) -> &Modulus {
        &self.t
    }

    /// q, the level's primes.
    pub fn base_q(&self) -> &[Modulus] {
        &self.base_q
    }

    /// Bsk: B's primes, then m_sk.
    pub fn base_bsk(&self) -> &[Modulus] {
        &self.base_bsk
    }

    /// NB, the primes of B.
    pub fn base_b_size(&self) -> usize {
        self.base_bsk.len() - 1
    }

    /// m_sk, Bsk's last prime.
    pub fn m_sk(&self) -> &Modulus {
        &self.base_bsk[self.base_b_size()]
    }

    /// The NTT tables of q's primes, then Bsk's (SEAL's `small_ntt_tables` and
    /// `base_Bsk_ntt_tables`).
    pub fn ntt_tables(&self) -> impl Iterator<Item = &NttTables> {
        self.ntt_q.iter().chain(&self.ntt_bsk)
    }

    pub fn q_to_bsk(&self) -> &BaseConverter {
        &self.q_to_bsk
    }

    pub fn q_to_m_tilde(&self) -> &BaseConverter {
        &self.q_to_m_tilde
    }

    pub fn b_to_q(&self) -> &BaseConverter {
        &self.b_to_q
    }

    pub fn b_to_m_sk(&self) -> &BaseConverter {
        &self.b_to_m_sk
    }

    pub fn prod_b_mod_q(&self) -> &[u64] {
        &self.prod_b_mod_q
    }

    pub fn prod_q_mod_bsk(&self) -> &[u64] {
        &self.prod_q_mod_bsk
    }

    pub fn inv_prod_q_mod_bsk(&self) -> &[ShoupOperand] {
        &self.inv_prod_q_mod_bsk
    }

    pub fn inv_prod_b_mod_m_sk(&self) -> ShoupOperand {
        self.inv_prod_b_mod_m_sk
    }

    pub fn inv_m_tilde_mod_bsk(&self) -> &[ShoupOperand] {
        &self.inv_m_tilde_mod_bsk
    }

    pub fn neg_inv_prod_q_mod_m_tilde(&self) -> ShoupOperand {
        self.neg_inv_prod_q_mod_m_tilde
    }

    /// SEAL's `fastbconv_m_tilde`: x in base q (K residues, canonical) to
    /// (m_tilde x mod q) converted to Bsk U {m_tilde} (NB + 2 residues, canonical; the last
    /// is mod m_tilde). Errors: a slice too short.
    pub fn fastbconv_m_tilde(&self, input: &[u64], out: &mut [u64]) -> Result<()> {
        let n = self.coeff_count();
        let bsk_words = self.base_bsk.len() * n;
        check_len(
            "fastbconv_m_tilde",
            "input",
            input.len(),
            self.base_q.len() * n,
        )?;
        check_len("fastbconv_m_tilde", "out", out.len(), bsk_words + n)?;
        let mut temp = vec![0u64; self.base_q.len() * n];
        for (i, q) in self.base_q.iter().enumerate() {
            // SEAL's multiply_poly_scalar_coeffmod: the scalar reduced mod q, then Shoup.
            let scalar = ShoupOperand::new(barrett_reduce_64(M_TILDE, q), q);
            for (t, &x) in temp[i * n..(i + 1) * n]
                .iter_mut()
                .zip(&input[i * n..(i + 1) * n])
            {
                *t = multiply_uint_mod_shoup(x, scalar, q);
            }
        }
        self.q_to_bsk
            .fast_convert_array(&temp, &mut out[..bsk_words], n)?;
        self.q_to_m_tilde
            .fast_convert_array(&temp, &mut out[bsk_words..bsk_words + n], n)
    }

    /// SEAL's `sm_mrq`, Montgomery's reduction by m_tilde of the q-overflows: from
    /// y = m_tilde x + alpha q in Bsk U {m_tilde} (`fastbconv_m_tilde`'s output), with
    /// r = -y q^-1 mod m_tilde centred in (-m_tilde / 2, m_tilde / 2], Bsk gets
    /// (y + q r) m_tilde^-1 = x + alpha' q with |alpha'| <= 1/2 (canonical residues).
    /// Errors: a slice too short.
    pub fn sm_mrq(&self, input: &[u64], out: &mut [u64]) -> Result<()> {
        let n = self.coeff_count();
        let kb = self.base_bsk.len();
        check_len("sm_mrq", "input", input.len(), (kb + 1) * n)?;
        check_len("sm_mrq", "out", out.len(), kb * n)?;
        let input_m_tilde = &input[kb * n..(kb + 1) * n];
        let r_m_tilde: Vec<u64> = input_m_tilde
            .iter()
            .map(|&x| multiply_uint_mod_shoup(x, self.neg_inv_prod_q_mod_m_tilde, &self.m_tilde))
            .collect();
        let m_tilde_div_2 = M_TILDE >> 1;
        for (j, p) in self.base_bsk.iter().enumerate() {
            let prod_q = ShoupOperand::new(self.prod_q_mod_bsk[j], p);
            for c in 0..n {
                // r >= m_tilde / 2 stands for r - m_tilde: p - m_tilde added, unreduced.
                let mut r = r_m_tilde[c];
                if r >= m_tilde_div_2 {
                    r += p.value() - M_TILDE;
                }
                let sum = multiply_add_uint_mod_shoup(r, prod_q, input[j * n + c], p);
                out[j * n + c] = multiply_uint_mod_shoup(sum, self.inv_m_tilde_mod_bsk[j], p);
            }
        }
        Ok(())
    }

    /// SEAL's `fast_floor`: x in base q U Bsk (K + NB + 1 residues below 2^64) to
    /// floor(x / q) in Bsk up to a small error: (x_Bsk - (x_q converted to Bsk)) q^-1,
    /// canonical. Errors: a slice too short.
    pub fn fast_floor(&self, input: &[u64], out: &mut [u64]) -> Result<()> {
        let n = self.coeff_count();
        let qn = self.base_q.len() * n;
        let bsk_words = self.base_bsk.len() * n;
        check_len("fast_floor", "input", input.len(), qn + bsk_words)?;
        self.q_to_bsk.fast_convert_array(&input[..qn], out, n)?;
        for (j, p) in self.base_bsk.iter().enumerate() {
            for c in 0..n {
                // The negation need not be reduced: x + (p - conv) < 2^64 for p < 2^61.
                let x = input[qn + j * n + c];
                let conv = out[j * n + c];
                out[j * n + c] =
                    multiply_uint_mod_shoup(x + (p.value() - conv), self.inv_prod_q_mod_bsk[j], p);
            }
        }
        Ok(())
    }

    /// SEAL's `fastbconv_sk`, Shenoy and Kumaresan's conversion: x in Bsk (canonical) to
    /// base q: B's residues converted to q, less alpha prod(B), with alpha the exact
    /// overflow count that m_sk's residue reveals, centred. Errors: a slice too short.
    pub fn fastbconv_sk(&self, input: &[u64], out: &mut [u64]) -> Result<()> {
        let n = self.coeff_count();
        let nb = self.base_b_size();
        let m_sk = *self.m_sk();
        check_len("fastbconv_sk", "input", input.len(), (nb + 1) * n)?;
        self.b_to_q.fast_convert_array(&input[..nb * n], out, n)?;
        let mut temp = vec![0u64; n];
        self.b_to_m_sk
            .fast_convert_array(&input[..nb * n], &mut temp, n)?;
        let alpha_sk: Vec<u64> = temp
            .iter()
            .zip(&input[nb * n..(nb + 1) * n])
            .map(|(&t, &x)| {
                multiply_uint_mod_shoup(t + (m_sk.value() - x), self.inv_prod_b_mod_m_sk, &m_sk)
            })
            .collect();
        let m_sk_div_2 = m_sk.value() >> 1;
        for (i, q) in self.base_q.iter().enumerate() {
            let prod_b = ShoupOperand::new(self.prod_b_mod_q[i], q);
            let neg_prod_b = ShoupOperand::new(q.value() - self.prod_b_mod_q[i], q);
            for c in 0..n {
                let a = alpha_sk[c];
                let o = &mut out[i * n + c];
                *o = if a > m_sk_div_2 {
                    multiply_add_uint_mod_shoup(negate_uint_mod(a, &m_sk), prod_b, *o, q)
                } else {
                    multiply_add_uint_mod_shoup(a, neg_prod_b, *o, q)
                };
            }
        }
        Ok(())
    }

    /// SEAL's `Evaluator::bfv_multiply` (and `bfv_square`, whose size-2 shortcut gives the
    /// same words: each product and sum is reduced): ct1 of `s1` polynomials times ct2 of
    /// `s2`, both in coefficient form with K residues each (canonical), to s1 + s2 - 1
    /// polynomials, canonical: round(t/q ct1 ct2) by BEHZ.
    ///
    /// Errors: a size 0, or an input shorter than its size says.
    pub fn bfv_multiply_host(
        &self,
        ct1: &[u64],
        s1: usize,
        ct2: &[u64],
        s2: usize,
    ) -> Result<Vec<u64>> {
        let n = self.coeff_count();
        let (k, kb) = (self.base_q.len(), self.base_bsk.len());
        if s1 == 0 || s2 == 0 || ct1.len() < s1 * k * n || ct2.len() < s2 * k * n {
            return Err(Error::invalid(format!(
                "bfv_multiply_host: sizes {s1} and {s2} for inputs of {} and {} words",
                ct1.len(),
                ct2.len()
            )));
        }
        let dest_size = s1 + s2 - 1;
        // Steps (1)-(3) for each input polynomial: the copy in base q and the extension to
        // Bsk, both transformed lazily to NTT form.
        let extend = |ct: &[u64], size: usize| -> Result<(Vec<u64>, Vec<u64>)> {
            let mut in_q = ct[..size * k * n].to_vec();
            let mut in_bsk = vec![0u64; size * kb * n];
            let mut temp = vec![0u64; (kb + 1) * n];
            for p in 0..size {
                let poly = &mut in_q[p * k * n..(p + 1) * k * n];
                self.fastbconv_m_tilde(poly, &mut temp)?;
                for (residue, tables) in poly.chunks_exact_mut(n).zip(&self.ntt_q) {
                    ntt_negacyclic_harvey_lazy(residue, tables);
                }
                let bsk = &mut in_bsk[p * kb * n..(p + 1) * kb * n];
                self.sm_mrq(&temp, bsk)?;
                for (residue, tables) in bsk.chunks_exact_mut(n).zip(&self.ntt_bsk) {
                    ntt_negacyclic_harvey_lazy(residue, tables);
                }
            }
            Ok((in_q, in_bsk))
        };
        let (a_q, a_bsk) = extend(ct1, s1)?;
        let (b_q, b_bsk) = extend(ct2, s2)?;

        // Step (4): dest[t] = sum_{i + l = t} a[i] b[l], dyadic, in each base; (5) back from
        // NTT form, lazily.
        let tensor = |a: &[u64], b: &[u64], base: &[Modulus], tables: &[NttTables]| {
            let w = base.len() * n;
            let mut dest = vec![0u64; dest_size * w];
            for t in 0..dest_size {
                for i in t.saturating_sub(s2 - 1)..=t.min(s1 - 1) {
                    let l = t - i;
                    for (j, q) in base.iter().enumerate() {
                        for c in 0..n {
                            let at = j * n + c;
                            let prod = multiply_uint_mod(a[i * w + at], b[l * w + at], q);
                            let d = &mut dest[t * w + at];
                            *d = add_uint_mod(prod, *d, q);
                        }
                    }
                }
                for (residue, tables) in dest[t * w..(t + 1) * w].chunks_exact_mut(n).zip(tables) {
                    inverse_ntt_negacyclic_harvey_lazy(residue, tables);
                }
            }
            dest
        };
        let dest_q = tensor(&a_q, &b_q, &self.base_q, &self.ntt_q);
        let dest_bsk = tensor(&a_bsk, &b_bsk, &self.base_bsk, &self.ntt_bsk);

        // Steps (6)-(8): times t, divided by q and floored into Bsk, then back to q.
        let mut out = vec![0u64; dest_size * k * n];
        let mut temp_q_bsk = vec![0u64; (k + kb) * n];
        let mut temp_bsk = vec![0u64; kb * n];
        for t in 0..dest_size {
            let parts = [
                (&dest_q[t * k * n..(t + 1) * k * n], &self.base_q, 0),
                (
                    &dest_bsk[t * kb * n..(t + 1) * kb * n],
                    &self.base_bsk,
                    k * n,
                ),
            ];
            for (src, base, at) in parts {
                for (j, q) in base.iter().enumerate() {
                    let scalar = ShoupOperand::new(barrett_reduce_64(self.t.value(), q), q);
                    for c in 0..n {
                        temp_q_bsk[at + j * n + c] =
                            multiply_uint_mod_shoup(src[j * n + c], scalar, q);
                    }
                }
            }
            self.fast_floor(&temp_q_bsk, &mut temp_bsk)?;
            self.fastbconv_sk(&temp_bsk, &mut out[t * k * n..(t + 1) * k * n])?;
        }
        Ok(out)
    }
}

/// SEAL's `multiply_add_uint_mod(a, b, c, q)` with an operand b: a b + c mod q, as
/// (a b mod q by Shoup) + (c mod q by Barrett), reduced.
fn multiply_add_uint_mod_shoup(a: u64, b: ShoupOperand, c: u64, q: &Modulus) -> u64 {
    add_uint_mod(multiply_uint_mod_shoup(a, b, q), barrett_reduce_64(c, q), q)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// B grows by one prime exactly where SEAL's bound asks: K 60-bit primes and a 60-bit
    /// t give 32 + 60 + 60K >= 61K + 61 (K <= 31); a 17-bit t gives 32 + 17 + 60K, below
    /// 61K + 61 for every K.
    #[test]
    fn base_b_size_follows_seal_bound() {
        let q = crate::arith::coeff_modulus_create(4096, &[60, 60]).unwrap();
        let t17 = get_primes(8192, 17, 1).unwrap()[0];
        let t60 = 1u64 << 59 | 1;
        assert_eq!(BehzTables::new(12, &q, t17).unwrap().base_b_size(), 2);
        assert_eq!(BehzTables::new(12, &q, t60).unwrap().base_b_size(), 3);
    }
}
