// The C++ half of the SEAL backend, private to ffi/: a seal::gpu::Backend whose virtuals turn
// SEAL objects into plain views (parameters, word counts, device images) and call the Rust
// backend (src/seal_backend) through the cxx bridge declared in src/ffi/mod.rs.
//
// What lives in C++ and not in Rust: everything that needs SEAL's C++ types (Ciphertext,
// SEALContext, KSwitchKeys) and the translation of Rust errors into the exception types SEAL
// throws. The Rust side never sees a SEAL object. One file per concern, all sharing this
// header:
//   residency.cc   images, uploads and downloads, frames, keys, Rust errors as SEAL's
//   routing.cc     the operation virtuals, one bridge call per shape of operands
//   crosscheck.cc  the crosscheck setting: SEAL's CPU result beside every sampled operation
//   install.cc     installing the backend and the functions of seal_opencl.h that ask it
#pragma once

#include "seal-opencl/ffi/seal_opencl.h"
#include "seal-opencl/src/ffi/mod.rs.h"

#include <atomic>
#include <complex>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <utility>

#include "seal/ciphertext.h"
#include "seal/context.h"
#include "seal/evaluator.h"
#include "seal/galoiskeys.h"
#include "seal/gpu/access.h"
#include "seal/gpu/backend.h"
#include "seal/kswitchkeys.h"
#include "seal/plaintext.h"
#include "seal/relinkeys.h"

namespace seal_opencl::detail
{
    using seal::Ciphertext;
    using seal::Plaintext;
    using seal::SEALContext;
    using seal::gpu::Access;

    /* ---- Rust errors (residency.cc) ----------------------------------------------------- */

    // Rethrows a Rust error as the exception type SEAL throws for its cause, with its message.
    [[noreturn]] void rethrow_as_seal(const rust::Error &e);

    // Runs a bridge call, its Rust error rethrown as SEAL's exception type.
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

    /* ---- images and keys (residency.cc) ------------------------------------------------- */

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

    // The Rust image of an operand; std::logic_error when it has none of this backend.
    const GpuImage &image_of(const seal::gpu::DeviceImage *image);
    const GpuImage &image_of(const Ciphertext &encrypted);
    const GpuImage &image_of(const Plaintext &plain);
    // The same, for an image owned by a non-const SEAL object.
    GpuImage &mutable_image_of(const seal::gpu::DeviceImage *image);

    // The parameter set (identified by the key level's parms_id) and the level of one call.
    LevelParams level_params(const SEALContext &context, const SEALContext::ContextData &context_data);

    // Makes key_vector `index` of `keys` resident (uploads it on first use or after it
    // changed) and names it for the bridge.
    KeyRef resident_key(
        const GpuBackend &backend, const LevelParams &params, const seal::KSwitchKeys &keys, std::size_t index);

    /* ---- the crosscheck setting (crosscheck.cc) ----------------------------------------- */

    // Thrown by a cross-check that cannot compare this call (see OpenClBackend::crosschecked).
    struct SkipCrosscheck
    {};

    /* ---- the backend ---------------------------------------------------------------------- */

    class OpenClBackend final : public seal::gpu::Backend
    {
    public:
        // `crosscheck_every`: the crosscheck setting (0: off).
        OpenClBackend(rust::Box<GpuBackend> backend, std::uint64_t crosscheck_every);

        // What seal_opencl.h's functions ask of the installed backend (residency.cc).
        DeviceMemory device_memory() const;
        Traffic traffic() const;
        void bind_thread(int device) const;
        int tile_count() const;

        // Residency, frames, keys, transparency (residency.cc).
        seal::MemoryPoolHandle host_pool() const override;
        std::unique_ptr<seal::gpu::DeviceImage> create_image(const std::uint64_t *data, std::size_t uint64_count) override;
        void upload(seal::gpu::DeviceImage &image, const std::uint64_t *data, std::size_t uint64_count) override;
        void download(const seal::gpu::DeviceImage &image, std::uint64_t *data, std::size_t uint64_count) override;
        std::unique_ptr<seal::gpu::DeviceImage> clone_image(const seal::gpu::DeviceImage &image) override;
        void start_compute_frame() override;
        void end_compute_frame() override;
        void synchronize() override;
        bool is_transparent(const Ciphertext &encrypted, const char *operation) override;
        void release_keys(std::uint64_t key_object) noexcept override;
        void on_cpu_fallback(const char *operation) override;

        // The operation virtuals (routing.cc).
        void negate_inplace(
            const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted) override;
        void add_inplace(
            const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted1,
            const Ciphertext &encrypted2) override;
        void sub_inplace(
            const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted1,
            const Ciphertext &encrypted2) override;
        void multiply_inplace(
            const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted1,
            const Ciphertext &encrypted2) override;
        void square_inplace(
            const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted) override;
        void relinearize_inplace(
            const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
            const seal::RelinKeys &relin_keys, std::size_t destination_size) override;
        void rescale_to_next(
            const SEALContext &context, const SEALContext::ContextData &context_data, const Ciphertext &encrypted,
            Ciphertext &destination) override;
        void mod_switch_to_next(
            const SEALContext &context, const SEALContext::ContextData &context_data, const Ciphertext &encrypted,
            Ciphertext &destination) override;
        void mod_switch_to_next_inplace(
            const SEALContext &context, const SEALContext::ContextData &context_data, Plaintext &plain) override;
        void multiply_plain_inplace(
            const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
            const Plaintext &plain) override;
        void add_plain_inplace(
            const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
            const Plaintext &plain) override;
        void sub_plain_inplace(
            const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
            const Plaintext &plain) override;
        void apply_galois_inplace(
            const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
            std::uint32_t galois_elt, const seal::GaloisKeys &galois_keys) override;
        void transform_to_ntt_inplace(
            const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted) override;
        void transform_from_ntt_inplace(
            const SEALContext &context, const SEALContext::ContextData &context_data,
            Ciphertext &encrypted_ntt) override;
        // Encoding (routing.cc): CKKSEncoder::encode's NTT, or its transform, rounding,
        // reduction and NTT, at a level ciphertexts live at.
        bool transforms_encoding(
            const SEALContext &context, const SEALContext::ContextData &context_data) const override;
        void transform_encoding_to_ntt(
            const SEALContext &context, const SEALContext::ContextData &context_data, Plaintext &plain) override;
        bool encodes_values(
            const SEALContext &context, const SEALContext::ContextData &context_data,
            const std::complex<double> *values, std::size_t n, double fix) const override;
        void encode_values(
            const SEALContext &context, const SEALContext::ContextData &context_data,
            const std::complex<double> *values, std::size_t n, const std::complex<double> *roots, double fix,
            Plaintext &plain) override;
        // Encryption (routing.cc): CKKS public-key encryption of zero, one level up and rescaled.
        bool encrypts_zero(const SEALContext &context, const SEALContext::ContextData &context_data) const override;
        void encrypt_zero(
            const SEALContext &context, const SEALContext::ContextData &context_data, const Ciphertext &public_key,
            const std::int8_t *samples, std::size_t count, Ciphertext &destination) override;

    private:
        // Host copies of device operands and SEAL's Evaluator, for one CPU reference
        // (crosscheck.cc).
        class Reference
        {
        public:
            Reference(OpenClBackend &backend, const SEALContext &context);

            // An unmarked ciphertext with `x`'s metadata and the words of its device image.
            Ciphertext copy(const Ciphertext &x);
            // A plaintext (never marked when constructed) with `p`'s metadata and image words.
            Plaintext copy(const Plaintext &p);

            seal::Evaluator evaluator;

        private:
            OpenClBackend &backend_;
            const SEALContext &context_;
        };

        // The shapes of the routed operations (routing.cc), each with its bridge call
        // (GpuBackend::unary, binary, with_plain, next_level): `op` (and `self_op`) name the
        // operation of that shape (with_plain's `factor`: BGV's correction factor, or the
        // exponent of MultiplyPowerOfX's monomial); `cpu_op(evaluator, result, ...)` is SEAL's
        // Evaluator call on the host copies. All take their arguments by reference and inline into the override:
        // a routed call costs what the written-out body did.
        template <class CpuOp>
        void unary(
            const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
            Ciphertext &encrypted, UnaryOp op, CpuOp cpu_op);
        template <class CpuOp>
        void binary(
            const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
            Ciphertext &encrypted1, const Ciphertext &encrypted2, UnaryOp self_op, BinaryOp op, CpuOp cpu_op);
        template <class CpuOp>
        void with_plain(
            const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
            Ciphertext &encrypted, const Plaintext &plain, PlainOp op, std::uint64_t factor, CpuOp cpu_op);
        template <class Ref>
        void next_level(
            const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
            const Ciphertext &encrypted, Ciphertext &destination, UnaryOp inplace_op, NextLevelOp op,
            Ref &&reference);
        template <class T, class Device, class Ref>
        void routed(
            const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
            T &result, Device &&device, Ref &&reference);
        template <class T>
        GpuImage &result_image(T &object);

        // One routed operation cross-checked (crosscheck.cc; T is Ciphertext or Plaintext).
        template <class T>
        void crosschecked(
            const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
            T &result, const std::function<void()> &device,
            const std::function<void(Reference &, T &)> &reference);
        void download_operand(const seal::gpu::DeviceImage *image, std::uint64_t *data, std::size_t count);
#ifdef SEAL_OPENCL_TEST_HOOKS
        void corrupt(seal::gpu::DeviceImage &image);
#endif
        void check_pending_metadata(const Ciphertext &encrypted);

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
} // namespace seal_opencl::detail
