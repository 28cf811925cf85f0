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

use super::RelinKeys;
use super::{seal_call, Ciphertext, CkksContext, GaloisKeys, Handle, ParmsId, Plaintext};
use crate::error::{Error, Result};
use crate::sys;
use std::os::raw::{c_int, c_void};
use std::ptr;

/// `seal::Evaluator`.
pub struct Evaluator {
    handle: Handle,
}

/// The pool argument: null means SEAL's global memory pool.
const POOL: *mut c_void = ptr::null_mut();

impl Evaluator {
    pub fn new(context: &CkksContext) -> Result<Self> {
        let mut evaluator = ptr::null_mut();
        // SAFETY: the context is live; `evaluator` receives a fresh Evaluator.
        unsafe { seal_call!(Evaluator_Create(context.ptr(), &mut evaluator)) }?;
        Ok(Evaluator {
            handle: Handle::new(evaluator, sys::Evaluator_Destroy, "Evaluator_Create")?,
        })
    }

    fn ptr(&self) -> *mut c_void {
        self.handle.get()
    }

    // SAFETY (all calls below): the evaluator and every Ciphertext, Plaintext and key
    // handle passed are live objects of the type the C function expects (they are owned by
    // the Rust values borrowed for the call); a destination is either distinct from the
    // inputs or, in the `_inplace` forms, the same object as the first input, which SEAL
    // supports (module doc); parms_id arrays have 4 words; POOL (null) is the global pool.

    pub fn negate(&self, encrypted: &Ciphertext, destination: &mut Ciphertext) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_Negate(
                self.ptr(),
                encrypted.ptr(),
                destination.ptr()
            ))
        }
    }

    pub fn negate_inplace(&self, encrypted: &mut Ciphertext) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_Negate(
                self.ptr(),
                encrypted.ptr(),
                encrypted.ptr()
            ))
        }
    }

    pub fn add(&self, a: &Ciphertext, b: &Ciphertext, destination: &mut Ciphertext) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_Add(
                self.ptr(),
                a.ptr(),
                b.ptr(),
                destination.ptr()
            ))
        }
    }

    pub fn add_inplace(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe { seal_call!(Evaluator_Add(self.ptr(), a.ptr(), b.ptr(), a.ptr())) }
    }

    /// The sum of all `encrypteds` (`add_many`). Errors: `InvalidArgument` when empty.
    pub fn add_many(&self, encrypteds: &[&Ciphertext], destination: &mut Ciphertext) -> Result<()> {
        if encrypteds.is_empty() {
            return Err(Error::invalid("add_many: encrypteds cannot be empty"));
        }
        let mut ptrs: Vec<*mut c_void> = encrypteds.iter().map(|c| c.ptr()).collect();
        // SAFETY: see above; `ptrs` holds `len` live Ciphertext handles (SEAL copies each),
        // none of them `destination` (a distinct `&mut`).
        unsafe {
            seal_call!(Evaluator_AddMany(
                self.ptr(),
                ptrs.len() as u64,
                ptrs.as_mut_ptr(),
                destination.ptr()
            ))
        }
    }

    pub fn sub(&self, a: &Ciphertext, b: &Ciphertext, destination: &mut Ciphertext) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_Sub(
                self.ptr(),
                a.ptr(),
                b.ptr(),
                destination.ptr()
            ))
        }
    }

    pub fn sub_inplace(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe { seal_call!(Evaluator_Sub(self.ptr(), a.ptr(), b.ptr(), a.ptr())) }
    }

    pub fn multiply(
        &self,
        a: &Ciphertext,
        b: &Ciphertext,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_Multiply(
                self.ptr(),
                a.ptr(),
                b.ptr(),
                destination.ptr(),
                POOL
            ))
        }
    }

    pub fn multiply_inplace(&self, a: &mut Ciphertext, b: &Ciphertext) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_Multiply(
                self.ptr(),
                a.ptr(),
                b.ptr(),
                a.ptr(),
                POOL
            ))
        }
    }

    pub fn square(&self, encrypted: &Ciphertext, destination: &mut Ciphertext) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_Square(
                self.ptr(),
                encrypted.ptr(),
                destination.ptr(),
                POOL
            ))
        }
    }

    pub fn square_inplace(&self, encrypted: &mut Ciphertext) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_Square(
                self.ptr(),
                encrypted.ptr(),
                encrypted.ptr(),
                POOL
            ))
        }
    }

    /// Relinearizes to size 2.
    pub fn relinearize(
        &self,
        encrypted: &Ciphertext,
        relin_keys: &RelinKeys,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_Relinearize(
                self.ptr(),
                encrypted.ptr(),
                relin_keys.ptr(),
                destination.ptr(),
                POOL
            ))
        }
    }

    pub fn relinearize_inplace(
        &self,
        encrypted: &mut Ciphertext,
        relin_keys: &RelinKeys,
    ) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_Relinearize(
                self.ptr(),
                encrypted.ptr(),
                relin_keys.ptr(),
                encrypted.ptr(),
                POOL
            ))
        }
    }

    /// Divides by the last prime and drops it (scale / q_last).
    pub fn rescale_to_next(
        &self,
        encrypted: &Ciphertext,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_RescaleToNext(
                self.ptr(),
                encrypted.ptr(),
                destination.ptr(),
                POOL
            ))
        }
    }

    pub fn rescale_to_next_inplace(&self, encrypted: &mut Ciphertext) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_RescaleToNext(
                self.ptr(),
                encrypted.ptr(),
                encrypted.ptr(),
                POOL
            ))
        }
    }

    /// Rescales level by level down to `parms_id`.
    pub fn rescale_to(
        &self,
        encrypted: &Ciphertext,
        parms_id: &ParmsId,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        let mut id = *parms_id;
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_RescaleTo(
                self.ptr(),
                encrypted.ptr(),
                id.as_mut_ptr(),
                destination.ptr(),
                POOL
            ))
        }
    }

    pub fn rescale_to_inplace(&self, encrypted: &mut Ciphertext, parms_id: &ParmsId) -> Result<()> {
        let mut id = *parms_id;
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_RescaleTo(
                self.ptr(),
                encrypted.ptr(),
                id.as_mut_ptr(),
                encrypted.ptr(),
                POOL
            ))
        }
    }

    /// Drops the last prime without scaling.
    pub fn mod_switch_to_next(
        &self,
        encrypted: &Ciphertext,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_ModSwitchToNext1(
                self.ptr(),
                encrypted.ptr(),
                destination.ptr(),
                POOL
            ))
        }
    }

    pub fn mod_switch_to_next_inplace(&self, encrypted: &mut Ciphertext) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_ModSwitchToNext1(
                self.ptr(),
                encrypted.ptr(),
                encrypted.ptr(),
                POOL
            ))
        }
    }

    /// Drops primes down to the level `parms_id`.
    pub fn mod_switch_to(
        &self,
        encrypted: &Ciphertext,
        parms_id: &ParmsId,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        let mut id = *parms_id;
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_ModSwitchTo1(
                self.ptr(),
                encrypted.ptr(),
                id.as_mut_ptr(),
                destination.ptr(),
                POOL
            ))
        }
    }

    pub fn mod_switch_to_inplace(
        &self,
        encrypted: &mut Ciphertext,
        parms_id: &ParmsId,
    ) -> Result<()> {
        let mut id = *parms_id;
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_ModSwitchTo1(
                self.ptr(),
                encrypted.ptr(),
                id.as_mut_ptr(),
                encrypted.ptr(),
                POOL
            ))
        }
    }

    /// Drops the last prime of an NTT-form plaintext.
    pub fn mod_switch_to_next_plain(
        &self,
        plain: &Plaintext,
        destination: &mut Plaintext,
    ) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_ModSwitchToNext2(
                self.ptr(),
                plain.ptr(),
                destination.ptr()
            ))
        }
    }

    pub fn mod_switch_to_next_plain_inplace(&self, plain: &mut Plaintext) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_ModSwitchToNext2(
                self.ptr(),
                plain.ptr(),
                plain.ptr()
            ))
        }
    }

    pub fn mod_switch_to_plain(
        &self,
        plain: &Plaintext,
        parms_id: &ParmsId,
        destination: &mut Plaintext,
    ) -> Result<()> {
        let mut id = *parms_id;
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_ModSwitchTo2(
                self.ptr(),
                plain.ptr(),
                id.as_mut_ptr(),
                destination.ptr()
            ))
        }
    }

    pub fn mod_switch_to_plain_inplace(
        &self,
        plain: &mut Plaintext,
        parms_id: &ParmsId,
    ) -> Result<()> {
        let mut id = *parms_id;
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_ModSwitchTo2(
                self.ptr(),
                plain.ptr(),
                id.as_mut_ptr(),
                plain.ptr()
            ))
        }
    }

    pub fn multiply_plain(
        &self,
        encrypted: &Ciphertext,
        plain: &Plaintext,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_MultiplyPlain(
                self.ptr(),
                encrypted.ptr(),
                plain.ptr(),
                destination.ptr(),
                POOL
            ))
        }
    }

    pub fn multiply_plain_inplace(
        &self,
        encrypted: &mut Ciphertext,
        plain: &Plaintext,
    ) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_MultiplyPlain(
                self.ptr(),
                encrypted.ptr(),
                plain.ptr(),
                encrypted.ptr(),
                POOL
            ))
        }
    }

    pub fn add_plain(
        &self,
        encrypted: &Ciphertext,
        plain: &Plaintext,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_AddPlain(
                self.ptr(),
                encrypted.ptr(),
                plain.ptr(),
                destination.ptr()
            ))
        }
    }

    pub fn add_plain_inplace(&self, encrypted: &mut Ciphertext, plain: &Plaintext) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_AddPlain(
                self.ptr(),
                encrypted.ptr(),
                plain.ptr(),
                encrypted.ptr()
            ))
        }
    }

    pub fn sub_plain(
        &self,
        encrypted: &Ciphertext,
        plain: &Plaintext,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_SubPlain(
                self.ptr(),
                encrypted.ptr(),
                plain.ptr(),
                destination.ptr()
            ))
        }
    }

    pub fn sub_plain_inplace(&self, encrypted: &mut Ciphertext, plain: &Plaintext) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_SubPlain(
                self.ptr(),
                encrypted.ptr(),
                plain.ptr(),
                encrypted.ptr()
            ))
        }
    }

    /// Rotates the slots left by `steps` (right for negative steps): slot i of the result
    /// is slot (i + steps) mod slot_count of the input.
    pub fn rotate_vector(
        &self,
        encrypted: &Ciphertext,
        steps: i32,
        galois_keys: &GaloisKeys,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_RotateVector(
                self.ptr(),
                encrypted.ptr(),
                steps as c_int,
                galois_keys.ptr(),
                destination.ptr(),
                POOL
            ))
        }
    }

    pub fn rotate_vector_inplace(
        &self,
        encrypted: &mut Ciphertext,
        steps: i32,
        galois_keys: &GaloisKeys,
    ) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_RotateVector(
                self.ptr(),
                encrypted.ptr(),
                steps as c_int,
                galois_keys.ptr(),
                encrypted.ptr(),
                POOL
            ))
        }
    }

    /// Conjugates every slot.
    pub fn complex_conjugate(
        &self,
        encrypted: &Ciphertext,
        galois_keys: &GaloisKeys,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_ComplexConjugate(
                self.ptr(),
                encrypted.ptr(),
                galois_keys.ptr(),
                destination.ptr(),
                POOL
            ))
        }
    }

    pub fn complex_conjugate_inplace(
        &self,
        encrypted: &mut Ciphertext,
        galois_keys: &GaloisKeys,
    ) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_ComplexConjugate(
                self.ptr(),
                encrypted.ptr(),
                galois_keys.ptr(),
                encrypted.ptr(),
                POOL
            ))
        }
    }

    /// Applies the automorphism x -> x^galois_elt (odd, below 2N).
    pub fn apply_galois(
        &self,
        encrypted: &Ciphertext,
        galois_elt: u32,
        galois_keys: &GaloisKeys,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_ApplyGalois(
                self.ptr(),
                encrypted.ptr(),
                galois_elt,
                galois_keys.ptr(),
                destination.ptr(),
                POOL
            ))
        }
    }

    pub fn apply_galois_inplace(
        &self,
        encrypted: &mut Ciphertext,
        galois_elt: u32,
        galois_keys: &GaloisKeys,
    ) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_ApplyGalois(
                self.ptr(),
                encrypted.ptr(),
                galois_elt,
                galois_keys.ptr(),
                encrypted.ptr(),
                POOL
            ))
        }
    }

    /// Ciphertext to NTT form (CKKS ciphertexts are normally in it already).
    pub fn transform_to_ntt(
        &self,
        encrypted: &Ciphertext,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_TransformToNTT2(
                self.ptr(),
                encrypted.ptr(),
                destination.ptr()
            ))
        }
    }

    pub fn transform_to_ntt_inplace(&self, encrypted: &mut Ciphertext) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_TransformToNTT2(
                self.ptr(),
                encrypted.ptr(),
                encrypted.ptr()
            ))
        }
    }

    pub fn transform_from_ntt(
        &self,
        encrypted: &Ciphertext,
        destination: &mut Ciphertext,
    ) -> Result<()> {
        // SAFETY: see above.
        unsafe {
            seal_call!(Evaluator_TransformFromNTT(
                self.ptr(),
                encrypted.ptr(),
                destination.ptr()
            ))
        }
    }

    pub fn transform_from_ntt_inplace(&self, encrypted: &mut Ciphertext) -> Result<()> {
        // SAFETY: see above (in place).
        unsafe {
            seal_call!(Evaluator_TransformFromNTT(
                self.ptr(),
                encrypted.ptr(),
                encrypted.ptr()
            ))
        }
    }
}

impl std::fmt::Debug for Evaluator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Evaluator").finish_non_exhaustive()
    }
}
