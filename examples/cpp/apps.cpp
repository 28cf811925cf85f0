// Application benchmarks: programs written the way SEAL's examples and its users
// write them (out-of-place calls into temporaries, std::vector of ciphertexts, levels matched
// with mod_switch_to and scales set by hand), not tuned for the backend. Each request starts
// from the client's ciphertext in host memory (copied into a new object and marked .gpu()) and
// ends when the result's words are readable on the host.
//
//   network  two dense layers, each a DIM x DIM matrix times a vector by the baby-step
//            giant-step diagonal method (rotations of the input into a std::vector, one
//            out-of-place multiply_plain per diagonal into a temporary, add_inplace, a giant
//            step's rotate_vector_inplace, rescale), each followed by the activation
//            x + a x^3 (square, multiply_plain, multiply, relinearize, rescale, mod_switch_to);
//            DIM = 64 at N = 2^15 and above, 128 at 2^14 (--dim).
//   poly     a polynomial of degree 15 by powers: x^2 .. x^15 out of place (multiply or
//            square of two lower powers brought to one level, relinearize, rescale), each
//            times its coefficient (multiply_plain, rescale), brought to the last level and
//            summed, plus the constant (add_plain).
//   inner    an inner product over 4096 slots: multiply_plain by the weights, rescale, then
//            rotate-and-sum (12 out-of-place rotate_vector by 1, 2, 4, ..., 2048 and adds).
//   batch    100 independent network requests (--requests) from 1, 4 and 8 threads, each
//            with its own Evaluator; the model (plaintexts and keys) shared.
//   stream   100 multiply(a, b, out[i]) into a new std::vector of ciphertexts against 100
//            multiply_inplace on existing copies: host time per call, and the first round's
//            (a pool without buffers of the product's size) with its pool misses and device
//            allocations.
//
// Per application: the wall time per request (median over --reps, after 2 warm-ups), the
// kernel time of the same requests (a second run of this program under SEAL_OPENCL_PROFILE,
// whose profile JSON, CSV and trace are kept beside the results), the host time of its routed
// calls and its launches in that run, SEAL's CPU time per request (median over --cpu-reps),
// and whether every result equals SEAL's CPU result word for word; the backend's transfers
// and driver allocations per request (seal_opencl::transfer_counts); the wall time with the
// input received two other ways (`Receive`: made resident by routed calls of its own first;
// loaded from the client's bytes into a marked ciphertext, as a server receives it); where a
// request's time goes (`Phases`: input copy or load, mark, calls issued, wait for the device,
// result read); and each Evaluator call's host time (`TimedEvaluator`: median and 90th
// percentile per method, to set against host_path's issue times).
//
//   apps [--app network|poly|inner|batch|stream|all] [--log-n 15] [--primes P] [--dim D] [--reps R]
//        [--cpu-reps C] [--requests Q] [--json PATH]
//
// Primes {60, 50 x (P - 1), 60}: P = 8 data primes at N >= 2^15, 7 below (the network uses 6
// levels); sizes whose primes exceed SEAL's 128-bit table (N < 2^14) run without the security
// check, as functional tests. Scale 2^50.
// Exit status 0 when every result matched, 1 on a mismatch, 2 on an error.

#include "bench_common.h"
#include "seal/seal.h"
#include "seal_opencl.h"

#include <atomic>
#include <cmath>
#include <functional>
#include <iomanip>
#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

using namespace bench;
using namespace seal;
using namespace std;

namespace
{
    struct AppParams
    {
        string app = "all";
        int dim = 0; // 0: 64 at N >= 2^15, 128 below
        int cpu_reps = 3;
        int requests = 100;
        // Set in the profiled run of this program (`profiled_run`): time the GPU requests
        // only and print their kernel time.
        string kernel_run;
    };

    int default_primes(int log_n)
    {
        return log_n >= 15 ? 8 : 7;
    }

    /* ---- keys, encoding, levels -------------------------------------------------------- */

    struct Fixture
    {
        Fixture(int log_n, int primes, const vector<int> &steps)
            : context(make_context(log_n, primes)), keygen(context), encoder(context), scale(pow(2.0, 50))
        {
            keygen.create_relin_keys(relin_keys);
            if (!steps.empty())
            {
                keygen.create_galois_keys(steps, galois_keys);
            }
            keygen.create_public_key(public_key);
            for (auto data = context.first_context_data(); data; data = data->next_context_data())
            {
                levels.push_back(data->parms_id());
            }
        }

        Ciphertext encrypt(const vector<double> &values) const
        {
            Plaintext plain;
            encoder.encode(values, scale, plain);
            Encryptor encryptor(context, public_key);
            Ciphertext ct;
            encryptor.encrypt(plain, ct);
            return ct;
        }

        size_t slots() const
        {
            return encoder.slot_count();
        }

        SEALContext context;
        KeyGenerator keygen;
        mutable CKKSEncoder encoder; // SEAL's encode is not const
        RelinKeys relin_keys;
        GaloisKeys galois_keys;
        PublicKey public_key;
        double scale;
        vector<parms_id_type> levels; // parms_id by level, the first (all data primes) first
    };

    // The model's plaintexts as a program keeps them: encoded once; for the GPU path a copy
    // marked .gpu() (uploaded on its first use).
    struct Plain
    {
        Plaintext cpu, gpu;

        const Plaintext &on(bool device) const
        {
            return device ? gpu : cpu;
        }
    };

    Plain make_plain(const Fixture &f, const vector<double> &values, size_t level)
    {
        Plain p;
        f.encoder.encode(values, f.levels.at(level), f.scale, p.cpu);
        p.gpu = p.cpu;
        p.gpu.gpu();
        return p;
    }

    Plain make_plain(const Fixture &f, double value, size_t level)
    {
        return make_plain(f, vector<double>(f.slots(), value), level);
    }

    // A reproducible value in [-1, 1).
    double value(size_t i, size_t salt)
    {
        return sin(0.7 * double(i) + 1.3 * double(salt));
    }

    /* ---- the applications -------------------------------------------------------------- */

    // Each Evaluator call's host time, by method, over the calls made through a
    // `TimedEvaluator`.
    using CallTimes = map<string, vector<double>>;

    // SEAL's Evaluator, each call timed on the host (entering the call to its return) under
    // its method's name: the applications are templates over their evaluator, so the same
    // code runs through SEAL's Evaluator (wall times) and through this (each operation's issue
    // time inside the application, to set against its issue time in isolation in host_path).
    class TimedEvaluator
    {
    public:
        TimedEvaluator(Evaluator &ev, CallTimes &times) : ev_(ev), times_(times)
        {}

        void add_inplace(Ciphertext &a, const Ciphertext &b)
        {
            timed("add_inplace", [&] { ev_.add_inplace(a, b); });
        }

        void add_plain_inplace(Ciphertext &a, const Plaintext &p)
        {
            timed("add_plain_inplace", [&] { ev_.add_plain_inplace(a, p); });
        }

        void mod_switch_to(const Ciphertext &a, parms_id_type level, Ciphertext &out)
        {
            timed("mod_switch_to", [&] { ev_.mod_switch_to(a, level, out); });
        }

        void mod_switch_to_inplace(Ciphertext &a, parms_id_type level)
        {
            timed("mod_switch_to_inplace", [&] { ev_.mod_switch_to_inplace(a, level); });
        }

        void multiply(const Ciphertext &a, const Ciphertext &b, Ciphertext &out)
        {
            timed("multiply", [&] { ev_.multiply(a, b, out); });
        }

        void multiply_plain(const Ciphertext &a, const Plaintext &p, Ciphertext &out)
        {
            timed("multiply_plain", [&] { ev_.multiply_plain(a, p, out); });
        }

        void relinearize_inplace(Ciphertext &a, const RelinKeys &keys)
        {
            timed("relinearize_inplace", [&] { ev_.relinearize_inplace(a, keys); });
        }

        void rescale_to_next_inplace(Ciphertext &a)
        {
            timed("rescale_to_next_inplace", [&] { ev_.rescale_to_next_inplace(a); });
        }

        void rotate_vector(const Ciphertext &a, int steps, const GaloisKeys &keys, Ciphertext &out)
        {
            timed("rotate_vector", [&] { ev_.rotate_vector(a, steps, keys, out); });
        }

        void rotate_vector_inplace(Ciphertext &a, int steps, const GaloisKeys &keys)
        {
            timed("rotate_vector_inplace", [&] { ev_.rotate_vector_inplace(a, steps, keys); });
        }

        void square(const Ciphertext &a, Ciphertext &out)
        {
            timed("square", [&] { ev_.square(a, out); });
        }

    private:
        template <class Call>
        void timed(const char *method, Call call)
        {
            auto t0 = Clock::now();
            call();
            times_[method].push_back(us_since(t0, Clock::now()));
        }

        Evaluator &ev_;
        CallTimes &times_;
    };

    // One request: the result of the application on `x` (marked or not), the model on the
    // device (`device`) or the CPU; the same code through SEAL's Evaluator or timed per call.
    using Request = function<Ciphertext(Evaluator &, const Ciphertext &x, bool device)>;
    using TimedRequest = function<Ciphertext(TimedEvaluator &, const Ciphertext &x, bool device)>;

    struct App
    {
        string name;
        string what;
        unique_ptr<Fixture> fixture;
        Ciphertext input;   // the client's ciphertext
        string input_bytes; // the same, as the client sends it (Ciphertext::save)
        Request request;
        TimedRequest timed_request;

        void set_input(Ciphertext ct)
        {
            input = move(ct);
            ostringstream bytes;
            input.save(bytes);
            input_bytes = bytes.str();
        }

        // `body(ev, x, device)`, generic over the evaluator, as both requests.
        template <class Body>
        void set_request(Body body)
        {
            request = body;
            timed_request = body;
        }
    };

    // x + a x^3 of `y` (level l, scale set to the fixture's): level l + 2.
    template <class Eval>
    Ciphertext activation(const Fixture &f, Eval &ev, const Ciphertext &y, const Plain &a, bool device)
    {
        Ciphertext y2;
        ev.square(y, y2);
        ev.relinearize_inplace(y2, f.relin_keys);
        ev.rescale_to_next_inplace(y2);
        Ciphertext ay;
        ev.multiply_plain(y, a.on(device), ay);
        ev.rescale_to_next_inplace(ay);
        y2.scale() = f.scale;
        ay.scale() = f.scale;
        Ciphertext ay3;
        ev.multiply(y2, ay, ay3);
        ev.relinearize_inplace(ay3, f.relin_keys);
        ev.rescale_to_next_inplace(ay3);
        Ciphertext out;
        ev.mod_switch_to(y, ay3.parms_id(), out);
        out.scale() = f.scale;
        ay3.scale() = f.scale;
        ev.add_inplace(out, ay3);
        return out;
    }

    struct Network
    {
        int dim, baby, giant;
        // Per layer: the plaintext of diagonal j * baby + k, rotated by -j * baby, at index
        // j * baby + k (the giant step j rotates the sum back).
        vector<vector<Plain>> layers;
        vector<Plain> a; // the activation's coefficient, per layer at its input's level
    };

    // The slots of `v` (dim values) repeated over every slot, so that rotating the slots by k
    // rotates each copy of v by k.
    vector<double> replicated(const vector<double> &v, size_t slots)
    {
        vector<double> out(slots);
        for (size_t s = 0; s < slots; s++)
        {
            out[s] = v[s % v.size()];
        }
        return out;
    }

    Network make_network(const Fixture &f, int dim)
    {
        Network net{ dim, 1, 1, {}, {} };
        while (net.baby * net.baby < dim)
        {
            net.baby *= 2;
        }
        net.giant = dim / net.baby;
        // Layer l's input level: 0, then 3 (a layer rescales once, an activation twice).
        for (size_t layer = 0; layer < 2; layer++)
        {
            const size_t level = 3 * layer;
            vector<Plain> diagonals;
            for (int j = 0; j < net.giant; j++)
            {
                for (int k = 0; k < net.baby; k++)
                {
                    const int i = j * net.baby + k;
                    // diagonal i: W[t][(t + i) mod dim], rotated by -j * baby, entries
                    // W[r][c] = value(r * dim + c) / dim.
                    vector<double> diag(dim);
                    for (int t = 0; t < dim; t++)
                    {
                        const int row = ((t - j * net.baby) % dim + dim) % dim;
                        diag[t] = value(size_t(row) * dim + (row + i) % dim, layer) / dim;
                    }
                    diagonals.push_back(make_plain(f, replicated(diag, f.slots()), level));
                }
            }
            net.layers.push_back(move(diagonals));
            net.a.push_back(make_plain(f, 0.1, level + 1));
        }
        return net;
    }

    // W x for the layer's diagonals `w`, x at their level: one level down, scale set.
    template <class Eval>
    Ciphertext dense(
        const Fixture &f, Eval &ev, const Network &net, const vector<Plain> &w, const Ciphertext &x, bool device)
    {
        vector<Ciphertext> rotated(net.baby);
        rotated[0] = x;
        for (int k = 1; k < net.baby; k++)
        {
            ev.rotate_vector(x, k, f.galois_keys, rotated[k]);
        }
        Ciphertext sum;
        for (int j = 0; j < net.giant; j++)
        {
            Ciphertext inner;
            for (int k = 0; k < net.baby; k++)
            {
                Ciphertext term;
                ev.multiply_plain(rotated[k], w[j * net.baby + k].on(device), term);
                if (k == 0)
                {
                    inner = term;
                }
                else
                {
                    ev.add_inplace(inner, term);
                }
            }
            if (j > 0)
            {
                ev.rotate_vector_inplace(inner, j * net.baby, f.galois_keys);
            }
            if (j == 0)
            {
                sum = inner;
            }
            else
            {
                ev.add_inplace(sum, inner);
            }
        }
        ev.rescale_to_next_inplace(sum);
        sum.scale() = f.scale;
        return sum;
    }

    App network_app(int log_n, int primes, int dim)
    {
        int baby = 1;
        while (baby * baby < dim)
        {
            baby *= 2;
        }
        vector<int> steps;
        for (int k = 1; k < baby; k++)
        {
            steps.push_back(k);
        }
        for (int j = 1; j < dim / baby; j++)
        {
            steps.push_back(j * baby);
        }
        App app;
        app.name = "network";
        app.fixture = make_unique<Fixture>(log_n, primes, steps);
        const Fixture &f = *app.fixture;
        auto net = make_shared<Network>(make_network(f, dim));
        app.what = "two " + to_string(dim) + " x " + to_string(dim) + " dense layers (BSGS, " + to_string(net->baby) +
                   " baby x " + to_string(net->giant) + " giant steps) with x + 0.1 x^3 activations";
        vector<double> x(dim);
        for (int i = 0; i < dim; i++)
        {
            x[i] = value(i, 7);
        }
        app.set_input(f.encrypt(replicated(x, f.slots())));
        app.set_request([&f, net](auto &ev, const Ciphertext &in, bool device) {
            Ciphertext hidden = activation(f, ev, dense(f, ev, *net, net->layers[0], in, device), net->a[0], device);
            return activation(f, ev, dense(f, ev, *net, net->layers[1], hidden, device), net->a[1], device);
        });
        return app;
    }

    App poly_app(int log_n, int primes)
    {
        constexpr int degree = 15;
        App app;
        app.name = "poly";
        app.what = "a polynomial of degree 15 by powers";
        app.fixture = make_unique<Fixture>(log_n, primes, vector<int>{});
        const Fixture &f = *app.fixture;
        // The level of x^k: x^k = x^a x^(k - a), a the largest power of 2 below k (or k / 2).
        vector<size_t> level(degree + 1, 0);
        for (int k = 2; k <= degree; k++)
        {
            int a = 1;
            while (2 * a < k)
            {
                a *= 2;
            }
            level[k] = max(level[a], level[k - a]) + 1;
        }
        // c_k at x^k's level; c_0 at the last level (the terms' one more).
        auto coeffs = make_shared<vector<Plain>>();
        const size_t last = *max_element(level.begin(), level.end()) + 1;
        coeffs->push_back(make_plain(f, 0.5, last));
        for (int k = 1; k <= degree; k++)
        {
            coeffs->push_back(make_plain(f, 1.0 / (k + 1), level[k]));
        }
        vector<double> x(f.slots());
        for (size_t i = 0; i < x.size(); i++)
        {
            x[i] = value(i, 3);
        }
        app.set_input(f.encrypt(x));
        app.set_request([&f, coeffs, degree](auto &ev, const Ciphertext &in, bool device) {
            vector<Ciphertext> powers(degree + 1);
            powers[1] = in;
            for (int k = 2; k <= degree; k++)
            {
                int a = 1;
                while (2 * a < k)
                {
                    a *= 2;
                }
                if (a == k - a)
                {
                    ev.square(powers[a], powers[k]);
                }
                else
                {
                    // Both factors at the lower level.
                    Ciphertext low;
                    ev.mod_switch_to(powers[k - a], powers[a].parms_id(), low);
                    ev.multiply(powers[a], low, powers[k]);
                }
                ev.relinearize_inplace(powers[k], f.relin_keys);
                ev.rescale_to_next_inplace(powers[k]);
                powers[k].scale() = f.scale;
            }
            vector<Ciphertext> terms(degree + 1);
            for (int k = 1; k <= degree; k++)
            {
                ev.multiply_plain(powers[k], (*coeffs)[k].on(device), terms[k]);
                ev.rescale_to_next_inplace(terms[k]);
            }
            const parms_id_type last_level = (*coeffs)[0].cpu.parms_id();
            Ciphertext sum;
            for (int k = 1; k <= degree; k++)
            {
                ev.mod_switch_to_inplace(terms[k], last_level);
                terms[k].scale() = f.scale;
                if (k == 1)
                {
                    sum = terms[k];
                }
                else
                {
                    ev.add_inplace(sum, terms[k]);
                }
            }
            ev.add_plain_inplace(sum, (*coeffs)[0].on(device));
            return sum;
        });
        return app;
    }

    App inner_app(int log_n, int primes)
    {
        App app;
        app.name = "inner";
        vector<int> steps;
        int length = 1;
        app.fixture = make_unique<Fixture>(log_n, primes, vector<int>{});
        const size_t slots = app.fixture->slots();
        while (length < 4096 && size_t(length) < slots)
        {
            steps.push_back(length);
            length *= 2;
        }
        app.fixture->keygen.create_galois_keys(steps, app.fixture->galois_keys);
        const Fixture &f = *app.fixture;
        app.what = "an inner product over " + to_string(length) + " slots (rotate and sum)";
        vector<double> x(slots, 0.0), w(slots, 0.0);
        for (int i = 0; i < length; i++)
        {
            x[i] = value(i, 5);
            w[i] = value(i, 11);
        }
        app.set_input(f.encrypt(x));
        auto weights = make_shared<Plain>(make_plain(f, w, 0));
        app.set_request([&f, weights, steps](auto &ev, const Ciphertext &in, bool device) {
            Ciphertext sum;
            ev.multiply_plain(in, weights->on(device), sum);
            ev.rescale_to_next_inplace(sum);
            for (int step : steps)
            {
                Ciphertext rotated;
                ev.rotate_vector(sum, step, f.galois_keys, rotated);
                ev.add_inplace(sum, rotated);
            }
            return sum;
        });
        return app;
    }

    /* ---- measuring --------------------------------------------------------------------- */

    // Where a request's wall time goes, in host microseconds: the client's words copied into
    // a new object (SEAL's copy, into pageable memory), the object marked (its words moved to
    // page-locked memory; made resident too where asked), the application's calls issued,
    // the wait for the device to finish them, and the host read of the result (its download).
    struct Phases
    {
        double copy_us = 0, mark_us = 0, calls_us = 0, wait_us = 0, read_us = 0;
    };

    // One Evaluator method's calls in a request, timed one by one (`TimedEvaluator`): calls
    // per request, and the median and 90th percentile of their host times.
    struct CallSummary
    {
        string method;
        double per_request, median_us, p90_us;
    };

    vector<CallSummary> summarize(const CallTimes &times, int requests)
    {
        vector<CallSummary> out;
        for (const auto &[method, us] : times)
        {
            out.push_back({ method, double(us.size()) / requests, median(us), quantile(us, 0.9) });
        }
        return out;
    }

    // "method median / p90 (xcalls)" per method, for the report.
    string calls_text(const vector<CallSummary> &calls)
    {
        ostringstream out;
        out << fixed << setprecision(1);
        for (const auto &c : calls)
        {
            out << " " << c.method << " " << c.median_us << " / " << c.p90_us << " (x" << c.per_request << ")";
        }
        return out.str();
    }

    // The same as a JSON array.
    string calls_json(const vector<CallSummary> &calls)
    {
        ostringstream out;
        out << fixed << setprecision(2) << "[";
        for (size_t c = 0; c < calls.size(); c++)
        {
            out << (c ? ", " : "") << "{\"method\": \"" << calls[c].method << "\", \"per_request\": "
                << calls[c].per_request << ", \"median_us\": " << calls[c].median_us
                << ", \"p90_us\": " << calls[c].p90_us << "}";
        }
        return out.str() + "]";
    }

    // A request's phases as a JSON object, its first phase named `first` ("copy", or "load"
    // where the input is loaded into a marked ciphertext).
    string phases_json(const Phases &ph, const char *first)
    {
        ostringstream out;
        out << fixed << setprecision(2) << "{\"" << first << "\": " << ph.copy_us << ", \"mark\": " << ph.mark_us
            << ", \"calls\": " << ph.calls_us << ", \"wait\": " << ph.wait_us << ", \"read\": " << ph.read_us << "}";
        return out.str();
    }

    // How a request receives the client's ciphertext.
    enum class Receive
    {
        // Copied from the client's Ciphertext into a new object (SEAL's copy, into pageable
        // memory), then marked (the words moved to page-locked memory).
        copy,
        // As `copy`, then made resident by routed calls of its own (two negations): SEAL then
        // copies it on the device, where otherwise each copy the application makes of the
        // host-newer input copies its host words and uploads the copy (what a SEAL whose copies
        // upload a marked source first would do for every program).
        resident,
        // As a server receives it: a new object marked, then loaded from the client's bytes
        // (Ciphertext::load, which validates them), straight into page-locked memory.
        load,
    };

    // One GPU request as a server runs it: the client's ciphertext received (`receive`), the
    // application, the result's words read on the host. Returns the result.
    // With `phases`, the request synchronizes before its host read so that the wait and the
    // download are timed apart (the read would wait for the same work); with `calls`, its
    // Evaluator calls are timed one by one into `calls`.
    Ciphertext gpu_request(
        const App &app, Evaluator &ev, Receive receive = Receive::copy, Phases *phases = nullptr,
        CallTimes *calls = nullptr)
    {
        double copy_us = 0, mark_us = 0;
        auto received = [&] {
            auto start = Clock::now();
            if (receive == Receive::load)
            {
                Ciphertext x;
                x.gpu();
                auto marked = Clock::now();
                istringstream bytes(app.input_bytes);
                x.load(app.fixture->context, bytes);
                mark_us = us_since(start, marked);
                copy_us = us_since(marked, Clock::now());
                return x;
            }
            Ciphertext x = app.input;
            auto copied = Clock::now();
            x.gpu();
            if (receive == Receive::resident)
            {
                ev.negate_inplace(x);
                ev.negate_inplace(x);
            }
            copy_us = us_since(start, copied);
            mark_us = us_since(copied, Clock::now());
            return x;
        };
        Ciphertext x = received();
        auto t1 = Clock::now();
        Ciphertext y;
        if (calls)
        {
            TimedEvaluator timed(ev, *calls);
            y = app.timed_request(timed, x, true);
        }
        else
        {
            y = app.request(ev, x, true);
        }
        auto t2 = Clock::now();
        if (phases)
        {
            gpu::require_backend("apps")->synchronize();
        }
        auto t3 = Clock::now();
        (void)static_cast<const Ciphertext &>(y).data(); // the host read: waits, downloads
        if (phases)
        {
            *phases = { copy_us, mark_us, us_since(t1, t2), us_since(t2, t3), us_since(t3, Clock::now()) };
        }
        return y;
    }

    constexpr int warmups = 2;

    // The backend's transfers and driver allocations per request (seal_opencl::transfer_counts).
    struct PerRequest
    {
        double pool_misses = 0, device_allocations = 0, pinned_allocations = 0, pinned_uploads = 0, pageable_uploads = 0,
               upload_mb = 0, downloads = 0, image_copies = 0, device_copies = 0;
    };

    PerRequest per_request(const seal_opencl::TransferCounts &a, const seal_opencl::TransferCounts &b, int requests)
    {
        auto per = [&](uint64_t before, uint64_t after) { return double(after - before) / requests; };
        return { per(a.pool_misses, b.pool_misses),
                 per(a.device_allocations, b.device_allocations),
                 per(a.pinned_allocations, b.pinned_allocations),
                 per(a.pinned_uploads, b.pinned_uploads),
                 per(a.pageable_uploads, b.pageable_uploads),
                 per(a.pinned_upload_bytes + a.pageable_upload_bytes, b.pinned_upload_bytes + b.pageable_upload_bytes) /
                     1e6,
                 per(a.downloads, b.downloads),
                 per(a.image_copies, b.image_copies),
                 per(a.device_copies, b.device_copies) };
    }

    // Median wall time per GPU request over `reps` after the warm-ups, and their transfers;
    // `identical` is cleared unless every result equals `want`.
    double time_gpu(
        const App &app, int reps, const vector<uint64_t> &want, bool &identical, PerRequest &traffic,
        Receive receive = Receive::copy)
    {
        Evaluator ev(app.fixture->context);
        vector<double> us;
        seal_opencl::TransferCounts before{};
        for (int r = 0; r < warmups + reps; r++)
        {
            if (r == warmups)
            {
                before = seal_opencl::transfer_counts();
            }
            auto t0 = Clock::now();
            Ciphertext y = gpu_request(app, ev, receive);
            auto t1 = Clock::now();
            if (r >= warmups)
            {
                us.push_back(us_since(t0, t1));
            }
            identical &= words_of(y) == want;
        }
        traffic = per_request(before, seal_opencl::transfer_counts(), reps);
        return median(us);
    }

    // Medians of each phase over `reps` requests after the warm-ups, and, given `call_times`,
    // their Evaluator calls' host times (a separate pass: the synchronization it adds before
    // the read is not in the wall figures).
    Phases time_phases(
        const App &app, int reps, const vector<uint64_t> &want, bool &identical, Receive receive,
        CallTimes *call_times = nullptr)
    {
        Evaluator ev(app.fixture->context);
        vector<double> copy, mark, calls, wait, read;
        for (int r = 0; r < warmups + reps; r++)
        {
            Phases ph;
            Ciphertext y = gpu_request(app, ev, receive, &ph, r >= warmups ? call_times : nullptr);
            if (r >= warmups)
            {
                copy.push_back(ph.copy_us);
                mark.push_back(ph.mark_us);
                calls.push_back(ph.calls_us);
                wait.push_back(ph.wait_us);
                read.push_back(ph.read_us);
            }
            identical &= words_of(y) == want;
        }
        return { median(copy), median(mark), median(calls), median(wait), median(read) };
    }

    struct Measured
    {
        string name, what;
        double wall_us = 0, cpu_us = 0;
        // Wall time with the input received otherwise (`Receive`), and its transfers.
        double resident_wall_us = 0, loaded_wall_us = 0;
        Phases phases, loaded_phases;
        // In the phases' pass, and in a pass with the input made resident first (so that no
        // call also issues the input's upload).
        vector<CallSummary> calls, resident_calls;
        KernelTime kernel;
        PerRequest traffic, resident_traffic, loaded_traffic;
        bool identical = true;
        vector<uint64_t> want; // SEAL's CPU result
    };

    // The profiled run's half: the GPU requests under the profiler, their kernel time printed.
    void print_app_kernel_time(const App &app, int reps)
    {
        Evaluator ev(app.fixture->context);
        print_requests_kernel_time(app.name, warmups, reps, [&] { gpu_request(app, ev); });
    }

    // The arguments of this program's profiled run for `app`.
    string kernel_run_args(const string &app, const Params &p, int primes, int dim)
    {
        return "--kernel-run " + app + " --log-n " + to_string(p.log_n) + " --primes " + to_string(primes) +
               " --dim " + to_string(dim) + " --reps " + to_string(p.reps);
    }

    Measured measure(const App &app, const Params &p, const AppParams &ap, int primes, int dim, const string &stem)
    {
        Measured m;
        m.name = app.name;
        m.what = app.what;
        Evaluator cpu(app.fixture->context);
        vector<double> cpu_us;
        Ciphertext want;
        for (int r = 0; r < ap.cpu_reps; r++)
        {
            auto t0 = Clock::now();
            want = app.request(cpu, app.input, false);
            cpu_us.push_back(us_since(t0, Clock::now()));
        }
        m.cpu_us = median(cpu_us);
        m.want = words_of(want);
        m.wall_us = time_gpu(app, p.reps, m.want, m.identical, m.traffic);
        m.resident_wall_us = time_gpu(app, p.reps, m.want, m.identical, m.resident_traffic, Receive::resident);
        m.loaded_wall_us = time_gpu(app, p.reps, m.want, m.identical, m.loaded_traffic, Receive::load);
        m.loaded_phases = time_phases(app, p.reps, m.want, m.identical, Receive::load);
        CallTimes call_times;
        m.phases = time_phases(app, p.reps, m.want, m.identical, Receive::copy, &call_times);
        m.calls = summarize(call_times, p.reps);
        CallTimes resident_call_times;
        time_phases(app, p.reps, m.want, m.identical, Receive::resident, &resident_call_times);
        m.resident_calls = summarize(resident_call_times, p.reps);
        m.kernel = profiled_run(kernel_run_args(app.name, p, primes, dim), stem + "-" + app.name + "-profile.json");
        return m;
    }

    struct BatchResult
    {
        int threads;
        double per_s, median_us;
        bool identical;
    };

    // `requests` network requests from `threads` threads (thread t takes requests t, t +
    // threads, ...), each with its own Evaluator, after one warm-up request each.
    BatchResult run_batch(const App &app, int threads, int requests, const vector<uint64_t> &want)
    {
        vector<vector<double>> latency(threads);
        vector<char> identical(threads, 1);
        const double wall = timed_threads(threads, [&](int t, auto start) {
            bool started = false;
            try
            {
                Evaluator ev(app.fixture->context);
                identical[t] &= words_of(gpu_request(app, ev)) == want;
                started = true;
                start();
                for (int r = t; r < requests; r += threads)
                {
                    auto t0 = Clock::now();
                    Ciphertext y = gpu_request(app, ev);
                    latency[t].push_back(us_since(t0, Clock::now()));
                    identical[t] &= words_of(y) == want;
                }
            }
            catch (const exception &e)
            {
                cout << "thread " << t << ": " << e.what() << "\n";
                if (!started)
                {
                    start();
                }
                identical[t] = 0;
            }
        });
        vector<double> all;
        bool all_identical = true;
        for (int t = 0; t < threads; t++)
        {
            all.insert(all.end(), latency[t].begin(), latency[t].end());
            all_identical &= identical[t] != 0;
        }
        return { threads, requests / wall * 1e6, all.empty() ? 0 : median(all), all_identical };
    }

    /* ---- a stream of multiplies into new ciphertexts -------------------------------- */

    struct StreamResult
    {
        double into_new_us, in_place_us; // host time per call (issue), warm medians
        double first_round_us;           // the first round into new objects (cold pool)
        // Per call, in the first round: pool misses, and device allocations from the driver.
        double first_misses, first_device_allocations;
        bool identical;
    };

    // 100 `multiply(a, b, out[i])` into a new vector of ciphertexts against 100
    // `multiply_inplace(x[i], b)` on resident copies, issued back to back (host time per
    // call), then synchronized; 6 rounds each, the first (a pool without buffers of the
    // product's size: first uses) reported apart, the medians of the rest.
    StreamResult measure_stream(int log_n, int primes)
    {
        constexpr int calls = 100, rounds = 6;
        Fixture f(log_n, primes, {});
        vector<double> values(f.slots());
        for (size_t i = 0; i < values.size(); i++)
        {
            values[i] = value(i, 13);
        }
        const Ciphertext a_host = f.encrypt(values), b_host = f.encrypt(values);
        Evaluator ev(f.context);
        Ciphertext want;
        ev.multiply(a_host, b_host, want);
        const vector<uint64_t> want_words = words_of(want);
        Ciphertext a = a_host, b = b_host;
        a.gpu();
        b.gpu();
        ev.negate_inplace(a); // resident: the stream copies on the device
        ev.negate_inplace(a);
        ev.negate_inplace(b);
        ev.negate_inplace(b);
        auto backend = gpu::require_backend("apps");
        backend->synchronize();
        StreamResult r{ 0, 0, 0, 0, 0, true };
        vector<double> into_new, in_place;
        for (int round = 0; round < rounds; round++)
        {
            vector<Ciphertext> out(calls);
            const auto before = seal_opencl::transfer_counts();
            auto t0 = Clock::now();
            for (auto &o : out)
            {
                ev.multiply(a, b, o);
            }
            const double us = us_since(t0, Clock::now()) / calls;
            backend->synchronize();
            if (round == 0)
            {
                r.first_round_us = us;
                const auto after = seal_opencl::transfer_counts();
                r.first_misses = double(after.pool_misses - before.pool_misses) / calls;
                r.first_device_allocations = double(after.device_allocations - before.device_allocations) / calls;
            }
            else
            {
                into_new.push_back(us);
            }
            r.identical &= words_of(out.back()) == want_words;

            vector<Ciphertext> xs(calls, a);
            backend->synchronize();
            t0 = Clock::now();
            for (auto &x : xs)
            {
                ev.multiply_inplace(x, b);
            }
            in_place.push_back(us_since(t0, Clock::now()) / calls);
            backend->synchronize();
            r.identical &= words_of(xs.back()) == want_words;
        }
        r.into_new_us = median(into_new);
        r.in_place_us = median(in_place);
        return r;
    }

    int run(const Params &p, const AppParams &ap)
    {
        const int primes = p.primes > 0 ? p.primes : default_primes(p.log_n);
        const int dim = ap.dim > 0 ? ap.dim : (p.log_n >= 15 ? 64 : 128);
        if (!ap.kernel_run.empty())
        {
            seal_opencl::install_backend();
            const string name = ap.kernel_run == "batch" ? "network" : ap.kernel_run;
            App app = name == "network" ? network_app(p.log_n, primes, dim)
                      : name == "poly"  ? poly_app(p.log_n, primes)
                                        : inner_app(p.log_n, primes);
            print_app_kernel_time(app, p.reps);
            return 0;
        }

        seal_opencl::install_backend();
        const string device = device_name();
        const string stem = p.json.empty() ? "benches/results/apps-" + file_safe(device) + "-2^" + to_string(p.log_n) +
                                                 "-" + today()
                                           : p.json.substr(0, p.json.rfind(".json"));
        const string path = p.json.empty() ? stem + ".json" : p.json;
        cout << "device: " << device << "\nN = 2^" << p.log_n << ", primes {60, 50 x " << primes - 1
             << ", 60} + special prime, scale 2^50"
             << (within_security_table(p.log_n, primes) ? "" : " (beyond SEAL's 128-bit table: no security check)")
             << "; " << p.reps << " requests per GPU figure (medians, after " << warmups << " warm-ups), " << ap.cpu_reps
             << " on the CPU\n\n"
             << fixed << setprecision(1);

        const bool all = ap.app == "all";
        vector<Measured> results;
        vector<BatchResult> batch;
        bool all_identical = true;
        auto report = [&](const Measured &m) {
            all_identical &= m.identical;
            cout << m.name << ": " << m.what << "\n  wall " << m.wall_us << " us/request, kernels " << m.kernel.kernel_us
                 << " us (wall/kernel " << setprecision(2) << m.wall_us / m.kernel.kernel_us << setprecision(1)
                 << "; profiled run: " << m.kernel.launches << " launches, " << m.kernel.host_us
                 << " us host in routed calls, device idle " << m.kernel.idle_us << " us), SEAL CPU " << m.cpu_us << " us (speedup " << m.cpu_us / m.wall_us
                 << "x)  " << (m.identical ? "identical" : "MISMATCH") << "\n  per request: "
                 << setprecision(2) << m.traffic.pool_misses << " pool misses, " << m.traffic.device_allocations
                 << " device and " << m.traffic.pinned_allocations << " page-locked allocations, " << m.traffic.pinned_uploads << " page-locked and "
                 << m.traffic.pageable_uploads << " pageable uploads (" << m.traffic.upload_mb << " MB), "
                 << m.traffic.downloads << " downloads, " << m.traffic.image_copies << " copies of device objects ("
                 << m.traffic.device_copies << " copied on the device)\n  input made resident first: wall "
                 << setprecision(1) << m.resident_wall_us << " us/request (wall/kernel " << setprecision(2)
                 << m.resident_wall_us / m.kernel.kernel_us << "), " << m.resident_traffic.pageable_uploads
                 << " pageable uploads per request\n  input loaded into a marked ciphertext: wall "
                 << setprecision(1) << m.loaded_wall_us << " us/request (wall/kernel " << setprecision(2)
                 << m.loaded_wall_us / m.kernel.kernel_us << "), " << m.loaded_traffic.pageable_uploads
                 << " pageable uploads per request; phases (medians, us): marked " << setprecision(1)
                 << m.loaded_phases.mark_us << ", loaded " << m.loaded_phases.copy_us << ", calls issued "
                 << m.loaded_phases.calls_us << ", wait " << m.loaded_phases.wait_us << ", read "
                 << m.loaded_phases.read_us << "\n"
                 << setprecision(1) << "  phases (medians, us): input copied " << m.phases.copy_us << ", marked "
                 << m.phases.mark_us << ", calls issued " << m.phases.calls_us << ", wait for the device " << m.phases.wait_us
                 << ", result read " << m.phases.read_us
                 << "\n  calls (host us each, median / 90th percentile, x calls per request):" << calls_text(m.calls)
                 << "\n  the same with the input resident first:" << calls_text(m.resident_calls) << "\n"
                 << flush;
            results.push_back(m);
        };
        // First, so that its first round meets a pool without buffers of its sizes.
        bool have_stream = false;
        StreamResult stream{};
        if (all || ap.app == "stream")
        {
            stream = measure_stream(p.log_n, primes);
            have_stream = true;
            all_identical &= stream.identical;
            cout << "stream: 100 multiply into new ciphertexts " << setprecision(2) << stream.into_new_us
                 << " us/call issue, in place " << stream.in_place_us << " (ratio "
                 << stream.into_new_us / stream.in_place_us << "); first round (first uses) " << stream.first_round_us
                 << " us/call, " << stream.first_misses << " pool misses and " << stream.first_device_allocations
                 << " device allocations per call  "
                 << (stream.identical ? "identical" : "MISMATCH") << "\n"
                 << setprecision(1);
        }
        if (all || ap.app == "network" || ap.app == "batch")
        {
            App app = network_app(p.log_n, primes, dim);
            Measured m = measure(app, p, ap, primes, dim, stem);
            report(m);
            if (all || ap.app == "batch")
            {
                cout << "batch: " << ap.requests << " network requests; ceiling from kernel time "
                     << 1e6 / m.kernel.kernel_us << " requests/s\n";
                for (int threads : { 1, 4, 8 })
                {
                    BatchResult b = run_batch(app, threads, ap.requests, m.want);
                    all_identical &= b.identical;
                    cout << "  " << threads << " thread(s): " << b.per_s << " requests/s, median latency " << b.median_us
                         << " us  " << (b.identical ? "identical" : "MISMATCH") << "\n"
                         << flush;
                    batch.push_back(b);
                }
            }
        }
        if (all || ap.app == "poly")
        {
            report(measure(poly_app(p.log_n, primes), p, ap, primes, dim, stem));
        }
        if (all || ap.app == "inner")
        {
            report(measure(inner_app(p.log_n, primes), p, ap, primes, dim, stem));
        }

        ostringstream out;
        out << fixed << setprecision(2) << "{\n  \"bench\": \"apps\",\n  \"device\": \"" << device << "\",\n  \"date\": \""
            << today() << "\",\n  " << settings_json() << ",\n  \"log_n\": " << p.log_n << ",\n  \"data_primes\": " << primes
            << ",\n  \"dim\": " << dim << ",\n  \"reps\": " << p.reps << ",\n  \"cpu_reps\": " << ap.cpu_reps
            << ",\n  \"apps\": [\n";
        for (size_t i = 0; i < results.size(); i++)
        {
            const auto &m = results[i];
            out << "    {\"name\": \"" << m.name << "\", \"what\": \"" << m.what << "\", \"wall_us\": " << m.wall_us
                << ", \"kernel_us\": " << m.kernel.kernel_us << ", \"wall_over_kernel\": " << m.wall_us / m.kernel.kernel_us
                << ", \"profiled_host_us\": " << m.kernel.host_us << ", \"launches\": " << m.kernel.launches
                << ", \"profiled_idle_us\": " << m.kernel.idle_us
                << ", \"cpu_us\": " << m.cpu_us << ", \"speedup\": " << m.cpu_us / m.wall_us
                << ", \"resident_input_wall_us\": " << m.resident_wall_us
                << ", \"resident_input_pageable_uploads\": " << m.resident_traffic.pageable_uploads
                << ", \"loaded_input_wall_us\": " << m.loaded_wall_us
                << ", \"loaded_input_pageable_uploads\": " << m.loaded_traffic.pageable_uploads
                << ", \"loaded_input_phases_us\": " << phases_json(m.loaded_phases, "load")
                << ", \"phases_us\": " << phases_json(m.phases, "copy")
                << ", \"calls\": " << calls_json(m.calls)
                << ", \"resident_input_calls\": " << calls_json(m.resident_calls)
                << ", \"per_request\": {\"pool_misses\": " << m.traffic.pool_misses
                << ", \"device_allocations\": " << m.traffic.device_allocations
                << ", \"pinned_allocations\": " << m.traffic.pinned_allocations
                << ", \"pinned_uploads\": " << m.traffic.pinned_uploads
                << ", \"pageable_uploads\": " << m.traffic.pageable_uploads
                << ", \"upload_mb\": " << m.traffic.upload_mb << ", \"downloads\": " << m.traffic.downloads
                << ", \"image_copies\": " << m.traffic.image_copies
                << ", \"device_copies\": " << m.traffic.device_copies << "}"
                << ", \"identical\": " << (m.identical ? "true" : "false") << "}"
                << (i + 1 < results.size() ? ",\n" : "\n");
        }
        out << "  ],\n  \"batch\": [\n";
        for (size_t i = 0; i < batch.size(); i++)
        {
            const auto &b = batch[i];
            out << "    {\"threads\": " << b.threads << ", \"requests\": " << ap.requests
                << ", \"requests_per_s\": " << b.per_s << ", \"median_us\": " << b.median_us
                << ", \"identical\": " << (b.identical ? "true" : "false") << "}" << (i + 1 < batch.size() ? ",\n" : "\n");
        }
        out << "  ]";
        if (have_stream)
        {
            out << ",\n  \"stream\": {\"into_new_us\": " << stream.into_new_us << ", \"in_place_us\": " << stream.in_place_us
                << ", \"first_round_us\": " << stream.first_round_us
                << ", \"first_round_misses_per_call\": " << stream.first_misses
                << ", \"first_round_device_allocations_per_call\": " << stream.first_device_allocations
                << ", \"identical\": " << (stream.identical ? "true" : "false") << "}";
        }
        out << "\n}\n";
        return write_results(path, out.str(), all_identical);
    }
} // namespace

int main(int argc, char **argv)
{
    AppParams ap;
    const vector<Option> options{
        { "--app", true,
          [&](const string &v) {
              if (v != "all" && v != "network" && v != "poly" && v != "inner" && v != "batch" && v != "stream")
              {
                  throw invalid_argument(v);
              }
              ap.app = v;
          } },
        { "--dim", true,
          [&](const string &v) {
              ap.dim = stoi(v);
              if (ap.dim < 2 || (ap.dim & (ap.dim - 1)))
              {
                  throw invalid_argument(v);
              }
          } },
        { "--cpu-reps", true, [&](const string &v) { ap.cpu_reps = max(1, stoi(v)); } },
        { "--requests", true, [&](const string &v) { ap.requests = max(1, stoi(v)); } },
        { "--kernel-run", true, [&](const string &v) { ap.kernel_run = v; } },
    };
    return bench_main(
        argc, argv, 20,
        "apps [--app network|poly|inner|batch|stream|all] [--log-n 15] [--primes P] [--dim D] [--reps 20] [--cpu-reps 3] "
        "[--requests 100] [--json PATH]",
        [&](const Params &p) { return run(p, ap); }, options);
}
