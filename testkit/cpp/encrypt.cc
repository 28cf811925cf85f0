// SEAL's CKKS public-key encryption from a seeded PRNG (see testkit/src/encrypt.rs): every call
// with one case builds the same context, keys and samples, so the CPU path's words are the
// oracle of the routed ones.

#include "seal-opencl-testkit/cpp/encrypt.h"
#include "seal-opencl-testkit/src/encrypt.rs.h"

#include "seal/seal.h"
#include "seal/gpu/access.h"

#include <cmath>
#include <memory>
#include <stdexcept>
#include <vector>

using namespace seal;
using namespace std;

namespace seal_opencl_testkit
{
    Encrypted seeded_encrypt(const EncryptCase &c, bool gpu)
    {
        const size_t n = size_t(1) << c.log_n;
        EncryptionParameters parms(scheme_type::ckks);
        parms.set_poly_modulus_degree(n);
        parms.set_coeff_modulus(CoeffModulus::Create(n, vector<int>(c.coeff_bits.begin(), c.coeff_bits.end())));
        prng_seed_type seed{};
        seed[0] = c.seed;
        parms.set_random_generator(make_shared<Blake2xbPRNGFactory>(seed));
        SEALContext context(parms, true, sec_level_type::none);
        if (!context.parameters_set())
        {
            throw invalid_argument(context.parameter_error_message());
        }
        KeyGenerator keygen(context);
        PublicKey public_key;
        keygen.create_public_key(public_key);
        Encryptor encryptor(context, public_key);

        auto level = context.first_context_data();
        for (uint32_t i = 0; i < c.level; i++)
        {
            level = level->next_context_data();
            if (!level)
            {
                throw invalid_argument("no such level");
            }
        }

        // Unmarked whatever SEAL_GPU_ROUTE_ALL says, unless marked here.
        Ciphertext ct = gpu::Access::unmarked_ciphertext();
        if (gpu)
        {
            ct.gpu();
        }
        if (c.plain)
        {
            CKKSEncoder encoder(context);
            vector<double> values(encoder.slot_count());
            for (size_t i = 0; i < values.size(); i++)
            {
                values[i] = 1.0 / (1.0 + static_cast<double>(i % 97));
            }
            Plaintext plain;
            encoder.encode(values, level->parms_id(), std::ldexp(1.0, c.scale_bits), plain);
            encryptor.encrypt(plain, ct);
        }
        else
        {
            encryptor.encrypt_zero(level->parms_id(), ct);
        }

        Encrypted out;
        out.device_newer = gpu::Access::residency(ct) == gpu::Residency::device_newer;
        const Ciphertext &read = ct;
        const uint64_t *words = read.data();
        for (size_t i = 0; i < read.dyn_array().size(); i++)
        {
            out.words.push_back(words[i]);
        }
        for (auto w : read.parms_id())
        {
            out.parms_id.push_back(w);
        }
        out.size = read.size();
        out.coeff_modulus_size = read.coeff_modulus_size();
        out.scale = read.scale();
        out.ntt_form = read.is_ntt_form();
        out.correction_factor = read.correction_factor();
        return out;
    }
} // namespace seal_opencl_testkit
