// The crosscheck setting (SEAL_OPENCL_CROSSCHECK): every sampled routed operation also runs
// on SEAL's CPU path, from host copies of the operands' device images, and the device
// result's words and metadata must equal SEAL's; a mismatch is counted and thrown as
// std::logic_error. See backend.h.

#include "seal-opencl/ffi/backend.h"

#include <cstring>
#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace seal_opencl
{
    namespace detail
    {
        namespace
        {
            constexpr const char *crosscheck_env_var = "SEAL_OPENCL_CROSSCHECK";

            // Process-wide: comparisons made, mismatches found, the last mismatch's message,
            // and (test hooks only) whether the next cross-checked result is to be made wrong
            // on the device.
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

            // Compares the device result's words with SEAL's CPU result's; a difference is a
            // mismatch naming the first differing word (its index, and where it lies:
            // polynomial, prime, coefficient of the result's level) and how many differ.
            void crosscheck_words(
                const std::string &call, const std::uint64_t *cpu, std::size_t cpu_count,
                const std::uint64_t *device, std::size_t device_count, std::size_t n, std::size_t primes)
            {
                crosscheck_check_count.fetch_add(1, std::memory_order_relaxed);
                if (cpu_count != device_count)
                {
                    crosscheck_mismatch(
                        call + ": the device result has " + std::to_string(device_count) +
                        " words, SEAL's CPU result " + std::to_string(cpu_count));
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
                        call + ": the device result differs from SEAL's CPU result in " + std::to_string(differ) +
                        " of " + std::to_string(cpu_count) + " words; first at word " + std::to_string(first) +
                        " (polynomial " + std::to_string(first / poly_words) + ", prime " +
                        std::to_string(first % poly_words / n) + ", coefficient " + std::to_string(first % n) +
                        "): device " + hex(device[first]) + ", CPU " + hex(cpu[first]));
                }
            }

            // The metadata SEAL's CPU path gave a cross-checked ciphertext result, checked
            // against what the SEAL side sets on the device result after the operation virtual
            // returned. SEAL asks Backend::is_transparent about the result right after setting
            // it (same thread, same Evaluator call), which is where it is compared; every
            // operation virtual clears it first, so a record never outlives the call that made it.
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

            // Set while this thread computes a CPU reference: an operation routed meanwhile would
            // mean SEAL's CPU path reached the device (it never should: every operand is unmarked).
            thread_local bool computing_reference = false;

            bool is_transparent_error(const std::exception &e)
            {
                return std::string(e.what()).find("result ciphertext is transparent") != std::string::npos;
            }

            // A device failure while downloading an operand for the CPU reference: rethrown as
            // it is, not taken for SEAL's CPU path refusing the operands.
            struct OperandDownloadFailed
            {
                std::exception_ptr error;
            };
        } // namespace

        OpenClBackend::Reference::Reference(OpenClBackend &backend, const SEALContext &context)
            : evaluator(context), backend_(backend), context_(context)
        {}

        Ciphertext OpenClBackend::Reference::copy(const Ciphertext &x)
        {
            Ciphertext host(backend_.unmarked_);
            host.resize(context_, x.parms_id(), x.size());
            backend_.download_operand(Access::image(x), host.data(), host.dyn_array().size());
            host.scale() = x.scale();
            host.is_ntt_form() = x.is_ntt_form();
            host.correction_factor() = x.correction_factor();
            return host;
        }

        Plaintext OpenClBackend::Reference::copy(const Plaintext &p)
        {
            Plaintext host(p.coeff_count());
            backend_.download_operand(Access::image(p), host.data(), p.coeff_count());
            host.parms_id() = p.parms_id();
            host.scale() = p.scale();
            return host;
        }

        // SEAL's CPU result first (from the device images of the inputs, before the device
        // overwrites them), then the device operation, then the device result's words against
        // the CPU's; the metadata SEAL sets afterwards is compared in is_transparent.
        template <class T>
        void OpenClBackend::crosschecked(
            const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
            T &result, const std::function<void()> &device, const std::function<void(Reference &, T &)> &reference)
        {
            pending_metadata = PendingMetadata{};
            if (computing_reference)
            {
                throw std::logic_error(
                    std::string("seal-opencl: ") + crosscheck_env_var +
                    ": SEAL's CPU reference for an operation routed " + operation + " to the device");
            }
            if (crosscheck_calls_.fetch_add(1, std::memory_order_relaxed) % crosscheck_every_ != 0)
            {
                device();
                return;
            }
            const std::string call = crosscheck_call(operation, context_data);
            // Unmarked host objects: a ciphertext copied from `unmarked_`, a fresh plaintext.
            T cpu_result = [&] {
                if constexpr (std::is_same_v<T, Ciphertext>)
                {
                    return Ciphertext(unmarked_);
                }
                else
                {
                    return T();
                }
            }();
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
                // SEAL computes, then refuses a transparent result: its words and metadata are in
                // cpu_result, and are compared as any other's.
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

        template void OpenClBackend::crosschecked<Ciphertext>(
            const char *, const SEALContext &, const SEALContext::ContextData &, Ciphertext &,
            const std::function<void()> &, const std::function<void(Reference &, Ciphertext &)> &);
        template void OpenClBackend::crosschecked<Plaintext>(
            const char *, const SEALContext &, const SEALContext::ContextData &, Plaintext &,
            const std::function<void()> &, const std::function<void(Reference &, Plaintext &)> &);

        // Downloads an input operand's device image (current on entry to every virtual).
        void OpenClBackend::download_operand(const seal::gpu::DeviceImage *image, std::uint64_t *data, std::size_t count)
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
        void OpenClBackend::corrupt(seal::gpu::DeviceImage &image)
        {
            std::vector<std::uint64_t> words(image.uint64_count());
            if (words.empty())
            {
                return;
            }
            translated([&] {
                backend_->download(image_of(&image), rust::Slice<std::uint64_t>(words.data(), words.size()));
                words[words.size() / 2] ^= 1;
                backend_->upload(mutable_image_of(&image), rust::Slice<const std::uint64_t>(words.data(), words.size()));
            });
        }
#endif

        // Compares the metadata SEAL set on a cross-checked result with SEAL's CPU result's.
        void OpenClBackend::check_pending_metadata(const Ciphertext &encrypted)
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
                "scale", std::memcmp(&device_scale, &cpu_scale, sizeof(double)) == 0, std::to_string(device_scale),
                std::to_string(cpu_scale));
            field(
                "is_ntt_form", encrypted.is_ntt_form() == want.is_ntt_form, encrypted.is_ntt_form() ? "true" : "false",
                want.is_ntt_form ? "true" : "false");
            field(
                "correction_factor", encrypted.correction_factor() == want.correction_factor,
                std::to_string(encrypted.correction_factor()), std::to_string(want.correction_factor));
            if (!differs.empty())
            {
                crosscheck_mismatch(want.call + ": the metadata SEAL set on the device result differs (" + differs + ")");
            }
        }
    } // namespace detail

    std::uint64_t crosscheck_checks() noexcept
    {
        return detail::crosscheck_check_count.load(std::memory_order_relaxed);
    }

    std::uint64_t crosscheck_mismatches() noexcept
    {
        return detail::crosscheck_mismatch_count.load(std::memory_order_relaxed);
    }

    std::string crosscheck_last_mismatch()
    {
        std::lock_guard<std::mutex> lock(detail::crosscheck_last_mutex);
        return detail::crosscheck_last;
    }

    rust::String crosscheck_last_mismatch_text()
    {
        return rust::String(crosscheck_last_mismatch());
    }

#ifdef SEAL_OPENCL_TEST_HOOKS
    void crosscheck_corrupt_next_result() noexcept
    {
        detail::crosscheck_corrupt_next.store(true);
    }
#endif
} // namespace seal_opencl
