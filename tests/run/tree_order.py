"""Helper of tree-order.test: `order: tree` against its definition.

The definition (docs/semantics.md "The tree order") is written out again
here, from the text, in NumPy scalar arithmetic of the accumulator's type:
the terms in chunks of 4096, term j of a chunk in lane j mod 16, each lane
adding its terms in order from -0, the lanes halved (l[i] + l[i+8], then
+4, +2, +1), the chunk values combined pairwise with an odd last one carried
up. Keel is never called to compute an expected value.

One module per (input dtype, accumulator): every float dtype with each
accumulator it admits. Its entry sums vectors of lengths around the lane
and chunk boundaries (1, 15, 16, 17, 4095, 4096, 4097, 3 x 4096 + 5), the
rows of a matrix, the columns of one (a strided axis), two axes at once
(row-major over both), a vector of -0 (the sum is -0), a mean, and a matmul
(each product rounded to the accumulator first), all with `order: tree`.
Inputs mix signs and magnitudes, so that orders differ: each module must
have some result where the sequential order gives other bits (else the
test could not tell the orders apart).

Each module runs through `keel run` at 1, 2, 3 and 4 threads with every
operation on threads (--threaded-work=0), fused and unfused, and through
--exit reference: identical bytes, equal to the definition's. The same
module without `order:` run with --default-order tree gives those bytes too.
With --linalg, the modules of LINALG_MODULES (one per accumulator and
storage width) are checked so and also go through the MLIR linalg exit
(tests/exits/linalg_check.py) against `keel run`, bit for bit.

usage: tree_order.py KEEL WORKDIR [--linalg]
prints `ok ...` / `FAIL ...` per module and `N modules, M failed`."""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "exits"))
import linalg_check  # noqa: E402

CHUNK, LANES = 4096, 16
LENGTHS = [1, 15, 16, 17, 4095, 4096, 4097, 3 * 4096 + 5]
ROWS, COLS = 3, 4097
GRID = (3, 40, 50)  # summed over its last two axes: 2000 terms per row
MATMUL = (2, 4097, 3)
# (input dtype, accumulator)
MODULES = [("f32", "f32"), ("f32", "f64"), ("f64", "f64")] + [
    (t, a) for t in ("f16", "bf16", "tf32", "fp8e4m3fn", "fp8e5m2") for a in ("f32", "f64")]
# With --linalg: a module per format family (each accumulator, each storage width).
LINALG_MODULES = [("f32", "f32"), ("f64", "f64"), ("bf16", "f32"), ("f16", "f64"), ("fp8e4m3fn", "f32")]
# sign, exponent and fraction bits of the low-precision formats; e4m3fn has no infinity
FORMATS = {"f16": (5, 10), "bf16": (8, 7), "tf32": (8, 10), "fp8e4m3fn": (4, 3), "fp8e5m2": (5, 2)}
STORAGE = {"f16": "<u2", "bf16": "<u2", "tf32": "<u4", "fp8e4m3fn": "|u1", "fp8e5m2": "|u1"}


def decode(dtype, bits):
    """The exact value of a finite encoding of a low-precision format."""
    e_bits, m_bits = FORMATS[dtype]
    sign = -1.0 if (bits >> (e_bits + m_bits)) & 1 else 1.0
    e = (bits >> m_bits) & ((1 << e_bits) - 1)
    m = bits & ((1 << m_bits) - 1)
    bias = (1 << (e_bits - 1)) - 1
    if e == 0:
        return sign * m * 2.0 ** (1 - bias - m_bits)
    return sign * (1 + m / 2.0 ** m_bits) * 2.0 ** (e - bias)


def finite(dtype, bits):
    e_bits, m_bits = FORMATS[dtype]
    e = (bits >> m_bits) & ((1 << e_bits) - 1)
    if dtype == "fp8e4m3fn":
        return (bits & 0x7F) != 0x7F  # only S.1111.111 is NaN
    return e != (1 << e_bits) - 1


def values(rng, dtype, shape):
    """(the .npy array, the exact values as float64): mixed signs and
    magnitudes, some -0; finite, so every sum is."""
    n = int(np.prod(shape))
    if dtype in ("f32", "f64"):
        v = rng.standard_normal(n) * np.exp2(rng.integers(-12, 12, n))
        v[rng.random(n) < 0.02] = -0.0
        a = v.astype(np.float32 if dtype == "f32" else np.float64)
        return a.reshape(shape), a.astype(np.float64).reshape(shape)
    e_bits, m_bits = FORMATS[dtype]
    width = 1 + e_bits + m_bits
    bits = []
    while len(bits) < n:
        b = int(rng.integers(0, 1 << width))
        # finite, and for the wide formats within 2^-24 .. 2^24, so that no
        # sum overflows and every order's rounding shows
        if finite(dtype, b) and (decode(dtype, b) == 0 or 2.0 ** -24 <= abs(decode(dtype, b)) <= 2.0 ** 24):
            bits.append(b)
    exact = np.array([decode(dtype, b) for b in bits]).reshape(shape)
    if dtype == "tf32":  # stored as the f32 encoding with the low 13 bits 0
        bits = [(b >> 18) << 31 | ((b >> 10) & 0xFF) << 23 | (b & 0x3FF) << 13 for b in bits]
    raw = np.array(bits, dtype=STORAGE[dtype]).reshape(shape)
    if dtype == "f16":
        return raw.view(np.float16), exact
    a = np.zeros(shape, dtype=[(dtype, STORAGE[dtype])])
    a[dtype] = raw
    return a, exact


def tree_sum(terms, t):
    """The tree order's sum of `terms` (values of the accumulator type t)."""
    chunks = []
    for start in range(0, max(len(terms), 1), CHUNK):
        lanes = [t(-0.0)] * LANES
        for j, term in enumerate(terms[start:start + CHUNK]):
            lanes[j % LANES] = t(lanes[j % LANES] + term)
        half = LANES // 2
        while half >= 1:
            for i in range(half):
                lanes[i] = t(lanes[i] + lanes[i + half])
            half //= 2
        chunks.append(lanes[0])
    while len(chunks) > 1:
        pairs = [t(chunks[i] + chunks[i + 1]) for i in range(0, len(chunks) - 1, 2)]
        chunks = pairs + ([chunks[-1]] if len(chunks) % 2 else [])
    return chunks[0]


def sequential_sum(terms, t):
    s = t(-0.0)
    for term in terms:
        s = t(s + term)
    return s


def expected(exact, acc, order):
    """Every result of the module's entry, in its order."""
    t = np.float32 if acc == "f32" else np.float64
    total = tree_sum if order == "tree" else sequential_sum
    out = []
    for n in range(len(LENGTHS)):
        out.append(total([t(v) for v in exact[f"x{n}"]], t))
    out += [total([t(v) for v in row], t) for row in exact["r"]]
    out += [total([t(v) for v in exact["c"][:, j]], t) for j in range(exact["c"].shape[1])]
    out += [total([t(v) for v in block.reshape(-1)], t) for block in exact["g"]]
    out.append(total([t(v) for v in exact["z"]], t))
    out += [t(total([t(v) for v in row], t) / t(COLS)) for row in exact["r"]]
    a, b = exact["a"], exact["b"]
    for i in range(a.shape[0]):
        for j in range(b.shape[1]):
            out.append(total([t(t(x) * t(y)) for x, y in zip(a[i], b[:, j])], t))
    return np.array(out, dtype=t)


def module(dtype, acc, order):
    o = ", order: tree" if order else ""
    acc_arg = f", acc: {acc}"
    params = [f"x{n}: Tensor<{dtype}, [{length}]>" for n, length in enumerate(LENGTHS)]
    params += [f"r: Tensor<{dtype}, [{ROWS}, {COLS}]>", f"c: Tensor<{dtype}, [{COLS}, 2]>",
               f"g: Tensor<{dtype}, [{', '.join(map(str, GRID))}]>", f"z: Tensor<{dtype}, [17]>",
               f"a: Tensor<{dtype}, [{MATMUL[0]}, {MATMUL[1]}]>", f"b: Tensor<{dtype}, [{MATMUL[1]}, {MATMUL[2]}]>"]
    pieces = [f"reshape(sum(x{n}, axis: 0{acc_arg}{o}), [1])" for n in range(len(LENGTHS))]
    pieces += [f"sum(r, axis: 1{acc_arg}{o})", f"sum(c, axis: 0{acc_arg}{o})", f"sum(g, axis: [1, 2]{acc_arg}{o})",
               f"reshape(sum(z, axis: 0{acc_arg}{o}), [1])", f"mean(r, axis: 1{acc_arg}{o})",
               f"reshape(matmul(a, b{acc_arg}{o}), [{MATMUL[0] * MATMUL[2]}])"]
    size = len(LENGTHS) + ROWS + 2 + GRID[0] + 1 + ROWS + MATMUL[0] * MATMUL[2]
    body = pieces[0]
    for p in pieces[1:]:
        body = f"concat({body}, {p}, axis: 0)"
    return f"fn cases({', '.join(params)}) -> Tensor<{acc}, [{size}]> {{\n    return {body};\n}}\n"


def run(keel, path, specs, out, extra):
    command = [keel, "run", path, "--entry", "cases", "--out", out, *specs, *extra]
    r = subprocess.run(command, capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"{' '.join(extra) or 'default'}: exit {r.returncode}: {r.stderr.strip()[:400]}"
    with open(os.path.join(out, "cases.npy"), "rb") as f:
        return f.read(), None


def check_module(keel, work, dtype, acc, rng, linalg):
    """The failures of one module (printed)."""
    label = f"{dtype} acc {acc}"
    shapes = {f"x{n}": (length,) for n, length in enumerate(LENGTHS)}
    shapes.update(r=(ROWS, COLS), c=(COLS, 2), g=GRID, z=(17,), a=MATMUL[:2], b=MATMUL[1:])
    arrays, exact = {}, {}
    for name, shape in shapes.items():
        arrays[name], exact[name] = values(rng, dtype, shape)
    # z: every element -0 (its sum is -0: the sum starts at -0)
    exact["z"][...] = -0.0
    if arrays["z"].dtype.names:  # the sign bit alone (tf32: of its f32 encoding)
        arrays["z"][dtype] = 1 << 31 if dtype == "tf32" else 1 << sum(FORMATS[dtype])
    else:
        arrays["z"][...] = -0.0
    specs = []
    for name, a in arrays.items():
        p = os.path.join(work, f"{label.replace(' ', '_')}.{name}.npy")
        np.save(p, a)
        specs += ["--arg", f"{name}={p}"]
    tree_path = os.path.join(work, f"tree_{dtype}_{acc}.sfn")
    plain_path = os.path.join(work, f"plain_{dtype}_{acc}.sfn")
    with open(tree_path, "w") as f:
        f.write(module(dtype, acc, True))
    with open(plain_path, "w") as f:
        f.write(module(dtype, acc, False))
    out = os.path.join(work, "out")
    os.makedirs(out, exist_ok=True)
    variants = [("reference", tree_path, ["--exit", "reference"]), ("unfused", tree_path, ["--no-fuse"])]
    variants += [(f"threads-{n}", tree_path, ["--threads", str(n), "--threaded-work=0"]) for n in (1, 2, 3, 4)]
    variants.append(("--default-order tree", plain_path, ["--default-order=tree", "--threads", "3"]))
    results = {}
    for tag, path, extra in variants:
        data, error = run(keel, path, specs, out, extra)
        if error:
            print(f"FAIL {label}: {error}")
            return 1
        results[tag] = data
    differ = [tag for tag, data in results.items() if data != results["reference"]]
    if differ:
        print(f"FAIL {label}: {', '.join(differ)} give other bytes than --exit reference")
        return 1
    got = np.load(os.path.join(out, "cases.npy"))
    want = expected(exact, acc, "tree")
    if got.dtype != want.dtype or got.shape != want.shape:
        print(f"FAIL {label}: result {got.dtype}{list(got.shape)}, expected {want.dtype}{list(want.shape)}")
        return 1
    bits = np.uint32 if acc == "f32" else np.uint64
    wrong = np.flatnonzero(got.view(bits) != want.view(bits))
    if wrong.size:
        i = wrong[0]
        print(f"FAIL {label}: {wrong.size} results differ from the definition, first #{i}: {got[i]!r} != {want[i]!r}")
        return 1
    sequential = expected(exact, acc, "sequential")
    # fp8e4m3fn in f64: every term and product is a multiple of 2^-18 and
    # every partial sum is below 2^30, so each is exact in f64's 53 bits and
    # all orders agree; every other module must show the orders apart.
    if (dtype, acc) != ("fp8e4m3fn", "f64") and np.array_equal(sequential.view(bits), want.view(bits)):
        print(f"FAIL {label}: the inputs give the same bits in both orders, so they test nothing")
        return 1
    plain = subprocess.run([keel, "run", plain_path, "--entry", "cases", "--out", out, *specs],
                           capture_output=True, text=True)
    seq_got = np.load(os.path.join(out, "cases.npy")) if plain.returncode == 0 else None
    if seq_got is None or not np.array_equal(seq_got.view(bits), sequential.view(bits)):
        print(f"FAIL {label}: without `order:` the sums are not the sequential order's")
        return 1
    if linalg:
        problems, _, _ = linalg_check.check(keel, tree_path, "cases", [s for s in specs if s != "--arg"], "", [])
        if problems:
            print(f"FAIL {label} --linalg: {problems[0]}")
            return 1
    print(f"ok {label}: {want.size} sums equal to the definition at 1-4 threads, fused, unfused, reference"
          + (", linalg" if linalg else ""))
    return 0


def main():
    keel, work = sys.argv[1], sys.argv[2]
    linalg = "--linalg" in sys.argv[3:]
    if linalg and linalg_check.mlir_tools_missing():
        print(f"FAIL --linalg asked for, but {linalg_check.mlir_tools_missing()}")
        sys.exit(1)
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(20261202)
    modules = LINALG_MODULES if linalg else MODULES
    failures = sum(check_module(keel, work, dtype, acc, rng, linalg) for dtype, acc in modules)
    print(f"{len(modules)} modules, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
