// The C++ half of the SEAL backend: a seal::gpu::Backend whose virtuals turn SEAL objects
// into plain views (parameters, word counts, device images) and call the Rust backend
// (src/seal_backend) through the cxx bridge declared in src/ffi.rs.
//
// What lives here and not in Rust: everything that needs SEAL's C++ types (Ciphertext,
// SEALContext, KSwitchKeys) and the translation of Rust errors into the exception types
// SEAL throws. The Rust side never sees a SEAL object.

#include "seal-opencl/ffi/seal_opencl.h"
#include "seal-opencl/src/ffi.rs.h"

#include <cstring>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "seal/ciphertext.h"
#include "seal/context.h"
#include "seal/galoiskeys.h"
#include "seal/gpu/access.h"
#include "seal/gpu/backend.h"
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
        // SEAL would throw (src/ffi.rs writes the tag).
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
        // (seal-patch 0010: the object's id is never reused, its version changes with every
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

        class OpenClBackend final : public seal::gpu::Backend
        {
        public:
            explicit OpenClBackend(rust::Box<GpuBackend> backend) : backend_(std::move(backend))
            {}

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

            void negate_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data,
                Ciphertext &encrypted) override
            {
                const auto params = level_params(context, context_data);
                translated([&] { backend_->negate(params, result_image(encrypted), encrypted.size()); });
            }

            void add_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted1,
                const Ciphertext &encrypted2) override
            {
                const auto params = level_params(context, context_data);
                translated([&] {
                    if (&encrypted1 == &encrypted2)
                    {
                        backend_->double_inplace(params, result_image(encrypted1), encrypted1.size());
                    }
                    else
                    {
                        backend_->add(
                            params, result_image(encrypted1), encrypted1.size(), image_of(encrypted2),
                            encrypted2.size());
                    }
                });
            }

            void sub_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted1,
                const Ciphertext &encrypted2) override
            {
                const auto params = level_params(context, context_data);
                translated([&] {
                    if (&encrypted1 == &encrypted2)
                    {
                        backend_->zero(params, result_image(encrypted1), encrypted1.size());
                    }
                    else
                    {
                        backend_->sub(
                            params, result_image(encrypted1), encrypted1.size(), image_of(encrypted2),
                            encrypted2.size());
                    }
                });
            }

            void multiply_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted1,
                const Ciphertext &encrypted2) override
            {
                const auto params = level_params(context, context_data);
                translated([&] {
                    if (&encrypted1 == &encrypted2)
                    {
                        backend_->square(params, result_image(encrypted1), encrypted1.size());
                    }
                    else
                    {
                        backend_->multiply(
                            params, result_image(encrypted1), encrypted1.size(), image_of(encrypted2),
                            encrypted2.size());
                    }
                });
            }

            void square_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data,
                Ciphertext &encrypted) override
            {
                const auto params = level_params(context, context_data);
                translated([&] { backend_->square(params, result_image(encrypted), encrypted.size()); });
            }

            void relinearize_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
                const seal::RelinKeys &relin_keys, std::size_t destination_size) override
            {
                const auto params = level_params(context, context_data);
                // One key per step, as SEAL's relinearize_internal: the last polynomial first.
                std::vector<KeyRef> keys;
                for (std::size_t size = encrypted.size(); size > destination_size; size--)
                {
                    keys.push_back(resident_key(*backend_, params, relin_keys, seal::RelinKeys::get_index(size - 1)));
                }
                translated([&] {
                    backend_->relinearize(
                        params, result_image(encrypted), encrypted.size(), destination_size,
                        rust::Slice<const KeyRef>(keys.data(), keys.size()));
                });
            }

            void rescale_to_next(
                const SEALContext &context, const SEALContext::ContextData &context_data, const Ciphertext &encrypted,
                Ciphertext &destination) override
            {
                const auto params = level_params(context, context_data);
                translated([&] {
                    if (&encrypted == &destination)
                    {
                        backend_->rescale_to_next_inplace(params, result_image(destination), encrypted.size());
                    }
                    else
                    {
                        backend_->rescale_to_next(
                            params, image_of(encrypted), encrypted.size(), result_image(destination));
                    }
                });
            }

            void mod_switch_to_next(
                const SEALContext &context, const SEALContext::ContextData &context_data, const Ciphertext &encrypted,
                Ciphertext &destination) override
            {
                const auto params = level_params(context, context_data);
                translated([&] {
                    if (&encrypted == &destination)
                    {
                        backend_->mod_switch_to_next_inplace(params, result_image(destination), encrypted.size());
                    }
                    else
                    {
                        backend_->mod_switch_to_next(
                            params, image_of(encrypted), encrypted.size(), result_image(destination));
                    }
                });
            }

            void mod_switch_to_next_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Plaintext &plain) override
            {
                const auto params = level_params(context, context_data);
                translated([&] { backend_->mod_switch_plain_to_next(params, result_image(plain)); });
            }

            void multiply_plain_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
                const Plaintext &plain) override
            {
                const auto params = level_params(context, context_data);
                translated([&] {
                    backend_->multiply_plain(params, result_image(encrypted), encrypted.size(), image_of(plain));
                });
            }

            void add_plain_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
                const Plaintext &plain) override
            {
                const auto params = level_params(context, context_data);
                translated([&] {
                    backend_->add_plain(params, result_image(encrypted), encrypted.size(), image_of(plain));
                });
            }

            void sub_plain_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
                const Plaintext &plain) override
            {
                const auto params = level_params(context, context_data);
                translated([&] {
                    backend_->sub_plain(params, result_image(encrypted), encrypted.size(), image_of(plain));
                });
            }

            void apply_galois_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
                std::uint32_t galois_elt, const seal::GaloisKeys &galois_keys) override
            {
                const auto params = level_params(context, context_data);
                const KeyRef key = resident_key(*backend_, params, galois_keys, seal::GaloisKeys::get_index(galois_elt));
                translated([&] {
                    backend_->apply_galois(params, result_image(encrypted), encrypted.size(), galois_elt, key);
                });
            }

            void transform_to_ntt_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data,
                Ciphertext &encrypted) override
            {
                const auto params = level_params(context, context_data);
                translated([&] { backend_->transform_to_ntt(params, result_image(encrypted), encrypted.size()); });
            }

            void transform_from_ntt_inplace(
                const SEALContext &context, const SEALContext::ContextData &context_data,
                Ciphertext &encrypted_ntt) override
            {
                const auto params = level_params(context, context_data);
                translated(
                    [&] { backend_->transform_from_ntt(params, result_image(encrypted_ntt), encrypted_ntt.size()); });
            }

            bool is_transparent(const Ciphertext &encrypted, const char *operation) override
            {
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
        auto backend = translated([] { return new_gpu_backend(); });
        seal::gpu::set_backend(std::make_shared<OpenClBackend>(std::move(backend)));
    }

    void uninstall_backend()
    {
        std::lock_guard<std::mutex> lock(install_mutex);
        seal::gpu::set_backend(nullptr);
    }
} // namespace seal_opencl
