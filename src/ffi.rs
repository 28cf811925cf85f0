//! The cxx bridge between this crate and (patched) SEAL.
//!
//! Rust -> C++: SEAL's own modular arithmetic, prime generation and NTT, used as the
//! oracle that the host references and kernels must match word for word.
//! C++ -> Rust: the backend's entry points. A Rust `Err` reaches C++ as `rust::Error`
//! (a `std::exception`), and a C++ exception reaches Rust as `Err(cxx::Exception)`.
//!
//! Every `extern "Rust"` function runs its body under [`no_panic`]: a panic unwinding
//! into C++ would abort the process.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::cl::DeviceSelector;
use crate::error::{Error, Result};

#[cxx::bridge(namespace = "seal_opencl")]
mod bridge {
    /// SEAL's `util::NTTTables` for one prime, array for array.
    ///
    /// `root_powers[i]` is the power of `root` at bit-reversed index `i` (0-th power
    /// at index 0), `inv_root_powers` SEAL's scrambled order of inverse powers; each
    /// `_quotient` entry is the Shoup quotient floor(operand * 2^64 / modulus).
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct SealNttTables {
        root: u64,
        inv_root: u64,
        root_powers: Vec<u64>,
        root_powers_quotient: Vec<u64>,
        inv_root_powers: Vec<u64>,
        inv_root_powers_quotient: Vec<u64>,
        /// n^-1 mod q and its Shoup quotient.
        inv_degree: u64,
        inv_degree_quotient: u64,
    }

    /// The outcome of asking Rust for the backend's device from C++.
    #[derive(Debug, Clone, PartialEq, Eq)]
    struct BackendProbe {
        ok: bool,
        /// The device description when `ok`, else the error's message.
        text: String,
    }

    extern "Rust" {
        /// The OpenCL device the backend would run on, as `P:D platform / device (kind)`.
        /// `selector` is `gpu`, `cpu` or `P:D`; empty means `SEAL_OPENCL_DEVICE`.
        fn backend_device_description(selector: &str) -> Result<String>;
    }

    // SAFETY: every declaration matches ffi/bridge.h; the C++ functions validate their
    // arguments, throw instead of failing silently, and keep no reference to a slice
    // after they return.
    unsafe extern "C++" {
        include!("seal-opencl/ffi/bridge.h");

        /// SEAL's `NTTTables(coeff_count_power, Modulus(modulus))`.
        fn seal_ntt_tables(coeff_count_power: i32, modulus: u64) -> Result<SealNttTables>;
        /// SEAL's `ntt_negacyclic_harvey` on one polynomial of 2^coeff_count_power
        /// coefficients: on entry in [0, q) and standard order, on exit the NTT in
        /// [0, q) and bit-reversed order.
        fn seal_ntt_forward(coeff_count_power: i32, modulus: u64, data: &mut [u64]) -> Result<()>;
        /// SEAL's `inverse_ntt_negacyclic_harvey`, the inverse of `seal_ntt_forward`.
        fn seal_ntt_inverse(coeff_count_power: i32, modulus: u64, data: &mut [u64]) -> Result<()>;

        /// SEAL's `barrett_reduce_64`: x mod q.
        fn seal_barrett_reduce_64(x: u64, q: u64) -> Result<u64>;
        /// SEAL's `barrett_reduce_128`: (hi * 2^64 + lo) mod q.
        fn seal_barrett_reduce_128(lo: u64, hi: u64, q: u64) -> Result<u64>;
        /// SEAL's `multiply_uint_mod(a, b, q)`: a * b mod q.
        fn seal_multiply_uint_mod(a: u64, b: u64, q: u64) -> Result<u64>;
        /// SEAL's `MultiplyUIntModOperand::set`: floor(y * 2^64 / q) for y < q.
        fn seal_shoup_quotient(y: u64, q: u64) -> Result<u64>;
        /// SEAL's `multiply_uint_mod(x, {y, y_quotient}, q)`: x * y mod q for y < q,
        /// trusting the given quotient.
        fn seal_multiply_uint_mod_shoup(x: u64, y: u64, y_quotient: u64, q: u64) -> Result<u64>;

        /// SEAL's `util::get_primes`: `count` primes of `bit_size` bits that are
        /// 1 mod `factor`, largest first.
        fn seal_get_primes(factor: u64, bit_size: i32, count: usize) -> Result<Vec<u64>>;
        /// SEAL's `CoeffModulus::Create(poly_modulus_degree, bit_sizes)`.
        fn seal_coeff_modulus_create(
            poly_modulus_degree: u64,
            bit_sizes: &[i32],
        ) -> Result<Vec<u64>>;

        /// Calls `backend_device_description` from C++ and lets its error propagate
        /// as the `rust::Error` exception.
        fn describe_backend(selector: &str) -> Result<String>;
        /// Calls `backend_device_description` from C++, catching `rust::Error`.
        fn probe_backend(selector: &str) -> BackendProbe;
    }
}

pub use bridge::{
    describe_backend, probe_backend, seal_barrett_reduce_128, seal_barrett_reduce_64,
    seal_coeff_modulus_create, seal_get_primes, seal_multiply_uint_mod,
    seal_multiply_uint_mod_shoup, seal_ntt_forward, seal_ntt_inverse, seal_ntt_tables,
    seal_shoup_quotient, BackendProbe, SealNttTables,
};

fn backend_device_description(selector: &str) -> Result<String> {
    no_panic(|| {
        let selector = if selector.trim().is_empty() {
            DeviceSelector::from_env()?
        } else {
            selector.parse()?
        };
        Ok(selector.resolve()?.to_string())
    })
}

/// Runs an `extern "Rust"` body, turning a panic into an error.
fn no_panic<T>(body: impl FnOnce() -> Result<T>) -> Result<T> {
    catch_unwind(AssertUnwindSafe(body)).unwrap_or_else(|payload| {
        let message = payload
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| payload.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic payload".into());
        Err(Error::Logic(format!(
            "internal error (panic) in seal-opencl: {message}"
        )))
    })
}
