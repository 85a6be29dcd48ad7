"""Helper of matmul-numpy.test: `matmul` as NumPy's, against np.matmul.

Every combination of operand ranks 1 to 4 that np.matmul takes, with batch
dimensions broadcast (a 1 or a missing dimension stretching, on either
side), for every element type matmul admits: one module per dtype whose
entry computes every case and returns them flattened and joined, run with
`keel run --entry` fused, unfused and through --exit reference (all four
the same bytes: keel_entry.run_entry), and compared element for element
with np.matmul on the same values computed in float64 (the values are small
integers, so every sum is exact in every accumulator and the comparison is
exact). With --linalg or --stablehlo the same module also goes through that
exit (tests/exits/linalg_check.py, stablehlo_check.py) against `keel run`,
bit for bit; StableHLO has no tf32 tensors there, so that one must be
refused with E0915.

usage: matmul_numpy.py KEEL WORKDIR [--linalg] [--stablehlo]"""
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "exits"))
from keel_entry import run_entry  # noqa: E402
import linalg_check  # noqa: E402
import stablehlo_check  # noqa: E402

M, K, N, B, H = 2, 3, 4, 2, 3
# (lhs shape, rhs shape): np.matmul's 1-D rules and batch broadcasting.
CASES = [
    ([K], [K]), ([K], [K, N]), ([M, K], [K]), ([M, K], [K, N]),
    ([B, M, K], [K, N]), ([M, K], [B, K, N]), ([K], [B, K, N]), ([B, M, K], [K]),
    ([B, M, K], [B, K, N]), ([1, M, K], [B, K, N]), ([B, M, K], [1, K, N]),
    ([B, H, M, K], [B, H, K, N]), ([B, 1, M, K], [1, H, K, N]), ([H, M, K], [B, H, K, N]),
    ([B, H, M, K], [K, N]), ([B, 1, M, K], [K]), ([K], [B, H, K, N]), ([1, 1, M, K], [B, H, K, N]),
]
# dtype: (accumulator, NumPy type of the values, encoder of the .npy).
LOW = {"f16", "bf16", "tf32", "fp8e4m3fn", "fp8e5m2"}
DTYPES = ["f32", "f64", "f16", "bf16", "tf32", "fp8e4m3fn", "fp8e5m2", "i8", "i16", "i32", "i64", "u8", "u16", "u32",
          "u64"]
NUMPY = {"f32": np.float32, "f64": np.float64, "f16": np.float16, "i8": np.int8, "i16": np.int16, "i32": np.int32,
         "i64": np.int64, "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}


def encode_small(dtype, values):
    """Small integers as a .npy array of `dtype`: NumPy's own types, or
    Keel's one-field structured types with the format's encodings, built
    here from sign, exponent and fraction (exact for these integers)."""
    if dtype in NUMPY:
        return values.astype(NUMPY[dtype])
    if dtype == "bf16":
        bits = (values.astype(np.float32).view(np.uint32) >> 16).astype(np.uint16)
        return _field(bits, "bf16", "<u2")
    if dtype == "tf32":
        return _field(values.astype(np.float32).view(np.uint32), "tf32", "<u4")
    e_bits, m_bits = (4, 3) if dtype == "fp8e4m3fn" else (5, 2)
    bias = (1 << (e_bits - 1)) - 1
    out = np.zeros(values.shape, dtype=np.uint8)
    for index, v in np.ndenumerate(values):
        v = int(v)
        sign = 0x80 if v < 0 else 0
        v = abs(v)
        if v == 0:
            out[index] = sign
            continue
        e = v.bit_length() - 1
        fraction = (v - (1 << e)) << m_bits >> e
        assert (fraction << e >> m_bits) + (1 << e) == v, "not exact in the format"
        out[index] = sign | ((e + bias) << m_bits) | fraction
    return _field(out, dtype, "|u1")


def _field(bits, name, raw):
    a = np.zeros(bits.shape, dtype=[(name, raw)])
    a[name] = bits
    return a


def tensor(dtype, shape):
    return f"Tensor<{dtype}, [{', '.join(str(d) for d in shape)}]>"


def result_shape(l, r):
    return list(np.matmul(np.zeros(l), np.zeros(r)).shape)


def module(dtype):
    acc = "f32" if dtype in LOW else dtype
    params, pieces, total = [], [], 0
    for i, (l, r) in enumerate(CASES):
        params += [f"a{i}: {tensor(dtype, l)}", f"b{i}: {tensor(dtype, r)}"]
        size = int(np.prod(result_shape(l, r), dtype=np.int64))
        pieces.append(f"reshape(matmul(a{i}, b{i}), [{size}])")
        total += size
    body = pieces[0]
    for p in pieces[1:]:
        body = f"concat({body}, {p}, axis: 0)"
    return (f"fn cases({', '.join(params)}) -> {tensor(acc, [total])} ![gpu] {{\n    return {body};\n}}\n", acc)


def check_exits(keel, path, dtype, arguments, work, exits):
    """Runs the module through each exit asked for against `keel run`; the
    number of failures."""
    failures = 0
    specs = [f"{name}={os.path.join(work, f'cases.{name}.npy')}" for name in arguments]
    for flag, checker, missing in (("--linalg", linalg_check, linalg_check.mlir_tools_missing),
                                   ("--stablehlo", stablehlo_check, stablehlo_check.tools_missing)):
        if flag not in exits:
            continue
        if missing():
            print(f"FAIL {dtype}: {flag} asked for, but {missing()}")
            failures += 1
            continue
        if flag == "--stablehlo" and dtype == "tf32":
            # StableHLO has no tf32 tensors outside a contraction's operands: refused.
            refused = subprocess.run([keel, "emit", "--stablehlo", path, "--entry", "cases"], capture_output=True,
                                     text=True)
            if refused.returncode == 0 or "error[E0915]" not in refused.stderr:
                print(f"FAIL tf32 --stablehlo: not refused with E0915 (exit {refused.returncode})")
                failures += 1
            continue
        extra = ["--keel-math"] if flag == "--linalg" else []
        try:
            problems, _, _ = checker.check(keel, path, "cases", specs, "", extra)
        except RuntimeError as e:
            problems = [str(e)]
        if problems:
            print(f"FAIL {dtype} {flag}: {problems[0]}")
            failures += 1
    return failures


def main():
    keel, work = sys.argv[1], sys.argv[2]
    exits = [a for a in sys.argv[3:] if a in ("--linalg", "--stablehlo")]
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(20261201)
    failures = 0
    for dtype in DTYPES:
        source, acc = module(dtype)
        path = os.path.join(work, f"matmul_{dtype}.sfn")
        with open(path, "w") as f:
            f.write(source)
        unsigned = dtype.startswith("u")
        arguments, expected = {}, []
        for i, (l, r) in enumerate(CASES):
            # Nonzero values: no product is -0, so the StableHLO exit's
            # documented +0 for an all -0 contraction (docs/exits.md) cannot arise.
            choices = [1, 2, 3] if unsigned else [-3, -2, -1, 1, 2, 3]
            a, b = rng.choice(choices, size=l), rng.choice(choices, size=r)
            arguments[f"a{i}"], arguments[f"b{i}"] = encode_small(dtype, a), encode_small(dtype, b)
            expected.append(np.matmul(a.astype(np.float64), b.astype(np.float64)).reshape(-1))
        want = np.concatenate(expected)
        before = failures
        if exits:  # the exits against `keel run` only; the CPU against NumPy is the plain mode's
            for name, value in arguments.items():
                np.save(os.path.join(work, f"cases.{name}.npy"), value)
            failures += check_exits(keel, path, dtype, arguments, work, exits)
            if failures == before:
                print(f"ok {dtype}: {len(CASES)} cases{''.join(' ' + e for e in exits)}")
            continue
        got, error = run_entry(keel, path, "cases", arguments, work)
        if error:
            print(f"FAIL {dtype}: {error}")
            failures += 1
            continue
        if got.dtype.names:  # an accumulator is never low-precision: not expected
            print(f"FAIL {dtype}: a structured result {got.dtype}")
            failures += 1
            continue
        if got.shape != want.shape or not np.array_equal(got.astype(np.float64), want):
            bad = np.flatnonzero(got.astype(np.float64) != want)[:3] if got.shape == want.shape else []
            print(f"FAIL {dtype}: keel {got.shape} differs from np.matmul {want.shape} at {list(bad)}")
            failures += 1
            continue
        if failures == before:
            print(f"ok {dtype}: {len(CASES)} cases, {want.size} elements")
    print(f"{len(DTYPES)} dtypes, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
