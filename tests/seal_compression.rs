//! SEAL's compressed serialization in this crate's SEAL, built with the system's zlib and
//! Zstandard (`SEAL_FIND_COMPRESSION`, seal-patch/*/0009): both modes are supported, a saved
//! ciphertext says its mode in SEAL's header and loads back to the same words, from SEAL's
//! CPU path and from a device result.

use seal_opencl_testkit::fixture::{on_gpu, Fixture};
use seal_opencl_testkit::seal_c::{is_supported_compr_mode, Ciphertext, ComprMode};

const MODES: [ComprMode; 3] = [ComprMode::None, ComprMode::Zlib, ComprMode::Zstd];

/// SEAL's 16-byte `SEALHeader`: magic 0xA15E, header size, version major and minor, then the
/// compression mode.
const COMPR_MODE_BYTE: usize = 5;

#[test]
fn zlib_and_zstd_are_supported() {
    for mode in MODES {
        assert!(is_supported_compr_mode(mode), "{mode:?}");
    }
}

/// `ct` saved in `mode` and loaded back: the header names the mode, the words come back.
fn round_trip(fx: &Fixture, ct: &Ciphertext, mode: ComprMode) -> Vec<u8> {
    let bytes = ct.save_compressed(mode).unwrap();
    assert_eq!(&bytes[..2], &[0x5e, 0xa1], "{mode:?}: SEAL's magic");
    assert_eq!(bytes[COMPR_MODE_BYTE], mode as u8, "{mode:?}");
    let loaded = Ciphertext::load(&fx.ctx, &bytes).unwrap();
    assert_eq!(loaded.parms_id(), ct.parms_id(), "{mode:?}");
    assert_eq!(loaded.scale(), ct.scale(), "{mode:?}");
    assert_eq!(loaded.data().unwrap(), ct.data().unwrap(), "{mode:?}");
    bytes
}

#[test]
fn a_ciphertext_saved_compressed_loads_back_to_the_same_words() {
    let (fx, mut rng) = Fixture::with_rng();
    let ct = fx.encrypt(&mut rng);
    let sizes: Vec<usize> = MODES
        .iter()
        .map(|&mode| round_trip(&fx, &ct, mode).len())
        .collect();
    // 64-bit words below 35-bit primes: both compressors save a good part of them.
    assert!(
        sizes[1] < sizes[0] && sizes[2] < sizes[0],
        "sizes {sizes:?}"
    );
}

#[test]
fn a_device_result_saved_compressed_loads_back_to_the_cpu_result() {
    let (fx, mut rng) = Fixture::with_rng();
    let (a, b, _) = fx.operands(&mut rng);
    let expected = fx.mul_lin(&a, &b);
    let device = fx.mul_lin(&on_gpu(&a), &on_gpu(&b));
    assert!(device.on_gpu());
    for mode in [ComprMode::Zlib, ComprMode::Zstd] {
        let bytes = round_trip(&fx, &device, mode);
        let loaded = Ciphertext::load(&fx.ctx, &bytes).unwrap();
        assert_eq!(loaded.data().unwrap(), expected.data().unwrap(), "{mode:?}");
    }
}
