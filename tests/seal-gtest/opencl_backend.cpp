// Runs SEAL's googletest suite through seal-opencl: with SEAL_OPENCL_INSTALL=1 a global test
// environment installs the OpenCL backend before the first test (after static
// initialization, so SEAL's own globals exist) behind a thin decorator that counts the
// operations SEAL routes to it. With SEAL_GPU_ROUTE_ALL=1 every Ciphertext the tests create
// is marked, so SEAL's CKKS tests run on the device and check its results with their own
// assertions.
//
// At the end the environment fails the run if the backend is no longer installed (a test
// uninstalled it, so the tests after it ran on the CPU) or, with
// SEAL_OPENCL_EXPECT_ROUTED=1, if nothing was routed (the run proved nothing about the
// backend).

#include "seal/seal.h"
#include "seal_opencl.h"
#include "gtest/gtest.h"

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <iostream>
#include <memory>

using namespace seal;
using namespace std;

namespace
{
    bool env_on(const char *name)
    {
        const char *value = getenv(name);
        return value && *value && strcmp(value, "0") != 0;
    }

    // Forwards everything to the installed backend; counts the operation virtuals.
    class CountingBackend : public gpu::Backend
    {
    public:
        explicit CountingBackend(shared_ptr<gpu::Backend> inner) : inner_(move(inner))
        {}

        atomic<uint64_t> routed{ 0 };

        unique_ptr<gpu::DeviceImage> create_image(const uint64_t *data, size_t uint64_count) override
        {
            return inner_->create_image(data, uint64_count);
        }

        void upload(gpu::DeviceImage &image, const uint64_t *data, size_t uint64_count) override
        {
            inner_->upload(image, data, uint64_count);
        }

        void download(const gpu::DeviceImage &image, uint64_t *data, size_t uint64_count) override
        {
            inner_->download(image, data, uint64_count);
        }

        unique_ptr<gpu::DeviceImage> clone_image(const gpu::DeviceImage &image) override
        {
            return inner_->clone_image(image);
        }

        void start_compute_frame() override
        {
            inner_->start_compute_frame();
        }

        void end_compute_frame() override
        {
            inner_->end_compute_frame();
        }

        void synchronize() override
        {
            inner_->synchronize();
        }

        using Data = SEALContext::ContextData;

        void negate_inplace(const SEALContext &c, const Data &d, Ciphertext &e) override
        {
            routed++;
            inner_->negate_inplace(c, d, e);
        }

        void add_inplace(const SEALContext &c, const Data &d, Ciphertext &e1, const Ciphertext &e2) override
        {
            routed++;
            inner_->add_inplace(c, d, e1, e2);
        }

        void sub_inplace(const SEALContext &c, const Data &d, Ciphertext &e1, const Ciphertext &e2) override
        {
            routed++;
            inner_->sub_inplace(c, d, e1, e2);
        }

        void multiply_inplace(const SEALContext &c, const Data &d, Ciphertext &e1, const Ciphertext &e2) override
        {
            routed++;
            inner_->multiply_inplace(c, d, e1, e2);
        }

        void square_inplace(const SEALContext &c, const Data &d, Ciphertext &e) override
        {
            routed++;
            inner_->square_inplace(c, d, e);
        }

        void relinearize_inplace(
            const SEALContext &c, const Data &d, Ciphertext &e, const RelinKeys &keys, size_t destination_size) override
        {
            routed++;
            inner_->relinearize_inplace(c, d, e, keys, destination_size);
        }

        void rescale_to_next(const SEALContext &c, const Data &d, const Ciphertext &e, Ciphertext &dest) override
        {
            routed++;
            inner_->rescale_to_next(c, d, e, dest);
        }

        void mod_switch_to_next(const SEALContext &c, const Data &d, const Ciphertext &e, Ciphertext &dest) override
        {
            routed++;
            inner_->mod_switch_to_next(c, d, e, dest);
        }

        void mod_switch_to_next_inplace(const SEALContext &c, const Data &d, Plaintext &plain) override
        {
            routed++;
            inner_->mod_switch_to_next_inplace(c, d, plain);
        }

        void multiply_plain_inplace(const SEALContext &c, const Data &d, Ciphertext &e, const Plaintext &p) override
        {
            routed++;
            inner_->multiply_plain_inplace(c, d, e, p);
        }

        void add_plain_inplace(const SEALContext &c, const Data &d, Ciphertext &e, const Plaintext &p) override
        {
            routed++;
            inner_->add_plain_inplace(c, d, e, p);
        }

        void sub_plain_inplace(const SEALContext &c, const Data &d, Ciphertext &e, const Plaintext &p) override
        {
            routed++;
            inner_->sub_plain_inplace(c, d, e, p);
        }

        void apply_galois_inplace(
            const SEALContext &c, const Data &d, Ciphertext &e, uint32_t galois_elt, const GaloisKeys &keys) override
        {
            routed++;
            inner_->apply_galois_inplace(c, d, e, galois_elt, keys);
        }

        void transform_to_ntt_inplace(const SEALContext &c, const Data &d, Ciphertext &e) override
        {
            routed++;
            inner_->transform_to_ntt_inplace(c, d, e);
        }

        void transform_from_ntt_inplace(const SEALContext &c, const Data &d, Ciphertext &e) override
        {
            routed++;
            inner_->transform_from_ntt_inplace(c, d, e);
        }

        bool is_transparent(const Ciphertext &encrypted, const char *operation) override
        {
            return inner_->is_transparent(encrypted, operation);
        }

        void release_keys(uint64_t key_object) noexcept override
        {
            inner_->release_keys(key_object);
        }

        // The images are the inner backend's.
        bool owns(const gpu::DeviceImage &image) const noexcept override
        {
            return inner_->owns(image);
        }

        void on_cpu_fallback(const char *operation) override
        {
            inner_->on_cpu_fallback(operation);
        }

    private:
        shared_ptr<gpu::Backend> inner_;
    };

    class OpenclBackendEnvironment : public ::testing::Environment
    {
    public:
        void SetUp() override
        {
            try
            {
                seal_opencl::install_backend();
            }
            catch (const exception &e)
            {
                // Running the suite on the CPU instead would pass and prove nothing.
                cerr << "seal-opencl: cannot install the OpenCL backend: " << e.what() << endl;
                exit(2);
            }
            auto installed = gpu::backend();
            if (!installed)
            {
                cerr << "seal-opencl: install_backend() returned, but no backend is installed" << endl;
                exit(2);
            }
            counter_ = make_shared<CountingBackend>(move(installed));
            gpu::set_backend(counter_);
            cout << "seal-opencl: OpenCL backend installed; SEAL_GPU_ROUTE_ALL "
                 << (gpu::route_all() ? "on" : "off") << endl;
        }

        void TearDown() override
        {
            const uint64_t routed = counter_->routed.load();
            cout << "seal-opencl: operations routed to the backend: " << routed << endl;
            if (gpu::backend() != counter_)
            {
                ADD_FAILURE() << "a test replaced or uninstalled the OpenCL backend, so the tests after it "
                                 "ran on the CPU; run GpuBackendTest.* separately";
            }
            else if (env_on("SEAL_OPENCL_EXPECT_ROUTED") && routed == 0)
            {
                ADD_FAILURE() << "no operation was routed to the backend (is SEAL_GPU_ROUTE_ALL=1 set?)";
            }
            // Before static destruction, so the backend goes while the Rust runtime and the
            // OpenCL driver are surely still alive.
            gpu::set_backend(nullptr);
            counter_.reset();
        }

    private:
        shared_ptr<CountingBackend> counter_;
    };

    // gtest takes ownership; registering from a static initializer is what gtest documents for
    // environments of a main() one cannot edit (SEAL's testrunner.cpp).
    ::testing::Environment *const registered = env_on("SEAL_OPENCL_INSTALL")
                                                   ? ::testing::AddGlobalTestEnvironment(new OpenclBackendEnvironment)
                                                   : nullptr;
} // namespace
