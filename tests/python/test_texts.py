"""The texts of what Python calls (tensor IR, StableHLO, linalg) are the
command line's; signatures read as the source; check_shapes answers as a
call would (docs/python.md)."""
import subprocess

import numpy as np
import pytest

import keel
from conftest import EXAMPLES, KEEL

TRANSFORMER = f"{EXAMPLES}/transformer.sfn"
LLAMA = f"{EXAMPLES}/llama.sfn"


def cli(*args):
    done = subprocess.run([KEEL, *args], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def transformer():
    return keel.load(TRANSFORMER)


def test_ir_is_keel_irs(transformer):
    assert transformer.ir("softmax", S=2, T=5) == cli("ir", TRANSFORMER, "--entry", "softmax", "--bind", "S=2,T=5")
    assert transformer.ir("softmax", S=2, T=5, fuse=True) == \
        cli("ir", TRANSFORMER, "--entry", "softmax", "--bind", "S=2,T=5", "--fuse")
    # shapes from arrays or tuples bind the same sizes
    assert transformer.ir("softmax", np.ones((2, 5), np.float32)) == transformer.ir("softmax", (2, 5))
    assert transformer.ir("softmax", x=(2, 5)) == transformer.ir("softmax", S=2, T=5)


def test_exit_texts_are_keel_emits(transformer):
    bind = ["--entry", "multi_head_attention", "--bind", "S=4,D=8,H=2,Dh=4"]
    sizes = dict(S=4, D=8, H=2, Dh=4)
    assert transformer.stablehlo("multi_head_attention", **sizes) == cli("emit", "--stablehlo", TRANSFORMER, *bind)
    assert transformer.stablehlo("multi_head_attention", version="1.0.0", **sizes) == \
        cli("emit", "--stablehlo", TRANSFORMER, *bind, "--target-version", "1.0.0")
    assert transformer.linalg("multi_head_attention", **sizes) == cli("emit", "--linalg", TRANSFORMER, *bind)
    with pytest.raises(ValueError, match="versions"):
        transformer.stablehlo("softmax", S=2, T=2, version="0.1.0")


def test_signatures_read_as_written():
    m = keel.load(LLAMA)
    s = m.signature("attention")
    assert s.dim_params == ["H", "KV"]
    assert [p["name"] for p in s.params] == ["x", "cos_sin", "q_proj", "k_proj", "v_proj", "o_proj"]
    assert s.params[1]["dims"] == ["2", "T", "C / H"] and s.params[1]["dtype"] == "f32"
    assert s.params[3]["type"] == "Tensor<f32, [KV * (C / H), C]>"
    assert s.requires == ["C % H == 0", "H % KV == 0", "(C / H) % 2 == 0"]  # each predicate of the && chain
    assert s.result == "Tensor<f32, [B, T, C]>"
    assert s.location.endswith("llama.sfn:59:4")
    assert str(s).startswith("fn attention<H, KV>(x: Tensor<f32, [B, T, C]>, cos_sin:")
    assert keel.load(TRANSFORMER).signature("multi_head_attention").requires == ["D % H == 0", "Dh == D / H"]


def test_check_shapes(transformer):
    bad = transformer.check_shapes("attention", (4, 6), (3, 6), (3, 5))
    assert not bad and "`D`" in bad.message and "`v`" in bad.message and "dimension 1" in bad.message
    assert transformer.check_shapes("attention", (4, 6), (3, 6), (3, 6))
    # a requires clause at the bound sizes
    no = transformer.check_shapes("multi_head_attention", (8, 6), (6, 4, 2), (6, 4, 2), (6, 4, 2), (4, 2, 6))
    assert not no and "D % H == 0" in no.message
    assert transformer.check_shapes("multi_head_attention", (8, 8), (8, 4, 2), (8, 4, 2), (8, 4, 2), (4, 2, 8))
    with pytest.raises(keel.ArgumentError):
        transformer.check_shapes("attention", (4, 6), (3, 6), ("a",))
