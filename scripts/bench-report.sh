#!/usr/bin/env bash
# Regenerates benches/results/REPORT.md from the JSON files in benches/results/
# (examples/bench_report.rs: tables per bench, NTT roofline, issue 5's targets).
set -euo pipefail
cd "$(dirname "$0")/.."
cargo run --release --quiet --example bench_report -- "${1:-benches/results}"
