"""TenSEAL's Python API through the seal-opencl backend, byte for byte against SEAL's CPU path.

For each case of tenseal_cases.py: the inputs are encrypted once here and serialized; the
same worker (`python tenseal_cases.py CASE DIR OUT`) then evaluates them twice from those
bytes, in two processes of the same TenSEAL build: without `SEAL_GPU_ROUTE_ALL` (upstream
SEAL on the CPU) and with `SEAL_GPU_ROUTE_ALL=1` (every new ciphertext marked for the device,
the backend installed at the first routed call). Equal serialized results byte for byte pass.
The GPU run also dumps the backend's profile (`SEAL_OPENCL_PROFILE`): a CKKS case must have
routed calls to the device, the BFV case none (SEAL runs it on the CPU and says so on
stderr). The CPU results are decrypted and compared with the plain computation, so that
equal bytes are also right numbers.

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


def run_path(case: str, folder: Path, gpu: bool):
    """One path's results for `case`, and its stderr."""
    env = {k: v for k, v in os.environ.items() if k != "SEAL_GPU_ROUTE_ALL"}
    out = folder / ("gpu.pickle" if gpu else "cpu.pickle")
    if gpu:
        env["SEAL_GPU_ROUTE_ALL"] = "1"
        env["SEAL_OPENCL_PROFILE"] = str(folder / "profile.json")
    run = subprocess.run(
        [sys.executable, str(WORKER), case, str(folder), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    path = "GPU" if gpu else "CPU"
    assert run.returncode == 0, f"{path} path of {case} failed:\n{run.stdout}\n{run.stderr}"
    return pickle.loads(out.read_bytes()), run.stderr


def routed_calls(folder: Path) -> dict:
    """The backend's routed calls by SEAL operation name (none if it was never installed)."""
    profile = folder / "profile.json"
    if not profile.exists():
        return {}
    return {c["name"]: c["calls"] for c in json.loads(profile.read_text())["host_calls"]}


def first_difference(a, b) -> str:
    if not (isinstance(a, bytes) and isinstance(b, bytes)):
        return f"{a!r} != {b!r}"
    at = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
    return f"{len(a)} and {len(b)} bytes, first difference at byte {at}"


def decrypted(ctx: ts.Context, scheme: ts.SCHEME_TYPE, result: bytes) -> np.ndarray:
    """A serialized CKKS/BFV vector or tensor, decrypted with the private context."""
    loaders = (
        [ts.ckks_vector_from, ts.ckks_tensor_from]
        if scheme == ts.SCHEME_TYPE.CKKS
        else [ts.bfv_vector_from, ts.bfv_tensor_from]
    )
    for load in loaders:
        try:
            tensor = load(ctx, result)
        except Exception:  # not this kind of tensor: its proto does not parse
            continue
        plain = tensor.decrypt()
        return np.array(plain.tolist() if hasattr(plain, "tolist") else plain)
    raise AssertionError("the result is neither a vector nor a tensor")


@pytest.mark.parametrize("name", list(CASES))
def test_gpu_path_equals_cpu_path(name, tmp_path):
    case = CASES[name]
    spec = CONTEXTS[case.context]
    ctx, public = context(case.context)
    (tmp_path / "context.bin").write_bytes(public)
    (tmp_path / "inputs.pickle").write_bytes(pickle.dumps(case.prepare(ctx)))

    cpu, _ = run_path(name, tmp_path, gpu=False)
    gpu, gpu_stderr = run_path(name, tmp_path, gpu=True)

    assert len(gpu) == len(cpu)
    for i, (c, g) in enumerate(zip(cpu, gpu)):
        assert g == c, f"result {i} of {name}: {first_difference(g, c)}"

    routed = routed_calls(tmp_path)
    if spec.scheme == ts.SCHEME_TYPE.CKKS:
        assert routed, f"{name} routed nothing to the backend:\n{gpu_stderr}"
    else:
        assert not routed, f"{name} is BFV, yet routed {routed}"
        assert re.search(r"(ran|runs) on the CPU", gpu_stderr), gpu_stderr

    if case.expect is not None:
        tolerance = 1e-3 if (spec.global_scale_bits or 0) >= 40 else 5e-2
        for i, (result, expected) in enumerate(zip(cpu, case.expect())):
            if expected is None:
                continue
            value = decrypted(ctx, spec.scheme, result)
            expected = np.array(expected, dtype=float)
            assert value.shape == expected.shape, f"result {i} of {name}"
            if spec.scheme == ts.SCHEME_TYPE.BFV:
                assert np.array_equal(value, expected), f"result {i} of {name}"
            else:
                assert np.allclose(value, expected, atol=tolerance, rtol=tolerance), (
                    f"result {i} of {name}: {value} against {expected}"
                )
