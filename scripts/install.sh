#!/usr/bin/env bash
# Installs seal-opencl for C++ projects into PREFIX: lib/libseal_opencl.a (the patched SEAL,
# the C++ bridge and the Rust backend in one archive), include/SEALOpenCL/ (SEAL's headers as
# patched, its generated config.h, seal_opencl.h) and lib/cmake/SEALOpenCL/ (a CMake package
# config). A project then writes find_package(SEALOpenCL REQUIRED) and links
# SEALOpenCL::seal_opencl, with CMAKE_PREFIX_PATH=PREFIX.
#   scripts/install.sh PREFIX
set -euo pipefail
prefix=${1:?usage: scripts/install.sh PREFIX}
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --lib
eval "$(cargo run --release --quiet --example build_info)"
mkdir -p "$prefix"
prefix=$(cd "$prefix" && pwd)
include="$prefix/include/SEALOpenCL"
rm -rf "$include" && mkdir -p "$include" "$prefix/lib/cmake/SEALOpenCL"
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
echo "installed seal-opencl into $prefix (CMake: find_package(SEALOpenCL) with CMAKE_PREFIX_PATH=$prefix)"
