// The C++ side of the bridge's free functions declared in ffi/bridge.h (the backend itself:
// ffi/backend.h).
#include "seal-opencl/ffi/bridge.h"
#include "seal-opencl/src/ffi/mod.rs.h"

namespace seal_opencl
{
    rust::String describe_backend(rust::Str selector)
    {
        return backend_device_description(selector);
    }

    BackendProbe probe_backend(rust::Str selector) noexcept
    {
        try
        {
            return BackendProbe{ true, backend_device_description(selector) };
        }
        catch (const rust::Error &e)
        {
            return BackendProbe{ false, rust::String(e.what()) };
        }
    }
} // namespace seal_opencl
