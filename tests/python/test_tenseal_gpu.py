"""TenSEAL's Python API through the seal-opencl backend, byte for byte against SEAL's CPU path.

For each case of tenseal_cases.py: the inputs are encrypted once here and serialized; the
same worker (`python tenseal_cases.py CASE DIR OUT`) then evaluates them twice from those
bytes, in two processes of the same TenSEAL build: without `SEAL_GPU_ROUTE_ALL` (upstream
SEAL on the CPU) and with `SEAL_GPU_ROUTE_ALL=1` (every new ciphertext marked for the device,
the backend installed at the first routed call). Equal serialized results byte for byte pass.
Where TenSEAL encrypts while it evaluates (`Case.fresh_encryption`: polyval, `mm`), results
carry fresh randomness on every run, so the GPU run instead checks every routed operation
word for word against SEAL's CPU evaluation of the same operands
(`SEAL_OPENCL_CROSSCHECK=1`: a difference raises out of the operation), and both paths'
results are compared decrypted.
The GPU run also dumps the backend's profile (`SEAL_OPENCL_PROFILE`): every case, CKKS or BFV,
must have routed calls to the device. The results are decrypted and compared with the plain computation where the case
gives it, so that equal bytes are also right numbers.

Needs the TenSEAL wheel of scripts/tenseal-wheel.sh installed in the running Python
(scripts/tenseal-test.sh does both). SEAL_OPENCL_DEVICE picks the device, as everywhere.
"""

import json
import os
import pickle
import re
import subprocess
import sys
from functools import lru_cache
from pathlib import Path

import numpy as np
import pytest
import tenseal as ts

import tenseal_cases
from tenseal_cases import CASES, CONTEXTS

WORKER = Path(tenseal_cases.__file__)


@lru_cache(maxsize=None)
def context(name: str):
    """The private context of CONTEXTS[name] and its public serialization (keys made once)."""
    ctx = CONTEXTS[name].make()
    return ctx, ctx.serialize(save_secret_key=False)


def prepare(name: str, folder: Path) -> None:
    """The public context and the encrypted inputs of case `name`, in `folder`."""
    case = CASES[name]
    ctx, public = context(case.context)
    (folder / "context.bin").write_bytes(public)
    (folder / "inputs.pickle").write_bytes(pickle.dumps(case.prepare(ctx)))


def worker(case: str, folder: Path, out: Path, gpu: bool, *flags: str):
    """One path's run of `case` (tenseal_cases.py) on the inputs in `folder`."""
    env = {k: v for k, v in os.environ.items() if k != "SEAL_GPU_ROUTE_ALL"}
    env.update(CASES[case].env)
    if gpu:
        env["SEAL_GPU_ROUTE_ALL"] = "1"
        env["SEAL_OPENCL_PROFILE"] = str(folder / "profile.json")
        if CASES[case].fresh_encryption:
            env["SEAL_OPENCL_CROSSCHECK"] = "1"
    return subprocess.run(
        [sys.executable, str(WORKER), case, str(folder), str(out), *flags],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )


def run_path(case: str, folder: Path, gpu: bool):
    """One path's results for `case`, its stdout and its stderr."""
    out = folder / ("gpu.pickle" if gpu else "cpu.pickle")
    run = worker(case, folder, out, gpu)
    if run.returncode != 0:
        pytest.fail(f"{'GPU' if gpu else 'CPU'} path of {case} failed:\n{run.stdout}\n{run.stderr}")
    return pickle.loads(out.read_bytes()), run.stdout, run.stderr


def routed_calls(folder: Path) -> dict:
    """The backend's routed calls by SEAL operation name (none if it was never installed)."""
    profile = folder / "profile.json"
    if not profile.exists():
        return {}
    return {c["name"]: c["calls"] for c in json.loads(profile.read_text())["host_calls"]}


def first_difference(a, b) -> str:
    if isinstance(a, tuple) and isinstance(b, tuple) and a[0] == b[0]:
        a, b = a[1], b[1]
    if not (isinstance(a, bytes) and isinstance(b, bytes)):
        return f"{a!r} != {b!r}"
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"{len(a)} and {len(b)} bytes, first difference at byte {at}"


LOADERS = {
    "CKKSVector": ts.ckks_vector_from,
    "CKKSTensor": ts.ckks_tensor_from,
    "BFVVector": ts.bfv_vector_from,
    "BFVTensor": ts.bfv_tensor_from,
}


def decrypted(ctx: ts.Context, result: tuple) -> np.ndarray:
    """A serialized vector or tensor (`tenseal_cases.serialized`), decrypted with the private
    context."""
    kind, data = result
    plain = LOADERS[kind](ctx, data).decrypt()
    return np.array(plain.tolist() if hasattr(plain, "tolist") else plain)


@pytest.mark.parametrize("name", list(CASES))
def test_gpu_path_equals_cpu_path(name, tmp_path):
    case = CASES[name]
    spec = CONTEXTS[case.context]
    ctx, _ = context(case.context)
    prepare(name, tmp_path)

    cpu, _, _ = run_path(name, tmp_path, gpu=False)
    gpu, gpu_stdout, gpu_stderr = run_path(name, tmp_path, gpu=True)

    assert len(gpu) == len(cpu)
    if case.fresh_encryption:
        checked = int(re.search(r"crosschecked operations: (\d+)", gpu_stdout).group(1))
        assert checked > 0, f"{name}: nothing was cross-checked\n{gpu_stdout}"
    else:
        for i, (c, g) in enumerate(zip(cpu, gpu)):
            assert g == c, f"result {i} of {name}: {first_difference(g, c)}"

    # CKKS and BFV alike run on the backend (BFV's multiply by SEAL's BEHZ base extensions).
    routed = routed_calls(tmp_path)
    assert routed, f"{name} routed nothing to the backend:\n{gpu_stderr}"
    if case.galois_calls is not None:
        assert routed.get("apply_galois") == case.galois_calls, routed

    if case.expect is None:
        return
    tolerance = 1e-3  # the cases with plain values run CKKS at 2^40
    # Equal bytes decrypt equally: the GPU results need decrypting only where they differ.
    paths = [("CPU", cpu), ("GPU", gpu)] if case.fresh_encryption else [("CPU", cpu)]
    for path, results in paths:
        for i, (result, expected) in enumerate(zip(results, case.expect())):
            if expected is None:
                continue
            value = decrypted(ctx, result)
            expected = np.array(expected, dtype=float)
            where = f"result {i} of {name} on the {path} path"
            assert value.shape == expected.shape, where
            if spec.scheme == ts.SCHEME_TYPE.BFV:
                assert np.array_equal(value, expected), where
            else:
                assert np.allclose(value, expected, atol=tolerance, rtol=tolerance), (
                    f"{where}: {value} against {expected}"
                )


def test_a_corrupted_device_result_fails_the_cross_check(tmp_path):
    """What the cases that encrypt while evaluating rely on: one bit flipped in a device result
    (the backend's test hook) makes the operation raise on the GPU path."""
    prepare("vector_matmul", tmp_path)
    run = worker("vector_matmul", tmp_path, tmp_path / "gpu.pickle", True, "--corrupt-next-result")
    assert run.returncode != 0
    assert "the device result differs from SEAL's CPU result" in run.stderr, run.stderr
