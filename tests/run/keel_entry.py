"""Shared by the oracle tests: run one tensor function with `keel run
--entry`, its arguments saved as .npy files (or given as random:SEED
strings), and load its result."""
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
    return np.load(os.path.join(work, entry + ".npy")), None
