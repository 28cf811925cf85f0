// The C++ entry points of seal-opencl for programs that use the patched SEAL directly.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace seal_opencl
{
    // Installs the OpenCL backend into patched SEAL (seal::gpu::set_backend) with the settings
    // of the environment's SEAL_OPENCL_* variables (docs/SETTINGS.md); the device comes from
    // SEAL_OPENCL_DEVICE (gpu | cpu | P:D; default first GPU, else first CPU device). Throws
    // std::invalid_argument for a setting that does not parse (naming it), std::runtime_error
    // (with the list of devices) if no device fits. Idempotent: a second call while installed
    // keeps the installed backend.
    void install_backend();

    // The settings of install_backend(const Options &); a field left empty takes its default,
    // and the environment is not read. Each is the SEAL_OPENCL_* setting of the same name in
    // docs/SETTINGS.md, with the same values and defaults.
    struct Options
    {
        std::optional<std::string> device;             // "gpu", "cpu" or "P:D"
        std::optional<std::string> devices;            // "all" or "0,1,...": which of its kind
        std::optional<std::uint32_t> queues;           // in-order queues per device (default 2)
        std::optional<std::uint64_t> max_bytes;        // device memory per device's pool
        std::optional<std::uint64_t> max_key_bytes;    // key bytes kept per device
        std::optional<std::uint64_t> max_pinned_bytes; // page-locked host bytes, whole process
        std::optional<std::string> log;                // "error", "warn", "info" or "debug"
        std::optional<std::string> profile;            // the profile's path, written at exit
        std::optional<std::uint64_t> crosscheck;       // 0 off, N: every N-th routed operation
        std::optional<std::string> check_transparent;  // "deferred", "eager" or "off"
        std::optional<std::string> poison;             // "1" or a hexadecimal word (tests)
        std::optional<bool> sync;                      // wait for every kernel (debugging)
    };

    // Installs the backend with `options`. Throws as install_backend() does, and
    // std::logic_error when a backend is installed already (uninstall_backend() first).
    void install_backend(const Options &options);

    // Uninstalls it (seal::gpu::set_backend(nullptr)). Device ciphertexts must be brought to
    // the host (e.g. decrypted or read) before, or their host reads throw std::logic_error.
    void uninstall_backend();

    // Binds the calling thread to device `device` of the installed backend: its later routed
    // operations, uploads and copies run there. Devices are numbered from 0 in the order
    // SEAL_OPENCL_DEVICES lists them (default: every GPU of the first platform that has one,
    // else its CPU device); with SEAL_OPENCL_TILES partitioning, each tile (sub-device) counts
    // as one. Unbound threads take the devices round robin in the order they first issue.
    // Operands on another device are moved to the calling thread's on the device (never
    // through the host). Throws std::invalid_argument for an index the backend does not have
    // (the binding is then unchanged), std::logic_error when the backend is not installed.
    void bind_thread_to_device(int device);

    // How many devices (tiles) the installed backend issues on; std::logic_error when it is not
    // installed.
    int device_count();

    // SEAL_OPENCL_CROSSCHECK (read by install_backend: unset or `0` off, `1` every routed
    // operation, N every N-th, anything else std::invalid_argument): the sampled operations also
    // run on SEAL's CPU path from host copies of the operands, and the device result's words and
    // metadata must equal SEAL's; a difference throws std::logic_error from the Evaluator call.
    // Process-wide counts: results compared, mismatches found; the last mismatch's message.
    std::uint64_t crosscheck_checks() noexcept;
    std::uint64_t crosscheck_mismatches() noexcept;
    std::string crosscheck_last_mismatch();

    // What the installed backend's transfers and first uses cost the host so far, every
    // thread's: requests for a device buffer the pools had no free one for (misses, served
    // by a sub-buffer of a slab or a buffer of their own), device allocations and
    // page-locked host blocks from the driver, uploads from page-locked words (asynchronous) and from pageable ones
    // (blocking), downloads, with their bytes; SEAL's copies of device objects (which share
    // the words until one side writes), and whole objects the device copied (a write to
    // shared words, a move between devices; counted over every backend of the process).
    // Throws std::logic_error when it is not installed.
    struct TransferCounts
    {
        std::uint64_t pool_misses;
        std::uint64_t device_allocations;
        std::uint64_t pinned_allocations;
        std::uint64_t pinned_uploads;
        std::uint64_t pinned_upload_bytes;
        std::uint64_t pageable_uploads;
        std::uint64_t pageable_upload_bytes;
        std::uint64_t downloads;
        std::uint64_t download_bytes;
        std::uint64_t image_copies;
        std::uint64_t device_copies;
    };
    TransferCounts transfer_counts();

    // The kernels every thread's routed calls ran since the last call, per loop: device time
    // (start to end, summed), host time of the routed calls (entering the backend to
    // returning to SEAL), launches, and the device's idle time between them (gaps over 10 us
    // on a queue: the device waited for the host). Only in a process started with SEAL_OPENCL_PROFILE=path,
    // whose queues give every launch an event (which costs the host more: take wall times in a
    // run without it). Waits for those kernels and adds them to the profile written at exit as
    // operation `name`, `loops` runs of `wall_us` each on the caller's clock. Throws
    // std::logic_error when profiling is off.
    struct ProfiledWork
    {
        double kernel_us;
        double host_us;
        double launches;
        double idle_us;
    };
    ProfiledWork profile_operation(const std::string &name, double wall_us, unsigned loops);
} // namespace seal_opencl
