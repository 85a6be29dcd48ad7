"""Shared by the oracle tests: run one tensor function with `keel run
--entry`, its arguments saved as .npy files (or given as random:SEED
strings), through both CPU exits (the default and --exit reference, which
must give the same bytes), and load its result."""
import os
import subprocess

import numpy as np


def run_entry(keel, source, entry, arguments, work, extra=()):
    """Returns (result array, None), or (None, the error text)."""
    command = [keel, "run", source, "--entry", entry, "--out", work, *extra]
    for name, value in arguments.items():
        if isinstance(value, str):
            command += ["--arg", f"{name}={value}"]
            continue
        path = os.path.join(work, f"{entry}.{name}.npy")
        np.save(path, value)
        command += ["--arg", f"{name}={path}"]
    run = subprocess.run(command, capture_output=True, text=True)
    if run.returncode != 0:
        return None, f"keel exited {run.returncode}: {run.stderr}"
    result = os.path.join(work, entry + ".npy")
    with open(result, "rb") as f:
        cpu_bytes = f.read()
    # The same function through the reference lowering alone (--exit
    # reference) must give the same bytes.
    reference = subprocess.run(command + ["--exit", "reference"], capture_output=True, text=True)
    if reference.returncode != 0:
        return None, f"keel --exit reference exited {reference.returncode}: {reference.stderr}"
    with open(result, "rb") as f:
        if f.read() != cpu_bytes:
            return None, "the cpu and reference exits give different bytes"
    return np.load(result), None
