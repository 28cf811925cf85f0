//! The routed operations only BFV and BGV take: a plaintext of N or fewer coefficients mod t
//! (its image holds exactly those words) multiplied into a coefficient-form ciphertext, or
//! scaled by q / t and added (`crate::integer::ops`).

use super::{rewrite, Backend, GpuImage, Level};
use crate::ckks::kernels::IntegerPlain;
use crate::ckks::ops::LevelOps;
use crate::error::{Error, Result};
use crate::integer::ops::{multiply_plain_coeff, scale_add_plain};

impl Backend {
    /// ct *= plain with both in coefficient form (SEAL's `multiply_plain_normal`); upper-half
    /// coefficients stand for themselves minus t with `upper_half` (see
    /// `integer::ops::multiply_plain_coeff`).
    pub fn multiply_plain_coeff(
        &self,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
        plain: &GpuImage,
        upper_half: bool,
    ) -> Result<()> {
        self.with_ops("multiply_plain", level, |ops| {
            ct.expect(size, ops, "encrypted")?;
            let (count, t) = plain_shape(ops, level, plain)?;
            let zeros = ct.zeros(ops.poly_words()).times_plain(plain.zeros(count));
            let words = plain.read_on(ops.graph())?;
            let p = IntegerPlain {
                words: &words,
                count,
                t,
            };
            rewrite(ops, ct, zeros, |t| {
                if t.out_of_place() {
                    ops.copy_tail(t.dst, t.src(), 0, size)?;
                }
                multiply_plain_coeff(ops, t.dst, size, p, upper_half)
            })
        })
    }

    /// ct.data(0) += round(q plain / t), or -= with `subtract` (BFV's add_plain, sub_plain).
    pub fn add_plain_scaled(
        &self,
        level: &Level,
        ct: &mut GpuImage,
        size: usize,
        plain: &GpuImage,
        subtract: bool,
    ) -> Result<()> {
        let name = if subtract { "sub_plain" } else { "add_plain" };
        self.with_ops(name, level, |ops| {
            ct.expect(size, ops, "encrypted")?;
            let (count, t) = plain_shape(ops, level, plain)?;
            let zeros = ct.zeros(ops.poly_words()).plus_plain(plain.zeros(count));
            let words = plain.read_on(ops.graph())?;
            let p = IntegerPlain {
                words: &words,
                count,
                t,
            };
            rewrite(ops, ct, zeros, |t| {
                if t.out_of_place() {
                    ops.copy_tail(t.dst, t.src(), 1, size - 1)?;
                }
                scale_add_plain(ops, t.dst, t.src(), p, subtract)
            })
        })
    }
}

/// The plaintext's coefficients and plain modulus: errors unless the level has a plain
/// modulus and the image holds 1 to N coefficients.
fn plain_shape(ops: &LevelOps, level: &Level, plain: &GpuImage) -> Result<(usize, u64)> {
    let n = 1usize << level.log_n;
    if level.plain_modulus == 0 {
        return Err(Error::invalid(
            "a plaintext in coefficient form needs a plain modulus (BFV or BGV)",
        ));
    }
    if plain.len() == 0 || plain.len() > n {
        return Err(Error::invalid(format!(
            "plain is not valid for encryption parameters: its device image holds {} words, \
             at most N = {n} coefficients at {} primes",
            plain.len(),
            ops.primes()
        )));
    }
    Ok((plain.len(), level.plain_modulus))
}
