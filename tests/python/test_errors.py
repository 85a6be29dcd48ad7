"""Bad calls raise a Python exception with a clear message and never stop
the interpreter; nothing leaks; four threads at once give the sequential
results (docs/python.md)."""
import json
import os
import subprocess
import threading

import numpy as np
import pytest

import keel
from conftest import EXAMPLES, KEEL, same_bytes

rng = np.random.default_rng(7)
f32 = np.float32


@pytest.fixture(scope="module")
def llama():
    return keel.load(f"{EXAMPLES}/llama.sfn")


@pytest.fixture(scope="module")
def transformer():
    return keel.load(f"{EXAMPLES}/transformer.sfn")


def attention_args(c=8, heads=4, kv_heads=2, t=4):
    d = c // heads
    return [np.ones((1, t, c), f32), np.ones((2, t, d), f32), np.ones((c, c), f32),
            np.ones((kv_heads * d, c), f32), np.ones((kv_heads * d, c), f32), np.ones((c, c), f32)]


def raises(kind, call, *words):
    with pytest.raises(kind) as e:
        call()
    for w in words:
        assert w in str(e.value), str(e.value)
    return e.value


def test_wrong_dtype(transformer):
    e = raises(keel.ArgumentError, lambda: transformer.softmax(np.ones((2, 3))), "float64", "f32[2,3]", "x")
    assert isinstance(e, TypeError)


def test_wrong_rank(transformer):
    raises(keel.ShapeError, lambda: transformer.softmax(np.ones(3, f32)), "rank 2", "rank 1")


def test_inconsistent_shape_variables_name_the_argument_dimension_and_variable(transformer):
    q, k, v = np.ones((4, 6), f32), np.ones((3, 6), f32), np.ones((3, 5), f32)
    e = raises(keel.ShapeError, lambda: transformer.attention(q, k, v), "`D`", "`v`", "dimension 1", "6", "5")
    assert isinstance(e, ValueError)


def test_a_requires_clause_that_fails_is_a_shape_error(transformer):
    x = np.ones((8, 6), f32)
    w = np.ones((6, 4, 2), f32)
    raises(keel.ShapeError, lambda: transformer.multi_head_attention(x, w, w, w, np.ones((4, 2, 6), f32)),
           "E0401", "D % H == 0", "D = 6", "H = 4")


def test_missing_dimension_parameter(llama):
    raises(keel.ArgumentError, lambda: llama.attention(*attention_args(), H=4), "`KV`", "E0400",
           "KV=8 as a keyword argument")
    raises(keel.ArgumentError, lambda: llama.attention(*attention_args()), "`H` and `KV`",
           "H=8, KV=8 as keyword arguments")
    raises(keel.ArgumentError, lambda: llama.attention(*attention_args(), H=4, KV="2"), "KV=", "int")
    raises(keel.ShapeError, lambda: llama.attention(*attention_args(), H=4, KV=0), "KV=", "from 1")
    raises(keel.ArgumentError, lambda: llama.attention(*attention_args(), H=4, KV=2, Z=1), "`Z`", "not a shape variable")


def test_unknown_function(llama):
    raises(AttributeError, lambda: llama.nope, "no function `nope`", "llama_decoder_layer")
    raises(KeyError, lambda: llama["nope"], "no function `nope`")


def test_missing_and_extra_arguments(llama):
    args = attention_args()
    raises(keel.ArgumentError, lambda: llama.attention(*args[:5], H=4, KV=2), "missing argument `o_proj`")
    raises(keel.ArgumentError, lambda: llama.attention(*args, args[0], H=4, KV=2), "takes 6 arguments", "7")
    raises(keel.ArgumentError, lambda: llama.attention(*args, x=args[0], H=4, KV=2), "`x` twice")
    raises(keel.ArgumentError, lambda: llama.attention([1.0], *args[1:], H=4, KV=2), "is a list", "__dlpack__")
    raises(keel.ArgumentError, lambda: llama.attention(*args, H=4, KV=2, threads=0), "threads=")


def test_empty_dimensions_and_unsupported_dtypes(transformer):
    raises(keel.ShapeError, lambda: transformer.softmax(np.ones((2, 0), f32)), "dimension 1 is empty")
    raises(keel.ArgumentError, lambda: transformer.softmax(np.ones((2, 2), np.complex64)), "complex64")
    raises(keel.ArgumentError, lambda: transformer.softmax(np.ones((2, 2), ">f4")), "big-endian")


def test_invalid_elements_of_storage_types(tmp_path):
    m = keel.compile("fn f(x: Tensor<bool, [N]>) -> Tensor<bool, [N]> { return !x; }\n"
                     "fn g(x: Tensor<tf32, [N]>) -> Tensor<tf32, [N]> { return -x; }\n")
    bad = np.array([0, 1, 2], np.uint8).view(np.bool_)
    raises(ValueError, lambda: m.f(bad), "element 2", "byte 2")
    raises(ValueError, lambda: m.g(np.array([0x3F800001], "<u4").view(keel.dtype("tf32"))), "low 13 bits")
    assert np.array_equal(m.f(np.array([True, False])), [False, True])


def test_a_source_with_errors_raises_compile_error_with_keel_checks_records(tmp_path):
    source = "fn f(x: Tensor<f32, [N]>) -> Tensor<f32, [M]> {\n    return x;\n}\n"
    path = tmp_path / "bad.sfn"
    path.write_text(source)
    e = raises(keel.CompileError, lambda: keel.load(path), "error[E0210]", "bad.sfn:2:12", "N = 1, M = 2")
    check = subprocess.run([KEEL, "check", "--json", str(path)], capture_output=True, text=True)
    assert check.returncode == 1
    records = [json.loads(line) for line in check.stdout.splitlines() + check.stderr.splitlines()
               if line.startswith("{")]
    assert e.diagnostics == records and e.diagnostics[0]["code"] == "E0210"
    raises(keel.CompileError, lambda: keel.compile("fn f( {", name="broken.sfn"), "broken.sfn:1")
    raises(OSError, lambda: keel.load(tmp_path / "absent.sfn"), "absent.sfn")


def test_a_gpu_tensor(transformer):
    class OnTheGpu:  # what a CUDA tensor answers (DLPack device type 2)
        def __dlpack_device__(self):
            return (2, 0)

        def __dlpack__(self, stream=None):
            raise AssertionError("not to be read")

    raises(keel.ArgumentError, lambda: transformer.softmax(OnTheGpu()), "device", "CPU")


def resident_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_ten_thousand_calls_keep_memory_flat(transformer):
    x = rng.standard_normal((16, 32)).astype(f32)
    g, b = np.ones(32, f32), np.zeros(32, f32)
    fortran = np.asfortranarray(x)
    torch = pytest.importorskip("torch")
    t = torch.from_numpy(x)

    def calls(n):
        for _ in range(n):
            transformer.layer_norm(x, g, b)
            transformer.layer_norm(fortran, g, b)  # copied each call
            transformer.layer_norm(t, g, b)        # a DLPack capsule each call
            try:
                transformer.layer_norm(x[:, :5], g, b)
            except keel.ShapeError:
                pass

    calls(1000)
    before = resident_bytes()
    calls(10000)
    grown = resident_bytes() - before
    assert grown < 4 << 20, f"resident memory grew {grown} bytes over 10,000 calls"


def test_four_threads_give_the_sequential_results(transformer):
    inputs = [rng.standard_normal((8, 40)).astype(f32) for _ in range(16)]
    fresh = keel.load(f"{EXAMPLES}/transformer.sfn")  # its first calls race to compile
    sequential = [transformer.softmax(x) for x in inputs]
    results = [[None] * len(inputs) for _ in range(4)]
    errors = []

    def work(t):
        try:
            for _ in range(5):
                for i, x in enumerate(inputs):
                    results[t][i] = fresh.softmax(x, threads=1 + t % 2)
        except Exception as e:  # noqa: BLE001 (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors
    for t in range(4):
        for got, want in zip(results[t], sequential):
            assert same_bytes(got, want)
