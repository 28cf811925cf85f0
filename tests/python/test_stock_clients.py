"""This repository's TenSEAL wheel against stock clients from PyPI: stock TenSEAL 0.3.18 (SEAL
4.3, Zstandard-compressed output) and seal-python 4.4.0 (SEAL 4.4 built without compression).

The stock clients run in a virtual environment of their own (target/stock-clients, made once
with pip), this wheel in the test's interpreter; each step is a process of
stock_clients_worker.py, and this wheel evaluates with SEAL_GPU_ROUTE_ALL=1 (it must route
calls to the device). What loads where is SEAL's `Serialization::IsCompatibleVersion` of the
reading side (`seal_loads`): SEAL 4.4 and newer load SEAL 4 data up to their own minor version,
SEAL 4.0 to 4.3 only data of their exact version. The test selects the expected outcome by the
SEAL of this wheel (`tenseal.sealapi.Serialization.SEALHeader()`), so it passes on both:

- SEAL 4.4 (4.4.3): stock TenSEAL's and seal-python's data load here, and this wheel's device
  evaluation of it equals the stock client's own word for word; this wheel's data loads in
  seal-python (saved uncompressed) but not in stock TenSEAL (SEAL 4.3): "incompatible version".
- SEAL 4.0 (4.0.0, the offline fallback): this wheel's data loads in seal-python, whose
  evaluation equals this wheel's device evaluation word for word; nothing else loads (stock
  TenSEAL's 4.3 reads only 4.3 data, this SEAL only 4.0 data): "incompatible version".

Needs the wheel of scripts/tenseal-wheel.sh installed in the running Python (scripts/tenseal-test.sh)
and PyPI reachable the first time.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import tenseal.sealapi as sa

WORKER = Path(__file__).with_name("stock_clients_worker.py")
STOCK_VENV = Path(__file__).resolve().parents[2] / "target" / "stock-clients"
STOCK_PACKAGES = ["tenseal==0.3.18", "seal-python==4.4.0", "numpy"]
OURS = (sa.Serialization.SEALHeader().version_major, sa.Serialization.SEALHeader().version_minor)
STOCK_TENSEAL = (4, 3)
SEAL_PYTHON = (4, 4)
INCOMPATIBLE = "ERROR RuntimeError: incompatible version"
TOLERANCE = 1e-3


@pytest.fixture(scope="session")
def stock_python() -> str:
    """The stock clients' interpreter, its environment made once (a marker names its packages)."""
    python = STOCK_VENV / "bin" / "python"
    marker = STOCK_VENV / "packages.txt"
    wanted = "\n".join(STOCK_PACKAGES)
    if not python.exists() or not marker.exists() or marker.read_text() != wanted:
        subprocess.run([sys.executable, "-m", "venv", "--clear", str(STOCK_VENV)], check=True)
        subprocess.run([str(python), "-m", "pip", "install", "--quiet", *STOCK_PACKAGES], check=True)
        marker.write_text(wanted)
    return str(python)


def step(python: str, *args, gpu: bool = False, folder: Path = None):
    """One worker step; (result, None) or (None, its `ERROR ...` line)."""
    env = {k: v for k, v in os.environ.items() if k != "SEAL_GPU_ROUTE_ALL"}
    if gpu:
        env["SEAL_GPU_ROUTE_ALL"] = "1"
        env["SEAL_OPENCL_PROFILE"] = str(folder / "profile.json")
    run = subprocess.run([python, str(WORKER), *map(str, args)], env=env, capture_output=True,
                         text=True, timeout=900)
    if run.returncode == 2:
        # The backend may write its own lines (the profile's) after the worker's.
        return None, [line for line in run.stderr.splitlines() if line.startswith("ERROR ")][-1]
    assert run.returncode == 0, f"{args}: {run.stdout}\n{run.stderr}"
    return json.loads(run.stdout), None


def ok(python: str, *args, **kw):
    result, error = step(python, *args, **kw)
    assert error is None, f"{args}: {error}"
    return result


def assert_routed(folder: Path):
    profile = json.loads((folder / "profile.json").read_text())
    assert profile["host_calls"], "this wheel's evaluation routed nothing to the device"


def assert_close(values, expected, what):
    got = np.array(values[: len(expected)], dtype=float)
    assert np.allclose(got, expected, atol=TOLERANCE, rtol=TOLERANCE), f"{what}: {got} != {expected}"


def seal_loads(reader, writer) -> bool:
    """SEAL's `Serialization::IsCompatibleVersion` for SEAL 4 data: SEAL 4.4 and newer load their
    own major version up to their own minor version; SEAL 4.0 to 4.3 only their exact version."""
    if reader >= (4, 4):
        return writer[0] == reader[0] and writer[1] <= reader[1]
    return writer == reader


def test_this_wheel_has_zlib_and_zstd():
    for mode in ("NONE", "ZLIB", "ZSTD"):
        assert sa.Serialization.IsSupportedComprMode(getattr(sa.COMPR_MODE_TYPE, mode)), mode


def evaluate(python: str, name: str, folder: Path):
    """Step `name` (tenseal-eval, seal-eval) on `python`'s side, its outputs named by the side;
    this wheel's on the device, which must route calls."""
    ours = python == sys.executable
    result, error = step(python, name, folder, "ours" if ours else "stock", gpu=ours, folder=folder)
    if ours and error is None:
        assert_routed(folder)
    return result, error


def make_and_evaluate(kind: str, maker: str, other: str, folder: Path, other_loads: bool):
    """`maker`'s KIND-make and both sides' KIND-eval: the made and the expected plain values,
    or None where `other` cannot load `maker`'s data (then SEAL's error was its answer)."""
    expected = ok(maker, f"{kind}-make", folder)
    plain, error = evaluate(maker, f"{kind}-eval", folder)
    assert error is None, error
    _, error = evaluate(other, f"{kind}-eval", folder)
    if not other_loads:
        assert error == INCOMPATIBLE
        return None
    assert error is None, error
    return expected, plain


def tenseal_exchange(maker: str, other: str, folder: Path, other_loads: bool):
    """`maker` makes a context and vectors and evaluates them; `other` evaluates them too, if
    its SEAL loads them (else SEAL's error), and compares both results word for word."""
    made = make_and_evaluate("tenseal", maker, other, folder, other_loads)
    if made is None:
        return
    expected, plain = made
    results = [f"{who}.{r}.vec" for who in ("stock", "ours") for r in ("r1", "r2")]
    words = ok(other, "tenseal-words", folder, *results)
    assert words["ours.r1.vec"] == words["stock.r1.vec"]
    assert words["ours.r2.vec"] == words["stock.r2.vec"]
    values = ok(other, "tenseal-decrypt", folder, *results, "a.vec")
    for who in ("stock", "ours"):
        assert_close(values[f"{who}.r1.vec"], plain["r1"], f"{who}: a * b + a")
        assert_close(values[f"{who}.r2.vec"], plain["r2"], f"{who}: a.dot(b)")
    assert_close(values["a.vec"], expected["a"], "a")


def test_stock_tenseal_to_this_wheel(stock_python, tmp_path):
    tenseal_exchange(stock_python, sys.executable, tmp_path, seal_loads(OURS, STOCK_TENSEAL))


def test_this_wheel_to_stock_tenseal(stock_python, tmp_path):
    tenseal_exchange(sys.executable, stock_python, tmp_path, seal_loads(STOCK_TENSEAL, OURS))


def seal_exchange(maker: str, other: str, folder: Path, other_loads: bool, maker_loads: bool):
    """`maker` makes keys and a ciphertext and evaluates them; `other` evaluates them too with
    `maker`'s keys, if its SEAL loads them (else SEAL's error), and compares both results word
    for word; each side decrypts the other's results with `maker`'s secret key where it loads
    them."""
    made = make_and_evaluate("seal", maker, other, folder, other_loads)
    if made is None:
        return
    expected, plain = made
    words = ok(other, "seal-words", folder, "ours.ct", "stock.ct")
    assert words["ours.ct"] == words["stock.ct"]
    results = ["ours.ct", "stock.ct", "ours.fresh.ct", "stock.fresh.ct"]
    values = ok(other, "seal-decrypt", folder, *results, "x.ct")
    assert_close(values["x.ct"], expected["x"], "x")
    maker_values, error = step(maker, "seal-decrypt", folder, *results)
    if not maker_loads:
        assert error == INCOMPATIBLE
    for side in [values] + ([maker_values] if maker_loads else []):
        for who in ("stock", "ours"):
            assert_close(side[f"{who}.ct"], plain["squared_rotated"], f"{who}: x * x rotated by 1")
            assert_close(side[f"{who}.fresh.ct"], plain["fresh"], f"{who}: a fresh encryption")


def test_seal_python_to_this_wheel(stock_python, tmp_path):
    seal_exchange(stock_python, sys.executable, tmp_path, seal_loads(OURS, SEAL_PYTHON),
                  seal_loads(SEAL_PYTHON, OURS))


def test_this_wheel_to_seal_python(stock_python, tmp_path):
    seal_exchange(sys.executable, stock_python, tmp_path, seal_loads(SEAL_PYTHON, OURS),
                  seal_loads(OURS, SEAL_PYTHON))
