#!/usr/bin/env bash
# Cuts a patched SEAL tree into the topic series of seal-patch/topics and writes it to
# seal-patch/VERSION/ (the patches and a `series`), replacing what was there.
#   scripts/seal-series.sh TREE BASE VERSION
# TREE: a git work tree of SEAL holding the patched sources (committed or not); BASE: the
# commit of TREE with the unpatched SEAL of VERSION (4.0.0: the SEAL/ folder of crates.io's
# sealy 0.2.0; 4.4.3: microsoft/SEAL at tag v4.4.3). Maintaining the patches: apply the
# series to a SEAL tree in git (see seal-patch/README.md), edit, run this, rebuild.
set -euo pipefail
tree=${1:?usage: scripts/seal-series.sh TREE BASE VERSION}
base=${2:?usage: scripts/seal-series.sh TREE BASE VERSION}
version=${3:?usage: scripts/seal-series.sh TREE BASE VERSION}
root=$(cd "$(dirname "$0")/.." && pwd)
out="$root/seal-patch/$version"
topics="$root/seal-patch/topics"

git -C "$tree" add -A --intent-to-add
mapfile -t changed < <(git -C "$tree" diff --name-only "$base" --)
[ ${#changed[@]} -gt 0 ] || { echo "seal-series: $tree has no change against $base" >&2; exit 1; }

# The topic of each changed file: exactly one line of seal-patch/topics must claim it.
declare -A topic_of
while read -r name paths; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  for file in "${changed[@]}"; do
    for p in $paths; do
      if [[ "$file" == "$p" || ( "$p" == */ && "$file" == "$p"* ) ]]; then
        if [[ -n "${topic_of[$file]:-}" && "${topic_of[$file]}" != "$name" ]]; then
          echo "seal-series: $file is claimed by ${topic_of[$file]} and $name" >&2; exit 1
        fi
        topic_of[$file]=$name
      fi
    done
  done
done <"$topics"
for file in "${changed[@]}"; do
  [[ -n "${topic_of[$file]:-}" ]] || { echo "seal-series: no topic in seal-patch/topics holds $file" >&2; exit 1; }
done

rm -rf "$out" && mkdir -p "$out"
{
  echo "# The topic series against SEAL $version, applied in this order by build.rs (build/patch.rs);"
  echo "# written by scripts/seal-series.sh from seal-patch/topics. See ../README.md."
} >"$out/series"
while read -r name paths; do
  [[ -z "$name" || "$name" == \#* ]] && continue
  files=()
  for file in "${changed[@]}"; do [[ "${topic_of[$file]}" == "$name" ]] && files+=("$file"); done
  [ ${#files[@]} -gt 0 ] || continue
  git -C "$tree" diff --no-color --no-ext-diff --full-index "$base" -- "${files[@]}" >"$out/$name.patch"
  echo "$name.patch" >>"$out/series"
done <"$topics"
echo "seal-series: wrote $(grep -vc '^#' "$out/series") patches to $out"
