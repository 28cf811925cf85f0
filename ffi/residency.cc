// Residency: the device images of SEAL objects, their uploads and downloads, the page-locked
// host memory of marked objects, frames, keys and the transparency check; Rust errors
// rethrown as SEAL's exception types. See backend.h.

#include "seal-opencl/ffi/backend.h"

#include <stdexcept>
#include <string>
#include <vector>

#include "seal/gpu/hostpool.h"
#include "seal/util/common.h"

namespace seal_opencl::detail
{
    // Rust errors arrive as rust::Error with the error's message; its exception type waits
    // on this thread (src/ffi/mod.rs, BridgeError).
    [[noreturn]] void rethrow_as_seal(const rust::Error &e)
    {
        const std::string text = std::string("seal-opencl: ") + e.what();
        switch (take_exception_type())
        {
        case ExceptionType::InvalidArgument:
            throw std::invalid_argument(text);
        case ExceptionType::LogicError:
            throw std::logic_error(text);
        case ExceptionType::RuntimeError:
            break;
        }
        throw std::runtime_error(text);
    }

    namespace
    {
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
    } // namespace

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
        const auto &key_moduli = key_data.parms().coeff_modulus();
        p.key_moduli.reserve(key_moduli.size());
        for (const auto &q : key_moduli)
        {
            p.key_moduli.push_back(q.value());
        }
        p.using_keyswitching = context.using_keyswitching();
        p.primes = context_data.parms().coeff_modulus().size();
        switch (context_data.parms().scheme())
        {
        case seal::scheme_type::bfv:
            p.scheme = Scheme::Bfv;
            p.ntt_form = false;
            break;
        case seal::scheme_type::bgv:
            p.scheme = Scheme::Bgv;
            // SEAL 4.1 keeps BGV ciphertexts in NTT form; 4.0 in coefficient form.
            p.ntt_form = SEAL_VERSION_MAJOR > 4 || (SEAL_VERSION_MAJOR == 4 && SEAL_VERSION_MINOR >= 1);
            break;
        default:
            p.scheme = Scheme::Ckks;
            p.ntt_form = true;
        }
        p.plain_modulus = p.scheme == Scheme::Ckks ? 0 : context_data.parms().plain_modulus().value();
        return p;
    }

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

    OpenClBackend::OpenClBackend(rust::Box<GpuBackend> backend, std::uint64_t crosscheck_every)
        : backend_(std::move(backend)), crosscheck_every_(crosscheck_every),
          host_pool_(seal::gpu::HostPool::make_handle(std::make_shared<RustHostMemory>(backend_->pinned_host()))),
          unmarked_(Access::unmarked_ciphertext())
    {}

    DeviceMemory OpenClBackend::device_memory() const
    {
        return backend_->device_memory();
    }

    Traffic OpenClBackend::traffic() const
    {
        return backend_->traffic();
    }

    void OpenClBackend::bind_thread(int device) const
    {
        translated([&] { backend_->bind_thread(device); });
    }

    int OpenClBackend::tile_count() const
    {
        return static_cast<int>(backend_->tile_count());
    }

    seal::MemoryPoolHandle OpenClBackend::host_pool() const
    {
        return host_pool_;
    }

    std::unique_ptr<seal::gpu::DeviceImage> OpenClBackend::create_image(
        const std::uint64_t *data, std::size_t uint64_count)
    {
        return translated([&] {
            return std::unique_ptr<seal::gpu::DeviceImage>(
                new RustImage(backend_->create_image(rust::Slice<const std::uint64_t>(data, uint64_count)), *this));
        });
    }

    void OpenClBackend::upload(seal::gpu::DeviceImage &image, const std::uint64_t *data, std::size_t uint64_count)
    {
        translated([&] {
            backend_->upload(mutable_image_of(&image), rust::Slice<const std::uint64_t>(data, uint64_count));
        });
    }

    void OpenClBackend::download(const seal::gpu::DeviceImage &image, std::uint64_t *data, std::size_t uint64_count)
    {
        translated([&] { backend_->download(image_of(&image), rust::Slice<std::uint64_t>(data, uint64_count)); });
    }

    std::unique_ptr<seal::gpu::DeviceImage> OpenClBackend::clone_image(const seal::gpu::DeviceImage &image)
    {
        return translated([&] {
            return std::unique_ptr<seal::gpu::DeviceImage>(new RustImage(backend_->clone_image(image_of(&image)), *this));
        });
    }

    void OpenClBackend::start_compute_frame()
    {
        backend_->start_compute_frame();
    }

    void OpenClBackend::end_compute_frame()
    {
        translated([&] { backend_->end_compute_frame(); });
    }

    void OpenClBackend::synchronize()
    {
        translated([&] { backend_->synchronize(); });
    }

    bool OpenClBackend::is_transparent(const Ciphertext &encrypted, const char *operation)
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

    void OpenClBackend::release_keys(std::uint64_t key_object) noexcept
    {
        backend_->release_keys(key_object);
    }

    void OpenClBackend::on_cpu_fallback(const char *operation)
    {
        report_cpu_fallback(operation);
    }
} // namespace seal_opencl::detail
