"""docs/language.md against the one table of built-ins and against keel.

    language_check.py KEEL BUILTINS.DEF MATHFUNCTIONS.DEF LANGUAGE.MD WORKDIR

(Builtins.def makes one row of each math function of MathFunctions.def,
read here the same way.)

Fails (printing why) unless:
  * the built-in table in language.md has exactly one row per row of
    Builtins.def, with the table's signature, the element types its
    `Dtypes` column admits and its summary;
  * every built-in is used in at least one example;
  * every ```sfn example checks and runs with `keel run`, fused, unfused and
    through --exit reference with the same bytes, and prints exactly its
    ```output block when it has one.
"""
import os
import re
import subprocess
import sys

# Admits (include/keel/sema/Builtins.h) as the page words it.
ADMITS = {
    "FloatMath": "floating-point elements",
    "SignedMath": "floating-point or signed integer elements",
    "IntegerBits": "integer elements",
    "Arithmetic": "numeric elements (not bool)",
    "Reduce": "numeric elements (not bool)",
    "ReduceLogic": "bool elements",
    "Any": "elements of every type",
}


def read_rows(path, macro, pattern, row):
    """row(match) for each line of a .def file that is a `macro(` row."""
    rows = []
    with open(path) as f:
        for line in f:
            if line.startswith(macro + "("):
                m = re.match(pattern, line.strip())
                if not m:
                    sys.exit(f"language_check: cannot read {line.strip()}")
                rows.append(row(m))
    return rows


def table_rows(path):
    return read_rows(path, "KEEL_BUILTIN",
                     r'^KEEL_BUILTIN\((\w+), "([^"]+)", (\w+), (\w+), (.+?), "([^"]*)", "([^"]*)", "([^"]*)"\)$',
                     lambda m: {"id": m[1], "name": m[2], "dtypes": m[4], "signature": m[7], "summary": m[8]})


def math_rows(path):
    """Builtins.def's rows of the math functions: KEEL_MATH_FUNCTION(Enum,
    name, "mlir", "stablehlo", "summary") is a Unary, FloatMath built-in
    `name(x: T) -> T`."""
    return read_rows(path, "KEEL_MATH_FUNCTION", r'^KEEL_MATH_FUNCTION\((\w+), (\w+), "([^"]*)", "([^"]*)", "([^"]*)"\)$',
                     lambda m: {"id": m[1], "name": m[2], "dtypes": "FloatMath", "signature": f"{m[2]}(x: T) -> T",
                                "summary": m[5]})


def doc_rows(text):
    rows = []
    for line in text.splitlines():
        m = re.match(r"^\| `(.+)` \| (.+) \| (.+) \|$", line)
        if m:
            unescape = lambda s: s.replace("\\|", "|")
            rows.append((unescape(m[1]), m[2], unescape(m[3])))
    return rows


def examples(text):
    """(source, expected output or None) for each ```sfn block."""
    out = []
    blocks = re.findall(r"```(\w*)\n(.*?)```", text, re.S)
    for i, (kind, body) in enumerate(blocks):
        if kind == "sfn":
            expected = blocks[i + 1][1] if i + 1 < len(blocks) and blocks[i + 1][0] == "output" else None
            out.append((body, expected))
    return out


def main():
    keel, table, math, page, work = sys.argv[1:6]
    rows = math_rows(math) + table_rows(table)
    with open(page) as f:
        text = f.read()
    problems = []
    documented = doc_rows(text)
    for r in rows:
        want = (r["signature"], ADMITS[r["dtypes"]], r["summary"])
        if documented.count(want) != 1:
            problems.append(f"built-in {r['id']} ({r['name']}) is not documented as: | `{want[0]}` | {want[1]} | {want[2]} |")
    for d in documented:
        if d[0] not in [r["signature"] for r in rows]:
            problems.append(f"language.md documents `{d[0]}`, which is no row of the table")
    blocks = examples(text)
    for r in rows:
        if not any(re.search(r"\b" + re.escape(r["name"]) + r"\(", b) for b, _ in blocks):
            problems.append(f"no example uses `{r['name']}`")
    os.makedirs(work, exist_ok=True)
    for n, (source, expected) in enumerate(blocks):
        path = os.path.join(work, f"example{n}.sfn")
        with open(path, "w") as f:
            f.write(source)
        runs = []
        for extra in ([], ["--exit", "reference"], ["--no-fuse"]):
            runs.append(subprocess.run([keel, "run", path, *extra], capture_output=True, text=True))
        if runs[0].returncode != 0:
            problems.append(f"example {n} fails: {runs[0].stderr.strip()}\n{source}")
            continue
        if any(r.stdout != runs[0].stdout or r.returncode != 0 for r in runs[1:]):
            problems.append(f"example {n}: fused, unfused and --exit reference runs differ")
        if expected is not None and runs[0].stdout != expected:
            problems.append(f"example {n} printed\n{runs[0].stdout}instead of\n{expected}")
    for p in problems:
        print("language.md:", p)
    print(f"{len(rows)} built-ins, {len(blocks)} examples, {len(problems)} problems")
    sys.exit(1 if problems else 0)


main()
