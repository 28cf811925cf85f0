// BFV and BGV through SEAL's C++ API, synchronized: each operation of issue 40's speed lines on
// SEAL's CPU path (one thread) and routed to the backend (the call, then a synchronization),
// with SEAL's default BFV primes (CoeffModulus::BFVDefault) and a 20-bit batching plain modulus
// at N = 2^log_n. Every routed result is compared word for word with SEAL's CPU result.
//
//   integer_path [--log-n 15] [--reps 100] [--json PATH]
//
// Medians over `reps` calls after 3 warm-up calls (programs, keys, pools); the CPU path runs
// min(reps, 20) calls. The device operands are resident before the clock starts.

#include "bench_common.h"

#include <functional>
#include <iomanip>
#include <iostream>
#include <random>
#include <sstream>

using namespace std;
using namespace seal;
using namespace bench;

namespace
{
    void synchronize()
    {
        gpu::require_backend("integer_path")->synchronize();
    }

    // One scheme's parameter set with its keys and inputs: two ciphertexts, a plaintext in
    // coefficient form and the same in NTT form.
    struct Fixture
    {
        Fixture(scheme_type scheme, int log_n)
            : context(parameters(scheme, log_n), true, sec_level_type::tc128), keygen(context)
        {
            keygen.create_public_key(public_key);
            keygen.create_relin_keys(relin_keys);
            keygen.create_galois_keys(vector<int>{ 1 }, galois_keys);
            Encryptor encryptor(context, public_key);
            const size_t n = context.first_context_data()->parms().poly_modulus_degree();
            const uint64_t t = context.first_context_data()->parms().plain_modulus().value();
            mt19937_64 rng(1);
            auto random_plain = [&] {
                Plaintext p(n);
                for (size_t i = 0; i < n; i++)
                {
                    p[i] = rng() % t;
                }
                return p;
            };
            encryptor.encrypt(random_plain(), a);
            encryptor.encrypt(random_plain(), b);
            plain = random_plain();
            Evaluator(context).transform_to_ntt(plain, a.parms_id(), plain_ntt);
        }

        static EncryptionParameters parameters(scheme_type scheme, int log_n)
        {
            EncryptionParameters parms(scheme);
            const size_t n = size_t(1) << log_n;
            parms.set_poly_modulus_degree(n);
            parms.set_coeff_modulus(CoeffModulus::BFVDefault(n));
            parms.set_plain_modulus(PlainModulus::Batching(n, 20));
            return parms;
        }

        SEALContext context;
        KeyGenerator keygen;
        PublicKey public_key;
        RelinKeys relin_keys;
        GaloisKeys galois_keys;
        Ciphertext a, b;
        Plaintext plain, plain_ntt;
    };

    // An operation: `prepare` makes its input from a (on whichever path the input is marked
    // for), `call` is what the clock times, with b, the plaintexts and the keys as operands;
    // its time is reported per term where it makes `terms` calls of the same kind.
    struct Op
    {
        string name;
        function<void(const Fixture &, Evaluator &, Ciphertext &)> prepare;
        function<void(const Fixture &, Evaluator &, Ciphertext &, const Ciphertext &, const Plaintext &, const Plaintext &)>
            call;
        int terms = 1;
    };

    struct Result
    {
        string scheme, name;
        double cpu_us, gpu_us;
        bool identical;
    };

    Result measure(const string &scheme, const Fixture &f, const Op &op, int reps)
    {
        Evaluator ev(f.context);
        Ciphertext source = f.a;
        op.prepare(f, ev, source);
        // SEAL's CPU path: nothing here is marked.
        Ciphertext want;
        vector<double> cpu;
        for (int r = 0; r < min(reps, 20) + 1; r++)
        {
            want = source;
            auto t0 = Clock::now();
            op.call(f, ev, want, f.b, f.plain, f.plain_ntt);
            auto t1 = Clock::now();
            if (r >= 1)
            {
                cpu.push_back(us_since(t0, t1));
            }
        }
        // The routed path: operands resident before the clock starts.
        Ciphertext device_source = source, device_b = f.b;
        Plaintext device_plain = f.plain, device_plain_ntt = f.plain_ntt;
        device_source.gpu();
        device_b.gpu();
        device_plain.gpu();
        device_plain_ntt.gpu();
        Ciphertext x;
        vector<double> gpu;
        for (int r = 0; r < reps + 3; r++)
        {
            x = device_source;
            synchronize();
            auto t0 = Clock::now();
            op.call(f, ev, x, device_b, device_plain, device_plain_ntt);
            synchronize();
            auto t1 = Clock::now();
            if (r >= 3)
            {
                gpu.push_back(us_since(t0, t1));
            }
        }
        return { scheme, op.name, median(cpu) / op.terms, median(gpu) / op.terms, words_of(x) == words_of(want) };
    }

    // The terms of the timed database product.
    constexpr int SUM_TERMS = 64;

    vector<Op> operations(bool bgv)
    {
        auto keep = [](const Fixture &, Evaluator &, Ciphertext &) {};
        auto product = [](const Fixture &f, Evaluator &ev, Ciphertext &x) { ev.multiply_inplace(x, f.b); };
        // BFV multiplies plaintexts into NTT-form ciphertexts; BGV's are in NTT form already.
        auto ntt = [](const Fixture &, Evaluator &ev, Ciphertext &x) {
            if (!x.is_ntt_form())
            {
                ev.transform_to_ntt_inplace(x);
            }
        };
        vector<Op> ops = {
            { "multiply + relinearize", keep,
              [](const Fixture &f, Evaluator &ev, Ciphertext &x, const Ciphertext &b, const Plaintext &,
                 const Plaintext &) {
                  ev.multiply_inplace(x, b);
                  ev.relinearize_inplace(x, f.relin_keys);
              } },
            { "relinearize", product,
              [](const Fixture &f, Evaluator &ev, Ciphertext &x, const Ciphertext &, const Plaintext &,
                 const Plaintext &) { ev.relinearize_inplace(x, f.relin_keys); } },
            { "rotate_rows by 1", keep,
              [](const Fixture &f, Evaluator &ev, Ciphertext &x, const Ciphertext &, const Plaintext &,
                 const Plaintext &) { ev.rotate_rows_inplace(x, 1, f.galois_keys); } },
            // A product in NTT form and the adds into an accumulator wait for what consumes
            // them (SEAL_OPENCL_DEFER_MULTIPLY): a lone multiply_plain or add launches
            // nothing. So the clock times SealPIR's database product as its server runs it,
            // SUM_TERMS products each added into one accumulator, then a negate that uses
            // the sum (on the device it runs the sum: ceil(SUM_TERMS / 8) launches, then
            // its own), and reports the time per term.
            { "multiply_plain (NTT form) + add, per term of 64", ntt,
              [](const Fixture &, Evaluator &ev, Ciphertext &x, const Ciphertext &, const Plaintext &,
                 const Plaintext &p_ntt) {
                  Ciphertext acc, product;
                  ev.multiply_plain(x, p_ntt, acc);
                  for (int i = 1; i < SUM_TERMS; i++)
                  {
                      ev.multiply_plain(x, p_ntt, product);
                      ev.add_inplace(acc, product);
                  }
                  ev.negate_inplace(acc);
                  x = acc;
              },
              SUM_TERMS },
            { "mod_switch_to_next", keep,
              [](const Fixture &, Evaluator &ev, Ciphertext &x, const Ciphertext &, const Plaintext &,
                 const Plaintext &) { ev.mod_switch_to_next_inplace(x); } },
        };
        if (!bgv)
        {
            ops.push_back({ "multiply_plain (coefficient form)", keep,
                            [](const Fixture &, Evaluator &ev, Ciphertext &x, const Ciphertext &,
                               const Plaintext &p, const Plaintext &) { ev.multiply_plain_inplace(x, p); } });
            ops.push_back({ "add_plain", keep,
                            [](const Fixture &, Evaluator &ev, Ciphertext &x, const Ciphertext &,
                               const Plaintext &p, const Plaintext &) { ev.add_plain_inplace(x, p); } });
        }
        return ops;
    }

    int run(const Params &p)
    {
        seal_opencl::install_backend();
        cout << "device: " << device_name() << "\nN = 2^" << p.log_n
             << ", CoeffModulus::BFVDefault, 20-bit batching plain modulus, " << p.reps
             << " synchronized calls per GPU figure (medians), SEAL's CPU path on one thread\n\n";
        cout << left << setw(6) << "scheme" << setw(36) << "operation" << right << setw(12) << "CPU us"
             << setw(12) << "GPU us" << setw(10) << "CPU/GPU" << "  identical\n";
        vector<Result> results;
        bool all_identical = true;
        for (auto [name, scheme] : { pair{ "BFV", scheme_type::bfv }, pair{ "BGV", scheme_type::bgv } })
        {
            Fixture f(scheme, p.log_n);
            for (const auto &op : operations(scheme == scheme_type::bgv))
            {
                Result r = measure(name, f, op, p.reps);
                all_identical = all_identical && r.identical;
                cout << left << setw(6) << r.scheme << setw(36) << r.name << right << fixed << setprecision(1)
                     << setw(12) << r.cpu_us << setw(12) << r.gpu_us << setw(9) << r.cpu_us / r.gpu_us << "x  "
                     << (r.identical ? "yes" : "NO") << "\n";
                results.push_back(r);
            }
        }
        ostringstream json;
        json << "{\n  \"bench\": \"integer_path\",\n  \"device\": \"" << device_name() << "\",\n  \"date\": \""
             << today() << "\",\n  " << settings_json() << ",\n  \"log_n\": " << p.log_n << ",\n  \"reps\": " << p.reps
             << ",\n  \"coeff_modulus\": \"BFVDefault\",\n  \"plain_bits\": 20,\n  \"results\": [\n";
        for (size_t i = 0; i < results.size(); i++)
        {
            const auto &r = results[i];
            json << "    {\"scheme\": \"" << r.scheme << "\", \"operation\": \"" << r.name << "\", \"cpu_us\": " << r.cpu_us
                 << ", \"gpu_us\": " << r.gpu_us << ", \"identical\": " << (r.identical ? "true" : "false") << "}"
                 << (i + 1 < results.size() ? ",\n" : "\n");
        }
        json << "  ]\n}\n";
        const string path = p.json.empty() ? "benches/results/integer_path-" + file_safe(device_name()) + "-2^" +
                                                 to_string(p.log_n) + "-" + today() + ".json"
                                           : p.json;
        return write_results(path, json.str(), all_identical);
    }
} // namespace

int main(int argc, char **argv)
{
    return bench_main(argc, argv, 100, "integer_path [--log-n 15] [--reps 100] [--json PATH]", run);
}
