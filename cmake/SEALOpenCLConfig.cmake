# SEALOpenCL: the patched SEAL and the seal-opencl backend in one static library
# (libseal_opencl.a), with SEAL's headers and seal_opencl.h. Installed by
# scripts/install.sh PREFIX; a project writes
#
#   find_package(SEALOpenCL REQUIRED)          # CMAKE_PREFIX_PATH or SEALOpenCL_DIR names PREFIX
#   target_link_libraries(app PRIVATE SEALOpenCL::seal_opencl)
#
# and nothing else. The archive already holds SEAL: do not link SEAL's own libseal-X.Y.a as
# well. An unmodified SEAL project uses the `SEAL` package installed beside this one instead
# (find_package(SEAL 4.x), target SEAL::seal), which resolves to the same archive.

get_filename_component(_seal_opencl_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(NOT TARGET SEALOpenCL::seal_opencl)
    add_library(SEALOpenCL::seal_opencl STATIC IMPORTED)
    set_target_properties(SEALOpenCL::seal_opencl PROPERTIES
        IMPORTED_LOCATION "${_seal_opencl_prefix}/lib/libseal_opencl.a"
        INTERFACE_INCLUDE_DIRECTORIES "${_seal_opencl_prefix}/include/SEALOpenCL"
        INTERFACE_COMPILE_FEATURES cxx_std_17
        # Patched SEAL refers weakly to the backend's default installer (SEAL_GPU_ROUTE_ALL=1
        # installs it at the first routed call); a weak reference does not pull an archive
        # member in, this does.
        INTERFACE_LINK_OPTIONS "LINKER:--undefined=seal_gpu_install_default_backend"
        # What the archive needs from the system (`cargo rustc --release --lib --crate-type
        # staticlib -- --print native-static-libs`): OpenCL from the ocl crate, Zstandard and
        # zlib for SEAL's compressed serialization (Debian's libzstd-dev and zlib1g-dev), the
        # C++ runtime for SEAL and the bridge, the rest for Rust's standard library.
        INTERFACE_LINK_LIBRARIES "OpenCL;zstd;z;stdc++;gcc_s;util;rt;pthread;m;dl;c")
endif()

unset(_seal_opencl_prefix)
set(SEALOpenCL_FOUND TRUE)
