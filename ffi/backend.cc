// The C++ half of the SEAL backend: a seal::gpu::Backend whose virtuals turn SEAL objects
// into plain views (parameters, word counts, device images) and call the Rust backend
// (src/seal_backend) through the cxx bridge declared in src/ffi/mod.rs.
//
// What lives here and not in Rust: everything that needs SEAL's C++ types (Ciphertext,
// SEALContext, KSwitchKeys) and the translation of Rust errors into the exception types
// SEAL throws. The Rust side never sees a SEAL object.

#include "seal-opencl/ffi/seal_opencl.h"
#include "seal-opencl/src/ffi/mod.rs.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "seal/ciphertext.h"
#include "seal/context.h"
#include "seal/evaluator.h"
#include "seal/galoiskeys.h"
#include "seal/gpu/access.h"
#include "seal/gpu/backend.h"
#include "seal/gpu/hostpool.h"
#include "seal/kswitchkeys.h"
#include "seal/plaintext.h"
#include "seal/relinkeys.h"
#include "seal/util/common.h"

namespace seal_opencl
{
    namespace
    {
        using seal::Ciphertext;
        using seal::Plaintext;
        using seal::SEALContext;
        using seal::gpu::Access;

        // Rust errors arrive as rust::Error whose message starts with the C++ exception type
        // SEAL would throw (src/ffi/mod.rs writes the tag).
        [[noreturn]] void rethrow_as_seal(const rust::Error &e)
        {
            const std::string message = e.what();
            const std::pair<const char *, int> tags[] = { { "[invalid_argument] ", 0 },
                                                          { "[logic_error] ", 1 },
                                                          { "[runtime_error] ", 2 } };
            for (const auto &tag : tags)
            {
                const std::size_t len = std::strlen(tag.first);
                if (message.compare(0, len, tag.first) == 0)
                {
                    const std::string text = "seal-opencl: " + message.substr(len);
                    switch (tag.second)
                    {
                    case 0:
                        throw std::invalid_argument(text);
                    case 1:
                        throw std::logic_error(text);
                    default:
                        throw std::runtime_error(text);
                    }
                }
            }
            throw std::runtime_error("seal-opencl: " + message);
        }

        template <class F>
        auto translated(F &&f) -> decltype(f())
        {
            try
            {
                return f();
            }
            catch (const rust::Error &e)
            {
                rethrow_as_seal(e);
            }
        }

        // The device image of a SEAL object: owns the Rust image (a pooled device buffer).
        class RustImage final : public seal::gpu::DeviceImage
        {
        public:
            // `owner` is the backend that made it: SEAL never hands an image of one backend
            // instance to another (after an uninstall and install, buffers of the old OpenCL
            // context would be used with the new one).
            RustImage(rust::Box<GpuImage> image, const seal::gpu::Backend &owner)
                : seal::gpu::DeviceImage(owner), image_(std::move(image))
            {}

            std::size_t uint64_count() const noexcept override
            {
                return image_->len();
            }

            void wait_upload() const noexcept override
            {
                image_->wait_upload();
            }

            GpuImage &get() noexcept
            {
                return *image_;
            }

            const GpuImage &get() const noexcept
            {
                return *image_;
            }

        private:
            rust::Box<GpuImage> image_;
        };

        // The backend's page-locked memory as SEAL's HostPool allocates from it (seal-patch 0007).
        // Addresses cross the bridge as integers: the Rust side owns the mapped blocks.
        class RustHostMemory final : public seal::gpu::HostMemory
        {
        public:
            explicit RustHostMemory(rust::Box<PinnedHostRef> pinned) : pinned_(std::move(pinned))
            {}

            void *allocate(std::size_t byte_count) noexcept override
            {
                return reinterpret_cast<void *>(pinned_->allocate(byte_count));
            }

            void deallocate(void *data, std::size_t byte_count) noexcept override
            {
                (void)byte_count; // the Rust side knows its blocks' sizes
                pinned_->deallocate(reinterpret_cast<std::size_t>(data));
            }

        private:
            rust::Box<PinnedHostRef> pinned_;
        };

        const GpuImage &image_of(const seal::gpu::DeviceImage *image)
        {
            const auto *ours = dynamic_cast<const RustImage *>(image);
            if (!ours)
            {
                throw std::logic_error("seal-opencl: operand has no device image of this backend");
            }
            return ours->get();
        }

        const GpuImage &image_of(const Ciphertext &encrypted)
        {
            return image_of(Access::image(encrypted));
        }

        const GpuImage &image_of(const Plaintext &plain)
        {
            return image_of(Access::image(plain));
        }

        GpuImage &mutable_image_of(const seal::gpu::DeviceImage *image)
        {
            // The image is owned by a non-const SEAL object whenever this is called.
            return const_cast<GpuImage &>(image_of(image));
        }

        // The parameter set (identified by the key level's parms_id) and the level of one call.
        LevelParams level_params(const SEALContext &context, const SEALContext::ContextData &context_data)
        {
            const auto &key_data = *context.key_context_data();
            LevelParams p;
            const auto &id = key_data.parms_id();
            for (std::size_t i = 0; i < 4; i++)
            {
                p.key_parms_id[i] = id[i];
            }
            p.log_n = static_cast<std::uint32_t>(seal::util::get_power_of_two(key_data.parms().poly_modulus_degree()));
            for (const auto &q : key_data.parms().coeff_modulus())
            {
                p.key_moduli.push_back(q.value());
            }
            p.using_keyswitching = context.using_keyswitching();
            p.primes = context_data.parms().coeff_modulus().size();
            return p;
        }

        // Identifies key_vector `index` of a KSwitchKeys object and the version of its words
        // (seal-patch 0006: the object's id is never reused, its version changes with every
        // write access), without reading any key word.
        KeyRef key_ref(const seal::KSwitchKeys &keys, std::size_t index)
        {
            KeyRef ref;
            ref.object = keys.gpu_id();
            ref.index = index;
            ref.version = keys.gpu_version();
            return ref;
        }

        // Makes key_vector `index` resident (uploads it on first use or after it changed).
        KeyRef resident_key(
            const GpuBackend &backend, const LevelParams &params, const seal::KSwitchKeys &keys, std::size_t index)
        {
            if (index >= keys.data().size() || keys.data()[index].empty())
            {
                throw std::invalid_argument("seal-opencl: key switching key not present");
            }
            KeyRef ref = key_ref(keys, index);
            if (!backend.has_key(ref))
            {
                const auto &key_vector = keys.data()[index];
                std::vector<std::uint64_t> words;
                words.reserve(key_vector.size() * key_vector[0].data().dyn_array().size());
                for (const auto &key : key_vector)
                {
                    const auto &w = key.data().dyn_array();
                    words.insert(words.end(), w.cbegin(), w.cend());
                }
                translated([&] {
                    backend.upload_key(
                        params, ref, key_vector.size(), rust::Slice<const std::uint64_t>(words.data(), words.size()));
                });
            }
            return ref;
        }

        /* ---- SEAL_OPENCL_CROSSCHECK ------------------------------------------------------- */

        constexpr const char *crosscheck_env_var = "SEAL_OPENCL_CROSSCHECK";

        // Process-wide: comparisons made, mismatches found, the last mismatch's message, and
        // (test hooks only) whether the next cross-checked result is to be made wrong on the
        // device.
        std::atomic<std::uint64_t> crosscheck_check_count{ 0 };
        std::atomic<std::uint64_t> crosscheck_mismatch_count{ 0 };
#ifdef SEAL_OPENCL_TEST_HOOKS
        std::atomic<bool> crosscheck_corrupt_next{ false };
#endif
        std::mutex crosscheck_last_mutex;
        std::string crosscheck_last;

        [[noreturn]] void crosscheck_mismatch(const std::string &text)
        {
            crosscheck_mismatch_count.fetch_add(1, std::memory_order_relaxed);
            const std::string message = "seal-opencl: " + std::string(crosscheck_env_var) + ": " + text;
            {
                std::lock_guard<std::mutex> lock(crosscheck_last_mutex);
                crosscheck_last = message;
            }
            throw std::logic_error(message);
        }

        std::string hex(std::uint64_t word)
        {
            static const char digits[] = "0123456789abcdef";
            std::string text = "0x";
            bool started = false;
            for (int shift = 60; shift >= 0; shift -= 4)
            {
                const auto d = static_cast<unsigned>((word >> shift) & 0xf);
                started = started || d != 0 || shift == 0;
                if (started)
                {
                    text.push_back(digits[d]);
                }
            }
            return text;
        }

        // "multiply (N = 4096, 3 primes)": the operation and the parameters of its level.
        std::string crosscheck_call(const char *operation, const SEALContext::ContextData &context_data)
        {
            const auto &parms = context_data.parms();
            return std::string(operation) + " (N = " + std::to_string(parms.poly_modulus_degree()) + ", " +
                   std::to_string(parms.coeff_modulus().size()) + " primes)";
        }

        // Compares the device result's words with SEAL's CPU result's; a difference is a mismatch
        // naming the first differing word (its index, and where it lies: polynomial, prime,
        // coefficient of the result's level) and how many differ.
        void crosscheck_words(
            const std::string &call, const std::uint64_t *cpu, std::size_t cpu_count, const std::uint64_t *device,
            std::size_t device_count, std::size_t n, std::size_t primes)
        {
            crosscheck_check_count.fetch_add(1, std::memory_order_relaxed);
            if (cpu_count != device_count)
            {
                crosscheck_mismatch(
                    call + ": the device result has " + std::to_string(device_count) + " words, SEAL's CPU result " +
                    std::to_string(cpu_count));
            }
            std::size_t first = cpu_count;
            std::size_t differ = 0;
            for (std::size_t i = 0; i < cpu_count; i++)
            {
                if (cpu[i] != device[i] && differ++ == 0)
                {
                    first = i;
                }
            }
            if (differ)
            {
                const std::size_t poly_words = n * primes;
                crosscheck_mismatch(
                    call + ": the device result differs from SEAL's CPU result in " + std::to_string(differ) + " of " +
                    std::to_string(cpu_count) + " words; first at word " + std::to_string(first) +
                    " (polynomial " + std::to_string(first / poly_words) + ", prime " +
                    std::to_string(first % poly_words / n) + ", coefficient " + std::to_string(first % n) +
                    "): device " + hex(device[first]) + ", CPU " + hex(cpu[first]));
            }
        }

        // The metadata SEAL's CPU path gave a cross-checked ciphertext result, checked against
        // what the SEAL side sets on the device result after the operation virtual returned.
        // SEAL asks Backend::is_transparent about the result right after setting it (same thread,
        // same Evaluator call), which is where it is compared; every operation virtual clears it
        // first, so a record never outlives the call that made it.
        struct PendingMetadata
        {
            const seal::gpu::Backend *backend = nullptr;
            const Ciphertext *result = nullptr;
            std::string call;
            seal::parms_id_type parms_id{};
            std::size_t size = 0;
            std::size_t n = 0;
            std::size_t primes = 0;
            double scale = 0;
            bool is_ntt_form = false;
            std::uint64_t correction_factor = 0;
        };

        thread_local PendingMetadata pending_metadata;

        // Set while this thread computes a CPU reference: an operation routed meanwhile would mean
        // SEAL's CPU path reached the device (it never should: every operand is unmarked).
        thread_local bool computing_reference = false;

        bool is_transparent_error(const std::exception &e)
        {
            return std::string(e.what()).find("result ciphertext is transparent") != std::string::npos;
        }

        // Thrown by a cross-check that cannot compare this call (see OpenClBackend::crosschecked).
        struct SkipCrosscheck
        {};

        // A device failure while downloading an operand for the CPU reference: rethrown as it
        // is, not taken for SEAL's CPU path refusing the operands.
        struct OperandDownloadFailed
        {
            std::exception_ptr error;
        };

        class OpenClBackend final : public seal::gpu::Backend
        {
        public:
            // `crosscheck_every`: the crosscheck setting (0: off).
            OpenClBackend(rust::Box<GpuBackend> backend, std::uint64_t crosscheck_every)
                : backend_(std::move(backend)), crosscheck_every_(crosscheck_every),
                  host_pool_(seal::gpu::HostPool::make_handle(std::make_shared<RustHostMemory>(backend_->pinned_host()))),
                  unmarked_(Access::unmarked_ciphertext())
            {}

            DeviceMemory device_memory() const
            {
                return backend_->device_memory();
            }

            Traffic traffic() const
            {
                return backend_->traffic();
            }

            void bind_thread(int device) const
            {
                translated([&] { backend_->bind_thread(device); });
            }

            int tile_count() const
            {
                return static_cast<int>(backend_->tile_count());
            }

            seal::MemoryPoolHandle host_pool() const override
            {
                return host_pool_;
            }

            std::unique_ptr<seal::gpu::DeviceImage> create_image(
                const std::uint64_t *data, std::size_t uint64_count) override
            {
                return translated([&] {
                    return std::unique_ptr<seal::gpu::DeviceImage>(new RustImage(
                        backend_->create_image(rust::Slice<const std::uint64_t>(data, uint64_count)), *this));
                });
            }

            void upload(seal::gpu::DeviceImage &image, const std::uint64_t *data, std::size_t uint64_count) override
            {
                translated([&] {
                    backend_->upload(
                        mutable_image_of(&image), rust::Slice<const std::uint64_t>(data, uint64_count));
                });
            }

            void download(const seal::gpu::DeviceImage &image, std::uint64_t *data, std::size_t uint64_count) override
            {
                translated([&] {
                    backend_->download(image_of(&image), rust::Slice<std::uint64_t>(data, uint64_count));
                });
            }

            std::unique_ptr<seal::gpu::DeviceImage> clone_image(const seal::gpu::DeviceImage &image) override
            {
                return translated([&] {
                    return std::unique_ptr<seal::gpu::DeviceImage>(
                        new RustImage(backend_->clone_image(image_of(&image)), *this));
                });
            }

            void start_compute_frame() override
            {
                backend_->start_compute_frame();
            }

            void end_compute_frame() override
            {
                translated([&] { backend_->end_compute_frame(); });
            }

            void synchronize() override
            {
                translated([&] { backend_->synchronize(); });
            }

            // Every operation virtual: `device` runs it on the device; `reference(cpu, result)`
            // computes SEAL's CPU result into `result` (an unmarked host object) from host copies
            // of the operands (`cpu.copy(x)`) with SEAL's own Evaluator (`cpu.evaluator`). It runs
            // only for the calls SEAL_OPENCL_CROSSCHECK samples; off, this is one branch.

            void negate_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data,
                Ciphertext &encrypted) override
            {
                unary("negate", context, context_data, encrypted, UnaryOp::Negate, [](auto &cpu, auto &result) {
                    cpu.negate_inplace(result);
                });
            }

            void add_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted1,
                const Ciphertext &encrypted2) override
            {
                binary(
                    "add", context, context_data, encrypted1, encrypted2, UnaryOp::DoubleInplace, BinaryOp::Add,
                    [](auto &cpu, auto &result, const auto &operand) { cpu.add_inplace(result, operand); });
            }

            void sub_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted1,
                const Ciphertext &encrypted2) override
            {
                binary(
                    "sub", context, context_data, encrypted1, encrypted2, UnaryOp::Zero, BinaryOp::Sub,
                    [](auto &cpu, auto &result, const auto &operand) { cpu.sub_inplace(result, operand); });
            }

            void multiply_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted1,
                const Ciphertext &encrypted2) override
            {
                binary(
                    "multiply", context, context_data, encrypted1, encrypted2, UnaryOp::Square, BinaryOp::Multiply,
                    [](auto &cpu, auto &result, const auto &operand) { cpu.multiply_inplace(result, operand); });
            }

            void square_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data,
                Ciphertext &encrypted) override
            {
                unary("square", context, context_data, encrypted, UnaryOp::Square, [](auto &cpu, auto &result) {
                    cpu.square_inplace(result);
                });
            }

            void relinearize_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
                const seal::RelinKeys &relin_keys, std::size_t destination_size) override
            {
                const auto params = level_params(context, context_data);
                routed(
                    "relinearize", context, context_data, encrypted,
                    [&] {
                        // One key per step, as SEAL's relinearize_internal: the last polynomial first.
                        std::vector<KeyRef> keys;
                        for (std::size_t size = encrypted.size(); size > destination_size; size--)
                        {
                            keys.push_back(
                                resident_key(*backend_, params, relin_keys, seal::RelinKeys::get_index(size - 1)));
                        }
                        translated([&] {
                            backend_->relinearize(
                                params, result_image(encrypted), encrypted.size(), destination_size,
                                rust::Slice<const KeyRef>(keys.data(), keys.size()));
                        });
                    },
                    [&](Reference &cpu, Ciphertext &result) {
                        // SEAL's public relinearize always goes down to 2 polynomials (as every
                        // Evaluator call that reaches this virtual does).
                        if (destination_size != 2)
                        {
                            throw SkipCrosscheck{};
                        }
                        result = cpu.copy(encrypted);
                        cpu.evaluator.relinearize_inplace(result, relin_keys);
                    });
            }

            void rescale_to_next(
                const SEALContext &context, const SEALContext::ContextData &context_data, const Ciphertext &encrypted,
                Ciphertext &destination) override
            {
                next_level(
                    "rescale_to_next", context, context_data, encrypted, destination, UnaryOp::RescaleToNextInplace,
                    NextLevelOp::RescaleToNext, [&](Reference &cpu, Ciphertext &result) {
                        // SEAL leaves the destination's correction factor as it was.
                        result.correction_factor() = destination.correction_factor();
                        cpu.evaluator.rescale_to_next(cpu.copy(encrypted), result);
                    });
            }

            void mod_switch_to_next(
                const SEALContext &context, const SEALContext::ContextData &context_data, const Ciphertext &encrypted,
                Ciphertext &destination) override
            {
                next_level(
                    "mod_switch_to_next", context, context_data, encrypted, destination,
                    UnaryOp::ModSwitchToNextInplace, NextLevelOp::ModSwitchToNext,
                    [&](Reference &cpu, Ciphertext &result) {
                        cpu.evaluator.mod_switch_to_next(cpu.copy(encrypted), result);
                    });
            }

            void mod_switch_to_next_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Plaintext &plain) override
            {
                const auto params = level_params(context, context_data);
                routed(
                    "mod_switch_to_next (plaintext)", context, context_data, plain,
                    [&] { translated([&] { backend_->mod_switch_plain_to_next(params, result_image(plain)); }); },
                    [&](Reference &cpu, Plaintext &result) {
                        result = cpu.copy(plain);
                        cpu.evaluator.mod_switch_to_next_inplace(result);
                    });
            }

            void multiply_plain_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
                const Plaintext &plain) override
            {
                with_plain(
                    "multiply_plain", context, context_data, encrypted, plain, PlainOp::MultiplyPlain,
                    [](auto &cpu, auto &result, const auto &operand) { cpu.multiply_plain_inplace(result, operand); });
            }

            void add_plain_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
                const Plaintext &plain) override
            {
                with_plain(
                    "add_plain", context, context_data, encrypted, plain, PlainOp::AddPlain,
                    [](auto &cpu, auto &result, const auto &operand) { cpu.add_plain_inplace(result, operand); });
            }

            void sub_plain_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
                const Plaintext &plain) override
            {
                with_plain(
                    "sub_plain", context, context_data, encrypted, plain, PlainOp::SubPlain,
                    [](auto &cpu, auto &result, const auto &operand) { cpu.sub_plain_inplace(result, operand); });
            }

            void apply_galois_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
                std::uint32_t galois_elt, const seal::GaloisKeys &galois_keys) override
            {
                const auto params = level_params(context, context_data);
                routed(
                    "apply_galois", context, context_data, encrypted,
                    [&] {
                        const KeyRef key =
                            resident_key(*backend_, params, galois_keys, seal::GaloisKeys::get_index(galois_elt));
                        translated([&] {
                            backend_->apply_galois(params, result_image(encrypted), encrypted.size(), galois_elt, key);
                        });
                    },
                    [&](Reference &cpu, Ciphertext &result) {
                        result = cpu.copy(encrypted);
                        cpu.evaluator.apply_galois_inplace(result, galois_elt, galois_keys);
                    });
            }

            void transform_to_ntt_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data,
                Ciphertext &encrypted) override
            {
                unary(
                    "transform_to_ntt", context, context_data, encrypted, UnaryOp::TransformToNtt,
                    [](auto &cpu, auto &result) { cpu.transform_to_ntt_inplace(result); });
            }

            void transform_from_ntt_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data,
                Ciphertext &encrypted_ntt) override
            {
                unary(
                    "transform_from_ntt", context, context_data, encrypted_ntt, UnaryOp::TransformFromNtt,
                    [](auto &cpu, auto &result) { cpu.transform_from_ntt_inplace(result); });
            }

            bool is_transparent(const Ciphertext &encrypted, const char *operation) override
            {
                if (crosscheck_every_ != 0)
                {
                    check_pending_metadata(encrypted);
                }
                return translated([&] {
                    return backend_->is_transparent(
                        mutable_image_of(Access::image(encrypted)), encrypted.size(),
                        encrypted.poly_modulus_degree() * encrypted.coeff_modulus_size(), operation);
                });
            }

            void release_keys(std::uint64_t key_object) noexcept override
            {
                backend_->release_keys(key_object);
            }

            void on_cpu_fallback(const char *operation) override
            {
                report_cpu_fallback(operation);
            }

        private:
            // Host copies of device operands and SEAL's Evaluator, for one CPU reference.
            class Reference
            {
            public:
                Reference(OpenClBackend &backend, const SEALContext &context)
                    : evaluator(context), backend_(backend), context_(context)
                {}

                // An unmarked ciphertext with `x`'s metadata and the words of its device image.
                Ciphertext copy(const Ciphertext &x)
                {
                    Ciphertext host(backend_.unmarked_);
                    host.resize(context_, x.parms_id(), x.size());
                    backend_.download_operand(Access::image(x), host.data(), host.dyn_array().size());
                    host.scale() = x.scale();
                    host.is_ntt_form() = x.is_ntt_form();
                    host.correction_factor() = x.correction_factor();
                    return host;
                }

                // A plaintext (never marked when constructed) with `p`'s metadata and image words.
                Plaintext copy(const Plaintext &p)
                {
                    Plaintext host(p.coeff_count());
                    backend_.download_operand(Access::image(p), host.data(), p.coeff_count());
                    host.parms_id() = p.parms_id();
                    host.scale() = p.scale();
                    return host;
                }

                seal::Evaluator evaluator;

            private:
                OpenClBackend &backend_;
                const SEALContext &context_;
            };

            template <class T>
            T unmarked_result() const
            {
                if constexpr (std::is_same_v<T, Ciphertext>)
                {
                    return Ciphertext(unmarked_);
                }
                else
                {
                    return T();
                }
            }

            // The shapes of the routed operations, each with its bridge call (GpuBackend::unary,
            // binary, with_plain, next_level): `op` (and `self_op`) name the operation of that
            // shape; `cpu_op(evaluator, result, ...)` is SEAL's Evaluator call on the host copies.
            // All take their arguments by reference and inline into the override: a routed call
            // costs what the written-out body did.

            // ct = op(ct) in place.
            template <class CpuOp>
            void unary(
                const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
                Ciphertext &encrypted, UnaryOp op, CpuOp cpu_op)
            {
                const auto params = level_params(context, context_data);
                routed(
                    operation, context, context_data, encrypted,
                    [&] {
                        translated([&] { backend_->unary(params, op, result_image(encrypted), encrypted.size()); });
                    },
                    [&](Reference &cpu, Ciphertext &result) {
                        result = cpu.copy(encrypted);
                        cpu_op(cpu.evaluator, result);
                    });
            }

            // encrypted1 = encrypted1 op encrypted2; `self_op(encrypted1)` when both are one
            // ciphertext (the device reads no operand it is writing).
            template <class CpuOp>
            void binary(
                const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
                Ciphertext &encrypted1, const Ciphertext &encrypted2, UnaryOp self_op, BinaryOp op, CpuOp cpu_op)
            {
                const auto params = level_params(context, context_data);
                const bool same = &encrypted1 == &encrypted2;
                // Equal words on the host are one operand twice, so that a - a is known to be
                // zero at the call, as SEAL's transparency check needs.
                const bool twice = same || equal_host_words(encrypted1, encrypted2);
                routed(
                    operation, context, context_data, encrypted1,
                    [&] {
                        translated([&] {
                            if (twice)
                            {
                                backend_->unary(params, self_op, result_image(encrypted1), encrypted1.size());
                            }
                            else
                            {
                                backend_->binary(
                                    params, op, result_image(encrypted1), encrypted1.size(), image_of(encrypted2),
                                    encrypted2.size());
                            }
                        });
                    },
                    [&](Reference &cpu, Ciphertext &result) {
                        result = cpu.copy(encrypted1);
                        if (same)
                        {
                            cpu_op(cpu.evaluator, result, result);
                        }
                        else
                        {
                            cpu_op(cpu.evaluator, result, cpu.copy(encrypted2));
                        }
                    });
            }

            // Whether both ciphertexts hold the same words and metadata on the host, and their
            // device images those words too (in sync: the uploads of this call leave them so). An
            // operand copied from another before any backend was installed has its own upload;
            // two unrelated ciphertexts differ in their first word, where the comparison stops.
            static bool equal_host_words(const Ciphertext &a, const Ciphertext &b)
            {
                return Access::residency(a) == seal::gpu::Residency::in_sync &&
                       Access::residency(b) == seal::gpu::Residency::in_sync && a.parms_id() == b.parms_id() &&
                       a.size() == b.size() && a.is_ntt_form() == b.is_ntt_form() &&
                       std::equal(a.data(), a.data() + a.dyn_array().size(), b.data());
            }

            // encrypted = encrypted op plain.
            template <class CpuOp>
            void with_plain(
                const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
                Ciphertext &encrypted, const Plaintext &plain, PlainOp op, CpuOp cpu_op)
            {
                const auto params = level_params(context, context_data);
                routed(
                    operation, context, context_data, encrypted,
                    [&] {
                        translated([&] {
                            backend_->with_plain(
                                params, op, result_image(encrypted), encrypted.size(), image_of(plain));
                        });
                    },
                    [&](Reference &cpu, Ciphertext &result) {
                        result = cpu.copy(encrypted);
                        cpu_op(cpu.evaluator, result, cpu.copy(plain));
                    });
            }

            // destination = encrypted at the next level; `inplace_op` when both are one ciphertext.
            template <class Ref>
            void next_level(
                const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
                const Ciphertext &encrypted, Ciphertext &destination, UnaryOp inplace_op, NextLevelOp op,
                Ref &&reference)
            {
                const auto params = level_params(context, context_data);
                routed(
                    operation, context, context_data, destination,
                    [&] {
                        translated([&] {
                            if (&encrypted == &destination)
                            {
                                backend_->unary(params, inplace_op, result_image(destination), encrypted.size());
                            }
                            else
                            {
                                backend_->next_level(
                                    params, op, image_of(encrypted), encrypted.size(), result_image(destination));
                            }
                        });
                    },
                    reference);
            }

            // Runs one routed operation, cross-checked when SEAL_OPENCL_CROSSCHECK samples it.
            template <class T, class Device, class Ref>
            void routed(
                const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
                T &result, Device &&device, Ref &&reference)
            {
                if (crosscheck_every_ == 0)
                {
                    device();
                    return;
                }
                crosschecked(operation, context, context_data, result, device, reference);
            }

            // SEAL's CPU result first (from the device images of the inputs, before the device
            // overwrites them), then the device operation, then the device result's words against
            // the CPU's; the metadata SEAL sets afterwards is compared in is_transparent.
            template <class T, class Device, class Ref>
            void crosschecked(
                const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
                T &result, Device &device, Ref &reference)
            {
                pending_metadata = PendingMetadata{};
                if (computing_reference)
                {
                    throw std::logic_error(
                        std::string("seal-opencl: ") + crosscheck_env_var + ": SEAL's CPU reference for an operation "
                        "routed " + operation + " to the device");
                }
                if (crosscheck_calls_.fetch_add(1, std::memory_order_relaxed) % crosscheck_every_ != 0)
                {
                    device();
                    return;
                }
                const std::string call = crosscheck_call(operation, context_data);
                T cpu_result = unmarked_result<T>();
                std::string cpu_error;
                try
                {
                    Reference cpu(*this, context);
                    computing_reference = true;
                    reference(cpu, cpu_result);
                    computing_reference = false;
                }
                catch (const SkipCrosscheck &)
                {
                    computing_reference = false;
                    device();
                    return;
                }
                catch (const OperandDownloadFailed &failed)
                {
                    computing_reference = false;
                    std::rethrow_exception(failed.error);
                }
                catch (const std::exception &e)
                {
                    computing_reference = false;
                    // SEAL computes, then refuses a transparent result: its words and metadata
                    // are in cpu_result, and are compared as any other's.
                    if (!is_transparent_error(e))
                    {
                        cpu_error = e.what();
                    }
                }
                device();
                if (!cpu_error.empty())
                {
                    crosscheck_mismatch(
                        call + ": SEAL's CPU path threw \"" + cpu_error + "\" where the device computed a result");
                }
                auto *image = Access::image(result);
                const auto next_ptr = context.get_context_data(cpu_result.parms_id());
                if (!image || !next_ptr)
                {
                    crosscheck_mismatch(call + ": no device result or no CPU result to compare");
                }
#ifdef SEAL_OPENCL_TEST_HOOKS
                if (crosscheck_corrupt_next.exchange(false))
                {
                    corrupt(*image);
                }
#endif
                std::vector<std::uint64_t> words(image->uint64_count());
                translated([&] {
                    backend_->download(image_of(image), rust::Slice<std::uint64_t>(words.data(), words.size()));
                });
                const auto &next = *next_ptr;
                crosscheck_words(
                    call, cpu_result.data(), cpu_result.dyn_array().size(), words.data(), words.size(),
                    next.parms().poly_modulus_degree(), next.parms().coeff_modulus().size());
                if constexpr (std::is_same_v<T, Ciphertext>)
                {
                    auto &pending = pending_metadata;
                    pending.backend = this;
                    pending.result = &result;
                    pending.call = call;
                    pending.parms_id = cpu_result.parms_id();
                    pending.size = cpu_result.size();
                    pending.n = cpu_result.poly_modulus_degree();
                    pending.primes = cpu_result.coeff_modulus_size();
                    pending.scale = cpu_result.scale();
                    pending.is_ntt_form = cpu_result.is_ntt_form();
                    pending.correction_factor = cpu_result.correction_factor();
                }
            }

            // Downloads an input operand's device image (current on entry to every virtual).
            void download_operand(const seal::gpu::DeviceImage *image, std::uint64_t *data, std::size_t count)
            {
                if (!image || image->uint64_count() < count)
                {
                    throw std::logic_error("seal-opencl: an operand's device image is missing or short");
                }
                try
                {
                    backend_->download(image_of(image), rust::Slice<std::uint64_t>(data, count));
                }
                catch (const rust::Error &e)
                {
                    // The operand is a transparent result whose report is pending (deferred
                    // check): its first host read reports it; this call is not compared.
                    if (is_transparent_error(e))
                    {
                        throw SkipCrosscheck{};
                    }
                    try
                    {
                        rethrow_as_seal(e);
                    }
                    catch (...)
                    {
                        throw OperandDownloadFailed{ std::current_exception() };
                    }
                }
            }

#ifdef SEAL_OPENCL_TEST_HOOKS
            // The test hook: makes the device result wrong (one bit of its middle word).
            void corrupt(seal::gpu::DeviceImage &image)
            {
                std::vector<std::uint64_t> words(image.uint64_count());
                if (words.empty())
                {
                    return;
                }
                translated([&] {
                    backend_->download(image_of(&image), rust::Slice<std::uint64_t>(words.data(), words.size()));
                    words[words.size() / 2] ^= 1;
                    backend_->upload(
                        mutable_image_of(&image), rust::Slice<const std::uint64_t>(words.data(), words.size()));
                });
            }
#endif

            // Compares the metadata SEAL set on a cross-checked result with SEAL's CPU result's.
            void check_pending_metadata(const Ciphertext &encrypted)
            {
                if (pending_metadata.backend != this || pending_metadata.result != &encrypted)
                {
                    return;
                }
                const PendingMetadata want = std::move(pending_metadata);
                pending_metadata = PendingMetadata{};
                std::string differs;
                const auto field = [&](const char *name, bool same, const std::string &device, const std::string &cpu) {
                    if (!same && differs.empty())
                    {
                        differs = std::string(name) + ": device " + device + ", CPU " + cpu;
                    }
                };
                field("parms_id", encrypted.parms_id() == want.parms_id, "", "");
                field("size", encrypted.size() == want.size, std::to_string(encrypted.size()), std::to_string(want.size));
                field(
                    "poly_modulus_degree", encrypted.poly_modulus_degree() == want.n,
                    std::to_string(encrypted.poly_modulus_degree()), std::to_string(want.n));
                field(
                    "coeff_modulus_size", encrypted.coeff_modulus_size() == want.primes,
                    std::to_string(encrypted.coeff_modulus_size()), std::to_string(want.primes));
                double device_scale = encrypted.scale();
                double cpu_scale = want.scale;
                field(
                    "scale", std::memcmp(&device_scale, &cpu_scale, sizeof(double)) == 0,
                    std::to_string(device_scale), std::to_string(cpu_scale));
                field(
                    "is_ntt_form", encrypted.is_ntt_form() == want.is_ntt_form,
                    encrypted.is_ntt_form() ? "true" : "false", want.is_ntt_form ? "true" : "false");
                field(
                    "correction_factor", encrypted.correction_factor() == want.correction_factor,
                    std::to_string(encrypted.correction_factor()), std::to_string(want.correction_factor));
                if (!differs.empty())
                {
                    crosscheck_mismatch(want.call + ": the metadata SEAL set on the device result differs (" + differs + ")");
                }
            }

            // The image of a result operand, created empty when it has none of ours yet (a
            // fresh destination, or a stale image of a foreign backend).
            template <class T>
            GpuImage &result_image(T &object)
            {
                auto *image = dynamic_cast<RustImage *>(Access::image(object));
                if (!image)
                {
                    auto fresh = std::unique_ptr<RustImage>(new RustImage(backend_->empty_image(), *this));
                    image = fresh.get();
                    Access::set_image(object, std::move(fresh));
                }
                return image->get();
            }

            rust::Box<GpuBackend> backend_;
            // SEAL_OPENCL_CROSSCHECK: 0 (off) or every how many routed operations are compared.
            const std::uint64_t crosscheck_every_;
            // Where marked objects' host words live (seal-patch 0007): the Rust side's
            // page-locked blocks, kept alive by every allocation even after an uninstall.
            const seal::MemoryPoolHandle host_pool_;
            std::atomic<std::uint64_t> crosscheck_calls_{ 0 };
            // Unmarked even under SEAL_GPU_ROUTE_ALL, and so are its copies: host objects for the
            // CPU reference.
            const Ciphertext unmarked_;
        };

        std::mutex install_mutex;
    } // namespace

    void install_backend()
    {
        std::lock_guard<std::mutex> lock(install_mutex);
        if (seal::gpu::backend_installed())
        {
            return;
        }
        auto backend = translated([] { return new_gpu_backend({}, true); });
        const std::uint64_t crosscheck = backend->crosscheck_every();
        seal::gpu::set_backend(std::make_shared<OpenClBackend>(std::move(backend), crosscheck));
    }

    void install_backend_with_settings(rust::Slice<const NamedSetting> settings)
    {
        std::lock_guard<std::mutex> lock(install_mutex);
        if (seal::gpu::backend_installed())
        {
            throw std::logic_error(
                "seal-opencl: install_backend(options): a backend is installed already; uninstall_backend() "
                "first");
        }
        auto backend = translated([&] { return new_gpu_backend(settings, false); });
        const std::uint64_t crosscheck = backend->crosscheck_every();
        seal::gpu::set_backend(std::make_shared<OpenClBackend>(std::move(backend), crosscheck));
    }

    void install_backend(const Options &options)
    {
        std::vector<NamedSetting> settings;
        const auto set = [&](const char *name, const auto &value) {
            if (value)
            {
                std::string text;
                if constexpr (std::is_same_v<std::decay_t<decltype(*value)>, std::string>)
                {
                    text = *value;
                }
                else if constexpr (std::is_same_v<std::decay_t<decltype(*value)>, bool>)
                {
                    text = *value ? "1" : "0";
                }
                else
                {
                    text = std::to_string(*value);
                }
                settings.push_back(NamedSetting{ name, text });
            }
        };
        set("SEAL_OPENCL_DEVICE", options.device);
        set("SEAL_OPENCL_DEVICES", options.devices);
        set("SEAL_OPENCL_QUEUES", options.queues);
        set("SEAL_OPENCL_MAX_BYTES", options.max_bytes);
        set("SEAL_OPENCL_MAX_KEY_BYTES", options.max_key_bytes);
        set("SEAL_OPENCL_MAX_PINNED_BYTES", options.max_pinned_bytes);
        set("SEAL_OPENCL_LOG", options.log);
        set("SEAL_OPENCL_PROFILE", options.profile);
        set("SEAL_OPENCL_CROSSCHECK", options.crosscheck);
        set("SEAL_OPENCL_CHECK_TRANSPARENT", options.check_transparent);
        set("SEAL_OPENCL_POISON", options.poison);
        set("SEAL_OPENCL_SYNC", options.sync);
        install_backend_with_settings(rust::Slice<const NamedSetting>(settings.data(), settings.size()));
    }

    void uninstall_backend()
    {
        std::lock_guard<std::mutex> lock(install_mutex);
        seal::gpu::set_backend(nullptr);
    }

    std::uint64_t crosscheck_checks() noexcept
    {
        return crosscheck_check_count.load(std::memory_order_relaxed);
    }

    std::uint64_t crosscheck_mismatches() noexcept
    {
        return crosscheck_mismatch_count.load(std::memory_order_relaxed);
    }

    std::string crosscheck_last_mismatch()
    {
        std::lock_guard<std::mutex> lock(crosscheck_last_mutex);
        return crosscheck_last;
    }

#ifdef SEAL_OPENCL_TEST_HOOKS
    void crosscheck_corrupt_next_result() noexcept
    {
        crosscheck_corrupt_next.store(true);
    }
#endif

    ProfiledWork profile_operation(const std::string &name, double wall_us, unsigned loops)
    {
        const ProfiledOperation op = translated([&] { return group_profiled_launches(name, wall_us, loops); });
        return { op.kernel_us, op.host_us, op.launches, op.idle_us };
    }

    namespace
    {
        // The installed backend, if it is seal-opencl's; else std::logic_error.
        std::shared_ptr<OpenClBackend> installed_open_cl_backend()
        {
            auto backend = std::dynamic_pointer_cast<OpenClBackend>(seal::gpu::backend());
            if (!backend)
            {
                throw std::logic_error("seal-opencl: the OpenCL backend is not installed");
            }
            return backend;
        }
    } // namespace

    DeviceMemory installed_device_memory()
    {
        return installed_open_cl_backend()->device_memory();
    }

    TransferCounts transfer_counts()
    {
        const Traffic t = installed_open_cl_backend()->traffic();
        return { t.pool_misses,        t.device_allocations, t.pinned_allocations, t.pinned_uploads,     t.pinned_upload_bytes,
                 t.pageable_uploads,   t.pageable_upload_bytes, t.downloads,      t.download_bytes,
                 t.image_copies,       t.device_copies };
    }

    void bind_thread_to_device(int device)
    {
        installed_open_cl_backend()->bind_thread(device);
    }

    int device_count()
    {
        return installed_open_cl_backend()->tile_count();
    }

    rust::String crosscheck_last_mismatch_text()
    {
        return rust::String(crosscheck_last_mismatch());
    }
} // namespace seal_opencl

// Patched SEAL's default backend (seal::gpu::backend_or_default(), seal-patch 0001): under
// SEAL_GPU_ROUTE_ALL=1, a program that never installed a backend gets this one at its first
// routed CKKS call or first gpu(), with the same device choice and settings as
// seal_opencl::install_backend(), whose exceptions it passes on. SEAL declares it weak; linking
// with -Wl,--undefined=seal_gpu_install_default_backend (the CMake packages do) brings it in.
extern "C" void seal_gpu_install_default_backend()
{
    seal_opencl::install_backend();
}
