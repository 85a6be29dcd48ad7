"""Random straight-line tensor programs, fused vs unfused vs the reference.

    random_programs.py KEEL WORKDIR [SEED]

Writes modules of random functions over the tensor IR's operations and
dtypes (elementwise chains, values read several times, reductions and
contractions, broadcasts, transposes, slices, reshapes, converts, selects,
splat and dense constants, layout changes and copies), each run through
`keel run --entry` with random inputs three ways: fused (the default),
`--no-fuse` and `--exit reference`. Every output must be the same bytes.
With --threads, each runs instead through `--exit reference` and with
every operation's independent loops on threads (`--threaded-work=0`) at
1, 2, 3 and 4 threads: KEEL_THREADS_ITERATIONS modules (default 1).
KEEL_FUZZ_ITERATIONS sets the number of modules (default 20, ten functions
each); a failure names its module's seed, so that it can be replayed with
`random_programs.py KEEL DIR SEED`. Two programs run at a time.

    random_programs.py KEEL WORKDIR [SEED] --linalg
    random_programs.py KEEL WORKDIR [SEED] --stablehlo

runs each program instead through the MLIR linalg exit (with --keel-math,
lowered and run by MLIR's own tools: tests/exits/linalg_check.py) and
compares its results with `keel run`'s, bit for bit (NaNs as NaNs);
KEEL_LINALG_ITERATIONS modules (default 6). With --stablehlo, through the
StableHLO exit and the pinned StableHLO interpreter
(tests/exits/stablehlo_check.py), KEEL_STABLEHLO_ITERATIONS modules
(default 6): equal bit for bit but for exp, tanh and sigmoid (the
interpreter's own, a few ulps); a program with tf32 arithmetic must be
refused with E0915 instead.

    random_programs.py KEEL WORKDIR [SEED] --grad

puts a random scalar loss on each f32 and f64 program (loss_fN: the sum of
its first result times a random dense constant) and runs its value and
gradient with respect to every parameter (`keel run --grad`) fused,
unfused and through `--exit reference`: the gradient function must verify
and give the same bytes three ways, or be refused with E0600 for what
docs/autodiff.md refuses (a low-precision value on the path);
KEEL_GRAD_ITERATIONS modules (default 12).
"""
import concurrent.futures
import os
import random
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "exits"))
import linalg_check  # noqa: E402  (the linalg exit's comparison, for --linalg)
import stablehlo_check  # noqa: E402  (the StableHLO exit's, for --stablehlo)

FLOATS = ["f32", "f16", "bf16", "f64", "tf32", "fp8e4m3fn", "fp8e5m2"]
LOW_PRECISION = ["f16", "bf16", "tf32", "fp8e4m3fn", "fp8e5m2"]
INTS = ["i32", "i8", "u8", "i64"]
# 1.5 (floats) or 3 (integers) in each dtype, and the encoding width in hex digits.
SPLAT = {"f32": "0x3fc00000", "f64": "0x3ff8000000000000", "f16": "0x3e00", "bf16": "0x3fc0", "tf32": "0x3fc00000",
         "fp8e4m3fn": "0x3c", "fp8e5m2": "0x3e", "i32": "0x00000003", "i8": "0x03", "u8": "0x03",
         "i64": "0x0000000000000003"}
DIGITS = {"f32": 8, "f64": 16, "f16": 4, "bf16": 4, "tf32": 8, "fp8e4m3fn": 2, "fp8e5m2": 2, "i32": 8, "i8": 2,
          "u8": 2, "i64": 16}
SHAPE = (3, 4)


def ty(dtype, shape, layout=None):
    text = f"{dtype}[{','.join(map(str, shape))}]"
    return text + ("{" + ",".join(map(str, layout)) + "}" if layout else "")


class Function:
    def __init__(self, rng, name):
        self.rng, self.name = rng, name
        self.lines, self.values, self.params, self.n = [], [], [], 0
        self.dtype = rng.choice(FLOATS + INTS)
        for _ in range(rng.randint(1, 3)):
            v = self.fresh(self.dtype, SHAPE)
            self.params.append(v)

    def fresh(self, dtype, shape, layout=None):
        name = f"%v{self.n}"
        self.n += 1
        self.values.append((name, dtype, tuple(shape), layout))
        return self.values[-1]

    def pick(self, dtype=None, shape=None):
        pool = [v for v in self.values if (dtype is None or v[1] == dtype) and (shape is None or v[2] == shape)
                and v[3] is None]
        return self.rng.choice(pool) if pool else None

    def emit(self, text, dtype, shape, layout=None):
        v = self.fresh(dtype, shape, layout)
        self.lines.append(f"  {v[0]} = {text} : {ty(dtype, shape, layout)}")
        return v

    def step(self):
        r = self.rng
        a = self.pick(self.dtype, SHAPE)
        is_float = self.dtype in FLOATS
        kind = r.choice(["unary", "binary", "binary", "compare_select", "reduce_broadcast", "transpose_back",
                         "convert_back", "constant", "dense", "dot", "slice_concat", "reshape_back", "copy",
                         "relayout"])
        t = self.dtype
        if kind == "unary":
            op = r.choice(["exp", "tanh", "neg", "abs", "sigmoid", "relu"] if is_float
                          else ["not"] if t == "u8" else ["neg", "abs", "not"])
            return self.emit(f"unary.{op}({a[0]})", t, SHAPE)
        if kind == "binary":
            b = self.pick(t, SHAPE)
            op = r.choice(["add", "sub", "mul", "max", "min"] + (["div"] if is_float else ["and", "xor"]))
            return self.emit(f"binary.{op}({a[0]}, {b[0]})", t, SHAPE)
        if kind == "compare_select":
            b = self.pick(t, SHAPE)
            c = self.emit(f"compare.{r.choice(['lt', 'ge', 'eq'])}({a[0]}, {b[0]})", "pred", SHAPE)
            return self.emit(f"select({c[0]}, {a[0]}, {b[0]})", t, SHAPE)
        if kind == "reduce_broadcast":
            acc = "f32" if t in LOW_PRECISION else t
            comb = r.choice(["sum", "max", "min"])
            s = self.emit(f"reduce.{comb}({a[0]}) {{axes = [1], acc = {acc}}}", t, (SHAPE[0],))
            return self.emit(f"broadcast_in_dim({s[0]}) {{dims = [0]}}", t, SHAPE)
        if kind == "transpose_back":
            x = self.emit(f"transpose({a[0]}) {{perm = [1, 0]}}", t, SHAPE[::-1])
            return self.emit(f"transpose({x[0]}) {{perm = [1, 0]}}", t, SHAPE)
        if kind == "convert_back":
            other = r.choice([d for d in FLOATS + INTS if d != t])
            x = self.emit(f"convert({a[0]})", other, SHAPE)
            return self.emit(f"convert({x[0]})", t, SHAPE)
        if kind == "constant":
            c = self.emit(f"constant() {{value = [{SPLAT[t]}]}}", t, ())
            bc = self.emit(f"broadcast_in_dim({c[0]}) {{dims = []}}", t, SHAPE)
            return self.emit(f"binary.mul({a[0]}, {bc[0]})", t, SHAPE)
        if kind == "dense":
            width = DIGITS[t]
            mask = (0x3c3f3f3f3f3f3f3f >> (64 - 4 * width)) & (~0x1FFF if t == "tf32" else ~0)
            vals = ", ".join("0x" + format(r.getrandbits(4 * width) & mask, f"0{width}x")
                             for _ in range(SHAPE[0] * SHAPE[1]))
            c = self.emit(f"constant() {{value = [{vals}]}}", t, SHAPE)
            return self.emit(f"binary.add({a[0]}, {c[0]})", t, SHAPE)
        if kind == "dot":
            acc = "f32" if t in LOW_PRECISION else t
            b = self.pick(t, SHAPE)
            bt = self.emit(f"transpose({b[0]}) {{perm = [1, 0]}}", t, SHAPE[::-1])
            d = self.emit(f"dot_general({a[0]}, {bt[0]}) {{lhs_batch = [], rhs_batch = [], lhs_contract = [1], "
                          f"rhs_contract = [0], acc = {acc}}}", t, (SHAPE[0], SHAPE[0]))
            s = self.emit(f"slice({d[0]}) {{start = [0, 0], limit = [{SHAPE[0]}, 1]}}", t, (SHAPE[0], 1))
            return self.emit(f"broadcast_in_dim({s[0]}) {{dims = [0, 1]}}", t, SHAPE)
        if kind == "slice_concat":
            x = self.emit(f"slice({a[0]}) {{start = [0, 0], limit = [{SHAPE[0]}, 2]}}", t, (SHAPE[0], 2))
            y = self.emit(f"slice({a[0]}) {{start = [0, 2], limit = [{SHAPE[0]}, 4]}}", t, (SHAPE[0], 2))
            return self.emit(f"concatenate({y[0]}, {x[0]}) {{axis = 1}}", t, SHAPE)
        if kind == "reshape_back":
            x = self.emit(f"reshape({a[0]})", t, (SHAPE[0] * SHAPE[1],))
            return self.emit(f"reshape({x[0]})", t, SHAPE)
        if kind == "copy":
            return self.emit(f"copy({a[0]})", t, SHAPE)
        l = self.emit(f"relayout({a[0]})", t, SHAPE, (0, 1))
        n = self.emit(f"binary.add({l[0]}, {l[0]})", t, SHAPE, (0, 1))
        return self.emit(f"relayout({n[0]})", t, SHAPE)

    def text(self):
        for _ in range(self.rng.randint(2, 14)):
            self.step()
        results = [self.values[-1]]
        extra = self.pick(self.dtype, SHAPE)
        if self.rng.random() < 0.5 and extra not in results:
            results.append(extra)  # an intermediate returned too
        self.results = results
        params = ", ".join(f"{p[0]}: {ty(p[1], p[2])}" for p in self.params)
        rtypes = ", ".join(ty(v[1], v[2]) for v in results)
        head = f"func @{self.name}({params}) -> ({rtypes}) ![gpu] {{"
        return "\n".join([head] + self.lines + ["  return " + ", ".join(v[0] for v in results), "}"])


    def loss(self):
        """loss_NAME: sum(NAME(...)'s first result * a random dense constant), f32[] or f64[]."""
        t, r = self.dtype, self.rng
        params = ", ".join(f"{p[0]}: {ty(p[1], p[2])}" for p in self.params)
        results = ", ".join(f"%r{i}" for i in range(len(self.results)))
        rtypes = ", ".join(ty(v[1], v[2]) for v in self.results)
        weights = ", ".join(
            "0x" + format(int.from_bytes(__import__("struct").pack("<f" if t == "f32" else "<d", r.uniform(-2, 2)),
                                         "little"), f"0{DIGITS[t]}x") for _ in range(SHAPE[0] * SHAPE[1]))
        lines = [f"func @loss_{self.name}({params}) -> {t}[] ![gpu] {{",
                 f"  {results} = call @{self.name}({', '.join(p[0] for p in self.params)}) : {rtypes}",
                 f"  %w = constant() {{value = [{weights}]}} : {ty(t, SHAPE)}",
                 f"  %m = binary.mul(%r0, %w) : {ty(t, SHAPE)}",
                 f"  %l = reduce.sum(%m) {{axes = [0, 1], acc = {t}}} : {t}[]",
                 "  return %l", "}"]
        return "\n".join(lines)


def run(keel, path, entry, nparams, out, extra):
    """The files `keel run` writes into `out` (emptied first), or its error."""
    if os.path.isdir(out):
        for name in os.listdir(out):
            os.remove(os.path.join(out, name))
    command = [keel, "run", path, "--entry", entry, "--out", out, *extra]
    for i in range(nparams):
        command += ["--arg", f"{i}=random:{i + 11}"]
    r = subprocess.run(command, capture_output=True, text=True)
    if r.returncode != 0:
        return None, r.stderr
    data = {}
    for name in sorted(os.listdir(out)):
        with open(os.path.join(out, name), "rb") as f:
            data[name] = f.read()
    return data, None


VARIANTS = (("fused", []), ("unfused", ["--no-fuse"]), ("reference", ["--exit", "reference"]))
# --threads: every operation's independent loops on threads, at 1 to 4.
THREADED = (("reference", ["--exit", "reference"]),
            *((f"threads-{n}", ["--threaded-work=0", "--threads", str(n)]) for n in (1, 2, 3, 4)))


def check(keel, work, seed, path, fn, variants=VARIANTS):
    """The failure, or None."""
    results = []
    for tag, extra in variants:
        out = os.path.join(work, f"m{seed}.{fn.name}.{tag}")
        data, error = run(keel, path, fn.name, len(fn.params), out, extra)
        if error:
            return f"FAIL seed {seed} @{fn.name} ({tag}): {error.strip()}"
        results.append(data)
    if any(r != results[0] for r in results):
        return f"FAIL seed {seed} @{fn.name}: {', '.join(tag for tag, _ in variants)} outputs differ ({path})"
    return None


def check_linalg(keel, work, seed, path, fn):
    """The failure through the linalg exit, or None."""
    args = [f"{i}=random:{i + 11}" for i in range(len(fn.params))]
    try:
        problems, _, _ = linalg_check.check(keel, path, fn.name, args, "", ["--keel-math"])
    except RuntimeError as e:
        return f"FAIL seed {seed} @{fn.name} (linalg): {e}"
    return f"FAIL seed {seed} @{fn.name} (linalg): {problems[0]} ({path})" if problems else None


def check_stablehlo(keel, work, seed, path, fn):
    """The failure through the StableHLO exit, or None."""
    args = [f"{i}=random:{i + 11}" for i in range(len(fn.params))]
    transcendental = any(f"unary.{op}" in line for line in fn.lines for op in ("exp", "tanh", "sigmoid"))
    ulps = {"f64": 8, "f32": 4, "f16": 1, "bf16": 1, "fp8e4m3fn": 1, "fp8e5m2": 1} if transcendental else 0
    try:
        problems, _, _ = stablehlo_check.check(keel, path, fn.name, args, "", [], ulps)
    except RuntimeError as e:
        if "tf32" in fn.text() and "E0915" in str(e):
            return None  # tf32 outside a contraction: refused, as it must be
        return f"FAIL seed {seed} @{fn.name} (stablehlo): {e}"
    return f"FAIL seed {seed} @{fn.name} (stablehlo): {problems[0]} ({path})" if problems else None


GRADIENT_REFUSALS = ("gradients are carried in f32 and f64 only",)
REFUSED = []


def check_grad(keel, work, seed, path, fn):
    """The failure of loss_NAME's value and gradient, or None."""
    names = ",".join(p[0][1:] for p in fn.params)  # %v0 -> v0
    results = []
    for tag, extra in VARIANTS:
        out = os.path.join(work, f"m{seed}.{fn.name}.grad.{tag}")
        data, error = run(keel, path, "loss_" + fn.name, len(fn.params), out, ["--grad", names, *extra])
        if error:
            if "E0600" in error and any(r in error for r in GRADIENT_REFUSALS):
                REFUSED.append(fn.name)  # refused, as docs/autodiff.md says it must be
                return None
            return f"FAIL seed {seed} @loss_{fn.name} (gradient, {tag}): {error.strip()}"
        results.append(data)
    if any(r != results[0] for r in results):
        return f"FAIL seed {seed} @loss_{fn.name}: gradient outputs differ fused, unfused, reference ({path})"
    return None


def main():
    grad = "--grad" in sys.argv
    linalg = "--linalg" in sys.argv
    stablehlo = "--stablehlo" in sys.argv
    threads = "--threads" in sys.argv
    argv = [a for a in sys.argv if a not in ("--linalg", "--stablehlo", "--threads", "--grad")]
    keel, work = argv[1], argv[2]
    variable, default = (("KEEL_LINALG_ITERATIONS", "6") if linalg else ("KEEL_STABLEHLO_ITERATIONS", "6") if stablehlo
                         else ("KEEL_THREADS_ITERATIONS", "1") if threads else ("KEEL_GRAD_ITERATIONS", "12") if grad
                         else ("KEEL_FUZZ_ITERATIONS", "20"))
    seeds = [int(argv[3])] if len(argv) > 3 else range(int(os.environ.get(variable, default)))
    os.makedirs(work, exist_ok=True)
    jobs = []
    for seed in seeds:
        rng = random.Random(seed)
        functions = [Function(rng, f"f{i}") for i in range(10)]
        path = os.path.join(work, f"module{seed}.kir")
        texts = [fn.text() for fn in functions]
        if grad:
            functions = [fn for fn in functions if fn.dtype in ("f32", "f64")]
            texts += [fn.loss() for fn in functions]
        with open(path, "w") as f:
            f.write("\n\n".join(texts) + "\n")
        jobs += [(seed, path, fn) for fn in functions]
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        def one(job):
            if linalg:
                return check_linalg(keel, work, *job)
            if stablehlo:
                return check_stablehlo(keel, work, *job)
            if grad:
                return check_grad(keel, work, *job)
            return check(keel, work, *job, variants=THREADED if threads else VARIANTS)
        failures = [f for f in pool.map(one, jobs) if f]
    for f in failures:
        print(f)
    if grad:
        print(f"{len(REFUSED)} gradients refused with E0600 (a low-precision value on the path)")
    print(f"{len(jobs)} programs, {len(failures)} failed")
    sys.exit(1 if failures else 0)


main()
