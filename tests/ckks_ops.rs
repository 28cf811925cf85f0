//! The CKKS operations of `ckks::ops` (kernel sequences with NTTs) against the same
//! sequence of host references (`ckks::host`, `ntt::host`), on random inputs.

use std::sync::Arc;

use rand::{Rng, SeedableRng};
use seal_opencl::arith::{coeff_modulus_create, invert_uint_mod, Modulus, ShoupOperand};
use seal_opencl::ckks::context::{CkksContext, KswitchKey};
use seal_opencl::ckks::host;
use seal_opencl::ckks::ops::LevelOps;
use seal_opencl::cl;
use seal_opencl::device::{DeviceOptions, Devices};
use seal_opencl::ntt::{create_ntt_tables, host as ntt_host, NttStrategy};

fn rng() -> rand::rngs::StdRng {
    let seed = rand::random();
    eprintln!("seed {seed}");
    rand::rngs::StdRng::seed_from_u64(seed)
}

fn random_poly(rng: &mut impl Rng, moduli: &[Modulus], polys: usize, n: usize) -> Vec<u64> {
    let mut v = Vec::with_capacity(polys * moduli.len() * n);
    for _ in 0..polys {
        for q in moduli {
            v.extend((0..n).map(|_| rng.gen_range(0..q.value())));
        }
    }
    v
}

/// SEAL's switch_key_inplace on the host, step for step as `LevelOps::switch_key`.
fn host_switch_key(
    ct: &mut [u64],
    target: &[u64],
    key: &[u64],
    key_moduli: &[Modulus],
    k: usize,
    log_n: u32,
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
    host::ckks_moddown_prep(&mut t, &last, k, &ext, k, n);
    for (r, res) in t.chunks_exact_mut(n).enumerate() {
        ntt_host::ntt_negacyclic_harvey_lazy(res, &tables[r % k]);
    }
    let inv: Vec<ShoupOperand> = ext[..k]
        .iter()
        .map(|q| ShoupOperand::new(invert_uint_mod(ext[k].value() % q.value(), q).unwrap(), q))
        .collect();
    host::ckks_divide_round_finish(ct, k, &prod, k, &t, &inv, &ext, k, 2, true, n);
}

#[test]
fn switch_key_matches_host_composition() {
    let mut rng = rng();
    let log_n = 12;
    let n = 1 << log_n;
    let key_moduli: Vec<Modulus> = coeff_modulus_create(n as u64, &[50, 40, 60, 60])
        .unwrap()
        .into_iter()
        .map(|q| Modulus::new(q).unwrap())
        .collect();
    let values: Vec<u64> = key_moduli.iter().map(|q| q.value()).collect();
    let devices = Devices::new(DeviceOptions::default()).unwrap();
    let graph = devices.graph();
    let context =
        CkksContext::new(graph.context(), log_n, &values, true, NttStrategy::Staged).unwrap();
    let l = key_moduli.len();
    for k in [3, 2, 1] {
        let key_words = random_poly(&mut rng, &key_moduli, 2 * (l - 1), n);
        let key = KswitchKey::upload(&context, graph.queue(), l - 1, &key_words).unwrap();
        let ct = random_poly(&mut rng, &key_moduli[..k], 3, n);
        let mut want = ct.clone();
        let target = ct[2 * k * n..].to_vec();
        host_switch_key(&mut want, &target, &key_words, &key_moduli, k, log_n);
        let buf = graph.context().upload(graph.queue(), &ct).unwrap();
        let ops = LevelOps::new(&context, &graph, k).unwrap();
        ops.switch_key(&buf, &buf, 2 * k * n, &key).unwrap();
        let got = cl::download(&buf).unwrap();
        let bad = (0..want.len()).filter(|&i| got[i] != want[i]).count();
        assert_eq!(
            bad,
            0,
            "K = {k}: {bad} words differ (first at {:?})",
            (0..want.len()).find(|&i| got[i] != want[i])
        );
    }
    let _ = Arc::strong_count(graph.context());
}
