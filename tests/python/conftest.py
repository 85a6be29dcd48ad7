"""Shared by the Python module's tests (tests/python, run by CTest's
`python` test): where the built keel command and the examples are, and
keel run --entry as the reference a call's bytes are compared with."""
import os
import subprocess

import numpy as np
import pytest

KEEL = os.environ.get("KEEL_BIN", "")
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "examples")


@pytest.fixture
def run_cli(tmp_path):
    """run_cli(source_path, entry, {name: array}, extra) -> the result
    arrays `keel run --entry` writes (a list), or raises with its stderr."""
    def run(source, entry, arguments, extra=()):
        out = tmp_path / ("out-" + entry)
        command = [KEEL, "run", str(source), "--entry", entry, "--out", str(out), *extra]
        for name, value in arguments.items():
            path = tmp_path / f"{entry}.{name}.npy"
            np.save(path, value)
            command += ["--arg", f"{name}={path}"]
        done = subprocess.run(command, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        files = sorted(p for p in os.listdir(out) if p.endswith(".npy"))
        return [np.load(out / f) for f in files]
    return run


def same_bytes(a, b):
    """Equal dtype, shape and element bytes (NaNs by their bits)."""
    return a.dtype == b.dtype and a.shape == b.shape and \
        np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()
