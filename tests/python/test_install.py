"""`cmake --install` puts the keel package where the prefix's Python finds
it, and the installed module runs on its own (LLVM found through its
run path), outside the build tree."""
import os
import subprocess
import sys

import pytest

BUILD = os.environ.get("KEEL_BUILD_DIR", "")


@pytest.mark.skipif(not BUILD, reason="KEEL_BUILD_DIR names the build to install")
def test_installed_package_imports_and_runs(tmp_path):
    prefix = tmp_path / "prefix"
    done = subprocess.run(["cmake", "--install", BUILD, "--prefix", str(prefix)], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    site = prefix / "lib" / f"python{sys.version_info.major}.{sys.version_info.minor}" / "dist-packages"
    assert (site / "keel" / "__init__.py").exists()
    assert (prefix / "bin" / "keel").exists()
    program = ("import numpy as np, keel\n"
               "m = keel.compile('fn f(x: Tensor<f32, [N]>) -> Tensor<f32, [N]> { return x * x; }')\n"
               "print(keel.__file__)\n"
               "print(m.f(np.array([1.5, -2.0], np.float32)).tolist())\n")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "LD_LIBRARY_PATH")}
    env["PYTHONPATH"] = str(site)
    run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    where, values = run.stdout.splitlines()
    assert where.startswith(str(site))
    assert values == "[2.25, 4.0]"
