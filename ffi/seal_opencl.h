#pragma once
namespace seal_opencl
{
    // Installs the OpenCL backend into patched SEAL (seal::gpu::set_backend). The device comes
    // from SEAL_OPENCL_DEVICE (gpu | cpu | P:D; default first GPU, else first CPU device).
    // Throws std::runtime_error (with the list of devices) if no device fits. Idempotent.
    void install_backend();
    // Uninstalls it (seal::gpu::set_backend(nullptr)).
    void uninstall_backend();
}
