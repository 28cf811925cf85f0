// The C++ entry points of seal-opencl for programs that use the patched SEAL directly.
#pragma once

namespace seal_opencl
{
    // Installs the OpenCL backend into patched SEAL (seal::gpu::set_backend). The device comes
    // from SEAL_OPENCL_DEVICE (gpu | cpu | P:D; default first GPU, else first CPU device).
    // Throws std::runtime_error (with the list of devices) if no device fits. Idempotent: a
    // second call while installed keeps the installed backend.
    void install_backend();

    // Uninstalls it (seal::gpu::set_backend(nullptr)). Device ciphertexts must be brought to
    // the host (e.g. decrypted or read) before, or their host reads throw std::logic_error.
    void uninstall_backend();
} // namespace seal_opencl
