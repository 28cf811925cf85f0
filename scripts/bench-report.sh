#!/usr/bin/env bash
# Regenerates benches/results/REPORT.md from the JSON files and tried.md in benches/results/
# (examples/bench_report.rs: tables per bench, the NTT roofline, the targets, the kept runs and
# the table of what was tried). Another folder may be given as $1.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --quiet --example bench_report -- "${1:-benches/results}"
