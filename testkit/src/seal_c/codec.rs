//! `CkksEncoder`, `Encryptor` and `Decryptor`.

use super::{
    check_infallible, handle_types, opaque_debug, seal_call, seal_create, Ciphertext, CkksContext,
    Handle, ParmsId, Plaintext,
};
use super::{PublicKey, SecretKey};
use crate::sys;
use seal_opencl::error::Result;
use std::os::raw::c_void;
use std::ptr;

/// `seal::CKKSEncoder`: `slot_count = N/2` values per plaintext.
pub struct CkksEncoder {
    handle: Handle,
    slot_count: usize,
}

handle_types! {
    /// `seal::Encryptor` with a public key.
    Encryptor;
    /// `seal::Decryptor`.
    Decryptor;
}

/// What SEAL's encoder checks late or not at all (a NaN scale passes its bound check).
fn check_encode_args(count: usize, slots: usize, finite: bool, scale: f64) -> Result<()> {
    if count > slots {
        return Err(crate::invalid(format!(
            "encode: {count} values for {slots} slots"
        )));
    }
    if !finite {
        return Err(crate::invalid("encode: values must be finite"));
    }
    if !(scale.is_finite() && scale > 0.0) {
        return Err(crate::invalid(format!(
            "encode: scale {scale} is not a positive finite number"
        )));
    }
    Ok(())
}

/// A new object from `new`, written by `fill`.
fn filled<T>(new: fn() -> Result<T>, fill: impl FnOnce(&mut T) -> Result<()>) -> Result<T> {
    let mut object = new()?;
    fill(&mut object)?;
    Ok(object)
}

impl CkksEncoder {
    pub fn new(context: &CkksContext) -> Result<Self> {
        // SAFETY: the context is live; the call creates a fresh CKKSEncoder.
        let handle =
            unsafe { seal_create!(CKKSEncoder_Destroy, CKKSEncoder_Create(context.ptr())) }?;
        let mut slots = 0;
        // SAFETY: the encoder is live; `slots` is a live local.
        let hr = unsafe { sys::CKKSEncoder_SlotCount(handle.get(), &mut slots) };
        check_infallible(hr, "CKKSEncoder_SlotCount");
        Ok(CkksEncoder {
            handle,
            slot_count: slots as usize,
        })
    }

    fn ptr(&self) -> *mut c_void {
        self.handle.get()
    }

    pub fn slot_count(&self) -> usize {
        self.slot_count
    }

    /// Encodes up to `slot_count` real values (the rest are 0) at level `parms_id` with
    /// `scale`. Errors: `InvalidArgument` for too many or non-finite values, a bad scale
    /// or a `parms_id` not in the context.
    pub fn encode(&self, values: &[f64], parms_id: &ParmsId, scale: f64) -> Result<Plaintext> {
        filled(Plaintext::new, |plain| {
            self.encode_into(values, parms_id, scale, plain)
        })
    }

    /// `encode` into an existing plaintext (overwritten whole).
    pub fn encode_into(
        &self,
        values: &[f64],
        parms_id: &ParmsId,
        scale: f64,
        destination: &mut Plaintext,
    ) -> Result<()> {
        let finite = values.iter().all(|v| v.is_finite());
        check_encode_args(values.len(), self.slot_count, finite, scale)?;
        let mut id = *parms_id;
        // SAFETY: `values` holds the `len` doubles read (SEAL copies them and never
        // writes through the pointer); `id` has 4 words; the encoder and `destination`
        // are live; a null pool means the global pool.
        unsafe {
            seal_call!(CKKSEncoder_Encode1(
                self.ptr(),
                values.len() as u64,
                values.as_ptr().cast_mut(),
                id.as_mut_ptr(),
                scale,
                destination.ptr(),
                ptr::null_mut()
            ))
        }
    }

    /// Encodes up to `slot_count` complex values `(re, im)`.
    pub fn encode_complex(
        &self,
        values: &[(f64, f64)],
        parms_id: &ParmsId,
        scale: f64,
    ) -> Result<Plaintext> {
        filled(Plaintext::new, |plain| {
            self.encode_complex_into(values, parms_id, scale, plain)
        })
    }

    /// `encode_complex` into an existing plaintext (overwritten whole).
    pub fn encode_complex_into(
        &self,
        values: &[(f64, f64)],
        parms_id: &ParmsId,
        scale: f64,
        destination: &mut Plaintext,
    ) -> Result<()> {
        let finite = values
            .iter()
            .all(|(re, im)| re.is_finite() && im.is_finite());
        check_encode_args(values.len(), self.slot_count, finite, scale)?;
        let mut flat: Vec<f64> = values.iter().flat_map(|&(re, im)| [re, im]).collect();
        let mut id = *parms_id;
        // SAFETY: `flat` holds 2 doubles per value, as Encode2 reads `value_count` pairs;
        // `id` has 4 words; the encoder and `destination` are live.
        unsafe {
            seal_call!(CKKSEncoder_Encode2(
                self.ptr(),
                values.len() as u64,
                flat.as_mut_ptr(),
                id.as_mut_ptr(),
                scale,
                destination.ptr(),
                ptr::null_mut()
            ))
        }
    }

    /// Encodes `value` into every slot.
    pub fn encode_scalar(&self, value: f64, parms_id: &ParmsId, scale: f64) -> Result<Plaintext> {
        check_encode_args(1, self.slot_count, value.is_finite(), scale)?;
        let mut id = *parms_id;
        // SAFETY: `id` has 4 words; the encoder and `plain` are live.
        filled(Plaintext::new, |plain| unsafe {
            seal_call!(CKKSEncoder_Encode3(
                self.ptr(),
                value,
                id.as_mut_ptr(),
                scale,
                plain.ptr(),
                ptr::null_mut()
            ))
        })
    }

    /// The `slot_count` real parts of the slots. Errors: `InvalidArgument` for a
    /// plaintext SEAL cannot decode (not NTT form, unknown parms_id, ...).
    pub fn decode(&self, plain: &Plaintext) -> Result<Vec<f64>> {
        let mut values = vec![0.0; self.slot_count];
        let mut count = values.len() as u64;
        // SAFETY: `values` has room for the `slot_count` doubles SEAL writes (decode
        // always yields slot_count values); the encoder and `plain` are live.
        unsafe {
            seal_call!(CKKSEncoder_Decode1(
                self.ptr(),
                plain.ptr(),
                &mut count,
                values.as_mut_ptr(),
                ptr::null_mut()
            ))
        }?;
        values.truncate(count as usize);
        Ok(values)
    }

    /// The `slot_count` complex slots as `(re, im)`.
    pub fn decode_complex(&self, plain: &Plaintext) -> Result<Vec<(f64, f64)>> {
        let mut flat = vec![0.0; 2 * self.slot_count];
        let mut count = self.slot_count as u64;
        // SAFETY: `flat` has room for the 2 * slot_count doubles SEAL writes; the encoder
        // and `plain` are live.
        unsafe {
            seal_call!(CKKSEncoder_Decode2(
                self.ptr(),
                plain.ptr(),
                &mut count,
                flat.as_mut_ptr(),
                ptr::null_mut()
            ))
        }?;
        flat.truncate(2 * count as usize);
        Ok(flat.chunks_exact(2).map(|c| (c[0], c[1])).collect())
    }
}

impl Encryptor {
    pub fn new(context: &CkksContext, public_key: &PublicKey) -> Result<Self> {
        // SAFETY: context and key are live (SEAL copies the key); no secret key (null);
        // the call creates a fresh Encryptor.
        Ok(Encryptor {
            handle: unsafe {
                seal_create!(
                    Encryptor_Destroy,
                    Encryptor_Create(context.ptr(), public_key.ptr(), ptr::null_mut())
                )
            }?,
        })
    }

    /// A fresh encryption of `plain` at its level.
    pub fn encrypt(&self, plain: &Plaintext) -> Result<Ciphertext> {
        filled(Ciphertext::new, |ct| self.encrypt_into(plain, ct))
    }

    /// Encrypts into an existing ciphertext (overwritten whole; a GPU mark stays).
    pub fn encrypt_into(&self, plain: &Plaintext, destination: &mut Ciphertext) -> Result<()> {
        // SAFETY: encryptor, `plain` and `destination` are live and distinct objects.
        unsafe {
            seal_call!(Encryptor_Encrypt(
                self.ptr(),
                plain.ptr(),
                destination.ptr(),
                ptr::null_mut()
            ))
        }
    }
}

impl Decryptor {
    pub fn new(context: &CkksContext, secret_key: &SecretKey) -> Result<Self> {
        // SAFETY: context and key are live (SEAL copies the key); the call creates a
        // fresh Decryptor.
        Ok(Decryptor {
            handle: unsafe {
                seal_create!(
                    Decryptor_Destroy,
                    Decryptor_Create(context.ptr(), secret_key.ptr())
                )
            }?,
        })
    }

    /// Decrypts (in the patched SEAL, the implicit sync point for a marked ciphertext).
    /// Errors: `InvalidArgument` for a ciphertext SEAL rejects (e.g. empty or of
    /// another context).
    pub fn decrypt(&self, encrypted: &Ciphertext) -> Result<Plaintext> {
        // SAFETY: decryptor, `encrypted` and the new plaintext are live and distinct objects.
        filled(Plaintext::new, |plain| unsafe {
            seal_call!(Decryptor_Decrypt(self.ptr(), encrypted.ptr(), plain.ptr()))
        })
    }
}

impl std::fmt::Debug for CkksEncoder {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CkksEncoder")
            .field("slot_count", &self.slot_count)
            .finish()
    }
}

opaque_debug!(Encryptor, Decryptor);
