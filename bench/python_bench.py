"""`import keel` (issue 27): what a call from Python costs.

1. Call overhead: a tiny function (x + x on 8 f32 elements) called from
   Python, against NumPy's own ufunc call on the same array (np.add(x, x)),
   each the best of 7 rounds of 20,000 calls, in one run.
2. The Llama block of examples/llama.sfn at T=128 (C=512, 8 heads sharing 4
   key/value heads, F=1376) called from Python, against `keel run --entry
   --repeat` on the same inputs (.npy files) with the same threads: best and
   median of 20 calls each. The difference is the module's: arrays read in
   place, results written into new NumPy arrays.

usage: PYTHONPATH=build/python python3 bench/python_bench.py [KEEL] [--threads N]
       (KEEL: default build/src/driver/keel; N: default every CPU)

Targets: at most 5 us per call of the tiny function; the Llama block within
noise of keel run's."""
import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "build", "python"))
sys.path.insert(0, os.path.join(ROOT, "examples", "python"))
import keel  # noqa: E402
from llama_block import parameters  # noqa: E402


def best_per_call(call, calls=20000, rounds=7):
    best = float("inf")
    for _ in range(rounds):
        start = time.perf_counter()
        for _ in range(calls):
            call()
        best = min(best, (time.perf_counter() - start) / calls)
    return best


def overhead():
    m = keel.compile("fn twice(x: Tensor<f32, [N]>) -> Tensor<f32, [N]> { return x + x; }", name="tiny.sfn")
    x = np.arange(8, dtype=np.float32)
    f = m.twice
    assert np.array_equal(f(x), np.add(x, x))
    keel_s = best_per_call(lambda: f(x))
    numpy_s = best_per_call(lambda: np.add(x, x))
    attribute_s = best_per_call(lambda: m.twice(x))
    print("1. call overhead, x + x on 8 f32 elements (best of 7 x 20,000 calls)")
    print(f"   keel (f = m.twice; f(x))   {keel_s * 1e6:6.2f} us per call   (target <= 5 us)")
    print(f"   keel (m.twice(x))          {attribute_s * 1e6:6.2f} us per call")
    print(f"   numpy (np.add(x, x))       {numpy_s * 1e6:6.2f} us per call   ratio keel/numpy {keel_s / numpy_s:.1f}")


def llama(keel_bin, threads):
    sizes = dict(batch=1, tokens=128, hidden=512, heads=8, kv_heads=4, intermediate=1376)
    p = parameters(np.random.default_rng(27), *sizes.values())
    m = keel.load(os.path.join(ROOT, "examples", "llama.sfn"))
    extra = {"threads": threads} if threads else {}
    y = m.llama_decoder_layer(**p, H=8, KV=4, **extra)  # compiles
    times = []
    for _ in range(20):
        start = time.perf_counter()
        m.llama_decoder_layer(**p, H=8, KV=4, **extra)
        times.append((time.perf_counter() - start) * 1e3)
    with tempfile.TemporaryDirectory() as work:
        command = [keel_bin, "run", os.path.join(ROOT, "examples", "llama.sfn"), "--entry", "llama_decoder_layer",
                   "--bind", "H=8,KV=4", "--repeat", "20", "--out", work]
        for name, value in p.items():
            np.save(os.path.join(work, name + ".npy"), value)
            command += ["--arg", f"{name}={os.path.join(work, name + '.npy')}"]
        env = dict(os.environ)
        if threads:
            env["KEEL_THREADS"] = str(threads)
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        if done.returncode != 0:
            sys.exit("keel run failed: " + done.stderr)
        found = re.search(r"best ([\d.]+) ms, median ([\d.]+) ms", done.stderr)
        same = np.load(os.path.join(work, "llama_decoder_layer.npy")).tobytes() == y.tobytes()
    cli_best, cli_median = float(found.group(1)), float(found.group(2))
    print(f"2. llama_decoder_layer at B=1, T=128, C=512, H=8, KV=4, F=1376, threads={threads or 'every CPU'} "
          f"(20 calls; results {'the same bytes' if same else 'DIFFERENT'})")
    print(f"   keel from Python   best {min(times):7.3f} ms   median {statistics.median(times):7.3f} ms")
    print(f"   keel run --repeat  best {cli_best:7.3f} ms   median {cli_median:7.3f} ms")
    print(f"   ratio Python/CLI   best {min(times) / cli_best:.3f}   median {statistics.median(times) / cli_median:.3f}")
    return same


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("keel", nargs="?", default=os.path.join(ROOT, "build", "src", "driver", "keel"))
    parser.add_argument("--threads", type=int, default=0)
    a = parser.parse_args()
    overhead()
    return 0 if llama(a.keel, a.threads) else 1


if __name__ == "__main__":
    sys.exit(main())
