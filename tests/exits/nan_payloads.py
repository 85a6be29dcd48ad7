"""NaN payloads through every float conversion, on the CPU and both MLIR exits.

Keel's contract (docs/numerics.md, rule 4): a conversion of a NaN gives the
destination's canonical NaN with the NaN's sign, whatever its payload, for
every destination (f32 and f64 included). MLIR's `arith.extf`/`truncf` and
StableHLO's `convert` leave the payload to the target, so the exits write
the canonical NaN themselves. This builds one function converting
signalling, quiet and all-ones NaNs of both signs from each float format to
every other, runs it through `keel run` (the CPU exit, and --exit reference), the linalg exit
(mlir-runner) and the StableHLO exit (the pinned interpreter), and compares
every result's encodings with the canonical NaNs of docs/numerics.md's
table, written out here.

usage: nan_payloads.py KEEL WORK [--exit cpu|reference|linalg|stablehlo]
prints `NAME: N conversions canonical` or the first differences (exit 1)."""
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import linalg_check  # noqa: E402
import stablehlo_check  # noqa: E402

# Each format's canonical NaN (+, -): docs/numerics.md's format table.
CANONICAL = {
    "f16": (0x7E00, 0xFE00), "bf16": (0x7FC0, 0xFFC0), "tf32": (0x7FC00000, 0xFFC00000),
    "fp8e5m2": (0x7E, 0xFE), "fp8e4m3fn": (0x7F, 0xFF), "f32": (0x7FC00000, 0xFFC00000),
    "f64": (0x7FF8000000000000, 0xFFF8000000000000),
}
DIGITS = {"f16": 4, "bf16": 4, "tf32": 8, "fp8e5m2": 2, "fp8e4m3fn": 2, "f32": 8, "f64": 16}
# NaNs that are not canonical, each with its sign: the smallest payload (a
# signalling NaN), a quiet one with a payload, all ones; fp8e4m3fn has one
# NaN per sign; tf32 payloads keep the carrier's low 13 bits zero.
PAYLOADS = {
    "f16": [(0x7C01, 0), (0xFE01, 1), (0x7FFF, 0), (0xFFFF, 1)],
    "bf16": [(0x7F81, 0), (0xFFC1, 1), (0x7FFF, 0), (0xFFFF, 1)],
    "tf32": [(0x7F802000, 0), (0xFFC02000, 1), (0x7FFFE000, 0), (0xFFFFE000, 1)],
    "fp8e5m2": [(0x7D, 0), (0xFD, 1), (0x7F, 0), (0xFF, 1)],
    "fp8e4m3fn": [(0x7F, 0), (0xFF, 1)],
    "f32": [(0x7F800001, 0), (0xFFC12345, 1), (0x7FFFFFFF, 0), (0xFFFFFFFF, 1)],
    "f64": [(0x7FF0000000000001, 0), (0xFFF8000000000123, 1), (0x7FFFFFFFFFFFFFFF, 0), (0xFFFFFFFFFFFFFFFF, 1)],
}


def build(formats):
    """The IR text, and each result's (dtype, expected encodings)."""
    lines, results, types, expected = [], [], [], []
    for src in formats:
        encodings = ", ".join(f"0x{e:0{DIGITS[src]}x}" for e, _ in PAYLOADS[src])
        n = len(PAYLOADS[src])
        lines.append(f"  %{src} = constant() {{value = [{encodings}]}} : {src}[{n}]")
        for dst in formats:
            if dst == src:
                continue
            lines.append(f"  %{src}_{dst} = convert(%{src}) : {dst}[{n}]")
            results.append(f"%{src}_{dst}")
            types.append(f"{dst}[{n}]")
            expected.append((f"{src} -> {dst}", dst, [CANONICAL[dst][sign] for _, sign in PAYLOADS[src]]))
    text = (f"func @nans() -> ({', '.join(types)}) ![gpu] {{\n" + "\n".join(lines) +
            f"\n  return {', '.join(results)}\n}}\n")
    return text, expected


def run(keel, work, exit_name):
    # StableHLO has no tf32 tensors outside a contraction's operands.
    formats = [f for f in CANONICAL if exit_name != "stablehlo" or f != "tf32"]
    text, expected = build(formats)
    source = os.path.join(work, f"nans-{exit_name}.kir")
    with open(source, "w") as f:
        f.write(text)
    with tempfile.TemporaryDirectory(dir=work) as scratch:
        if exit_name in ("cpu", "reference"):
            extra = ["--exit", "reference"] if exit_name == "reference" else []
            got = [bits for _, bits in linalg_check.oracle(keel, source, "nans", [], "", extra, scratch)]
        elif exit_name == "linalg":
            got = linalg_check.through_linalg(keel, source, "nans", [], "", [], None, scratch)
        else:
            shapes = [(dst, None) for _, dst, _ in expected]
            got = stablehlo_check.through_stablehlo(keel, source, "nans", [], "", [], shapes, scratch)
    if len(got) != len(expected):
        return [f"{len(expected)} results expected, {len(got)} given"], len(expected)
    problems = [f"{what}: {[hex(v) for v in bits]}, expected {[hex(v) for v in want]}"
                for (what, _, want), bits in zip(expected, got) if list(bits) != want]
    return problems, len(expected)


def main():
    keel, work = sys.argv[1], sys.argv[2]
    exit_name = sys.argv[sys.argv.index("--exit") + 1] if "--exit" in sys.argv else "cpu"
    missing = {"cpu": None, "reference": None, "linalg": linalg_check.mlir_tools_missing(),
               "stablehlo": stablehlo_check.tools_missing()}[exit_name]
    if missing:
        print(f"unsupported: {missing}")
        return 0
    try:
        problems, count = run(keel, work, exit_name)
    except RuntimeError as e:
        print(f"error: {e}")
        return 1
    if problems:
        print("\n".join(problems[:20]))
        return 1
    print(f"{exit_name}: {count} conversions canonical")
    return 0


if __name__ == "__main__":
    sys.exit(main())
