#!/usr/bin/env bash
# Builds every test, bench and example in release mode and copies the binaries, with
# ../shared/device/gpu-env.sh, into .gpu/ (ignored by git) for a run on the GPU machine:
#   device run, carry [".gpu"]:  . .gpu/gpu-env.sh && .gpu/bench-ntt --json $OUT/ntt.json
# Names: test-<target>, bench-<target>, ex-<target>.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .gpu && mkdir -p .gpu
cp ../shared/device/gpu-env.sh .gpu/
# copy_executables KIND PREFIX: copies the executables of targets of KIND (cargo's JSON
# messages on stdin; the library's unit-test binary counts as kind "test").
copy_executables() {
  python3 -c '
import json, shutil, sys
want, prefix = sys.argv[1], sys.argv[2]
for line in sys.stdin:
    m = json.loads(line)
    exe = m.get("executable")
    if not exe:
        continue
    kinds = m["target"]["kind"]
    kind = "test" if "rlib" in kinds or "lib" in kinds else kinds[0]
    if kind == want:
        shutil.copy(exe, ".gpu/" + prefix + m["target"]["name"])
' "$1" "$2"
}
cargo test --release --no-run --message-format=json | copy_executables test test-
cargo bench --no-run --message-format=json | copy_executables bench bench-
cargo build --release --examples --message-format=json | copy_executables example ex-
strip .gpu/test-* .gpu/bench-* .gpu/ex-* 2>/dev/null || true
ls .gpu
du -sh .gpu
