"""Runs a `keel run ...` command twice, through the default CPU exit and
through `--exit reference` (the reference lowering alone), and fails unless
both give the same bytes: exit status, standard output, and every file
written under --out. Then behaves as the default run did (its output and
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
    reference_command = list(command)
    reference_out = None
    if out is not None:
        reference_out = out.rstrip("/") + ".reference"
        reference_command[reference_command.index("--out") + 1] = reference_out
    reference = subprocess.run(reference_command + ["--exit", "reference"], capture_output=True)
    problems = []
    if default.returncode != reference.returncode:
        problems.append(f"exit status {default.returncode} (cpu) vs {reference.returncode} (reference)")
    # (--out DIR's paths are printed: the reference run's DIR is another.)
    reference_stdout = reference.stdout
    if out is not None:
        reference_stdout = reference_stdout.replace(reference_out.encode(), out.rstrip("/").encode())
    if default.stdout != reference_stdout:
        problems.append("standard output differs")
    a, b = files_under(out), files_under(reference_out)
    if sorted(a) != sorted(b):
        problems.append(f"files differ: {sorted(a)} vs {sorted(b)}")
    problems += [f"{name} differs" for name in sorted(a) if name in b and a[name] != b[name]]
    sys.stdout.buffer.write(default.stdout)
    sys.stderr.buffer.write(default.stderr)
    if problems:
        sys.stderr.write("both_exits: the cpu and reference exits differ: " + "; ".join(problems) + "\n")
        sys.exit(99)
    sys.exit(default.returncode)


main()
