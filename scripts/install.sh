#!/usr/bin/env bash
# Installs seal-opencl for C++ projects into PREFIX:
#   lib/libseal_opencl.a               the patched SEAL, the C++ bridge and the Rust backend
#   include/SEALOpenCL/                SEAL's headers as patched, its generated config.h,
#                                      seal_opencl.h
#   lib/cmake/SEALOpenCL/              find_package(SEALOpenCL), target SEALOpenCL::seal_opencl
#   lib/cmake/SEAL-X.Y/                find_package(SEAL X.Y), target SEAL::seal: the same
#                                      archive, for unmodified SEAL projects
# A project then builds with CMAKE_PREFIX_PATH=PREFIX. It builds on SEAL 4.4.3 where its source
# can be had, else on the offline SEAL 4.0.0 with a warning (scripts/seal-source.sh:
# SEAL_SOURCE_DIR, SEAL_OFFLINE; docs/SEAL-VERSIONS.md), and says which. SEAL_OPENCL_TEST_HOOKS=1
# builds the archive with the crate's `test-hooks` feature (crosscheck_corrupt_next_result, for
# tests/python through scripts/tenseal-test.sh); without it the archive has no test hook.
#   scripts/install.sh PREFIX
set -euo pipefail
prefix=${1:?usage: scripts/install.sh PREFIX}
cd "$(dirname "$0")/.."
scripts/setup.sh
seal_env=$(scripts/seal-source.sh)
eval "$seal_env"
cargo build --release --lib ${SEAL_OPENCL_TEST_HOOKS:+--features test-hooks}
# With SEAL_OPENCL_SANITIZE=address (build.rs), build_info links ASan's runtime late in its
# library list, which ASan would refuse at start.
[ -z "${SEAL_OPENCL_SANITIZE:-}" ] || export ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0
eval "$(cargo run --release --quiet --example build_info)"
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
include="$prefix/include/SEALOpenCL"
seal_cmake="$prefix/lib/cmake/SEAL-${SEAL_VERSION%.*}"
rm -rf "$include" "$prefix"/lib/cmake/SEAL-*
mkdir -p "$include" "$prefix/lib/cmake/SEALOpenCL" "$seal_cmake"
cp "$SEAL_OPENCL_LIB" "$prefix/lib/libseal_opencl.a"
# SEAL's headers from its (patched) source tree and its build tree (config.h), paths kept.
IFS=';' read -ra dirs <<<"$SEAL_OPENCL_INCLUDE_DIRS"
for dir in "${dirs[@]}"; do
  if [ -d "$dir/seal" ]; then
    (cd "$dir" && find seal -name '*.h' -exec cp --parents {} "$include" \;)
  fi
done
cp ffi/seal_opencl.h "$include/"
cp cmake/SEALOpenCLConfig.cmake "$prefix/lib/cmake/SEALOpenCL/"
cp cmake/SEALConfig.cmake "$seal_cmake/"
sed -e "s/@SEAL_VERSION@/$SEAL_VERSION/" -e "s/@SEAL_VERSION_MAJOR@/${SEAL_VERSION%%.*}/" \
  cmake/SEALConfigVersion.cmake.in >"$seal_cmake/SEALConfigVersion.cmake"
echo "installed seal-opencl (SEAL $SEAL_VERSION) into $prefix"
echo "CMake: find_package(SEALOpenCL) or find_package(SEAL ${SEAL_VERSION%.*}) with CMAKE_PREFIX_PATH=$prefix"
