"""Shared by the oracle tests: run one tensor function with `keel run
--entry`, its arguments saved as .npy files (or given as random:SEED
strings), fused (the default) and unfused, through both CPU exits (the
default and --exit reference): all four must give the same bytes; and load
its result."""
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
    # The same function unfused, and through the reference lowering alone
    # (--exit reference), must give the same bytes.
    for extra in (["--no-fuse"], ["--exit", "reference"], ["--exit", "reference", "--no-fuse"]):
        other = subprocess.run(command + extra, capture_output=True, text=True)
        if other.returncode != 0:
            return None, f"keel {' '.join(extra)} exited {other.returncode}: {other.stderr}"
        with open(result, "rb") as f:
            if f.read() != cpu_bytes:
                return None, f"keel {' '.join(extra)} gives other bytes than the default (fused, cpu) run"
    return np.load(result), None
