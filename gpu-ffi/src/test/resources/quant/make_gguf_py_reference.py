"""Regenerates gguf-py-reference.json: dequantization references for the block types that the shipped models
do not cover (Q4_1, Q5_0, Q5_1, IQ4_NL, BF16), plus F16/BF16 rounding cases. Uses gguf-py's `quants` module
(pip package `gguf` 0.19.0, a port of ggml's reference (de)quantizers) and numpy. Not run by the build:

    pip download gguf==0.19.0 --no-deps && unzip gguf-*.whl -d ext && PYTHONPATH=ext python3 make_gguf_py_reference.py
"""
import hashlib, json, sys
import numpy as np
import importlib.util, os

# import gguf/quants.py without gguf/__init__ (which pulls optional dependencies)
pkg = next(p for p in sys.path if p and os.path.isdir(os.path.join(p, "gguf")))
import types
gguf_pkg = types.ModuleType("gguf"); gguf_pkg.__path__ = [os.path.join(pkg, "gguf")]; sys.modules["gguf"] = gguf_pkg
from gguf import quants
from gguf.constants import GGMLQuantizationType as T, GGML_QUANT_SIZES

def entry(qtype, raw):
    values = quants.dequantize(raw, qtype).astype("<f4").reshape(-1)
    return {"type": qtype.name, "blocks_hex": raw.tobytes().hex(),
            "sha256": hashlib.sha256(values.tobytes()).hexdigest(),
            "count": int(values.size), "first64": [float(v) for v in values[:64]]}

rng = np.random.default_rng(20261129)
out = {"note": "gguf-py 0.19.0 quants.dequantize of the given block bytes; see make_gguf_py_reference.py",
       "tensors": []}
for qtype in (T.Q4_0, T.Q4_1, T.Q5_0, T.Q5_1, T.Q8_0, T.BF16):
    x = (rng.standard_normal(32 * 24) * rng.choice([0.01, 1.0, 30.0], 32 * 24)).astype(np.float32)
    x[:32] = 0  # an all-zero block
    out["tensors"].append(entry(qtype, quants.quantize(x.reshape(1, -1), qtype)))
# IQ4_NL has no quantizer in gguf-py: random indices with a finite fp16 scale per block.
bs, ts = GGML_QUANT_SIZES[T.IQ4_NL]
raw = rng.integers(0, 256, size=(24, ts), dtype=np.uint8)
raw[:, 0:2] = (rng.standard_normal((24, 1)) * 0.05).astype(np.float16).view(np.uint8)
out["tensors"].append(entry(T.IQ4_NL, raw.reshape(1, -1)))

# float -> fp16 (IEEE round to nearest even, numpy) and float -> bf16 (ggml_compute_fp32_to_bf16, gguf-py)
specials = np.array([0.0, -0.0, 1.0, -1.0, 65504.0, 65519.99, 65520.0, 1e9, -1e9, 6.1e-5, 5.96e-8, 2.98e-8, 2.99e-8, 1e-10,
                     1.0009765625, 1.00048828125, 1.00146484375, 3.3895314e38, np.inf, -np.inf], dtype=np.float32)
bits = np.concatenate([specials.view(np.uint32), rng.integers(0, 2**32, size=2000, dtype=np.uint64).astype(np.uint32)])
f = bits.view(np.float32)
finite = ~np.isnan(f)
bits, f = bits[finite], f[finite]
with np.errstate(over="ignore"):
    f16 = f.astype(np.float16).view(np.uint16)
bf16 = quants.quantize(f.reshape(1, -1), T.BF16).view(np.uint16).reshape(-1)
out["rounding"] = {"f32_bits": [int(b) for b in bits], "f16_bits": [int(b) for b in f16], "bf16_bits": [int(b) for b in bf16]}
json.dump(out, open("gguf-py-reference.json", "w"), indent=1)
print({t["type"]: t["count"] for t in out["tensors"]}, len(out["rounding"]["f32_bits"]))
