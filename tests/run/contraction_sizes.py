"""Helper of contraction-sizes.test: the CPU exit's tiled contraction at
every size from 1 to 70, its edges included (a last tile of fewer rows, a
last panel narrower than the tile), at every vector width's tiles, against
NumPy.

Each case is a matrix product (batched or not) of f32, f64, bf16 or f16
operands; one module per operand type holds every case in one entry,
whose results are flattened and joined, run with `keel run --entry`
fused, unfused and through --exit reference (the same bytes:
keel_entry.run_entry), with every operation on threads at 3 threads, and
with the tiles of 128-, 256- and 512-bit vectors (--vector-bits).
The expected values are computed here in NumPy in Keel's order, which no
kernel shares: every product rounded to the accumulator, then added to it
for k = 0, 1, ... from -0 (bf16 and f16 products are exact in f32); they must
agree to the bit.

usage: contraction_sizes.py KEEL WORKDIR"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from keel_entry import run_entry  # noqa: E402

# (batch or None, M, K, N): M through 1..70 with N on both sides of the
# panels (8, 16, 32 and 64 columns, by vector width), N through 1..70 in
# steps of 3 (below one vector untiled), N past two and three 64-column
# panels, and batched cases.
F32_CASES = ([(None, m, 1 + (m * 7) % 70, 16 + (m * 11) % 55) for m in range(1, 71)] +
             [(None, 1 + (n * 5) % 13, 1 + (n * 3) % 40, n) for n in range(1, 71, 3)] +
             [(None, 5, 7, 130), (None, 9, 3, 200), (2, 6, 5, 129)] +
             [(2, 5, 9, 17), (3, 4, 16, 32), (2, 7, 1, 33), (1, 9, 20, 70)])
F64_CASES = [(None, 7, 5, 9), (None, 9, 12, 17), (None, 4, 3, 31), (2, 6, 11, 19), (None, 1, 70, 70),
             (None, 5, 4, 67)]
BF16_CASES = [(None, 3, 9, 16), (None, 6, 13, 23), (2, 5, 7, 40), (None, 70, 3, 17), (None, 9, 21, 67)]
F16_CASES = [(None, 5, 11, 16), (None, 7, 6, 33), (2, 4, 9, 70)]


def shapes(case):
    batch, m, k, n = case
    lead = [] if batch is None else [batch]
    return lead + [m, k], lead + [k, n], lead + [m, n]


def tensor(dtype, shape):
    return f"Tensor<{dtype}, [{', '.join(str(d) for d in shape)}]>"


def module(dtype, acc, cases):
    params, pieces, total = [], [], 0
    for i, case in enumerate(cases):
        l, r, out = shapes(case)
        params += [f"a{i}: {tensor(dtype, l)}", f"b{i}: {tensor(dtype, r)}"]
        size = int(np.prod(out))
        pieces.append(f"reshape(matmul(a{i}, b{i}), [{size}])")
        total += size
    body = pieces[0]
    for p in pieces[1:]:
        body = f"concat({body}, {p}, axis: 0)"
    return f"fn cases({', '.join(params)}) -> {tensor(acc, [total])} ![gpu] {{\n    return {body};\n}}\n"


def in_order(x, y, acc):
    """x @ y in Keel's order: from -0, add round(x[..., k] * y[k, ...]) for
    k = 0, 1, ... in the accumulator's type."""
    out = np.full(x.shape[:-1] + y.shape[-1:], -0.0, dtype=acc)
    for k in range(x.shape[-1]):
        out = out + x[..., :, k:k + 1].astype(acc) * y[..., k:k + 1, :].astype(acc)
    return out


def bf16(values):
    """f32 values rounded to bf16 (to nearest, ties to even; finite here):
    the bf16 .npy encoding and the f32 values it holds."""
    bits = values.astype(np.float32).view(np.uint32).astype(np.uint64)
    bits = ((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    encoded = np.zeros(bits.shape, dtype=[("bf16", "<u2")])
    encoded["bf16"] = bits
    return encoded, (bits.astype(np.uint32) << 16).view(np.float32)


def operand(rng, shape, dtype):
    """Values over a wide range of magnitudes, so that roundings differ
    with the order of the additions."""
    values = rng.standard_normal(shape) * np.exp(rng.uniform(-8, 8, shape))
    if dtype == "bf16":
        return bf16(values)
    v = values.astype({"f32": np.float32, "f64": np.float64, "f16": np.float16}[dtype])
    return v, v


def check(keel, work, dtype, cases, rng):
    acc = {"f32": np.float32, "f64": np.float64, "bf16": np.float32, "f16": np.float32}[dtype]
    source = module(dtype, "f64" if dtype == "f64" else "f32", cases)
    path = os.path.join(work, f"sizes_{dtype}.sfn")
    with open(path, "w") as f:
        f.write(source)
    arguments, expected = {}, []
    for i, case in enumerate(cases):
        l, r, _ = shapes(case)
        (a, av), (b, bv) = operand(rng, l, dtype), operand(rng, r, dtype)
        arguments[f"a{i}"], arguments[f"b{i}"] = a, b
        expected.append(in_order(av, bv, acc).reshape(-1))
    want = np.concatenate(expected)
    label = f"{dtype}: {len(cases)} cases, {want.size} elements"
    got, error = run_entry(keel, path, "cases", arguments, work)
    if error:
        print(f"FAIL {label}: {error}")
        return 1
    if got.shape != want.shape or got.tobytes() != want.tobytes():
        bits = f"u{want.itemsize}"
        bad = np.flatnonzero(got.view(bits) != want.view(bits))[:3] if got.shape == want.shape else []
        print(f"FAIL {label}: differs from NumPy in Keel's order at {list(bad)}")
        return 1
    # On threads (every operation's independent loops split, three ways),
    # and with the register tiles of each vector width, whatever the host's.
    for what, options in (("on 3 threads", ["--threads", "3", "--threaded-work=0"]),
                          *((f"with {bits}-bit tiles", [f"--vector-bits={bits}"]) for bits in (128, 256, 512))):
        variant = subprocess.run([keel, "run", path, "--entry", "cases", "--out", os.path.join(work, "variant"),
                                  *options, *[x for n in arguments
                                              for x in ("--arg", f"{n}={os.path.join(work, f'cases.{n}.npy')}")]],
                                 capture_output=True, text=True)
        if variant.returncode != 0:
            print(f"FAIL {label} {what}: {variant.stderr.strip()}")
            return 1
        if np.load(os.path.join(work, "variant", "cases.npy")).tobytes() != want.tobytes():
            print(f"FAIL {label}: other bytes {what}")
            return 1
    print(f"ok {label}")
    return 0


def main():
    keel, work = sys.argv[1], sys.argv[2]
    os.makedirs(os.path.join(work, "variant"), exist_ok=True)
    rng = np.random.default_rng(20261202)
    failures = sum(check(keel, work, dtype, cases, rng)
                   for dtype, cases in (("f32", F32_CASES), ("f64", F64_CASES), ("bf16", BF16_CASES), ("f16", F16_CASES)))
    print(f"{failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
