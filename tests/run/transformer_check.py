"""Helper of transformer.test: runs examples/transformer.sfn's parts with
`keel run --entry` on inputs made here and compares each result with an
independent NumPy float64 implementation of the same formulas. Keel computes
in f32 in a fixed order, so the comparison allows f32 rounding (relative
1e-5 of the result's scale); a wrong formula, axis or layout fails it.

usage: transformer_check.py KEEL EXAMPLE WORKDIR"""
import math
import os
import sys

import numpy as np

from keel_entry import run_entry

S, D, H, DH, F = 5, 8, 2, 4, 16
rng = np.random.default_rng(7)


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def layer_norm(x, g, b):
    mean = x.mean(axis=1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5) * g + b


def softmax(x):
    e = np.exp(x - x.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def gelu(x):
    return 0.5 * x * np.vectorize(math.erfc)(-x / math.sqrt(2))


def mlp(x, w1, b1, w2, b2):
    return gelu(x @ w1 + b1) @ w2 + b2


def attention(q, k, v):
    return softmax(q @ k.T / math.sqrt(q.shape[1])) @ v


def mha(x, wq, wk, wv, wo):
    outs = []
    for h in range(H):
        q, k, v = x @ wq[:, h, :], x @ wk[:, h, :], x @ wv[:, h, :]
        outs.append(softmax(q @ k.T / math.sqrt(DH)) @ v)
    return np.concatenate(outs, axis=1) @ wo.reshape(H * DH, D)


def block(x, g1, b1n, wq, wk, wv, wo, g2, b2n, w1, b1, w2, b2):
    h = x + mha(layer_norm(x, g1, b1n), wq, wk, wv, wo)
    return h + mlp(layer_norm(h, g2, b2n), w1, b1, w2, b2)


def main():
    keel, example, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    x = f32(S, D)
    params = {
        "layer_norm": (layer_norm, {"x": x, "gamma": f32(D), "beta": f32(D)}),
        "softmax": (softmax, {"x": f32(S, 7, scale=3)}),
        "mlp": (mlp, {"x": x, "w1": f32(D, F, scale=0.3), "b1": f32(F), "w2": f32(F, D, scale=0.3), "b2": f32(D)}),
        "attention": (attention, {"q": x, "k": f32(6, D), "v": f32(6, D)}),
        "multi_head_attention": (mha, {"x": x, "wq": f32(D, H, DH, scale=0.3), "wk": f32(D, H, DH, scale=0.3),
                                       "wv": f32(D, H, DH, scale=0.3), "wo": f32(H, DH, D, scale=0.3)}),
        "transformer_block": (block, {"x": x, "ln1_gamma": f32(D), "ln1_beta": f32(D),
                                      "wq": f32(D, H, DH, scale=0.3), "wk": f32(D, H, DH, scale=0.3),
                                      "wv": f32(D, H, DH, scale=0.3), "wo": f32(H, DH, D, scale=0.3),
                                      "ln2_gamma": f32(D), "ln2_beta": f32(D), "w1": f32(D, F, scale=0.3),
                                      "b1": f32(F), "w2": f32(F, D, scale=0.3), "b2": f32(D)}),
    }
    failures = 0
    for entry, (reference, args) in params.items():
        got, failure = run_entry(keel, example, entry, args, work)
        if failure:
            print(f"FAIL {entry}: {failure}")
            failures += 1
            continue
        want = reference(*[v.astype(np.float64) for v in args.values()])
        error = np.max(np.abs(got - want)) / max(1.0, np.max(np.abs(want)))
        ok = got.dtype == np.float32 and got.shape == want.shape and error < 1e-5
        print(f"{'ok' if ok else 'FAIL'} {entry}: relative error {error:.2e}")
        failures += not ok
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
