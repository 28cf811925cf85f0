// Helpers shared by the C++ benchmarks (host_path, request): clocks and medians, the device
// the backend picks by default, SEAL parameters per N, result file names.
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "seal/seal.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <exception>
#include <fstream>
#include <iostream>
#include <stdexcept>
#include <string>
#include <vector>

namespace bench
{
    using Clock = std::chrono::steady_clock;
    using namespace std;

    inline double us_since(Clock::time_point start, Clock::time_point end)
    {
        return chrono::duration<double, micro>(end - start).count();
    }

    inline double median(vector<double> v)
    {
        sort(v.begin(), v.end());
        return v[v.size() / 2];
    }

    inline vector<uint64_t> words_of(const seal::Ciphertext &ct)
    {
        const uint64_t *data = ct.data();
        return vector<uint64_t>(data, data + ct.size() * ct.poly_modulus_degree() * ct.coeff_modulus_size());
    }

    inline void cl_check(cl_int status, const char *what)
    {
        if (status != CL_SUCCESS)
        {
            throw runtime_error(string(what) + " failed with OpenCL status " + to_string(status));
        }
    }

    // The device the backend picks by default: the first GPU of any platform, else the first
    // device (PoCL on a machine without a GPU).
    inline cl_device_id default_device()
    {
        cl_uint count = 0;
        cl_check(clGetPlatformIDs(0, nullptr, &count), "clGetPlatformIDs");
        vector<cl_platform_id> platforms(count);
        cl_check(clGetPlatformIDs(count, platforms.data(), nullptr), "clGetPlatformIDs");
        cl_device_id fallback = nullptr;
        for (auto platform : platforms)
        {
            cl_device_id device;
            if (clGetDeviceIDs(platform, CL_DEVICE_TYPE_GPU, 1, &device, nullptr) == CL_SUCCESS)
            {
                return device;
            }
            if (!fallback && clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, nullptr) == CL_SUCCESS)
            {
                fallback = device;
            }
        }
        if (!fallback)
        {
            throw runtime_error("no OpenCL device");
        }
        return fallback;
    }

    // The name of the device the backend picks by default.
    inline string device_name()
    {
        char name[256] = {};
        clGetDeviceInfo(default_device(), CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);
        return name;
    }

    // The primes per N (the last one is the special prime), within SEAL's 128-bit security
    // table; the scale is 2^(bits of the second prime).
    // The primes of the benchmarks at N = 2^log_n; `data_primes` > 0 asks for {60, 50 x
    // (data_primes - 1), 60} instead (data_primes data primes and the special prime).
    inline vector<int> bit_sizes(int log_n, int data_primes = 0)
    {
        if (data_primes > 0)
        {
            vector<int> bits(data_primes + 1, 50);
            bits.front() = bits.back() = 60;
            return bits;
        }
        switch (log_n)
        {
        case 12:
            return { 36, 30, 36 };
        case 13:
            return { 50, 30, 30, 30, 50 };
        case 14:
            return { 60, 50, 50, 50, 50, 60 };
        default:
            return { 60, 50, 50, 50, 50, 50, 50, 50, 60 };
        }
    }

    // The CKKS context for N = 2^log_n and `bit_sizes`. SEAL's security tables stop at
    // N = 2^15, so larger N run with the check off (as the Rust benches do).
    inline seal::SEALContext make_context(int log_n, int data_primes = 0)
    {
        seal::EncryptionParameters parms(seal::scheme_type::ckks);
        const size_t n = size_t(1) << log_n;
        parms.set_poly_modulus_degree(n);
        parms.set_coeff_modulus(seal::CoeffModulus::Create(n, bit_sizes(log_n, data_primes)));
        return seal::SEALContext(
            parms, true, log_n > 15 ? seal::sec_level_type::none : seal::sec_level_type::tc128);
    }

    inline string today()
    {
        time_t now = time(nullptr);
        char buf[16];
        strftime(buf, sizeof(buf), "%Y-%m-%d", gmtime(&now));
        return buf;
    }

    inline string file_safe(string s)
    {
        for (char &c : s)
        {
            if (!isalnum(static_cast<unsigned char>(c)))
            {
                c = '_';
            }
        }
        return s;
    }

    // The command line of the benchmarks: [--log-n N] [--reps R] [--json PATH].
    struct Params
    {
        int log_n = 15;
        // Data primes (`--primes`); 0: the default set of `bit_sizes(log_n)`.
        int primes = 0;
        int reps = 100;
        string json;
    };

    // Parses the command line over `p`'s defaults; false (with `usage` on stderr) for anything
    // else.
    inline bool parse_params(int argc, char **argv, Params &p, const char *usage)
    {
        for (int i = 1; i < argc; i++)
        {
            const string arg = argv[i];
            if (i + 1 < argc && arg == "--log-n")
            {
                p.log_n = stoi(argv[++i]);
            }
            else if (i + 1 < argc && arg == "--primes")
            {
                p.primes = max(1, stoi(argv[++i]));
            }
            else if (i + 1 < argc && arg == "--reps")
            {
                p.reps = max(1, stoi(argv[++i]));
            }
            else if (i + 1 < argc && arg == "--json")
            {
                p.json = argv[++i];
            }
            else
            {
                cerr << "usage: " << usage << "\n";
                return false;
            }
        }
        return true;
    }

    // Writes a benchmark's JSON to `path` (saying where, or that it could not) and its verdict;
    // returns the exit status: 0 when every GPU result was identical to SEAL's CPU result, 1 not.
    inline int write_results(const string &path, const string &json, bool all_identical)
    {
        ofstream out(path);
        if (out << json)
        {
            cout << "\nwrote " << path << "\n";
        }
        else
        {
            cout << "\n(could not write " << path << ")\n";
        }
        cout << (all_identical ? "RESULT: every GPU result identical to SEAL's CPU result\n"
                               : "RESULT: MISMATCH between GPU and CPU results\n");
        return all_identical ? 0 : 1;
    }

    // A benchmark's main: `run` with the command line parsed over the defaults (`reps`
    // repetitions); exit status 2 for a bad command line or an error `run` threw (printed).
    template <class Run>
    int bench_main(int argc, char **argv, int reps, const char *usage, Run run)
    {
        Params p;
        p.reps = reps;
        if (!parse_params(argc, argv, p, usage))
        {
            return 2;
        }
        try
        {
            return run(p);
        }
        catch (const exception &e)
        {
            cout << "RESULT: ERROR: " << e.what() << "\n";
            return 2;
        }
    }
} // namespace bench
