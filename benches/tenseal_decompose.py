"""Where a TenSEAL evaluation's milliseconds go on the GPU path: the calling thread's time split
into Python, TenSEAL's C++, SEAL's CKKS encoding, SEAL's other host work, the backend's issue,
the OpenCL driver, waiting for the device and waiting for other threads (TenSEAL's pool),
beside the device's kernel time.

    python tenseal_decompose.py --bench tenseal_bench.py --python PY --py-spy PY_SPY --out DIR
                                [--workloads lr,mnist-8192,...] [--reps R] [--device NAME]

PY is an interpreter with the seal-opencl wheel; every run sets SEAL_GPU_ROUTE_ALL=1. Per
workload, three runs of benches/tenseal_bench.py (each after its own warm-up):
1. as a user runs it: the evaluation's wall time per inference (`per_inference_evaluation_s`);
2. with SEAL_OPENCL_PROFILE, twice (1 and 1 + R repetitions, so that the difference leaves the
   warm-up out): kernel time, launches, routed calls and the backend's host time in them
   (summed over the threads that issue them, with profiling's events), per inference, and
   the launches by kernel, the routed calls by operation and the backend's threads' waits
   by kind (`backend_waits_ms`: another thread's operation on the queue, host reads,
   synchronize; summed over threads);
3. under py-spy (`record --native --idle`, raw stacks): the calling thread's samples inside the
   bench's `evaluate` (TenSEAL's calls) and inside `decrypt` (which waits for the device), but
   for the warm-up's, each put in the category of its innermost frame that names one
   (CATEGORIES, leaf first).
The fractions of run 3 times the `evaluate` call's wall time of run 1 give milliseconds per
inference (py-spy pauses the process for each sample, so run 3's own wall time is longer and
only its fractions are used); the rest of the evaluation (`drain_ms`) is the first decrypt
waiting for the device to finish what the calls issued. DIR/W.* hold each run's output; DIR/decompose.json is a `tenseal_decompose`
result for scripts/bench-report.sh.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

# Category -> substrings of a frame's function, tried from the innermost frame out; the first
# category any frame matches wins, so waiting inside a driver call counts as waiting. Frames
# without a symbol (an address) are passed over, except in the OpenCL driver's libraries
# (DRIVER_LIBRARIES), whose symbols are stripped. TenSEAL, SEAL and the backend share one
# extension module, so only function names tell them apart.
CATEGORIES = [
    ("waiting for the device", ("read_yielding", "sched_yield", "clWaitForEvents", "clFinish")),
    # TenSEAL's thread pool (mm, matmul, conv) or a lock: the calling thread waits for others.
    ("waiting for other threads", ("futex", "pthread_cond", "__lll_lock", "condition_variable",
                                   "ThreadPool", "nanosleep")),
    ("OpenCL driver", ("clEnqueue", "clSetKernelArg", "clCreate", "clRelease", "clRetain",
                       "clGetEvent")),
    ("backend issue", ("seal_opencl", "OpenClBackend", "RustImage", "cxxbridge", "ocl_core",
                       "ocl::")),
    ("CKKS encoding (SEAL, CPU)", ("CKKSEncoder", "encode_internal", "DWTHandler")),
    ("SEAL host work", ("seal::",)),
    ("TenSEAL C++", ("tenseal::", "pybind11")),
]
DRIVER_LIBRARIES = ("libnvidia-opencl", "libcuda", "libOpenCL", "libpocl")
PYTHON = "Python"


def categorize(frames: list) -> str:
    for frame in reversed(frames):
        function, _, library = frame.partition(" (")
        if any(lib in library for lib in DRIVER_LIBRARIES):
            return "OpenCL driver"
        for category, needles in CATEGORIES:
            if any(n in function for n in needles):
                return category
    return PYTHON


def stack_shares(raw: Path, bench: str) -> dict:
    """Samples of `evaluate` and of `decrypt` in py-spy's raw output (`frame;frame;... count`,
    outermost first), by category."""
    shares = {"evaluate": {}, "decrypt": {}}
    for line in raw.read_text().splitlines():
        stack, _, count = line.rpartition(" ")
        if not count.isdigit():
            continue
        frames = stack.split(";")
        if any(f.startswith("warm_up (") for f in frames):
            continue
        phase = None
        for frame in frames:
            function = frame.split(" (", 1)[0].rsplit(".", 1)[-1]
            if function == "evaluate" and bench in frame:
                phase = "evaluate"
            elif function == "decrypt" and phase is None:
                phase = "decrypt"
        if phase is None:
            continue
        category = categorize(frames)
        shares[phase][category] = shares[phase].get(category, 0) + int(count)
    return shares


def profile_totals(profile: dict) -> tuple:
    """A profile's kernel ns, launches, routed calls and the host ns spent in them."""
    kernels, host_calls = profile["kernels"], profile["host_calls"]
    return (sum(k["total_ns"] for k in kernels), sum(k["count"] for k in kernels),
            sum(h["calls"] for h in host_calls), sum(h["total_ns"] for h in host_calls))


def by_name(profile: dict) -> tuple:
    """A profile's launches by kernel name, routed calls by operation name, and its
    threads' waits in ms by kind (profiles of 2026-12-01 on)."""
    return ({k["name"]: k["count"] for k in profile["kernels"]},
            {h["name"]: h["calls"] for h in profile["host_calls"]},
            {w["name"]: w["total_ns"] / 1e6 for w in profile.get("waits", [])})


def per_inference(first: dict, last: dict, per: int) -> dict:
    """What `last` counts beyond `first`, per inference, largest first (zeros left out)."""
    rows = {name: (last.get(name, 0) - first.get(name, 0)) / per for name in last}
    return {name: round(v, 1) for name, v in sorted(rows.items(), key=lambda kv: -kv[1]) if v}


def run(command: list, env: dict, log: Path) -> float:
    started = time.time()
    with open(log, "w") as out:
        subprocess.run(command, env=env, stdout=out, stderr=subprocess.STDOUT, check=True)
    return time.time() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bench", type=Path, required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--py-spy", required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--workloads", default="lr,mnist-8192,dot")
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--rate", type=int, default=500)
    parser.add_argument("--device", default="unknown")
    args = parser.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("SEAL_OPENCL_PROFILE")}
    env["SEAL_GPU_ROUTE_ALL"] = "1"
    bench = [args.python, str(args.bench), "--reps", str(args.reps)]
    result = {"bench": "tenseal_decompose", "device": args.device,
              "date": time.strftime("%Y-%m-%d", time.gmtime()), "reps": args.reps,
              "shared_rotations": os.environ.get("TENSEAL_SHARED_ROTATIONS", ""),
              "workloads": []}
    for w in args.workloads.split(","):
        base = args.out / w
        run(bench + ["--workloads", w, "--out", f"{base}.wall.json"], env, Path(f"{base}.wall.log"))
        wall = json.loads(Path(f"{base}.wall.json").read_text())["workloads"][0]
        inferences = wall["inferences_per_run"]
        evaluation_ms = wall["per_inference_evaluation_s"] * 1e3

        # Two profiled runs, of 1 and 1 + R repetitions: their difference is R repetitions
        # without the warm-up (program builds, key uploads) that both include.
        profiles, names = [], []
        for reps in (1, 1 + args.reps):
            path = f"{base}.profile-{reps}.json"
            run(bench[:-1] + [str(reps), "--workloads", w], dict(env, SEAL_OPENCL_PROFILE=path),
                Path(f"{base}.profile-{reps}.log"))
            profile = json.loads(Path(path).read_text())
            profiles.append(profile_totals(profile))
            names.append(by_name(profile))
        per = args.reps * inferences
        kernel_ms, launches, calls, backend_host_ms = ((b - a) / per for a, b in zip(*profiles))
        launches_by_kernel = per_inference(names[0][0], names[1][0], per)
        calls_by_operation = per_inference(names[0][1], names[1][1], per)
        waits_ms = per_inference(names[0][2], names[1][2], per)
        kernel_ms, backend_host_ms = kernel_ms / 1e6, backend_host_ms / 1e6

        raw = Path(f"{base}.stacks.txt")
        run([args.py_spy, "record", "--native", "--idle", "--format", "raw", "--rate",
             str(args.rate), "-o", str(raw), "--"] + bench + ["--workloads", w], env,
            Path(f"{base}.py-spy.log"))
        shares = stack_shares(raw, args.bench.name)
        evaluate_samples = sum(shares["evaluate"].values()) or 1
        evaluate_ms = wall["median_evaluate_s"] * 1e3 / inferences
        split = {c: round(n / evaluate_samples * evaluate_ms, 2)
                 for c, n in sorted(shares["evaluate"].items(), key=lambda kv: -kv[1])}
        entry = {"workload": w, "poly_modulus_degree": wall["poly_modulus_degree"],
                 "evaluation_ms": round(evaluation_ms, 2), "evaluate_call_ms": round(evaluate_ms, 2),
                 "drain_ms": round(max(evaluation_ms - evaluate_ms, 0), 2),
                 "kernel_ms": round(kernel_ms, 2), "launches": round(launches),
                 "routed_calls": round(calls), "backend_host_ms": round(backend_host_ms, 2),
                 "evaluate_split_ms": split, "launches_by_kernel": launches_by_kernel,
                 "calls_by_operation": calls_by_operation,
                 "backend_waits_ms": waits_ms, "samples": shares}
        result["workloads"].append(entry)
        print(json.dumps({k: v for k, v in entry.items() if k != "samples"}), flush=True)
    (args.out / "decompose.json").write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
