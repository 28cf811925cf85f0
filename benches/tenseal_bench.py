"""TenSEAL workloads timed as a Python user times them: encrypt, evaluate, decrypt.

Runs with whichever TenSEAL the interpreter imports: stock TenSEAL from PyPI (SEAL on the
CPU), or the wheel of scripts/tenseal-wheel.sh with or without SEAL_GPU_ROUTE_ALL=1 (the
backend on the device that SEAL_OPENCL_DEVICE picks). One process, TenSEAL's default threads (or --threads).

    python3 benches/tenseal_bench.py [--workloads lr,mnist-8192,...] [--reps 5] [--out FILE]

Workloads (setup, key generation and plain weights, is not timed):
    lr          the logistic-regression tutorial's encrypted inference, sigmoid(x . w + b) with
                the degree-3 approximation, on a batch of --batch samples of 9 features
                (N = 8192, the tutorial's {40, 21 x 6, 40} at 2^21)
    mnist-N     the MNIST tutorial's network (conv 4 x 7x7 stride 3, square, fc 256 -> 64,
                square, fc 64 -> 10) on one 28x28 image; N = 8192 at the tutorial's
                parameters, 16384 and 32768 at {60, 40 x 6, 60} and 2^40
    dot         dot product of two encrypted vectors of 4096 slots (N = 8192, {60, 40, 40, 60})
    vecmat      an encrypted vector of --vecmat-rows slots times a plain matrix of
                --vecmat-rows x 64 (`mm`), N = 8192; TenSEAL does one rotation per row, so 4096
                rows (the default) take thousands of rotations
Weights and inputs are random (seeded): the timings, not the outputs, are the result.

Per workload and repetition: encrypt (the inputs), evaluate (the calls return; on the GPU path
the work may still run), decrypt (waits for the device, downloads, decrypts), and
`evaluation` = evaluate + decrypt - a second decrypt of the same results (host words
current, so that decrypt is the CPU's part alone): the evaluation until its results exist.
Medians over --reps (after --warmup untimed runs, default 1) go to stdout and, as JSON, to
--out, with each repetition's evaluation time (`evaluation_s_runs`, in order: a trend in them
says the warm-up was too short).
"""

import argparse
import json
import os
import platform
import statistics
import time

import numpy as np
import tenseal as ts

SIGMOID = [0.5, 0.197, 0, -0.004]


def ckks_context(args, n, bits, scale_bits):
    """A context with Galois keys and TenSEAL's `--threads` (None: one per hardware thread)."""
    ctx = ts.context(ts.SCHEME_TYPE.CKKS, n, coeff_mod_bit_sizes=bits, n_threads=args.threads)
    ctx.global_scale = 2**scale_bits
    ctx.generate_galois_keys()
    return ctx


def tutorial_context(args):
    return ckks_context(args, 8192, [40, 21, 21, 21, 21, 21, 21, 40], 21)


def lr(args, rng):
    ctx = tutorial_context(args)
    weight, bias = rng.uniform(-1, 1, 9).tolist(), float(rng.uniform(-1, 1))
    samples = rng.uniform(-1, 1, (args.batch, 9)).tolist()

    def evaluate(encrypted):
        return [(x.dot(weight) + bias).polyval(SIGMOID) for x in encrypted]

    return ctx, 8192, samples, ts.ckks_vector, evaluate, args.batch


def mnist(n):
    def make(args, rng):
        if n == 8192:
            ctx = tutorial_context(args)
        else:
            ctx = ckks_context(args, n, [60, 40, 40, 40, 40, 40, 40, 60], 40)
        conv_w = rng.uniform(-0.3, 0.3, (4, 7, 7)).tolist()
        conv_b = rng.uniform(-0.3, 0.3, 4).tolist()
        fc1_w, fc1_b = rng.uniform(-0.1, 0.1, (256, 64)).tolist(), rng.uniform(-0.1, 0.1, 64).tolist()
        fc2_w, fc2_b = rng.uniform(-0.1, 0.1, (64, 10)).tolist(), rng.uniform(-0.1, 0.1, 10).tolist()
        image = rng.uniform(-1, 1, (28, 28)).tolist()
        windows = {}

        def encrypt(ctx, img):
            enc, windows["nb"] = ts.im2col_encoding(ctx, img, 7, 7, 3)
            return enc

        def evaluate(encrypted):
            (x,) = encrypted
            channels = [x.conv2d_im2col(k, windows["nb"]) + b for k, b in zip(conv_w, conv_b)]
            out = ts.CKKSVector.pack_vectors(channels)
            out.square_()
            out = out.mm_(fc1_w) + fc1_b
            out.square_()
            return [out.mm_(fc2_w) + fc2_b]

        return ctx, n, [image], encrypt, evaluate, 1

    return make


def dot(args, rng):
    ctx = ckks_context(args, 8192, [60, 40, 40, 60], 40)
    pair = rng.uniform(-1, 1, (2, 4096)).tolist()

    def evaluate(encrypted):
        x, y = encrypted
        return [x.dot(y)]

    return ctx, 8192, pair, ts.ckks_vector, evaluate, 1


def vecmat(args, rng):
    ctx = ckks_context(args, 8192, [60, 40, 40, 60], 40)
    matrix = rng.uniform(-1, 1, (args.vecmat_rows, 64)).tolist()

    def evaluate(encrypted):
        (x,) = encrypted
        return [x.mm(matrix)]

    vector = rng.uniform(-1, 1, args.vecmat_rows).tolist()
    return ctx, 8192, [vector], ts.ckks_vector, evaluate, 1


# name -> make(args, rng) -> (context, N, plain inputs, encrypt(context, input),
# evaluate(encrypted inputs) -> encrypted results, inferences per run)
WORKLOADS = {
    "lr": lr,
    "mnist-8192": mnist(8192),
    "mnist-16384": mnist(16384),
    "mnist-32768": mnist(32768),
    "dot": dot,
    "vecmat": vecmat,
}


def run_once(ctx, inputs, encrypt, evaluate):
    t0 = time.perf_counter()
    encrypted = [encrypt(ctx, x) for x in inputs]
    t1 = time.perf_counter()
    results = evaluate(encrypted)
    t2 = time.perf_counter()
    for r in results:
        r.decrypt()
    t3 = time.perf_counter()
    for r in results:
        r.decrypt()
    t4 = time.perf_counter()
    return {
        "encrypt_s": t1 - t0,
        "evaluate_s": t2 - t1,
        "decrypt_s": t3 - t2,
        "evaluation_s": (t3 - t1) - (t4 - t3),
        "total_s": t3 - t0,
    }


def warm_up(ctx, inputs, encrypt, evaluate):
    """One untimed run first: device programs, key uploads (tenseal_decompose.py leaves out
    the samples under this frame)."""
    run_once(ctx, inputs, encrypt, evaluate)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workloads", default=",".join(WORKLOADS))
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--warmup", type=int, default=1, help="untimed runs before the reps")
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--vecmat-rows", type=int, default=4096)
    parser.add_argument("--threads", type=int, help="TenSEAL's n_threads (default: TenSEAL's)")
    parser.add_argument("--out")
    args = parser.parse_args()

    rng = np.random.default_rng(27)
    report = {
        "tenseal": ts.__file__,
        "tenseal_version": ts.__version__,
        "route_all": os.environ.get("SEAL_GPU_ROUTE_ALL", ""),
        "shared_rotations": os.environ.get("TENSEAL_SHARED_ROTATIONS", ""),
        "n_threads": args.threads,
        "opencl_device": os.environ.get("SEAL_OPENCL_DEVICE", ""),
        "host": platform.node(),
        "cpus": os.cpu_count(),
        "reps": args.reps,
        "warmup": args.warmup,
        "workloads": [],
    }
    for name in args.workloads.split(","):
        ctx, n, inputs, encrypt, evaluate, inferences = WORKLOADS[name](args, rng)
        for _ in range(args.warmup):
            warm_up(ctx, inputs, encrypt, evaluate)
        runs = [run_once(ctx, inputs, encrypt, evaluate) for _ in range(args.reps)]
        medians = {k: statistics.median(r[k] for r in runs) for k in runs[0]}
        entry = {
            "workload": name,
            "poly_modulus_degree": n,
            "inferences_per_run": inferences,
            **{f"median_{k}": v for k, v in medians.items()},
            "per_inference_total_s": medians["total_s"] / inferences,
            "per_inference_evaluation_s": medians["evaluation_s"] / inferences,
            "evaluation_s_runs": [r["evaluation_s"] for r in runs],
        }
        report["workloads"].append(entry)
        print(
            f"{name:12} N={entry['poly_modulus_degree']:5}  per inference: total "
            f"{entry['per_inference_total_s'] * 1e3:9.2f} ms, evaluation "
            f"{entry['per_inference_evaluation_s'] * 1e3:9.2f} ms  (medians of {args.reps}: "
            + ", ".join(f"{k} {v * 1e3:.2f} ms" for k, v in medians.items())
            + ")",
            flush=True,
        )
    if args.out:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)


if __name__ == "__main__":
    main()
