//! Host compositions of the device's kernel sequences, step for step from the library's
//! host references (`ckks::host`, `integer::host`, `ntt::host`): the oracles that tests
//! compare whole device operations with on random inputs.

use seal_opencl::arith::{invert_uint_mod, Modulus, ShoupOperand};
use seal_opencl::ckks::fused::DropCorrection;
use seal_opencl::ckks::{host, SumTerm};
use seal_opencl::integer::host::integer_mod_t_prep;
use seal_opencl::ntt::{create_ntt_tables, host as ntt_host};

/// SEAL's switch_key_inplace on the host, step for step as `LevelOps::switch_key` (and, with
/// BGV's correction, `IntegerOps::switch_key` in NTT form): `target` (K residues in NTT form)
/// key-switched with `key` (SEAL's key vector over `key_moduli`, the special prime last) and
/// added to `ct`'s first two polynomials (K residues each, NTT form). The mod-down subtracts
/// `correction` of the special residue: CKKS's rounding (`ckks_moddown_prep`) or BGV's share
/// (`integer_mod_t_prep`, its q^-1 mod t the special prime's). # Panics: shapes that do not
/// fit.
pub fn switch_key(
    ct: &mut [u64],
    target: &[u64],
    key: &[u64],
    key_moduli: &[Modulus],
    k: usize,
    log_n: u32,
    correction: DropCorrection,
) {
    let n = 1usize << log_n;
    let l = key_moduli.len();
    let mut ext: Vec<Modulus> = key_moduli[..k].to_vec();
    ext.push(key_moduli[l - 1]);
    let tables = create_ntt_tables(log_n, &ext).unwrap();
    let mut t_target = target.to_vec();
    for (j, r) in t_target.chunks_exact_mut(n).enumerate() {
        ntt_host::inverse_ntt_negacyclic_harvey(r, &tables[j]);
    }
    let mut dec = vec![0; k * (k + 1) * n];
    host::ckks_ks_decompose(&mut dec, &t_target, &ext, n);
    for (r, res) in dec.chunks_exact_mut(n).enumerate() {
        ntt_host::ntt_negacyclic_harvey_lazy(res, &tables[r % (k + 1)]);
    }
    let mut prod = vec![0; 2 * k * n];
    let mut last = vec![0; 2 * n];
    host::ckks_ks_inner_product(&mut prod, &mut last, &dec, key, l, l - 1, &ext, n);
    for r in last.chunks_exact_mut(n) {
        ntt_host::inverse_ntt_negacyclic_harvey_lazy(r, &tables[k]);
    }
    let mut t = vec![0; 2 * k * n];
    match correction {
        DropCorrection::Round => host::ckks_moddown_prep(&mut t, &last, k, &ext, k, n),
        DropCorrection::PlainModulus { t: plain, inv_q } => {
            integer_mod_t_prep(&mut t, &last, k, &ext, k, &plain, inv_q, n)
        }
    }
    for (r, res) in t.chunks_exact_mut(n).enumerate() {
        ntt_host::ntt_negacyclic_harvey_lazy(res, &tables[r % k]);
    }
    let inv: Vec<ShoupOperand> = ext[..k]
        .iter()
        .map(|q| ShoupOperand::new(invert_uint_mod(ext[k].value() % q.value(), q).unwrap(), q))
        .collect();
    host::ckks_divide_round_finish(ct, k, &prod, k, &t, &inv, &ext, k, 2, true, n);
}

/// Terms holding their words as the host's sums take them (`ckks::host::ckks_sum`).
pub fn borrowed_terms(terms: &[SumTerm<Vec<u64>>]) -> Vec<SumTerm<&[u64]>> {
    terms
        .iter()
        .map(|t| SumTerm {
            words: &t.words[..],
            plain: t.plain.as_deref(),
            subtract: t.subtract,
            shift: t.shift,
        })
        .collect()
}
