// Application benchmarks for SEAL's integer-scheme users: BFV servers written the way APSI's
// sender and SealPIR's server call SEAL (out-of-place calls into temporaries, std::vector of
// ciphertexts, levels matched with mod_switch_to, plaintexts kept in NTT form), not tuned for
// the backend. BFV with SEAL's default primes (CoeffModulus::BFVDefault) and a 20-bit batching
// plain modulus t at N = 2^log_n, as integer_path.
//
//   psi  APSI's sender: the receiver's query arrives as encryptions of the source powers x^1,
//        x^2, x^4, ..., x^(2^s) (a batch of 2^log_n items, one per slot); the sender computes
//        the other powers it needs (multiply, relinearize), brings the low powers x^1 .. x^L
//        to the level of chain index 2 in NTT form (mod_switch_to, transform_to_ntt_inplace)
//        and the high powers x^(L+1), x^2(L+1), ... to chain index 1 (mod_switch_to), then
//        evaluates each bundle's polynomial of degree D (one per slot) by Paterson-Stockmeyer:
//        P = sum_i (c_i0 + sum_{j=1..L} c_ij x^j) x^(i(L+1)), each inner sum from NTT-form
//        coefficient plaintexts (multiply_plain, add_inplace), transform_from_ntt_inplace,
//        add_plain of c_i0, mod_switch_to the high level and multiply by the high power
//        (L + 1 = ceil(sqrt(D + 1))); the sum relinearized and mod-switched to the last level.
//        --degree D (default 63), --bundles B (default 4) polynomials per request.
//   pir  SealPIR's server, one dimension: the query is one encryption of inv(m) x^index; its
//        expansion into m = --db ciphertexts (default 4096, a power of two <= N) takes
//        log2(m) rounds of, per ciphertext c, apply_galois(c, N / 2^i + 1) into r, add(c, r)
//        and (c - r) x^(-2^i) = sub(r, c) times the monomial x^(N - 2^i) (multiply_plain by a
//        monomial plaintext: SealPIR shifts the words itself), which leaves encryptions of 1
//        at index and 0 elsewhere; each transformed to NTT form and multiplied by its database
//        plaintext (N coefficients mod t, kept in NTT form), the products summed and the sum
//        transformed from NTT form: an encryption of the database's element `index`.
//
// Per application: the wall time per request on the GPU path (the client's ciphertexts copied
// from host objects into new ones marked .gpu(), the request, every result's words read on the
// host), the median over --reps after 2 warm-ups, against SEAL's CPU path on one thread (median
// over --cpu-reps, before the server's plaintexts are marked for the device); whether every
// result equals SEAL's CPU result word for word; whether every Evaluator call was routed (a
// call that runs on the CPU downloads its device operands and uploads its result again, so
// each request must upload exactly its inputs and download exactly its results:
// seal_opencl::transfer_counts); and whether the result decrypts to what the application
// computes (the polynomials at the query's items, the database's element), a check that the
// parameters leave noise budget, reported but not part of the exit status. And, from a second
// run of this program under the profiler (whose events make every launch dearer, so the wall
// time comes from the first run), the device's kernel time and launches per request: the wall
// time over the kernel time says how far the host keeps the device waiting.
//
//   integer_apps [--app psi|pir|all] [--log-n 13] [--degree 63] [--bundles 4] [--db 4096]
//                [--reps 10] [--cpu-reps 1] [--json PATH]
// (the profiles go beside the JSON, PATH without .json, then -psi-profile.json, ...)
//
// Exit status 0 when every result matched, 1 on a mismatch, 2 on an error.

#include "bench_common.h"

#include <iomanip>
#include <iostream>
#include <map>
#include <random>
#include <sstream>

using namespace bench;
using namespace seal;
using namespace std;

namespace
{
    struct AppParams
    {
        // N = 2^log_n: this program's own --log-n, whose default (APSI's and SealPIR's common
        // 8192) differs from the other benchmarks' 2^15.
        int log_n = 13;
        string app = "all";
        int degree = 63;
        int bundles = 4;
        int db = 4096;
        int cpu_reps = 1;
        // Set in the profiled run of this program (`profiled_run`): time the GPU requests
        // of this application only and print their kernel time.
        string kernel_run;
    };

    constexpr int warmups = 2;

    /* ---- the server's parameters and keys ----------------------------------------------- */

    struct Fixture
    {
        explicit Fixture(int log_n, const vector<uint32_t> &galois_elts = {})
            : context(parameters(log_n), true, sec_level_type::tc128), keygen(context), encoder(context),
              n(context.first_context_data()->parms().poly_modulus_degree()),
              t(context.first_context_data()->parms().plain_modulus().value())
        {
            keygen.create_public_key(public_key);
            keygen.create_relin_keys(relin_keys);
            if (!galois_elts.empty())
            {
                keygen.create_galois_keys(galois_elts, galois_keys);
            }
        }

        static EncryptionParameters parameters(int log_n)
        {
            EncryptionParameters parms(scheme_type::bfv);
            const size_t n = size_t(1) << log_n;
            parms.set_poly_modulus_degree(n);
            parms.set_coeff_modulus(CoeffModulus::BFVDefault(n));
            parms.set_plain_modulus(PlainModulus::Batching(n, 20));
            return parms;
        }

        Ciphertext encrypt(const Plaintext &plain) const
        {
            Ciphertext ct;
            Encryptor(context, public_key).encrypt(plain, ct);
            return ct;
        }

        // The noise budget left in `ct`, in bits (0: it no longer decrypts).
        int noise_budget(const Ciphertext &ct) const
        {
            return Decryptor(context, keygen.secret_key()).invariant_noise_budget(ct);
        }

        Plaintext decrypt(const Ciphertext &ct) const
        {
            Plaintext plain;
            Decryptor(context, keygen.secret_key()).decrypt(ct, plain);
            return plain;
        }

        // The parms_id of the data level with chain index `index`, or of the first data level
        // where the chain is shorter.
        parms_id_type level(size_t index) const
        {
            auto data = context.first_context_data();
            while (data->chain_index() > index)
            {
                data = data->next_context_data();
            }
            return data->parms_id();
        }

        SEALContext context;
        KeyGenerator keygen;
        BatchEncoder encoder;
        size_t n;
        uint64_t t;
        PublicKey public_key;
        RelinKeys relin_keys;
        GaloisKeys galois_keys;
    };

    uint64_t pow_mod(uint64_t base, uint64_t exponent, uint64_t modulus)
    {
        unsigned __int128 result = 1, b = base % modulus;
        for (; exponent; exponent >>= 1)
        {
            if (exponent & 1)
            {
                result = result * b % modulus;
            }
            b = b * b % modulus;
        }
        return uint64_t(result);
    }

    // N values mod t from a generator seeded with `seed`.
    vector<uint64_t> random_values(size_t n, uint64_t t, uint64_t seed)
    {
        mt19937_64 rng(seed);
        vector<uint64_t> v(n);
        for (auto &x : v)
        {
            x = rng() % t;
        }
        return v;
    }

    /* ---- the applications ------------------------------------------------------------- */

    // An application: the client's ciphertexts, the server's request over them (with the
    // server's plaintexts, which `mark` marks for the device once the CPU runs are done), and
    // the check of a decrypted result.
    struct App
    {
        string name;
        string what;
        unique_ptr<Fixture> fixture;
        vector<Ciphertext> inputs;
        function<vector<Ciphertext>(Evaluator &, const vector<Ciphertext> &)> request;
        function<void()> mark;
        function<bool(const vector<Ciphertext> &)> decrypts;
    };

    // APSI's sender (see the file's header).
    struct Psi
    {
        int degree;
        int low;  // L: the low powers x^1 .. x^L
        int high; // H: the high powers x^(i(L+1)), i = 1 .. H - 1
        vector<int> sources;
        vector<uint64_t> items;
        // Per bundle, the polynomial's coefficients c_k (k = 0 .. degree) per slot, and the
        // same batch-encoded: c_k for k = i(L+1) in coefficient form, the others in NTT form
        // at the low powers' level.
        vector<vector<vector<uint64_t>>> coefficients;
        vector<vector<Plaintext>> plains;
        parms_id_type low_level, high_level, last_level;
    };

    vector<Ciphertext> psi_request(const Fixture &f, const Psi &psi, Evaluator &ev, const vector<Ciphertext> &query)
    {
        // The powers the evaluation needs: x^1 .. x^L and x^(i(L+1)); each one not sent by the
        // receiver is x^a x^(k - a), a the largest power of two not above k (a source power).
        map<int, Ciphertext> powers;
        for (size_t s = 0; s < psi.sources.size(); s++)
        {
            powers[psi.sources[s]] = query[s];
        }
        function<const Ciphertext &(int)> power = [&](int k) -> const Ciphertext & {
            auto found = powers.find(k);
            if (found != powers.end())
            {
                return found->second;
            }
            int a = 1;
            while (2 * a <= k)
            {
                a *= 2;
            }
            Ciphertext product;
            ev.multiply(power(a), power(k - a), product);
            ev.relinearize_inplace(product, f.relin_keys);
            return powers[k] = move(product);
        };
        const int step = psi.low + 1;
        vector<Ciphertext> low(psi.low + 1), high(psi.high);
        for (int j = 1; j <= psi.low; j++)
        {
            ev.mod_switch_to(power(j), psi.low_level, low[j]);
            ev.transform_to_ntt_inplace(low[j]);
        }
        for (int i = 1; i < psi.high; i++)
        {
            ev.mod_switch_to(power(i * step), psi.high_level, high[i]);
        }

        vector<Ciphertext> results;
        for (const auto &plains : psi.plains)
        {
            Ciphertext result;
            for (int i = 0; i < psi.high; i++)
            {
                const int top = min(psi.low, psi.degree - i * step);
                Ciphertext block;
                if (top == 0)
                {
                    // A constant alone: c_i0 x^(i(L+1)).
                    ev.multiply_plain(high[i], plains[i * step], block);
                }
                else
                {
                    Ciphertext inner, term;
                    ev.multiply_plain(low[1], plains[i * step + 1], inner);
                    for (int j = 2; j <= top; j++)
                    {
                        ev.multiply_plain(low[j], plains[i * step + j], term);
                        ev.add_inplace(inner, term);
                    }
                    ev.transform_from_ntt_inplace(inner);
                    ev.add_plain_inplace(inner, plains[i * step]);
                    ev.mod_switch_to_inplace(inner, psi.high_level);
                    if (i == 0)
                    {
                        block = move(inner);
                    }
                    else
                    {
                        ev.multiply(inner, high[i], block);
                    }
                }
                if (i == 0)
                {
                    result = move(block);
                }
                else
                {
                    ev.add_inplace(result, block);
                }
            }
            ev.relinearize_inplace(result, f.relin_keys);
            ev.mod_switch_to_inplace(result, psi.last_level);
            results.push_back(move(result));
        }
        return results;
    }

    App psi_app(int log_n, int degree, int bundles)
    {
        App app;
        app.fixture = make_unique<Fixture>(log_n);
        const Fixture &f = *app.fixture;
        auto psi = make_shared<Psi>();
        psi->degree = degree;
        int step = 1;
        while (step * step < degree + 1)
        {
            step++;
        }
        psi->low = step - 1;
        psi->high = (degree + step) / step;
        const int max_power = max(psi->low, (psi->high - 1) * step);
        for (int s = 1; s <= max_power; s *= 2)
        {
            psi->sources.push_back(s);
        }
        psi->low_level = f.level(2);
        psi->high_level = f.level(1);
        psi->last_level = f.context.last_parms_id();

        // The receiver's items, one per slot, and its query: each source power batch-encoded
        // and encrypted.
        psi->items = random_values(f.n, f.t, 1);
        for (int s : psi->sources)
        {
            vector<uint64_t> powered(f.n);
            for (size_t k = 0; k < f.n; k++)
            {
                powered[k] = pow_mod(psi->items[k], uint64_t(s), f.t);
            }
            Plaintext plain;
            f.encoder.encode(powered, plain);
            app.inputs.push_back(f.encrypt(plain));
        }

        // The sender's bundles, as APSI's BinBundle keeps them: batch-encoded coefficients, in
        // NTT form at the low powers' level where they multiply a low power.
        Evaluator ev(f.context);
        for (int b = 0; b < bundles; b++)
        {
            psi->coefficients.emplace_back();
            psi->plains.emplace_back();
            for (int k = 0; k <= degree; k++)
            {
                psi->coefficients.back().push_back(random_values(f.n, f.t, 1000 * uint64_t(b + 1) + uint64_t(k)));
                Plaintext plain;
                f.encoder.encode(psi->coefficients.back().back(), plain);
                if (k % step != 0)
                {
                    ev.transform_to_ntt_inplace(plain, psi->low_level);
                }
                psi->plains.back().push_back(move(plain));
            }
        }

        ostringstream what;
        what << "APSI's sender: " << psi->sources.size() << " source powers in, the powers up to x^" << max_power
             << " (low x^1..x^" << psi->low << " in NTT form, high every x^" << step << "), " << bundles
             << " bundle(s) of a degree-" << degree
             << " polynomial per slot by Paterson-Stockmeyer, mod-switched to the last level";
        app.name = "psi";
        app.what = what.str();
        app.request = [&f, psi](Evaluator &ev, const vector<Ciphertext> &query) {
            return psi_request(f, *psi, ev, query);
        };
        app.mark = [psi] {
            for (auto &plains : psi->plains)
            {
                for (auto &plain : plains)
                {
                    plain.gpu();
                }
            }
        };
        app.decrypts = [&f, psi](const vector<Ciphertext> &results) {
            for (size_t b = 0; b < results.size(); b++)
            {
                vector<uint64_t> values;
                f.encoder.decode(f.decrypt(results[b]), values);
                const auto &c = psi->coefficients[b];
                for (size_t k = 0; k < f.n; k++)
                {
                    // Horner's rule mod t.
                    unsigned __int128 want = 0;
                    for (int d = psi->degree; d >= 0; d--)
                    {
                        want = (want * psi->items[k] + c[d][k]) % f.t;
                    }
                    if (values[k] != uint64_t(want))
                    {
                        return false;
                    }
                }
            }
            return true;
        };
        return app;
    }

    // SealPIR's server, one dimension (see the file's header).
    struct Pir
    {
        size_t elements;
        size_t index;
        vector<uint32_t> galois_elts;   // N / 2^i + 1, round i of the expansion
        vector<Plaintext> monomials;    // x^(N - 2^i), round i
        vector<Plaintext> database;     // in NTT form at the first level
    };

    vector<Ciphertext> pir_request(const Fixture &f, const Pir &pir, Evaluator &ev, const vector<Ciphertext> &query)
    {
        // SealPIR's expand_query: round i splits each c into c + c(x^(N/2^i + 1)) (the terms
        // whose exponent has bit i clear, doubled) and (c - c(x^(N/2^i + 1))) x^(-2^i) (those
        // with bit i set, doubled and shifted down by 2^i), the latter placed after the former.
        // Since x^N = -1 the latter is (c(x^(N/2^i + 1)) - c) x^(N - 2^i): a monomial of
        // coefficient 1, as SEAL multiplies by a plaintext's coefficients as integers in [0, t)
        // (-x^(N - 2^i), coefficient t - 1, would scale the noise by t - 1 every round).
        vector<Ciphertext> expanded{ query[0] };
        for (size_t i = 0; i < pir.galois_elts.size(); i++)
        {
            vector<Ciphertext> next(2 * expanded.size());
            for (size_t a = 0; a < expanded.size(); a++)
            {
                Ciphertext rotated, difference;
                ev.apply_galois(expanded[a], pir.galois_elts[i], f.galois_keys, rotated);
                ev.add(expanded[a], rotated, next[a]);
                ev.sub(rotated, expanded[a], difference);
                ev.multiply_plain(difference, pir.monomials[i], next[a + expanded.size()]);
            }
            expanded = move(next);
        }
        // The database product: the selection vector in NTT form times the NTT-form database.
        for (auto &ct : expanded)
        {
            ev.transform_to_ntt_inplace(ct);
        }
        Ciphertext reply, product;
        ev.multiply_plain(expanded[0], pir.database[0], reply);
        for (size_t j = 1; j < pir.elements; j++)
        {
            ev.multiply_plain(expanded[j], pir.database[j], product);
            ev.add_inplace(reply, product);
        }
        ev.transform_from_ntt_inplace(reply);
        return { reply };
    }

    App pir_app(int log_n, int elements)
    {
        size_t rounds = 0;
        while ((size_t(1) << rounds) < size_t(elements))
        {
            rounds++;
        }
        auto pir = make_shared<Pir>();
        pir->elements = size_t(elements);
        const size_t n = size_t(1) << log_n;
        for (size_t i = 0; i < rounds; i++)
        {
            pir->galois_elts.push_back(uint32_t(n / (size_t(1) << i) + 1));
        }
        App app;
        app.fixture = make_unique<Fixture>(log_n, pir->galois_elts);
        const Fixture &f = *app.fixture;
        for (size_t i = 0; i < rounds; i++)
        {
            Plaintext monomial(n);
            monomial[n - (size_t(1) << i)] = 1;
            pir->monomials.push_back(move(monomial));
        }

        // The client's query: inv(m) x^index, so that the m-fold expansion leaves 1 at index.
        pir->index = size_t(elements) / 3;
        Plaintext query(n);
        query[pir->index] = pow_mod(pir->elements % f.t, f.t - 2, f.t);
        app.inputs.push_back(f.encrypt(query));

        // The database: element j is N coefficients mod t (as SealPIR packs an element's
        // bytes), kept in NTT form at the first level.
        Evaluator ev(f.context);
        for (size_t j = 0; j < pir->elements; j++)
        {
            auto words = random_values(n, f.t, 5000 + j);
            Plaintext plain(n);
            copy(words.begin(), words.end(), plain.data());
            ev.transform_to_ntt_inplace(plain, f.context.first_parms_id());
            pir->database.push_back(move(plain));
        }

        ostringstream what;
        what << "SealPIR's server, one dimension: 1 query ciphertext expanded into " << elements << " ("
             << rounds << " rounds of apply_galois, add, sub, multiply_plain by a monomial), times a database of "
             << elements << " NTT-form plaintexts, summed";
        app.name = "pir";
        app.what = what.str();
        app.request = [&f, pir](Evaluator &ev, const vector<Ciphertext> &query) {
            return pir_request(f, *pir, ev, query);
        };
        app.mark = [pir] {
            for (auto &plain : pir->monomials)
            {
                plain.gpu();
            }
            for (auto &plain : pir->database)
            {
                plain.gpu();
            }
        };
        app.decrypts = [&f, pir](const vector<Ciphertext> &results) {
            const auto want = random_values(f.n, f.t, 5000 + pir->index);
            const Plaintext got = f.decrypt(results.at(0));
            for (size_t k = 0; k < f.n; k++)
            {
                if ((k < got.coeff_count() ? got[k] : 0) != want[k])
                {
                    return false;
                }
            }
            return true;
        };
        return app;
    }

    /* ---- measuring -------------------------------------------------------------------- */

    vector<vector<uint64_t>> words_of_all(const vector<Ciphertext> &cts)
    {
        vector<vector<uint64_t>> words;
        for (const auto &ct : cts)
        {
            words.push_back(words_of(ct));
        }
        return words;
    }

    // One GPU request as a server runs it: the client's ciphertexts copied into new objects
    // and marked, the request, every result's words read on the host.
    vector<Ciphertext> gpu_request(const App &app, Evaluator &ev)
    {
        vector<Ciphertext> inputs = app.inputs;
        for (auto &ct : inputs)
        {
            ct.gpu();
        }
        vector<Ciphertext> results = app.request(ev, inputs);
        for (const auto &ct : results)
        {
            (void)ct.data(); // the host read: waits, downloads
        }
        return results;
    }

    // The profiled run's half: the GPU requests under the profiler, their kernel time
    // printed for the parent.
    void print_app_kernel_time(App &app, int reps)
    {
        Evaluator ev(app.fixture->context);
        app.mark();
        print_requests_kernel_time(app.name, warmups, reps, [&] { gpu_request(app, ev); });
    }

    struct Measured
    {
        KernelTime kernel; // per request, from the profiled run
        string name, what;
        double cpu_us = 0, wall_us = 0;
        double uploads = 0, downloads = 0; // per GPU request
        size_t inputs = 0, results = 0;
        bool identical = true, routed = false, decrypts = false;
        int noise_budget = 0; // the least of the results', in bits
    };

    Measured measure(App &app, int reps, int cpu_reps)
    {
        Measured m;
        m.name = app.name;
        m.what = app.what;
        m.inputs = app.inputs.size();
        Evaluator ev(app.fixture->context);

        // SEAL's CPU path: nothing is marked yet.
        vector<Ciphertext> want;
        vector<double> cpu;
        for (int r = 0; r < cpu_reps; r++)
        {
            auto t0 = Clock::now();
            want = app.request(ev, app.inputs);
            cpu.push_back(us_since(t0, Clock::now()));
        }
        m.cpu_us = median(cpu);
        m.results = want.size();
        m.decrypts = app.decrypts(want);
        m.noise_budget = app.fixture->noise_budget(want.front());
        for (const auto &ct : want)
        {
            m.noise_budget = min(m.noise_budget, app.fixture->noise_budget(ct));
        }
        const auto want_words = words_of_all(want);

        // The GPU path: the server's plaintexts marked (uploaded at their first use, in the
        // warm-ups).
        app.mark();
        vector<double> gpu;
        seal_opencl::TransferCounts before{};
        for (int r = 0; r < warmups + reps; r++)
        {
            if (r == warmups)
            {
                before = seal_opencl::transfer_counts();
            }
            auto t0 = Clock::now();
            vector<Ciphertext> results = gpu_request(app, ev);
            auto t1 = Clock::now();
            if (r >= warmups)
            {
                gpu.push_back(us_since(t0, t1));
            }
            m.identical &= words_of_all(results) == want_words;
        }
        const seal_opencl::TransferCounts after = seal_opencl::transfer_counts();
        m.wall_us = median(gpu);
        const uint64_t uploads_before = before.pinned_uploads + before.pageable_uploads;
        m.uploads = double(after.pinned_uploads + after.pageable_uploads - uploads_before) / reps;
        m.downloads = double(after.downloads - before.downloads) / reps;
        m.routed = m.uploads == double(m.inputs) && m.downloads == double(m.results);
        return m;
    }

    App app_named(const string &name, const AppParams &ap)
    {
        return name == "psi" ? psi_app(ap.log_n, ap.degree, ap.bundles) : pir_app(ap.log_n, ap.db);
    }

    // The arguments of this program's profiled run for `app`.
    string kernel_run_args(const string &app, const Params &p, const AppParams &ap)
    {
        return "--kernel-run " + app + " --log-n " + to_string(ap.log_n) + " --degree " + to_string(ap.degree) +
               " --bundles " + to_string(ap.bundles) + " --db " + to_string(ap.db) + " --reps " + to_string(p.reps);
    }

    int run(const Params &p, const AppParams &ap)
    {
        if (!ap.kernel_run.empty())
        {
            seal_opencl::install_backend();
            App app = app_named(ap.kernel_run, ap);
            print_app_kernel_time(app, p.reps);
            return 0;
        }
        // The profiled runs first, before this process opens the device: beside another
        // process's context, even an idle one, the profiled run's kernels ran slower (on the
        // H200, 4.2 ms of kernels per PSI request alone, 181 ms beside this process).
        const vector<string> names = ap.app == "all" ? vector<string>{ "psi", "pir" } : vector<string>{ ap.app };
        const bool json_suffix = p.json.size() > 5 && p.json.compare(p.json.size() - 5, 5, ".json") == 0;
        const string stem = p.json.empty() ? "benches/results/integer_apps-2^" + to_string(ap.log_n) + "-" + today()
                                           : p.json.substr(0, p.json.size() - (json_suffix ? 5 : 0));
        map<string, KernelTime> kernel;
        for (const auto &name : names)
        {
            kernel[name] = profiled_run(kernel_run_args(name, p, ap), stem + "-" + name + "-profile.json");
        }

        seal_opencl::install_backend();
        const string device = device_name();
        const string path = p.json.empty() ? "benches/results/integer_apps-" + file_safe(device) + "-2^" +
                                                 to_string(ap.log_n) + "-" + today() + ".json"
                                           : p.json;
        cout << "device: " << device << "\nBFV, N = 2^" << ap.log_n
             << ", CoeffModulus::BFVDefault, 20-bit batching plain modulus; " << p.reps
             << " requests per GPU figure (medians, after " << warmups << " warm-ups), " << ap.cpu_reps
             << " on SEAL's CPU path (one thread)\n\n"
             << fixed << setprecision(1);

        vector<Measured> results;
        bool all_identical = true;
        auto report = [&](const Measured &m) {
            all_identical &= m.identical;
            cout << m.name << ": " << m.what << "\n  wall " << m.wall_us << " us/request, SEAL CPU " << m.cpu_us
                 << " us (speedup " << m.cpu_us / m.wall_us << "x)  " << (m.identical ? "identical" : "MISMATCH")
                 << "\n  per request: " << setprecision(2) << m.uploads << " uploads (" << m.inputs << " inputs), "
                 << m.downloads << " downloads (" << m.results << " results): "
                 << (m.routed ? "every Evaluator call routed" : "NOT ROUTED: some call ran on the CPU")
                 << "\n  the result decrypts to the application's answer: " << (m.decrypts ? "yes" : "no")
                 << " (noise budget left: " << m.noise_budget << " bits)" << setprecision(1)
                 << "\n  profiled run: " << m.kernel.kernel_us << " us of kernels, " << m.kernel.launches
                 << " launches per request; wall / kernel " << m.wall_us / m.kernel.kernel_us << "\n"
                 << flush;
            results.push_back(m);
        };
        for (const auto &name : names)
        {
            App app = app_named(name, ap);
            Measured m = measure(app, p.reps, ap.cpu_reps);
            m.kernel = kernel[name];
            report(m);
        }

        ostringstream out;
        out << fixed << setprecision(2) << "{\n  \"bench\": \"integer_apps\",\n  \"device\": \"" << device
            << "\",\n  \"date\": \"" << today() << "\",\n  " << settings_json() << ",\n  \"scheme\": \"BFV\",\n  \"log_n\": " << ap.log_n
            << ",\n  \"coeff_modulus\": \"BFVDefault\",\n  \"plain_bits\": 20,\n  \"degree\": " << ap.degree
            << ",\n  \"bundles\": " << ap.bundles << ",\n  \"db\": " << ap.db << ",\n  \"reps\": " << p.reps
            << ",\n  \"cpu_reps\": " << ap.cpu_reps << ",\n  \"apps\": [\n";
        for (size_t i = 0; i < results.size(); i++)
        {
            const auto &m = results[i];
            out << "    {\"name\": \"" << m.name << "\", \"what\": \"" << m.what << "\", \"wall_us\": " << m.wall_us
                << ", \"cpu_us\": " << m.cpu_us << ", \"speedup\": " << m.cpu_us / m.wall_us
                << ", \"uploads_per_request\": " << m.uploads << ", \"downloads_per_request\": " << m.downloads
                << ", \"inputs\": " << m.inputs << ", \"results\": " << m.results
                << ", \"routed\": " << (m.routed ? "true" : "false")
                << ", \"decrypts\": " << (m.decrypts ? "true" : "false")
                << ", \"noise_budget_bits\": " << m.noise_budget << ", \"kernel_us\": " << m.kernel.kernel_us
                << ", \"launches_per_request\": " << m.kernel.launches
                << ", \"wall_over_kernel\": " << m.wall_us / m.kernel.kernel_us
                << ", \"identical\": " << (m.identical ? "true" : "false") << "}"
                << (i + 1 < results.size() ? ",\n" : "\n");
        }
        out << "  ]\n}\n";
        return write_results(path, out.str(), all_identical);
    }
} // namespace

int main(int argc, char **argv)
{
    AppParams ap;
    const vector<Option> options{
        { "--log-n", true, [&](const string &v) { ap.log_n = stoi(v); } },
        { "--app", true,
          [&](const string &v) {
              if (v != "all" && v != "psi" && v != "pir")
              {
                  throw invalid_argument(v);
              }
              ap.app = v;
          } },
        { "--degree", true,
          [&](const string &v) {
              ap.degree = stoi(v);
              if (ap.degree < 3)
              {
                  throw invalid_argument(v);
              }
          } },
        { "--bundles", true, [&](const string &v) { ap.bundles = max(1, stoi(v)); } },
        { "--db", true,
          [&](const string &v) {
              ap.db = stoi(v);
              if (ap.db < 2 || (ap.db & (ap.db - 1)))
              {
                  throw invalid_argument(v);
              }
          } },
        { "--cpu-reps", true, [&](const string &v) { ap.cpu_reps = max(1, stoi(v)); } },
        { "--kernel-run", true,
          [&](const string &v) {
              if (v != "psi" && v != "pir")
              {
                  throw invalid_argument(v);
              }
              ap.kernel_run = v;
          } },
    };
    return bench_main(
        argc, argv, 10,
        "integer_apps [--app psi|pir|all] [--log-n 13] [--degree 63] [--bundles 4] [--db 4096] [--reps 10] "
        "[--cpu-reps 1] [--json PATH]",
        [&](const Params &p) { return run(p, ap); }, options);
}
