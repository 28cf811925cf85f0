// Listing 1 of the XeHE paper (Zhai et al., "Accelerating Encrypted Computing on Intel GPUs",
// "SEAL/XeHE code interleave") with seal-opencl as the backend: the same
// CKKS computation runs twice from the same encryptions, once on ciphertexts marked with
// .gpu() (routed to the OpenCL backend) and once on unmarked copies (SEAL's CPU code), and the
// results must agree word for word (the backend's one rule). Decrypted values are checked
// too, but only as the weaker second check.
//
// Exit status: 0 when every compared ciphertext is identical, 1 on a mismatch, 2 on an error.

#include "seal/seal.h"
#include "seal_opencl.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <functional>
#include <iostream>
#include <numeric>
#include <string>
#include <vector>

using namespace seal;
using namespace std;

namespace
{
    // The words of a ciphertext. `const` forces the read-only data(), which downloads a
    // device-newer ciphertext first; the mutable overload would mark the host newer.
    vector<uint64_t> words_of(const Ciphertext &ct)
    {
        const size_t count = ct.size() * ct.poly_modulus_degree() * ct.coeff_modulus_size();
        const uint64_t *data = ct.data();
        return vector<uint64_t>(data, data + count);
    }

    // Compares everything that makes two ciphertexts equal: metadata and every word. Prints
    // one line and returns whether they are identical.
    bool same_ciphertext(const string &name, const Ciphertext &gpu, const Ciphertext &cpu)
    {
        if (!gpu.on_gpu() || cpu.on_gpu())
        {
            cout << name << ": the GPU ciphertext is not marked or the CPU one is (routing broken)\n";
            return false;
        }
        if (gpu.parms_id() != cpu.parms_id() || gpu.size() != cpu.size() ||
            gpu.coeff_modulus_size() != cpu.coeff_modulus_size() || gpu.is_ntt_form() != cpu.is_ntt_form() ||
            gpu.scale() != cpu.scale() || gpu.correction_factor() != cpu.correction_factor())
        {
            cout << name << ": metadata differs (size " << gpu.size() << " vs " << cpu.size() << ", moduli "
                 << gpu.coeff_modulus_size() << " vs " << cpu.coeff_modulus_size() << ", scale " << gpu.scale()
                 << " vs " << cpu.scale() << ")\n";
            return false;
        }
        const vector<uint64_t> g = words_of(gpu);
        const vector<uint64_t> c = words_of(cpu);
        const auto first = mismatch(g.begin(), g.end(), c.begin());
        if (first.first != g.end())
        {
            const size_t at = static_cast<size_t>(first.first - g.begin());
            const size_t differing = static_cast<size_t>(
                inner_product(g.begin(), g.end(), c.begin(), size_t{ 0 }, plus<size_t>(), not_equal_to<uint64_t>()));
            cout << name << ": " << differing << " of " << g.size() << " words differ, first at word " << at
                 << " (GPU " << *first.first << ", CPU " << *first.second << ")\n";
            return false;
        }
        cout << name << ": " << g.size() << " words identical (size " << gpu.size() << ", "
             << gpu.coeff_modulus_size() << " moduli)\n";
        return true;
    }

    double max_abs_error(const vector<double> &got, const vector<double> &want)
    {
        double worst = 0;
        for (size_t i = 0; i < got.size(); i++)
        {
            worst = max(worst, fabs(got[i] - want[i]));
        }
        return worst;
    }

    int run()
    {
        // The parameters of SEAL's CKKS examples and of the XeHE paper's first measurements.
        EncryptionParameters parms(scheme_type::ckks);
        const size_t poly_modulus_degree = 8192;
        parms.set_poly_modulus_degree(poly_modulus_degree);
        parms.set_coeff_modulus(CoeffModulus::Create(poly_modulus_degree, { 60, 40, 40, 60 }));
        const double scale = pow(2.0, 40);
        SEALContext context(parms);

        KeyGenerator keygen(context);
        const SecretKey &secret_key = keygen.secret_key();
        PublicKey public_key;
        keygen.create_public_key(public_key);
        RelinKeys relin_keys;
        keygen.create_relin_keys(relin_keys);
        // Only the key for a rotation by one slot: all keys would triple the key generation.
        GaloisKeys galois_keys;
        keygen.create_galois_keys(vector<int>{ 1 }, galois_keys);

        Encryptor encryptor(context, public_key);
        Evaluator evaluator(context);
        Decryptor decryptor(context, secret_key);
        CKKSEncoder encoder(context);
        const size_t slots = encoder.slot_count();

        vector<double> x(slots), y(slots), z(slots);
        for (size_t i = 0; i < slots; i++)
        {
            x[i] = static_cast<double>(i) / static_cast<double>(slots);
            y[i] = 1.0 - 0.5 * x[i];
            z[i] = 0.25 + x[i] * x[i];
        }
        Plaintext px, py, pz;
        encoder.encode(x, scale, px);
        encoder.encode(y, scale, py);
        encoder.encode(z, scale, pz);
        // Encryption is the only random step, so it happens once and both paths start from
        // the same words.
        Ciphertext encrypted1, encrypted2, encrypted3;
        encryptor.encrypt(px, encrypted1);
        encryptor.encrypt(py, encrypted2);
        encryptor.encrypt(pz, encrypted3);

        // CPU path (Listing 1, lines 26-42): unmarked copies.
        Ciphertext cpu1(encrypted1), cpu2(encrypted2), cpu3(encrypted3);
        Ciphertext cpu_tmp, cpu_rot;
        evaluator.multiply_inplace(cpu1, cpu2);
        evaluator.relinearize_inplace(cpu1, relin_keys);
        evaluator.rescale_to_next_inplace(cpu1);
        evaluator.mod_switch_to_inplace(cpu3, cpu1.parms_id());
        // After the rescale the product's scale is 2^80 / q_2, close to but not exactly 2^40;
        // SEAL's examples align the addend's scale by assignment, as here.
        cpu3.scale() = cpu1.scale();
        evaluator.add(cpu1, cpu3, cpu_tmp);
        evaluator.rotate_vector(cpu_tmp, 1, galois_keys, cpu_rot);

        // GPU path (Listing 1, lines 42-83). xe2 becomes marked as an operand of a routed
        // multiply, xe_tmp and xe_rot as destinations of routed operations. xe3 is marked
        // explicitly: it is the only operand of its mod_switch, which would otherwise run on
        // the CPU.
        seal_opencl::install_backend();
        Ciphertext xe1(encrypted1), xe2(encrypted2), xe3(encrypted3);
        Ciphertext xe_tmp, xe_rot;
        xe1.gpu();
        xe3.gpu();
        evaluator.multiply_inplace(xe1, xe2);
        evaluator.relinearize_inplace(xe1, relin_keys);
        evaluator.rescale_to_next_inplace(xe1);
        evaluator.mod_switch_to_inplace(xe3, xe1.parms_id());
        xe3.scale() = xe1.scale();
        evaluator.add(xe1, xe3, xe_tmp);
        evaluator.rotate_vector(xe_tmp, 1, galois_keys, xe_rot);

        // Host reads: each one downloads and waits for the device (the sync point).
        bool identical = true;
        identical &= same_ciphertext("multiply+relinearize+rescale", xe1, cpu1);
        identical &= same_ciphertext("mod_switch (addend)", xe3, cpu3);
        identical &= same_ciphertext("add", xe_tmp, cpu_tmp);
        identical &= same_ciphertext("rotate_vector(1)", xe_rot, cpu_rot);

        // Decryption and decoding always run on the host (Listing 1, lines 79-83).
        vector<double> want_sum(slots), want_rot(slots);
        for (size_t i = 0; i < slots; i++)
        {
            want_sum[i] = x[i] * y[i] + z[i];
        }
        for (size_t i = 0; i < slots; i++)
        {
            want_rot[i] = want_sum[(i + 1) % slots];
        }
        struct Check
        {
            const char *name;
            const Ciphertext &gpu;
            const Ciphertext &cpu;
            const vector<double> &want;
        };
        for (const Check &check : { Check{ "x*y+z", xe_tmp, cpu_tmp, want_sum }, Check{ "rotated", xe_rot, cpu_rot, want_rot } })
        {
            Plaintext gpu_plain, cpu_plain;
            decryptor.decrypt(check.gpu, gpu_plain);
            decryptor.decrypt(check.cpu, cpu_plain);
            vector<double> gpu_values, cpu_values;
            encoder.decode(gpu_plain, gpu_values);
            encoder.decode(cpu_plain, cpu_values);
            const bool same_values = gpu_values == cpu_values;
            // 1e-3 is far above CKKS noise at scale 2^40 (about 1e-7 here) and far below the
            // size of any wrong result.
            const double error = max_abs_error(gpu_values, check.want);
            cout << "decrypted " << check.name << ": GPU " << (same_values ? "==" : "!=")
                 << " CPU, max |error| vs plain arithmetic " << error << "\n";
            identical &= same_values && error < 1e-3;
        }

        seal_opencl::uninstall_backend();
        if (identical)
        {
            cout << "RESULT: GPU and CPU ciphertexts are identical word for word\n";
            return 0;
        }
        cout << "RESULT: MISMATCH between the GPU and CPU results\n";
        return 1;
    }
} // namespace

int main()
{
    try
    {
        return run();
    }
    catch (const exception &e)
    {
        cout << "RESULT: ERROR: " << e.what() << "\n";
        return 2;
    }
}
