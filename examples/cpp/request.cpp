// A server's request through SEAL's C++ API: two ciphertexts arrive in host memory,
// are marked .gpu(), multiplied, relinearized and rescaled on the device, and the result is read
// back on the host. And the raw bandwidth of uploads and downloads of whole ciphertexts, from
// the backend's page-locked host memory (where marked objects' words live, seal-patch 0007)
// and from ordinary pageable memory.
//
//   request [--log-n 15|13|...] [--primes P] [--reps R] [--json PATH]
//
// Request: each thread owns two marked input objects and a client's two ciphertexts. A request
// starts with the client's words written into the inputs (the "receive", timed apart: a
// server's network read would write them there) and ends when the result's words are readable
// on the host: multiply_inplace(in1, in2), relinearize_inplace(in1), rescale_to_next_inplace(in1),
// in1.data(). Median latency and requests per second with 1, 2, 4, 8 threads (each its own
// Evaluator and objects), and the median host time of each step (the multiply starts the
// uploads; the read waits for the device and the download). Bandwidth: one ciphertext of 2
// polynomials at the first level for N = 2^13 .. 2^16, uploaded to / downloaded from one
// device image, medians over R transfers.
// Every GPU result is compared word for word with SEAL's CPU result.
//
// Exit status 0 when every result matched, 1 on a mismatch, 2 on an error.

#include "bench_common.h"
#include "seal/seal.h"
#include "seal_opencl.h"

#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <sstream>
#include <functional>
#include <iomanip>
#include <iostream>
#include <memory>
#include <thread>

using namespace bench;
using namespace seal;
using namespace std;

namespace
{
    /* ---- raw bandwidth ----------------------------------------------------------------- */

    struct Bandwidth
    {
        int log_n;
        size_t bytes;
        double upload_pinned, upload_pageable, download_pinned, download_pageable; // GB/s
    };

    // Upload and download bandwidth of a first-level ciphertext of size 2 at N = 2^log_n, from
    // and to words in the backend's host pool (page-locked) and in a std::vector (pageable).
    Bandwidth measure_bandwidth(int log_n, int reps)
    {
        const size_t n = size_t(1) << log_n;
        const size_t count = 2 * n * (bit_sizes(log_n).size() - 1);
        const size_t bytes = count * sizeof(uint64_t);
        auto backend = gpu::require_backend("request");
        DynArray<uint64_t> pinned(count, backend->host_pool() ? backend->host_pool() : MemoryManager::GetPool());
        vector<uint64_t> pageable(count);
        for (size_t i = 0; i < count; i++)
        {
            pinned[i] = pageable[i] = i * 0x9E3779B97F4A7C15ULL;
        }
        auto image = backend->create_image(pageable.data(), count);
        backend->synchronize();

        auto gbs = [&](const function<void()> &transfer) {
            vector<double> us;
            for (int r = 0; r < reps + 2; r++)
            {
                auto t0 = Clock::now();
                transfer();
                backend->synchronize();
                if (r >= 2)
                {
                    us.push_back(us_since(t0, Clock::now()));
                }
            }
            return bytes / median(us) / 1e3;
        };
        Bandwidth b{ log_n, bytes, 0, 0, 0, 0 };
        b.upload_pinned = gbs([&] { backend->upload(*image, pinned.cbegin(), count); });
        b.upload_pageable = gbs([&] { backend->upload(*image, pageable.data(), count); });
        b.download_pinned = gbs([&] { backend->download(*image, pinned.begin(), count); });
        b.download_pageable = gbs([&] { backend->download(*image, pageable.data(), count); });
        for (size_t i = 0; i < count; i++)
        {
            if (pinned[i] != i * 0x9E3779B97F4A7C15ULL || pageable[i] != pinned[i])
            {
                throw logic_error("request: downloaded words differ from the uploaded ones");
            }
        }
        return b;
    }

    /* ---- requests ---------------------------------------------------------------------- */

    struct Fixture
    {
        Fixture(int log_n, int primes) : context(make_context(log_n, primes)), keygen(context), encoder(context)
        {
            keygen.create_relin_keys(relin_keys);
            keygen.create_public_key(public_key);
            Encryptor encryptor(context, public_key);
            const double scale = pow(2.0, bit_sizes(log_n, primes)[1]);
            vector<double> values(encoder.slot_count());
            for (size_t i = 0; i < values.size(); i++)
            {
                values[i] = sin(static_cast<double>(i));
            }
            Plaintext plain;
            encoder.encode(values, scale, plain);
            encryptor.encrypt(plain, a);
            encryptor.encrypt(plain, b);
            Evaluator cpu(context);
            want = a;
            cpu.multiply_inplace(want, b);
            cpu.relinearize_inplace(want, relin_keys);
            cpu.rescale_to_next_inplace(want);
        }

        SEALContext context;
        KeyGenerator keygen;
        CKKSEncoder encoder;
        RelinKeys relin_keys;
        PublicKey public_key;
        Ciphertext a, b, want; // the client's ciphertexts and SEAL's CPU result
    };

    // The steps of a request, timed apart on the issuing thread: where its latency goes.
    const char *const step_names[] = { "multiply", "relinearize", "rescale", "read" };
    constexpr int steps = 4;

    struct RequestResult
    {
        int threads;
        double per_s, median_us, receive_us;
        double step_us[steps]; // medians of each step's host time
        bool identical;
    };

    RequestResult measure_requests(const Fixture &f, int threads, int per_thread)
    {
        const vector<uint64_t> want = words_of(f.want);
        vector<vector<double>> latency(threads), receive(threads);
        vector<array<vector<double>, steps>> step(threads);
        vector<char> identical(threads, 0);
        const double wall = timed_threads(threads, [&](int t, auto start) {
            Evaluator ev(f.context);
            // The client's words, marked but never used on the device (host newer), so that
            // copying them into the inputs is a host copy that keeps the inputs marked.
            Ciphertext client_a = f.a, client_b = f.b;
            client_a.gpu();
            client_b.gpu();
            Ciphertext in1 = client_a, in2 = client_b;
            in1.gpu(); // moves the copies' words into the backend's host pool
            in2.gpu();
            start();
            for (int i = 0; i < per_thread + 2; i++)
            {
                auto t0 = Clock::now();
                in1 = client_a;
                in2 = client_b;
                auto t1 = Clock::now();
                ev.multiply_inplace(in1, in2); // starts both uploads
                auto ts0 = Clock::now();
                ev.relinearize_inplace(in1, f.relin_keys);
                auto ts1 = Clock::now();
                ev.rescale_to_next_inplace(in1);
                auto ts2 = Clock::now();
                const Ciphertext &result = in1;
                const uint64_t *words = result.data(); // the host read: waits for the download
                auto t2 = Clock::now();
                if (i >= 2) // warm-up: programs, keys, pools
                {
                    receive[t].push_back(us_since(t0, t1));
                    latency[t].push_back(us_since(t1, t2));
                    step[t][0].push_back(us_since(t1, ts0));
                    step[t][1].push_back(us_since(ts0, ts1));
                    step[t][2].push_back(us_since(ts1, ts2));
                    step[t][3].push_back(us_since(ts2, t2));
                }
                if (i == per_thread + 1)
                {
                    identical[t] = equal(want.begin(), want.end(), words);
                }
            }
        });
        vector<double> all_latency, all_receive;
        array<vector<double>, steps> all_step;
        bool all_identical = true;
        for (int t = 0; t < threads; t++)
        {
            all_latency.insert(all_latency.end(), latency[t].begin(), latency[t].end());
            all_receive.insert(all_receive.end(), receive[t].begin(), receive[t].end());
            for (int s = 0; s < steps; s++)
            {
                all_step[s].insert(all_step[s].end(), step[t][s].begin(), step[t][s].end());
            }
            all_identical &= identical[t] != 0;
        }
        // Requests per second over the whole run, warm-up included in the wall time but not in
        // the count: a slight underestimate.
        RequestResult r{ threads, threads * per_thread / wall * 1e6, median(all_latency), median(all_receive), {},
                         all_identical };
        for (int s = 0; s < steps; s++)
        {
            r.step_us[s] = median(all_step[s]);
        }
        return r;
    }

    int run(const Params &p)
    {
        seal_opencl::install_backend();
        const string device = device_name();
        cout << "device: " << device << "\n" << fixed << setprecision(1);

        cout << "\nbandwidth of one ciphertext (2 polynomials, first level), GB/s, median of " << p.reps << "\n"
             << setw(6) << "N" << setw(10) << "MB" << setw(16) << "upload pinned" << setw(18) << "upload pageable"
             << setw(18) << "download pinned" << setw(20) << "download pageable\n";
        vector<Bandwidth> bandwidth;
        for (int log_n : { 13, 14, 15, 16 })
        {
            Bandwidth b = measure_bandwidth(log_n, p.reps);
            cout << setw(6) << ("2^" + to_string(log_n)) << setw(10) << b.bytes / 1e6 << setw(16) << b.upload_pinned
                 << setw(18) << b.upload_pageable << setw(18) << b.download_pinned << setw(19) << b.download_pageable
                 << "\n";
            bandwidth.push_back(b);
        }

        Fixture f(p.log_n, p.primes);
        cout << "\nrequest at N = 2^" << p.log_n << ", " << f.context.first_context_data()->parms().coeff_modulus().size()
             << " data primes: upload 2, multiply, relinearize, rescale, download 1 (host read)\n";
        vector<RequestResult> requests;
        bool all_identical = true;
        measure_requests(f, 1, 5); // warm-up of the thread path
        for (int t : { 1, 2, 4, 8 })
        {
            RequestResult r = measure_requests(f, t, p.reps);
            all_identical &= r.identical;
            cout << setw(2) << t << " thread(s): " << setw(9) << r.per_s << " requests/s, median latency " << setw(8)
                 << r.median_us << " us (receive, apart: " << r.receive_us << " us)  "
                 << (r.identical ? "identical" : "MISMATCH") << "\n             steps (median us):";
            for (int s = 0; s < steps; s++)
            {
                cout << " " << step_names[s] << " " << r.step_us[s];
            }
            cout << "\n";
            requests.push_back(r);
        }

        string path = p.json.empty() ? "benches/results/request-" + file_safe(device) + "-2^" + to_string(p.log_n) +
                                           "-" + today() + ".json"
                                     : p.json;
        ostringstream out;
        out << fixed << setprecision(2) << "{\n  \"bench\": \"request\",\n  \"device\": \"" << device
            << "\",\n  \"date\": \"" << today() << "\",\n  " << settings_json() << ",\n  \"log_n\": " << p.log_n << ",\n  \"reps\": " << p.reps
            << ",\n  \"bandwidth\": [\n";
        for (size_t i = 0; i < bandwidth.size(); i++)
        {
            const auto &b = bandwidth[i];
            out << "    {\"log_n\": " << b.log_n << ", \"bytes\": " << b.bytes
                << ", \"upload_pinned_gbs\": " << b.upload_pinned << ", \"upload_pageable_gbs\": " << b.upload_pageable
                << ", \"download_pinned_gbs\": " << b.download_pinned
                << ", \"download_pageable_gbs\": " << b.download_pageable << "}"
                << (i + 1 < bandwidth.size() ? ",\n" : "\n");
        }
        out << "  ],\n  \"requests\": [\n";
        for (size_t i = 0; i < requests.size(); i++)
        {
            const auto &r = requests[i];
            out << "    {\"threads\": " << r.threads << ", \"requests_per_s\": " << r.per_s
                << ", \"median_us\": " << r.median_us << ", \"receive_us\": " << r.receive_us << ", \"steps_us\": {";
            for (int s = 0; s < steps; s++)
            {
                out << (s ? ", " : "") << "\"" << step_names[s] << "\": " << r.step_us[s];
            }
            out << "}, \"identical\": " << (r.identical ? "true" : "false") << "}"
                << (i + 1 < requests.size() ? ",\n" : "\n");
        }
        out << "  ]\n}\n";
        return write_results(path, out.str(), all_identical);
    }
} // namespace

int main(int argc, char **argv)
{
    return bench_main(argc, argv, 100, "request [--log-n 15] [--primes P] [--reps 100] [--json PATH]", run);
}
