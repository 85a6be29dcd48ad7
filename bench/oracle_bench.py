"""The CPU oracle's workloads (issue 7: W1-W5, W7; issue 25: W7t, W7 in the tree order, W8, a bf16
matmul accumulating in f32, and W9, examples/llama.sfn's decoder layer), timed against NumPy and
PyTorch (Debian python3-numpy, python3-torch) and against the machine's
limits measured in the same run: memory bandwidth (a NumPy copy, and a
parallel C copy on the threads used; the bandwidth floors use the faster),
OpenBLAS sgemm (NumPy's matmul
through Debian's libopenblas), the peak rates of separate f32 multiplies
and adds and of fused multiply-adds (bench/machine_peaks.c), and a plain
sequential C loop (gcc -O2) for W7's strictly ordered sum.

usage: python3 bench/oracle_bench.py [KEEL] [--threads N] [--before OLD-KEEL | --fusion]
       (KEEL: default build/src/driver/keel; --threads: the threads Keel,
       OpenBLAS and PyTorch all use, default every CPU; --before: another
       keel, for instance one built from an earlier commit, timed on the
       same workloads in the same run, with the ratio of the two (both on
       one thread when the other keel has no --threads); --fusion: the same keel
       with --no-fuse as the "before", and the bytes of intermediate
       tensors each materializes, from --stats)

Keel's time is `keel run --entry ... --repeat 5`'s best call (compilation
excluded), on inputs it generates (random:SEED) or, for W5's normally
distributed activations, .npy files; the others' best of 5.
Debian 12's OpenBLAS may pick a slow kernel on a new CPU: unless
OPENBLAS_CORETYPE is set, the benchmark times sgemm with each of SkylakeX,
Haswell and Zen (and OpenBLAS's own choice), sets the fastest for this
command only, and prints which."""
import atexit
import ctypes
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

SGEMM_PROBE = ("import numpy as np, time\n"
               "a = np.random.default_rng(0).random((1024, 1024), dtype=np.float32)\n"
               "a @ a\n"
               "t = []\n"
               "for _ in range(5):\n"
               "    s = time.perf_counter(); a @ a; t.append(time.perf_counter() - s)\n"
               "print(min(t))\n")


def choose_coretype():
    """Re-runs this benchmark with the OPENBLAS_CORETYPE whose sgemm is
    fastest here (and OPENBLAS_NUM_THREADS=THREADS), unless one was set."""
    if os.environ.get("KEEL_BENCH_CHOSEN"):
        return
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(THREADS), KEEL_BENCH_CHOSEN="1")
    if "OPENBLAS_CORETYPE" not in os.environ:
        timings = {}
        for coretype in ("", "SkylakeX", "Haswell", "Zen"):
            probe_env = dict(env, OPENBLAS_CORETYPE=coretype) if coretype else env
            run = subprocess.run([sys.executable, "-c", SGEMM_PROBE], env=probe_env, capture_output=True, text=True)
            if run.returncode == 0:
                timings[coretype] = float(run.stdout)
        fastest = min(timings, key=timings.get) if timings else ""
        print("OPENBLAS_CORETYPE: " + ", ".join(f"{c or 'its own choice'} {2 * 1024**3 / t / 1e9:.0f} GFLOP/s"
                                                for c, t in timings.items()) +
              f"; using {fastest or 'its own choice'}", flush=True)
        if fastest:
            env["OPENBLAS_CORETYPE"] = fastest
    os.execve(sys.executable, [sys.executable, *sys.argv], env)



HERE = os.path.dirname(os.path.abspath(__file__))
ARGS = sys.argv[1:]
THREADS = len(os.sched_getaffinity(0))
if "--threads" in ARGS:
    at = ARGS.index("--threads")
    THREADS = int(ARGS[at + 1])
    del ARGS[at:at + 2]
BEFORE = None
BEFORE_ARGS = []
FUSION = "--fusion" in ARGS
if FUSION:
    ARGS.remove("--fusion")
if "--before" in ARGS:
    at = ARGS.index("--before")
    BEFORE = ARGS[at + 1]
    del ARGS[at:at + 2]
KEEL = ARGS[0] if ARGS else os.path.join(HERE, "..", "build", "src", "driver", "keel")
if FUSION:
    BEFORE, BEFORE_ARGS = KEEL, ["--no-fuse"]
# A keel from before --threads runs on one thread, and so does this one
# beside it; one that has --threads runs on the same threads as this one.
OLDER = bool(BEFORE) and not FUSION and "--threads" not in subprocess.run(
    [BEFORE, "run", "--help"], capture_output=True, text=True).stdout
BYTES = []  # (entry, fused bytes, unfused bytes) with --fusion
SOURCE = os.path.join(HERE, "oracle.sfn")

choose_coretype()
import numpy as np  # noqa: E402  (after OPENBLAS_* are set)


def best(function, runs=5):
    function()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        function()
        times.append(time.perf_counter() - start)
    return min(times) * 1e3


INPUTS = tempfile.mkdtemp(prefix="oracle_bench.")  # .npy arguments
atexit.register(shutil.rmtree, INPUTS, True)


def keel(entry, args, bindings, binary=None, extra=(), arrays=None, source=SOURCE):
    """Keel's best time of `entry` of `source`: each argument random:SEED
    (uniform in [0, 1)), or the array `arrays` gives it."""
    arrays = arrays or {}
    if binary is None and BEFORE:  # both, interleaved: (after, before)
        return (keel(entry, args, bindings, KEEL, arrays=arrays, source=source),
                keel(entry, args, bindings, BEFORE, BEFORE_ARGS, arrays=arrays, source=source))
    threads = [] if OLDER and binary == BEFORE else ["--threads", str(1 if OLDER else THREADS)]
    command = [binary or KEEL, "run", source, *threads, *extra, *(["--stats"] if FUSION and not extra else []), "--entry", entry, "--repeat", "5", "--bind",
               ",".join(f"{k}={v}" for k, v in bindings.items())]
    for i, name in enumerate(args):
        if name in arrays:
            path = os.path.join(INPUTS, f"{entry}.{name}.npy")
            if not os.path.exists(path):
                np.save(path, arrays[name])
            command += ["--arg", f"{name}={path}"]
        else:
            command += ["--arg", f"{name}=random:{i + 1}"]
    run = subprocess.run(command, capture_output=True, text=True)
    match = re.search(r"best ([0-9.]+) ms", run.stderr)
    if run.returncode != 0 or not match:
        sys.exit(f"keel failed on {entry}: {run.stderr}")
    stats = re.search(r"fusion: (\d+) regions? formed; .*: (\d+) bytes unfused, (\d+) bytes fused", run.stderr)
    if stats:
        BYTES.append((entry, int(stats.group(1)), int(stats.group(3)), int(stats.group(2))))
    return float(match.group(1))


def main():
    rng = np.random.default_rng(0)
    try:
        import torch
        torch.set_num_threads(THREADS)
        torch_threads = torch.get_num_threads()
    except ImportError:
        torch = None
        torch_threads = 0

    # The machine's limits, measured now.
    big = rng.random(64 * 2**20 // 4, dtype=np.float32)
    copy = np.empty_like(big)
    copy_ms = best(lambda: np.copyto(copy, big))
    bandwidth = 2 * big.nbytes / copy_ms / 1e6  # GB/s, read + write
    a = rng.random((1024, 1024), dtype=np.float32)
    sgemm_ms = best(lambda: a @ a)
    sgemm_gflops = 2 * 1024**3 / sgemm_ms / 1e6
    with tempfile.TemporaryDirectory() as work:
        c_source = os.path.join(work, "sum.c")
        with open(c_source, "w") as f:
            f.write("#include <stddef.h>\n"
                    "float ordered_sum(const float *x, size_t n) {\n"
                    "  float s = -0.0f;\n  for (size_t i = 0; i < n; ++i) s += x[i];\n  return s;\n}\n")
        library = os.path.join(work, "libsum.so")
        subprocess.run(["gcc", "-O2", "-shared", "-fPIC", c_source, "-o", library], check=True)
        c_sum = ctypes.CDLL(library)
        c_sum.ordered_sum.restype = ctypes.c_float
        x64m = rng.random(64 * 2**20, dtype=np.float32)
        pointer = x64m.ctypes.data_as(ctypes.POINTER(ctypes.c_float))
        c_ms = best(lambda: c_sum.ordered_sum(pointer, ctypes.c_size_t(x64m.size)))
        peaks = {}
        for mode, flags in (("MULADD", ["-ffp-contract=off"]), ("FMA", ["-ffp-contract=fast"]), ("COPY", [])):
            binary = os.path.join(work, mode.lower())
            subprocess.run(["gcc", "-O2", "-march=native", "-fopenmp", *flags, f"-DMODE_{mode}",
                            os.path.join(HERE, "machine_peaks.c"), "-o", binary], check=True)
            peaks[mode] = float(subprocess.run([binary, str(THREADS)], capture_output=True, text=True,
                                               check=True).stdout)

    print(f"threads: Keel {1 if OLDER else THREADS}, OpenBLAS {os.environ.get('OPENBLAS_NUM_THREADS')} "
          f"(OPENBLAS_CORETYPE={os.environ.get('OPENBLAS_CORETYPE', 'its own choice')}), PyTorch {torch_threads}")
    print(f"machine: memory {bandwidth:.1f} GB/s (NumPy copy, read+write), {peaks['COPY']:.1f} GB/s "
          f"(C copy on {THREADS} threads); f32 peak on {THREADS} threads: multiply+add {peaks['MULADD']:.0f} GFLOP/s, "
          f"FMA {peaks['FMA']:.0f} GFLOP/s (multiply+add / FMA {peaks['MULADD'] / peaks['FMA']:.2f}); "
          f"OpenBLAS sgemm {sgemm_gflops:.0f} GFLOP/s (1024^3: {sgemm_ms:.1f} ms), "
          f"PyTorch {torch.__version__ if torch else 'absent'}")
    muladd = peaks["MULADD"]
    # The bandwidth floors use the faster of the two copies: the machine's
    # memory on the threads used (one NumPy thread may not reach it).
    floor_bandwidth = max(bandwidth, peaks["COPY"])
    print(f"bandwidth floors at {floor_bandwidth:.1f} GB/s")
    rows = []

    def row(name, keel_ms, numpy_ms, torch_ms, floor_ms, floor_kind):
        before_ms = math.nan
        if isinstance(keel_ms, tuple):
            keel_ms, before_ms = keel_ms
        rows.append((name, keel_ms, numpy_ms, torch_ms, floor_ms, floor_kind, before_ms))

    # W1: tanh(x * 1.5 + 0.5) * x on 16M f32; floor: read x once, write once.
    n = 16 * 2**20
    x = rng.random(n, dtype=np.float32)
    t = torch.from_numpy(x) if torch else None
    row("W1 tanh(x*1.5+0.5)*x 16M", keel("w1", ["x"], {"N": n}),
        best(lambda: np.tanh(x * np.float32(1.5) + np.float32(0.5)) * x),
        best(lambda: torch.tanh(t * 1.5 + 0.5) * t) if torch else math.nan,
        2 * x.nbytes / floor_bandwidth / 1e6, "bandwidth")

    # W2: layer norm over rows of [4096, 4096].
    x2 = rng.random((4096, 4096), dtype=np.float32)
    g, b = np.ones(4096, np.float32), np.zeros(4096, np.float32)

    def ln_numpy():
        m = x2.mean(axis=1, keepdims=True)
        c = x2 - m
        v = (c * c).mean(axis=1, keepdims=True)
        return c / np.sqrt(v + np.float32(1e-5)) * g + b
    t2 = torch.from_numpy(x2) if torch else None
    row("W2 layer norm [4096,4096]", keel("w2", ["x", "gamma", "beta"], {"S": 4096, "D": 4096}), best(ln_numpy),
        best(lambda: torch.nn.functional.layer_norm(t2, (4096,))) if torch else math.nan,
        2 * x2.nbytes / floor_bandwidth / 1e6, "bandwidth")

    # W3: matmul; floor: OpenBLAS at its measured rate.
    row("W3 matmul [1024,1024]^2", keel("w3", ["a", "b"], {"M": 1024, "K": 1024, "N": 1024}), sgemm_ms,
        best(lambda: torch.from_numpy(a) @ torch.from_numpy(a)) if torch else math.nan, sgemm_ms, "sgemm")
    ab = rng.random((16, 256, 256), dtype=np.float32)
    row("W3 batched [16,256,256]^2", keel("w3b", ["a", "b"], {"B": 16, "M": 256, "K": 256, "N": 256}),
        best(lambda: ab @ ab), best(lambda: torch.from_numpy(ab) @ torch.from_numpy(ab)) if torch else math.nan,
        2 * 16 * 256**3 / sgemm_gflops / 1e6, "sgemm")

    # W4: attention B=8 S=512 D=64.
    q = rng.random((8, 512, 64), dtype=np.float32)

    def attention_numpy():
        s = q @ q.transpose(0, 2, 1) / np.float32(8.0)
        e = np.exp(s - s.max(axis=2, keepdims=True))
        return (e / e.sum(axis=2, keepdims=True)) @ q
    tq = torch.from_numpy(q) if torch else None
    row("W4 attention B=8 S=512 D=64", keel("w4", ["q", "k", "v"], {"B": 8, "S": 512, "D": 64}),
        best(attention_numpy),
        best(lambda: torch.softmax(tq @ tq.transpose(1, 2) / 8.0, dim=2) @ tq) if torch else math.nan,
        2 * 2 * 8 * 512 * 512 * 64 / sgemm_gflops / 1e6, "sgemm")

    # W5: MLP [2048,1024] -> 4096 -> 1024 with the exact (erf) GELU, on
    # normally distributed activations as a trained layer sees them (its
    # pre-activations about N(0, 1): about 2% take GELU's slower tails;
    # uniform [0, 1) inputs would make them all large and positive).
    def normal(shape, scale):
        return (rng.standard_normal(shape) * scale).astype(np.float32)
    xm, w1, w2 = normal((2048, 1024), 1.0), normal((1024, 4096), 1024**-0.5), normal((4096, 1024), 4096**-0.5)
    b1, b2 = normal(4096, 0.1), normal(1024, 0.1)
    if torch:
        txm, tw1, tw2, tb1, tb2 = (torch.from_numpy(v) for v in (xm, w1, w2, b1, b2))
    row("W5 MLP 2048x1024->4096->1024", keel("w5", ["x", "w1", "b1", "w2", "b2"], {"S": 2048, "D": 1024, "F": 4096},
                                               arrays={"x": xm, "w1": w1, "b1": b1, "w2": w2, "b2": b2}),
        math.nan, best(lambda: torch.nn.functional.gelu(txm @ tw1 + tb1) @ tw2 + tb2, runs=3) if torch else math.nan,
        2 * 2 * 2048 * 1024 * 4096 / sgemm_gflops / 1e6, "sgemm")

    # W8: bf16 x bf16 -> f32 matmul 1024^3 (each bf16 product exact in f32,
    # added in order); against PyTorch's bf16 matmul and OpenBLAS's f32
    # sgemm on the same sizes (the NumPy column and the floor).
    if torch:
        ta8 = torch.from_numpy(a).to(torch.bfloat16)
    row("W8 bf16 matmul 1024^3 -> f32", keel("w8", ["a", "b"], {"M": 1024, "K": 1024, "N": 1024}), sgemm_ms,
        best(lambda: ta8 @ ta8) if torch else math.nan, sgemm_ms, "sgemm")

    # W9: the Llama decoder layer of examples/llama.sfn at T=512, C=1024, 16
    # heads, 8 key/value heads, F=2816 (batch 1), on normally distributed
    # inputs and weights, against the same layer in PyTorch eager
    # (Hugging Face's LlamaDecoderLayer as examples/llama.sfn reads it).
    T9, C9, H9, KV9, F9 = 512, 1024, 16, 8, 2816
    D9 = C9 // H9
    llama = {"x": normal((1, T9, C9), 1.0), "input_layernorm": np.ones(C9, np.float32),
             "q_proj": normal((C9, C9), C9**-0.5), "k_proj": normal((KV9 * D9, C9), C9**-0.5),
             "v_proj": normal((KV9 * D9, C9), C9**-0.5), "o_proj": normal((C9, C9), C9**-0.5),
             "post_attention_layernorm": np.ones(C9, np.float32), "gate_proj": normal((F9, C9), C9**-0.5),
             "up_proj": normal((F9, C9), C9**-0.5), "down_proj": normal((C9, F9), F9**-0.5)}

    def llama_torch(x, ln1, wq, wk, wv, wo, ln2, wg, wu, wd):
        def rms(t, w):
            return w * (t * torch.rsqrt(t.pow(2).mean(-1, keepdim=True) + 1e-6))
        h = rms(x, ln1)
        q = (h @ wq.T).view(1, T9, H9, D9).transpose(1, 2)
        k = (h @ wk.T).view(1, T9, KV9, D9).transpose(1, 2)
        v = (h @ wv.T).view(1, T9, KV9, D9).transpose(1, 2)
        freqs = torch.arange(T9, dtype=torch.float32)[:, None] / (
            10000 ** (torch.arange(0, D9, 2, dtype=torch.float32) / D9))
        emb = torch.cat((freqs, freqs), -1)
        cos, sin = emb.cos(), emb.sin()

        def rotate_half(t):
            return torch.cat((-t[..., D9 // 2:], t[..., :D9 // 2]), -1)
        q, k = q * cos + rotate_half(q) * sin, k * cos + rotate_half(k) * sin
        k, v = k.repeat_interleave(H9 // KV9, dim=1), v.repeat_interleave(H9 // KV9, dim=1)
        s = (q @ k.transpose(-1, -2) / D9**0.5).masked_fill(
            torch.triu(torch.ones(T9, T9, dtype=torch.bool), 1), float("-inf"))
        h2 = x + (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(1, T9, C9) @ wo.T
        m = rms(h2, ln2)
        return h2 + (torch.nn.functional.silu(m @ wg.T) * (m @ wu.T)) @ wd.T
    if torch:
        tl = [torch.from_numpy(llama[n]) for n in llama]
        with torch.no_grad():
            llama_torch_ms = best(lambda: llama_torch(*tl))
    flops9 = 2 * T9 * C9 * (2 * C9 + 2 * KV9 * D9 + 3 * F9) + 2 * 2 * H9 * T9 * T9 * D9
    row("W9 Llama layer T=512 C=1024", keel("llama_decoder_layer", list(llama),
                                            {"B": 1, "T": T9, "C": C9, "H": H9, "KV": KV9, "F": F9}, arrays=llama,
                                            source=os.path.join(HERE, "..", "examples", "llama.sfn")),
        math.nan, llama_torch_ms if torch else math.nan, flops9 / sgemm_gflops / 1e6, "sgemm")

    # W7: the ordered sum of 64M f32; its limit is the add latency.
    row("W7 ordered sum 64M", keel("w7", ["x"], {"N": 64 * 2**20}), best(lambda: x64m.sum()),
        best(lambda: torch.from_numpy(x64m).sum()) if torch else math.nan, c_ms, "C loop")
    # W7t: the same sum in the tree order (16 lanes per 4096-term chunk, a
    # balanced tree over the chunks: its chunks on threads); its limit is
    # reading x once.
    row("W7t tree-order sum 64M", keel("w7t", ["x"], {"N": 64 * 2**20}), best(lambda: x64m.sum()),
        best(lambda: torch.from_numpy(x64m).sum()) if torch else math.nan, x64m.nbytes / floor_bandwidth / 1e6,
        "bandwidth")

    print(f"{'workload':32} {'Keel ms':>9} {'NumPy ms':>9} {'torch ms':>9} {'floor ms':>9}  "
          f"{'Keel/NumPy':>10} {'floor/Keel':>10}" + (f" {'before ms':>9} {'Keel/before':>11}" if BEFORE else ""))
    for name, k, npy, tch, floor, kind, before in rows:
        line = f"{name:32} {k:9.1f} {npy:9.1f} {tch:9.1f} {floor:9.1f}  {k / npy:10.2f} {floor / k:10.3f}"
        if BEFORE:
            line += f" {before:9.1f} {k / before:11.2f}"
        print(line + f"  ({kind})")
    for name, flops in (("W3 matmul [1024,1024]^2", 2 * 1024**3), ("W3 batched [16,256,256]^2", 2 * 16 * 256**3),
                        ("W8 bf16 matmul 1024^3 -> f32", 2 * 1024**3)):
        k = next(r[1] for r in rows if r[0] == name)
        print(f"{name}: {flops / k / 1e6:.0f} GFLOP/s, {flops / k / 1e6 / muladd:.2f} of the multiply+add peak, "
              f"{flops / k / 1e6 / sgemm_gflops:.2f} of OpenBLAS sgemm")
    if BYTES:
        print(f"\n{'entry':8} {'regions':>8} {'intermediate bytes fused':>25} {'unfused':>14}")
        for entry, regions, fused, unfused in BYTES:
            print(f"{entry:8} {regions:8} {fused:25} {unfused:14}")


if __name__ == "__main__":
    main()
