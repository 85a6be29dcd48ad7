"""Helper of gpt.test: runs examples/gpt.sfn's nanoGPT block and two-block
stack with `keel run --entry` (fused and unfused, through both CPU exits:
keel_entry.run_entry requires the same bytes from all four) at two sizes, on
inputs made here, and compares each result with an independent NumPy
float64 implementation of nanoGPT's formulas (model.py: LayerNorm with bias,
the fused c_attn projection split into q, k, v, heads, the causal mask as
masked_fill(-inf), softmax, exact erf GELU, residuals, ln_f). Keel computes
in f32 in a fixed order; the bound is relative 1e-5 of the result's scale
(measured: below 4e-7), which a wrong axis, mask, head split or formula
exceeds by orders of magnitude.

usage: gpt_check.py KEEL EXAMPLE WORKDIR
prints `ok ENTRY T=.. C=.. H=..: relative error E` per run and `N failed`."""
import math
import os
import sys

import numpy as np

from keel_entry import run_entry

rng = np.random.default_rng(2026)
TOLERANCE = 1e-5


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def layer_norm(x, w, b):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * w + b


def gelu(x):
    return 0.5 * x * (1.0 + np.vectorize(math.erf)(x / math.sqrt(2.0)))


def attention(x, c_attn_w, c_attn_b, c_proj_w, c_proj_b, heads):
    t, c = x.shape
    q, k, v = np.split(x @ c_attn_w + c_attn_b, 3, axis=1)
    # (T, C) -> (n_head, T, head size), as q.view(B, T, nh, hs).transpose(1, 2)
    q, k, v = (m.reshape(t, heads, c // heads).transpose(1, 0, 2) for m in (q, k, v))
    att = q @ k.transpose(0, 2, 1) * (1.0 / math.sqrt(c // heads))
    att = np.where(np.tril(np.ones((t, t), dtype=bool)), att, -np.inf)
    att = np.exp(att - att.max(axis=-1, keepdims=True))
    att = att / att.sum(axis=-1, keepdims=True)
    y = (att @ v).transpose(1, 0, 2).reshape(t, c)
    return y @ c_proj_w + c_proj_b


def block(x, p, heads):
    x = x + attention(layer_norm(x, p["ln_1_w"], p["ln_1_b"]), p["c_attn_w"], p["c_attn_b"], p["attn_proj_w"],
                      p["attn_proj_b"], heads)
    return x + gelu(layer_norm(x, p["ln_2_w"], p["ln_2_b"]) @ p["c_fc_w"] + p["c_fc_b"]) @ p["mlp_proj_w"] + \
        p["mlp_proj_b"]


def block_parameters(c, layers=None):
    lead = () if layers is None else (layers,)
    return {
        "ln_1_w": 1.0 + f32(*lead, c, scale=0.1), "ln_1_b": f32(*lead, c, scale=0.1),
        "c_attn_w": f32(*lead, c, 3 * c, scale=0.3), "c_attn_b": f32(*lead, 3 * c, scale=0.1),
        "attn_proj_w": f32(*lead, c, c, scale=0.3), "attn_proj_b": f32(*lead, c, scale=0.1),
        "ln_2_w": 1.0 + f32(*lead, c, scale=0.1), "ln_2_b": f32(*lead, c, scale=0.1),
        "c_fc_w": f32(*lead, c, 4 * c, scale=0.3), "c_fc_b": f32(*lead, 4 * c, scale=0.1),
        "mlp_proj_w": f32(*lead, 4 * c, c, scale=0.2), "mlp_proj_b": f32(*lead, c, scale=0.1),
    }


def wide(p):
    return {k: v.astype(np.float64) for k, v in p.items()}


def main():
    keel, example, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    failures = 0
    for t, c, heads in ((8, 16, 2), (5, 24, 3)):
        sizes = f"T={t},C={c},H={heads},Dh={c // heads}"
        x = f32(t, c)
        one = block_parameters(c)
        stack = block_parameters(c, layers=2)
        stack.update({"ln_f_w": 1.0 + f32(c, scale=0.1), "ln_f_b": f32(c, scale=0.1)})

        def two_blocks():
            p = wide(stack)
            h = x.astype(np.float64)
            for i in range(2):
                h = block(h, {k: v[i] for k, v in p.items() if not k.startswith("ln_f")}, heads)
            return layer_norm(h, p["ln_f_w"], p["ln_f_b"])

        runs = (("gpt_block", {"x": x, **one}, lambda: block(x.astype(np.float64), wide(one), heads)),
                ("gpt2", {"x": x, **stack}, two_blocks))
        for entry, args, reference in runs:
            got, failure = run_entry(keel, example, entry, args, work, ("--bind", sizes))
            if failure:
                print(f"FAIL {entry} {sizes}: {failure}")
                failures += 1
                continue
            want = reference()
            error = np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))
            ok = got.dtype == np.float32 and got.shape == want.shape and error < TOLERANCE
            print(f"{'ok' if ok else 'FAIL'} {entry} {sizes}: relative error {error:.2e}")
            failures += not ok
            np.savez(os.path.join(work, f"{entry}.T{t}.inputs.npz"), **args)
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
