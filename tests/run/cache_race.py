"""Helper of cache.test: N `keel` processes compile the same program into one
fresh cache directory at the same moment; each must succeed with the same
output, and the directory must end with whole entries only (no temporary
file left, every entry loading as a hit afterwards).

usage: cache_race.py N CACHE_DIR KEEL ARGS..."""
import os
import subprocess
import sys


def main():
    n, cache, command = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
    env = dict(os.environ, KEEL_CACHE_DIR=cache)
    runs = [subprocess.Popen(command + ["--time-passes"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
            for _ in range(n)]
    outputs = [r.communicate() for r in runs]
    problems = []
    for r, (out, err) in zip(runs, outputs):
        if r.returncode != 0:
            problems.append(f"exit {r.returncode}: {err.decode()}")
        if b"warning" in err:
            problems.append(f"a warning: {err.decode()}")
        if out != outputs[0][0]:
            problems.append("outputs differ")
    names = os.listdir(cache)
    if not names or any(not name.endswith(".kobj") for name in names):
        problems.append(f"the directory holds {names}")
    again = subprocess.run(command + ["--time-passes"], capture_output=True, env=env)
    if b"compile-cache (hit)" not in again.stderr or again.stdout != outputs[0][0]:
        problems.append("the run after them did not hit: " + again.stderr.decode())
    for p in problems:
        print("FAIL", p)
    print(f"{n} processes, {len(names)} entries, {len(problems)} problems")


if __name__ == "__main__":
    main()
