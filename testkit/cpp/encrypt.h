// The C++ side of the test kit's encryption bridge (testkit/src/encrypt.rs): SEAL's CKKS
// public-key encryption with a seeded PRNG, on the CPU or into a marked ciphertext.
#pragma once

#include "rust/cxx.h"

namespace seal_opencl_testkit
{
    // Defined by the generated header seal-opencl-testkit/src/encrypt.rs.h.
    struct EncryptCase;
    struct Encrypted;

    // Throws SEAL's exception for parameters SEAL rejects; cxx turns it into a Rust Err.
    Encrypted seeded_encrypt(const EncryptCase &c, bool gpu);
} // namespace seal_opencl_testkit
