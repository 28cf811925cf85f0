// How long the host spends on routed SEAL calls, measured as a C++ program drives the backend:
// ciphertexts marked .gpu() and already resident, no profiler, SEAL's C++ API.
//
// Per operation: the host time to issue one call (from entering the Evaluator call to its
// return), the whole call followed by a synchronization, and a stream of 100 independent calls
// issued back to back and then synchronized (per call). Then MulLin and Rotate throughput with
// 1, 2, 4, 8 threads (each its own Evaluator and operands) on 1 device and on every device the
// backend uses
// (SEAL_OPENCL_DEVICES; thread t bound to device t mod d with seal_opencl::bind_thread_to_device,
// its operands made there). And the driver's own floor on the same device:
// the host time to enqueue an empty kernel, without and with an event, from 1 thread and from
// 8 threads at once (one in-order queue each; batches short enough that the driver's queue
// never fills), and from 1 thread while a long kernel runs on another queue or ahead on its
// own; and the host time of the other driver calls the backend makes (clSetKernelArg,
// reference counts of queues and buffers, a queue query). The thread table also
// gives each step's host time per call (where a second thread's time goes). Every GPU
// result is compared word for word with SEAL's CPU result.
//
//   host_path [--log-n 15|13|...] [--primes P] [--reps R] [--json PATH]
//
// --log-n 15 (and 16): primes {60, 50 x 7, 60}, scale 2^50; 14: {60, 50 x 4, 60}; 13: {50, 30,
// 30, 30, 50}, scale 2^30; 12: {36, 30, 36}. --primes P: {60, 50 x (P - 1), 60} at any N. Times are medians over R calls (default 200).
// Exit status 0 when every result matched, 1 on a mismatch, 2 on an error.

#include "bench_common.h"
#include "seal/seal.h"
#include "seal_opencl.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <iomanip>
#include <iostream>
#include <mutex>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

using namespace bench;
using namespace seal;
using namespace std;

namespace
{
    void synchronize()
    {
        gpu::require_backend("host_path")->synchronize();
    }

    /* ---- the driver's floor: empty kernels through OpenCL directly ----------------------- */

    struct DriverFloor
    {
        string device;
        double launch_us = 0;            // host time per enqueue, no event
        double launch_event_us = 0;      // host time per enqueue with an event (released at once)
        double launches_per_s_1 = 0;     // 1 thread: 1 / its host time per enqueue
        double launches_per_s_8 = 0;     // 8 threads enqueueing at once, one queue each
        // Host time per enqueue from 1 thread while a long kernel runs on another queue of
        // the same device, and behind one on the thread's own queue (does a busy queue make
        // the driver's enqueue dearer? the question the thread scaling asks).
        double launch_other_busy_us = 0;
        double launch_same_busy_us = 0;
        double busy_kernel_us = 0; // how long the long kernel ran (it must outlast the batch)
        // Host time of one clSetKernelArg, a buffer and a 32-bit value: the backend sets a
        // launch's per-call arguments before each enqueue, on top of the floor above.
        double set_arg_buffer_us = 0;
        double set_arg_uint_us = 0;
        // A clRetain + clRelease of a queue, and of a buffer; one clGetCommandQueueInfo
        // (CL_QUEUE_DEVICE).
        double retain_release_queue_us = 0;
        double retain_release_buffer_us = 0;
        double queue_device_us = 0;
    };

    // The backend's queues per tile as this run set them (threads take one each, round robin).
    string queues_setting()
    {
        const char *v = getenv("SEAL_OPENCL_QUEUES");
        // The default is DEFAULT_QUEUES in src/device/mod.rs.
        return v && *v ? string(v) : string("default (2)");
    }

    DriverFloor measure_driver_floor()
    {
        DriverFloor floor;
        cl_device_id device = default_device();
        char name[256] = {};
        clGetDeviceInfo(device, CL_DEVICE_NAME, sizeof(name) - 1, name, nullptr);
        floor.device = name;
        cl_int status;
        cl_context ctx = clCreateContext(nullptr, 1, &device, nullptr, nullptr, &status);
        cl_check(status, "clCreateContext");
        const char *source =
            "__kernel void empty(__global ulong *p) {}\n"
            "__kernel void args(__global ulong *a, __global ulong *b, __global ulong *c, __global ulong *d,\n"
            "                   uint i, uint j, uint k, uint l) {}\n"
            "__kernel void busy(__global ulong *p, ulong n) {\n"
            "  ulong x = p[0];\n"
            "  for (ulong i = 0; i < n; i++) x = x * 6364136223846793005UL + 1442695040888963407UL;\n"
            "  if (x == 42) p[1] = x;\n"
            "}\n";
        cl_program program = clCreateProgramWithSource(ctx, 1, &source, nullptr, &status);
        cl_check(status, "clCreateProgramWithSource");
        cl_check(clBuildProgram(program, 1, &device, "", nullptr, nullptr), "clBuildProgram");
        cl_mem buffer = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &status);
        cl_check(status, "clCreateBuffer");

        // Host time per enqueue from `threads` threads at once, each its own queue and kernel
        // object, in rounds: every thread enqueues 64 launches, the round's time runs from
        // its start until the last thread has enqueued, then every queue is finished before
        // the next round (so the driver's queue never fills: a full queue would make the
        // enqueue wait for the device and measure the device instead). Returns the median
        // host time per launch of one thread and the launches per second all threads
        // together issue (threads * 64 / median round time).
        auto run = [&](int threads, bool events) {
            const int rounds = 60, batch = 64;
            vector<double> per_launch, round_us;
            mutex per_launch_mutex;
            atomic<int> ready{ 0 }, started{ -1 }, enqueued{ 0 }, finished{ 0 };
            vector<thread> pool;
            for (int t = 0; t < threads; t++)
            {
                pool.emplace_back([&] {
                    cl_int s;
                    cl_command_queue q = clCreateCommandQueue(ctx, device, 0, &s);
                    cl_kernel k = clCreateKernel(program, "empty", &s);
                    clSetKernelArg(k, 0, sizeof(cl_mem), &buffer);
                    size_t global = 1;
                    for (int i = 0; i < 100; i++) // warm-up
                    {
                        clEnqueueNDRangeKernel(q, k, 1, nullptr, &global, nullptr, 0, nullptr, nullptr);
                    }
                    clFinish(q);
                    ready++;
                    for (int r = 0; r < rounds; r++)
                    {
                        while (started.load() < r)
                        {
                            this_thread::yield();
                        }
                        auto t0 = Clock::now();
                        for (int i = 0; i < batch; i++)
                        {
                            cl_event e;
                            clEnqueueNDRangeKernel(
                                q, k, 1, nullptr, &global, nullptr, 0, nullptr, events ? &e : nullptr);
                            if (events)
                            {
                                clReleaseEvent(e);
                            }
                        }
                        const double us = us_since(t0, Clock::now()) / batch;
                        enqueued++;
                        clFinish(q);
                        {
                            lock_guard<mutex> lock(per_launch_mutex);
                            per_launch.push_back(us);
                        }
                        finished++;
                    }
                    clReleaseKernel(k);
                    clReleaseCommandQueue(q);
                });
            }
            while (ready < threads)
            {
                this_thread::yield();
            }
            for (int r = 0; r < rounds; r++)
            {
                auto t0 = Clock::now();
                started = r;
                while (enqueued.load() < threads * (r + 1))
                {
                    this_thread::yield();
                }
                round_us.push_back(us_since(t0, Clock::now()));
                while (finished.load() < threads * (r + 1))
                {
                    this_thread::yield();
                }
            }
            for (auto &th : pool)
            {
                th.join();
            }
            return make_pair(median(per_launch), threads * batch / median(round_us) * 1e6);
        };
        floor.launch_us = run(1, false).first;
        floor.launch_event_us = run(1, true).first;
        floor.launches_per_s_1 = run(1, false).second;
        floor.launches_per_s_8 = run(8, false).second;

        // One thread enqueues a batch of empty kernels on queue `mine` right after a long
        // kernel went to queue `busy_queue` (another queue, or `mine` itself); medians over
        // rounds. The long kernel's own time is measured alone first, so that the report
        // can show it outlasted the batch.
        {
            cl_int s;
            cl_command_queue mine = clCreateCommandQueue(ctx, device, 0, &s);
            cl_check(s, "clCreateCommandQueue");
            cl_command_queue other = clCreateCommandQueue(ctx, device, 0, &s);
            cl_check(s, "clCreateCommandQueue");
            cl_kernel empty = clCreateKernel(program, "empty", &s);
            cl_check(s, "clCreateKernel");
            cl_kernel busy = clCreateKernel(program, "busy", &s);
            cl_check(s, "clCreateKernel");
            clSetKernelArg(empty, 0, sizeof(cl_mem), &buffer);
            clSetKernelArg(busy, 0, sizeof(cl_mem), &buffer);
            cl_ulong iterations = 400000;
            clSetKernelArg(busy, 1, sizeof(cl_ulong), &iterations);
            size_t one = 1;
            const int rounds = 20, batch = 64;
            vector<double> busy_us;
            for (int r = 0; r < rounds; r++)
            {
                auto t0 = Clock::now();
                clEnqueueNDRangeKernel(other, busy, 1, nullptr, &one, nullptr, 0, nullptr, nullptr);
                clFinish(other);
                busy_us.push_back(us_since(t0, Clock::now()));
            }
            floor.busy_kernel_us = median(busy_us);
            auto behind = [&](cl_command_queue busy_queue) {
                vector<double> per_launch;
                for (int r = 0; r < rounds; r++)
                {
                    clEnqueueNDRangeKernel(busy_queue, busy, 1, nullptr, &one, nullptr, 0, nullptr, nullptr);
                    clFlush(busy_queue);
                    auto t0 = Clock::now();
                    for (int i = 0; i < batch; i++)
                    {
                        clEnqueueNDRangeKernel(mine, empty, 1, nullptr, &one, nullptr, 0, nullptr, nullptr);
                    }
                    per_launch.push_back(us_since(t0, Clock::now()) / batch);
                    clFinish(mine);
                    clFinish(busy_queue);
                }
                return median(per_launch);
            };
            floor.launch_other_busy_us = behind(other);
            floor.launch_same_busy_us = behind(mine);

            // The host time of one driver call `call(i)`, the median over rounds of 64 calls:
            // calls the backend makes besides its enqueues (arguments, reference counts of
            // queues and buffers, queue queries). Arguments alternate between two buffers (and
            // two values) so that every call changes them, as successive launches on different
            // ciphertexts do.
            cl_kernel args = clCreateKernel(program, "args", &s);
            cl_check(s, "clCreateKernel");
            cl_mem second = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, nullptr, &s);
            cl_check(s, "clCreateBuffer");
            auto per_call = [&](const function<void(cl_uint)> &call) {
                vector<double> us;
                for (int r = 0; r < rounds; r++)
                {
                    auto t0 = Clock::now();
                    for (cl_uint i = 0; i < batch; i++)
                    {
                        call(i);
                    }
                    us.push_back(us_since(t0, Clock::now()) / batch);
                }
                return median(us);
            };
            floor.set_arg_buffer_us =
                per_call([&](cl_uint i) { clSetKernelArg(args, i % 4, sizeof(cl_mem), i % 2 ? &buffer : &second); });
            floor.set_arg_uint_us = per_call([&](cl_uint i) { clSetKernelArg(args, 4 + i % 4, sizeof(cl_uint), &i); });
            floor.retain_release_queue_us = per_call([&](cl_uint) {
                clRetainCommandQueue(mine);
                clReleaseCommandQueue(mine);
            });
            floor.retain_release_buffer_us = per_call([&](cl_uint) {
                clRetainMemObject(second);
                clReleaseMemObject(second);
            });
            floor.queue_device_us = per_call([&](cl_uint) {
                cl_device_id d;
                clGetCommandQueueInfo(mine, CL_QUEUE_DEVICE, sizeof(d), &d, nullptr);
            });
            clReleaseMemObject(second);
            clReleaseKernel(args);
            clReleaseKernel(busy);
            clReleaseKernel(empty);
            clReleaseCommandQueue(other);
            clReleaseCommandQueue(mine);
        }
        clReleaseMemObject(buffer);
        clReleaseProgram(program);
        clReleaseContext(ctx);
        return floor;
    }

    /* ---- SEAL through the backend --------------------------------------------------------- */

    struct Fixture
    {
        explicit Fixture(const Params &p) : context(make_context(p.log_n, p.primes)), keygen(context), encoder(context)
        {
            keygen.create_relin_keys(relin_keys);
            keygen.create_galois_keys(vector<int>{ 1 }, galois_keys);
            PublicKey pk;
            keygen.create_public_key(pk);
            Encryptor encryptor(context, pk);
            scale = pow(2.0, bit_sizes(p.log_n, p.primes)[1]);
            vector<double> values(encoder.slot_count());
            for (size_t i = 0; i < values.size(); i++)
            {
                values[i] = sin(static_cast<double>(i));
            }
            encoder.encode(values, scale, plain);
            encryptor.encrypt(plain, a);
            encryptor.encrypt(plain, b);
        }

        SEALContext context;
        KeyGenerator keygen;
        CKKSEncoder encoder;
        RelinKeys relin_keys;
        GaloisKeys galois_keys;
        double scale = 0;
        Plaintext plain;
        Ciphertext a, b;
    };

    // The second operands of a call: on the CPU the fixture's, on the device resident copies.
    struct Operands
    {
        const Ciphertext &b;
        const Plaintext &plain;
    };

    // One routed operation: `call` is timed on an operand built by `operand`.
    struct Op
    {
        string name;
        function<void(const Fixture &, Evaluator &, Ciphertext &, const Operands &)> call;
        // The operand `call` starts from, computed on the CPU from the fixture.
        function<Ciphertext(const Fixture &, Evaluator &)> operand;
    };

    vector<Op> operations()
    {
        auto fresh = [](const Fixture &f, Evaluator &) { return f.a; };
        auto product = [](const Fixture &f, Evaluator &ev) {
            Ciphertext x = f.a;
            ev.multiply_inplace(x, f.b);
            return x;
        };
        auto relinearized = [](const Fixture &f, Evaluator &ev) {
            Ciphertext x = f.a;
            ev.multiply_inplace(x, f.b);
            ev.relinearize_inplace(x, f.relin_keys);
            return x;
        };
        using O = const Operands &;
        return {
            { "add", [](const Fixture &, Evaluator &ev, Ciphertext &x, O o) { ev.add_inplace(x, o.b); }, fresh },
            { "multiply", [](const Fixture &, Evaluator &ev, Ciphertext &x, O o) { ev.multiply_inplace(x, o.b); },
              fresh },
            { "multiply_plain",
              [](const Fixture &, Evaluator &ev, Ciphertext &x, O o) { ev.multiply_plain_inplace(x, o.plain); },
              fresh },
            { "relinearize",
              [](const Fixture &f, Evaluator &ev, Ciphertext &x, O) { ev.relinearize_inplace(x, f.relin_keys); },
              product },
            { "MulLin",
              [](const Fixture &f, Evaluator &ev, Ciphertext &x, O o) {
                  ev.multiply_inplace(x, o.b);
                  ev.relinearize_inplace(x, f.relin_keys);
              },
              fresh },
            { "rescale_to_next",
              [](const Fixture &, Evaluator &ev, Ciphertext &x, O) { ev.rescale_to_next_inplace(x); }, relinearized },
            { "rotate_vector 1",
              [](const Fixture &f, Evaluator &ev, Ciphertext &x, O) {
                  ev.rotate_vector_inplace(x, 1, f.galois_keys);
              },
              fresh },
        };
    }

    struct OpResult
    {
        string name;
        double issue_us, call_us, stream_us, stream_issue_us;
        bool identical;
    };

    // The operand on the device: marked, uploaded and current there (its image the only copy).
    Ciphertext resident(Evaluator &ev, const Ciphertext &source)
    {
        Ciphertext x = source;
        x.gpu();
        ev.negate_inplace(x);
        ev.negate_inplace(x);
        return x;
    }

    OpResult measure(const Fixture &f, const Op &op, int reps)
    {
        Evaluator ev(f.context);
        // SEAL's CPU path: nothing here is marked.
        const Ciphertext source = op.operand(f, ev);
        Ciphertext want = source;
        op.call(f, ev, want, Operands{ f.b, f.plain });
        // The device path: every operand resident (keys upload on first use, in the warm-up).
        const Ciphertext device_source = resident(ev, source);
        const Ciphertext device_b = resident(ev, f.b);
        Plaintext device_plain = f.plain;
        device_plain.gpu();
        const Operands device{ device_b, device_plain };

        Ciphertext x;
        vector<double> issue, call;
        for (int r = 0; r < reps + 3; r++)
        {
            x = device_source; // a device-to-device copy, enqueued before the clock starts
            synchronize();
            auto t0 = Clock::now();
            op.call(f, ev, x, device);
            auto t1 = Clock::now();
            synchronize();
            auto t2 = Clock::now();
            if (r >= 3) // warm-up: programs, keys, pool
            {
                issue.push_back(us_since(t0, t1));
                call.push_back(us_since(t0, t2));
            }
        }
        const bool identical = words_of(x) == words_of(want);

        const int stream = 100;
        vector<double> stream_us, stream_issue_us;
        for (int round = 0; round < 5; round++)
        {
            vector<Ciphertext> xs(stream, device_source);
            synchronize();
            auto t0 = Clock::now();
            for (auto &y : xs)
            {
                op.call(f, ev, y, device);
            }
            auto t1 = Clock::now();
            synchronize();
            auto t2 = Clock::now();
            stream_issue_us.push_back(us_since(t0, t1) / stream);
            stream_us.push_back(us_since(t0, t2) / stream);
        }
        return { op.name, median(issue), median(call), median(stream_us), median(stream_issue_us), identical };
    }

    // The work a thread repeats: MulLin (a copy, multiply, relinearize) or Rotate (a copy,
    // rotate_vector by 1), from the fixture's a and b into x.
    enum class Work
    {
        MulLin,
        Rotate
    };

    const char *work_name(Work w)
    {
        return w == Work::MulLin ? "MulLin" : "Rotate";
    }

    // Host time a thread spent in each call of its work, summed over its rounds: the copy,
    // then multiply and relinearize (MulLin) or rotate_vector (Rotate, whose last is 0).
    using StepUs = array<double, 3>;

    void do_work(
        Evaluator &ev, const Fixture &f, Work w, const Ciphertext &a, const Ciphertext &b, Ciphertext &x,
        StepUs *step_us = nullptr)
    {
        auto t0 = Clock::now();
        x = a;
        auto t1 = Clock::now();
        if (w == Work::MulLin)
        {
            ev.multiply_inplace(x, b);
        }
        else
        {
            ev.rotate_vector_inplace(x, 1, f.galois_keys);
        }
        auto t2 = Clock::now();
        if (w == Work::MulLin)
        {
            ev.relinearize_inplace(x, f.relin_keys);
        }
        if (step_us)
        {
            auto t3 = Clock::now();
            (*step_us)[0] += us_since(t0, t1);
            (*step_us)[1] += us_since(t1, t2);
            (*step_us)[2] += us_since(t2, t3);
        }
    }

    struct ThreadResult
    {
        Work work;
        int threads;
        int devices;
        double per_s;
        bool identical;
        StepUs step_us; // host us per call of each step, the mean over every thread's rounds
    };

    // `threads` threads, thread t bound to device t mod `devices`, each with its own Evaluator
    // and operands made resident on its device (and the keys uploaded there by one round of
    // the work) before the clock starts, then `per_thread` rounds of `work` each.
    ThreadResult measure_threads(const Fixture &f, Work work, int threads, int devices, int per_thread)
    {
        Evaluator cpu(f.context);
        Ciphertext want;
        do_work(cpu, f, work, f.a, f.b, want);
        const vector<uint64_t> want_words = words_of(want);

        vector<Ciphertext> last(threads);
        vector<StepUs> step_us(threads, StepUs{});
        atomic<int> ready{ 0 };
        atomic<bool> go{ false };
        vector<thread> pool;
        for (int t = 0; t < threads; t++)
        {
            pool.emplace_back([&, t] {
                seal_opencl::bind_thread_to_device(t % devices);
                Evaluator ev(f.context);
                const Ciphertext a = resident(ev, f.a), b = resident(ev, f.b);
                Ciphertext x;
                do_work(ev, f, work, a, b, x);
                ready++;
                while (!go)
                {
                    this_thread::yield();
                }
                for (int i = 0; i < per_thread; i++)
                {
                    do_work(ev, f, work, a, b, x, &step_us[t]);
                }
                last[t] = x;
            });
        }
        while (ready < threads)
        {
            this_thread::yield();
        }
        synchronize();
        auto t0 = Clock::now();
        go = true;
        for (auto &th : pool)
        {
            th.join();
        }
        synchronize();
        const double wall = us_since(t0, Clock::now());
        bool identical = true;
        for (auto &x : last)
        {
            identical &= words_of(x) == want_words;
        }
        StepUs mean{};
        for (const auto &u : step_us)
        {
            for (size_t i = 0; i < mean.size(); i++)
            {
                mean[i] += u[i] / (threads * per_thread);
            }
        }
        return { work, threads, devices, threads * per_thread / wall * 1e6, identical, mean };
    }

    int run(const Params &p)
    {
        const DriverFloor floor = measure_driver_floor();
        cout << "device: " << floor.device << "\nSEAL_OPENCL_QUEUES: " << queues_setting() << "\n"
             << fixed << setprecision(1) << "driver floor (empty kernel, host time per enqueue): " << floor.launch_us
             << " us per launch, " << floor.launch_event_us << " us with an event; " << floor.launches_per_s_1
             << " launches/s from 1 thread, " << floor.launches_per_s_8 << " from 8 threads (own queues); "
             << floor.launch_other_busy_us << " us per launch while another queue runs a "
             << floor.busy_kernel_us << " us kernel, " << floor.launch_same_busy_us << " behind it on the same queue; "
             << setprecision(2) << floor.set_arg_buffer_us << " us per clSetKernelArg of a buffer, "
             << floor.set_arg_uint_us << " of a uint; " << floor.retain_release_queue_us
             << " us per retain + release of a queue, " << floor.retain_release_buffer_us << " of a buffer; "
             << floor.queue_device_us << " us per clGetCommandQueueInfo\n"
             << setprecision(1);

        seal_opencl::install_backend();
        Fixture f(p);
        cout << "N = 2^" << p.log_n << ", " << f.context.first_context_data()->parms().coeff_modulus().size()
             << " data primes, " << p.reps << " calls per figure (medians), no profiler\n\n";
        cout << left << setw(18) << "operation" << right << setw(10) << "issue us" << setw(10) << "call us"
             << setw(12) << "stream us" << setw(14) << "stream issue" << "  check\n";
        vector<OpResult> results;
        bool all_identical = true;
        for (const auto &op : operations())
        {
            OpResult r = measure(f, op, p.reps);
            all_identical &= r.identical;
            cout << left << setw(18) << r.name << right << setw(10) << r.issue_us << setw(10) << r.call_us << setw(12)
                 << r.stream_us << setw(14) << r.stream_issue_us << "  " << (r.identical ? "identical" : "MISMATCH")
                 << "\n";
            results.push_back(r);
        }
        cout << "(issue: host time inside one call; call: issue + synchronize; stream: 100 independent calls "
                "issued back to back, then synchronized, per call; stream issue: their issue time per call)\n\n";

        // Columns: 1 device, then 2, 4, 8 up to every device the backend uses, and all of them.
        const int device_count = seal_opencl::device_count();
        vector<int> device_counts{ 1 };
        for (int d = 2; d < device_count; d *= 2)
        {
            device_counts.push_back(d);
        }
        if (device_count > 1)
        {
            device_counts.push_back(device_count);
        }
        vector<ThreadResult> threads;
        for (Work work : { Work::MulLin, Work::Rotate })
        {
            measure_threads(f, work, 1, 1, 100); // warm-up of the thread path
            cout << work_name(work)
                 << "/s by threads (rows) and devices (columns; thread t bound to device t mod d, each thread "
                 << (work == Work::MulLin ? "a copy, multiply, relinearize" : "a copy, rotate_vector by 1")
                 << " with its own Evaluator and operands on its device)\n"
                 << left << setw(8) << "threads" << right;
            for (int d : device_counts)
            {
                cout << setw(12) << (to_string(d) + (d == 1 ? " device" : " devices"));
            }
            cout << "  check\n";
            vector<pair<int, string>> steps; // per thread count: host us per call of each step, per device count
            for (int t : { 1, 2, 4, 8 })
            {
                cout << left << setw(8) << t << right;
                bool row_identical = true;
                ostringstream row_steps;
                row_steps << fixed << setprecision(1);
                for (int d : device_counts)
                {
                    ThreadResult r = measure_threads(f, work, t, d, 400);
                    row_identical &= r.identical;
                    cout << setw(12) << r.per_s;
                    row_steps << "  " << r.step_us[0] << " / " << r.step_us[1];
                    if (work == Work::MulLin)
                    {
                        row_steps << " / " << r.step_us[2];
                    }
                    threads.push_back(r);
                }
                all_identical &= row_identical;
                cout << "  " << (row_identical ? "identical" : "MISMATCH") << "\n";
                steps.emplace_back(t, row_steps.str());
            }
            cout << "host us per call in those rounds (mean over every thread's calls; per device count): copy / "
                 << (work == Work::MulLin ? "multiply / relinearize" : "rotate_vector") << "\n";
            for (const auto &[t, row] : steps)
            {
                cout << left << setw(8) << t << right << row << "\n";
            }
            cout << "\n";
        }

        string path = p.json.empty() ? "benches/results/host_path-" + file_safe(floor.device) + "-2^" +
                                           to_string(p.log_n) +
                                           (p.primes > 0 ? "-" + to_string(p.primes) + "primes" : "") + "-" +
                                           today() + ".json"
                                     : p.json;
        ostringstream out;
        out << fixed << setprecision(2) << "{\n  \"bench\": \"host_path\",\n  \"device\": \"" << floor.device
            << "\",\n  \"date\": \"" << today() << "\",\n  " << settings_json() << ",\n  \"log_n\": " << p.log_n << ",\n  \"data_primes\": "
            << f.context.first_context_data()->parms().coeff_modulus().size() << ",\n  \"reps\": " << p.reps
            << ",\n  \"queues\": \"" << queues_setting() << "\""
            << ",\n  \"driver_floor\": {\"launch_us\": " << floor.launch_us
            << ", \"launch_event_us\": " << floor.launch_event_us
            << ", \"launches_per_s_1_thread\": " << floor.launches_per_s_1
            << ", \"launches_per_s_8_threads\": " << floor.launches_per_s_8
            << ", \"launch_other_queue_busy_us\": " << floor.launch_other_busy_us
            << ", \"launch_same_queue_busy_us\": " << floor.launch_same_busy_us
            << ", \"busy_kernel_us\": " << floor.busy_kernel_us
            << ", \"set_arg_buffer_us\": " << floor.set_arg_buffer_us
            << ", \"set_arg_uint_us\": " << floor.set_arg_uint_us
            << ", \"retain_release_queue_us\": " << floor.retain_release_queue_us
            << ", \"retain_release_buffer_us\": " << floor.retain_release_buffer_us
            << ", \"queue_device_us\": " << floor.queue_device_us << "},\n  \"operations\": [\n";
        for (size_t i = 0; i < results.size(); i++)
        {
            const auto &r = results[i];
            out << "    {\"name\": \"" << r.name << "\", \"issue_us\": " << r.issue_us << ", \"call_us\": " << r.call_us
                << ", \"stream_us\": " << r.stream_us << ", \"stream_issue_us\": " << r.stream_issue_us
                << ", \"identical\": " << (r.identical ? "true" : "false") << "}"
                << (i + 1 < results.size() ? ",\n" : "\n");
        }
        out << "  ],\n  \"threads\": [\n";
        for (size_t i = 0; i < threads.size(); i++)
        {
            out << "    {\"op\": \"" << work_name(threads[i].work) << "\", \"threads\": " << threads[i].threads
                << ", \"devices\": " << threads[i].devices << ", \"per_s\": " << threads[i].per_s
                << ", \"copy_us\": " << threads[i].step_us[0] << ", \"first_us\": " << threads[i].step_us[1]
                << ", \"second_us\": " << threads[i].step_us[2] << ", \"identical\": " << (threads[i].identical ? "true" : "false") << "}"
                << (i + 1 < threads.size() ? ",\n" : "\n");
        }
        out << "  ]\n}\n";
        return write_results(path, out.str(), all_identical);
    }
} // namespace

int main(int argc, char **argv)
{
    return bench_main(argc, argv, 200, "host_path [--log-n 15] [--primes P] [--reps 200] [--json PATH]", run);
}
