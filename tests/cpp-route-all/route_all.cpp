// A CKKS program that never mentions the GPU, run with SEAL_GPU_ROUTE_ALL=1: the patched SEAL
// installs the linked default backend (seal-opencl's) at the first routed call. What the
// program can observe of that, by mode:
//
//   route_all threads    8 threads make their first routed calls at once: exactly one backend
//                        gets installed, and every thread's result decrypts to x^2.
//   route_all no-device  run with a SEAL_OPENCL_DEVICE that names no device: the first routed
//                        call throws std::runtime_error, nothing is installed, the operand is
//                        unchanged, and the process lives; the next routed call tries again
//                        (and throws again).
//
// Prints "RESULT: ..." and exits 0 when every check holds. Run it with SEAL_OPENCL_CROSSCHECK=1
// and every routed result is also compared with SEAL's CPU result, word for word.

#include "seal/seal.h"

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace seal;
using namespace std;

namespace
{
    int fail(const string &what)
    {
        cerr << "FAILED: " << what << endl;
        return 1;
    }

    struct Setup
    {
        SEALContext context;
        KeyGenerator keygen;
        SecretKey secret_key;
        PublicKey public_key;
        RelinKeys relin_keys;
        double scale = pow(2.0, 30);

        explicit Setup(const EncryptionParameters &parms)
            : context(parms), keygen(context), secret_key(keygen.secret_key())
        {
            keygen.create_public_key(public_key);
            keygen.create_relin_keys(relin_keys);
        }

        Ciphertext encrypt(double value) const
        {
            Plaintext plain;
            CKKSEncoder(context).encode(value, scale, plain);
            Ciphertext encrypted;
            Encryptor(context, public_key).encrypt(plain, encrypted);
            return encrypted;
        }

        double decrypt(const Ciphertext &encrypted) const
        {
            Plaintext plain;
            Decryptor(context, secret_key).decrypt(encrypted, plain);
            vector<double> values;
            CKKSEncoder(context).decode(plain, values);
            return values[0];
        }
    };

    EncryptionParameters parameters()
    {
        EncryptionParameters parms(scheme_type::ckks);
        parms.set_poly_modulus_degree(8192);
        parms.set_coeff_modulus(CoeffModulus::Create(8192, { 50, 30, 30, 50 }));
        return parms;
    }

    int threads(const Setup &setup)
    {
        if (gpu::backend_installed())
        {
            return fail("a backend was installed before any routed call");
        }
        constexpr int count = 8;
        vector<double> results(count);
        vector<shared_ptr<gpu::Backend>> backends(count);
        vector<string> errors(count);
        vector<thread> workers;
        for (int t = 0; t < count; t++)
        {
            workers.emplace_back([&, t] {
                try
                {
                    Evaluator evaluator(setup.context);
                    Ciphertext x = setup.encrypt(1.0 + t);
                    if (!x.on_gpu())
                    {
                        throw logic_error("a new ciphertext is not marked under SEAL_GPU_ROUTE_ALL=1");
                    }
                    evaluator.square_inplace(x);
                    evaluator.relinearize_inplace(x, setup.relin_keys);
                    evaluator.rescale_to_next_inplace(x);
                    backends[t] = gpu::backend();
                    results[t] = setup.decrypt(x);
                }
                catch (const exception &e)
                {
                    errors[t] = e.what();
                }
            });
        }
        for (auto &w : workers)
        {
            w.join();
        }
        set<gpu::Backend *> installed;
        for (int t = 0; t < count; t++)
        {
            if (!errors[t].empty())
            {
                return fail("thread " + to_string(t) + ": " + errors[t]);
            }
            double expected = (1.0 + t) * (1.0 + t);
            if (fabs(results[t] - expected) > 1e-3)
            {
                return fail(
                    "thread " + to_string(t) + " decrypted " + to_string(results[t]) + ", expected " +
                    to_string(expected));
            }
            installed.insert(backends[t].get());
        }
        if (installed.size() != 1 || *installed.begin() == nullptr)
        {
            return fail(to_string(installed.size()) + " distinct backends seen by the threads");
        }
        cout << "RESULT: one backend installed by the first routed calls of " << count
             << " threads; every result right" << endl;
        return 0;
    }

    int no_device(const Setup &setup)
    {
        Evaluator evaluator(setup.context);
        Ciphertext x = setup.encrypt(3.0);
        if (!x.on_gpu())
        {
            return fail("a new ciphertext is not marked under SEAL_GPU_ROUTE_ALL=1");
        }
        const Ciphertext before = x;
        for (int attempt = 0; attempt < 2; attempt++)
        {
            try
            {
                evaluator.square_inplace(x);
                return fail("square_inplace returned without a device");
            }
            catch (const runtime_error &e)
            {
                cout << "attempt " << attempt << ": std::runtime_error: " << e.what() << endl;
            }
            if (gpu::backend_installed())
            {
                return fail("a backend is installed after a failed install");
            }
        }
        if (x.size() != before.size() || !equal(x.data(), x.data() + x.dyn_array().size(), before.data()))
        {
            return fail("the operand changed in the failed call");
        }
        // Decryption needs no device: it never installs one.
        double value = setup.decrypt(x);
        if (fabs(value - 3.0) > 1e-3)
        {
            return fail("decrypted " + to_string(value) + " after the failed call, expected 3");
        }
        cout << "RESULT: a failed install is the routed call's std::runtime_error; the operand is intact"
             << endl;
        return 0;
    }
} // namespace

int main(int argc, char **argv)
{
    string mode = argc > 1 ? argv[1] : "";
    try
    {
        Setup setup(parameters());
        if (mode == "threads")
        {
            return threads(setup);
        }
        if (mode == "no-device")
        {
            return no_device(setup);
        }
        cerr << "usage: route_all threads|no-device" << endl;
        return 2;
    }
    catch (const exception &e)
    {
        return fail(string("unexpected exception: ") + e.what());
    }
}
