//! `CkksContext`: `EncryptionParameters` (CKKS) + `SEALContext`.

use super::{check_infallible, read_parms_id, seal_call, seal_create, Handle, ParmsId};
use crate::sys;
use seal_opencl::error::Result;
use std::os::raw::{c_int, c_void};
use std::ptr;

/// `seal::scheme_type::ckks`.
const SCHEME_CKKS: u8 = 2;
/// `seal::sec_level_type`: the HomomorphicEncryption.org security level SEALContext
/// enforces on the coefficient modulus' total bit count.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum SecLevelType {
    /// No check (`sec_level_type::none`): for tests and benchmarks with small N.
    None,
    /// 128-bit classical security, SEALContext's default.
    #[default]
    TC128,
    TC192,
    TC256,
}

impl SecLevelType {
    fn to_c(self) -> c_int {
        match self {
            SecLevelType::None => 0,
            SecLevelType::TC128 => 128,
            SecLevelType::TC192 => 192,
            SecLevelType::TC256 => 256,
        }
    }
}

/// Modulus handles from the C API, destroyed together on every path.
struct Moduli(Vec<*mut c_void>);

impl Drop for Moduli {
    fn drop(&mut self) {
        for &m in self.0.iter().filter(|m| !m.is_null()) {
            // SAFETY: every non-null entry is a Modulus the C API created for this list
            // and nothing else owns; each is destroyed once.
            let hr = unsafe { sys::Modulus_Destroy(m) };
            check_infallible(hr, "Modulus_Destroy");
        }
    }
}

impl Moduli {
    fn values(&self) -> Result<Vec<u64>> {
        self.0
            .iter()
            .map(|&m| {
                let mut value = 0;
                // SAFETY: `m` is a live Modulus of this list; `value` a live local.
                unsafe { seal_call!(Modulus_Value(m, &mut value)) }?;
                Ok(value)
            })
            .collect()
    }
}

/// A CKKS `SEALContext` with the modulus chain expanded (`expand_mod_chain = true`) and,
/// unless a constructor says otherwise, SEAL's default security check
/// (`sec_level_type::tc128`: N = 4096 allows at most 109 bits in all, 8192 218, 16384 438,
/// 32768 881).
pub struct CkksContext {
    handle: Handle,
    poly_modulus_degree: u64,
}

impl CkksContext {
    /// Primes of the given bit sizes from `CoeffModulus::Create(poly_modulus_degree,
    /// bit_sizes)`. Errors: `InvalidArgument` for sizes or degrees SEAL rejects (no sizes
    /// at all included) and for parameters SEALContext does not accept (the message is
    /// SEAL's).
    pub fn new(poly_modulus_degree: u64, coeff_bit_sizes: &[i32]) -> Result<Self> {
        Self::new_with_security(poly_modulus_degree, coeff_bit_sizes, SecLevelType::TC128)
    }

    /// `new` with another security level (`SecLevelType::None` lifts the bound).
    pub fn new_with_security(
        poly_modulus_degree: u64,
        coeff_bit_sizes: &[i32],
        sec_level: SecLevelType,
    ) -> Result<Self> {
        let mut bit_sizes = coeff_bit_sizes.to_vec();
        let mut moduli = Moduli(vec![ptr::null_mut(); bit_sizes.len()]);
        // SAFETY: `bit_sizes` holds `len` ints and `moduli` room for `len` handles, which
        // the call fills (all or none) with fresh Modulus objects that `moduli` owns.
        unsafe {
            seal_call!(CoeffModulus_Create1(
                poly_modulus_degree,
                bit_sizes.len() as u64,
                bit_sizes.as_mut_ptr(),
                moduli.0.as_mut_ptr(),
            ))
        }?;
        Self::from_moduli(poly_modulus_degree, moduli, sec_level)
    }

    /// The given primes as the coefficient modulus (last one the special prime), at the
    /// security level `sec_level`. Errors: `InvalidArgument` for values SEAL's `Modulus` or
    /// SEALContext reject (an empty list included).
    pub fn with_moduli_and_security(
        poly_modulus_degree: u64,
        coeff_modulus: &[u64],
        sec_level: SecLevelType,
    ) -> Result<Self> {
        let mut moduli = Moduli(Vec::with_capacity(coeff_modulus.len()));
        for &q in coeff_modulus {
            let mut m = ptr::null_mut();
            // SAFETY: `m` is a live local the call writes one fresh handle through; it is
            // pushed into `moduli`, which owns it from then on.
            let result = unsafe { seal_call!(Modulus_Create1(q, &mut m)) };
            moduli.0.push(m);
            result?;
        }
        Self::from_moduli(poly_modulus_degree, moduli, sec_level)
    }

    fn from_moduli(
        poly_modulus_degree: u64,
        mut moduli: Moduli,
        sec_level: SecLevelType,
    ) -> Result<Self> {
        // SAFETY: `params` is a live local the call writes a fresh handle through.
        let params = unsafe { seal_create!(EncParams_Destroy, EncParams_Create1(SCHEME_CKKS)) }?;
        let mut context = ptr::null_mut();
        // SAFETY: `params` is live; `moduli` holds `len` live Modulus handles (SEAL copies
        // their values); `context` is a live local the last call writes a fresh handle to.
        unsafe {
            seal_call!(EncParams_SetPolyModulusDegree(
                params.get(),
                poly_modulus_degree
            ))?;
            seal_call!(EncParams_SetCoeffModulus(
                params.get(),
                moduli.0.len() as u64,
                moduli.0.as_mut_ptr(),
            ))?;
            seal_call!(SEALContext_Create(
                params.get(),
                true,
                sec_level.to_c(),
                &mut context
            ))?;
        }
        let context = CkksContext {
            handle: Handle::new(context, sys::SEALContext_Destroy, "SEALContext_Create")?,
            poly_modulus_degree,
        };
        let mut set = false;
        // SAFETY: the context is live; `set` is a live local.
        unsafe { seal_call!(SEALContext_ParametersSet(context.ptr(), &mut set)) }?;
        if !set {
            return Err(crate::invalid(format!(
                "SEAL rejected the encryption parameters: {}",
                context.parameter_error_message()?
            )));
        }
        Ok(context)
    }

    /// SEAL's explanation of why the parameters are (not) valid.
    pub fn parameter_error_message(&self) -> Result<String> {
        let mut len = 0u64;
        // SAFETY: a null buffer asks for the length only; `len` is a live local.
        unsafe {
            seal_call!(SEALContext_ParameterErrorMessage(
                self.ptr(),
                ptr::null_mut(),
                &mut len
            ))
        }?;
        // ToStringHelper copies `len + 1` bytes (with the terminating NUL).
        let mut text = vec![0u8; len as usize + 1];
        // SAFETY: `text` has room for the `len` bytes and the NUL the call writes.
        unsafe {
            seal_call!(SEALContext_ParameterErrorMessage(
                self.ptr(),
                text.as_mut_ptr().cast(),
                &mut len
            ))
        }?;
        text.truncate(len as usize);
        Ok(String::from_utf8_lossy(&text).into_owned())
    }

    pub(crate) fn ptr(&self) -> *mut c_void {
        self.handle.get()
    }

    pub fn poly_modulus_degree(&self) -> u64 {
        self.poly_modulus_degree
    }

    /// The parms_id of the key level (all primes, special prime included).
    pub fn key_parms_id(&self) -> ParmsId {
        read_parms_id(
            self.ptr(),
            sys::SEALContext_KeyParmsId,
            "SEALContext_KeyParmsId",
        )
    }

    /// The parms_id of the first data level (fresh ciphertexts live here).
    pub fn first_parms_id(&self) -> ParmsId {
        read_parms_id(
            self.ptr(),
            sys::SEALContext_FirstParmsId,
            "SEALContext_FirstParmsId",
        )
    }

    /// The parms_id of the last level (one prime).
    pub fn last_parms_id(&self) -> ParmsId {
        read_parms_id(
            self.ptr(),
            sys::SEALContext_LastParmsId,
            "SEALContext_LastParmsId",
        )
    }

    pub fn using_keyswitching(&self) -> bool {
        let mut using = false;
        // SAFETY: the context is live; `using` is a live local.
        let hr = unsafe { sys::SEALContext_UsingKeyswitching(self.ptr(), &mut using) };
        check_infallible(hr, "SEALContext_UsingKeyswitching");
        using
    }

    /// The `ContextData` of `parms_id`, borrowed from the context (never destroyed here).
    fn context_data(&self, parms_id: &ParmsId) -> Result<*mut c_void> {
        let mut id = *parms_id;
        let mut data = ptr::null_mut();
        // SAFETY: the context is live; `id` has 4 words; `data` is a live local that
        // receives a pointer owned by the context.
        unsafe {
            seal_call!(SEALContext_GetContextData(
                self.ptr(),
                id.as_mut_ptr(),
                &mut data
            ))
        }?;
        if data.is_null() {
            return Err(crate::invalid(format!(
                "parms_id {parms_id:x?} is not valid for the encryption parameters"
            )));
        }
        Ok(data)
    }

    /// A copy of the `EncryptionParameters` of a context data.
    fn parms_of(data: *mut c_void) -> Result<Handle> {
        // SAFETY: `data` is a live ContextData of this context; the call writes a fresh
        // EncryptionParameters copy to the live local `parms`.
        unsafe { seal_create!(EncParams_Destroy, ContextData_Parms(data)) }
    }

    /// The parms_ids of the data levels, from the first (`first_parms_id`) down to the
    /// last (`last_parms_id`).
    pub fn parms_id_chain(&self) -> Result<Vec<ParmsId>> {
        let mut chain = Vec::new();
        let mut data = ptr::null_mut();
        // SAFETY: the context is live; `data` receives a pointer the context owns.
        unsafe { seal_call!(SEALContext_FirstContextData(self.ptr(), &mut data)) }?;
        while !data.is_null() {
            let parms = Self::parms_of(data)?;
            let mut id = [0u64; 4];
            let mut next = ptr::null_mut();
            // SAFETY: `parms` and `data` are live; `id` has 4 words; `next` receives a
            // pointer the context owns (null after the last level).
            unsafe {
                seal_call!(EncParams_GetParmsId(parms.get(), id.as_mut_ptr()))?;
                seal_call!(ContextData_NextContextData(data, &mut next))?;
            }
            chain.push(id);
            data = next;
        }
        Ok(chain)
    }

    /// The primes of the level `parms_id` (any level, the key level included).
    /// Errors: `InvalidArgument` if `parms_id` is not one of this context's.
    pub fn coeff_modulus(&self, parms_id: &ParmsId) -> Result<Vec<u64>> {
        let parms = Self::parms_of(self.context_data(parms_id)?)?;
        let mut len = 0u64;
        // SAFETY: `parms` is live; a null array asks for the count only.
        unsafe {
            seal_call!(EncParams_GetCoeffModulus(
                parms.get(),
                &mut len,
                ptr::null_mut()
            ))
        }?;
        let mut moduli = Moduli(vec![ptr::null_mut(); len as usize]);
        // SAFETY: `moduli` has room for the `len` fresh Modulus handles written, which it
        // owns and destroys.
        unsafe {
            seal_call!(EncParams_GetCoeffModulus(
                parms.get(),
                &mut len,
                moduli.0.as_mut_ptr()
            ))
        }?;
        moduli.values()
    }

    /// The level index of `parms_id`: 0 for the last level, increasing upward.
    pub fn chain_index(&self, parms_id: &ParmsId) -> Result<u64> {
        let data = self.context_data(parms_id)?;
        let mut index = 0;
        // SAFETY: `data` is a live ContextData of this context; `index` a live local.
        unsafe { seal_call!(ContextData_ChainIndex(data, &mut index)) }?;
        Ok(index)
    }
}

impl std::fmt::Debug for CkksContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CkksContext")
            .field("poly_modulus_degree", &self.poly_modulus_degree)
            .field(
                "key_coeff_modulus",
                &self.coeff_modulus(&self.key_parms_id()).ok(),
            )
            .finish()
    }
}
