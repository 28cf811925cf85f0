// The C++ side of the test kit's BFV oracle bridge (testkit/src/oracle_bfv.rs): SEAL's
// BFV encryption and Evaluator::multiply / square on the CPU. See that file for what each
// function computes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rust/cxx.h"

namespace seal_opencl_testkit
{
    // Defined by the generated header seal-opencl-testkit/src/oracle_bfv.rs.h.
    struct SealBfvProducts;

    // Throws std::invalid_argument for parameters SEAL rejects; cxx turns that into a Rust Err.
    SealBfvProducts seal_bfv_products(
        std::uint32_t log_n, rust::Slice<const std::uint64_t> coeff_modulus, std::uint64_t plain_modulus,
        std::size_t levels_down, std::uint64_t seed);
} // namespace seal_opencl_testkit
