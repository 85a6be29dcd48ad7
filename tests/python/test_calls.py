"""Calling Keel tensor functions from Python: every dtype in and out,
layouts, rank 0, PyTorch tensors through DLPack, and results equal byte for
byte to `keel run --entry` on the same inputs (docs/python.md)."""
import numpy as np
import pytest

import keel
from conftest import EXAMPLES, same_bytes

rng = np.random.default_rng(20261203)

INTEGERS = {"i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
            "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64}
FLOATS = {"f16": np.float16, "f32": np.float32, "f64": np.float64}
LOW = ["bf16", "tf32", "fp8e4m3fn", "fp8e5m2"]
ALL = ["bool", "i4", *INTEGERS, *FLOATS, *LOW]


def values(dtype, shape):
    """Random elements of Keel element type `dtype` as the array Keel takes."""
    if dtype == "bool":
        return rng.random(shape) < 0.5
    if dtype == "i4":
        return rng.integers(-8, 8, shape).astype(np.int8).view(keel.dtype("i4"))
    if dtype in INTEGERS:
        info = np.iinfo(INTEGERS[dtype])
        return rng.integers(info.min, info.max, shape, dtype=INTEGERS[dtype], endpoint=True)
    x = rng.standard_normal(shape) * 50
    if dtype in FLOATS:
        return x.astype(FLOATS[dtype])
    return getattr(keel, dtype)(x)


SOURCE = "\n".join(
    f"fn flip_{t}(x: Tensor<{t}, [A, B]>) -> Tensor<{t}, [B, A]> {{ return transpose(x, [1, 0]); }}\n"
    + (f"fn widen_{t}(x: Tensor<{t}, [N]>) -> Tensor<f64, [N]> {{ return x as f64; }}\n" if t != "bool" else "")
    + (f"fn narrow_{t}(x: Tensor<f64, [N]>) -> Tensor<{t}, [N]> {{ return x as {t}; }}\n"
       if t not in ("bool", "i4") else "")  # `as i4` is no scalar conversion (E0102)
    for t in ALL) + """
fn twice(x: Tensor<f32, []>) -> Tensor<f32, []> { return x + x; }
fn scale(x: Tensor<f32, [M, N]>, w: Tensor<f32, [N]>) -> Tensor<f32, [M, N]> { return x * w; }
"""


@pytest.fixture(scope="module")
def module(tmp_path_factory):
    path = tmp_path_factory.mktemp("src") / "dtypes.sfn"
    path.write_text(SOURCE)
    return keel.load(path), path


@pytest.mark.parametrize("dtype", ALL)
def test_every_dtype_in_and_out(module, run_cli, dtype):
    m, path = module
    x = values(dtype, (3, 5))
    got = m["flip_" + dtype](x)
    # transpose moves elements: NumPy's transpose is the expected value
    assert same_bytes(got, np.ascontiguousarray(x.T))
    assert got.flags["OWNDATA"] and got.flags["C_CONTIGUOUS"]
    assert same_bytes(got, run_cli(path, "flip_" + dtype, {"x": x})[0])
    if dtype == "bool":
        return
    v = values(dtype, (7,))
    widened = m["widen_" + dtype](v)
    assert same_bytes(widened, run_cli(path, "widen_" + dtype, {"x": v})[0])
    if dtype == "i4":
        return
    w = rng.standard_normal(7) * 300
    narrowed = m["narrow_" + dtype](w)
    assert same_bytes(narrowed, run_cli(path, "narrow_" + dtype, {"x": w})[0])


def test_float_conversions_match_numpy_and_the_cli(module):
    m, _ = module
    v = values("f32", (9,))
    assert np.array_equal(m.widen_f32(v), v.astype(np.float64))  # exact widening
    for t in LOW:  # Keel's own rounding in keel.bf16 and `x as bf16` agree
        w = rng.standard_normal(11) * 20
        assert same_bytes(m["narrow_" + t](w), getattr(keel, t)(w))


@pytest.mark.parametrize("layout", ["fortran", "transposed", "negative", "strided", "unaligned"])
def test_layouts_are_copied_and_give_the_same_bytes(module, layout):
    m, _ = module
    base = rng.standard_normal((6, 8)).astype(np.float32)
    x = {"fortran": np.asfortranarray(base[:4, :5]), "transposed": base.T[:4, :5],
         "negative": base[::-1, ::-1][:4, :5], "strided": base[::2, ::2][:3, :4],
         "unaligned": np.frombuffer(b"\0" + base[:4, :5].tobytes(), dtype=np.float32, offset=1).reshape(4, 5)}[layout]
    assert not x.flags["C_CONTIGUOUS"] or not x.flags["ALIGNED"]
    keel.reset_stats()
    got = m.flip_f32(x)
    stats = keel.stats()
    assert (stats["copies"], stats["in_place"]) == (1, 0)
    assert stats["copied_bytes"] == x.size * 4
    assert same_bytes(got, np.ascontiguousarray(x.T))


def test_contiguous_arrays_are_read_in_place(module):
    m, _ = module
    x, w = values("f32", (4, 5)), values("f32", (5,))
    keel.reset_stats()
    got = m.scale(x, w)
    assert keel.stats()["in_place"] == 2 and keel.stats()["copies"] == 0
    assert np.array_equal(got, x * w)  # one f32 multiply each, as NumPy's
    # a read-only array is read too, and never written
    x.flags.writeable = False
    assert np.array_equal(m.scale(x, w=w), x * w)


def test_rank_zero(module):
    m, _ = module
    got = m.twice(np.array(1.25, dtype=np.float32))
    assert got.shape == () and got.dtype == np.float32 and float(got) == 2.5


def test_keywords_threads_and_the_in_memory_cache(module):
    m, _ = module
    x, w = values("f32", (64, 33)), values("f32", (33,))
    keel.reset_stats()
    one = m.scale(x, w, threads=1)
    assert keel.stats()["compiles"] in (0, 1)
    for threads in (2, 3, 4):
        assert same_bytes(m["scale"](w=w, x=x, threads=threads), one)
    assert keel.stats()["compiles"] <= 1  # one (function, sizes, dtypes): compiled once


torch = pytest.importorskip("torch")


def test_torch_tensors_through_dlpack(module):
    m, _ = module
    x = torch.randn(4, 5, dtype=torch.float32)
    w = torch.randn(5, dtype=torch.float32)
    keel.reset_stats()
    got = m.scale(x, w)
    assert keel.stats()["in_place"] == 2 and keel.stats()["copies"] == 0
    assert np.array_equal(got, (x * w).numpy())
    # a transposed (non-contiguous) tensor is copied, with the same result
    t = torch.randn(5, 4, dtype=torch.float32).T
    keel.reset_stats()
    assert same_bytes(m.flip_f32(t), np.ascontiguousarray(t.numpy().T))
    assert keel.stats()["copies"] == 1


def test_torch_bfloat16_and_float16_are_bf16_and_f16(module):
    m, _ = module
    x = torch.randn(3, 4) * 10
    got = m.flip_bf16(x.to(torch.bfloat16))
    assert got.dtype == keel.dtype("bf16")
    # PyTorch rounds float32 to bfloat16 to nearest even, as Keel does
    assert same_bytes(got, keel.bf16(x.numpy()).T.copy())
    assert torch.equal(keel.to_torch(got), x.to(torch.bfloat16).T)
    h = m.flip_f16(x.to(torch.float16))
    assert torch.equal(torch.from_numpy(h), x.to(torch.float16).T)


def test_results_go_to_torch_without_a_copy(module):
    m, _ = module
    r = m.scale(values("f32", (3, 4)), values("f32", (4,)))
    t = torch.from_dlpack(r)
    assert t.data_ptr() == r.ctypes.data
    b = m.narrow_bf16(rng.standard_normal(6))
    tb = keel.to_torch(b)
    assert tb.dtype == torch.bfloat16 and tb.data_ptr() == b.ctypes.data


def test_a_transformer_block_equals_keel_run(run_cli):
    m = keel.load(f"{EXAMPLES}/llama.sfn")
    sizes = dict(H=4, KV=2)
    b, t, c, f = 2, 8, 32, 48
    kv = 2 * (c // 4)
    shapes = {"x": (b, t, c), "input_layernorm": (c,), "q_proj": (c, c), "k_proj": (kv, c), "v_proj": (kv, c),
              "o_proj": (c, c), "post_attention_layernorm": (c,), "gate_proj": (f, c), "up_proj": (f, c),
              "down_proj": (c, f)}
    args = {k: (rng.standard_normal(s) * 0.3).astype(np.float32) for k, s in shapes.items()}
    got = m.llama_decoder_layer(**args, **sizes)
    want = run_cli(f"{EXAMPLES}/llama.sfn", "llama_decoder_layer", args,
                   ["--bind", f"B={b},T={t},C={c},F={f},H=4,KV=2"])[0]
    assert same_bytes(got, want)


def test_keel_threads_is_read_at_import(tmp_path):
    import os
    import subprocess
    import sys
    program = "import keel; print(keel.threads())"
    for value, want, warned in (("3", "3", False), ("zero", None, True)):
        env = dict(os.environ, KEEL_THREADS=value)
        run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env)
        assert run.returncode == 0, run.stderr
        if want:
            assert run.stdout.strip() == want
        assert ("KEEL_THREADS must be" in run.stderr) == warned


def test_compiled_code_goes_to_the_compile_cache(tmp_path):
    """A call stores its machine code in $KEEL_CACHE_DIR (as `keel run`
    does), and a second process gives the same bytes from it."""
    import os
    import subprocess
    import sys
    from conftest import KEEL
    cache = tmp_path / "cache"
    program = ("import numpy as np, keel\n"
               "m = keel.compile('fn f(x: Tensor<f32, [N]>) -> Tensor<f32, [N]> { return exp(x) * x; }')\n"
               "print(m.f(np.linspace(-3, 3, 7, dtype=np.float32)).tobytes().hex())\n")
    env = dict(os.environ, KEEL_CACHE_DIR=str(cache))
    outputs = []
    for _ in range(2):
        run = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, env=env)
        assert run.returncode == 0, run.stderr
        outputs.append(run.stdout)
        shown = subprocess.run([KEEL, "cache", "--cache-dir", str(cache)], capture_output=True, text=True)
        assert ": 1 entries" in shown.stdout or ": 1 entry" in shown.stdout, shown.stdout
    assert outputs[0] == outputs[1]
