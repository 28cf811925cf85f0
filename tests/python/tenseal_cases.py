"""TenSEAL workloads that test_tenseal_gpu.py runs on SEAL's CPU path and through the GPU
backend, comparing the serialized results byte for byte.

A case's inputs are encrypted once, in the test process (`Case.prepare`, with the private
context), and serialized. `python tenseal_cases.py CASE DIR OUT [--corrupt-next-result]` is one path's run: it loads the
public context (`DIR/context.bin`) and the inputs (`DIR/inputs.pickle`), evaluates the case and
writes its results, serialized, to OUT, and prints how many operations the backend
cross-checked. Both paths run this same file from the
same bytes; only the environment differs (`SEAL_GPU_ROUTE_ALL=1` on the GPU path). SEAL's
evaluation is deterministic once the ciphertexts exist, so where TenSEAL only evaluates, the two
result lists are equal byte for byte. An error is a result too: its type and message.

Some of TenSEAL's operations encrypt while they evaluate (`Case.fresh_encryption`): polyval
encrypts its constant term, a vector-matrix product (`mm`) starts each partial sum from a fresh
encryption of zero. Their results carry new randomness on every run, two CPU runs included, so
they are compared decrypted, and on the GPU path every routed operation is compared word for
word with SEAL's CPU evaluation of the same operands (`SEAL_OPENCL_CROSSCHECK=1`).

The plain operands are fixed (seeded) module constants, so the worker, the encryption and the
expected values (`Case.expect`, checked against the decrypted results) agree.
"""

import ctypes
import os
import pickle
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

import numpy as np
import tenseal as ts
from tenseal.tensors.abstract_tensor import AbstractTensor


@dataclass(frozen=True)
class ContextSpec:
    """The parameters of a TenSEAL context; the test process makes the keys."""

    scheme: ts.SCHEME_TYPE
    poly_modulus_degree: int
    coeff_mod_bit_sizes: tuple = ()
    plain_modulus: Optional[int] = None
    global_scale_bits: Optional[int] = None
    galois_keys: bool = True
    n_threads: int = 1

    def make(self) -> ts.Context:
        ctx = ts.context(
            self.scheme,
            poly_modulus_degree=self.poly_modulus_degree,
            plain_modulus=self.plain_modulus,
            coeff_mod_bit_sizes=list(self.coeff_mod_bit_sizes),
            n_threads=self.n_threads,
        )
        if self.global_scale_bits is not None:
            ctx.global_scale = 2**self.global_scale_bits
        if self.galois_keys:
            ctx.generate_galois_keys()
        return ctx


_CKKS = dict(
    scheme=ts.SCHEME_TYPE.CKKS,
    poly_modulus_degree=8192,
    coeff_mod_bit_sizes=(60, 40, 40, 60),
    global_scale_bits=40,
)

CONTEXTS = {
    "ckks": ContextSpec(**_CKKS),
    "ckks_no_galois": ContextSpec(**_CKKS, galois_keys=False),
    "ckks_threads": ContextSpec(**_CKKS, n_threads=4),
    # The tutorials' parameters (MNIST, logistic regression): depth 6 at 21 bits of scale.
    "tutorial": ContextSpec(
        scheme=ts.SCHEME_TYPE.CKKS,
        poly_modulus_degree=8192,
        coeff_mod_bit_sizes=(40, 21, 21, 21, 21, 21, 21, 40),
        global_scale_bits=21,
    ),
    "bfv": ContextSpec(
        scheme=ts.SCHEME_TYPE.BFV,
        poly_modulus_degree=4096,
        plain_modulus=1032193,
        galois_keys=False,
    ),
}

_rng = np.random.default_rng(27)
X = _rng.uniform(-1, 1, 16).tolist()
Y = _rng.uniform(-1, 1, 16).tolist()
P = _rng.uniform(-1, 1, 16).tolist()
MATRIX = _rng.uniform(-1, 1, (16, 8)).tolist()
SQUARE = _rng.uniform(-1, 1, (4, 4)).tolist()
IMAGE = _rng.uniform(-1, 1, (8, 8)).tolist()
KERNEL = _rng.uniform(-1, 1, (3, 3)).tolist()
SIGMOID = [0.5, 0.197, 0, -0.004]  # the logistic-regression tutorial's sigmoid, degree 3
# The MNIST tutorial's network with random weights: conv 4 x 7x7 (stride 3) on 28x28, square,
# fc 256 -> 64, square, fc 64 -> 10.
MNIST_IMAGE = _rng.uniform(-1, 1, (28, 28)).tolist()
MNIST = {
    "conv_weight": _rng.uniform(-0.3, 0.3, (4, 7, 7)).tolist(),
    "conv_bias": _rng.uniform(-0.3, 0.3, 4).tolist(),
    "fc1_weight": _rng.uniform(-0.1, 0.1, (256, 64)).tolist(),
    "fc1_bias": _rng.uniform(-0.1, 0.1, 64).tolist(),
    "fc2_weight": _rng.uniform(-0.1, 0.1, (64, 10)).tolist(),
    "fc2_bias": _rng.uniform(-0.1, 0.1, 10).tolist(),
}
BFV_X = _rng.integers(-100, 100, 16).tolist()
BFV_Y = _rng.integers(-100, 100, 16).tolist()
# A product that does not fold (37 rows, no power of two) and whose diagonals are no multiple
# of its baby steps: b = 8, giant steps of 8, 8, 8, 8 and 5 diagonals (a generator of its own,
# so that the values above stay as they were).
_rng_37 = np.random.default_rng(37)
X37 = _rng_37.uniform(-1, 1, 37).tolist()
MATRIX37 = _rng_37.uniform(-1, 1, (37, 5)).tolist()


def mnist_forward(enc_x: ts.CKKSVector, windows_nb: int) -> ts.CKKSVector:
    """The tutorial's `EncConvNet.forward`."""
    channels = [
        enc_x.conv2d_im2col(kernel, windows_nb) + bias
        for kernel, bias in zip(MNIST["conv_weight"], MNIST["conv_bias"])
    ]
    out = ts.CKKSVector.pack_vectors(channels)
    out.square_()
    out = out.mm_(MNIST["fc1_weight"]) + MNIST["fc1_bias"]
    out.square_()
    return out.mm_(MNIST["fc2_weight"]) + MNIST["fc2_bias"]


def error_of(call: Callable[[], object]) -> tuple:
    """The error `call` raises, as a comparable value (it must raise)."""
    try:
        call()
    except Exception as e:  # an error is a result: both paths must raise the same
        return ("error", type(e).__name__, str(e))
    raise AssertionError("expected an error")


@dataclass(frozen=True)
class Case:
    """One workload: `prepare` (test process) encrypts and serializes its inputs with the
    private context; `evaluate` (worker) returns its results; `expect`, where given, the plain
    value of each result (None: an error, nothing to decrypt) for a decryption check; `fresh_encryption`:
    TenSEAL encrypts during `evaluate`, so its results differ from run to run; `env`: more
    environment for both paths' workers; `galois_calls`: how many apply_galois the GPU path
    routes, where the case pins it."""

    context: str
    prepare: Callable[[ts.Context], dict]
    evaluate: Callable[[ts.Context, dict], list]
    expect: Optional[Callable[[], list]] = None
    fresh_encryption: bool = False
    env: tuple = ()
    galois_calls: Optional[int] = None


# tenseal-patch 0005: vector-matrix products rotate the vector first, the rotations of one
# vector shared (Evaluator::rotate_vector_many).
SHARED_ROTATIONS = (("TENSEAL_SHARED_ROTATIONS", "1"),)
# Key switches on the fused passes, unchained, at every ring (the backend's default at
# N >= 32768).
UNCHAINED = (("SEAL_OPENCL_CHAIN", "0"),)


def _vectors(ctx: ts.Context) -> dict:
    return {"x": ts.ckks_vector(ctx, X).serialize(), "y": ts.ckks_vector(ctx, Y).serialize()}


def _loaded(ctx: ts.Context, inputs: dict):
    return ts.ckks_vector_from(ctx, inputs["x"]), ts.ckks_vector_from(ctx, inputs["y"])


def _vector_arith(ctx, inputs):
    x, y = _loaded(ctx, inputs)
    return [x + y, x + P, x + 2.5, x - y, x - P, 1.5 - x, -x]


def _vector_mul(ctx, inputs):
    x, y = _loaded(ctx, inputs)
    return [x * y, x * P, x * 0.75, x.square(), x**3]


def _vector_in_place(ctx, inputs):
    x, y = _loaded(ctx, inputs)
    x.add_(y)
    x.mul_(y)
    x.sub_(P)
    return [x]


def _vector_rotations(ctx, inputs):
    x, y = _loaded(ctx, inputs)
    return [x.dot(y), x.dot(P), x.sum(), ts.CKKSVector.pack_vectors([x, y])]


def _vector_matmul(ctx, inputs):
    x, _ = _loaded(ctx, inputs)
    return [x.mm(MATRIX), x @ MATRIX]


def _vector_matmul_37(ctx, inputs):
    return [ts.ckks_vector_from(ctx, inputs["x"]).mm(MATRIX37)]


def _vector_polyval(ctx, inputs):
    x, _ = _loaded(ctx, inputs)
    return [x.polyval(SIGMOID), x.polyval([1, -2, 3])]


def _conv_prepare(ctx):
    enc, windows_nb = ts.im2col_encoding(ctx, IMAGE, 3, 3, 1)
    return {"image": enc.serialize(), "windows_nb": windows_nb}


def _conv(ctx, inputs):
    enc = ts.ckks_vector_from(ctx, inputs["image"])
    return [enc.conv2d_im2col(KERNEL, inputs["windows_nb"])]


def _conv_plain():
    image, kernel = np.array(IMAGE), np.array(KERNEL)
    return [[(image[r : r + 3, c : c + 3] * kernel).sum() for r in range(6) for c in range(6)]]


def _enc_matmul(ctx, inputs):
    enc = ts.ckks_vector_from(ctx, inputs["matrix"])
    return [enc.enc_matmul_plain(P[:4], 4)]


def _zero_operands(ctx, inputs):
    """TenSEAL's products with zero: SEAL throws "result ciphertext is transparent" at the call,
    and TenSEAL catches it there and substitutes an encryption of zero (a fresh one: these
    results differ from run to run)."""
    x, _ = _loaded(ctx, inputs)
    a = ts.ckks_tensor_from(ctx, inputs["a"])
    zeros = [0.0] * len(X)
    in_place = x.copy()
    in_place.mul_(0)
    return [
        x * 0,
        x * zeros,
        x.dot(zeros),
        in_place,
        x.mm([[0.0]] * len(X)),
        a * 0,
        a * ts.plain_tensor(np.zeros_like(A_).tolist()),
    ]


def _self_difference(ctx, inputs):
    """A vector minus itself: SEAL's "result ciphertext is transparent" at the call, which
    TenSEAL passes on as an error (the same on both paths)."""
    x, _ = _loaded(ctx, inputs)
    return [error_of(lambda: x - x), error_of(lambda: x.copy().sub_(x))]


def _tensors(ctx):
    return {
        "a": ts.ckks_tensor(ctx, SQUARE).serialize(),
        "b": ts.ckks_tensor(ctx, np.array(SQUARE).T.tolist()).serialize(),
        "batched": ts.ckks_tensor(ctx, ts.plain_tensor(SQUARE), batch=True).serialize(),
    }


def _tensor_ops(ctx, inputs):
    a = ts.ckks_tensor_from(ctx, inputs["a"])
    b = ts.ckks_tensor_from(ctx, inputs["b"])
    batched = ts.ckks_tensor_from(ctx, inputs["batched"])
    return [
        a + b,
        a - b,
        a * b,
        a * ts.plain_tensor(SQUARE),
        a + 1.25,
        a.sum(axis=0),
        a.dot(b),
        a.mm(ts.plain_tensor(SQUARE)),
        a.transpose(),
        a.reshape([2, 8]),
        batched * batched,
        batched.sum_batch(),
    ]


def _tensor_plain():
    a, b = np.array(SQUARE), np.array(SQUARE).T
    return [a + b, a - b, a * b, a * a, a + 1.25, a.sum(axis=0), a @ b, a @ a, a.T,
            a.reshape(2, 8), a * a, a.sum(axis=0)]


def _tensor_polyval(ctx, inputs):
    return [ts.ckks_tensor_from(ctx, inputs["a"]).polyval(SIGMOID)]


def _no_galois(ctx, inputs):
    x, y = _loaded(ctx, inputs)
    return [x + y, x * y, error_of(lambda: x.sum()), error_of(lambda: x.dot(y)),
            error_of(lambda: x.mm(MATRIX))]


def _serialization(ctx, inputs):
    """The loaded context and vector, saved again, and a result saved, loaded and saved."""
    x, y = _loaded(ctx, inputs)
    product = ts.ckks_vector_from(ctx, (x * y).serialize())
    return [
        ctx.serialize(save_public_key=True, save_galois_keys=True, save_relin_keys=True),
        x.serialize(),
        product,
        ts.lazy_ckks_vector_from(product.serialize()).serialize(),
    ]


def _threads_prepare(ctx):
    return {**_vectors(ctx), **_tensors(ctx), "matrix": ts.enc_matmul_encoding(ctx, SQUARE).serialize()}


def _threads(ctx, inputs):
    x, y = _loaded(ctx, inputs)
    return [x.dot(y), *_tensor_ops(ctx, inputs), *_enc_matmul(ctx, inputs)]


def _logistic_regression(ctx, inputs):
    """The tutorial's encrypted inference: sigmoid(x . w + b), one sample per vector."""
    return [ts.ckks_vector_from(ctx, sample).dot(P).add(0.25).polyval(SIGMOID)
            for sample in inputs["samples"]]


def _mnist_prepare(ctx):
    enc, windows_nb = ts.im2col_encoding(ctx, MNIST_IMAGE, 7, 7, 3)
    return {"image": enc.serialize(), "windows_nb": windows_nb}


def _mnist(ctx, inputs):
    return [mnist_forward(ts.ckks_vector_from(ctx, inputs["image"]), inputs["windows_nb"])]


def _bfv_prepare(ctx):
    return {"x": ts.bfv_vector(ctx, BFV_X).serialize(), "y": ts.bfv_vector(ctx, BFV_Y).serialize()}


def _bfv(ctx, inputs):
    x, y = ts.bfv_vector_from(ctx, inputs["x"]), ts.bfv_vector_from(ctx, inputs["y"])
    return [x + y, x - y, x * y, x * BFV_Y, x + BFV_Y]


# Integers past t / 2 (the BFV context's t = 1032193), which TenSEAL encodes as their residues
# mod t: SEAL 4.4 refuses them unless TenSEAL passes them centered (tenseal-patch 0004;
# TenSEAL's own test_bfv_vector.py::test_polynomial encodes 1000000).
BFV_T = 1032193
BFV_BIG = [1000000, -600000, 2 * BFV_T + 5, 3]


def _centered(values) -> list:
    r = np.array(values, dtype=object) % BFV_T
    return [int(v - BFV_T) if v > BFV_T // 2 else int(v) for v in r]


def _bfv_big(ctx, inputs):
    x = ts.bfv_vector_from(ctx, inputs["x"])
    return [x, x + [700000] * 4, x * ([1000000] * 4), x * x + x]


def _bfv_big_plain():
    x = np.array(BFV_BIG, dtype=object)
    return [_centered(v) for v in (x, x + 700000, x * 1000000, x + x * x)]


def _bfv_plain():
    x, y = np.array(BFV_X), np.array(BFV_Y)
    return [x + y, x - y, x * y, x * y, x + y]


X_, Y_, P_ = np.array(X), np.array(Y), np.array(P)

A_ = np.array(SQUARE)

CASES = {
    "vector_add_sub": Case(
        "ckks", _vectors, _vector_arith,
        lambda: [X_ + Y_, X_ + P_, X_ + 2.5, X_ - Y_, X_ - P_, 1.5 - X_, -X_],
    ),
    "vector_mul": Case(
        "ckks", _vectors, _vector_mul, lambda: [X_ * Y_, X_ * P_, X_ * 0.75, X_**2, X_**3]
    ),
    "vector_in_place": Case("ckks", _vectors, _vector_in_place, lambda: [(X_ + Y_) * Y_ - P_]),
    "vector_dot_sum_pack": Case(
        "ckks", _vectors, _vector_rotations,
        lambda: [[X_ @ Y_], [X_ @ P_], [X_.sum()], np.concatenate([X_, Y_])],
    ),
    # Rows 1..15 rotate by their steps' non-adjacent forms, 28 rotations a product; shared, the
    # 16 x 8 product folds (its first 8 diagonals by baby steps and giant steps, b = 4): the
    # rotations of v by 0..3 (4: 1, 2, -1 and -1 then 4), the second inner sum's by 4 and the
    # sum's by 8, on one thread or four.
    "vector_matmul": Case(
        "ckks", _vectors, _vector_matmul, lambda: [X_ @ np.array(MATRIX)] * 2,
        fresh_encryption=True, galois_calls=56,
    ),
    "vector_matmul_shared_rotations": Case(
        "ckks", _vectors, _vector_matmul, lambda: [X_ @ np.array(MATRIX)] * 2,
        fresh_encryption=True, env=SHARED_ROTATIONS, galois_calls=12,
    ),
    "vector_polyval": Case(
        "ckks", _vectors, _vector_polyval,
        lambda: [sum(c * X_**i for i, c in enumerate(SIGMOID)), 1 - 2 * X_ + 3 * X_**2],
        fresh_encryption=True,
    ),
    "vector_conv2d_im2col": Case("ckks", _conv_prepare, _conv, _conv_plain),
    "vector_enc_matmul_encoding": Case(
        "ckks",
        lambda ctx: {"matrix": ts.enc_matmul_encoding(ctx, SQUARE).serialize()},
        _enc_matmul,
        lambda: [A_ @ np.array(P[:4])],
    ),
    "zero_operands": Case(
        "ckks", lambda ctx: {**_vectors(ctx), **_tensors(ctx)}, _zero_operands,
        lambda: [0 * X_, 0 * X_, [0.0], 0 * X_, [0.0], 0 * A_, 0 * A_],
        fresh_encryption=True,
    ),
    "self_difference": Case("ckks", _vectors, _self_difference, lambda: [None, None]),
    "tensor_ops": Case("ckks", _tensors, _tensor_ops, _tensor_plain),
    "tensor_polyval": Case(
        "ckks", _tensors, _tensor_polyval,
        lambda: [sum(c * A_**i for i, c in enumerate(SIGMOID))],
        fresh_encryption=True,
    ),
    "no_galois_keys": Case(
        "ckks_no_galois", _vectors, _no_galois, lambda: [X_ + Y_, X_ * Y_, None, None, None]
    ),
    "serialization": Case("ckks", _vectors, _serialization),
    "n_threads_4": Case(
        "ckks_threads", _threads_prepare, _threads,
        lambda: [[X_ @ Y_], *_tensor_plain(), A_ @ np.array(P[:4])],
    ),
    "n_threads_4_matmul": Case(
        "ckks_threads", _vectors, _vector_matmul, lambda: [X_ @ np.array(MATRIX)] * 2,
        fresh_encryption=True,
    ),
    "n_threads_4_matmul_shared_rotations": Case(
        "ckks_threads", _vectors, _vector_matmul, lambda: [X_ @ np.array(MATRIX)] * 2,
        fresh_encryption=True, env=SHARED_ROTATIONS, galois_calls=12,
    ),
    # 37 rows: the rotations of v by 0..7 (9) and the inner sums' by 8, 16, 24 and 32 (8, 16,
    # -8 then 32, 32: 5), the last giant step's inner sum of 5 diagonals.
    "n_threads_4_matmul_shared_rotations_37_rows": Case(
        "ckks_threads", lambda ctx: {"x": ts.ckks_vector(ctx, X37).serialize()}, _vector_matmul_37,
        lambda: [np.array(X37) @ np.array(MATRIX37)],
        fresh_encryption=True, env=SHARED_ROTATIONS, galois_calls=14,
    ),
    # Chaining off (`SEAL_OPENCL_CHAIN=0`): the key switches run on the fused passes, several
    # a launch (the rotations of v, the products' relinearizations), as at N = 32768 by
    # default. The shared product encrypts nothing: compared byte for byte.
    "vector_matmul_shared_rotations_unchained": Case(
        "ckks", _vectors, _vector_matmul, lambda: [X_ @ np.array(MATRIX)] * 2,
        env=SHARED_ROTATIONS + UNCHAINED, galois_calls=12,
    ),
    "n_threads_4_matmul_shared_rotations_37_rows_unchained": Case(
        "ckks_threads", lambda ctx: {"x": ts.ckks_vector(ctx, X37).serialize()}, _vector_matmul_37,
        lambda: [np.array(X37) @ np.array(MATRIX37)],
        env=SHARED_ROTATIONS + UNCHAINED, galois_calls=14,
    ),
    "vector_mul_unchained": Case(
        "ckks", _vectors, _vector_mul, lambda: [X_ * Y_, X_ * P_, X_ * 0.75, X_**2, X_**3],
        env=UNCHAINED,
    ),
    # At the tutorials' 21 bits of scale, TenSEAL's results (stock TenSEAL's too) are off by
    # up to about 1 here, so these two are not compared with the plain computation.
    "logistic_regression": Case(
        "tutorial",
        lambda ctx: {"samples": [ts.ckks_vector(ctx, v).serialize() for v in (X, Y)]},
        _logistic_regression,
        fresh_encryption=True,
    ),
    "mnist_tutorial_network": Case("tutorial", _mnist_prepare, _mnist, fresh_encryption=True),
    "mnist_tutorial_network_shared_rotations": Case(
        "tutorial", _mnist_prepare, _mnist, fresh_encryption=True, env=SHARED_ROTATIONS
    ),
    "mnist_tutorial_network_shared_rotations_unchained": Case(
        "tutorial", _mnist_prepare, _mnist, env=SHARED_ROTATIONS + UNCHAINED
    ),
    "bfv_vector": Case("bfv", _bfv_prepare, _bfv, _bfv_plain),
    "bfv_values_past_half_t": Case(
        "bfv", lambda ctx: {"x": ts.bfv_vector(ctx, BFV_BIG).serialize()}, _bfv_big, _bfv_big_plain
    ),
}


def serialized(result):
    """What a path's result is compared as: a tensor's type and serialization, else the
    value."""
    if isinstance(result, AbstractTensor):
        return (type(result).__name__, result.serialize())
    return result


def backend_function(mangled_name: str):
    """A function of `seal_opencl` (ffi/seal_opencl.h) in the extension module, which links
    the backend and exports it."""
    module = ctypes.CDLL(ts._ts_cpp.__file__, mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
    return getattr(module, mangled_name)


def crosschecked_operations() -> int:
    """How many routed operations the backend has compared with SEAL's CPU evaluation in this
    process (`seal_opencl::crosscheck_checks()`)."""
    checks = backend_function("_ZN11seal_opencl17crosscheck_checksEv")
    checks.restype = ctypes.c_uint64
    return checks()


def main(case_name: str, folder: str, out: str, *flags: str) -> None:
    """One path's run; `--corrupt-next-result` flips a bit of the next cross-checked device
    result (`seal_opencl::crosscheck_corrupt_next_result()`), which that check must catch."""
    folder = Path(folder)
    case = CASES[case_name]
    ctx = ts.context_from((folder / "context.bin").read_bytes(), n_threads=CONTEXTS[case.context].n_threads)
    inputs = pickle.loads((folder / "inputs.pickle").read_bytes())
    if "--corrupt-next-result" in flags:
        backend_function("_ZN11seal_opencl30crosscheck_corrupt_next_resultEv")()
    results = [serialized(r) for r in case.evaluate(ctx, inputs)]
    Path(out).write_bytes(pickle.dumps(results))
    print(f"crosschecked operations: {crosschecked_operations()}")


if __name__ == "__main__":
    main(*sys.argv[1:])
