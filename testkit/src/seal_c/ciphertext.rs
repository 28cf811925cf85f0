//! `Ciphertext` and `Plaintext`, with the patched SEAL's GPU marking.

use super::{
    check_infallible, handle_types, read_parms_id, read_value, seal_call, seal_create,
    trailing_words, CkksContext, ParmsId,
};
use crate::sys;
use seal_opencl::error::Result;
use std::os::raw::{c_long, c_void};
use std::ptr;

/// `seal::compr_mode_type`: how `save` compresses. This crate's SEAL is built with zlib and
/// Zstandard, so all three are supported ([`is_supported_compr_mode`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ComprMode {
    None = 0,
    Zlib = 1,
    Zstd = 2,
}

/// Whether SEAL can save and load `mode` (`Serialization::IsSupportedComprMode`).
pub fn is_supported_compr_mode(mode: ComprMode) -> bool {
    let mut supported = false;
    // SAFETY: `supported` is a live local.
    let hr = unsafe { sys::Serialization_IsSupportedComprMode(mode as u8, &mut supported) };
    check_infallible(hr, "Serialization_IsSupportedComprMode");
    supported
}

handle_types! {
    /// `seal::Ciphertext`. `size` polynomials of `coeff_modulus_size` residue polynomials of
    /// `poly_modulus_degree` words each.
    Ciphertext;
    /// `seal::Plaintext` (CKKS: `coeff_modulus_size * poly_modulus_degree` words, NTT form).
    Plaintext;
}

type SaveSizeFn = unsafe extern "C" fn(*mut c_void, u8, *mut i64) -> c_long;
type SaveFn = unsafe extern "C" fn(*mut c_void, *mut u8, u64, u8, *mut i64) -> c_long;
type LoadFn = unsafe extern "C" fn(*mut c_void, *mut c_void, *mut u8, u64, *mut i64) -> c_long;

/// SEAL's serialization of `object` compressed by `mode` (a host read: a device-newer object
/// of the patched SEAL downloads first and stays marked, in sync).
fn save(
    object: *mut c_void,
    mode: ComprMode,
    (save_size, size_call): (SaveSizeFn, &'static str),
    (save, save_call): (SaveFn, &'static str),
) -> Result<Vec<u8>> {
    let mut size = 0i64;
    // SAFETY: `object` is a live object of the type both functions take; `size` is a live
    // local.
    let hr = unsafe { save_size(object, mode as u8, &mut size) };
    super::check(hr, size_call)?;
    let mut bytes = vec![0u8; usize::try_from(size).unwrap_or(0)];
    let mut written = 0i64;
    // SAFETY: `bytes` has the `len` bytes SEAL may write; `written` is a live local.
    let hr = unsafe {
        save(
            object,
            bytes.as_mut_ptr(),
            bytes.len() as u64,
            mode as u8,
            &mut written,
        )
    };
    super::check(hr, save_call)?;
    bytes.truncate(usize::try_from(written).unwrap_or(0));
    Ok(bytes)
}

/// Replaces the trailing `words.len()` words of a saved object and loads it back with
/// SEAL's validating `load` (which rejects words not reduced modulo their prime).
fn load_with_words(
    object: *mut c_void,
    context: &CkksContext,
    mut bytes: Vec<u8>,
    words: &[u64],
    (load, call): (LoadFn, &'static str),
) -> Result<()> {
    let start = bytes.len() - words.len() * 8;
    for (dst, w) in bytes[start..].chunks_exact_mut(8).zip(words) {
        dst.copy_from_slice(&w.to_le_bytes());
    }
    let mut read = 0i64;
    // SAFETY: `object` is a live object of the type `load` takes, the context is live,
    // `bytes` holds the `len` bytes read, `read` is a live local.
    let hr = unsafe {
        load(
            object,
            context.ptr(),
            bytes.as_mut_ptr(),
            bytes.len() as u64,
            &mut read,
        )
    };
    super::check(hr, call)
}

/// The metadata accessors both types have, over their C functions (given by name, which
/// errors show): level, scale, NTT form, and the patched SEAL's GPU mark.
macro_rules! metadata_accessors {
    ($t:ident {
        parms_id: $parms_id:ident,
        scale: $scale:ident,
        set_scale: $set_scale:ident,
        is_ntt_form: $is_ntt_form:ident,
        gpu: $gpu:ident,
        on_gpu: $on_gpu:ident $(,)?
    }) => {
        impl $t {
            pub fn parms_id(&self) -> ParmsId {
                read_parms_id(self.ptr(), sys::$parms_id, stringify!($parms_id))
            }

            pub fn scale(&self) -> f64 {
                read_value(self.ptr(), sys::$scale, stringify!($scale))
            }

            /// Overwrites the scale (metadata only), e.g. to align two operands' scales.
            pub fn set_scale(&mut self, scale: f64) {
                // SAFETY: `self` is live.
                let hr = unsafe { sys::$set_scale(self.ptr(), scale) };
                check_infallible(hr, stringify!($set_scale));
            }

            pub fn is_ntt_form(&self) -> bool {
                read_value(self.ptr(), sys::$is_ntt_form, stringify!($is_ntt_form))
            }

            /// Marks the object for the GPU backend (`gpu()` in the patched SEAL): routed
            /// Evaluator operations on it run on the device. Errors: `Logic` when no
            /// backend is installed.
            pub fn gpu(&mut self) -> Result<()> {
                // SAFETY: `self` is live.
                unsafe { seal_call!($gpu(self.ptr())) }
            }

            /// Whether the object is marked for the GPU (`on_gpu()`).
            pub fn on_gpu(&self) -> bool {
                read_value(self.ptr(), sys::$on_gpu, stringify!($on_gpu))
            }

            /// These accessors' values as fields of `d`, for `Debug`.
            fn metadata_fields<'d, 'a, 'b>(
                &self,
                d: &'d mut std::fmt::DebugStruct<'a, 'b>,
            ) -> &'d mut std::fmt::DebugStruct<'a, 'b> {
                d.field("parms_id", &format_args!("{:x?}", self.parms_id()))
                    .field("scale", &self.scale())
                    .field("is_ntt_form", &self.is_ntt_form())
                    .field("on_gpu", &self.on_gpu())
            }
        }
    };
}

metadata_accessors!(Ciphertext {
    parms_id: Ciphertext_ParmsId,
    scale: Ciphertext_Scale,
    set_scale: Ciphertext_SetScale,
    is_ntt_form: Ciphertext_IsNTTForm,
    gpu: Ciphertext_Gpu,
    on_gpu: Ciphertext_OnGpu,
});

metadata_accessors!(Plaintext {
    parms_id: Plaintext_GetParmsId,
    scale: Plaintext_Scale,
    set_scale: Plaintext_SetScale,
    is_ntt_form: Plaintext_IsNTTForm,
    gpu: Plaintext_Gpu,
    on_gpu: Plaintext_OnGpu,
});

impl Ciphertext {
    /// An empty ciphertext (size 0, no parameters) in SEAL's global memory pool.
    pub fn new() -> Result<Self> {
        // SAFETY: a null pool means the global pool; the call creates a fresh Ciphertext.
        Ok(Ciphertext {
            handle: unsafe {
                seal_create!(Ciphertext_Destroy, Ciphertext_Create1(ptr::null_mut()))
            }?,
        })
    }

    /// A copy (`Ciphertext(const Ciphertext &)`): metadata, words and the GPU mark; a
    /// device-resident source is cloned device to device by the backend.
    pub fn try_clone(&self) -> Result<Self> {
        // SAFETY: `self` is live; the call creates a fresh Ciphertext copy.
        Ok(Ciphertext {
            handle: unsafe { seal_create!(Ciphertext_Destroy, Ciphertext_Create2(self.ptr())) }?,
        })
    }

    /// The number of polynomials (2 fresh, 3 after a multiply).
    pub fn size(&self) -> u64 {
        read_value(self.ptr(), sys::Ciphertext_Size, "Ciphertext_Size")
    }

    pub fn coeff_modulus_size(&self) -> u64 {
        read_value(
            self.ptr(),
            sys::Ciphertext_CoeffModulusSize,
            "Ciphertext_CoeffModulusSize",
        )
    }

    pub fn poly_modulus_degree(&self) -> u64 {
        read_value(
            self.ptr(),
            sys::Ciphertext_PolyModulusDegree,
            "Ciphertext_PolyModulusDegree",
        )
    }

    /// `size * coeff_modulus_size * poly_modulus_degree`, the number of words.
    pub fn uint64_count(&self) -> u64 {
        self.size() * self.coeff_modulus_size() * self.poly_modulus_degree()
    }

    /// All words, polynomial by polynomial, residue by residue, as SEAL stores them. A
    /// host read: in the patched SEAL a device-newer ciphertext downloads first (and stays
    /// marked). Goes through one uncompressed `Ciphertext_Save`, so it costs a copy or two
    /// of the words, not a C call per word.
    pub fn data(&self) -> Result<Vec<u64>> {
        let bytes = self.save()?;
        trailing_words(&bytes, self.uint64_count() as usize, "Ciphertext_Save")
    }

    /// SEAL's uncompressed serialization (`Ciphertext::save`): a host read, so a
    /// device-newer ciphertext downloads first (and stays marked).
    pub fn save(&self) -> Result<Vec<u8>> {
        self.save_compressed(ComprMode::None)
    }

    /// SEAL's serialization compressed by `mode` (`Ciphertext::save`), a host read as `save`.
    /// Errors: SEAL's `InvalidArgument` for a mode it was built without.
    pub fn save_compressed(&self, mode: ComprMode) -> Result<Vec<u8>> {
        save(
            self.ptr(),
            mode,
            (sys::Ciphertext_SaveSize, "Ciphertext_SaveSize"),
            (sys::Ciphertext_Save, "Ciphertext_Save"),
        )
    }

    /// A ciphertext loaded from SEAL's serialization `bytes`, compressed or not, with SEAL's
    /// validating `load` against `context` (`Ciphertext::load`).
    /// Errors: SEAL's load errors (an incompatible version, a compression mode this SEAL lacks,
    /// data invalid for `context`).
    pub fn load(context: &CkksContext, bytes: &[u8]) -> Result<Self> {
        let ciphertext = Ciphertext::new()?;
        // SEAL's C API takes a mutable pointer, though load only reads.
        let mut input = bytes.to_vec();
        let mut read = 0i64;
        // SAFETY: `ciphertext` and the context are live, `input` holds the `len` bytes read,
        // `read` is a live local.
        unsafe {
            seal_call!(Ciphertext_Load(
                ciphertext.ptr(),
                context.ptr(),
                input.as_mut_ptr(),
                input.len() as u64,
                &mut read,
            ))
        }?;
        Ok(ciphertext)
    }

    /// Overwrites all words (same layout as `data`), keeping the metadata. SEAL validates
    /// the result against `context` (every word below its prime). A whole overwrite: in
    /// the patched SEAL the host becomes newer and the mark stays.
    /// Errors: `InvalidArgument` for a wrong word count; SEAL's load errors otherwise.
    pub fn set_data(&mut self, context: &CkksContext, words: &[u64]) -> Result<()> {
        let count = self.uint64_count() as usize;
        if words.len() != count {
            return Err(crate::invalid(format!(
                "set_data: {} words given, the ciphertext holds {count}",
                words.len()
            )));
        }
        let bytes = self.save()?;
        // Checks the layout before writing through it.
        trailing_words(&bytes, count, "Ciphertext_Save")?;
        load_with_words(
            self.ptr(),
            context,
            bytes,
            words,
            (sys::Ciphertext_Load, "Ciphertext_Load"),
        )
    }

    /// Copy assignment (`Ciphertext::operator=(const Ciphertext &)`, `Ciphertext_Set`):
    /// metadata, words and the GPU mark of `source`; a device-resident source is cloned
    /// device to device. SEAL's C API has no move assignment. Lets an exception of the copy
    /// escape (see the module doc), so it is only as safe as `clone`.
    pub fn assign(&mut self, source: &Ciphertext) {
        // SAFETY: both objects are live and distinct (`&mut self` and `&source`).
        let hr = unsafe { sys::Ciphertext_Set(self.ptr(), source.ptr()) };
        check_infallible(hr, "Ciphertext_Set");
    }

    /// Whether every polynomial but the first is zero (`Ciphertext::is_transparent`). A
    /// host read: a device-newer ciphertext downloads first.
    pub fn is_transparent(&self) -> bool {
        read_value(
            self.ptr(),
            sys::Ciphertext_IsTransparent,
            "Ciphertext_IsTransparent",
        )
    }

    /// Frees the words (`Ciphertext::release`): size 0; in the patched SEAL the device
    /// image goes too and the mark stays.
    pub fn release(&mut self) {
        // SAFETY: `self` is live.
        let hr = unsafe { sys::Ciphertext_Release(self.ptr()) };
        check_infallible(hr, "Ciphertext_Release");
    }
}

impl Clone for Ciphertext {
    /// Panics only if SEAL cannot copy (out of memory, or a device clone that fails);
    /// `try_clone` reports that instead.
    fn clone(&self) -> Self {
        self.try_clone().expect("Ciphertext_Create2 failed")
    }
}

impl Plaintext {
    /// An empty plaintext in SEAL's global memory pool.
    pub fn new() -> Result<Self> {
        // SAFETY: a null pool means the global pool; the call creates a fresh Plaintext.
        Ok(Plaintext {
            handle: unsafe { seal_create!(Plaintext_Destroy, Plaintext_Create1(ptr::null_mut())) }?,
        })
    }

    /// A copy (`Plaintext(const Plaintext &)`), GPU mark included.
    pub fn try_clone(&self) -> Result<Self> {
        // SAFETY: `self` is live; the call creates a fresh Plaintext copy.
        Ok(Plaintext {
            handle: unsafe { seal_create!(Plaintext_Destroy, Plaintext_Create5(self.ptr())) }?,
        })
    }

    /// The C API handle (a `seal::Plaintext *`) for C functions these wrappers do not
    /// cover; valid while `self` lives.
    pub fn as_ptr(&self) -> *mut c_void {
        self.ptr()
    }

    /// The number of words (`coeff_modulus_size * poly_modulus_degree` for CKKS).
    pub fn coeff_count(&self) -> u64 {
        read_value(
            self.ptr(),
            sys::Plaintext_CoeffCount,
            "Plaintext_CoeffCount",
        )
    }

    /// All words (a host read; see `Ciphertext::data`).
    pub fn data(&self) -> Result<Vec<u64>> {
        let bytes = save(
            self.ptr(),
            ComprMode::None,
            (sys::Plaintext_SaveSize, "Plaintext_SaveSize"),
            (sys::Plaintext_Save, "Plaintext_Save"),
        )?;
        trailing_words(&bytes, self.coeff_count() as usize, "Plaintext_Save")
    }
}

impl Clone for Plaintext {
    /// Panics only if SEAL cannot copy; `try_clone` reports that instead.
    fn clone(&self) -> Self {
        self.try_clone().expect("Plaintext_Create5 failed")
    }
}

/// Metadata only (reading the words would be a host read, i.e. a download).
impl std::fmt::Debug for Ciphertext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Ciphertext");
        d.field("size", &self.size())
            .field("coeff_modulus_size", &self.coeff_modulus_size())
            .field("poly_modulus_degree", &self.poly_modulus_degree());
        self.metadata_fields(&mut d).finish()
    }
}

/// Metadata only.
impl std::fmt::Debug for Plaintext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut d = f.debug_struct("Plaintext");
        d.field("coeff_count", &self.coeff_count());
        self.metadata_fields(&mut d).finish()
    }
}
