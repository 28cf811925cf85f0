//! SEAL itself, called through the test kit's cxx bridge (`oracle`), is the oracle: the host references in
//! `arith` and `ntt` and the device NTT of both strategies must give SEAL's words. The
//! NTT runs in place, so its output words are the input words overwritten; the device
//! tests in tests/ntt.rs cover unwritten words with poisoned buffers.

use rand::Rng;
use seal_opencl::arith::{self, Modulus, ShoupOperand};
use seal_opencl::cl::{self, Context};
use seal_opencl::config::Config;
use seal_opencl::ntt::{create_ntt_tables, host, NttPlan, NttStrategy, NttTables};
use seal_opencl_testkit::harness::{primes_17_to_60_bits, rng};
use seal_opencl_testkit::oracle;

#[test]
fn modular_arithmetic_equals_seal() {
    let mut rng = rng();
    for m in primes_17_to_60_bits() {
        let q = m.value();
        for _ in 0..200 {
            let (a, b) = (rng.gen_range(0..q), rng.gen_range(0..q));
            let x: u64 = rng.gen();
            let (lo, hi): (u64, u64) = (rng.gen(), rng.gen());
            assert_eq!(
                arith::barrett_reduce_64(x, &m),
                oracle::seal_barrett_reduce_64(x, q).unwrap()
            );
            assert_eq!(
                arith::barrett_reduce_128(lo, hi, &m),
                oracle::seal_barrett_reduce_128(lo, hi, q).unwrap()
            );
            assert_eq!(
                arith::multiply_uint_mod(a, b, &m),
                oracle::seal_multiply_uint_mod(a, b, q).unwrap()
            );
            let op = ShoupOperand::new(b, &m);
            assert_eq!(op.quotient, oracle::seal_shoup_quotient(b, q).unwrap());
            assert_eq!(
                arith::multiply_uint_mod_shoup(x, op, &m),
                oracle::seal_multiply_uint_mod_shoup(x, b, op.quotient, q).unwrap()
            );
        }
    }
}

#[test]
fn primes_and_coeff_modulus_equal_seal() {
    for (factor, bits, count) in [(1u64 << 13, 60, 4), (1 << 14, 50, 6), (1 << 17, 40, 3)] {
        assert_eq!(
            arith::get_primes(factor, bits, count).unwrap(),
            oracle::seal_get_primes(factor, bits, count).unwrap(),
            "get_primes({factor}, {bits}, {count})"
        );
    }
    let sets: [(u64, &[i32]); 4] = [
        (4096, &[36, 36, 37]),
        (8192, &[60, 40, 40, 60]),
        (8192, &[30, 45, 60, 50, 30]),
        (32768, &[60, 50, 50, 50, 50, 50, 50, 50, 60]),
    ];
    for (n, bits) in sets {
        assert_eq!(
            arith::coeff_modulus_create(n, bits).unwrap(),
            oracle::seal_coeff_modulus_create(n, bits).unwrap(),
            "CoeffModulus::Create({n}, {bits:?})"
        );
    }
}

fn operands(v: &[ShoupOperand]) -> (Vec<u64>, Vec<u64>) {
    v.iter().map(|o| (o.operand, o.quotient)).unzip()
}

#[test]
fn ntt_tables_equal_seal() {
    for log_n in [10u32, 12, 13, 15, 17] {
        for bits in [17, 30, 45, 60] {
            let Ok(p) = arith::get_primes(2 << log_n, bits, 1) else {
                continue; // no such prime of this size for this N
            };
            let m = Modulus::new(p[0]).unwrap();
            let ours = NttTables::new(log_n, &m).unwrap();
            let seal = oracle::seal_ntt_tables(log_n as i32, m.value()).unwrap();
            let what = format!("N=2^{log_n}, q={}", m.value());
            assert_eq!(ours.get_root(), seal.root, "root, {what}");
            assert_eq!(ours.get_inv_root(), seal.inv_root, "inv_root, {what}");
            let (ops, quots) = operands(ours.get_from_root_powers());
            assert_eq!(ops, seal.root_powers, "root_powers, {what}");
            assert_eq!(
                quots, seal.root_powers_quotient,
                "root_powers quotients, {what}"
            );
            let (ops, quots) = operands(ours.get_from_inv_root_powers());
            assert_eq!(ops, seal.inv_root_powers, "inv_root_powers, {what}");
            assert_eq!(
                quots, seal.inv_root_powers_quotient,
                "inv quotients, {what}"
            );
            let inv_n = ours.inv_degree_modulo();
            assert_eq!(
                (inv_n.operand, inv_n.quotient),
                (seal.inv_degree, seal.inv_degree_quotient),
                "inv_degree, {what}"
            );
        }
    }
}

/// Each residue of `values` (SEAL layout, `tables.len()` primes) through SEAL's NTT.
fn seal_transform(values: &[u64], tables: &[NttTables], forward: bool) -> Vec<u64> {
    let n = tables[0].coeff_count();
    let mut out = values.to_vec();
    for (r, residue) in out.chunks_mut(n).enumerate() {
        let t = &tables[r % tables.len()];
        let (p, q) = (t.coeff_count_power() as i32, t.modulus().value());
        if forward {
            oracle::seal_ntt_forward(p, q, residue).unwrap();
        } else {
            oracle::seal_ntt_inverse(p, q, residue).unwrap();
        }
    }
    out
}

#[test]
fn host_and_device_ntt_equal_seal() {
    let mut rng = rng();
    let ctx = Context::new(&Config::from_env().unwrap().device).unwrap();
    let queue = ctx.queue(false).unwrap();
    // (log N, bit sizes of the primes, polynomials): mixed sizes, 60-bit, a large N.
    let cases: [(u32, &[i32], usize); 4] = [
        (12, &[36, 36, 37], 2),
        (13, &[30, 45, 60, 50, 20], 1),
        (13, &[60, 60, 60, 60], 2),
        (16, &[58], 1),
    ];
    for (log_n, bits, count) in cases {
        let moduli: Vec<Modulus> = arith::coeff_modulus_create(1 << log_n, bits)
            .unwrap()
            .into_iter()
            .map(|p| Modulus::new(p).unwrap())
            .collect();
        let tables = create_ntt_tables(log_n, &moduli).unwrap();
        let n = 1usize << log_n;
        let values: Vec<u64> = (0..count * moduli.len() * n)
            .map(|i| rng.gen_range(0..moduli[(i / n) % moduli.len()].value()))
            .collect();
        let forward = seal_transform(&values, &tables, true);
        let inverse = seal_transform(&forward, &tables, false);
        assert_eq!(inverse, values, "SEAL's inverse undoes its forward");

        let mut host_fwd = values.clone();
        for (r, residue) in host_fwd.chunks_mut(n).enumerate() {
            host::ntt_negacyclic_harvey(residue, &tables[r % tables.len()]);
        }
        assert_eq!(host_fwd, forward, "host forward, N=2^{log_n} {bits:?}");

        for strategy in [NttStrategy::Naive, NttStrategy::STAGED] {
            let plan = NttPlan::new(&ctx, &queue, log_n, &moduli, strategy).unwrap();
            let what = format!("{strategy:?} N=2^{log_n} {bits:?} x{count}");

            let buf = ctx.buffer(&queue, values.len()).unwrap();
            cl::write(&queue, &buf, 0, &values).unwrap();
            plan.ntt_negacyclic_harvey(&queue, &buf, count).unwrap();
            assert!(
                cl::download(&queue, &buf).unwrap() == forward,
                "device forward, {what}"
            );

            cl::write(&queue, &buf, 0, &forward).unwrap();
            plan.inverse_ntt_negacyclic_harvey(&queue, &buf, count)
                .unwrap();
            assert!(
                cl::download(&queue, &buf).unwrap() == values,
                "device inverse, {what}"
            );
        }
    }
}
