#!/usr/bin/env python3
"""Shape-checking benchmark: a generated stack of transformer blocks of about
20,000 tensor operations with symbolic shapes (bench/gen_transformer_stack.py),
type-checked by `keel check --stats`. Prints the program's size, the
obligation counts, the share settled without Z3, and the wall time of the
best of three runs (target: under one second).

A second run checks a stack of 2,000 calls of examples/transformer.sfn's
transformer_block, where each call binds the callee's shape variables and
proves its requires clause (the solver's cache at work).

usage: bench/shape_check_bench.py [LAYERS]      (default 410, about 20,000 operations)
"""
import os
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
KEEL = os.path.join(ROOT, "build", "src", "driver", "keel")


def measure(generator_args) -> int:
    with tempfile.NamedTemporaryFile("w", suffix=".sfn", delete=False) as program:
        generated = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "gen_transformer_stack.py")]
                                   + generator_args, stdout=program, stderr=subprocess.PIPE, text=True, check=True)
    try:
        print(generated.stderr.strip())
        best, stats = None, ""
        for _ in range(3):
            start = time.perf_counter()
            run = subprocess.run([KEEL, "check", "--stats", program.name], capture_output=True, text=True)
            elapsed = time.perf_counter() - start
            if run.returncode != 0:
                print(run.stderr, file=sys.stderr)
                return 1
            if best is None or elapsed < best:
                best, stats = elapsed, run.stderr
        print(stats.strip())
        print(f"wall time (best of 3): {best:.3f} s (target: under 1 s)")
    finally:
        os.unlink(program.name)
    return 0


def main() -> int:
    if not os.access(KEEL, os.X_OK):
        print("shape_check_bench: build Keel first (bash scripts/setup.sh)", file=sys.stderr)
        return 2
    layers = sys.argv[1] if len(sys.argv) > 1 else "410"
    status = measure([layers])
    print()
    return status or measure(["--calls", "2000"])


if __name__ == "__main__":
    sys.exit(main())
