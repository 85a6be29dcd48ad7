"""Gradients (issue 28): the Llama block of examples/llama.sfn at T=128,
C=512 (8 heads sharing 4 key/value heads, F=1376), loss = sum(layer(...) *
r) for a fixed random r, its value and the gradient with respect to the
input and every weight: Keel (value_and_grad through `import keel`) against
PyTorch eager (float32, autograd) at the same thread count, in one run.
Prints each one's forward time, forward + backward time, and the ratio
backward / forward (backward = the difference), medians of 10 runs after a
warm-up.

usage: PYTHONPATH=build/python python3 bench/grad_bench.py [--threads N]
       (N: default every CPU)"""
import argparse
import os
import statistics
import sys
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "build", "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
import keel  # noqa: E402
from llama_block import LOSS_SOURCE, parameters, torch_decoder_layer  # noqa: E402

ORDER = ["x", "input_layernorm", "q_proj", "k_proj", "v_proj", "o_proj", "post_attention_layernorm", "gate_proj",
         "up_proj", "down_proj"]


def median_ms(call, runs=10):
    call()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        call()
        times.append((time.perf_counter() - start) * 1e3)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--threads", type=int, default=0)
    a = parser.parse_args()
    threads = a.threads or os.cpu_count()
    import torch
    torch.set_num_threads(threads)
    p = parameters(np.random.default_rng(28), 1, 128, 512, 8, 4, 1376)
    r = np.random.default_rng(29).standard_normal((1, 128, 512)).astype(np.float32)
    with open(os.path.join(ROOT, "examples", "llama.sfn")) as f:
        m = keel.compile(f.read() + LOSS_SOURCE, name="llama.sfn")
    forward = m.llama_loss
    step = m.value_and_grad("llama_loss", wrt=ORDER)
    keel_forward = median_ms(lambda: forward(**p, r=r, H=8, KV=4, threads=threads))
    keel_both = median_ms(lambda: step(**p, r=r, H=8, KV=4, threads=threads))

    ts = {k: torch.tensor(v, requires_grad=True) for k, v in p.items()}
    tr = torch.tensor(r)

    def torch_forward():
        with torch.no_grad():
            return (torch_decoder_layer(torch, ts, 8, 4) * tr).sum()

    def torch_both():
        for t in ts.values():
            t.grad = None
        loss = (torch_decoder_layer(torch, ts, 8, 4) * tr).sum()
        loss.backward()
        return loss

    torch_fwd = median_ms(torch_forward)
    torch_both_ms = median_ms(torch_both)
    print(f"Llama block gradient, B=1 T=128 C=512 H=8 KV=4 F=1376, {threads} threads (medians of 10)")
    print(f"  {'':8} {'forward':>10} {'fwd+bwd':>10} {'backward/forward':>17}")
    for name, fwd, both in (("keel", keel_forward, keel_both), ("pytorch", torch_fwd, torch_both_ms)):
        print(f"  {name:8} {fwd:8.2f} ms {both:8.2f} ms {(both - fwd) / fwd:17.2f}")
    print(f"  keel / pytorch: forward {keel_forward / torch_fwd:.2f}, forward + backward {keel_both / torch_both_ms:.2f}")


if __name__ == "__main__":
    main()
