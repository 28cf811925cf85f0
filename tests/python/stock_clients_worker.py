"""One step of test_stock_clients.py's exchanges, run by either interpreter: the stock clients'
(stock TenSEAL 0.3.18 and seal-python 4.4.0 from PyPI) or this repository's wheel (TenSEAL on
the patched SEAL, with SEAL's binding `tenseal.sealapi`).

    python stock_clients_worker.py STEP DIR [ARG...]

Every step reads and writes files in DIR and prints its result as JSON on stdout. An exception
is printed as one line `ERROR <type>: <message>` on stderr, exit status 2, so that the test
can compare it with the error SEAL raises.

TenSEAL steps (`import tenseal`, the same API in both interpreters):
  tenseal-make DIR          a CKKS context (N = 8192, {60, 40, 40, 60}, scale 2^40, Galois
                            keys) and two encrypted vectors: secret.ctx, public.ctx, a.vec, b.vec
  tenseal-eval DIR OUT      from public.ctx, a.vec and b.vec: a * b + a and a.dot(b), into
                            OUT.r1.vec and OUT.r2.vec (deterministic: no fresh encryption)
  tenseal-words DIR FILE..  each vector loaded with public.ctx and its ciphertexts saved
                            again here: equal bytes are equal words and metadata
  tenseal-decrypt DIR FILE.. the vectors decrypted with secret.ctx
SEAL steps (seal-python's `seal`, or `tenseal.sealapi` in this repository's wheel):
  seal-make DIR             keys and one ciphertext of VALUES, saved uncompressed: sk, pk, rk,
                            gk (step 1), x.ct
  seal-eval DIR OUT         from pk, rk, gk and x.ct: x * x relinearized, rescaled and rotated
                            by 1 into OUT.ct (deterministic), and VALUES encrypted with pk into
                            OUT.fresh.ct
  seal-words DIR FILE..     each ciphertext loaded and saved again here, uncompressed
  seal-decrypt DIR FILE..   the ciphertexts decrypted with sk
  seal-version              the SEAL version that saves here (SEALHeader's major, minor)
"""

import hashlib
import json
import sys
from pathlib import Path

N = 8192
BITS = [60, 40, 40, 60]
SCALE = 2.0**40
VALUES = [0.5, -1.25, 2.0, 3.5, -0.75, 1.0, 0.25, -2.5]
A = [1.0, 2.0, 3.0, -1.5]
B = [0.5, -1.0, 4.0, 2.0]


def tenseal_make(folder: Path):
    import tenseal as ts

    ctx = ts.context(ts.SCHEME_TYPE.CKKS, N, coeff_mod_bit_sizes=BITS)
    ctx.global_scale = SCALE
    ctx.generate_galois_keys()
    (folder / "secret.ctx").write_bytes(ctx.serialize(save_secret_key=True))
    (folder / "public.ctx").write_bytes(ctx.serialize(save_secret_key=False))
    (folder / "a.vec").write_bytes(ts.ckks_vector(ctx, A).serialize())
    (folder / "b.vec").write_bytes(ts.ckks_vector(ctx, B).serialize())
    return {"a": A, "b": B}


def tenseal_vectors(folder: Path, context_file: str, files):
    import tenseal as ts

    ctx = ts.context_from((folder / context_file).read_bytes())
    return ctx, [ts.ckks_vector_from(ctx, (folder / f).read_bytes()) for f in files]


def tenseal_eval(folder: Path, out: str):
    _, (a, b) = tenseal_vectors(folder, "public.ctx", ["a.vec", "b.vec"])
    (folder / f"{out}.r1.vec").write_bytes((a * b + a).serialize())
    (folder / f"{out}.r2.vec").write_bytes(a.dot(b).serialize())
    return {"r1": [x * y + x for x, y in zip(A, B)], "r2": [sum(x * y for x, y in zip(A, B))]}


def tenseal_words(folder: Path, *files):
    _, vectors = tenseal_vectors(folder, "public.ctx", files)
    digests = {}
    for name, vector in zip(files, vectors):
        scratch = folder / f"{name}.words"
        parts = []
        for ct in vector.ciphertext():
            # In SEAL's default mode: one interpreter compresses equal input to equal bytes.
            ct.save(str(scratch))
            parts.append(hashlib.sha256(scratch.read_bytes()).hexdigest())
        digests[name] = parts
    return digests


def tenseal_decrypt(folder: Path, *files):
    _, vectors = tenseal_vectors(folder, "secret.ctx", files)
    return {name: vector.decrypt() for name, vector in zip(files, vectors)}


class Seal:
    """SEAL's Python API as seal-python (`seal`) or TenSEAL (`tenseal.sealapi`) binds it: the
    same classes and methods, but for the names of the enums, encoding and decoding, and
    `save`'s compression mode (seal-python's SEAL has none; TenSEAL's default is Zstandard)."""

    def __init__(self):
        try:
            import seal as api

            self.api, self.stock = api, True
            scheme, level = api.scheme_type.ckks, api.sec_level_type.tc128
        except ImportError:
            import tenseal.sealapi as api

            self.api, self.stock = api, False
            scheme, level = api.SCHEME_TYPE.CKKS, api.SEC_LEVEL_TYPE.TC128
        parms = api.EncryptionParameters(scheme)
        parms.set_poly_modulus_degree(N)
        parms.set_coeff_modulus(api.CoeffModulus.Create(N, BITS))
        self.context = api.SEALContext(parms, True, level)
        self.encoder = api.CKKSEncoder(self.context)

    def encode(self, values):
        plain = self.api.Plaintext()
        if self.stock:
            plain = self.encoder.encode(values, SCALE)
        else:
            self.encoder.encode(values, SCALE, plain)
        return plain

    def decode(self, plain):
        if self.stock:
            return [float(v) for v in self.encoder.decode(plain)]
        return self.encoder.decode_double(plain)

    def save(self, obj, path: Path):
        if self.stock:
            obj.save(str(path))
        else:
            obj.save(str(path), self.api.COMPR_MODE_TYPE.NONE)

    def load(self, kind: str, path: Path):
        obj = getattr(self.api, kind)()
        obj.load(self.context, str(path))
        return obj

    def galois_keys(self, keygen):
        """Galois keys for rotations by one step. TenSEAL's binding takes a list as Galois
        elements (its uint32 overload comes first): rotation by one step is element 3
        (3^1 mod 2N)."""
        keys = self.api.GaloisKeys()
        keygen.create_galois_keys([1] if self.stock else [3], keys)
        return keys

    def encrypt(self, public_key, values):
        ct = self.api.Ciphertext()
        self.api.Encryptor(self.context, public_key).encrypt(self.encode(values), ct)
        return ct

    def decrypt(self, secret_key, ct):
        plain = self.api.Plaintext()
        self.api.Decryptor(self.context, secret_key).decrypt(ct, plain)
        return self.decode(plain)


def seal_make(folder: Path):
    s = Seal()
    keygen = s.api.KeyGenerator(s.context)
    public_key, relin_keys = s.api.PublicKey(), s.api.RelinKeys()
    keygen.create_public_key(public_key)
    keygen.create_relin_keys(relin_keys)
    galois_keys = s.galois_keys(keygen)
    for obj, name in [(keygen.secret_key(), "sk"), (public_key, "pk"), (relin_keys, "rk"),
                      (galois_keys, "gk"), (s.encrypt(public_key, VALUES), "x.ct")]:
        s.save(obj, folder / name)
    return {"x": VALUES}


def seal_eval(folder: Path, out: str):
    s = Seal()
    ct = s.load("Ciphertext", folder / "x.ct")
    evaluator = s.api.Evaluator(s.context)
    evaluator.multiply_inplace(ct, ct)
    evaluator.relinearize_inplace(ct, s.load("RelinKeys", folder / "rk"))
    evaluator.rescale_to_next_inplace(ct)
    evaluator.rotate_vector_inplace(ct, 1, s.load("GaloisKeys", folder / "gk"))
    s.save(ct, folder / f"{out}.ct")
    s.save(s.encrypt(s.load("PublicKey", folder / "pk"), VALUES), folder / f"{out}.fresh.ct")
    return {"squared_rotated": [v * v for v in VALUES[1:]], "fresh": VALUES}


def seal_words(folder: Path, *files):
    s = Seal()
    digests = {}
    for name in files:
        scratch = folder / f"{name}.words"
        s.save(s.load("Ciphertext", folder / name), scratch)
        digests[name] = hashlib.sha256(scratch.read_bytes()).hexdigest()
    return digests


def seal_decrypt(folder: Path, *files):
    s = Seal()
    secret_key = s.load("SecretKey", folder / "sk")
    return {name: s.decrypt(secret_key, s.load("Ciphertext", folder / name)) for name in files}


def seal_version():
    try:
        import seal

        return [int(p) for p in seal.__version__.split(".")[:2]]
    except ImportError:
        import tenseal.sealapi as sa

        header = sa.Serialization.SEALHeader()
        return [header.version_major, header.version_minor]


STEPS = {
    "tenseal-make": tenseal_make,
    "tenseal-eval": tenseal_eval,
    "tenseal-words": tenseal_words,
    "tenseal-decrypt": tenseal_decrypt,
    "seal-make": seal_make,
    "seal-eval": seal_eval,
    "seal-words": seal_words,
    "seal-decrypt": seal_decrypt,
}


def main():
    step, *args = sys.argv[1:]
    try:
        result = seal_version() if step == "seal-version" else STEPS[step](Path(args[0]), *args[1:])
    except Exception as e:  # reported as a value for the test to compare
        print(f"ERROR {type(e).__name__}: {e}", file=sys.stderr)
        sys.exit(2)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
