//! `KeyGenerator` and the keys it makes.

use super::{
    handle_types, opaque_debug, read_parms_id, read_value, seal_call, seal_create, CkksContext,
    ParmsId,
};
use crate::sys;
use seal_opencl::error::Result;
use std::os::raw::c_void;
use std::ptr;

handle_types! {
    /// `seal::KeyGenerator`: a fresh secret key and the keys derived from it. Keys are created
    /// unseeded (`save_seed = false`), ready for use.
    KeyGenerator;
    /// `seal::SecretKey`.
    SecretKey;
    /// `seal::PublicKey`.
    PublicKey;
    /// `seal::RelinKeys`.
    RelinKeys;
    /// `seal::GaloisKeys`.
    GaloisKeys;
}

impl KeyGenerator {
    pub fn new(context: &CkksContext) -> Result<Self> {
        // SAFETY: the context is live; the call creates a fresh KeyGenerator.
        Ok(KeyGenerator {
            handle: unsafe {
                seal_create!(KeyGenerator_Destroy, KeyGenerator_Create1(context.ptr()))
            }?,
        })
    }

    /// A key generator for an existing secret key (`KeyGenerator(context, secret_key)`).
    pub fn with_secret_key(context: &CkksContext, secret_key: &SecretKey) -> Result<Self> {
        // SAFETY: context and key are live (SEAL copies the key); the call creates a
        // fresh KeyGenerator.
        Ok(KeyGenerator {
            handle: unsafe {
                seal_create!(
                    KeyGenerator_Destroy,
                    KeyGenerator_Create2(context.ptr(), secret_key.ptr())
                )
            }?,
        })
    }

    /// A copy of the secret key.
    pub fn secret_key(&self) -> Result<SecretKey> {
        // SAFETY: the generator is live; the call creates a fresh SecretKey copy.
        Ok(SecretKey {
            handle: unsafe { seal_create!(SecretKey_Destroy, KeyGenerator_SecretKey(self.ptr())) }?,
        })
    }

    /// A new public key (`create_public_key`).
    pub fn public_key(&self) -> Result<PublicKey> {
        // SAFETY: the generator is live; the call creates a fresh PublicKey.
        Ok(PublicKey {
            handle: unsafe {
                seal_create!(
                    PublicKey_Destroy,
                    KeyGenerator_CreatePublicKey(self.ptr(), false)
                )
            }?,
        })
    }

    /// New relinearization keys (`create_relin_keys`). Errors: `Logic` when the
    /// parameters do not support keyswitching (a single prime).
    pub fn relin_keys(&self) -> Result<RelinKeys> {
        // SAFETY: the generator is live; the call creates a fresh RelinKeys.
        Ok(RelinKeys {
            handle: unsafe {
                seal_create!(
                    KSwitchKeys_Destroy,
                    KeyGenerator_CreateRelinKeys(self.ptr(), false)
                )
            }?,
        })
    }

    /// Galois keys for rotations by each of `steps` (`create_galois_keys(steps)`); 0 means
    /// the complex conjugation. Errors: `InvalidArgument` for steps out of range.
    pub fn galois_keys_from_steps(&self, steps: &[i32]) -> Result<GaloisKeys> {
        let mut steps = steps.to_vec();
        // SAFETY: `steps` holds the `len` ints read; the call creates fresh GaloisKeys.
        Ok(GaloisKeys {
            handle: unsafe {
                seal_create!(
                    KSwitchKeys_Destroy,
                    KeyGenerator_CreateGaloisKeysFromSteps(
                        self.ptr(),
                        steps.len() as u64,
                        steps.as_mut_ptr(),
                        false
                    )
                )
            }?,
        })
    }

    /// Galois keys for the given Galois elements (odd, below 2N).
    /// Errors: `InvalidArgument` for elements SEAL rejects.
    pub fn galois_keys_from_elts(&self, galois_elts: &[u32]) -> Result<GaloisKeys> {
        let mut elts = galois_elts.to_vec();
        // SAFETY: `elts` holds the `len` elements read; the call creates fresh GaloisKeys.
        Ok(GaloisKeys {
            handle: unsafe {
                seal_create!(
                    KSwitchKeys_Destroy,
                    KeyGenerator_CreateGaloisKeysFromElts(
                        self.ptr(),
                        elts.len() as u64,
                        elts.as_mut_ptr(),
                        false
                    )
                )
            }?,
        })
    }

    /// Galois keys for every power-of-two rotation and the conjugation
    /// (`create_galois_keys()`).
    pub fn galois_keys_all(&self) -> Result<GaloisKeys> {
        // SAFETY: the generator is live; the call creates fresh GaloisKeys.
        Ok(GaloisKeys {
            handle: unsafe {
                seal_create!(
                    KSwitchKeys_Destroy,
                    KeyGenerator_CreateGaloisKeysAll(self.ptr(), false)
                )
            }?,
        })
    }
}

/// Reads the parms_id of a KSwitchKeys (RelinKeys and GaloisKeys are ones).
fn kswitch_parms_id(keys: *mut c_void) -> ParmsId {
    read_parms_id(keys, sys::KSwitchKeys_GetParmsId, "KSwitchKeys_GetParmsId")
}

/// The number of keys held (non-empty key lists), `KSwitchKeys::size`.
fn kswitch_size(keys: *mut c_void) -> u64 {
    read_value(keys, sys::KSwitchKeys_Size, "KSwitchKeys_Size")
}

impl RelinKeys {
    /// The key level's parms_id.
    pub fn parms_id(&self) -> ParmsId {
        kswitch_parms_id(self.ptr())
    }

    /// The number of keys (1 for SEAL's relinearization of size-3 ciphertexts).
    pub fn size(&self) -> u64 {
        kswitch_size(self.ptr())
    }

    /// Copy assignment (`KSwitchKeys::operator=`): this object now holds `source`'s keys
    /// (in the patched SEAL its version changes, so a GPU backend uploads them again).
    pub fn assign(&mut self, source: &RelinKeys) -> Result<()> {
        // SAFETY: both objects are live and distinct (`&mut self` and `&source`).
        unsafe { seal_call!(KSwitchKeys_Set(self.ptr(), source.ptr())) }
    }
}

impl GaloisKeys {
    /// The key level's parms_id.
    pub fn parms_id(&self) -> ParmsId {
        kswitch_parms_id(self.ptr())
    }

    /// The number of Galois elements with a key.
    pub fn size(&self) -> u64 {
        kswitch_size(self.ptr())
    }

    /// Whether a key for `galois_elt` is present (`GaloisKeys::has_key`).
    /// Errors: `InvalidArgument` for an even element (no automorphism; SEAL's index
    /// function does not check that, so it is checked here).
    pub fn has_key(&self, galois_elt: u32) -> Result<bool> {
        if galois_elt.is_multiple_of(2) {
            return Err(crate::invalid(format!(
                "galois_elt {galois_elt} is not valid: it must be odd"
            )));
        }
        let mut index = 0;
        let mut raw = 0;
        // SAFETY: `index` and `raw` are live locals; the keys are live.
        unsafe {
            seal_call!(GaloisKeys_GetIndex(galois_elt, &mut index))?;
            seal_call!(KSwitchKeys_RawSize(self.ptr(), &mut raw))?;
        }
        if index >= raw {
            return Ok(false);
        }
        let mut count = 0;
        // SAFETY: `index < raw` (the C side does not check it); a null list asks for the
        // key count of that slot only.
        unsafe {
            seal_call!(KSwitchKeys_GetKeyList(
                self.ptr(),
                index,
                &mut count,
                ptr::null_mut()
            ))
        }?;
        Ok(count > 0)
    }
}

opaque_debug!(KeyGenerator, SecretKey, PublicKey, RelinKeys, GaloisKeys);
