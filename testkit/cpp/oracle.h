// The C++ side of the test kit's oracle bridge (testkit/src/oracle.rs): SEAL's own NTT,
// modular arithmetic and primes. See that file for what each function computes.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rust/cxx.h"

namespace seal_opencl_testkit
{
    // Defined by the generated header seal-opencl-testkit/src/oracle.rs.h.
    struct SealNttTables;

    // Each throws std::invalid_argument (or SEAL's own exception) for arguments SEAL
    // would reject; cxx turns that into a Rust Err.
    SealNttTables seal_ntt_tables(std::int32_t coeff_count_power, std::uint64_t modulus);
    void seal_ntt_forward(std::int32_t coeff_count_power, std::uint64_t modulus, rust::Slice<std::uint64_t> data);
    void seal_ntt_inverse(std::int32_t coeff_count_power, std::uint64_t modulus, rust::Slice<std::uint64_t> data);

    std::uint64_t seal_barrett_reduce_64(std::uint64_t x, std::uint64_t q);
    std::uint64_t seal_barrett_reduce_128(std::uint64_t lo, std::uint64_t hi, std::uint64_t q);
    std::uint64_t seal_multiply_uint_mod(std::uint64_t a, std::uint64_t b, std::uint64_t q);
    std::uint64_t seal_shoup_quotient(std::uint64_t y, std::uint64_t q);
    std::uint64_t seal_multiply_uint_mod_shoup(std::uint64_t x, std::uint64_t y, std::uint64_t y_quotient, std::uint64_t q);

    rust::Vec<std::uint64_t> seal_get_primes(std::uint64_t factor, std::int32_t bit_size, std::size_t count);
    rust::Vec<std::uint64_t> seal_coeff_modulus_create(
        std::uint64_t poly_modulus_degree, rust::Slice<const std::int32_t> bit_sizes);
} // namespace seal_opencl_testkit
