// The C++ side of the test kit's integer-scheme bridge (testkit/src/integer.rs): SEAL's BFV and
// BGV Evaluator run on copies of one ciphertext on the CPU and through the installed backend.
#pragma once

#include <cstdint>

#include "rust/cxx.h"

namespace seal_opencl_testkit
{
    // Defined by the generated header seal-opencl-testkit/src/integer.rs.h.
    struct IntegerCase;
    struct IntegerOutcome;
    struct IntegerFuzz;

    // Throws SEAL's exception for parameters SEAL rejects; cxx turns it into a Rust Err.
    rust::Vec<IntegerOutcome> integer_operations(const IntegerCase &c);
    IntegerFuzz integer_fuzz(const IntegerCase &c, std::uint64_t calls);
    void sealpir_expansion(const IntegerCase &c, std::uint32_t rounds);
    void apsi_inner_polynomial(const IntegerCase &c, std::uint32_t terms);
} // namespace seal_opencl_testkit
