//! No abort paths (seal-patch 0005): every SEAL C API entry point that reads or
//! writes a plaintext's words, and so may download it, returns an HRESULT when the download
//! fails instead of letting the C++ exception leave an `extern "C"` function (which ends the
//! process). The failure injected: a plaintext whose words only the device holds, after the
//! backend was uninstalled (its host reads throw `std::logic_error`, see
//! tests/seal_gpu_trust.rs). Runs in a child process, which must live to print `CHILD OK`.

use std::os::raw::{c_long, c_void};
use std::ptr;

use seal_opencl_testkit::child_test;
use seal_opencl_testkit::fixture::*;
use seal_opencl_testkit::seal_c::Plaintext;
use seal_opencl_testkit::sys;

/// HRESULTs of SEAL's C API: `std::logic_error` (COR_E_INVALIDOPERATION) and
/// `std::invalid_argument` (E_INVALIDARG).
const LOGIC_ERROR: c_long = 0x8013_1509;
const INVALID_ARGUMENT: c_long = 0x8007_0057;

/// A BFV `BatchEncoder` (N = 4096, SEAL's default primes, plain modulus 65537 = 1 mod 2N),
/// through the raw C API: `seal_c` wraps only CKKS.
struct BatchEncoder {
    context: *mut c_void,
    encoder: *mut c_void,
}

impl BatchEncoder {
    fn new() -> BatchEncoder {
        const BFV: u8 = 1; // seal::scheme_type::bfv
        const TC128: i32 = 128;
        let (mut params, mut context, mut encoder) =
            (ptr::null_mut(), ptr::null_mut(), ptr::null_mut());
        let mut count = 0u64;
        // SAFETY: each out-pointer is a live local; `moduli` has room for the `count` handles
        // the second BFVDefault call writes; every handle passed was created just before.
        unsafe {
            assert_eq!(sys::EncParams_Create1(BFV, &mut params), 0);
            assert_eq!(sys::EncParams_SetPolyModulusDegree(params, 4096), 0);
            assert_eq!(
                sys::CoeffModulus_BFVDefault(4096, TC128, &mut count, ptr::null_mut()),
                0
            );
            let mut moduli = vec![ptr::null_mut(); count as usize];
            assert_eq!(
                sys::CoeffModulus_BFVDefault(4096, TC128, &mut count, moduli.as_mut_ptr()),
                0
            );
            assert_eq!(
                sys::EncParams_SetCoeffModulus(params, count, moduli.as_mut_ptr()),
                0
            );
            assert_eq!(sys::EncParams_SetPlainModulus2(params, 65537), 0);
            assert_eq!(
                sys::SEALContext_Create(params, true, TC128, &mut context),
                0
            );
            assert_eq!(sys::BatchEncoder_Create(context, &mut encoder), 0);
            for m in moduli {
                sys::Modulus_Destroy(m);
            }
            sys::EncParams_Destroy(params);
        }
        BatchEncoder { context, encoder }
    }
}

impl Drop for BatchEncoder {
    fn drop(&mut self) {
        // SAFETY: both handles were created by `new` and are destroyed once, here.
        unsafe {
            sys::BatchEncoder_Destroy(self.encoder);
            sys::SEALContext_Destroy(self.context);
        }
    }
}

/// One C API call on a plaintext handle.
type Call = Box<dyn Fn(*mut c_void) -> c_long>;

/// Every entry point patch 0005 guards, by name. SAFETY (all closures): the handle passed is
/// a live `Plaintext` (see the caller); every other pointer is a live local or handle of the
/// size the function writes.
fn calls(host: &Plaintext, batch: &BatchEncoder) -> Vec<(&'static str, Call)> {
    let other = host.as_ptr();
    let encoder = batch.encoder;
    vec![
        (
            "Plaintext_ToString",
            Box::new(|p| unsafe { sys::Plaintext_ToString(p, ptr::null_mut(), &mut 0) }),
        ),
        (
            "Plaintext_IsZero",
            Box::new(|p| unsafe { sys::Plaintext_IsZero(p, &mut false) }),
        ),
        (
            "Plaintext_SetZero1",
            Box::new(|p| unsafe { sys::Plaintext_SetZero1(p) }),
        ),
        (
            "Plaintext_ShrinkToFit",
            Box::new(|p| unsafe { sys::Plaintext_ShrinkToFit(p) }),
        ),
        (
            "Plaintext_SignificantCoeffCount",
            Box::new(|p| unsafe { sys::Plaintext_SignificantCoeffCount(p, &mut 0) }),
        ),
        (
            "Plaintext_NonZeroCoeffCount",
            Box::new(|p| unsafe { sys::Plaintext_NonZeroCoeffCount(p, &mut 0) }),
        ),
        (
            "Plaintext_Equals",
            Box::new(move |p| unsafe { sys::Plaintext_Equals(p, other, &mut false) }),
        ),
        (
            "BatchEncoder_Encode1",
            Box::new(move |p| unsafe {
                let mut values = [1u64, 2, 3];
                sys::BatchEncoder_Encode1(encoder, 3, values.as_mut_ptr(), p)
            }),
        ),
        (
            "BatchEncoder_Encode2",
            Box::new(move |p| unsafe {
                let mut values = [1i64, -2, 3];
                sys::BatchEncoder_Encode2(encoder, 3, values.as_mut_ptr(), p)
            }),
        ),
    ]
}

child_test! {
    fn plaintext_accessors_return_an_hresult_on_a_device_error() [] {
        let (fx, mut rng) = Fixture::with_rng();
        let host = fx.plain(&mut rng);
        let batch = BatchEncoder::new();
        let calls = calls(&host, &batch);
        // One plaintext per call whose words only the device holds (a routed mod switch).
        let pending: Vec<Plaintext> = calls
            .iter()
            .map(|_| {
                let mut p = plain_on_gpu(&host);
                fx.evaluator
                    .mod_switch_to_next_plain_inplace(&mut p)
                    .unwrap();
                p
            })
            .collect();
        // Each call succeeds on a host plaintext (an empty one: SEAL refuses to print or to
        // resize one in NTT form), so what fails below is the device.
        for (name, call) in &calls {
            let p = Plaintext::new().unwrap();
            assert_eq!(call(p.as_ptr()), 0, "{name} on an empty host plaintext");
        }
        // Those refusals are SEAL's own exceptions, which used to escape too.
        let ntt = host.try_clone().unwrap();
        for (name, call) in &calls {
            let want = match *name {
                "Plaintext_ToString" => INVALID_ARGUMENT,
                "BatchEncoder_Encode1" | "BatchEncoder_Encode2" => LOGIC_ERROR,
                _ => continue,
            };
            assert_eq!(call(ntt.as_ptr()), want, "{name} on an NTT-form plaintext");
        }
        seal_opencl::ffi::uninstall_backend().unwrap();
        for ((name, call), p) in calls.iter().zip(&pending) {
            assert_eq!(
                call(p.as_ptr()),
                LOGIC_ERROR,
                "{name} on a plaintext only an uninstalled backend held"
            );
        }
    }
}
