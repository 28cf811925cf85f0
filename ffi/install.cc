// Installing the backend into patched SEAL, and the functions of seal_opencl.h that ask the
// installed one. See backend.h.

#include "seal-opencl/ffi/backend.h"

#include <mutex>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

namespace seal_opencl
{
    namespace
    {
        std::mutex install_mutex;

        // The installed backend, if it is seal-opencl's; else std::logic_error.
        std::shared_ptr<detail::OpenClBackend> installed_open_cl_backend()
        {
            auto backend = std::dynamic_pointer_cast<detail::OpenClBackend>(seal::gpu::backend());
            if (!backend)
            {
                throw std::logic_error("seal-opencl: the OpenCL backend is not installed");
            }
            return backend;
        }
    } // namespace

    void install_backend()
    {
        std::lock_guard<std::mutex> lock(install_mutex);
        if (seal::gpu::backend_installed())
        {
            return;
        }
        auto backend = detail::translated([] { return new_gpu_backend({}, true); });
        const std::uint64_t crosscheck = backend->crosscheck_every();
        seal::gpu::set_backend(std::make_shared<detail::OpenClBackend>(std::move(backend), crosscheck));
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
        auto backend = detail::translated([&] { return new_gpu_backend(settings, false); });
        const std::uint64_t crosscheck = backend->crosscheck_every();
        seal::gpu::set_backend(std::make_shared<detail::OpenClBackend>(std::move(backend), crosscheck));
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

    ProfiledWork profile_operation(const std::string &name, double wall_us, unsigned loops)
    {
        const ProfiledOperation op = detail::translated([&] { return group_profiled_launches(name, wall_us, loops); });
        return { op.kernel_us, op.host_us, op.launches, op.idle_us };
    }

    DeviceMemory installed_device_memory()
    {
        return installed_open_cl_backend()->device_memory();
    }

    TransferCounts transfer_counts()
    {
        const Traffic t = installed_open_cl_backend()->traffic();
        return { t.pool_misses,      t.device_allocations,    t.pinned_allocations, t.pinned_uploads,
                 t.pinned_upload_bytes, t.pageable_uploads,  t.pageable_upload_bytes, t.downloads,
                 t.download_bytes,   t.image_copies,          t.device_copies };
    }

    void bind_thread_to_device(int device)
    {
        installed_open_cl_backend()->bind_thread(device);
    }

    int device_count()
    {
        return installed_open_cl_backend()->tile_count();
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
