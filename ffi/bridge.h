// The C++ side of the cxx bridge declared in src/ffi/mod.rs. See that file for what each
// function computes; here is only what C++ callers need to know.
#pragma once

#include <cstddef>
#include <cstdint>

#include "rust/cxx.h"

namespace seal_opencl
{
    // Defined by the generated header seal-opencl/src/ffi/mod.rs.h.
    struct BackendProbe;
    struct DeviceMemory;
    struct NamedSetting;

    // Throws rust::Error with the Rust error's message when the device cannot be found.
    rust::String describe_backend(rust::Str selector);
    // Never throws: a rust::Error becomes {ok = false, text = its message}.
    BackendProbe probe_backend(rust::Str selector) noexcept;

    // install_backend(const Options &) with its options as SEAL_OPENCL_* name, value pairs.
    void install_backend_with_settings(rust::Slice<const NamedSetting> settings);

    // The device memory of the installed backend; throws std::logic_error when the installed
    // backend (if any) is not seal-opencl's.
    DeviceMemory installed_device_memory();

    // seal_opencl::crosscheck_last_mismatch() (ffi/seal_opencl.h), for Rust.
    rust::String crosscheck_last_mismatch_text();

#ifdef SEAL_OPENCL_TEST_HOOKS
    // Test hook (build.rs defines SEAL_OPENCL_TEST_HOOKS for the `test-hooks` feature): the
    // next cross-checked operation's device result gets one word wrong (one bit flipped on the
    // device, after the operation and before the comparison), so a test sees a mismatch
    // detected. Without cross-checking it waits for the first cross-checked operation.
    void crosscheck_corrupt_next_result() noexcept;
#endif
} // namespace seal_opencl
