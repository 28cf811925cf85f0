// SEAL's BFV and BGV operations run twice from the same inputs: on host copies (SEAL's CPU path,
// the oracle) and on marked copies (routed to the installed backend). See testkit/src/integer.rs.

#include "seal-opencl-testkit/cpp/integer.h"
#include "seal-opencl-testkit/src/integer.rs.h"

#include "seal/seal.h"
#include "seal/gpu/access.h"

#include <deque>
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
        // upper-half coefficient (SEAL's monomial shortcut), p_pow X^s (coefficient 1, s = N -
        // N / 3: twice it passes X^N = -1), p_short three coefficients, p_zero all zero; the
        // result is a.
        struct Operands
        {
            Ciphertext a;
            Ciphertext b;
            Plaintext p;
            Plaintext p_ntt;
            Plaintext p_mono;
            Plaintext p_pow;
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

    namespace
    {
        // A parameter set of the case with every key the operations use.
        struct Setup
        {
            explicit Setup(const IntegerCase &c) : context(parameters(c), true, sec_level_type::none)
            {
                if (!context.parameters_set())
                {
                    throw invalid_argument(
                        string("SEAL rejected the parameters: ") + context.parameter_error_message());
                }
                n = context.first_context_data()->parms().poly_modulus_degree();
                t = context.first_context_data()->parms().plain_modulus().value();
                KeyGenerator keygen(context);
                keygen.create_public_key(public_key);
                keygen.create_relin_keys(relin_keys);
                keygen.create_galois_keys(vector<int>{ 0, 1, -1, 3 }, galois_keys);
            }

            static EncryptionParameters parameters(const IntegerCase &c)
            {
                EncryptionParameters parms(c.bgv ? scheme_type::bgv : scheme_type::bfv);
                size_t n = size_t(1) << c.log_n;
                parms.set_poly_modulus_degree(n);
                parms.set_coeff_modulus(
                    CoeffModulus::Create(n, vector<int>(c.coeff_bits.begin(), c.coeff_bits.end())));
                parms.set_plain_modulus(PlainModulus::Batching(n, c.plain_bits));
                return parms;
            }

            SEALContext context;
            size_t n;
            uint64_t t;
            PublicKey public_key;
            RelinKeys relin_keys;
            GaloisKeys galois_keys;
        };
    } // namespace

    rust::Vec<IntegerOutcome> integer_operations(const IntegerCase &c)
    {
        Setup setup(c);
        const size_t n = setup.n;
        const uint64_t t = setup.t;
        const RelinKeys &relin_keys = setup.relin_keys;
        const GaloisKeys &galois_keys = setup.galois_keys;
        Encryptor encryptor(setup.context, setup.public_key);
        Evaluator evaluator(setup.context);
        mt19937_64 rng(c.seed);

        Operands base;
        encryptor.encrypt(random_plain(n, t, rng), base.a);
        encryptor.encrypt(random_plain(n, t, rng), base.b);
        base.p = random_plain(n, t, rng);
        evaluator.transform_to_ntt(base.p, base.a.parms_id(), base.p_ntt);
        base.p_mono = Plaintext(n);
        base.p_mono[n / 3] = t - 1;
        base.p_pow = Plaintext(n);
        base.p_pow[n - n / 3] = 1;
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
            // SealPIR's database product: ciphertexts times NTT-form plaintexts into a
            // temporary, each added (or subtracted) into an accumulator that starts as the
            // first product; 19 terms, more than two launches of a deferred sum.
            { "multiply_plain (NTT form) into a temporary, added into an accumulator, 19 terms",
              [to_ntt](Evaluator &e, Operands &o) {
                  to_ntt(e, o.a);
                  to_ntt(e, o.b);
                  const Ciphertext a = o.a;
                  Plaintext short_ntt;
                  e.transform_to_ntt(o.p_short, o.a.parms_id(), short_ntt);
                  e.multiply_plain_inplace(o.a, o.p_ntt);
                  Ciphertext product;
                  for (int i = 0; i < 19; i++)
                  {
                      e.multiply_plain(i % 2 ? o.b : a, i % 3 ? o.p_ntt : short_ntt, product);
                      if (i % 5 == 4)
                      {
                          e.sub_inplace(o.a, product);
                      }
                      else
                      {
                          e.add_inplace(o.a, product);
                      }
                  }
              } },
            // APSI's inner polynomial: NTT-form products into a temporary, added and
            // subtracted, then back to coefficient form (the inverse transform reads the sum
            // on its loads); a product alone likewise. BGV from SEAL 4.1 on goes back to NTT
            // form after.
            { "multiply_plain (NTT form) of four terms, added and subtracted, then transform_from_ntt",
              [to_ntt, ntt](Evaluator &e, Operands &o) {
                  to_ntt(e, o.a);
                  to_ntt(e, o.b);
                  const Ciphertext a = o.a;
                  Plaintext short_ntt;
                  e.transform_to_ntt(o.p_short, o.a.parms_id(), short_ntt);
                  Ciphertext product;
                  e.multiply_plain(a, o.p_ntt, o.a);
                  e.multiply_plain(o.b, short_ntt, product);
                  e.add_inplace(o.a, product);
                  e.multiply_plain(a, short_ntt, product);
                  e.sub_inplace(o.a, product);
                  e.add_inplace(o.a, o.b);
                  e.transform_from_ntt_inplace(o.a);
                  if (ntt)
                  {
                      e.transform_to_ntt_inplace(o.a);
                  }
              } },
            { "multiply_plain (NTT form), then transform_from_ntt",
              [to_ntt, ntt](Evaluator &e, Operands &o) {
                  to_ntt(e, o.a);
                  e.multiply_plain_inplace(o.a, o.p_ntt);
                  e.transform_from_ntt_inplace(o.a);
                  if (ntt)
                  {
                      e.transform_to_ntt_inplace(o.a);
                  }
              } },
            { "add and sub into an accumulator, 19 terms",
              [](Evaluator &e, Operands &o) {
                  const Ciphertext a = o.a;
                  for (int i = 0; i < 19; i++)
                  {
                      if (i % 4 == 3)
                      {
                          e.sub_inplace(o.a, i % 2 ? o.b : a);
                      }
                      else
                      {
                          e.add_inplace(o.a, i % 2 ? o.b : a);
                      }
                  }
              } },
        };
        // A plaintext in coefficient form: BFV lifts it (and so does SEAL 4.0's BGV); SEAL 4.1's
        // BGV transforms it on the CPU, then multiplies in NTT form.
        ops.push_back({ "multiply_plain", [](Evaluator &e, Operands &o) { e.multiply_plain_inplace(o.a, o.p); } });
        ops.push_back({ "multiply_plain by a monomial",
                        [](Evaluator &e, Operands &o) { e.multiply_plain_inplace(o.a, o.p_mono); } });
        // X^s (coefficient 1): a shift, deferred where the level chains and read on the loads
        // of what takes it, shifted further by another, run on its own where read otherwise.
        ops.push_back({ "multiply_plain by X^s",
                        [](Evaluator &e, Operands &o) { e.multiply_plain_inplace(o.a, o.p_pow); } });
        ops.push_back({ "multiply_plain by X^s twice, then by a plaintext",
                        [](Evaluator &e, Operands &o) {
                            e.multiply_plain_inplace(o.a, o.p_pow);
                            e.multiply_plain_inplace(o.a, o.p_pow);
                            e.multiply_plain_inplace(o.a, o.p);
                        } });
        ops.push_back({ "b times X^s into a temporary, added into a",
                        [](Evaluator &e, Operands &o) {
                            Ciphertext shifted;
                            e.multiply_plain(o.b, o.p_pow, shifted);
                            e.add_inplace(o.a, shifted);
                        } });
        ops.push_back({ "multiply_plain by three coefficients",
                        [](Evaluator &e, Operands &o) { e.multiply_plain_inplace(o.a, o.p_short); } });
        ops.push_back({ "multiply_plain by zero (transparent)",
                        [](Evaluator &e, Operands &o) { e.multiply_plain_inplace(o.a, o.p_zero); } });
        // Key switching and modulus switching, each in the scheme's form.
        const RelinKeys *rk = &relin_keys;
        const GaloisKeys *gk = &galois_keys;
        ops.push_back({ "multiply, then relinearize",
                        [rk](Evaluator &e, Operands &o) {
                            e.multiply_inplace(o.a, o.b);
                            e.relinearize_inplace(o.a, *rk);
                        } });
        // SEAL's out-of-place relinearize copies the product, then relinearizes the copy, whose
        // words the product still shares; the product relinearized again after must be intact.
        ops.push_back({ "multiply, then relinearize into another ciphertext, twice",
                        [rk](Evaluator &e, Operands &o) {
                            Ciphertext product;
                            e.multiply(o.a, o.b, product);
                            e.relinearize(product, *rk, o.a);
                            e.relinearize_inplace(product, *rk);
                            e.add_inplace(o.a, product);
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
        // SealPIR's server: its query expansion, each round rotating every entry out of place,
        // adding the rotation to it and multiplying their difference by a monomial (an
        // upper-half coefficient's, or X^s as SealPIR's X^-2^i), both out of place (sums of
        // sums, some longer than a chained pass reads on its loads); then every entry in NTT
        // form times a plaintext, summed, and the sum back in coefficient form.
        for (const bool power : { false, true })
        {
            const char *name = power ? "SealPIR's query expansion by X^s, 4 rounds, then its database product"
                                     : "SealPIR's query expansion, 4 rounds, then its database product";
            ops.push_back({ name, [gk, n, ntt, power](Evaluator &e, Operands &o) {
                const uint32_t elts[] = { 3, uint32_t(2 * n - 1), 27, 3 };
                vector<Ciphertext> expanded{ o.a };
                for (uint32_t elt : elts)
                {
                    vector<Ciphertext> next(2 * expanded.size());
                    for (size_t a = 0; a < expanded.size(); a++)
                    {
                        Ciphertext rotated, difference;
                        e.apply_galois(expanded[a], elt, *gk, rotated);
                        e.add(expanded[a], rotated, next[a]);
                        e.sub(rotated, expanded[a], difference);
                        e.multiply_plain(
                            difference, power ? o.p_pow : o.p_mono, next[a + expanded.size()]);
                    }
                    expanded = move(next);
                }
                for (auto &x : expanded)
                {
                    if (!ntt)
                    {
                        e.transform_to_ntt_inplace(x);
                    }
                }
                e.multiply_plain(expanded[0], o.p_ntt, o.a);
                Ciphertext product;
                for (size_t a = 1; a < expanded.size(); a++)
                {
                    e.multiply_plain(expanded[a], o.p_ntt, product);
                    e.add_inplace(o.a, product);
                }
                if (!ntt)
                {
                    e.transform_from_ntt_inplace(o.a);
                }
            } });
        }
        // BFV's add_plain and sub_plain scale the plaintext by q / t; BGV's multiply it by the
        // correction factor mod t.
        ops.push_back({ "add_plain", [](Evaluator &e, Operands &o) { e.add_plain_inplace(o.a, o.p); } });
        ops.push_back({ "sub_plain", [](Evaluator &e, Operands &o) { e.sub_plain_inplace(o.a, o.p); } });
        ops.push_back({ "add_plain of three coefficients, then sub_plain",
                        [](Evaluator &e, Operands &o) {
                            e.add_plain_inplace(o.a, o.p_short);
                            e.sub_plain_inplace(o.a, o.p_mono);
                        } });
        ops.push_back({ "add_plain of zero", [](Evaluator &e, Operands &o) { e.add_plain_inplace(o.a, o.p_zero); } });
        // BFV's product by SEAL's BEHZ base extensions, BGV's tensor product in NTT form (SEAL 4.1
        // on; SEAL 4.0 multiplies coefficient-form BGV ciphertexts through NTTs of the operands,
        // routed too). A square of size 3 multiplies a ciphertext by itself.
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

    void sealpir_expansion(const IntegerCase &c, uint32_t rounds)
    {
        Setup setup(c);
        const size_t n = setup.n;
        Encryptor encryptor(setup.context, setup.public_key);
        Evaluator e(setup.context);
        mt19937_64 rng(c.seed);
        Ciphertext query;
        encryptor.encrypt(random_plain(n, setup.t, rng), query);
        query.gpu();
        Plaintext monomial(n);
        monomial[n / 3] = 1;
        const uint32_t elts[] = { 3, uint32_t(2 * n - 1), 27 };
        vector<Ciphertext> expanded{ query };
        for (uint32_t i = 0; i < rounds; i++)
        {
            vector<Ciphertext> next(2 * expanded.size());
            for (size_t a = 0; a < expanded.size(); a++)
            {
                Ciphertext rotated, difference;
                e.apply_galois(expanded[a], elts[i % 3], setup.galois_keys, rotated);
                e.add(expanded[a], rotated, next[a]);
                e.sub(rotated, expanded[a], difference);
                e.multiply_plain(difference, monomial, next[a + expanded.size()]);
            }
            expanded = move(next);
        }
    }

    void apsi_inner_polynomial(const IntegerCase &c, uint32_t terms)
    {
        Setup setup(c);
        const size_t n = setup.n;
        Encryptor encryptor(setup.context, setup.public_key);
        Evaluator e(setup.context);
        mt19937_64 rng(c.seed);
        Ciphertext x;
        encryptor.encrypt(random_plain(n, setup.t, rng), x);
        x.gpu();
        e.transform_to_ntt_inplace(x);
        Ciphertext inner, term;
        for (uint32_t j = 0; j < terms; j++)
        {
            Plaintext plain = random_plain(n, setup.t, rng);
            e.transform_to_ntt_inplace(plain, x.parms_id());
            e.multiply_plain(x, plain, j == 0 ? inner : term);
            if (j > 0)
            {
                e.add_inplace(inner, term);
            }
        }
        e.transform_from_ntt_inplace(inner);
    }

    IntegerFuzz integer_fuzz(const IntegerCase &c, uint64_t calls)
    {
        Setup setup(c);
        Encryptor encryptor(setup.context, setup.public_key);
        Evaluator evaluator(setup.context);
        mt19937_64 rng(c.seed);
        const size_t n = setup.n;
        const uint64_t t = setup.t;
        const RelinKeys &rk = setup.relin_keys;
        const GaloisKeys &gk = setup.galois_keys;

        // Slots of (SEAL's CPU copy, marked copy); a fresh encryption fills both alike.
        const size_t slots = 4;
        vector<Ciphertext> cpu(slots), dev(slots);
        auto refill = [&](size_t i) {
            encryptor.encrypt(random_plain(n, t, rng), cpu[i]);
            dev[i] = cpu[i];
            dev[i].gpu();
        };
        for (size_t i = 0; i < slots; i++)
        {
            refill(i);
        }
        // Each side's own plaintexts: a routed call marks its plaintext for the device, and a
        // marked operand routes SEAL's call.
        struct Plains
        {
            Plaintext plain, monomial, power, plain_ntt;
        };
        Plains cpu_plains;
        cpu_plains.plain = random_plain(n, t, rng);
        cpu_plains.monomial = Plaintext(n);
        cpu_plains.monomial[rng() % n] = t - 1;
        cpu_plains.power = Plaintext(n);
        cpu_plains.power[rng() % n] = 1;
        evaluator.transform_to_ntt(cpu_plains.plain, setup.context.first_parms_id(), cpu_plains.plain_ntt);
        Plains dev_plains = cpu_plains;

        // One call: `op` on slot x (the result) and slot y of one side, with its plaintexts.
        using Call = function<void(Evaluator &, Ciphertext &, const Ciphertext &, const Plains &)>;
        const vector<pair<const char *, Call>> ops = {
            { "negate", [](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &) { e.negate_inplace(x); } },
            { "add", [](Evaluator &e, Ciphertext &x, const Ciphertext &y, const Plains &) { e.add_inplace(x, y); } },
            { "sub", [](Evaluator &e, Ciphertext &x, const Ciphertext &y, const Plains &) { e.sub_inplace(x, y); } },
            { "multiply",
              [](Evaluator &e, Ciphertext &x, const Ciphertext &y, const Plains &) { e.multiply_inplace(x, y); } },
            { "square", [](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &) { e.square_inplace(x); } },
            { "relinearize",
              [&rk](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &) { e.relinearize_inplace(x, rk); } },
            { "multiply_plain",
              [](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &p) {
                  e.multiply_plain_inplace(x, p.plain);
              } },
            { "multiply_plain (monomial)",
              [](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &p) {
                  e.multiply_plain_inplace(x, p.monomial);
              } },
            { "multiply_plain (X^s)",
              [](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &p) {
                  e.multiply_plain_inplace(x, p.power);
              } },
            { "multiply_plain (NTT form)",
              [](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &p) {
                  e.multiply_plain_inplace(x, p.plain_ntt);
              } },
            { "add_plain",
              [](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &p) { e.add_plain_inplace(x, p.plain); } },
            { "sub_plain",
              [](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &p) { e.sub_plain_inplace(x, p.plain); } },
            { "rotate_rows 1",
              [&gk](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &) { e.rotate_rows_inplace(x, 1, gk); } },
            { "rotate_rows -1",
              [&gk](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &) { e.rotate_rows_inplace(x, -1, gk); } },
            { "rotate_rows 3",
              [&gk](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &) { e.rotate_rows_inplace(x, 3, gk); } },
            { "rotate_columns",
              [&gk](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &) { e.rotate_columns_inplace(x, gk); } },
            { "mod_switch_to_next",
              [](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &) { e.mod_switch_to_next_inplace(x); } },
            { "mod_switch_to_next into",
              [](Evaluator &e, Ciphertext &x, const Ciphertext &y, const Plains &) { e.mod_switch_to_next(y, x); } },
            { "transform_to_ntt",
              [](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &) { e.transform_to_ntt_inplace(x); } },
            { "transform_from_ntt",
              [](Evaluator &e, Ciphertext &x, const Ciphertext &, const Plains &) { e.transform_from_ntt_inplace(x); } },
            { "copy", [](Evaluator &, Ciphertext &x, const Ciphertext &y, const Plains &) { x = y; } },
        };

        // The last calls, as "op(x, y)", for the report of a mismatch.
        const size_t shown = 40;
        deque<string> trace;
        auto note = [&trace, shown](string step) {
            trace.push_back(move(step));
            if (trace.size() > shown)
            {
                trace.pop_front();
            }
        };
        IntegerFuzz report;
        report.calls = 0;
        report.routed = 0;
        report.mismatches = 0;
        for (uint64_t call = 0; call < calls; call++)
        {
            // One call in 16 starts a slot afresh, so that levels and sizes do not run out.
            size_t x = rng() % slots, y = rng() % slots;
            if (rng() % 16 == 0)
            {
                refill(x);
                note("encrypt(" + to_string(x) + ")");
                continue;
            }
            const auto &[name, op] = ops[rng() % ops.size()];
            note(string(name) + "(" + to_string(x) + ", " + to_string(y) + ")");
            report.calls++;
            string cpu_error = string(error_of([&] { op(evaluator, cpu[x], cpu[y], cpu_plains); }));
            string dev_error = string(error_of([&] { op(evaluator, dev[x], dev[y], dev_plains); }));
            if (dev_error.empty() && gpu::Access::residency(dev[x]) == gpu::Residency::device_newer)
            {
                report.routed++;
            }
            string what;
            if (gpu::Access::is_marked(cpu[x]) || gpu::Access::is_marked(cpu_plains.plain))
            {
                // The oracle must stay SEAL's CPU path.
                what = "SEAL's CPU operands became marked for the device";
            }
            else if (cpu_error != dev_error)
            {
                what = "threw \"" + dev_error + "\" where SEAL threw \"" + cpu_error + "\"";
            }
            else if (!cpu_error.empty())
            {
                // A routed call that throws leaves its operands unchanged; SEAL's CPU path may have
                // written some first (apply_galois permutes, then switch_key_inplace checks the
                // form; sub(x, x) leaves x zero, which SEAL's later calls refuse in their own
                // order): the slot starts afresh on both sides.
                refill(x);
                continue;
            }
            else if (metadata(cpu[x]) != metadata(dev[x]))
            {
                what = "metadata " + metadata(dev[x]) + " where SEAL has " + metadata(cpu[x]);
            }
            else if (int64_t i = first_difference(cpu[x], dev[x]); i >= 0)
            {
                what = "word " + to_string(i) + " differs";
            }
            if (!what.empty())
            {
                if (report.mismatches++ == 0)
                {
                    string first = "call " + to_string(call) + ": " + name + ": " + what + "; the last calls:";
                    for (const auto &step : trace)
                    {
                        first += " " + step;
                    }
                    report.first = first;
                }
                // Go on from SEAL's words.
                for (size_t i = 0; i < slots; i++)
                {
                    dev[i] = cpu[i];
                    dev[i].gpu();
                }
            }
        }
        return report;
    }
} // namespace seal_opencl_testkit
