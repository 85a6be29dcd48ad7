"""Compile time (issue 26): `keel run` end to end on the shipped examples and
on a program of 20,000 one-line functions of which main calls one, with a
cold compile cache (a fresh, empty directory: every module compiled and
stored) and a warm one (the same program run before: its machine code
loaded), each the median of 5 runs, against the process's own floor
(`keel --version`: starting the executable and its libraries) in the same
run. With --before OLD-KEEL (for instance a build of an earlier commit),
the same commands are timed with that keel too, in the same run, and the
ratio printed; an old keel without the cache is timed as it is (cold).
Then `--time-passes`' breakdown of one cold and one warm run of each, for
both keels.

usage: python3 bench/compile_bench.py [KEEL] [--before OLD-KEEL] [--runs N]
       (KEEL: default build/src/driver/keel)

Targets (the issue's): transformer cold <= 0.15 s, warm <= 0.05 s; gpt and
llama cold <= half the before keel's, warm <= 0.1 s; the 20,000-function
program <= 0.5 s."""
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def many_functions(path, n=20000):
    """n one-line scalar functions; main calls one of them and returns 0."""
    with open(path, "w") as f:
        for i in range(n):
            f.write(f"fn f{i}(x: i64) -> i64 {{ return x * {i % 97 + 1} + {i}; }}\n")
        f.write("fn main() -> i64 { return f123(1) - 150; }\n")


def run(keel, program, cache, extra=()):
    """Seconds `keel run program` takes, end to end; the cache directory is
    given by KEEL_CACHE_DIR (a keel without the cache ignores it)."""
    env = dict(os.environ, KEEL_CACHE_DIR=cache)
    start = time.perf_counter()
    done = subprocess.run([keel, "run", program, *extra], env=env, capture_output=True)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{keel} run {program} failed ({done.returncode}): {done.stderr.decode()[-2000:]}")
    return seconds, done.stderr.decode()


def breakdown(stderr):
    """The --time-passes lines that took time, as `step 0.123`."""
    steps = []
    for line in stderr.splitlines():
        m = re.match(r"^\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(.+)$", line)
        if m and float(m.group(1)) >= 0.0005 and m.group(2) != "Total":
            steps.append(f"{m.group(2)} {float(m.group(1)):.3f}")
    return ", ".join(steps)


def main():
    args = sys.argv[1:]
    keel, before, runs = os.path.join(ROOT, "build", "src", "driver", "keel"), None, 5
    while args:
        a = args.pop(0)
        if a == "--before" and args:
            before = args.pop(0)
        elif a == "--runs" and args:
            runs = int(args.pop(0))
        elif not a.startswith("-"):
            keel = a
        else:
            sys.exit(__doc__)
    work = tempfile.mkdtemp(prefix="keel-compile-bench-")
    try:
        many = os.path.join(work, "many.sfn")
        many_functions(many)
        programs = [("transformer", os.path.join(ROOT, "examples", "transformer.sfn")),
                    ("gpt", os.path.join(ROOT, "examples", "gpt.sfn")),
                    ("llama", os.path.join(ROOT, "examples", "llama.sfn")),
                    ("20,000 functions", many)]
        keels = [("after", keel)] + ([("before", before)] if before else [])
        startups = []
        for _ in range(runs):
            start = time.perf_counter()
            subprocess.run([keel, "--version"], capture_output=True, check=True)
            startups.append(time.perf_counter() - start)
        floor = statistics.median(startups)
        print(f"keel: {keel}" + (f"\nbefore: {before}" if before else ""))
        print(f"floor: `keel --version` {floor * 1e3:.1f} ms (median of {runs})\n")
        results = {}
        details = []
        for label, program in programs:
            for who, k in keels:
                cold, warm = [], []
                for i in range(runs):
                    cache = os.path.join(work, f"cache-{who}-{label}-{i}")
                    cold.append(run(k, program, cache)[0])
                    warm.append(run(k, program, cache)[0])
                results[(label, who)] = (statistics.median(cold), statistics.median(warm))
                cache = os.path.join(work, f"cache-{who}-{label}-passes")
                details.append(f"  {label}, {who}, cold: " + breakdown(run(k, program, cache, ["--time-passes"])[1]))
                details.append(f"  {label}, {who}, warm: " + breakdown(run(k, program, cache, ["--time-passes"])[1]))
        print(f"{'program':18} {'cold s':>8} {'warm s':>8}" + (f" {'before s':>9} {'cold/before':>12}" if before else ""))
        targets = {"transformer": (0.15, 0.05), "gpt": (None, 0.1), "llama": (None, 0.1),
                   "20,000 functions": (0.5, None)}
        for label, _ in programs:
            cold, warm = results[(label, "after")]
            line = f"{label:18} {cold:8.3f} {warm:8.3f}"
            old = results.get((label, "before"))
            if old:
                line += f" {old[0]:9.3f} {cold / old[0]:12.2f}"
            cold_target, warm_target = targets[label]
            if cold_target is None and old:
                cold_target = old[0] / 2
            marks = []
            if cold_target is not None:
                marks.append(f"cold target {cold_target:.3f}: {'met' if cold <= cold_target else 'NOT met'}")
            if warm_target is not None:
                marks.append(f"warm target {warm_target:.3f}: {'met' if warm <= warm_target else 'NOT met'}")
            print(line + ("   " + "; ".join(marks) if marks else ""))
        print("\n--time-passes (one run each; steps of 0.5 ms or more):")
        print("\n".join(details))
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
