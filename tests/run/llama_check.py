"""Helper of llama.test: examples/llama.sfn's decoder layer against an
independent NumPy float64 implementation of Hugging Face's LlamaDecoderLayer
(examples/python/llama_block.py's decoder_layer: LlamaRMSNorm, rotary
embeddings with rotate_half, repeat_kv for grouped-query attention, the
causal mask, softmax, LlamaMLP with SiLU, the residuals), at two sizes, on
inputs made here.

The layer runs with `keel run --entry` fused and unfused through both CPU
exits (keel_entry.run_entry: the same bytes from all four); with --linalg
through the MLIR linalg exit (--keel-math, run by mlir-runner), and with
--stablehlo through the StableHLO exit (the pinned interpreter, whose exp,
sin, cos and pow are its own). Each result is compared with the float64
reference: relative error below 1e-5 of the result's scale (Keel computes
in f32; a wrong axis, head grouping, rotation or mask is off by far more).

usage: llama_check.py KEEL EXAMPLE WORKDIR [--linalg] [--stablehlo]
prints `ok ... relative error E` per run and `N failed`."""
import os
import shutil
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "exits"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "examples", "python"))
from keel_entry import run_entry  # noqa: E402
from llama_block import decoder_layer, parameters  # noqa: E402  (the example's float64 reference)
import linalg_check  # noqa: E402
import stablehlo_check  # noqa: E402

rng = np.random.default_rng(20261201)
TOLERANCE = 1e-5
ORDER = ["x", "input_layernorm", "q_proj", "k_proj", "v_proj", "o_proj", "post_attention_layernorm", "gate_proj",
         "up_proj", "down_proj"]


def relative_error(got, want):
    return float(np.max(np.abs(got.astype(np.float64) - want)) / max(1.0, np.max(np.abs(want))))


def through_exit(flag, keel, example, specs, sizes, work):
    """The layer's result through the linalg or StableHLO exit, as f32."""
    if flag == "--linalg":
        found = os.path.realpath(shutil.which(keel) or keel)
        library = os.environ.get("KEEL_MATH_LIB") or os.path.join(os.path.dirname(os.path.dirname(found)),
                                                                  "numerics", "libkeel_math.so")
        bits = linalg_check.through_linalg(keel, example, "llama_decoder_layer", specs, sizes, ["--keel-math"],
                                           library, work)
    else:
        bits = stablehlo_check.through_stablehlo(keel, example, "llama_decoder_layer", specs, sizes, [],
                                                 [("f32", None)], work)
    return np.array(bits[0], dtype=np.uint32).view(np.float32)


def main():
    keel, example, work = sys.argv[1:4]
    exits = [a for a in sys.argv[4:] if a in ("--linalg", "--stablehlo")]
    os.makedirs(work, exist_ok=True)
    failures = 0
    for batch, tokens, hidden, heads, kv_heads, intermediate in ((2, 8, 32, 4, 2, 64), (1, 5, 48, 6, 3, 40)):
        sizes = f"B={batch},T={tokens},C={hidden},H={heads},KV={kv_heads},F={intermediate}"
        p = parameters(rng, batch, tokens, hidden, heads, kv_heads, intermediate)
        want = decoder_layer(p["x"].astype(np.float64), {k: v.astype(np.float64) for k, v in p.items()}, heads,
                             kv_heads)
        args = {name: p[name] for name in ORDER}
        got, failure = run_entry(keel, example, "llama_decoder_layer", args, work, ("--bind", sizes))
        if failure:
            print(f"FAIL cpu {sizes}: {failure}")
            failures += 1
            continue
        error = relative_error(got, want)
        ok = got.dtype == np.float32 and got.shape == want.shape and error < TOLERANCE
        print(f"{'ok' if ok else 'FAIL'} cpu {sizes}: relative error {error:.2e}")
        failures += not ok
        specs = [f"{name}={os.path.join(work, f'llama_decoder_layer.{name}.npy')}" for name in ORDER]
        for flag in exits:
            missing = linalg_check.mlir_tools_missing() if flag == "--linalg" else stablehlo_check.tools_missing()
            if missing:
                print(f"FAIL {flag[2:]} {sizes}: {missing}")
                failures += 1
                continue
            with tempfile.TemporaryDirectory() as scratch:
                try:
                    values = through_exit(flag, keel, example, specs, sizes, scratch)
                except RuntimeError as e:
                    print(f"FAIL {flag[2:]} {sizes}: {e}")
                    failures += 1
                    continue
            error = relative_error(values.reshape(want.shape), want) if values.size == want.size else float("inf")
            ok = error < TOLERANCE
            print(f"{'ok' if ok else 'FAIL'} {flag[2:]} {sizes}: relative error {error:.2e}")
            failures += not ok
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
