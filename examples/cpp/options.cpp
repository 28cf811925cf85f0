// Installing the backend with options set in code (seal_opencl::Options) instead of the
// environment's SEAL_OPENCL_* variables:
// - a value that does not parse is std::invalid_argument naming its setting, and nothing is
//   installed;
// - the options take effect: with `crosscheck = 1` every routed operation is also run on SEAL's
//   CPU path and compared word for word;
// - installing with options while a backend is installed is std::logic_error.
//
// Exit status: 0 when each of these holds, 1 when one does not, 2 on an unexpected error.

#include "seal/seal.h"
#include "seal_opencl.h"

#include <cstdint>
#include <exception>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace seal;
using namespace std;

namespace
{
    bool check(bool holds, const string &what)
    {
        cout << (holds ? "ok:   " : "FAIL: ") << what << "\n";
        return holds;
    }

    bool installed()
    {
        try
        {
            seal_opencl::device_count();
            return true;
        }
        catch (const logic_error &)
        {
            return false;
        }
    }
} // namespace

int main()
{
    try
    {
        bool ok = true;

        seal_opencl::Options bad;
        bad.queues = 0;
        try
        {
            seal_opencl::install_backend(bad);
            ok &= check(false, "queues = 0 is refused");
        }
        catch (const invalid_argument &e)
        {
            ok &= check(string(e.what()).find("SEAL_OPENCL_QUEUES") != string::npos, "queues = 0 is "
                        "invalid_argument naming SEAL_OPENCL_QUEUES: " + string(e.what()));
        }
        ok &= check(!installed(), "a refused install leaves no backend");

        // Every field set, each to a value that keeps the default behaviour but `queues` and
        // `crosscheck`, so that each name the header passes is one the backend knows.
        seal_opencl::Options options;
        options.device = "";
        options.devices = "all";
        options.queues = 3;
        options.max_bytes = 1ull << 40;
        options.max_key_bytes = 1ull << 40;
        options.max_pinned_bytes = 1ull << 30;
        options.log = "warn";
        options.profile = "";
        options.crosscheck = 1;
        options.check_transparent = "deferred";
        options.poison = "0";
        options.sync = false;
        seal_opencl::install_backend(options);
        ok &= check(installed(), "install_backend(options) installs");
        try
        {
            seal_opencl::install_backend(options);
            ok &= check(false, "a second install with options is refused");
        }
        catch (const logic_error &)
        {
            ok &= check(true, "a second install with options is logic_error");
        }

        EncryptionParameters parms(scheme_type::ckks);
        parms.set_poly_modulus_degree(4096);
        parms.set_coeff_modulus(CoeffModulus::Create(4096, { 36, 30, 36 }));
        SEALContext context(parms);
        KeyGenerator keygen(context);
        RelinKeys relin_keys;
        keygen.create_relin_keys(relin_keys);
        PublicKey public_key;
        keygen.create_public_key(public_key);
        CKKSEncoder encoder(context);
        Encryptor encryptor(context, public_key);
        Evaluator evaluator(context);
        Plaintext plain;
        encoder.encode(vector<double>(encoder.slot_count(), 0.5), static_cast<double>(1ull << 30), plain);
        Ciphertext x;
        encryptor.encrypt(plain, x);
        x.gpu();

        const uint64_t before = seal_opencl::crosscheck_checks();
        Ciphertext square;
        evaluator.square(x, square);
        evaluator.relinearize_inplace(square, relin_keys);
        evaluator.rescale_to_next_inplace(square);
        ok &= check(seal_opencl::crosscheck_checks() >= before + 3,
                    "crosscheck = 1 compared every routed operation (" +
                        to_string(seal_opencl::crosscheck_checks() - before) + " of 3)");
        ok &= check(seal_opencl::crosscheck_mismatches() == 0, "every device result equals SEAL's");

        seal_opencl::uninstall_backend();
        cout << (ok ? "RESULT: install_backend(options) behaves as documented\n" : "RESULT: FAILED\n");
        return ok ? 0 : 1;
    }
    catch (const exception &e)
    {
        cerr << "error: " << e.what() << "\n";
        return 2;
    }
}
