"""Runs a tensor function through the StableHLO exit and through the CPU
oracle, and compares their results bit for bit.

The exit's side, with the pinned StableHLO 1.13.8 tools
(scripts/stablehlo-tools.sh; found through KEEL_STABLEHLO_BIN, else PATH):
`keel emit --stablehlo` must verify with `stablehlo-opt` and serialize with
`stablehlo-translate --serialize --target=1.13.0`, and the portable
artifact must read back; then `keel emit --stablehlo --main` (its @main
calls the entry on the same arguments as `keel run` and returns the
results' encodings) runs in `stablehlo-translate --interpret`. The
oracle's side: `keel run --entry ... --out DIR`. Encodings must be equal
(NaNs as NaNs); with `ulps`, float results listed as tolerant may differ by
that many units in the last place (transcendentals are the consumer's;
gelu and silu are decompositions), with NaN, infinity and sign agreeing.

usage (also a module for exit_ops.py and the lit tests):
  stablehlo_check.py KEEL FILE --entry F [--arg NAME=SPEC]... [--bind N=4]
                     [--no-fuse] [--ulps N]
prints `ok: N results equal` or the first differences, and exits 1 then."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import linalg_check  # noqa: E402

BITS = {"pred": 1, "i4": 4, "i8": 8, "i16": 16, "i32": 32, "i64": 64, "u8": 8, "u16": 16, "u32": 32, "u64": 64,
        "f16": 16, "bf16": 16, "fp8e4m3fn": 8, "fp8e5m2": 8, "f32": 32, "f64": 64, "tf32": 32}


def tool(name):
    """The path of a pinned StableHLO tool, or None."""
    bin_dir = os.environ.get("KEEL_STABLEHLO_BIN")
    if bin_dir:
        path = os.path.join(bin_dir, name)
        return path if os.access(path, os.X_OK) else None
    return shutil.which(name)


def tools_missing():
    """Why the pinned StableHLO tools cannot run here, or None."""
    for name in ("stablehlo-opt", "stablehlo-translate"):
        if tool(name) is None:
            where = os.environ.get("KEEL_STABLEHLO_BIN") or "PATH"
            return (f"no {name} in {where} (build StableHLO 1.13.8's with scripts/stablehlo-tools.sh and set "
                    "KEEL_STABLEHLO_BIN)")
    return None


def run_tool(command, what):
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        raise RuntimeError(f"{what} exited {run.returncode}: {run.stderr[-3000:]}")
    return run.stdout


def validate(module_path, work):
    """stablehlo-opt verifies the module; it serializes to a 1.13.0 portable
    artifact, which reads back and verifies again."""
    run_tool([tool("stablehlo-opt"), module_path], "stablehlo-opt")
    artifact = os.path.join(work, "artifact.mlirbc")
    run_tool([tool("stablehlo-translate"), "--serialize", "--target=1.13.0", module_path, "-o", artifact],
             "stablehlo-translate --serialize --target=1.13.0")
    back = run_tool([tool("stablehlo-translate"), "--deserialize", artifact], "stablehlo-translate --deserialize")
    restored = os.path.join(work, "restored.mlir")
    with open(restored, "w") as f:
        f.write(back)
    run_tool([tool("stablehlo-opt"), restored], "stablehlo-opt on the deserialized artifact")


DENSE = re.compile(r"dense<(.*)>\s*:\s*tensor<([0-9x]*)([a-zA-Z0-9]+)>")


def parse_dense(line, dtype):
    """The encodings of one `dense<...> : tensor<...>` line of
    --interpreter-print-dense (a splat is one value)."""
    m = DENSE.match(line.strip())
    if not m:
        raise RuntimeError(f"unexpected interpreter output: {line[:200]}")
    body, shape = m.group(1), [int(d) for d in m.group(2).split("x") if d]
    count = 1
    for d in shape:
        count *= d
    if body.startswith('"0x'):  # a large tensor: its little-endian bytes (i1: bits, packed eight to a byte)
        raw = bytes.fromhex(body[3:-1])
        if len(raw) * 8 == count:
            values = [(raw[i // 8] >> (i % 8)) & 1 for i in range(count)]
        else:
            width = len(raw) // count
            values = [int.from_bytes(raw[i * width:(i + 1) * width], "little") for i in range(count)]
    else:
        values = [1 if v == "true" else 0 if v == "false" else int(v)
                  for v in re.findall(r"true|false|-?[0-9]+", body)]
    if len(values) == 1 and count != 1:
        values *= count
    mask = (1 << BITS[dtype]) - 1
    return [v & mask for v in values]


def through_stablehlo(keel, source, entry, args, bindings, extra, expected, work):
    emit = linalg_check.keel_command([keel, "emit", "--stablehlo", source, "--entry", entry, *extra], [], bindings)
    module = os.path.join(work, entry + ".stablehlo.mlir")
    with open(module, "w") as f:
        f.write(emit.stdout)
    validate(module, work)
    emit = linalg_check.keel_command([keel, "emit", "--stablehlo", source, "--entry", entry, "--main", *extra], args,
                                     bindings)
    runnable = os.path.join(work, entry + ".main.mlir")
    with open(runnable, "w") as f:
        f.write(emit.stdout)
    out = run_tool([tool("stablehlo-translate"), "--interpret", "--interpreter-print-dense", runnable],
                   "stablehlo-translate --interpret")
    lines = [line for line in out.splitlines() if line.strip().startswith("dense<")]
    if len(lines) != len(expected):
        raise RuntimeError(f"{len(expected)} results from keel run, {len(lines)} from the interpreter")
    return [parse_dense(line, dtype) for line, (dtype, _) in zip(lines, expected)]


def check(keel, source, entry, args=(), bindings="", extra=(), ulps=0, ulp_results=None, names=None):
    """(problems, largest ulp distance by dtype, result count)."""
    with tempfile.TemporaryDirectory() as work:
        expected = linalg_check.oracle(keel, source, entry, args, bindings, list(extra), work)
        got = through_stablehlo(keel, source, entry, args, bindings, list(extra), expected, work)
    problems, largest = linalg_check.compare(expected, got, ulps, ulp_results, names, exit_name="StableHLO exit")
    return problems, largest, len(expected)


def main():
    return linalg_check.command_line(check, tools_missing, keel_math=False)


if __name__ == "__main__":
    sys.exit(main())
