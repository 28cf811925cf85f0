// Routing: the operation virtuals of seal::gpu::Backend, each one bridge call per shape of
// operands (GpuBackend::unary, binary, with_plain, next_level, and relinearize, apply_galois,
// mod_switch_plain_to_next), with SEAL's CPU call for the crosscheck setting. See backend.h.

#include "seal-opencl/ffi/backend.h"

#include "seal/util/ntt.h"

#include <algorithm>
#include <cstddef>
#include <optional>
#include <vector>

namespace seal_opencl::detail
{
    namespace
    {
        // Whether both ciphertexts hold the same words and metadata on the host, and their
        // device images those words too (in sync: the uploads of this call leave them so). An
        // operand copied from another before any backend was installed has its own upload;
        // two unrelated ciphertexts differ in their first word, where the comparison stops.
        bool equal_host_words(const Ciphertext &a, const Ciphertext &b)
        {
            return Access::residency(a) == seal::gpu::Residency::in_sync &&
                   Access::residency(b) == seal::gpu::Residency::in_sync && a.parms_id() == b.parms_id() &&
                   a.size() == b.size() && a.is_ntt_form() == b.is_ntt_form() &&
                   std::equal(a.data(), a.data() + a.dyn_array().size(), b.data());
        }

        // add_plain's or sub_plain's operation in the parameters' scheme: CKKS adds its NTT-form
        // words, BFV scales the plaintext by q / t, BGV multiplies it by the correction factor.
        PlainOp by_scheme(const SEALContext::ContextData &context_data, PlainOp ckks, PlainOp bfv, PlainOp bgv)
        {
            switch (context_data.parms().scheme())
            {
            case seal::scheme_type::bfv:
                return bfv;
            case seal::scheme_type::bgv:
                return bgv;
            default:
                return ckks;
            }
        }

        // The index of the one nonzero coefficient where SEAL's `plain.nonzero_coeff_count()
        // == 1` (reading up to the second nonzero coefficient), else none.
        std::optional<std::size_t> monomial_exponent(const Plaintext &plain)
        {
            const auto *begin = plain.data();
            const auto *end = begin + plain.coeff_count();
            const auto nonzero = [](std::uint64_t c) { return c != 0; };
            const auto *first = std::find_if(begin, end, nonzero);
            if (first == end || std::find_if(first + 1, end, nonzero) != end)
            {
                return std::nullopt;
            }
            return static_cast<std::size_t>(first - begin);
        }
    } // namespace

    // Runs one routed operation: `device` runs it on the device; `reference(cpu, result)`
    // computes SEAL's CPU result into `result` (an unmarked host object) from host copies of
    // the operands (`cpu.copy(x)`) with SEAL's own Evaluator (`cpu.evaluator`). It runs only for
    // the calls SEAL_OPENCL_CROSSCHECK samples; off, this is one branch.
    template <class T, class Device, class Ref>
    void OpenClBackend::routed(
        const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data, T &result,
        Device &&device, Ref &&reference)
    {
        if (crosscheck_every_ == 0)
        {
            device();
            return;
        }
        crosschecked<T>(operation, context, context_data, result, device, reference);
    }

    // The image of a result operand, created empty when it has none of ours yet (a fresh
    // destination, or a stale image of a foreign backend).
    template <class T>
    GpuImage &OpenClBackend::result_image(T &object)
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

    // ct = op(ct) in place.
    template <class CpuOp>
    void OpenClBackend::unary(
        const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
        Ciphertext &encrypted, UnaryOp op, CpuOp cpu_op)
    {
        const auto params = level_params(context, context_data);
        routed(
            operation, context, context_data, encrypted,
            [&] { translated([&] { backend_->unary(params, op, result_image(encrypted), encrypted.size()); }); },
            [&](Reference &cpu, Ciphertext &result) {
                result = cpu.copy(encrypted);
                cpu_op(cpu.evaluator, result);
            });
    }

    // encrypted1 = encrypted1 op encrypted2; `self_op(encrypted1)` when both are one
    // ciphertext (the device reads no operand it is writing).
    template <class CpuOp>
    void OpenClBackend::binary(
        const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
        Ciphertext &encrypted1, const Ciphertext &encrypted2, UnaryOp self_op, BinaryOp op, CpuOp cpu_op)
    {
        const auto params = level_params(context, context_data);
        const bool same = &encrypted1 == &encrypted2;
        // Equal words on the host are one operand twice, so that a - a is known to be zero at
        // the call, as SEAL's transparency check needs.
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

    // encrypted = encrypted op plain.
    template <class CpuOp>
    void OpenClBackend::with_plain(
        const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
        Ciphertext &encrypted, const Plaintext &plain, PlainOp op, std::uint64_t factor, CpuOp cpu_op)
    {
        const auto params = level_params(context, context_data);
        routed(
            operation, context, context_data, encrypted,
            [&] {
                translated([&] {
                    backend_->with_plain(
                        params, op, result_image(encrypted), encrypted.size(), image_of(plain), factor);
                });
            },
            [&](Reference &cpu, Ciphertext &result) {
                result = cpu.copy(encrypted);
                cpu_op(cpu.evaluator, result, cpu.copy(plain));
            });
    }

    // destination = encrypted at the next level; `inplace_op` when both are one ciphertext.
    template <class Ref>
    void OpenClBackend::next_level(
        const char *operation, const SEALContext &context, const SEALContext::ContextData &context_data,
        const Ciphertext &encrypted, Ciphertext &destination, UnaryOp inplace_op, NextLevelOp op, Ref &&reference)
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

    void OpenClBackend::negate_inplace(
        const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted)
    {
        unary("negate", context, context_data, encrypted, UnaryOp::Negate, [](auto &cpu, auto &result) {
            cpu.negate_inplace(result);
        });
    }

    void OpenClBackend::add_inplace(
        const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted1,
        const Ciphertext &encrypted2)
    {
        binary(
            "add", context, context_data, encrypted1, encrypted2, UnaryOp::DoubleInplace, BinaryOp::Add,
            [](auto &cpu, auto &result, const auto &operand) { cpu.add_inplace(result, operand); });
    }

    void OpenClBackend::sub_inplace(
        const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted1,
        const Ciphertext &encrypted2)
    {
        binary(
            "sub", context, context_data, encrypted1, encrypted2, UnaryOp::Zero, BinaryOp::Sub,
            [](auto &cpu, auto &result, const auto &operand) { cpu.sub_inplace(result, operand); });
    }

    void OpenClBackend::multiply_inplace(
        const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted1,
        const Ciphertext &encrypted2)
    {
        binary(
            "multiply", context, context_data, encrypted1, encrypted2, UnaryOp::Square, BinaryOp::Multiply,
            [](auto &cpu, auto &result, const auto &operand) { cpu.multiply_inplace(result, operand); });
    }

    void OpenClBackend::square_inplace(
        const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted)
    {
        unary("square", context, context_data, encrypted, UnaryOp::Square, [](auto &cpu, auto &result) {
            cpu.square_inplace(result);
        });
    }

    void OpenClBackend::relinearize_inplace(
        const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
        const seal::RelinKeys &relin_keys, std::size_t destination_size)
    {
        const auto params = level_params(context, context_data);
        routed(
            "relinearize", context, context_data, encrypted,
            [&] {
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

    void OpenClBackend::rescale_to_next(
        const SEALContext &context, const SEALContext::ContextData &context_data, const Ciphertext &encrypted,
        Ciphertext &destination)
    {
        next_level(
            "rescale_to_next", context, context_data, encrypted, destination, UnaryOp::RescaleToNextInplace,
            NextLevelOp::RescaleToNext, [&](Reference &cpu, Ciphertext &result) {
                // SEAL leaves the destination's correction factor as it was.
                result.correction_factor() = destination.correction_factor();
                cpu.evaluator.rescale_to_next(cpu.copy(encrypted), result);
            });
    }

    void OpenClBackend::mod_switch_to_next(
        const SEALContext &context, const SEALContext::ContextData &context_data, const Ciphertext &encrypted,
        Ciphertext &destination)
    {
        next_level(
            "mod_switch_to_next", context, context_data, encrypted, destination, UnaryOp::ModSwitchToNextInplace,
            NextLevelOp::ModSwitchToNext, [&](Reference &cpu, Ciphertext &result) {
                cpu.evaluator.mod_switch_to_next(cpu.copy(encrypted), result);
            });
    }

    void OpenClBackend::mod_switch_to_next_inplace(
        const SEALContext &context, const SEALContext::ContextData &context_data, Plaintext &plain)
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

    void OpenClBackend::multiply_plain_inplace(
        const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
        const Plaintext &plain)
    {
        // In NTT form: the dyadic product of every scheme; in coefficient form (BFV): with the
        // plaintext lifted to Z_q and both transformed. SEAL's multiply_plain_normal multiplies
        // by a monomial's coefficient unlifted where every prime exceeds t (fast plain lift);
        // whether the plaintext is one reads its host words, as SEAL does, up to its second
        // nonzero coefficient (SEAL counts them all: a dense plaintext's scan costs the call
        // microseconds). A monomial of coefficient 1 multiplies as a shift by its exponent.
        PlainOp op = PlainOp::MultiplyPlain;
        std::uint64_t factor = 0;
        if (!encrypted.is_ntt_form())
        {
            const auto exponent =
                context_data.qualifiers().using_fast_plain_lift ? monomial_exponent(plain) : std::nullopt;
            op = exponent ? PlainOp::MultiplyPlainUnlifted : PlainOp::MultiplyPlainCoeff;
            if (exponent && plain[*exponent] == 1)
            {
                op = PlainOp::MultiplyPowerOfX;
                factor = *exponent;
            }
        }
        with_plain(
            "multiply_plain", context, context_data, encrypted, plain, op, factor,
            [](auto &cpu, auto &result, const auto &operand) { cpu.multiply_plain_inplace(result, operand); });
    }

    void OpenClBackend::add_plain_inplace(
        const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
        const Plaintext &plain)
    {
        const PlainOp op =
            by_scheme(context_data, PlainOp::AddPlain, PlainOp::AddPlainScaled, PlainOp::AddPlainCorrected);
        with_plain(
            "add_plain", context, context_data, encrypted, plain, op, encrypted.correction_factor(),
            [](auto &cpu, auto &result, const auto &operand) { cpu.add_plain_inplace(result, operand); });
    }

    void OpenClBackend::sub_plain_inplace(
        const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
        const Plaintext &plain)
    {
        const PlainOp op =
            by_scheme(context_data, PlainOp::SubPlain, PlainOp::SubPlainScaled, PlainOp::SubPlainCorrected);
        with_plain(
            "sub_plain", context, context_data, encrypted, plain, op, encrypted.correction_factor(),
            [](auto &cpu, auto &result, const auto &operand) { cpu.sub_plain_inplace(result, operand); });
    }

    void OpenClBackend::apply_galois_inplace(
        const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted,
        std::uint32_t galois_elt, const seal::GaloisKeys &galois_keys)
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

    void OpenClBackend::transform_to_ntt_inplace(
        const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted)
    {
        unary(
            "transform_to_ntt", context, context_data, encrypted, UnaryOp::TransformToNtt,
            [](auto &cpu, auto &result) { cpu.transform_to_ntt_inplace(result); });
    }

    void OpenClBackend::transform_from_ntt_inplace(
        const SEALContext &context, const SEALContext::ContextData &context_data, Ciphertext &encrypted_ntt)
    {
        unary(
            "transform_from_ntt", context, context_data, encrypted_ntt, UnaryOp::TransformFromNtt,
            [](auto &cpu, auto &result) { cpu.transform_from_ntt_inplace(result); });
    }

    // CKKS at the levels ciphertexts live at (the key level only where it is the first: no
    // key switching), unless SEAL_OPENCL_ENCODE=host; the transform of a ciphertext's
    // polynomials, one polynomial of K residues.
    bool OpenClBackend::transforms_encoding(
        const SEALContext &context, const SEALContext::ContextData &context_data) const
    {
        return context_data.parms().scheme() == seal::scheme_type::ckks &&
               context_data.chain_index() <= context.first_context_data()->chain_index() &&
               backend_->routes_encoding();
    }

    void OpenClBackend::transform_encoding_to_ntt(
        const SEALContext &context, const SEALContext::ContextData &context_data, Plaintext &plain)
    {
        const auto params = level_params(context, context_data);
        routed(
            "encode (its NTT)", context, context_data, plain,
            [&] {
                translated([&] { backend_->unary(params, UnaryOp::TransformEncoding, result_image(plain), 1); });
            },
            [&](Reference &cpu, Plaintext &result) {
                result = cpu.copy(plain);
                const auto &parms = context_data.parms();
                const std::size_t n = parms.poly_modulus_degree();
                for (std::size_t i = 0; i < parms.coeff_modulus().size(); i++)
                {
                    seal::util::ntt_negacyclic_harvey(result.data(i * n), context_data.small_ntt_tables()[i]);
                }
                result.parms_id() = context_data.parms_id();
            });
    }

    namespace
    {
        // std::complex<double> is an array of two doubles (re, im) ([complex.numbers.general]);
        // the backend takes n of them as the IEEE bits of 2n doubles in its 64-bit words.
        rust::Slice<const std::uint64_t> complex_words(const std::complex<double> *values, std::size_t n)
        {
            return rust::Slice<const std::uint64_t>(reinterpret_cast<const std::uint64_t *>(values), 2 * n);
        }
    } // namespace

    bool OpenClBackend::encodes_values(
        const SEALContext &context, const SEALContext::ContextData &context_data,
        const std::complex<double> *values, std::size_t n, double fix) const
    {
        const auto params = level_params(context, context_data);
        return translated([&] { return backend_->encodes_values(params, complex_words(values, n), fix); });
    }

    // Not cross-checked against SEAL's CPU here: the oracle is SEAL's own encoder
    // (tests/seal_gpu_encode.rs compares every word), and each kernel's is its host reference
    // in crate::ckks::encode (tests/ckks_encode.rs).
    void OpenClBackend::encode_values(
        const SEALContext &context, const SEALContext::ContextData &context_data,
        const std::complex<double> *values, std::size_t n, const std::complex<double> *roots, double fix,
        Plaintext &plain)
    {
        const auto params = level_params(context, context_data);
        translated([&] {
            backend_->encode_values(
                params, complex_words(values, n), complex_words(roots, n), fix, result_image(plain));
        });
    }

    // CKKS only, and only where SEAL encrypts one level up (the level has a previous one): at
    // the key level itself SEAL encrypts without the division, and no routed operation takes a
    // ciphertext there.
    bool OpenClBackend::encrypts_zero(const SEALContext &, const SEALContext::ContextData &context_data) const
    {
        return context_data.parms().scheme() == seal::scheme_type::ckks && context_data.prev_context_data();
    }

    // Not cross-checked: SEAL's CPU path draws its own samples, so the oracle is the test
    // suite's, with a seeded PRNG (tests/seal_gpu.rs, encrypt_zero_*).
    void OpenClBackend::encrypt_zero(
        const SEALContext &context, const SEALContext::ContextData &context_data, const Ciphertext &public_key,
        const std::int8_t *samples, std::size_t count, Ciphertext &destination)
    {
        const auto params = level_params(context, context_data);
        translated([&] {
            backend_->encrypt_zero(
                params, image_of(public_key), rust::Slice<const std::int8_t>(samples, count),
                result_image(destination));
        });
    }
} // namespace seal_opencl::detail
