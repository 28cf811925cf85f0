# SEAL, as an unmodified SEAL project finds it: find_package(SEAL 4.x [EXACT] REQUIRED) and
# target SEAL::seal, resolving to the patched SEAL with the seal-opencl backend
# (SEALOpenCL::seal_opencl, installed beside this file by scripts/install.sh PREFIX). The
# version is the SEAL that was built (SEALConfigVersion.cmake: same major version, not older).
# Run the program with SEAL_GPU_ROUTE_ALL=1 and its CKKS operations run on the GPU; without
# it, SEAL behaves as upstream.

include("${CMAKE_CURRENT_LIST_DIR}/../SEALOpenCL/SEALOpenCLConfig.cmake")

if(NOT TARGET SEAL::seal)
    add_library(SEAL::seal INTERFACE IMPORTED)
    set_target_properties(SEAL::seal PROPERTIES INTERFACE_LINK_LIBRARIES SEALOpenCL::seal_opencl)
endif()

set(SEAL_FOUND TRUE)
