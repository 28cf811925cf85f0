// SEAL's BFV and BGV results for the test kit's oracle (testkit/src/oracle_integer.rs).
#include "seal-opencl-testkit/cpp/oracle_integer.h"
#include "seal-opencl-testkit/src/oracle_integer.rs.h"

#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "seal/seal.h"

namespace seal_opencl_testkit
{
    namespace
    {
        rust::Vec<std::uint64_t> words_of(const seal::Ciphertext &ct)
        {
            rust::Vec<std::uint64_t> out;
            out.reserve(ct.dyn_array().size());
            for (std::size_t i = 0; i < ct.dyn_array().size(); i++)
            {
                out.push_back(ct.dyn_array()[i]);
            }
            return out;
        }

        // A key vector of a KSwitchKeys object: its public keys' words, one after another.
        rust::Vec<std::uint64_t> key_words(const std::vector<seal::PublicKey> &keys)
        {
            rust::Vec<std::uint64_t> out;
            for (const auto &key : keys)
            {
                for (std::uint64_t w : words_of(key.data()))
                {
                    out.push_back(w);
                }
            }
            return out;
        }
    } // namespace

    IntegerCase seal_integer_case(
        rust::Str scheme, std::uint64_t poly_modulus_degree, rust::Slice<const std::int32_t> coeff_bit_sizes,
        std::int32_t plain_bits, std::size_t drops, std::int32_t row_step)
    {
        const std::string name(scheme);
        seal::scheme_type type;
        if (name == "bfv")
        {
            type = seal::scheme_type::bfv;
        }
        else if (name == "bgv")
        {
            type = seal::scheme_type::bgv;
        }
        else
        {
            throw std::invalid_argument("scheme must be bfv or bgv, not " + name);
        }
        seal::EncryptionParameters parms(type);
        parms.set_poly_modulus_degree(poly_modulus_degree);
        parms.set_coeff_modulus(seal::CoeffModulus::Create(
            poly_modulus_degree, std::vector<int>(coeff_bit_sizes.begin(), coeff_bit_sizes.end())));
        parms.set_plain_modulus(seal::PlainModulus::Batching(poly_modulus_degree, plain_bits));
        seal::SEALContext context(parms, true, seal::sec_level_type::none);
        if (!context.parameters_set())
        {
            throw std::invalid_argument(std::string("SEAL rejects the parameters: ") + context.parameter_error_message());
        }

        seal::KeyGenerator keygen(context);
        seal::PublicKey public_key;
        keygen.create_public_key(public_key);
        seal::RelinKeys relin_keys;
        keygen.create_relin_keys(relin_keys);
        const std::uint32_t galois_elt = context.key_context_data()->galois_tool()->get_elt_from_step(row_step);
        seal::GaloisKeys galois_keys;
        keygen.create_galois_keys(std::vector<std::uint32_t>{ galois_elt }, galois_keys);

        seal::BatchEncoder encoder(context);
        seal::Encryptor encryptor(context, public_key);
        seal::Evaluator evaluator(context);
        std::mt19937_64 gen(poly_modulus_degree + static_cast<std::uint64_t>(plain_bits));
        const std::uint64_t t = parms.plain_modulus().value();
        auto encrypt_random = [&]() {
            std::vector<std::uint64_t> values(encoder.slot_count());
            for (auto &v : values)
            {
                v = gen() % t;
            }
            seal::Plaintext plain;
            encoder.encode(values, plain);
            seal::Ciphertext ct;
            encryptor.encrypt(plain, ct);
            for (std::size_t i = 0; i < drops; i++)
            {
                evaluator.mod_switch_to_next_inplace(ct);
            }
            return ct;
        };
        const seal::Ciphertext x = encrypt_random();
        const seal::Ciphertext y = encrypt_random();

        IntegerCase out;
        for (const auto &q : context.key_context_data()->parms().coeff_modulus())
        {
            out.key_moduli.push_back(q.value());
        }
        out.plain_modulus = t;
        out.ntt_form = x.is_ntt_form();
        out.primes = x.coeff_modulus_size();

        seal::Ciphertext product;
        evaluator.multiply(x, y, product);
        out.product = words_of(product);
        seal::Ciphertext relinearized;
        evaluator.relinearize(product, relin_keys, relinearized);
        out.relinearized = words_of(relinearized);
        out.relin_key = key_words(relin_keys.data()[0]);
        out.relin_key_count = relin_keys.data()[0].size();

        out.ct = words_of(x);
        out.galois_elt = galois_elt;
        seal::Ciphertext rotated;
        evaluator.apply_galois(x, galois_elt, galois_keys, rotated);
        out.rotated = words_of(rotated);
        const auto &galois_key = galois_keys.data()[seal::GaloisKeys::get_index(galois_elt)];
        out.galois_key = key_words(galois_key);
        out.galois_key_count = galois_key.size();

        if (out.primes >= 2)
        {
            seal::Ciphertext switched;
            evaluator.mod_switch_to_next(x, switched);
            out.mod_switched = words_of(switched);
        }
        return out;
    }
} // namespace seal_opencl_testkit
