"""Runs a `keel run ...` command as given (fused, the CPU schedule), then
unfused (`--no-fuse`) and through `--exit reference` (the reference
lowering alone), and fails unless all give the same bytes: exit status,
standard output, and every file written under --out. Then behaves as the default run did (its output and
exit status), so that FileCheck checks it as usual.

    %python both_exits.py keel run FILE [options...]
"""
import os
import subprocess
import sys


def files_under(directory):
    found = {}
    if directory and os.path.isdir(directory):
        for root, _, names in os.walk(directory):
            for name in names:
                path = os.path.join(root, name)
                with open(path, "rb") as f:
                    found[os.path.relpath(path, directory)] = f.read()
    return found


def main():
    command = sys.argv[1:]
    out = None
    if "--out" in command:
        out = command[command.index("--out") + 1]
    default = subprocess.run(command, capture_output=True)
    problems = []
    for variant, extra in (("reference", ["--exit", "reference"]), ("unfused", ["--no-fuse"])):
        other_command = list(command)
        other_out = None
        if out is not None:
            other_out = out.rstrip("/") + "." + variant
            other_command[other_command.index("--out") + 1] = other_out
        other = subprocess.run(other_command + extra, capture_output=True)
        if default.returncode != other.returncode:
            problems.append(f"exit status {default.returncode} (default) vs {other.returncode} ({variant})")
        # (--out DIR's paths are printed: the other run's DIR is another.)
        other_stdout = other.stdout
        if out is not None:
            other_stdout = other_stdout.replace(other_out.encode(), out.rstrip("/").encode())
        if default.stdout != other_stdout:
            problems.append(f"standard output differs ({variant})")
        a, b = files_under(out), files_under(other_out)
        if sorted(a) != sorted(b):
            problems.append(f"files differ ({variant}): {sorted(a)} vs {sorted(b)}")
        problems += [f"{name} differs ({variant})" for name in sorted(a) if name in b and a[name] != b[name]]
    sys.stdout.buffer.write(default.stdout)
    sys.stderr.buffer.write(default.stderr)
    if problems:
        sys.stderr.write("both_exits: the runs differ: " + "; ".join(problems) + "\n")
        sys.exit(99)
    sys.exit(default.returncode)


main()
