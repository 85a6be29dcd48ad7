"""Every tensor IR operation on every dtype it admits, through an exit and
through `keel run`, compared bit for bit (NaNs as NaNs): the MLIR linalg
exit (mlir-opt, mlir-runner; linalg_check.py), or with --exit stablehlo the
StableHLO exit (the pinned stablehlo-opt and stablehlo-translate's
interpreter; stablehlo_check.py), which has no tf32 tensors outside
contractions: its tf32 contraction is a group of its own (`tf32`).

The inputs are written here as .npy files: for each float format its
special encodings (zeros, the smallest and largest subnormals, the smallest
normal, one, the largest finite, infinities, NaN; every encoding of the two
fp8 formats) and random encodings of every exponent; for each integer type
MIN, MAX, 0, +-1, MIN / -1 and division by zero, and random values. The
programs are tensor IR text generated here, one module per group, each
returning every result.

With `math` dialect transcendentals (the default) exp, log, tanh, sigmoid,
silu, gelu, rsqrt, sin, cos and pow are the host library's: they are allowed ULPS
units in the last place (per dtype) (NaN, infinity and sign must agree); with
--keel-math every result is exact. Through StableHLO they are the
interpreter's (gelu and silu: the exit's decompositions), allowed
STABLEHLO_ULPS.

The structure group reshapes each input to [n/4, 4] and applies every
reduction combiner with every accumulator the dtype admits (along each
axis), argmax/argmin, a contraction per accumulator, and every index map,
copy, relayout and iota.

usage: exit_ops.py KEEL WORKDIR [--exit linalg|stablehlo] [--keel-math]
                   [--groups elementwise,compare,convert,structure,tf32]"""
import os
import random
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import linalg_check  # noqa: E402
import stablehlo_check  # noqa: E402

# Bounds for `math` dialect transcendentals against Keel's: f64 results
# are the host's f64 functions (glibc: a few ulps, Keel's own up to 3.93),
# the rest are f64 or f32 evaluations rounded once to a narrower format.
ULPS = {"f64": 8, "f32": 4, "tf32": 1, "f16": 1, "bf16": 1, "fp8e4m3fn": 1, "fp8e5m2": 1}
FLOATS = ["f16", "bf16", "tf32", "fp8e4m3fn", "fp8e5m2", "f32", "f64"]
SIGNED = ["i4", "i8", "i16", "i32", "i64"]
UNSIGNED = ["u8", "u16", "u32", "u64"]
DTYPES = ["pred"] + SIGNED + UNSIGNED + FLOATS
BITS = {"pred": 1, "i4": 4, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64}
# Through StableHLO: the interpreter's f32 and f64 functions (the C++
# library's), and the exit's compositions (sigmoid, silu, gelu), whose
# errors docs/exits.md states: gelu within 6 ulp in f32, and in f64 only to
# its erfc approximation's relative 2.1e-7 (2^30 ulp).
STABLEHLO_ULPS = {"f64": 8, "f32": 4, "f16": 1, "bf16": 1, "fp8e4m3fn": 1, "fp8e5m2": 1}
STABLEHLO_GELU_ULPS = {"f32": 8, "f64": 1 << 30}


def stablehlo_ulps(label, dtype):
    if label.startswith("gelu ") and dtype in STABLEHLO_GELU_ULPS:
        return STABLEHLO_GELU_ULPS[dtype]
    return STABLEHLO_ULPS.get(dtype, 0)
TRANSCENDENTAL = {"exp", "log", "tanh", "sigmoid", "silu", "gelu", "rsqrt", "pow", "sin", "cos"}

rng = random.Random(20261130)


def float_encodings(name):
    """Special and random encodings of a float format, in its storage."""
    if name.startswith("fp8"):
        return list(range(256))
    e, m, storage, _ = linalg_check.FORMATS[name]
    shift = 0
    if name == "tf32":
        m, storage, shift = 10, 19, 13  # its 19 bits, in the top of an f32 carrier
    sign = 1 << (storage - 1)
    bias = (1 << (e - 1)) - 1
    inf = ((1 << e) - 1) << m
    specials = [0, 1, (1 << m) - 1, 1 << m, bias << m, (bias << m) | 1, inf - 1, inf, inf | (1 << (m - 1)), inf | 1]
    values = specials + [s | sign for s in specials]
    values += [rng.getrandbits(storage) for _ in range(48)]
    # Values of ordinary size too: random fractions near 1 and 100.
    for exponent in (bias - 3, bias, bias + 1, bias + 6):
        values += [(exponent << m) | rng.getrandbits(m) | (sign if rng.random() < 0.5 else 0) for _ in range(6)]
    return [v << shift for v in values]


def integer_values(name):
    bits = BITS[name]
    if name == "pred":
        return [0, 1, 1, 0, 1, 1, 0, 0]
    if name == "i4":
        return list(range(-8, 8))
    if name.startswith("i"):
        lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        return [lo, lo, hi, 0, 1, -1, 7, -7, 100 % (hi + 1)] + [rng.randint(lo, hi) for _ in range(39)]
    hi = (1 << bits) - 1
    return [0, hi, 1, 7, 255 % (hi + 1)] + [rng.randint(0, hi) for _ in range(43)]


def divisors(name, a):
    """b for a: a rotation of a, with MIN / -1 and x / 0 among the pairs."""
    b = a[3:] + a[:3]
    if name.startswith("i") and name != "i4":
        b[0], b[1] = -1, 0  # a[0] and a[1] are MIN
    if name == "i4":
        b[0], b[1] = -1, 0  # a[0] is -8
    if name.startswith("u"):
        b[0] = 0
    return b


NUMPY = {"pred": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "u8": np.uint8,
         "u16": np.uint16, "u32": np.uint32, "u64": np.uint64, "f16": np.uint16, "f32": np.uint32, "f64": np.uint64}
STRUCTURED = {"bf16": "<u2", "tf32": "<u4", "fp8e4m3fn": "|u1", "fp8e5m2": "|u1", "i4": "|i1"}


def save(path, name, values):
    if name in STRUCTURED:
        a = np.zeros(len(values), dtype=[(name, STRUCTURED[name])])
        a[name] = values
    elif name in ("f16", "f32", "f64"):
        a = np.array(values, dtype=NUMPY[name]).view({"f16": np.float16, "f32": np.float32, "f64": np.float64}[name])
    else:
        a = np.array(values, dtype=NUMPY[name])
    np.save(path, a)


def accumulators(t):
    """The accumulator dtypes t admits (SFEP-0054 §3.6; support/ElementType.h)."""
    if t in ("f16", "bf16", "tf32", "fp8e4m3fn", "fp8e5m2"):
        return ["f32", "f64"]
    if t == "pred":
        return ["pred"]
    if t in ("f32", "f64"):
        return [a for a in ("f32", "f64") if BITS_FLOAT[a] >= BITS_FLOAT[t]]
    family = SIGNED if t in SIGNED else UNSIGNED
    return [a for a in family if BITS[a] >= BITS[t]]


BITS_FLOAT = {"f32": 32, "f64": 64}


def legal_unary(code, t):
    if code == "neg":
        return t != "pred"
    if code in ("abs", "relu"):
        return t in FLOATS or t in SIGNED
    if code == "not":
        return t not in FLOATS
    return t in FLOATS


def legal_binary(code, t):
    if code in ("add", "sub", "mul", "div", "min", "max"):
        return t != "pred"
    if code == "rem":
        return t in SIGNED or t in UNSIGNED or t in ("f32", "f64")
    if code == "pow":
        return t in FLOATS
    return t not in FLOATS


class Program:
    def __init__(self, inputs):
        self.params = []  # (name, dtype, length)
        self.lines, self.results, self.names, self.tolerant = [], [], [], set()
        self.count = 0
        for t, n in inputs:
            self.params.append((f"%a_{t}", t, n))
            self.params.append((f"%b_{t}", t, n))

    def add(self, text, type_text, name, tolerant=False):
        v = f"%r{self.count}"
        self.count += 1
        self.lines.append(f"  {v} = {text} : {type_text}")
        return v

    def result(self, v, name, tolerant=False):
        if tolerant:
            self.tolerant.add(len(self.results))
        self.results.append(v)
        self.names.append(name)

    def text(self, types):
        params = ", ".join(f"{p}: {t}[{n}]" for p, t, n in self.params)
        returns = ", ".join(types)
        return (f"func @all({params}) -> ({returns}) ![gpu] {{\n" + "\n".join(self.lines) +
                f"\n  return {', '.join(self.results)}\n}}\n")


def build(group, lengths, dtypes, stablehlo=False):
    if group == "tf32":  # f32 rounded to tf32, contracted with an f32 and an f64 accumulator
        n = lengths["f32"]
        rows = n // 4
        p = Program([("f32", n)])
        x = p.add("reshape(%a_f32)", f"f32[{rows},4]", "reshape")
        y = p.add("reshape(%b_f32)", f"f32[{rows},4]", "reshape")
        x = p.add(f"convert({x})", f"tf32[{rows},4]", "convert")
        y = p.add(f"convert({y})", f"tf32[{rows},4]", "convert")
        types = []
        for acc in ("f32", "f64"):
            d = p.add(f"dot_general({x}, {y}) {{lhs_batch = [], rhs_batch = [], lhs_contract = [1], "
                      f"rhs_contract = [1], acc = {acc}}}", f"f32[{rows},{rows}]", "dot")
            p.result(d, f"dot tf32 acc {acc}")
            types.append(f"f32[{rows},{rows}]")
        return p.text(types), p.names, p.tolerant, p.params
    p = Program([(t, lengths[t]) for t in dtypes])
    types = []
    for t in dtypes:
        n = lengths[t]
        ty = f"{t}[{n}]"
        if group == "elementwise":
            for code in ("neg", "abs", "exp", "log", "tanh", "sigmoid", "gelu", "silu", "sqrt", "rsqrt", "sin", "cos",
                         "relu", "not"):
                if legal_unary(code, t):
                    p.result(p.add(f"unary.{code}(%a_{t})", ty, code), f"{code} {t}", code in TRANSCENDENTAL)
                    types.append(ty)
            for code in ("add", "sub", "mul", "div", "rem", "pow", "min", "max", "and", "or", "xor"):
                if legal_binary(code, t):
                    p.result(p.add(f"binary.{code}(%a_{t}, %b_{t})", ty, code), f"{code} {t}", code in TRANSCENDENTAL)
                    types.append(ty)
        elif group == "compare":
            for d in ("eq", "ne", "lt", "le", "gt", "ge"):
                p.result(p.add(f"compare.{d}(%a_{t}, %b_{t})", f"pred[{n}]", d), f"{d} {t}")
                types.append(f"pred[{n}]")
            c = p.add(f"compare.lt(%a_{t}, %b_{t})", f"pred[{n}]", "lt")
            p.result(p.add(f"select({c}, %a_{t}, %b_{t})", ty, "select"), f"select {t}")
            types.append(ty)
        elif group == "structure":
            # Each dtype as [n/4, 4]: reductions with every combiner and
            # accumulator it admits, contractions, and the index maps.
            rows = n // 4
            m = f"{t}[{rows},4]"
            x = p.add(f"reshape(%a_{t})", m, "reshape")
            y = p.add(f"reshape(%b_{t})", m, "reshape")
            p.result(x, f"reshape {t}")
            types.append(m)
            combiners = ["and", "or"] if t == "pred" else ["sum", "prod", "max", "min"]
            for comb in combiners:
                for acc in accumulators(t):
                    for axis, shape in ((1, f"[{rows}]"), (0, "[4]")):
                        p.result(p.add(f"reduce.{comb}({x}) {{axes = [{axis}], acc = {acc}}}", f"{t}{shape}", comb),
                                 f"reduce.{comb} {t} acc {acc} axis {axis}")
                        types.append(f"{t}{shape}")
            if t != "pred":
                for comb in ("argmax", "argmin"):
                    acc = accumulators(t)[0]
                    p.result(p.add(f"reduce.{comb}({x}) {{axes = [1], acc = {acc}}}", f"i64[{rows}]", comb), f"{comb} {t}")
                    types.append(f"i64[{rows}]")
                for acc in accumulators(t):
                    p.result(p.add(f"dot_general({x}, {y}) {{lhs_batch = [], rhs_batch = [], lhs_contract = [1], "
                                   f"rhs_contract = [1], acc = {acc}}}", f"{t}[{rows},{rows}]", "dot"), f"dot {t} acc {acc}")
                    types.append(f"{t}[{rows},{rows}]")
            for text, type_text, name in (
                    (f"transpose({x}) {{perm = [1, 0]}}", f"{t}[4,{rows}]", "transpose"),
                    (f"broadcast_in_dim({x}) {{dims = [0, 2]}}", f"{t}[{rows},3,4]", "broadcast"),
                    (f"slice({x}) {{start = [1, 1], limit = [{rows}, 3]}}", f"{t}[{rows - 1},2]", "slice"),
                    (f"concatenate({x}, {y}) {{axis = 1}}", f"{t}[{rows},8]", "concatenate"),
                    (f"copy({x})", m, "copy"), (f"relayout({x})", f"{t}[{rows},4]{{0,1}}", "relayout")):
                v = p.add(text, type_text, name)
                if stablehlo and name == "relayout":  # its entry returns row-major tensors only
                    v, type_text = p.add(f"relayout({v})", m, name), m
                p.result(v, f"{name} {t}")
                types.append(type_text)
            if t != "pred":
                p.result(p.add("iota() {axis = 1}", m, "iota"), f"iota {t}")
                types.append(m)
        elif group == "convert":
            for to in dtypes:
                if to != t:
                    p.result(p.add(f"convert(%a_{t})", f"{to}[{n}]", "convert"), f"convert {t} -> {to}")
                    types.append(f"{to}[{n}]")
    return p.text(types), p.names, p.tolerant, p.params


def main():
    keel, work = sys.argv[1], sys.argv[2]
    keel_math = "--keel-math" in sys.argv
    exit_name = sys.argv[sys.argv.index("--exit") + 1] if "--exit" in sys.argv else "linalg"
    stablehlo = exit_name == "stablehlo"
    groups = ["elementwise", "compare", "convert", "structure"] + (["tf32"] if stablehlo else [])
    if "--groups" in sys.argv:
        groups = sys.argv[sys.argv.index("--groups") + 1].split(",")
    dtypes = [t for t in DTYPES if not (stablehlo and t == "tf32")]
    missing = stablehlo_check.tools_missing() if stablehlo else linalg_check.mlir_tools_missing()
    if missing:
        print(f"unsupported: {missing}")
        return 0
    os.makedirs(work, exist_ok=True)
    values = {t: (float_encodings(t) if t in FLOATS else integer_values(t)) for t in DTYPES}
    lengths = {t: len(v) for t, v in values.items()}
    for t in DTYPES:
        for which, v in (("a", values[t]), ("b", divisors(t, values[t]))):
            save(os.path.join(work, f"{which}_{t}.npy"), t, v)
    failed = 0
    for group in groups:
        text, names, tolerant, params = build(group, lengths, dtypes, stablehlo)
        args = [f"{i}={os.path.join(work, name[1] + '_' + t + '.npy')}" for i, (name, t, _) in enumerate(params)]
        source = os.path.join(work, f"{group}.kir")
        with open(source, "w") as f:
            f.write(text)
        extra = ["--keel-math"] if keel_math else []
        ulps = stablehlo_ulps if stablehlo else 0 if keel_math else ULPS
        try:
            if stablehlo:
                problems, largest, count = stablehlo_check.check(keel, source, "all", args, "", [], ulps, tolerant, names)
            else:
                problems, largest, count = linalg_check.check(keel, source, "all", args, "", extra, ulps, tolerant,
                                                              names)
        except RuntimeError as e:
            print(f"{group}: error: {e}")
            failed += 1
            continue
        if problems:
            failed += 1
            print(f"{group}: {len(problems)} results differ:\n  " + "\n  ".join(problems))
        else:
            worst = ", ".join(f"{t} {largest.get(t, 0)}" for t in FLOATS)
            note = "" if keel_math else f", transcendentals within {max(largest.values(), default=0)} ulp ({worst})"
            if stablehlo:
                note = f", transcendentals within {largest.get('f32', 0)} ulp in f32"
            print(f"{group}: {count} results equal{note}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
