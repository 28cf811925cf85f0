// SEAL's NTT, modular arithmetic and primes for the test kit's oracle bridge
// (testkit/src/oracle.rs).
#include "seal-opencl-testkit/cpp/oracle.h"
#include "seal-opencl-testkit/src/oracle.rs.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "seal/memorymanager.h"
#include "seal/modulus.h"
#include "seal/util/defines.h"
#include "seal/util/ntt.h"
#include "seal/util/numth.h"
#include "seal/util/uintarithsmallmod.h"

namespace seal_opencl_testkit
{
    namespace
    {
        // SEAL checks these preconditions only in SEAL_DEBUG builds; ours is a Release
        // build, so without the checks bad input would give garbage instead of an error.

        seal::Modulus checked_modulus(std::uint64_t q)
        {
            if (q < 2)
            {
                throw std::invalid_argument("modulus must be at least 2");
            }
            // Throws std::invalid_argument above 61 bits.
            return seal::Modulus(q);
        }

        void check_reduced(std::uint64_t y, const seal::Modulus &q, const char *what)
        {
            if (y >= q.value())
            {
                throw std::invalid_argument(std::string(what) + " must be less than the modulus");
            }
        }

        seal::util::NTTTables make_tables(std::int32_t coeff_count_power, std::uint64_t modulus)
        {
            const int min_power = seal::util::get_power_of_two(SEAL_POLY_MOD_DEGREE_MIN);
            const int max_power = seal::util::get_power_of_two(SEAL_POLY_MOD_DEGREE_MAX);
            if (coeff_count_power < min_power || coeff_count_power > max_power)
            {
                throw std::invalid_argument(
                    "coeff_count_power must be in [" + std::to_string(min_power) + ", " + std::to_string(max_power) +
                    "]");
            }
            // Throws std::invalid_argument when the modulus is not 1 mod 2n.
            return seal::util::NTTTables(coeff_count_power, checked_modulus(modulus), seal::MemoryManager::GetPool());
        }

        void check_polynomial(const seal::util::NTTTables &tables, rust::Slice<std::uint64_t> data)
        {
            if (data.size() != tables.coeff_count())
            {
                throw std::invalid_argument(
                    "polynomial has " + std::to_string(data.size()) + " coefficients, the tables are for " +
                    std::to_string(tables.coeff_count()));
            }
            for (std::uint64_t c : data)
            {
                check_reduced(c, tables.modulus(), "every coefficient");
            }
        }

        rust::Vec<std::uint64_t> values_of(const std::vector<seal::Modulus> &moduli)
        {
            rust::Vec<std::uint64_t> out;
            out.reserve(moduli.size());
            for (const auto &m : moduli)
            {
                out.push_back(m.value());
            }
            return out;
        }
    } // namespace

    SealNttTables seal_ntt_tables(std::int32_t coeff_count_power, std::uint64_t modulus)
    {
        const auto tables = make_tables(coeff_count_power, modulus);
        SealNttTables out;
        out.root = tables.get_root();
        // NTTTables keeps its inverse root private; the inverse is unique, so SEAL's
        // own inversion gives the same value.
        if (!seal::util::try_invert_uint_mod(out.root, tables.modulus(), out.inv_root))
        {
            throw std::logic_error("SEAL's root of unity has no inverse");
        }
        const std::size_t n = tables.coeff_count();
        const auto *roots = tables.get_from_root_powers();
        const auto *inv_roots = tables.get_from_inv_root_powers();
        out.root_powers.reserve(n);
        out.root_powers_quotient.reserve(n);
        out.inv_root_powers.reserve(n);
        out.inv_root_powers_quotient.reserve(n);
        for (std::size_t i = 0; i < n; i++)
        {
            out.root_powers.push_back(roots[i].operand);
            out.root_powers_quotient.push_back(roots[i].quotient);
            out.inv_root_powers.push_back(inv_roots[i].operand);
            out.inv_root_powers_quotient.push_back(inv_roots[i].quotient);
        }
        out.inv_degree = tables.inv_degree_modulo().operand;
        out.inv_degree_quotient = tables.inv_degree_modulo().quotient;
        return out;
    }

    void seal_ntt_forward(std::int32_t coeff_count_power, std::uint64_t modulus, rust::Slice<std::uint64_t> data)
    {
        const auto tables = make_tables(coeff_count_power, modulus);
        check_polynomial(tables, data);
        seal::util::ntt_negacyclic_harvey(seal::util::CoeffIter(data.data()), tables);
    }

    void seal_ntt_inverse(std::int32_t coeff_count_power, std::uint64_t modulus, rust::Slice<std::uint64_t> data)
    {
        const auto tables = make_tables(coeff_count_power, modulus);
        check_polynomial(tables, data);
        seal::util::inverse_ntt_negacyclic_harvey(seal::util::CoeffIter(data.data()), tables);
    }

    std::uint64_t seal_barrett_reduce_64(std::uint64_t x, std::uint64_t q)
    {
        return seal::util::barrett_reduce_64(x, checked_modulus(q));
    }

    std::uint64_t seal_barrett_reduce_128(std::uint64_t lo, std::uint64_t hi, std::uint64_t q)
    {
        const std::uint64_t input[2]{ lo, hi };
        return seal::util::barrett_reduce_128(input, checked_modulus(q));
    }

    std::uint64_t seal_multiply_uint_mod(std::uint64_t a, std::uint64_t b, std::uint64_t q)
    {
        return seal::util::multiply_uint_mod(a, b, checked_modulus(q));
    }

    std::uint64_t seal_shoup_quotient(std::uint64_t y, std::uint64_t q)
    {
        const auto modulus = checked_modulus(q);
        check_reduced(y, modulus, "y");
        seal::util::MultiplyUIntModOperand operand;
        operand.set(y, modulus);
        return operand.quotient;
    }

    std::uint64_t seal_multiply_uint_mod_shoup(std::uint64_t x, std::uint64_t y, std::uint64_t y_quotient, std::uint64_t q)
    {
        const auto modulus = checked_modulus(q);
        check_reduced(y, modulus, "y");
        seal::util::MultiplyUIntModOperand operand;
        operand.operand = y;
        operand.quotient = y_quotient;
        return seal::util::multiply_uint_mod(x, operand, modulus);
    }

    rust::Vec<std::uint64_t> seal_get_primes(std::uint64_t factor, std::int32_t bit_size, std::size_t count)
    {
        if (factor == 0 || count == 0)
        {
            throw std::invalid_argument("factor and count must be positive");
        }
        if (bit_size < SEAL_MOD_BIT_COUNT_MIN || bit_size > SEAL_MOD_BIT_COUNT_MAX)
        {
            throw std::invalid_argument(
                "bit_size must be in [" + std::to_string(SEAL_MOD_BIT_COUNT_MIN) + ", " +
                std::to_string(SEAL_MOD_BIT_COUNT_MAX) + "]");
        }
        // Throws std::logic_error when there are fewer such primes than asked for.
        return values_of(seal::util::get_primes(factor, bit_size, count));
    }

    rust::Vec<std::uint64_t> seal_coeff_modulus_create(
        std::uint64_t poly_modulus_degree, rust::Slice<const std::int32_t> bit_sizes)
    {
        const std::vector<int> sizes(bit_sizes.begin(), bit_sizes.end());
        return values_of(seal::CoeffModulus::Create(static_cast<std::size_t>(poly_modulus_degree), sizes));
    }
} // namespace seal_opencl_testkit
