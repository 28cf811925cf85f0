#!/usr/bin/env bash
# Picks the SEAL that scripts/install.sh, scripts/tenseal-wheel.sh and scripts/test.sh build
# on, and prints it as shell assignments for them to eval (the assignment first, so that
# set -e stops at a rejected download; `eval "$(...)"` would not):
#   seal_env=$(scripts/seal-source.sh)
#   eval "$seal_env"
# 1. SEAL_SOURCE_DIR, when set: that tree.
# 2. SEAL_OFFLINE=1: sealy's SEAL 4.0.0 through cargo (build.rs's default).
# 3. Else SEAL 4.4.3: the verified tree cached in target/seal-4.4.3/src, or microsoft/SEAL's
#    v4.4.3 archive downloaded (SEAL_SOURCE_URL, default GitHub's), unpacked and verified
#    against CONTENT_SHA256 before it is cached: a mismatch stops with an error. A download
#    that fails falls back to 4.0.0 with a warning on stderr saying what that gives up.
# A tree given or found gets a target folder of its own (CARGO_TARGET_DIR, unless set:
# target/s443 for 4.4.3), so that builds on both SEALs coexist. The fallback exports
# SEAL_OFFLINE=1, so that the scripts these call do not try the download again.
set -euo pipefail
cd "$(dirname "$0")/.."
version=4.4.3
url=${SEAL_SOURCE_URL:-https://github.com/microsoft/SEAL/archive/refs/tags/v$version.tar.gz}
# content_sha256 of the tree at tag v4.4.3 (`git archive v4.4.3` of microsoft/SEAL): GitHub
# does not promise the bytes of its archives, only their content.
CONTENT_SHA256=78644e2eb1408ec4ca60906c26a47bd09dae27dabb21efef51bd4136e1aa6cbb
cache="$(pwd)/target/seal-$version"

# The SHA-256 of the sorted list of SHA-256 sums of every file under DIR, paths relative to DIR.
content_sha256() {
  (cd "$1" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -d' ' -f1)
}

# The assignments for the tree DIR: the tree and, unless set, a target folder of its own.
emit_tree() {
  local dir=$1 tree_version
  tree_version=$(sed -n 's/^project(SEAL VERSION \([0-9.]*\).*/\1/p' "$dir/CMakeLists.txt")
  [ -n "$tree_version" ] || { echo "seal-source: $dir is not a SEAL source tree" >&2; exit 1; }
  echo "export SEAL_SOURCE_DIR=$(printf %q "$dir")"
  echo "export CARGO_TARGET_DIR=$(printf %q "${CARGO_TARGET_DIR:-target/s${tree_version//./}}")"
  echo "seal-source: SEAL $tree_version from $dir" >&2
}

if [ -n "${SEAL_SOURCE_DIR:-}" ]; then
  emit_tree "$(cd "$SEAL_SOURCE_DIR" && pwd)"
  exit 0
fi
if [ "${SEAL_OFFLINE:-}" = 1 ]; then
  echo "export SEAL_OFFLINE=1"
  echo "seal-source: SEAL 4.0.0 (sealy 0.2.0 through cargo; SEAL_OFFLINE=1)" >&2
  exit 0
fi
if [ -d "$cache/src" ] && [ "$(content_sha256 "$cache/src")" = "$CONTENT_SHA256" ]; then
  emit_tree "$cache/src"
  exit 0
fi

mkdir -p "$cache"
work=$(mktemp -d "$cache/download.XXXXXX")
trap 'rm -rf "$work"' EXIT
if ! curl -fsSL --connect-timeout 10 --max-time 120 -o "$work/seal.tar.gz" "$url"; then
  cat >&2 <<EOF
seal-source: WARNING: cannot download SEAL $version ($url);
  building on the offline SEAL 4.0.0 (crates.io's sealy 0.2.0) instead. That gives up
  SEAL 4.4's hardened deserialization of untrusted input and its memory-safety and
  concurrency fixes, and cannot load data written by SEAL 4.1 or newer (e.g. stock TenSEAL
  0.3.18, SEAL 4.3). Give a SEAL $version tree as SEAL_SOURCE_DIR to build on it offline
  (docs/SEAL-VERSIONS.md); SEAL_OFFLINE=1 skips the download.
EOF
  echo "export SEAL_OFFLINE=1"
  exit 0
fi
mkdir "$work/tree"
tar -xzf "$work/seal.tar.gz" -C "$work/tree" --strip-components=1
actual=$(content_sha256 "$work/tree")
if [ "$actual" != "$CONTENT_SHA256" ]; then
  echo "seal-source: REJECTED $url: its content does not match SEAL $version's (content SHA-256 $actual, expected $CONTENT_SHA256)" >&2
  exit 1
fi
rm -rf "$cache/src"
mv "$work/tree" "$cache/src"
emit_tree "$cache/src"
