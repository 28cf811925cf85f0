// SEAL's BFV and BGV operations run twice from the same inputs: on host copies (SEAL's CPU path,
// the oracle) and on marked copies (routed to the installed backend). See testkit/src/integer.rs.

#include "seal-opencl-testkit/cpp/integer.h"
#include "seal-opencl-testkit/src/integer.rs.h"

#include "seal/seal.h"
#include "seal/gpu/access.h"

#include <functional>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

using namespace seal;
using namespace std;

namespace seal_opencl_testkit
{
    namespace
    {
        // What one operation reads and writes: a and b two fresh ciphertexts, p a plaintext in
        // coefficient form, p_ntt the same in NTT form at a's level, p_mono a monomial with an
        // upper-half coefficient (SEAL's monomial shortcut), p_short three coefficients, p_zero
        // all zero; the result is a.
        struct Operands
        {
            Ciphertext a;
            Ciphertext b;
            Plaintext p;
            Plaintext p_ntt;
            Plaintext p_mono;
            Plaintext p_short;
            Plaintext p_zero;
        };

        using Op = function<void(Evaluator &, Operands &)>;

        Plaintext random_plain(size_t n, uint64_t t, mt19937_64 &rng)
        {
            Plaintext p(n);
            for (size_t i = 0; i < n; i++)
            {
                p[i] = rng() % t;
            }
            return p;
        }

        // The metadata a result carries besides its words.
        string metadata(const Ciphertext &x)
        {
            return "parms_id " + to_string(x.parms_id()[0]) + ", size " + to_string(x.size()) + ", NTT form " +
                   to_string(x.is_ntt_form()) + ", correction factor " + to_string(x.correction_factor()) +
                   ", scale " + to_string(x.scale());
        }

        // The first index where the words differ, or -1.
        int64_t first_difference(const Ciphertext &x, const Ciphertext &y)
        {
            if (x.dyn_array().size() != y.dyn_array().size())
            {
                return 0;
            }
            for (size_t i = 0; i < x.dyn_array().size(); i++)
            {
                if (x.dyn_array()[i] != y.dyn_array()[i])
                {
                    return static_cast<int64_t>(i);
                }
            }
            return -1;
        }

        // The exception `f` throws, as "type: message", or "" when it returns.
        template <class F>
        rust::String error_of(F &&f)
        {
            try
            {
                f();
            }
            catch (const invalid_argument &e)
            {
                return rust::String(string("invalid_argument: ") + e.what());
            }
            catch (const logic_error &e)
            {
                return rust::String(string("logic_error: ") + e.what());
            }
            catch (const exception &e)
            {
                return rust::String(string("exception: ") + e.what());
            }
            return rust::String();
        }

    } // namespace

    rust::Vec<IntegerOutcome> integer_operations(const IntegerCase &c)
    {
        scheme_type scheme = c.bgv ? scheme_type::bgv : scheme_type::bfv;
        EncryptionParameters parms(scheme);
        size_t n = size_t(1) << c.log_n;
        parms.set_poly_modulus_degree(n);
        parms.set_coeff_modulus(
            CoeffModulus::Create(n, vector<int>(c.coeff_bits.begin(), c.coeff_bits.end())));
        parms.set_plain_modulus(PlainModulus::Batching(n, c.plain_bits));
        SEALContext context(parms, true, sec_level_type::none);
        if (!context.parameters_set())
        {
            throw invalid_argument(string("SEAL rejected the parameters: ") + context.parameter_error_message());
        }
        uint64_t t = parms.plain_modulus().value();

        KeyGenerator keygen(context);
        PublicKey public_key;
        keygen.create_public_key(public_key);
        RelinKeys relin_keys;
        keygen.create_relin_keys(relin_keys);
        GaloisKeys galois_keys;
        keygen.create_galois_keys(vector<int>{ 0, 1, -1, 3 }, galois_keys);
        Encryptor encryptor(context, public_key);
        Evaluator evaluator(context);
        mt19937_64 rng(c.seed);

        Operands base;
        encryptor.encrypt(random_plain(n, t, rng), base.a);
        encryptor.encrypt(random_plain(n, t, rng), base.b);
        base.p = random_plain(n, t, rng);
        evaluator.transform_to_ntt(base.p, base.a.parms_id(), base.p_ntt);
        base.p_mono = Plaintext(n);
        base.p_mono[n / 3] = t - 1;
        base.p_short = random_plain(3, t, rng);
        base.p_zero = Plaintext(n);

        // A fresh ciphertext is in coefficient form in BFV, and in BGV up to SEAL 4.0; in NTT form
        // in BGV from SEAL 4.1 on.
        const bool ntt = base.a.is_ntt_form();
        auto to_ntt = [ntt](Evaluator &e, Ciphertext &x) {
            if (!ntt)
            {
                e.transform_to_ntt_inplace(x);
            }
        };
        vector<pair<string, Op>> ops = {
            { "negate", [](Evaluator &e, Operands &o) { e.negate_inplace(o.a); } },
            { "add", [](Evaluator &e, Operands &o) { e.add_inplace(o.a, o.b); } },
            { "sub", [](Evaluator &e, Operands &o) { e.sub_inplace(o.a, o.b); } },
            { "add to itself", [](Evaluator &e, Operands &o) { e.add_inplace(o.a, o.a); } },
            { "sub from itself", [](Evaluator &e, Operands &o) { e.sub_inplace(o.a, o.a); } },
            { "transform_from_ntt then transform_to_ntt",
              [ntt](Evaluator &e, Operands &o) {
                  if (ntt)
                  {
                      e.transform_from_ntt_inplace(o.a);
                  }
                  else
                  {
                      e.transform_to_ntt_inplace(o.a);
                      e.transform_from_ntt_inplace(o.a);
                      e.transform_to_ntt_inplace(o.a);
                  }
              } },
            { "multiply_plain (NTT form)",
              [to_ntt](Evaluator &e, Operands &o) {
                  to_ntt(e, o.a);
                  e.multiply_plain_inplace(o.a, o.p_ntt);
              } },
            { "multiply_plain (NTT form), then add",
              [to_ntt](Evaluator &e, Operands &o) {
                  to_ntt(e, o.a);
                  to_ntt(e, o.b);
                  e.multiply_plain_inplace(o.a, o.p_ntt);
                  e.add_inplace(o.a, o.b);
              } },
        };
        // A plaintext in coefficient form: BFV lifts it (and so does SEAL 4.0's BGV); SEAL 4.1's
        // BGV transforms it on the CPU, then multiplies in NTT form.
        ops.push_back({ "multiply_plain", [](Evaluator &e, Operands &o) { e.multiply_plain_inplace(o.a, o.p); } });
        ops.push_back({ "multiply_plain by a monomial",
                        [](Evaluator &e, Operands &o) { e.multiply_plain_inplace(o.a, o.p_mono); } });
        ops.push_back({ "multiply_plain by three coefficients",
                        [](Evaluator &e, Operands &o) { e.multiply_plain_inplace(o.a, o.p_short); } });
        ops.push_back({ "multiply_plain by zero (transparent)",
                        [](Evaluator &e, Operands &o) { e.multiply_plain_inplace(o.a, o.p_zero); } });
        // Key switching and modulus switching, each in the scheme's form.
        const RelinKeys *rk = &relin_keys;
        const GaloisKeys *gk = &galois_keys;
        ops.push_back({ "relinearize (the product on the CPU for BFV)",
                        [rk](Evaluator &e, Operands &o) {
                            e.multiply_inplace(o.a, o.b);
                            e.relinearize_inplace(o.a, *rk);
                        } });
        ops.push_back({ "rotate_rows by 1, -1 and 3", [gk](Evaluator &e, Operands &o) {
                           e.rotate_rows_inplace(o.a, 1, *gk);
                           e.rotate_rows_inplace(o.a, -1, *gk);
                           e.rotate_rows_inplace(o.a, 3, *gk);
                       } });
        ops.push_back({ "rotate_columns", [gk](Evaluator &e, Operands &o) { e.rotate_columns_inplace(o.a, *gk); } });
        ops.push_back({ "mod_switch_to_next", [](Evaluator &e, Operands &o) { e.mod_switch_to_next_inplace(o.a); } });
        ops.push_back({ "mod_switch_to_next into another ciphertext, then rotate_rows and add",
                        [gk](Evaluator &e, Operands &o) {
                            Ciphertext next;
                            e.mod_switch_to_next(o.a, next);
                            e.rotate_rows_inplace(next, 1, *gk);
                            e.mod_switch_to_next_inplace(o.b);
                            e.add(next, o.b, o.a);
                        } });
        // BFV's add_plain and sub_plain scale the plaintext by q / t.
        if (!c.bgv)
        {
            ops.push_back({ "add_plain", [](Evaluator &e, Operands &o) { e.add_plain_inplace(o.a, o.p); } });
            ops.push_back({ "sub_plain", [](Evaluator &e, Operands &o) { e.sub_plain_inplace(o.a, o.p); } });
            ops.push_back({ "add_plain of three coefficients, then sub_plain",
                            [](Evaluator &e, Operands &o) {
                                e.add_plain_inplace(o.a, o.p_short);
                                e.sub_plain_inplace(o.a, o.p_mono);
                            } });
            ops.push_back({ "add_plain of zero", [](Evaluator &e, Operands &o) { e.add_plain_inplace(o.a, o.p_zero); } });
        }
        // BGV's tensor product in NTT form (SEAL 4.1 on; SEAL 4.0 multiplies coefficient-form
        // ciphertexts through NTTs of its own, which stays on the CPU).
        if (c.bgv && ntt)
        {
            ops.push_back({ "multiply", [](Evaluator &e, Operands &o) { e.multiply_inplace(o.a, o.b); } });
            ops.push_back({ "square", [](Evaluator &e, Operands &o) { e.square_inplace(o.a); } });
            ops.push_back({ "multiply of sizes 3 and 2",
                            [](Evaluator &e, Operands &o) {
                                e.square_inplace(o.a);
                                e.multiply_inplace(o.a, o.b);
                            } });
            ops.push_back({ "square of size 3",
                            [](Evaluator &e, Operands &o) {
                                e.multiply_inplace(o.a, o.b);
                                e.square_inplace(o.a);
                            } });
        }

        rust::Vec<IntegerOutcome> outcomes;
        for (auto &[name, op] : ops)
        {
            Operands cpu = base;
            Operands dev = base;
            dev.a.gpu();
            dev.b.gpu();
            IntegerOutcome outcome;
            outcome.operation = name;
            outcome.cpu_error = error_of([&] { op(evaluator, cpu); });
            outcome.device_error = error_of([&] { op(evaluator, dev); });
            outcome.routed = gpu::Access::residency(dev.a) == gpu::Residency::device_newer;
            outcome.cpu_metadata = metadata(cpu.a);
            outcome.device_metadata = metadata(dev.a);
            outcome.first_difference = first_difference(cpu.a, dev.a);
            outcomes.push_back(move(outcome));
        }
        return outcomes;
    }
} // namespace seal_opencl_testkit
