"""Helper of threads.test: parallel loops change no bit of any result.

    threads_check.py KEEL LLAMA_EXAMPLE WORKDIR

1. examples/llama.sfn's decoder layer at B=7 (every contraction, norm and
   softmax large enough to run on threads by default) at 1, 2, 3 and 4
   threads, unfused at 3, and through `--exit reference`: the same bytes.
2. Batch invariance: each of three rows of that batch computed alone (B=1,
   at 1 and 3 threads) gives exactly the bytes of its row in the batch.
3. Contractions of odd and edge sizes (1, 3, 17, 67, 130; batched and not;
   f32, bf16 operands, f64) with every operation on threads
   (--threaded-work=0) at 1 to 4 threads against the reference.

Prints `ok ...` or `FAIL ...` per check and `N failed`."""
import itertools
import os
import subprocess
import sys

import numpy as np

rng = np.random.default_rng(20261202)
ORDER = ["x", "input_layernorm", "q_proj", "k_proj", "v_proj", "o_proj", "post_attention_layernorm", "gate_proj",
         "up_proj", "down_proj"]


def run(keel, source, entry, args, out, extra):
    """The bytes of every result file, or the error text."""
    os.makedirs(out, exist_ok=True)
    for name in os.listdir(out):
        os.remove(os.path.join(out, name))
    command = [keel, "run", source, "--entry", entry, "--out", out, *extra]
    for name, value in args.items():
        command += ["--arg", f"{name}={value}"]
    r = subprocess.run(command, capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"exit {r.returncode}: {r.stderr.strip()}"
    return {n: open(os.path.join(out, n), "rb").read() for n in sorted(os.listdir(out))}, None


def same_everywhere(keel, source, entry, args, work, extra, variants, label):
    """Runs every variant; one line per check. Returns the failures."""
    results = {}
    for tag, flags in variants:
        data, error = run(keel, source, entry, args, os.path.join(work, tag), [*extra, *flags])
        if error:
            print(f"FAIL {label} ({tag}): {error}")
            return 1
        results[tag] = data
    first = next(iter(results.values()))
    differ = [tag for tag, data in results.items() if data != first]
    print(f"{'FAIL' if differ else 'ok'} {label}: {', '.join(results)}" + (f" differ: {differ}" if differ else ""))
    return 1 if differ else 0


def llama(keel, example, work):
    batch, tokens, hidden, heads, kv_heads, intermediate = 7, 32, 64, 4, 2, 128
    kv = kv_heads * (hidden // heads)
    shapes = {"x": (batch, tokens, hidden), "input_layernorm": (hidden,), "q_proj": (hidden, hidden),
              "k_proj": (kv, hidden), "v_proj": (kv, hidden), "o_proj": (hidden, hidden),
              "post_attention_layernorm": (hidden,), "gate_proj": (intermediate, hidden),
              "up_proj": (intermediate, hidden), "down_proj": (hidden, intermediate)}
    files = {}
    for name, shape in shapes.items():
        value = (rng.standard_normal(shape) * (1.0 if name == "x" else 0.3)).astype(np.float32)
        files[name] = os.path.join(work, f"{name}.npy")
        np.save(files[name], value)
    sizes = f"H={heads},KV={kv_heads}"
    variants = [("reference", ["--exit", "reference"]), *((f"threads-{n}", ["--threads", str(n)]) for n in (1, 2, 3, 4)),
                ("unfused-3", ["--no-fuse", "--threads", "3"])]
    failures = same_everywhere(keel, example, "llama_decoder_layer", files, os.path.join(work, "batch"),
                               ["--bind", sizes], variants, f"llama B={batch},T={tokens},C={hidden} at every thread count")
    whole, error = run(keel, example, "llama_decoder_layer", files, os.path.join(work, "whole"),
                       ["--bind", sizes, "--threads", "2"])
    if error:
        print(f"FAIL llama batch: {error}")
        return failures + 1
    batched = np.load(os.path.join(work, "whole", "llama_decoder_layer.npy"))
    x = np.load(files["x"])
    for row in (0, 3, 6):
        alone = dict(files, x=os.path.join(work, f"x{row}.npy"))
        np.save(alone["x"], x[row:row + 1])
        for threads in ("1", "3"):
            data, error = run(keel, example, "llama_decoder_layer", alone, os.path.join(work, f"row{row}"),
                              ["--bind", sizes, "--threads", threads])
            if error:
                print(f"FAIL llama row {row} alone: {error}")
                failures += 1
                continue
            got = np.load(os.path.join(work, f"row{row}", "llama_decoder_layer.npy"))
            ok = got.tobytes() == batched[row:row + 1].tobytes()
            print(f"{'ok' if ok else 'FAIL'} llama row {row} alone at {threads} threads equals its row of the batch of {batch}")
            failures += not ok
    return failures


def contractions(keel, work):
    failures = 0
    variants = [("reference", ["--exit", "reference"]),
                *((f"threads-{n}", ["--threaded-work=0", "--threads", str(n)]) for n in (1, 2, 3, 4))]
    cases = [(b, m, k, n) for b, (m, k, n) in itertools.product((0, 3), ((1, 3, 17), (17, 1, 67), (67, 130, 17),
                                                                        (130, 17, 130), (3, 67, 1)))]
    for (batch, m, k, n), (operand, acc) in itertools.product(cases, (("f32", "f32"), ("bf16", "f32"), ("f64", "f64"))):
        lead = [batch] if batch else []
        def ty(*dims):
            return f"{operand}[{','.join(map(str, lead + list(dims)))}]"
        bdims = "[0]" if batch else "[]"
        shift = 1 if batch else 0
        result = f"{acc}[{','.join(map(str, lead + [m, n]))}]"
        text = (f"func @c(%a: {ty(m, k)}, %b: {ty(k, n)}) -> {result} {{\n"
                f"  %r = dot_general(%a, %b) {{lhs_batch = {bdims}, rhs_batch = {bdims}, lhs_contract = [{1 + shift}], "
                f"rhs_contract = [{shift}], acc = {acc}}} : {result}\n"
                f"  return %r\n}}\n")
        path = os.path.join(work, f"c{batch}_{m}_{k}_{n}_{operand}.kir")
        with open(path, "w") as f:
            f.write(text)
        failures += same_everywhere(keel, path, "c", {"a": "random:1", "b": "random:2"}, os.path.join(work, "c"), [],
                                    variants, f"contraction {ty(m, k)} x {ty(k, n)} -> {result}")
    return failures


def main():
    keel, example, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    failures = llama(keel, example, work) + contractions(keel, work)
    print(f"{failures} failed")
    sys.exit(1 if failures else 0)


main()
