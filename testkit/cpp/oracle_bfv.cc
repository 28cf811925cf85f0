// SEAL's BFV multiplication on the CPU for the test kit's BFV oracle bridge
// (testkit/src/oracle_bfv.rs).
#include "seal-opencl-testkit/cpp/oracle_bfv.h"
#include "seal-opencl-testkit/src/oracle_bfv.rs.h"

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "seal/seal.h"

namespace seal_opencl_testkit
{
    namespace
    {
        // The ciphertext's words (size * K * N, SEAL's layout).
        rust::Vec<std::uint64_t> words(const seal::Ciphertext &c)
        {
            rust::Vec<std::uint64_t> out;
            std::size_t count = c.size() * c.coeff_modulus_size() * c.poly_modulus_degree();
            out.reserve(count);
            for (std::size_t i = 0; i < count; i++)
            {
                out.push_back(c.data()[i]);
            }
            return out;
        }

        // A plaintext of N coefficients drawn below t.
        seal::Plaintext random_plain(std::size_t n, std::uint64_t t, std::mt19937_64 &rng)
        {
            seal::Plaintext plain(n);
            std::uniform_int_distribution<std::uint64_t> coeff(0, t - 1);
            for (std::size_t i = 0; i < n; i++)
            {
                plain[i] = coeff(rng);
            }
            return plain;
        }
    } // namespace

    SealBfvProducts seal_bfv_products(
        std::uint32_t log_n, rust::Slice<const std::uint64_t> coeff_modulus, std::uint64_t plain_modulus,
        std::size_t levels_down, std::uint64_t seed)
    {
        if (log_n < 1 || log_n > 17)
        {
            throw std::invalid_argument("log_n must be in 1..=17");
        }
        std::size_t n = std::size_t(1) << log_n;
        seal::EncryptionParameters parms(seal::scheme_type::bfv);
        parms.set_poly_modulus_degree(n);
        std::vector<seal::Modulus> moduli;
        for (auto q : coeff_modulus)
        {
            moduli.emplace_back(q);
        }
        parms.set_coeff_modulus(moduli);
        parms.set_plain_modulus(plain_modulus);
        seal::SEALContext context(parms, true, seal::sec_level_type::none);
        if (!context.parameters_set())
        {
            throw std::invalid_argument(std::string("SEAL rejects the parameters: ") +
                                        context.parameter_error_message());
        }

        seal::KeyGenerator keygen(context);
        seal::PublicKey public_key;
        keygen.create_public_key(public_key);
        seal::Encryptor encryptor(context, public_key);
        seal::Evaluator evaluator(context);

        std::mt19937_64 rng(seed);
        seal::Ciphertext ct1, ct2;
        encryptor.encrypt(random_plain(n, plain_modulus, rng), ct1);
        encryptor.encrypt(random_plain(n, plain_modulus, rng), ct2);
        for (std::size_t i = 0; i < levels_down; i++)
        {
            evaluator.mod_switch_to_next_inplace(ct1);
            evaluator.mod_switch_to_next_inplace(ct2);
        }

        seal::Ciphertext product, square, product3;
        evaluator.multiply(ct1, ct2, product);
        evaluator.square(ct1, square);
        evaluator.multiply(product, ct2, product3);

        SealBfvProducts out;
        auto context_data = context.get_context_data(ct1.parms_id());
        for (const auto &q : context_data->parms().coeff_modulus())
        {
            out.level_moduli.push_back(q.value());
        }
        const seal::util::RNSBase *bsk = context_data->rns_tool()->base_Bsk();
        for (std::size_t i = 0; i < bsk->size(); i++)
        {
            out.base_bsk.push_back((*bsk)[i].value());
        }
        out.ct1 = words(ct1);
        out.ct2 = words(ct2);
        out.product = words(product);
        out.square = words(square);
        out.product3 = words(product3);
        return out;
    }
} // namespace seal_opencl_testkit
