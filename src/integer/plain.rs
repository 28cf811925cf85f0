//! The integer schemes' plaintext steps, as kernel sequences on one level's operations
//! (`ckks::ops::LevelOps`): a plaintext of N or fewer coefficients mod t (`IntegerPlain`)
//! multiplied into or added to a ciphertext. Each function names the SEAL
//! routine it reproduces; like `LevelOps`'s, they only enqueue.

use super::PlainScaling;
use crate::ckks::fused::Sources;
use crate::ckks::kernels::{IntegerPlain, Lift};
use crate::ckks::ops::LevelOps;
use crate::cl::Region;
use crate::error::Result;
use crate::ntt::NttDirection;

/// dst = src (`polys` polynomials in coefficient form) times the plaintext (SEAL's
/// `multiply_plain_normal`): the plaintext lifted to Z_q (upper-half coefficients as
/// themselves minus t with `upper_half`) and transformed, src transformed, their dyadic
/// product, transformed back. Every step is exact and fully reduced, so the words equal
/// SEAL's. SEAL's monomial shortcut computes the same residues, except that where every
/// prime exceeds t it multiplies by the coefficient unlifted: its caller passes
/// `upper_half` false then. Where the level chains, the whole runs as one launch
/// (`LevelOps::multiply_plain_coeff_chained`: src read on its loads, a sum of several
/// ciphertexts there, the lift on the transform's loads, the product between the forward's
/// last pass and the inverse's first). dst may be src. Errors: a sum where the level does
/// not chain; as the launchers'.
pub fn multiply_plain_coeff(
    ops: &LevelOps,
    dst: &Region,
    src: Sources,
    polys: usize,
    plain: IntegerPlain,
    upper_half: bool,
) -> Result<()> {
    if ops.chains_multiply_plain() {
        return ops.multiply_plain_coeff_chained(dst, src, polys, plain, upper_half);
    }
    let src = src.single("multiply_plain")?;
    if !src.same_start(dst) {
        ops.copy_tail(dst, src, 0, polys)?;
    }
    let ct = dst;
    let lifted = ops.graph().alloc_scratch(ops.poly_words())?;
    let how = Lift {
        scalar: 1,
        upper_half,
    };
    lift(ops, lifted.buffer(), plain, how)?;
    ops.transform(lifted.buffer(), 1, NttDirection::Forward)?;
    ops.transform(ct, polys, NttDirection::Forward)?;
    ops.multiply_plain(ct, ct, polys, lifted.buffer())?;
    ops.transform(ct, polys, NttDirection::Inverse)
}

/// dst (one polynomial, K residues, coefficient form) = the plaintext lifted to Z_q as `how`
/// says (SEAL's plain lift; see `CkksKernels::plain_lift`).
pub fn lift(ops: &LevelOps, dst: &Region, plain: IntegerPlain, how: Lift) -> Result<()> {
    let level = ops.level();
    ops.context()
        .kernels()
        .plain_lift(ops.graph(), dst, plain, how, level.moduli(), ops.primes())
}

/// dst's first polynomial = src's plus the plaintext times the correction factor `factor` mod
/// t, or minus with `subtract` (BGV's add_plain and sub_plain): in NTT form (SEAL 4.1 on) the
/// product lifted (upper half) and transformed, as SEAL's `transform_to_ntt_inplace` of the
/// plaintext; in coefficient form (SEAL 4.0) reduced mod q_j unlifted, as SEAL's
/// `add_plain_without_scaling_variant`. dst may be src; the other polynomials are the caller's.
pub fn add_plain_corrected(
    ops: &LevelOps,
    dst: &Region,
    src: &Region,
    plain: IntegerPlain,
    factor: u64,
    ntt_form: bool,
    subtract: bool,
) -> Result<()> {
    let lifted = ops.graph().alloc_scratch(ops.poly_words())?;
    let how = Lift {
        scalar: factor,
        upper_half: ntt_form,
    };
    lift(ops, lifted.buffer(), plain, how)?;
    if ntt_form {
        ops.transform(lifted.buffer(), 1, NttDirection::Forward)?;
    }
    if subtract {
        ops.sub(dst, src, lifted.buffer(), 1)
    } else {
        ops.add(dst, src, lifted.buffer(), 1)
    }
}

/// dst's first polynomial = src's plus round(q m / t), or minus with `subtract` (SEAL's
/// `multiply_add_plain_with_scaling_variant` / `multiply_sub_plain_with_scaling_variant`, BFV's
/// add_plain and sub_plain); dst may be src. The other polynomials are the caller's.
pub fn scale_add_plain(
    ops: &LevelOps,
    dst: &Region,
    src: &Region,
    plain: IntegerPlain,
    subtract: bool,
) -> Result<()> {
    let level = ops.level();
    let k = ops.primes();
    let scaling = level.plain_scaling(|| {
        let scaling = PlainScaling::new(plain.t, &level.moduli().moduli()[..k])?;
        let delta = ops
            .context()
            .kernels()
            .context()
            .upload(ops.graph().queue(), &scaling.delta)?;
        Ok((delta, scaling.q_mod_t))
    })?;
    let (delta, q_mod_t) = &*scaling;
    ops.context().kernels().plain_scale_add(
        ops.graph(),
        dst,
        src,
        plain,
        level.moduli(),
        delta,
        *q_mod_t,
        k,
        subtract,
    )
}
