//! SEAL's CKKS encoding of a vector of values (`CKKSEncoder::encode`, seal-patch 0011) on the
//! device: SEAL places the values into N complex numbers z on the host (an O(N) pass) and
//! hands them over with its roots; the device runs the inverse FFT, the rounding and the
//! reduction (`crate::ckks::encode`), then the level's forward NTT; where the setting says
//! so (`SEAL_OPENCL_ENCODE`: `fft`, or `auto`, the default, from N = 2^14 on:
//! [`EncodeOnDevice`]). Where the coefficients might not fit SEAL's 64-bit path, the device
//! has no doubles or the setting is another, nothing is done here and SEAL computes the
//! residues on the CPU, with its own checks and exceptions (and `Backend::transform_encoding`
//! their NTT, unless the setting is `host`).
//!
//! Launches: the FFT's blocks (where N >= 4), its last stages with the rounding, and the NTT
//! (1 where the level chains, else the plan's passes); one upload of 2N words.

use std::sync::Arc;

use super::transparency::Zeros;
use super::{Backend, GpuImage, Level, Scheme};
use crate::ckks::context::EncodeOnDevice;
use crate::ckks::encode::{coefficients_fit, modulus_bits_at_least, EncodeKernels};
use crate::ckks::ops::LevelOps;
use crate::error::{Error, Result};
use crate::ntt::NttDirection;

/// The encoding kernels where the device encodes `values` with `fix` at the level of `ops`
/// (see [`Backend::encodes`]): the device has doubles, then the bound's pass over the values.
fn kernels_taking(ops: &LevelOps, values: &[u64], fix: f64) -> Result<Option<Arc<EncodeKernels>>> {
    if values.len() != 2 * ops.n() {
        return Ok(None);
    }
    let Some(kernels) = ops.context().encoder()? else {
        return Ok(None);
    };
    let bits = modulus_bits_at_least(&ops.level().moduli().moduli()[..ops.primes()]);
    Ok(coefficients_fit(values, fix, bits).then_some(kernels))
}

impl Backend {
    /// Whether CKKSEncoder::encode runs anything on the device: its NTT, or more
    /// ([`EncodeOnDevice`], `SEAL_OPENCL_ENCODE`).
    pub fn routes_encoding(&self) -> bool {
        self.kernel_choices.encode != EncodeOnDevice::Nothing
    }

    /// Whether the setting sends encodings' FFT at `level` to the device: `fft`, or `auto`
    /// at its rings ([`EncodeOnDevice::fft_at`]); CKKS.
    fn encodes_fft(&self, level: &Level) -> bool {
        level.scheme == Scheme::Ckks && self.kernel_choices.encode.fft_at(level.log_n)
    }

    /// Whether [`Backend::encode`] takes `values` (z: N complex numbers, re and im of z_k at
    /// words 2k and 2k + 1, as IEEE bits) with `fix` = scale / N at `level`: the setting's
    /// FFT at this ring, CKKS, a device with doubles, and every coefficient provably below
    /// 2^62 and SEAL's modulus check ([`coefficients_fit`]). Where it is false SEAL encodes
    /// on the CPU. The setting is asked first: below its ring the path looks at nothing else.
    pub fn encodes(&self, level: &Level, values: &[u64], fix: f64) -> Result<bool> {
        if !self.encodes_fft(level) {
            return Ok(false);
        }
        // A question, not an operation: not profiled as one.
        self.with_ops_untimed(self.graph(), level, |ops| {
            Ok(kernels_taking(ops, values, fix)?.is_some())
        })
    }

    /// dst = SEAL's encoding at `level` (K primes, NTT form) of the placed values `values`
    /// with SEAL's `roots` (the encoder's inv_root_powers_, the layout of `values`) and `fix`
    /// = scale / N, where [`Backend::encodes`] says so (else an `InvalidArgument` error). On
    /// an error dst is left as it was.
    pub fn encode(
        &self,
        level: &Level,
        values: &[u64],
        roots: &[u64],
        fix: f64,
        dst: &mut GpuImage,
    ) -> Result<()> {
        if !self.encodes_fft(level) {
            return Err(Error::invalid(
                "encode on the device is CKKS's, where SEAL_OPENCL_ENCODE sends the FFT there",
            ));
        }
        self.with_ops("encode", level, |ops| {
            let Some(kernels) = kernels_taking(ops, values, fix)? else {
                return Err(Error::invalid(
                    "encode: the device does not take these values (their coefficients may \
                     exceed 2^62 or the level's modulus, or the device has no doubles)",
                ));
            };
            let (k, n) = (ops.primes(), ops.n());
            if roots.len() != 2 * n {
                return Err(Error::invalid(format!(
                    "encode: {} words of roots; N = {n} complex numbers are {}",
                    roots.len(),
                    2 * n
                )));
            }
            let graph = ops.graph();
            let roots = kernels.roots(graph.queue(), roots)?;
            let z = ops.scratch(2 * n)?;
            let pinned = self
                .staging
                .upload(&self.pinned, graph, z.buffer(), values)?;
            self.counters.upload(values.len(), pinned);
            let out = ops.alloc_result(1, k)?;
            kernels.encode(
                graph,
                z.buffer(),
                &roots,
                fix,
                out.buffer(),
                ops.level().moduli(),
                k,
            )?;
            ops.ntt(out.buffer(), [1, k], NttDirection::Forward, true)?;
            dst.replace(graph, out, k * n);
            dst.set_zeros(Zeros::Unknown, k * n);
            Ok(())
        })
    }
}
