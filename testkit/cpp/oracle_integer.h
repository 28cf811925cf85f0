// The C++ side of the test kit's BFV and BGV oracle (testkit/src/oracle_integer.rs): SEAL's
// own results of the operations that key-switch or divide by a dropped prime, on real
// ciphertexts. See that file for what each field holds.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rust/cxx.h"

namespace seal_opencl_testkit
{
    // Defined by the generated header seal-opencl-testkit/src/oracle_integer.rs.h.
    struct IntegerCase;

    // Throws std::invalid_argument for parameters SEAL rejects; cxx turns that into a Rust Err.
    IntegerCase seal_integer_case(
        rust::Str scheme, std::uint64_t poly_modulus_degree, rust::Slice<const std::int32_t> coeff_bit_sizes,
        std::int32_t plain_bits, std::size_t drops, std::int32_t row_step);
} // namespace seal_opencl_testkit
