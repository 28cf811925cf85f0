// Helpers shared by the C++ benchmarks (host_path, request, apps): clocks and medians, the
// device the backend picks by default, SEAL parameters per N, the command line, result file
// names, and the kernel time of a program's work measured in a profiled run of itself.
#pragma once

#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

#include "seal/seal.h"
#include "seal_opencl.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <stdexcept>
#include <atomic>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <unistd.h> // environ

namespace bench
{
    using Clock = std::chrono::steady_clock;
    using namespace std;

    inline double us_since(Clock::time_point start, Clock::time_point end)
    {
        return chrono::duration<double, micro>(end - start).count();
    }

    // The value below which a fraction `q` of `v` lies (the element at index q * size of
    // the sorted values); median(v) is quantile(v, 0.5).
    inline double quantile(vector<double> v, double q)
    {
        sort(v.begin(), v.end());
        return v[min(v.size() - 1, size_t(q * double(v.size())))];
    }

    inline double median(vector<double> v)
    {
        return quantile(move(v), 0.5);
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

    // Whether the primes of `bit_sizes(log_n, data_primes)` fit SEAL's 128-bit security table
    // (which stops at N = 2^15).
    inline bool within_security_table(int log_n, int data_primes = 0)
    {
        const vector<int> bits = bit_sizes(log_n, data_primes);
        int total = 0;
        for (int b : bits)
        {
            total += b;
        }
        return total <= seal::CoeffModulus::MaxBitCount(size_t(1) << log_n, seal::sec_level_type::tc128);
    }

    // The CKKS context for N = 2^log_n and `bit_sizes`, with SEAL's 128-bit security check
    // where the primes fit its table (`within_security_table`) and without it elsewhere (N >
    // 2^15, as the Rust benches do, or small test sizes with many primes).
    inline seal::SEALContext make_context(int log_n, int data_primes = 0)
    {
        seal::EncryptionParameters parms(seal::scheme_type::ckks);
        const size_t n = size_t(1) << log_n;
        parms.set_poly_modulus_degree(n);
        parms.set_coeff_modulus(seal::CoeffModulus::Create(n, bit_sizes(log_n, data_primes)));
        return seal::SEALContext(
            parms, true,
            within_security_table(log_n, data_primes) ? seal::sec_level_type::tc128 : seal::sec_level_type::none);
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

    // The command line of the benchmarks: [--log-n N] [--primes P] [--reps R] [--json PATH],
    // and a benchmark's own options (`Option`).
    struct Params
    {
        int log_n = 15;
        // Data primes (`--primes`); 0: the default set of `bit_sizes(log_n)`.
        int primes = 0;
        int reps = 100;
        string json;
    };

    // A benchmark's own option: `--name VALUE` given to `set` (which throws
    // std::invalid_argument or std::out_of_range for a bad value), or a flag without a
    // value (`set` gets "").
    struct Option
    {
        string name;
        bool takes_value;
        function<void(const string &)> set;
    };

    // Parses the command line over `p`'s defaults and `options`; false (with `usage` on
    // stderr) for anything else.
    inline bool parse_params(int argc, char **argv, Params &p, const char *usage, const vector<Option> &options = {})
    {
        for (int i = 1; i < argc; i++)
        {
            const string arg = argv[i];
            auto own = find_if(options.begin(), options.end(), [&](const Option &o) { return arg == o.name; });
            if (own != options.end() && (!own->takes_value || i + 1 < argc))
            {
                try
                {
                    own->set(own->takes_value ? argv[++i] : "");
                }
                catch (const logic_error &)
                {
                    cerr << "bad value for " << arg << "\nusage: " << usage << "\n";
                    return false;
                }
            }
            else if (i + 1 < argc && arg == "--log-n")
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

    // `"settings": {...}`: every SEAL_OPENCL_* and SEAL_GPU_* variable of the environment and
    // its value (quotes and backslashes escaped, control characters left out), sorted by name,
    // so that a result says which variant it measured ({}: the defaults).
    inline string settings_json()
    {
        vector<pair<string, string>> set;
        for (char **e = environ; e && *e; e++)
        {
            const string entry = *e;
            const size_t eq = entry.find('=');
            if (eq != string::npos && (entry.rfind("SEAL_OPENCL_", 0) == 0 || entry.rfind("SEAL_GPU_", 0) == 0))
            {
                set.emplace_back(entry.substr(0, eq), entry.substr(eq + 1));
            }
        }
        sort(set.begin(), set.end());
        const auto quoted = [](const string &v) {
            string q = "\"";
            for (char c : v)
            {
                if (c == '"' || c == '\\')
                {
                    q += '\\';
                }
                if (static_cast<unsigned char>(c) >= 0x20)
                {
                    q += c;
                }
            }
            return q + "\"";
        };
        string json = "\"settings\": {";
        for (size_t i = 0; i < set.size(); i++)
        {
            json += (i ? ", " : "") + quoted(set[i].first) + ": " + quoted(set[i].second);
        }
        return json + "}";
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
    // repetitions) and `options`; exit status 2 for a bad command line or an error `run` threw
    // (printed).
    template <class Run>
    int bench_main(int argc, char **argv, int reps, const char *usage, Run run, const vector<Option> &options = {})
    {
        Params p;
        p.reps = reps;
        if (!parse_params(argc, argv, p, usage, options))
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

    // Runs `body(t, start)` on threads t = 0 .. threads - 1; each calls `start()` once, when its
    // setup is done (also when the setup failed), and `start` returns once every thread has
    // called it. Returns the wall time in us from then until every body returned.
    template <class Body>
    double timed_threads(int threads, Body body)
    {
        atomic<int> ready{ 0 };
        atomic<bool> go{ false };
        auto start = [&] {
            ready++;
            while (!go)
            {
                this_thread::yield();
            }
        };
        vector<thread> pool;
        for (int t = 0; t < threads; t++)
        {
            pool.emplace_back([&, t] { body(t, start); });
        }
        while (ready < threads)
        {
            this_thread::yield();
        }
        auto t0 = Clock::now();
        go = true;
        for (auto &th : pool)
        {
            th.join();
        }
        return us_since(t0, Clock::now());
    }

    // The device time of work this program does, measured in a second run of itself under the
    // profiler (whose events make every launch dearer on the host, so wall times come from a
    // run without it): per loop, as `seal_opencl::profile_operation` reports it.
    struct KernelTime
    {
        double kernel_us = 0;
        double host_us = 0;
        double launches = 0;
        double idle_us = 0;
    };

    // The line a profiled run prints for its parent (`print_kernel_time`, `profiled_run`).
    constexpr const char *kernel_time_tag = "KERNEL-TIME ";

    // In the profiled run: groups the launches since the last call as `name` (`loops` loops,
    // `wall_us` each) and prints them for the parent.
    inline void print_kernel_time(const string &name, double wall_us, unsigned loops)
    {
        const seal_opencl::ProfiledWork w = seal_opencl::profile_operation(name, wall_us, loops);
        cout << kernel_time_tag << w.kernel_us << " " << w.host_us << " " << w.launches << " " << w.idle_us << endl;
    }

    // The profiled run's half of an application benchmark: `request()` `warmups` times, then
    // `reps` times timed, under the profiler, their kernel time printed for the parent
    // (`profiled_run`).
    template <class Request>
    void print_requests_kernel_time(const string &name, int warmups, int reps, Request request)
    {
        seal_opencl::profile_operation("setup", 0, 1);
        for (int r = 0; r < warmups; r++)
        {
            request();
        }
        seal_opencl::profile_operation("warm-up", 0, warmups);
        vector<double> us;
        for (int r = 0; r < reps; r++)
        {
            auto t0 = Clock::now();
            request();
            us.push_back(us_since(t0, Clock::now()));
        }
        print_kernel_time(name, median(us), reps);
    }

    inline string shell_quoted(const string &s)
    {
        string q = "'";
        for (char c : s)
        {
            q += c == '\'' ? string("'\\''") : string(1, c);
        }
        return q + "'";
    }

    // Runs this program again with `args` (shell words, quoted by the caller) and
    // SEAL_OPENCL_PROFILE=`profile` (the profile it writes at exit: JSON, CSV and a trace), and
    // returns the KernelTime its `print_kernel_time` printed. Throws std::runtime_error with
    // the run's output when it fails or prints none.
    inline KernelTime profiled_run(const string &args, const string &profile)
    {
        const string self = filesystem::read_symlink("/proc/self/exe").string();
        const string command =
            "SEAL_OPENCL_PROFILE=" + shell_quoted(profile) + " " + shell_quoted(self) + " " + args + " 2>&1";
        FILE *pipe = popen(command.c_str(), "r");
        if (!pipe)
        {
            throw runtime_error("cannot start the profiled run: " + command);
        }
        string output;
        char buf[4096];
        while (fgets(buf, sizeof(buf), pipe))
        {
            output += buf;
        }
        const int status = pclose(pipe);
        istringstream lines(output);
        KernelTime t;
        bool found = false;
        for (string line; getline(lines, line);)
        {
            if (line.rfind(kernel_time_tag, 0) == 0)
            {
                istringstream(line.substr(string(kernel_time_tag).size())) >>
                    t.kernel_us >> t.host_us >> t.launches >> t.idle_us;
                found = true;
            }
        }
        if (status != 0 || !found)
        {
            throw runtime_error("the profiled run failed (" + command + "):\n" + output);
        }
        return t;
    }
} // namespace bench
