"""Runs a tensor function through the MLIR linalg exit and through the CPU
oracle, and compares their results bit for bit.

The exit's side: `keel emit --linalg --main` (its @main builds the same
arguments and prints every result's encodings), lowered and run by MLIR 22's
own tools with the pipeline of docs/exits.md (scripts/mlir-run.sh). The
oracle's side: `keel run --entry ... --out DIR`, read back from the .npy
files with NumPy. Encodings must be equal; NaNs are compared as NaNs
(SFEP-0054 §6: bit equality after canonicalizing NaNs). With `ulps`, float
results of transcendental functions may differ by that many units in the
last place (the `math` dialect's functions are the host library's, not
Keel's; a dict gives a bound per dtype); NaN, infinities and signs must
still agree.

usage (also a module for exit_ops.py and the lit tests):
  linalg_check.py KEEL FILE --entry F [--arg NAME=SPEC]... [--bind N=4]
                  [--no-fuse] [--keel-math] [--ulps N] [--results I,J,...]
prints `ok: N results equal` or the first differences, and exits 1 then."""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_ROOT = os.path.dirname(os.path.dirname(HERE))
MLIR_RUN = os.path.join(SOURCE_ROOT, "scripts", "mlir-run.sh")

# Float formats: (exponent bits, fraction bits, storage bits, has infinity).
FORMATS = {
    "f16": (5, 10, 16, True), "bf16": (8, 7, 16, True), "tf32": (8, 23, 32, True),
    "fp8e4m3fn": (4, 3, 8, False), "fp8e5m2": (5, 2, 8, True),
    "f32": (8, 23, 32, True), "f64": (11, 52, 64, True),
}
NUMPY_NAMES = {
    "bool": "pred", "int8": "i8", "int16": "i16", "int32": "i32", "int64": "i64",
    "uint8": "u8", "uint16": "u16", "uint32": "u32", "uint64": "u64",
    "float16": "f16", "float32": "f32", "float64": "f64",
}


def mlir_tools_missing():
    """Why the MLIR tools cannot run here, or None."""
    bin_dir = os.environ.get("KEEL_MLIR_BIN", "/usr/lib/llvm-22/bin")
    for tool in ("mlir-opt", "mlir-runner"):
        if not os.access(os.path.join(bin_dir, tool), os.X_OK):
            return f"{bin_dir}/{tool} not found (Debian's mlir-22-tools; or set KEEL_MLIR_BIN)"
    return None


def read_bits(path):
    """(dtype name, flat list of encodings) of a .npy file Keel wrote."""
    a = np.load(path)
    if a.dtype.names:  # bf16, tf32, fp8e4m3fn, fp8e5m2, i4: raw encodings in one field
        name = a.dtype.names[0]
        raw = a[name].reshape(-1)
        if name == "i4":
            return name, [int(v) & 0xF for v in raw]
        return name, [int(v) for v in raw.view(raw.dtype.str.replace("i", "u"))]
    name = NUMPY_NAMES[a.dtype.name]
    flat = np.ascontiguousarray(a).reshape(-1)
    if name == "pred":
        return name, [int(v) for v in flat]
    width = flat.dtype.itemsize
    return name, [int(v) for v in flat.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[width])]


def is_nan(dtype, bits):
    fmt = FORMATS.get(dtype)
    if fmt is None:
        return False
    e, m, storage, has_inf = fmt
    if dtype == "tf32":
        m = 23  # its f32 carrier
    magnitude = bits & ((1 << (storage - 1)) - 1)
    top = ((1 << e) - 1) << m
    if not has_inf:  # e4m3fn: only all-ones is NaN
        return magnitude == (1 << (storage - 1)) - 1
    return (magnitude & top) == top and (magnitude & ((1 << m) - 1)) != 0


def ulp_distance(dtype, a, b):
    """Distance in units in the last place between two non-NaN encodings of
    a float format (its encodings in value order)."""
    storage = FORMATS[dtype][2]
    sign = 1 << (storage - 1)

    def ordered(x):
        return -(x & (sign - 1)) if x & sign else x
    step = 1 << 13 if dtype == "tf32" else 1
    return abs(ordered(a) - ordered(b)) // step


def keel_command(what, args, bindings):
    """Runs keel (`what`: its arguments up to --arg); its result, or
    RuntimeError with its messages."""
    command = list(what)
    for a in args:
        command += ["--arg", a]
    if bindings:
        command += ["--bind", bindings]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"keel {' '.join(what[1:3])} exited {run.returncode}: {run.stderr}")
    return run


def oracle(keel, source, entry, args, bindings, extra, work):
    run = keel_command([keel, "run", source, "--entry", entry, "--out", work, *extra], args, bindings)
    paths = [line.split(":")[0] for line in run.stdout.splitlines() if line.strip()]
    return [read_bits(p) for p in paths]


def through_linalg(keel, source, entry, args, bindings, extra, keel_math_lib, work):
    emit = keel_command([keel, "emit", "--linalg", source, "--entry", entry, "--main", *extra], args, bindings)
    module = os.path.join(work, entry + ".mlir")
    with open(module, "w") as f:
        f.write(emit.stdout)
    run_command = [MLIR_RUN, module]
    if "--keel-math" in extra:
        run_command[1:1] = ["--keel-math", keel_math_lib]
    run = subprocess.run(run_command, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"mlir-opt | mlir-runner exited {run.returncode} on {module}: {run.stderr[-3000:]}")
    results = []
    for line in run.stdout.splitlines():
        line = line.strip()
        if line.startswith("(") and line.endswith(")"):
            inside = line[1:-1].strip()
            results.append([int(v) for v in inside.split(",")] if inside else [])
    return results


def compare(expected, got, ulps=0, ulp_results=None, names=None, exit_name="linalg exit"):
    """Differences as text lines (empty: equal); and the largest ulp
    distance seen among the results allowed one, by dtype."""
    problems, largest = [], {}
    if len(expected) != len(got):
        return [f"{len(expected)} results from keel run, {len(got)} from the {exit_name}"], {}
    for k, ((dtype, want), have) in enumerate(zip(expected, got)):
        label = names[k] if names else f"result {k}"
        if len(want) != len(have):
            problems.append(f"{label} ({dtype}): {len(want)} elements from keel run, {len(have)} from the exit")
            continue
        allowed = ulps(label, dtype) if callable(ulps) else ulps.get(dtype, 0) if isinstance(ulps, dict) else ulps
        tolerant = allowed and (ulp_results is None or k in ulp_results) and dtype in FORMATS
        for i, (w, h) in enumerate(zip(want, have)):
            if w == h or (is_nan(dtype, w) and is_nan(dtype, h)):
                continue
            if tolerant and not is_nan(dtype, w) and not is_nan(dtype, h):
                d = ulp_distance(dtype, w, h)
                sign = 1 << (FORMATS[dtype][2] - 1)
                if d <= allowed and (w & sign) == (h & sign):
                    largest[dtype] = max(largest.get(dtype, 0), d)
                    continue
            problems.append(f"{label} ({dtype}) element {i}: keel run 0x{w:x}, {exit_name} 0x{h:x}")
            break
    return problems, largest


def check(keel, source, entry, args=(), bindings="", extra=(), ulps=0, ulp_results=None, names=None,
          keel_math_lib=None):
    """(problems, largest ulp distance by dtype, result count)."""
    if keel_math_lib is None:  # beside the keel that runs: BUILD/src/driver/keel, BUILD/src/numerics/
        found = os.path.realpath(shutil.which(keel) or keel)
        keel_math_lib = os.environ.get("KEEL_MATH_LIB") or os.path.join(
            os.path.dirname(os.path.dirname(found)), "numerics", "libkeel_math.so")
    with tempfile.TemporaryDirectory() as work:
        run_extra = [e for e in extra if e != "--keel-math"]
        expected = oracle(keel, source, entry, args, bindings, run_extra, work)
        got = through_linalg(keel, source, entry, args, bindings, extra, keel_math_lib, work)
    problems, largest = compare(expected, got, ulps, ulp_results, names)
    return problems, largest, len(expected)


def command_line(check_function, tools_missing, keel_math=True):
    """The command line of an exit's checker (this one's, stablehlo_check.py's):
    the exit status."""
    parser = argparse.ArgumentParser()
    parser.add_argument("keel")
    parser.add_argument("source")
    parser.add_argument("--entry", required=True)
    parser.add_argument("--arg", action="append", default=[])
    parser.add_argument("--bind", default="")
    parser.add_argument("--no-fuse", action="store_true")
    parser.add_argument("--grad", default="", help="the value and these gradients (keel run --grad P,...)")
    if keel_math:
        parser.add_argument("--keel-math", action="store_true")
    parser.add_argument("--ulps", type=int, default=0)
    o = parser.parse_args()
    missing = tools_missing()
    if missing:
        print(f"unsupported: {missing}")
        return 0
    extra = (["--no-fuse"] if o.no_fuse else []) + (["--keel-math"] if keel_math and o.keel_math else []) + \
        (["--grad", o.grad] if o.grad else [])
    try:
        problems, largest, count = check_function(o.keel, o.source, o.entry, o.arg, o.bind, extra, o.ulps)
    except RuntimeError as e:
        print(f"error: {e}")
        return 1
    if problems:
        print("\n".join(problems))
        return 1
    print(f"ok: {count} results equal" + (f" (largest difference {max(largest.values(), default=0)} ulp)" if o.ulps else ""))
    return 0


def main():
    return command_line(check, mlir_tools_missing)


if __name__ == "__main__":
    sys.exit(main())
