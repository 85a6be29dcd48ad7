"""The GPT-2 block of examples/gpt.sfn and the Llama block of
examples/llama.sfn: the gradient of a scalar loss, sum(block(...) * r) with
a fixed random r, with respect to the input and every weight, against
PyTorch's autograd in float64 of the same block (written here from
nanoGPT's model.py and Hugging Face's modeling_llama.py).

The bound. Keel computes in f32: each operation rounds once, a relative
error of at most u = 2^-24 ~ 6e-8, and a sum of n terms adds at most
(n - 1) u of the sum of the terms' magnitudes. The backward sweep of a
block is a chain of about 60 operations (twice the forward's), whose
longest sums have n = 4 C = 128 terms here (the MLP's contractions). So each
gradient element is within about (60 + 128) u ~ 1.1e-5 of the scale of the
terms it sums; the terms are bounded by the largest gradient element times
the largest weight (< 1.5 here), and cancellation in the softmax and layer
norms can multiply that by the norms' 1/sigma (< 10 for these inputs). The
tests allow 2e-4 of the largest gradient element of each tensor; measured:
below 7e-7."""
import math
import os
import sys

import numpy as np
import pytest

import keel
from conftest import EXAMPLES, ROOT

sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
from llama_block import LOSS_SOURCE as LLAMA_LOSS, parameters, torch_decoder_layer  # noqa: E402

torch = pytest.importorskip("torch")
rng = np.random.default_rng(280)
BOUND = 2e-4


def f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


def compare(grads, params, names, loss_fn):
    ts = {k: torch.tensor(v.astype(np.float64), requires_grad=True) for k, v in params.items()}
    loss = loss_fn(ts)
    loss.backward()
    worst = 0.0
    for name, got in zip(names, grads):
        want = ts[name].grad.numpy()
        assert got.shape == want.shape and got.dtype == np.float32
        error = float(np.max(np.abs(got.astype(np.float64) - want)) / np.max(np.abs(want)))
        worst = max(worst, error)
        assert error < BOUND, f"{name}: {error:.2e} of its largest element"
    print(f"largest error {worst:.2e} of a gradient's largest element")
    return loss.item(), worst


GPT_ORDER = ["x", "ln_1_w", "ln_1_b", "c_attn_w", "c_attn_b", "attn_proj_w", "attn_proj_b", "ln_2_w", "ln_2_b",
             "c_fc_w", "c_fc_b", "mlp_proj_w", "mlp_proj_b"]
GPT_LOSS = """
fn gpt_loss<H, Dh>(x: Tensor<f32, [T, C]>,
                   ln_1_w: Tensor<f32, [C]>, ln_1_b: Tensor<f32, [C]>,
                   c_attn_w: Tensor<f32, [C, 3 * C]>, c_attn_b: Tensor<f32, [3 * C]>,
                   attn_proj_w: Tensor<f32, [C, C]>, attn_proj_b: Tensor<f32, [C]>,
                   ln_2_w: Tensor<f32, [C]>, ln_2_b: Tensor<f32, [C]>,
                   c_fc_w: Tensor<f32, [C, 4 * C]>, c_fc_b: Tensor<f32, [4 * C]>,
                   mlp_proj_w: Tensor<f32, [4 * C, C]>, mlp_proj_b: Tensor<f32, [C]>,
                   r: Tensor<f32, [T, C]>) -> Tensor<f32, []> ![gpu]
    requires C == H * Dh {
    let y = gpt_block(x, ln_1_w, ln_1_b, c_attn_w, c_attn_b, attn_proj_w, attn_proj_b, ln_2_w, ln_2_b,
                      c_fc_w, c_fc_b, mlp_proj_w, mlp_proj_b, H: H, Dh: Dh);
    return sum(y * r, axis: [0, 1]);
}
"""


def torch_gpt_block(p, heads):
    def layer_norm(x, w, b):
        mean = x.mean(dim=-1, keepdim=True)
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)
        return (x - mean) / torch.sqrt(var + 1e-5) * w + b

    x = p["x"]
    t, c = x.shape
    h = layer_norm(x, p["ln_1_w"], p["ln_1_b"])
    q, k, v = torch.split(h @ p["c_attn_w"] + p["c_attn_b"], c, dim=1)
    q, k, v = (m.reshape(t, heads, c // heads).transpose(0, 1) for m in (q, k, v))
    att = q @ k.transpose(1, 2) / math.sqrt(c // heads)
    att = att.masked_fill(~torch.tril(torch.ones(t, t, dtype=torch.bool)), float("-inf"))
    att = torch.exp(att - att.amax(dim=-1, keepdim=True))
    att = att / att.sum(dim=-1, keepdim=True)
    y = (att @ v).transpose(0, 1).reshape(t, c) @ p["attn_proj_w"] + p["attn_proj_b"]
    x = x + y
    h = layer_norm(x, p["ln_2_w"], p["ln_2_b"])
    return x + torch.nn.functional.gelu(h @ p["c_fc_w"] + p["c_fc_b"]) @ p["mlp_proj_w"] + p["mlp_proj_b"]


def test_gpt_block_gradients_against_torch():
    with open(f"{EXAMPLES}/gpt.sfn") as f:
        m = keel.compile(f.read() + GPT_LOSS, name="gpt.sfn")
    t, c, heads = 8, 32, 4
    p = {"x": f32(t, c), "ln_1_w": 1.0 + f32(c, scale=0.1), "ln_1_b": f32(c, scale=0.1),
         "c_attn_w": f32(c, 3 * c, scale=0.3), "c_attn_b": f32(3 * c, scale=0.1),
         "attn_proj_w": f32(c, c, scale=0.3), "attn_proj_b": f32(c, scale=0.1),
         "ln_2_w": 1.0 + f32(c, scale=0.1), "ln_2_b": f32(c, scale=0.1),
         "c_fc_w": f32(c, 4 * c, scale=0.3), "c_fc_b": f32(4 * c, scale=0.1),
         "mlp_proj_w": f32(4 * c, c, scale=0.2), "mlp_proj_b": f32(c, scale=0.1)}
    r = f32(t, c)
    out = m.value_and_grad("gpt_loss", wrt=GPT_ORDER)(**p, r=r, H=heads, Dh=c // heads)
    value, worst = compare(out[1:], p, GPT_ORDER, lambda ts: (torch_gpt_block(ts, heads) *
                                                             torch.tensor(r, dtype=torch.float64)).sum())
    assert abs(float(out[0]) - value) < BOUND * max(1.0, abs(value))


LLAMA_ORDER = ["x", "input_layernorm", "q_proj", "k_proj", "v_proj", "o_proj", "post_attention_layernorm",
               "gate_proj", "up_proj", "down_proj"]


def test_llama_block_gradients_against_torch():
    with open(f"{EXAMPLES}/llama.sfn") as f:
        m = keel.compile(f.read() + LLAMA_LOSS, name="llama.sfn")
    b, t, c, heads, kv_heads, ff = 2, 8, 32, 4, 2, 48
    p = parameters(rng, b, t, c, heads, kv_heads, ff)
    r = f32(b, t, c)
    out = m.value_and_grad("llama_loss", wrt=LLAMA_ORDER)(**p, r=r, H=heads, KV=kv_heads)
    value, worst = compare(out[1:], p, LLAMA_ORDER, lambda ts: (torch_decoder_layer(torch, ts, heads, kv_heads) *
                                                               torch.tensor(r, dtype=torch.float64)).sum())
    assert abs(float(out[0]) - value) < BOUND * max(1.0, abs(value))


def test_block_gradients_are_the_same_bytes_at_every_thread_count():
    with open(f"{EXAMPLES}/llama.sfn") as f:
        m = keel.compile(f.read() + LLAMA_LOSS, name="llama.sfn")
    b, t, c, heads, kv_heads, ff = 1, 16, 64, 4, 2, 96
    p = parameters(rng, b, t, c, heads, kv_heads, ff)
    p["r"] = f32(b, t, c)
    step = m.value_and_grad("llama_loss", wrt=LLAMA_ORDER)
    first = step(**p, H=heads, KV=kv_heads, threads=1)
    for threads in (2, 3, 4):
        again = step(**p, H=heads, KV=kv_heads, threads=threads)
        for a, b_ in zip(first, again):
            assert a.tobytes() == b_.tobytes()
