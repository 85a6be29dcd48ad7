"""A Llama decoder layer from Python: its inputs made in NumPy, the layer
called through `import keel` (examples/llama.sfn's llama_decoder_layer,
compiled once for these sizes and run in-process), and the result compared
with an independent NumPy float64 implementation of Hugging Face's
LlamaDecoderLayer (modeling_llama.py).

    PYTHONPATH=build/python python3 examples/python/llama_block.py [--tokens T]

Keel computes in f32, so the two agree to about 1e-6 of the result's scale;
a wrong axis, head grouping, rotation or mask would be off by far more.
tests/run/llama_check.py uses decoder_layer below as its reference too.
"""
import argparse
import math
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
LLAMA = os.path.join(HERE, "..", "llama.sfn")


def rms_norm(x, weight, eps=1e-6):
    return weight * (x / np.sqrt((x * x).mean(axis=-1, keepdims=True) + eps))


def rotate_half(x):
    half = x.shape[-1] // 2
    return np.concatenate([-x[..., half:], x[..., :half]], axis=-1)


def decoder_layer(x, p, heads, kv_heads):
    """LlamaDecoderLayer in NumPy (float64 when given float64): RMSNorm,
    rotary embeddings with rotate_half, repeat_kv for grouped-query
    attention, the causal mask, softmax, LlamaMLP with SiLU, residuals."""
    batch, tokens, hidden = x.shape
    head_dim = hidden // heads
    inv_freq = 1.0 / (10000.0 ** (np.arange(0, head_dim, 2) / head_dim))
    freqs = np.arange(tokens)[:, None] * inv_freq[None, :]
    emb = np.concatenate([freqs, freqs], axis=-1)
    cos, sin = np.cos(emb), np.sin(emb)

    h = rms_norm(x, p["input_layernorm"])
    q = (h @ p["q_proj"].T).reshape(batch, tokens, heads, head_dim).transpose(0, 2, 1, 3)
    k = (h @ p["k_proj"].T).reshape(batch, tokens, kv_heads, head_dim).transpose(0, 2, 1, 3)
    v = (h @ p["v_proj"].T).reshape(batch, tokens, kv_heads, head_dim).transpose(0, 2, 1, 3)
    q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
    k, v = np.repeat(k, heads // kv_heads, axis=1), np.repeat(v, heads // kv_heads, axis=1)  # repeat_kv
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head_dim)
    scores = np.where(np.triu(np.ones((tokens, tokens), dtype=bool), k=1), -np.inf, scores)
    probs = np.exp(scores - scores.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    attn = (probs @ v).transpose(0, 2, 1, 3).reshape(batch, tokens, hidden) @ p["o_proj"].T
    x = x + attn
    h = rms_norm(x, p["post_attention_layernorm"])
    gate = h @ p["gate_proj"].T
    return x + ((gate / (1.0 + np.exp(-gate))) * (h @ p["up_proj"].T)) @ p["down_proj"].T


# A scalar loss on the layer, for gradients: sum(layer(...) * r), appended
# to examples/llama.sfn's text (docs/autodiff.md).
LOSS_SOURCE = """
fn llama_loss<H, KV>(x: Tensor<f32, [B, T, C]>, input_layernorm: Tensor<f32, [C]>,
                     q_proj: Tensor<f32, [C, C]>, k_proj: Tensor<f32, [KV * (C / H), C]>,
                     v_proj: Tensor<f32, [KV * (C / H), C]>, o_proj: Tensor<f32, [C, C]>,
                     post_attention_layernorm: Tensor<f32, [C]>, gate_proj: Tensor<f32, [F, C]>,
                     up_proj: Tensor<f32, [F, C]>, down_proj: Tensor<f32, [C, F]>,
                     r: Tensor<f32, [B, T, C]>) -> Tensor<f32, []> ![gpu]
    requires C % H == 0 && H % KV == 0 && (C / H) % 2 == 0 {
    let y = llama_decoder_layer(x, input_layernorm, q_proj, k_proj, v_proj, o_proj, post_attention_layernorm,
                                gate_proj, up_proj, down_proj, H: H, KV: KV);
    return sum(y * r, axis: [0, 1, 2]);
}
"""


def torch_decoder_layer(torch, p, heads, kv_heads):
    """decoder_layer in PyTorch (for autograd: tests/python/test_gradients_blocks.py,
    bench/grad_bench.py), on a dict of tensors."""
    def rms_norm(x, w):
        return w * (x / torch.sqrt((x * x).mean(dim=-1, keepdim=True) + 1e-6))

    def rotate_half(x):
        half = x.shape[-1] // 2
        return torch.cat([-x[..., half:], x[..., :half]], dim=-1)

    x = p["x"]
    batch, tokens, hidden = x.shape
    d = hidden // heads
    inv_freq = 1.0 / (10000.0 ** (torch.arange(0, d, 2, dtype=x.dtype) / d))
    freqs = torch.arange(tokens, dtype=x.dtype)[:, None] * inv_freq[None, :]
    emb = torch.cat([freqs, freqs], dim=-1)
    cos, sin = torch.cos(emb), torch.sin(emb)
    h = rms_norm(x, p["input_layernorm"])
    q = (h @ p["q_proj"].T).reshape(batch, tokens, heads, d).transpose(1, 2)
    k = (h @ p["k_proj"].T).reshape(batch, tokens, kv_heads, d).transpose(1, 2)
    v = (h @ p["v_proj"].T).reshape(batch, tokens, kv_heads, d).transpose(1, 2)
    q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
    k, v = k.repeat_interleave(heads // kv_heads, dim=1), v.repeat_interleave(heads // kv_heads, dim=1)
    scores = q @ k.transpose(2, 3) / math.sqrt(d)
    scores = scores.masked_fill(torch.triu(torch.ones(tokens, tokens, dtype=torch.bool), diagonal=1), float("-inf"))
    probs = torch.exp(scores - scores.amax(dim=-1, keepdim=True))
    probs = probs / probs.sum(dim=-1, keepdim=True)
    x = x + (probs @ v).transpose(1, 2).reshape(batch, tokens, hidden) @ p["o_proj"].T
    h = rms_norm(x, p["post_attention_layernorm"])
    return x + (torch.nn.functional.silu(h @ p["gate_proj"].T) * (h @ p["up_proj"].T)) @ p["down_proj"].T


def parameters(rng, batch, tokens, hidden, heads, kv_heads, intermediate):
    """The layer's input and weights (nn.Linear's [out, in]), f32."""
    kv = kv_heads * (hidden // heads)
    shapes = {"x": (batch, tokens, hidden), "input_layernorm": (hidden,), "q_proj": (hidden, hidden),
              "k_proj": (kv, hidden), "v_proj": (kv, hidden), "o_proj": (hidden, hidden),
              "post_attention_layernorm": (hidden,), "gate_proj": (intermediate, hidden),
              "up_proj": (intermediate, hidden), "down_proj": (hidden, intermediate)}
    p = {}
    for name, shape in shapes.items():
        scale = 1.0 if name == "x" else 0.1 if name.endswith("layernorm") else 0.3
        p[name] = (rng.standard_normal(shape) * scale).astype(np.float32)
    for name in ("input_layernorm", "post_attention_layernorm"):
        p[name] += np.float32(1.0)
    return p


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--kv-heads", type=int, default=4)
    parser.add_argument("--intermediate", type=int, default=688)
    a = parser.parse_args()

    import keel
    m = keel.load(LLAMA)
    print(m.signature("llama_decoder_layer"))
    p = parameters(np.random.default_rng(2026), a.batch, a.tokens, a.hidden, a.heads, a.kv_heads, a.intermediate)
    start = time.perf_counter()
    y = m.llama_decoder_layer(**p, H=a.heads, KV=a.kv_heads)  # the first call compiles
    first = time.perf_counter() - start
    start = time.perf_counter()
    y = m.llama_decoder_layer(**p, H=a.heads, KV=a.kv_heads)
    second = time.perf_counter() - start
    want = decoder_layer(p["x"].astype(np.float64), {k: v.astype(np.float64) for k, v in p.items()}, a.heads,
                         a.kv_heads)
    error = float(np.max(np.abs(y.astype(np.float64) - want)) / max(1.0, np.max(np.abs(want))))
    print(f"llama_decoder_layer: {y.dtype}{list(y.shape)}; first call {first * 1e3:.1f} ms (compiles), "
          f"second {second * 1e3:.2f} ms")
    print(f"largest difference from NumPy float64: {error:.2e} of the result's scale")
    if not error < 1e-5:
        print("FAIL: more than 1e-5", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
