"""TenSEAL's own test suite (OpenMined/TenSEAL, tests/python/tenseal) run as its authors run it,
against stock TenSEAL and against the seal-opencl wheel, and the differences.

    python tenseal_upstream.py --tests TENSEAL/tests --stock STOCK_PY --ours OURS_PY --out DIR
                               [--modes stock,cpu,gpu,crosscheck] [--workers N] [--device NAME]
                               [PYTEST_ARGS...]

TESTS is the `tests` folder of a TenSEAL checkout (its modules import `tests.python.tenseal`, so
pytest runs from the folder above it). Each mode is one pytest run with a JUnit report
(DIR/MODE.xml) and its output (DIR/MODE.log):
- stock:      STOCK_PY, an interpreter with stock TenSEAL 0.3.18 from PyPI: the reference;
- cpu:        OURS_PY (the wheel of scripts/tenseal-wheel.sh), without SEAL_GPU_ROUTE_ALL;
- gpu:        OURS_PY with SEAL_GPU_ROUTE_ALL=1: TenSEAL's CKKS evaluation on the OpenCL device;
- crosscheck: as gpu, with SEAL_OPENCL_CROSSCHECK=1 (every routed operation also on SEAL's CPU
              path, compared word for word; a difference fails the operation).
DIR/summary.json (a `tenseal_upstream` result for scripts/bench-report.sh, with the DEVICE given)
and DIR/summary.md hold each mode's counts and the tests that fail in a mode but
pass on stock; the exit status is 1 when there is any. Where the interpreter lacks scikit-image
(three test modules import its `view_as_windows` only), a stand-in over numpy's
`sliding_window_view` is put on the path.
"""

import argparse
import json
import os
import subprocess
import sys
import time
import xml.etree.ElementTree as ET
from pathlib import Path

SKIMAGE_STAND_IN = '''\
"""skimage.util.shape.view_as_windows for TenSEAL's tests, over numpy (no scikit-image here)."""
import numpy as np


def view_as_windows(arr_in, window_shape, step=1):
    arr_in = np.asarray(arr_in)
    if np.isscalar(window_shape):
        window_shape = (window_shape,) * arr_in.ndim
    if np.isscalar(step):
        step = (step,) * arr_in.ndim
    windows = np.lib.stride_tricks.sliding_window_view(arr_in, tuple(window_shape))
    return windows[tuple(slice(None, None, s) for s in step)]
'''

MODES = {
    "stock": ("stock", {}),
    "cpu": ("ours", {}),
    "gpu": ("ours", {"SEAL_GPU_ROUTE_ALL": "1"}),
    "crosscheck": ("ours", {"SEAL_GPU_ROUTE_ALL": "1", "SEAL_OPENCL_CROSSCHECK": "1"}),
}


def has_module(python: str, module: str) -> bool:
    probe = f"import importlib.util, sys; sys.exit(importlib.util.find_spec({module!r}) is None)"
    return subprocess.run([python, "-c", probe]).returncode == 0


def outcomes(report: Path) -> dict:
    """Every test case of a JUnit report: its id and 'passed', 'failed', 'error' or 'skipped'."""
    result = {}
    for case in ET.parse(report).getroot().iter("testcase"):
        name = f"{case.get('classname')}::{case.get('name')}"
        kinds = [child.tag for child in case]
        if "failure" in kinds:
            result[name] = "failed"
        elif "error" in kinds:
            result[name] = "error"
        elif "skipped" in kinds:
            result[name] = "skipped"
        else:
            result[name] = "passed"
    return result


def write_stand_in(folder: Path) -> Path:
    """The skimage stand-in as a package under `folder`; returns the folder for the path."""
    package = folder / "skimage"
    (package / "util").mkdir(parents=True, exist_ok=True)
    (package / "__init__.py").write_text("")
    (package / "util" / "__init__.py").write_text("")
    (package / "util" / "shape.py").write_text(SKIMAGE_STAND_IN)
    return folder


def run_mode(mode: str, python: str, tests: Path, out: Path, workers: int, extra: list) -> dict:
    interpreter_env, settings = MODES[mode]
    env = {k: v for k, v in os.environ.items()
           if k not in ("SEAL_GPU_ROUTE_ALL", "SEAL_OPENCL_CROSSCHECK")}
    env.update(settings)
    paths = [str(tests.parent)]
    if not has_module(python, "skimage"):
        paths.append(str(out / "stand-in"))
    env["PYTHONPATH"] = os.pathsep.join(paths + [env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    report = out / f"{mode}.xml"
    command = [python, "-m", "pytest", str(tests / "python" / "tenseal"), "-q",
               "-p", "no:cacheprovider", f"--junitxml={report}", *extra]
    if workers > 1:
        command += ["-n", str(workers)]
    started = time.time()
    with open(out / f"{mode}.log", "w") as log:
        subprocess.run(command, cwd=tests.parent, env=env, stdout=log, stderr=subprocess.STDOUT)
    seconds = time.time() - started
    result = outcomes(report) if report.exists() else {}
    counts = {k: sum(1 for v in result.values() if v == k)
              for k in ("passed", "failed", "error", "skipped")}
    print(f"{mode}: {counts} in {seconds:.0f} s", flush=True)
    return {"settings": settings, "seconds": round(seconds, 1), "counts": counts,
            "outcomes": result}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tests", type=Path, required=True)
    parser.add_argument("--stock")
    parser.add_argument("--ours")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--modes", default="stock,cpu,gpu,crosscheck")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--device", default="unknown", help="the OpenCL device, for the report")
    args, extra = parser.parse_known_args()
    args.out.mkdir(parents=True, exist_ok=True)
    write_stand_in(args.out / "stand-in")
    interpreters = {"stock": args.stock, "ours": args.ours}
    runs = {}
    for mode in args.modes.split(","):
        python = interpreters[MODES[mode][0]]
        if not python:
            parser.error(f"mode {mode} needs --{MODES[mode][0]}")
        runs[mode] = run_mode(mode, python, args.tests.resolve(), args.out, args.workers, extra)

    reference = runs.get("stock", {}).get("outcomes", {})
    regressions = {}
    for mode, run in runs.items():
        if mode == "stock" or not reference:
            continue
        regressions[mode] = sorted(
            name for name, outcome in run["outcomes"].items()
            if outcome in ("failed", "error") and reference.get(name) == "passed")
    summary = {
        "bench": "tenseal_upstream",
        "device": args.device,
        "date": time.strftime("%Y-%m-%d", time.gmtime()),
        "workers": args.workers,
        "pytest_args": extra,
        "modes": {m: {k: v for k, v in r.items() if k != "outcomes"} for m, r in runs.items()},
        "failing_where_stock_passes": regressions,
        "failing_on_stock": sorted(n for n, o in reference.items() if o in ("failed", "error")),
    }
    (args.out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    lines = ["| mode | passed | failed | errors | skipped | seconds | failing where stock passes |",
             "|---|---|---|---|---|---|---|"]
    for mode, run in runs.items():
        c = run["counts"]
        lines.append(f"| {mode} | {c['passed']} | {c['failed']} | {c['error']} | {c['skipped']} "
                     f"| {run['seconds']:.0f} | {len(regressions.get(mode, [])) if reference else '-'} |")
    for mode, names in regressions.items():
        if names:
            lines += [f"\n{mode}, failing where stock passes:"] + [f"- {n}" for n in names]
    (args.out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 1 if any(regressions.values()) else 0


if __name__ == "__main__":
    sys.exit(main())
