//! `Evaluator`: every CKKS operation of `seal::Evaluator`, in SEAL's two forms.
//!
//! `op(&self, inputs.., destination)` is the C API's in/out call; `op_inplace(&self, a, ..)`
//! passes `a` as input and destination. Rust's borrows keep a destination distinct from
//! the other inputs, so the only aliasing is the in-place one, which every SEAL routine
//! allows (`dest = a` is skipped for the same object; `mod_switch_drop_to_next` and
//! `mod_switch_scale_to_next` use a temporary when `&encrypted == &destination`).
//!
//! Errors are SEAL's: `InvalidArgument` for operands SEAL rejects (mismatched parms_id or
//! scale, wrong NTT form, missing keys, end of the modulus chain, ...), `Logic` for what
//! SEAL throws as `std::logic_error` (e.g. a transparent result).

use std::os::raw::{c_int, c_void};
use std::ptr;

use seal_opencl::error::Result;

use super::{
    handle_types, opaque_debug, seal_call, seal_create, Ciphertext, CkksContext, GaloisKeys,
    ParmsId, Plaintext, RelinKeys,
};

handle_types! {
    /// `seal::Evaluator`.
    Evaluator;
}

opaque_debug!(Evaluator);

/// The pool argument: null means SEAL's global memory pool.
const POOL: *mut c_void = ptr::null_mut();

impl Evaluator {
    pub fn new(context: &CkksContext) -> Result<Self> {
        // SAFETY: the context is live; the call creates a fresh Evaluator.
        Ok(Evaluator {
            handle: unsafe { seal_create!(Evaluator_Destroy, Evaluator_Create(context.ptr())) }?,
        })
    }

    /// The sum of all `encrypteds` (`add_many`). Errors: `InvalidArgument` when empty.
    pub fn add_many(&self, encrypteds: &[&Ciphertext], destination: &mut Ciphertext) -> Result<()> {
        if encrypteds.is_empty() {
            return Err(crate::invalid("add_many: encrypteds cannot be empty"));
        }
        let mut ptrs: Vec<*mut c_void> = encrypteds.iter().map(|c| c.ptr()).collect();
        // SAFETY: the evaluator and `destination` are live; `ptrs` holds `len` live
        // Ciphertext handles (SEAL copies each), none of them `destination` (a distinct
        // `&mut`).
        unsafe {
            seal_call!(Evaluator_AddMany(
                self.ptr(),
                ptrs.len() as u64,
                ptrs.as_mut_ptr(),
                destination.ptr()
            ))
        }
    }
}

/// An argument of an Evaluator call as the C API takes it.
trait CArg {
    type C;
    fn c(&self) -> Self::C;
}

macro_rules! handle_args {
    ($($t:ty),*) => {$(
        impl CArg for &$t {
            type C = *mut c_void;
            fn c(&self) -> *mut c_void {
                self.ptr()
            }
        }
    )*};
}
handle_args!(Ciphertext, Plaintext, RelinKeys, GaloisKeys);

impl CArg for &ParmsId {
    type C = *mut u64;
    /// SEAL's C API takes a parms_id as `uint64_t *` and only copies its 4 words.
    fn c(&self) -> *mut u64 {
        self.as_ptr().cast_mut()
    }
}

/// A rotation step.
impl CArg for i32 {
    type C = c_int;
    fn c(&self) -> c_int {
        *self
    }
}

/// A Galois element.
impl CArg for u32 {
    type C = u32;
    fn c(&self) -> u32 {
        *self
    }
}

// SAFETY (every call the macro makes): the evaluator and every Ciphertext, Plaintext and key
// handle passed are live objects of the type the C function expects (they are owned by
// the Rust values borrowed for the call); a destination is either distinct from the
// inputs or, in the `_inplace` forms, the same object as the first input, which SEAL
// supports (module doc); a parms_id points to 4 words, which SEAL only reads; POOL
// (null) is the global pool.

/// Each operation of SEAL's Evaluator in its two forms, from one line: `$op(&self, $x,
/// args.., destination)` calls `sys::$f(evaluator, $x, args.., destination[, POOL])`, and
/// `$inplace(&self, $x, args..)` passes `$x` as the destination too.
macro_rules! evaluator_ops {
    ($(
        $(#[$doc:meta])*
        $op:ident, $inplace:ident = $f:ident($x:ident: $X:ty $(, $a:ident: $A:ty)*) $($pool:ident)?;
    )*) => {
        impl Evaluator {$(
            $(#[$doc])*
            pub fn $op(&self, $x: &$X $(, $a: $A)*, destination: &mut $X) -> Result<()> {
                // SAFETY: see the note above `evaluator_ops`.
                unsafe {
                    seal_call!($f(self.ptr(), $x.ptr() $(, $a.c())*, destination.ptr() $(, $pool)?))
                }
            }

            #[doc = concat!("[`Evaluator::", stringify!($op), "`] in place: `", stringify!($x), "` is the destination.")]
            pub fn $inplace(&self, $x: &mut $X $(, $a: $A)*) -> Result<()> {
                // SAFETY: see the note above `evaluator_ops` (in place).
                unsafe {
                    seal_call!($f(self.ptr(), $x.ptr() $(, $a.c())*, $x.ptr() $(, $pool)?))
                }
            }
        )*}
    };
}

evaluator_ops! {
    negate, negate_inplace = Evaluator_Negate(encrypted: Ciphertext);
    add, add_inplace = Evaluator_Add(a: Ciphertext, b: &Ciphertext);
    sub, sub_inplace = Evaluator_Sub(a: Ciphertext, b: &Ciphertext);
    multiply, multiply_inplace = Evaluator_Multiply(a: Ciphertext, b: &Ciphertext) POOL;
    square, square_inplace = Evaluator_Square(encrypted: Ciphertext) POOL;
    /// Relinearizes to size 2.
    relinearize, relinearize_inplace =
        Evaluator_Relinearize(encrypted: Ciphertext, relin_keys: &RelinKeys) POOL;
    /// Divides by the last prime and drops it (scale / q_last).
    rescale_to_next, rescale_to_next_inplace = Evaluator_RescaleToNext(encrypted: Ciphertext) POOL;
    /// Rescales level by level down to `parms_id`.
    rescale_to, rescale_to_inplace =
        Evaluator_RescaleTo(encrypted: Ciphertext, parms_id: &ParmsId) POOL;
    /// Drops the last prime without scaling.
    mod_switch_to_next, mod_switch_to_next_inplace =
        Evaluator_ModSwitchToNext1(encrypted: Ciphertext) POOL;
    /// Drops primes down to the level `parms_id`.
    mod_switch_to, mod_switch_to_inplace =
        Evaluator_ModSwitchTo1(encrypted: Ciphertext, parms_id: &ParmsId) POOL;
    /// Drops the last prime of an NTT-form plaintext.
    mod_switch_to_next_plain, mod_switch_to_next_plain_inplace =
        Evaluator_ModSwitchToNext2(plain: Plaintext);
    /// Drops the primes of an NTT-form plaintext down to the level `parms_id`.
    mod_switch_to_plain, mod_switch_to_plain_inplace =
        Evaluator_ModSwitchTo2(plain: Plaintext, parms_id: &ParmsId);
    multiply_plain, multiply_plain_inplace =
        Evaluator_MultiplyPlain(encrypted: Ciphertext, plain: &Plaintext) POOL;
    add_plain, add_plain_inplace = Evaluator_AddPlain(encrypted: Ciphertext, plain: &Plaintext);
    sub_plain, sub_plain_inplace = Evaluator_SubPlain(encrypted: Ciphertext, plain: &Plaintext);
    /// Rotates the slots left by `steps` (right for negative steps): slot i of the result
    /// is slot (i + steps) mod slot_count of the input.
    rotate_vector, rotate_vector_inplace = Evaluator_RotateVector(
        encrypted: Ciphertext, steps: i32, galois_keys: &GaloisKeys
    ) POOL;
    /// Conjugates every slot.
    complex_conjugate, complex_conjugate_inplace =
        Evaluator_ComplexConjugate(encrypted: Ciphertext, galois_keys: &GaloisKeys) POOL;
    /// Applies the automorphism x -> x^galois_elt (odd, below 2N).
    apply_galois, apply_galois_inplace = Evaluator_ApplyGalois(
        encrypted: Ciphertext, galois_elt: u32, galois_keys: &GaloisKeys
    ) POOL;
    /// Ciphertext to NTT form (CKKS ciphertexts are normally in it already).
    transform_to_ntt, transform_to_ntt_inplace = Evaluator_TransformToNTT2(encrypted: Ciphertext);
    /// Ciphertext out of NTT form.
    transform_from_ntt, transform_from_ntt_inplace =
        Evaluator_TransformFromNTT(encrypted: Ciphertext);
}
