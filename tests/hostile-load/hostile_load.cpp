// Hostile input: serializations of Ciphertext, Plaintext, RelinKeys and
// GaloisKeys that are truncated, corrupted (bit flips in the header and the body), oversized
// (size and count fields claiming huge values) or out of range (a coefficient word >= its
// prime), loaded with SEAL's validating load, from memory and from a stream, into objects the
// GPU backend holds: ciphertexts and plaintexts marked with .gpu() that are fresh (empty),
// host_newer, in_sync (uploaded by a routed operation) or device_newer (a routed result, never
// read); keys that are fresh or cached on the device by a routed operation. Every load is made
// twice: into that object, and into an unmarked twin of its value on SEAL's CPU path. Then
// - the load ends as the twin's did: it returns, or it throws an exception of the same dynamic
//   type; SEAL's CPU path rejects what SEAL documents as invalid (truncated, oversized, out of
//   range), and accepts the valid serialization;
// - a rejected load leaves the twin as it was (SEAL's guarantee) and the object's device state
//   as it was: residency and image (ciphertexts, plaintexts), identity and version (keys, whose
//   device copies the backend caches by them); an accepted load makes the host words newer
//   (ciphertexts, plaintexts) or gives the keys a new identity or version;
// - a routed operation on the object before any host read (square, multiply_plain,
//   relinearize, rotate_vector) returns SEAL's CPU result, word for word, of the same operation
//   on the value the object must hold (its previous value after a rejection, the loaded one
//   after an acceptance), or throws the same exception type: so nothing of a rejected load
//   reaches the device image or the key cache, and nothing stale is used after an accepted one.
//   Then the object's own metadata and words equal that value;
// - after a rejection the object loads the valid serialization and passes the same checks.
// The process lives through all of it: every exception is caught and compared.
//
// SEAL API shared by SEAL 4.0 and 4.4, plus the patch's .gpu(), gpu::Access::residency / image,
// gpu::set_route_all and KSwitchKeys::gpu_id / gpu_version. Built and run by
// tests/hostile_load.rs; CMakeLists.txt says how to build it with AddressSanitizer.
//
// Exit status: 0 when every check holds, 1 when one fails, 2 on an error of the test itself.

#include "seal/seal.h"
#include "seal/gpu/access.h"
#include "seal_opencl.h"

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>
#include <exception>
#include <functional>
#include <iostream>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <tuple>
#include <typeinfo>
#include <utility>
#include <vector>

using namespace seal;
using namespace std;

namespace
{
    using Bytes = vector<seal_byte>;

    /* ---- how a call ended ---------------------------------------------------------------- */

    // Returned (empty type), or threw an exception of dynamic type `type`.
    struct Outcome
    {
        string type;
        string what;

        bool returned() const
        {
            return type.empty();
        }

        string text() const
        {
            return returned() ? "returned" : "threw " + type + " (" + what + ")";
        }
    };

    string demangled(const char *name)
    {
        int status = 0;
        unique_ptr<char, void (*)(void *)> readable(abi::__cxa_demangle(name, nullptr, nullptr, &status), free);
        return status == 0 ? string(readable.get()) : string(name);
    }

    template <class F>
    Outcome outcome_of(F &&call)
    {
        try
        {
            call();
            return {};
        }
        catch (const exception &e)
        {
            return { demangled(typeid(e).name()), e.what() };
        }
        catch (...)
        {
            return { "an exception not derived from std::exception", "" };
        }
    }

    /* ---- serializations -------------------------------------------------------------------- */

    template <class T>
    Bytes saved(const T &object)
    {
        Bytes bytes(static_cast<size_t>(object.save_size(compr_mode_type::none)));
        bytes.resize(static_cast<size_t>(object.save(bytes.data(), bytes.size(), compr_mode_type::none)));
        return bytes;
    }

    enum class Source
    {
        memory,
        stream
    };

    const char *name_of(Source source)
    {
        return source == Source::memory ? "from memory" : "from a stream";
    }

    // SEAL's validating load. From memory, `bytes` is a whole heap allocation, so a read past
    // its end is a heap overflow that AddressSanitizer reports.
    template <class T>
    void load(T &object, const SEALContext &context, const Bytes &bytes, Source source)
    {
        if (source == Source::memory)
        {
            object.load(context, bytes.data(), bytes.size());
        }
        else
        {
            istringstream stream(string(reinterpret_cast<const char *>(bytes.data()), bytes.size()));
            object.load(context, stream);
        }
    }

    void expect_u64_inside(const Bytes &bytes, size_t at)
    {
        if (at + sizeof(uint64_t) > bytes.size())
        {
            throw logic_error("serialization layout: byte " + to_string(at) + " is past the end");
        }
    }

    uint64_t read_u64(const Bytes &bytes, size_t at)
    {
        expect_u64_inside(bytes, at);
        uint64_t value;
        memcpy(&value, bytes.data() + at, sizeof(value));
        return value;
    }

    Bytes with_u64(Bytes bytes, size_t at, uint64_t value)
    {
        expect_u64_inside(bytes, at);
        memcpy(bytes.data() + at, &value, sizeof(value));
        return bytes;
    }

    Bytes with_bit_flipped(Bytes bytes, size_t at, int bit)
    {
        bytes.at(at) ^= static_cast<seal_byte>(1 << bit);
        return bytes;
    }

    // SEAL's uncompressed serialization, the same in SEAL 4.0 to 4.4. Every object starts with a
    // 16-byte SEALHeader: magic (u16), header size (u8), version major and minor (u8 each),
    // compression mode (u8), 2 reserved bytes, the object's size in bytes (u64).
    constexpr size_t header_bytes = 16;
    constexpr size_t header_size_at = 8;
    // Then a Ciphertext's members: parms_id (32 bytes), is_ntt_form (1 byte), size,
    // poly_modulus_degree, coeff_modulus_size (u64 each), scale (double), correction_factor (u64),
    // and its words as a DynArray: a SEALHeader, the word count (u64), the words (polynomial-
    // major, then prime, then coefficient).
    constexpr size_t ct_size_at = 49;
    constexpr size_t ct_degree_at = 57;
    constexpr size_t ct_moduli_at = 65;
    constexpr size_t ct_array_at = 89;
    constexpr size_t ct_count_at = 105;
    constexpr size_t ct_words_at = 113;
    // A Plaintext's: parms_id, coeff_count (u64), scale (double), the DynArray.
    constexpr size_t pt_coeff_count_at = 48;
    constexpr size_t pt_array_at = 64;
    constexpr size_t pt_count_at = 80;
    constexpr size_t pt_words_at = 88;
    // KSwitchKeys': parms_id, the number of key vectors (u64), then per vector its length (u64)
    // and its keys, each a PublicKey saved as a whole Ciphertext (with its own SEALHeader).
    constexpr size_t keys_count_at = 48;

    // A field holding a size or a count.
    struct Field
    {
        size_t at;
        string name;
        // SEAL before 4.3 reserves this many elements before it validates the number (key
        // dimensions): std::bad_alloc for 2^40 key vectors (24 TiB).
        bool reserved_unchecked;
    };

    // Where a serialization holds sizes and words. Found from the object it was saved from and
    // checked against it, so a changed format stops the test instead of mutating other bytes.
    struct Layout
    {
        // SEAL must reject a huge value in any of them.
        vector<Field> sizes;
        // Coefficient words (offset, prime, name): SEAL must reject a word >= its prime.
        vector<tuple<size_t, uint64_t, string>> words;
    };

    void expect_field(const Bytes &bytes, size_t at, uint64_t value, const string &what)
    {
        const uint64_t found = read_u64(bytes, at);
        if (found != value)
        {
            throw logic_error(
                "serialization layout: " + what + " at byte " + to_string(at) + " is " + to_string(found) +
                ", expected " + to_string(value));
        }
    }

    // The sizes of `ct`, saved at byte `at` of `bytes`, and three of its words (the first of its
    // first two primes, its last), which lie modulo `primes`.
    void add_ciphertext(
        Layout &layout, const Bytes &bytes, size_t at, const Ciphertext &ct, const vector<Modulus> &primes,
        const string &prefix)
    {
        const size_t n = ct.poly_modulus_degree();
        const size_t k = ct.coeff_modulus_size();
        const size_t count = ct.size() * n * k;
        expect_field(bytes, at + ct_size_at, ct.size(), prefix + "size");
        expect_field(bytes, at + ct_degree_at, n, prefix + "poly_modulus_degree");
        expect_field(bytes, at + ct_moduli_at, k, prefix + "coeff_modulus_size");
        expect_field(bytes, at + ct_count_at, count, prefix + "word count");
        expect_field(bytes, at + ct_words_at, ct.data()[0], prefix + "first word");
        layout.sizes.insert(
            layout.sizes.end(), { { at + header_size_at, prefix + "SEALHeader size", false },
                                  { at + ct_size_at, prefix + "size", false },
                                  { at + ct_degree_at, prefix + "poly_modulus_degree", false },
                                  { at + ct_moduli_at, prefix + "coeff_modulus_size", false },
                                  { at + ct_array_at + header_size_at, prefix + "word array's SEALHeader size", false },
                                  { at + ct_count_at, prefix + "word count", false } });
        for (size_t index : { size_t{ 0 }, n, count - 1 })
        {
            layout.words.emplace_back(
                at + ct_words_at + 8 * index, primes[(index / n) % k].value(), prefix + "word " + to_string(index));
        }
    }

    Layout ciphertext_layout(const Bytes &bytes, const Ciphertext &ct, const vector<Modulus> &primes)
    {
        Layout layout;
        add_ciphertext(layout, bytes, 0, ct, primes, "");
        return layout;
    }

    Layout plaintext_layout(const Bytes &bytes, const Plaintext &pt, const vector<Modulus> &primes, size_t n)
    {
        expect_field(bytes, pt_coeff_count_at, pt.coeff_count(), "coeff_count");
        expect_field(bytes, pt_count_at, pt.coeff_count(), "word count");
        expect_field(bytes, pt_words_at, pt.data()[0], "first word");
        Layout layout;
        layout.sizes = { { header_size_at, "SEALHeader size", false },
                         { pt_coeff_count_at, "coeff_count", false },
                         { pt_array_at + header_size_at, "word array's SEALHeader size", false },
                         { pt_count_at, "word count", false } };
        for (size_t index : { size_t{ 0 }, n, pt.coeff_count() - 1 })
        {
            layout.words.emplace_back(pt_words_at + 8 * index, primes[index / n].value(), "word " + to_string(index));
        }
        return layout;
    }

    // The key count, the length of the first non-empty key vector and its first key.
    Layout keys_layout(const Bytes &bytes, const KSwitchKeys &keys, const vector<Modulus> &primes)
    {
        const auto &vectors = keys.data();
        expect_field(bytes, keys_count_at, vectors.size(), "number of key vectors");
        Layout layout;
        layout.sizes = { { header_size_at, "SEALHeader size", false },
                         { keys_count_at, "number of key vectors", true } };
        size_t at = keys_count_at + 8;
        for (const auto &keys_of_index : vectors)
        {
            expect_field(bytes, at, keys_of_index.size(), "key vector length");
            if (!keys_of_index.empty())
            {
                layout.sizes.push_back({ at, "first key vector's length", true });
                add_ciphertext(layout, bytes, at + 8, keys_of_index.front().data(), primes, "first key's ");
                return layout;
            }
            at += 8;
        }
        throw logic_error("serialization layout: no key to corrupt");
    }

    /* ---- the hostile serializations ------------------------------------------------------ */

    enum class Expect
    {
        accept,
        reject,
        either
    };

    struct Case
    {
        string name;
        Bytes bytes;
        Expect expect;
    };

#if defined(__SANITIZE_ADDRESS__) && SEAL_VERSION_MAJOR == 4 && SEAL_VERSION_MINOR < 3
    // AddressSanitizer's operator new reports an allocation it cannot make as a fatal error
    // instead of throwing std::bad_alloc, so a reservation SEAL makes before validating its
    // size (Field::reserved_unchecked) must fit.
    constexpr bool failed_allocations_throw = false;
#else
    constexpr bool failed_allocations_throw = true;
#endif

    // Truncations, bit flips, oversized fields and out-of-range words of `valid`. SEAL accepts
    // some bit flips (a low bit of a coefficient, a reserved header byte, in SEAL 4.4 an older
    // minor version), so for those SEAL's CPU path decides.
    vector<Case> hostile_cases(const Bytes &valid, const Layout &layout, mt19937_64 &rng)
    {
        vector<Case> cases;
        const auto truncated = [&](size_t length) {
            cases.push_back({ "truncated to " + to_string(length) + " bytes",
                              Bytes(valid.begin(), valid.begin() + static_cast<ptrdiff_t>(length)), Expect::reject });
        };
        for (size_t length : { size_t{ 0 }, size_t{ 1 }, header_bytes - 1, header_bytes, header_bytes + 1,
                               valid.size() / 2, valid.size() - 8, valid.size() - 1 })
        {
            truncated(length);
        }
        for (const auto &field : layout.sizes)
        {
            // Ends inside the field.
            truncated(field.at + 4);
        }

        const auto flipped = [&](size_t at, int bit, const string &where) {
            cases.push_back({ where + " byte " + to_string(at) + " bit " + to_string(bit) + " flipped",
                              with_bit_flipped(valid, at, bit), Expect::either });
        };
        for (size_t at = 0; at < header_bytes; at++)
        {
            flipped(at, static_cast<int>(rng() % 8), "header");
        }
        for (const auto &field : layout.sizes)
        {
            flipped(field.at, 0, field.name);
        }
        for (int i = 0; i < 24; i++)
        {
            flipped(header_bytes + rng() % (valid.size() - header_bytes), static_cast<int>(rng() % 8), "body");
        }

        for (const auto &field : layout.sizes)
        {
            for (uint64_t huge : { uint64_t{ 1 } << 40, uint64_t{ 1 } << 62, ~uint64_t{ 0 } })
            {
                // 2^62 and more exceed std::vector's max_size: std::length_error before any
                // allocation.
                if (!failed_allocations_throw && field.reserved_unchecked && huge < (uint64_t{ 1 } << 62))
                {
                    continue;
                }
                cases.push_back(
                    { field.name + " = " + to_string(huge), with_u64(valid, field.at, huge), Expect::reject });
            }
        }

        for (const auto &word : layout.words)
        {
            const uint64_t prime = get<1>(word);
            for (uint64_t value : { prime, ~uint64_t{ 0 } })
            {
                cases.push_back({ get<2>(word) + " = " + to_string(value) + " (prime " + to_string(prime) + ")",
                                  with_u64(valid, get<0>(word), value), Expect::reject });
            }
        }
        return cases;
    }

    /* ---- comparing objects ----------------------------------------------------------------- */

    // What makes two objects of a kind equal: their metadata, as text, and their words.
    struct Content
    {
        string metadata;
        vector<uint64_t> words;
    };

    string text_of(const parms_id_type &parms_id)
    {
        ostringstream text;
        text << hex;
        for (uint64_t word : parms_id)
        {
            text << word << ' ';
        }
        return text.str();
    }

    // A host read: a device_newer ciphertext downloads.
    Content content(const Ciphertext &ct)
    {
        ostringstream metadata;
        metadata << "parms_id " << text_of(ct.parms_id()) << "size " << ct.size() << " N " << ct.poly_modulus_degree()
                 << " K " << ct.coeff_modulus_size() << " ntt " << ct.is_ntt_form() << " scale " << hexfloat
                 << ct.scale() << " correction factor " << ct.correction_factor();
        const uint64_t *words = ct.data();
        return { metadata.str(),
                 vector<uint64_t>(words, words + ct.size() * ct.poly_modulus_degree() * ct.coeff_modulus_size()) };
    }

    Content content(const Plaintext &pt)
    {
        ostringstream metadata;
        metadata << "parms_id " << text_of(pt.parms_id()) << "coeff_count " << pt.coeff_count() << " ntt "
                 << pt.is_ntt_form() << " scale " << hexfloat << pt.scale();
        const uint64_t *words = pt.data();
        return { metadata.str(), vector<uint64_t>(words, words + pt.coeff_count()) };
    }

    // Through the const data(): the non-const one would change the keys' gpu_version.
    Content content(const KSwitchKeys &keys)
    {
        Content all;
        all.metadata = "parms_id " + text_of(keys.parms_id()) + to_string(keys.data().size()) + " key vectors";
        for (size_t index = 0; index < keys.data().size(); index++)
        {
            for (const PublicKey &key : keys.data()[index])
            {
                const Content one = content(key.data());
                all.metadata += ", " + to_string(index) + ": " + one.metadata;
                all.words.insert(all.words.end(), one.words.begin(), one.words.end());
            }
        }
        return all;
    }

    // Empty when equal, else where they first differ.
    string difference(const Content &got, const Content &want)
    {
        if (got.metadata != want.metadata)
        {
            return "metadata " + got.metadata + " instead of " + want.metadata;
        }
        if (got.words.size() != want.words.size())
        {
            return to_string(got.words.size()) + " words instead of " + to_string(want.words.size());
        }
        const auto first = mismatch(got.words.begin(), got.words.end(), want.words.begin());
        if (first.first == got.words.end())
        {
            return "";
        }
        const size_t differing = static_cast<size_t>(inner_product(
            got.words.begin(), got.words.end(), want.words.begin(), size_t{ 0 }, plus<size_t>(),
            not_equal_to<uint64_t>()));
        return to_string(differing) + " of " + to_string(got.words.size()) + " words differ, first word " +
               to_string(first.first - got.words.begin()) + " (" + to_string(*first.first) + " instead of " +
               to_string(*first.second) + ")";
    }

    string prefixed(const string &prefix, const string &problem)
    {
        return problem.empty() ? problem : prefix + problem;
    }

    /* ---- device state ---------------------------------------------------------------------- */

    const char *name_of(gpu::Residency residency)
    {
        switch (residency)
        {
        case gpu::Residency::host_only:
            return "host_only";
        case gpu::Residency::host_newer:
            return "host_newer";
        case gpu::Residency::device_newer:
            return "device_newer";
        case gpu::Residency::in_sync:
            return "in_sync";
        }
        return "an unknown residency";
    }

    template <class T>
    string residency_and_image(const T &object)
    {
        ostringstream text;
        text << name_of(gpu::Access::residency(object)) << ", image " << gpu::Access::image(object);
        return text.str();
    }

    string device_state(const Ciphertext &ct)
    {
        return residency_and_image(ct);
    }

    string device_state(const Plaintext &pt)
    {
        return residency_and_image(pt);
    }

    string device_state(const KSwitchKeys &keys)
    {
        return "key object " + to_string(keys.gpu_id()) + " version " + to_string(keys.gpu_version());
    }

    template <class T>
    string host_newer_problem(const T &object)
    {
        return gpu::Access::residency(object) == gpu::Residency::host_newer
                   ? ""
                   : string("a load left it ") + name_of(gpu::Access::residency(object)) + ", not host_newer";
    }

    // Empty when `object`, in device state `before` until a load succeeded, is in the state
    // such a load leaves: host words newer (ciphertexts, plaintexts), another identity or
    // version (keys).
    string loaded_state_problem(const Ciphertext &ct, const string &)
    {
        return host_newer_problem(ct);
    }

    string loaded_state_problem(const Plaintext &pt, const string &)
    {
        return host_newer_problem(pt);
    }

    string loaded_state_problem(const KSwitchKeys &keys, const string &before)
    {
        return device_state(keys) == before ? "the keys kept their identity and version (" + before +
                                                  ") through a load: a backend would use its copy of the old keys"
                                            : "";
    }

    template <class T>
    void expect_residency(const T &object, gpu::Residency residency)
    {
        if (gpu::Access::residency(object) != residency)
        {
            throw logic_error(
                string("fixture: a state meant to be ") + name_of(residency) + " is " +
                name_of(gpu::Access::residency(object)));
        }
    }

    /* ---- operations ------------------------------------------------------------------------ */

    struct Result
    {
        Outcome outcome;
        // Of the result, when the operation returned.
        Content content;
        // The result is marked for the device: it came from the backend.
        bool marked = false;
    };

    Result result_of(const Outcome &outcome, const Ciphertext &result)
    {
        return { outcome, outcome.returned() ? content(result) : Content{}, result.on_gpu() };
    }

    // Empty when the routed operation ended as SEAL's CPU path did.
    string operation_problem(const Result &routed, const Result &cpu)
    {
        if (routed.outcome.type != cpu.outcome.type)
        {
            return "the routed operation " + routed.outcome.text() + ", SEAL's CPU path " + cpu.outcome.text();
        }
        if (!routed.outcome.returned())
        {
            return "";
        }
        if (!routed.marked || cpu.marked)
        {
            return "the routed operation's result is not marked, or SEAL's CPU result is (is SEAL_GPU_ROUTE_ALL set?)";
        }
        return prefixed("the routed operation's result: ", difference(routed.content, cpu.content));
    }

    /* ---- the test -------------------------------------------------------------------------- */

    class Report
    {
    public:
        void check(const string &where, const string &problem)
        {
            checks_++;
            if (problem.empty())
            {
                return;
            }
            if (failures_ < max_printed)
            {
                cout << "FAIL " << where << ": " << problem << "\n";
            }
            failures_++;
        }

        void count_load(bool rejected)
        {
            (rejected ? rejected_ : accepted_)++;
        }

        size_t loads() const
        {
            return rejected_ + accepted_;
        }

        size_t rejected() const
        {
            return rejected_;
        }

        int finish() const
        {
            cout << loads() << " loads (" << rejected_ << " rejected, " << accepted_ << " accepted), " << checks_
                 << " checks\n";
            if (failures_ == 0)
            {
                cout << "RESULT: every hostile load ended as on SEAL's CPU path, and left nothing on the device\n";
                return 0;
            }
            cout << "RESULT: " << failures_ << " checks failed\n";
            return 1;
        }

    private:
        static constexpr size_t max_printed = 60;
        size_t checks_ = 0;
        size_t failures_ = 0;
        size_t rejected_ = 0;
        size_t accepted_ = 0;
    };

    template <class T>
    struct State
    {
        string name;
        // Puts `target` in this state and `previous` (unmarked) in the value `target` holds.
        function<void(T &target, T &previous)> make;
    };

    template <class T>
    struct Kind
    {
        string name;
        const SEALContext &context;
        Bytes valid;
        vector<Case> cases;
        vector<State<T>> states;
        // The kind's operation on `subject`, through the backend or on the CPU: keys are used
        // with a marked ciphertext when `routed` is set; a ciphertext or plaintext is routed
        // when it is marked, so its operation ignores the flag.
        function<Result(const T &subject, bool routed)> operation;
    };

    // Empty when SEAL's CPU path ended the load as SEAL documents.
    string expectation_problem(Expect expect, const Outcome &cpu)
    {
        if (expect == Expect::reject && cpu.returned())
        {
            return "SEAL's CPU path accepted bytes SEAL documents as invalid";
        }
        if (expect == Expect::accept && !cpu.returned())
        {
            return "SEAL's CPU path rejected the valid serialization: " + cpu.text();
        }
        return "";
    }

    // Loads `c` into `target` and into a copy of `previous` (the value `target` holds) and makes
    // every check of the comment at the top. Returns whether SEAL's CPU path rejected it.
    template <class T>
    bool check_load(
        Report &report, const Kind<T> &kind, T &target, const T &previous, const Case &c, Source source,
        const string &where)
    {
        const string before = device_state(target);
        T twin(previous);
        const Outcome cpu = outcome_of([&] { load(twin, kind.context, c.bytes, source); });
        const Outcome gpu = outcome_of([&] { load(target, kind.context, c.bytes, source); });
        report.count_load(!cpu.returned());
        report.check(
            where, gpu.type == cpu.type
                       ? ""
                       : "the marked object's load " + gpu.text() + ", the unmarked twin's " + cpu.text());
        report.check(where, expectation_problem(c.expect, cpu));
        if (gpu.returned())
        {
            report.check(where, loaded_state_problem(target, before));
        }
        else
        {
            const string after = device_state(target);
            report.check(
                where,
                after == before ? "" : "a rejected load changed the device state from " + before + " to " + after);
        }
        if (!cpu.returned())
        {
            report.check(
                where, prefixed(
                           "SEAL's CPU path: a rejected load changed the object: ",
                           difference(content(twin), content(previous))));
        }
        // What `target` must hold now.
        const T &value = cpu.returned() ? twin : previous;
        // The device image (or the key cache) first: a routed operation before any host read.
        report.check(where, operation_problem(kind.operation(target, true), kind.operation(value, false)));
        report.check(where, prefixed("the object: ", difference(content(target), content(value))));
        return !cpu.returned();
    }

    template <class T>
    void run_kind(Report &report, const Kind<T> &kind)
    {
        const size_t loads = report.loads();
        const size_t rejected = report.rejected();
        vector<Case> cases{ { "the valid serialization", kind.valid, Expect::accept } };
        cases.insert(cases.end(), kind.cases.begin(), kind.cases.end());
        for (const State<T> &state : kind.states)
        {
            for (Source source : { Source::memory, Source::stream })
            {
                for (const Case &c : cases)
                {
                    T target;
                    T previous;
                    state.make(target, previous);
                    const string where = kind.name + " (" + state.name + ") " + name_of(source) + ", " + c.name;
                    if (check_load(report, kind, target, previous, c, source, where))
                    {
                        // Still usable: the next serialization, a valid one, loads and computes.
                        check_load(
                            report, kind, target, previous, cases.front(), source,
                            where + ", then the valid serialization");
                    }
                }
            }
        }
        cout << kind.name << ": " << cases.size() << " serializations x " << kind.states.size()
             << " states x 2 sources, " << report.loads() - loads << " loads (" << report.rejected() - rejected
             << " rejected)\n";
    }

    // A copy of `ct`, marked when `routed`: an operation on it runs through the backend.
    Ciphertext operand(const Ciphertext &ct, bool routed)
    {
        Ciphertext copy(ct);
        if (routed)
        {
            copy.gpu();
        }
        return copy;
    }

    // Keys are never marked: `operation` is routed when it uses them with a marked ciphertext.
    // The cached state holds `keys`, used once by a routed operation; `other` (valid keys of
    // another secret key) are saved and mutated.
    template <class Keys>
    Kind<Keys> keys_kind(
        const string &name, const SEALContext &context, const Keys &keys, const Keys &other, mt19937_64 &rng,
        const function<Result(const Keys &, bool routed)> &operation)
    {
        const Bytes bytes = saved(other);
        const vector<Modulus> &primes = context.key_context_data()->parms().coeff_modulus();
        return { name,
                 context,
                 bytes,
                 hostile_cases(bytes, keys_layout(bytes, other, primes), rng),
                 { { "fresh",
                     [](Keys &, Keys &) {
                     } },
                   { "cached",
                     [&keys, operation, name](Keys &target, Keys &previous) {
                         target = keys;
                         previous = keys;
                         if (!operation(target, true).outcome.returned())
                         {
                             throw logic_error("fixture: a routed operation with " + name + " failed");
                         }
                     } } },
                 operation };
    }

    int run()
    {
        // N = 2^12, two data primes: key switching, a level to switch to, and a product's scale
        // (2^32) within the last level's 36 bits, so multiply_plain works on every level.
        EncryptionParameters parms(scheme_type::ckks);
        const size_t n = 4096;
        parms.set_poly_modulus_degree(n);
        parms.set_coeff_modulus(CoeffModulus::Create(n, { 36, 30, 36 }));
        SEALContext context(parms);
        const vector<Modulus> &data_primes = context.first_context_data()->parms().coeff_modulus();
        const double scale = pow(2.0, 16);

        KeyGenerator keygen(context);
        KeyGenerator other_keygen(context);
        PublicKey public_key;
        keygen.create_public_key(public_key);
        RelinKeys relin_keys;
        RelinKeys other_relin_keys;
        keygen.create_relin_keys(relin_keys);
        other_keygen.create_relin_keys(other_relin_keys);
        GaloisKeys galois_keys;
        GaloisKeys other_galois_keys;
        keygen.create_galois_keys(vector<int>{ 1 }, galois_keys);
        other_keygen.create_galois_keys(vector<int>{ 1 }, other_galois_keys);

        Encryptor encryptor(context, public_key);
        Evaluator evaluator(context);
        CKKSEncoder encoder(context);
        vector<double> x(encoder.slot_count());
        vector<double> y(encoder.slot_count());
        for (size_t i = 0; i < x.size(); i++)
        {
            x[i] = static_cast<double>(i % 17) / 17.0;
            y[i] = 1.0 - x[i] / 2.0;
        }
        Plaintext pa;
        Plaintext pb;
        encoder.encode(x, scale, pa);
        encoder.encode(y, scale, pb);
        Ciphertext a;
        Ciphertext b;
        encryptor.encrypt(pa, a);
        encryptor.encrypt(pb, b);
        Ciphertext product;
        evaluator.multiply(a, b, product);

        // A routed operation marks its inputs: the fixtures' routed calls take copies of these,
        // so that the CPU results stay on the CPU.
        seal_opencl::install_backend();
        // The twins and the CPU results must stay unmarked whatever SEAL_GPU_ROUTE_ALL says.
        gpu::set_route_all(false);
        mt19937_64 rng(30);
        Report report;

        const Bytes ciphertext_bytes = saved(b);
        run_kind<Ciphertext>(
            report, { "Ciphertext",
                      context,
                      ciphertext_bytes,
                      hostile_cases(ciphertext_bytes, ciphertext_layout(ciphertext_bytes, b, data_primes), rng),
                      { { "fresh",
                          [](Ciphertext &target, Ciphertext &) {
                              target.gpu();
                          } },
                        { "host_newer",
                          [&](Ciphertext &target, Ciphertext &previous) {
                              target = a;
                              target.gpu();
                              previous = a;
                          } },
                        { "in_sync",
                          [&](Ciphertext &target, Ciphertext &previous) {
                              target = a;
                              target.gpu();
                              Ciphertext sum;
                              evaluator.add(target, target, sum);
                              expect_residency(target, gpu::Residency::in_sync);
                              previous = a;
                          } },
                        { "device_newer",
                          [&](Ciphertext &target, Ciphertext &previous) {
                              target = a;
                              target.gpu();
                              Ciphertext addend(b);
                              evaluator.add_inplace(target, addend);
                              expect_residency(target, gpu::Residency::device_newer);
                              previous = a;
                              evaluator.add_inplace(previous, b);
                          } } },
                      [&](const Ciphertext &subject, bool) {
                          Ciphertext square;
                          return result_of(outcome_of([&] { evaluator.square(subject, square); }), square);
                      } });

        const Bytes plaintext_bytes = saved(pb);
        run_kind<Plaintext>(
            report, { "Plaintext",
                      context,
                      plaintext_bytes,
                      hostile_cases(plaintext_bytes, plaintext_layout(plaintext_bytes, pb, data_primes, n), rng),
                      { { "fresh",
                          [](Plaintext &target, Plaintext &) {
                              target.gpu();
                          } },
                        { "host_newer",
                          [&](Plaintext &target, Plaintext &previous) {
                              target = pa;
                              target.gpu();
                              previous = pa;
                          } },
                        { "in_sync",
                          [&](Plaintext &target, Plaintext &previous) {
                              target = pa;
                              target.gpu();
                              Ciphertext operand(a);
                              Ciphertext product_with_plain;
                              evaluator.multiply_plain(operand, target, product_with_plain);
                              expect_residency(target, gpu::Residency::in_sync);
                              previous = pa;
                          } },
                        { "device_newer",
                          [&](Plaintext &target, Plaintext &previous) {
                              target = pa;
                              target.gpu();
                              evaluator.mod_switch_to_next_inplace(target);
                              expect_residency(target, gpu::Residency::device_newer);
                              previous = pa;
                              evaluator.mod_switch_to_next_inplace(previous);
                          } } },
                      [&](const Plaintext &subject, bool) {
                          Ciphertext at_level;
                          Ciphertext result;
                          const Outcome outcome = outcome_of([&] {
                              evaluator.mod_switch_to(a, subject.parms_id(), at_level);
                              evaluator.multiply_plain(at_level, subject, result);
                          });
                          return result_of(outcome, result);
                      } });

        run_kind(
            report,
            keys_kind<RelinKeys>(
                "RelinKeys", context, relin_keys, other_relin_keys, rng, [&](const RelinKeys &keys, bool routed) {
                    Ciphertext result = operand(product, routed);
                    return result_of(outcome_of([&] { evaluator.relinearize_inplace(result, keys); }), result);
                }));
        run_kind(
            report,
            keys_kind<GaloisKeys>(
                "GaloisKeys", context, galois_keys, other_galois_keys, rng, [&](const GaloisKeys &keys, bool routed) {
                    Ciphertext result = operand(a, routed);
                    return result_of(outcome_of([&] { evaluator.rotate_vector_inplace(result, 1, keys); }), result);
                }));

        seal_opencl::uninstall_backend();
        return report.finish();
    }
} // namespace

int main()
{
    try
    {
        return run();
    }
    catch (const exception &e)
    {
        cout << "RESULT: ERROR: " << e.what() << "\n";
        return 2;
    }
}
