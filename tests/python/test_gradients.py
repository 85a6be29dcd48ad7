"""Gradients (docs/autodiff.md): every adjoint rule against PyTorch's
autograd in float64 on random inputs (a loss sum(op(x) * w) with a fixed
random weight w, so every element's gradient counts), through `import
keel`'s value_and_grad and through `keel run --grad`; the problems a
gradient cannot get past."""
import subprocess

import numpy as np
import pytest

import keel
from conftest import KEEL

torch = pytest.importorskip("torch")
rng = np.random.default_rng(28)

# name: (Keel body over x (and y) giving a [3, 4] tensor, the same in torch)
UNARY = {
    "neg": ("-x", lambda x: -x),
    "abs": ("abs(x)", torch.abs),
    "relu": ("relu(x)", torch.relu),
    "exp": ("exp(x)", torch.exp),
    "log": ("log(x * x + 0.5)", lambda x: torch.log(x * x + 0.5)),
    "tanh": ("tanh(x)", torch.tanh),
    "sigmoid": ("sigmoid(x)", torch.sigmoid),
    "gelu": ("gelu(x)", torch.nn.functional.gelu),
    "silu": ("silu(x)", torch.nn.functional.silu),
    "sqrt": ("sqrt(x * x + 0.25)", lambda x: torch.sqrt(x * x + 0.25)),
    "rsqrt": ("rsqrt(x * x + 0.25)", lambda x: torch.rsqrt(x * x + 0.25)),
    "sin": ("sin(x)", torch.sin),
    "cos": ("cos(x)", torch.cos),
}
BINARY = {
    "add": ("x + y", lambda x, y: x + y),
    "sub": ("x - y", lambda x, y: x - y),
    "mul": ("x * y", lambda x, y: x * y),
    "div": ("x / (y * y + 0.5)", lambda x, y: x / (y * y + 0.5)),
    "pow": ("pow(x * x + 0.5, y)", lambda x, y: torch.pow(x * x + 0.5, y)),
    "max": ("max(x, y)", torch.maximum),
    "min": ("min(x, y)", torch.minimum),
    "where": ("where(x > y, x * 2.0, y * y)", lambda x, y: torch.where(x > y, x * 2.0, y * y)),
}


def source(body, binary):
    params = "x: Tensor<f64, [M, N]>, y: Tensor<f64, [M, N]>, " if binary else "x: Tensor<f64, [M, N]>, "
    return (f"fn loss({params}w: Tensor<f64, [M, N]>) -> Tensor<f64, []> {{\n"
            f"    return sum(({body}) * w, axis: [0, 1]);\n}}\n")


def torch_grads(fn, arrays, wrt):
    ts = {k: torch.tensor(v, dtype=torch.float64, requires_grad=k in wrt) for k, v in arrays.items()}
    loss = (fn(*[ts[k] for k in arrays if k != "w"]) * ts["w"]).sum()
    loss.backward()
    return loss.item(), [ts[k].grad.numpy() for k in wrt]


def check(got, want, scale=1.0):
    value, grads = got[0], got[1:]
    assert abs(float(value) - want[0]) <= 1e-12 * max(1.0, abs(want[0]))
    for g, w in zip(grads, want[1]):
        assert g.dtype == np.float64 and g.shape == w.shape
        assert np.max(np.abs(g - w)) <= 1e-12 * max(1.0, np.max(np.abs(w))) * scale, np.max(np.abs(g - w))


@pytest.mark.parametrize("name", list(UNARY))
def test_unary_rules_against_torch(name):
    body, fn = UNARY[name]
    m = keel.compile(source(body, False), name=name + ".sfn")
    arrays = {"x": rng.standard_normal((3, 4)) * 2, "w": rng.standard_normal((3, 4))}
    if name in ("abs", "relu"):
        arrays["x"][0, 0] = 0.0  # the kink: both give 0 there
    got = m.value_and_grad("loss", wrt=["x"])(**arrays)
    check(got, torch_grads(fn, arrays, ["x"]))


@pytest.mark.parametrize("name", list(BINARY))
def test_binary_rules_against_torch(name):
    body, fn = BINARY[name]
    m = keel.compile(source(body, True), name=name + ".sfn")
    arrays = {"x": rng.standard_normal((3, 4)), "y": rng.standard_normal((3, 4)), "w": rng.standard_normal((3, 4))}
    got = m.value_and_grad("loss", wrt=["x", "y"])(**arrays)
    check(got, torch_grads(fn, arrays, ["x", "y"]))


def test_max_and_min_send_ties_to_the_first_operand():
    m = keel.compile(source("max(x, y)", True))
    x = np.array([[1.0, 2.0], [3.0, 4.0]])
    value, dx, dy = m.value_and_grad("loss", wrt=["x", "y"])(x, x.copy(), np.ones((2, 2)))
    assert value == 10.0 and np.array_equal(dx, np.ones((2, 2))) and np.array_equal(dy, np.zeros((2, 2)))


SHAPES = {
    # name: (parameters, body, torch function of the same arguments, shapes)
    "matmul": ("a: Tensor<f64, [M, K]>, b: Tensor<f64, [K, N]>", "matmul(a, b)", lambda a, b: a @ b,
               {"a": (3, 5), "b": (5, 4)}),
    "batched matmul": ("a: Tensor<f64, [B, M, K]>, b: Tensor<f64, [K, N]>", "matmul(a, b)", lambda a, b: a @ b,
                       {"a": (2, 3, 5), "b": (5, 4)}),
    "both batched": ("a: Tensor<f64, [B, M, K]>, b: Tensor<f64, [B, K, N]>", "matmul(a, b)",
                     lambda a, b: a @ b, {"a": (2, 3, 5), "b": (2, 5, 4)}),
    "matrix-vector": ("a: Tensor<f64, [M, K]>, b: Tensor<f64, [K]>", "matmul(a, b)", lambda a, b: a @ b,
                      {"a": (3, 5), "b": (5,)}),
    "broadcast": ("a: Tensor<f64, [M, 1]>, b: Tensor<f64, [N]>", "a * b", lambda a, b: a * b,
                  {"a": (3, 1), "b": (4,)}),
    "reshape and transpose": ("a: Tensor<f64, [M, N]>, b: Tensor<f64, [N, M]>",
                              "reshape(transpose(a, [1, 0]), [N * M]) * reshape(b, [N * M])",
                              lambda a, b: a.T.reshape(-1) * b.reshape(-1), {"a": (3, 4), "b": (4, 3)}),
    "slice and concat": ("a: Tensor<f64, [M, 4]>, b: Tensor<f64, [M, 4]>",
                         "concat(slice(a, axis: 1, start: 1, stop: 3), b, axis: 1) * 2.0",
                         lambda a, b: torch.cat([a[:, 1:3], b], dim=1) * 2.0, {"a": (3, 4), "b": (3, 4)}),
    "sum over an axis": ("a: Tensor<f64, [M, N]>, b: Tensor<f64, [N]>", "sum(a, axis: 0) * b",
                         lambda a, b: a.sum(dim=0) * b, {"a": (3, 4), "b": (4,)}),
    "mean, keepdims": ("a: Tensor<f64, [M, N]>, b: Tensor<f64, [M, N]>", "(a - mean(a, axis: 1, keepdims: true)) * b",
                       lambda a, b: (a - a.mean(dim=1, keepdim=True)) * b, {"a": (3, 4), "b": (3, 4)}),
    "max over an axis": ("a: Tensor<f64, [M, N]>, b: Tensor<f64, [M]>", "max(a, axis: 1) * b",
                         lambda a, b: a.amax(dim=1) * b, {"a": (3, 4), "b": (3,)}),
    "convert": ("a: Tensor<f32, [M, N]>, b: Tensor<f64, [M, N]>", "(a as f64) * b", lambda a, b: a * b,
                {"a": (3, 4), "b": (3, 4)}),
}


@pytest.mark.parametrize("name", list(SHAPES))
def test_shape_rules_against_torch(name):
    params, body, fn, shapes = SHAPES[name]
    text = f"fn loss({params}) -> Tensor<f64, []> {{\n    let r = {body};\n    return sum(r * r, axis: 0);\n}}\n"
    rank = {"matmul": 2, "batched matmul": 3, "both batched": 3, "matrix-vector": 1, "broadcast": 2,
            "reshape and transpose": 1, "slice and concat": 2, "sum over an axis": 1, "mean, keepdims": 2,
            "max over an axis": 1, "convert": 2}[name]
    axes = ", ".join(str(i) for i in range(rank))
    text = text.replace("axis: 0)", f"axis: [{axes}])")
    m = keel.compile(text, name="shapes.sfn")
    arrays = {k: rng.standard_normal(s) for k, s in shapes.items()}
    if name == "convert":
        arrays["a"] = arrays["a"].astype(np.float32)
    wrt = [k for k in arrays if arrays[k].dtype == np.float64]
    got = m.value_and_grad("loss", wrt=wrt)(**arrays)
    ts = {k: torch.tensor(v.astype(np.float64), requires_grad=k in wrt) for k, v in arrays.items()}
    r = fn(*ts.values())
    loss = (r * r).sum()
    loss.backward()
    check(got, (loss.item(), [ts[k].grad.numpy() for k in wrt]))


def test_calls_are_differentiated_through():
    m = keel.compile("""
fn inner(a: Tensor<f64, [N]>, b: Tensor<f64, [N]>) -> Tensor<f64, [N]> { return tanh(a) * b; }
fn loss(a: Tensor<f64, [N]>, b: Tensor<f64, [N]>) -> Tensor<f64, []> {
    return sum(inner(a, b) * inner(b, a), axis: 0);
}
""")
    a, b = rng.standard_normal(5), rng.standard_normal(5)
    got = m.value_and_grad("loss", wrt=["a", "b"])(a, b)
    ta, tb = (torch.tensor(v, requires_grad=True) for v in (a, b))
    loss = (torch.tanh(ta) * tb * torch.tanh(tb) * ta).sum()
    loss.backward()
    check(got, (loss.item(), [ta.grad.numpy(), tb.grad.numpy()]))


def test_a_parameter_the_value_does_not_use_has_a_zero_gradient():
    m = keel.compile("fn f(a: Tensor<f64, [N]>, b: Tensor<f64, [N]>) -> Tensor<f64, []> { return sum(a * a, axis: 0); }")
    value, da, db = m.value_and_grad("f", wrt=["a", "b"])(np.array([1.0, 2.0]), np.array([3.0, 4.0]))
    assert value == 5.0 and np.array_equal(da, [2.0, 4.0]) and np.array_equal(db, [0.0, 0.0])


def test_problems():
    m = keel.compile("""
fn vector(a: Tensor<f32, [N]>) -> Tensor<f32, [N]> { return a * a; }
fn lowp(a: Tensor<f32, [N]>) -> Tensor<f32, []> { return sum((a as bf16) as f32, axis: 0); }
fn ints(a: Tensor<f32, [N]>, i: Tensor<i32, [N]>) -> Tensor<f32, []> { return sum(a * (i as f32), axis: 0); }
""", name="problems.sfn")
    with pytest.raises(keel.CompileError, match="(?s)E0600.*one f32 or f64 scalar"):
        m.value_and_grad("vector", wrt=["a"])(np.ones(3, np.float32))
    with pytest.raises(keel.CompileError, match="(?s)E0600.*bf16.*problems.sfn:3"):
        m.value_and_grad("lowp", wrt=["a"])(np.ones(3, np.float32))
    with pytest.raises(keel.CompileError, match="(?s)E0600.*i32"):
        m.value_and_grad("ints", wrt=["i"])(np.ones(3, np.float32), np.ones(3, np.int32))
    with pytest.raises(keel.ArgumentError, match="no parameter `b` to differentiate"):
        m.value_and_grad("ints", wrt=["b"])(np.ones(3, np.float32), np.ones(3, np.int32))
    # an integer operand on the path has a zero gradient: a's is i
    v, da = m.value_and_grad("ints", wrt=["a"])(np.ones(3, np.float32), np.array([1, 2, 3], np.int32))
    assert v == 6.0 and np.array_equal(da, [1.0, 2.0, 3.0])


def test_keel_run_grad_writes_the_value_and_each_gradient(tmp_path):
    src = tmp_path / "mse.sfn"
    src.write_text("fn mse(x: Tensor<f64, [N, D]>, w: Tensor<f64, [D]>, y: Tensor<f64, [N]>) -> Tensor<f64, []> {\n"
                   "    let d = matmul(x, w) - y;\n    return sum(d * d, axis: 0) / (N as f64);\n}\n")
    arrays = {"x": rng.standard_normal((6, 3)), "w": rng.standard_normal(3), "y": rng.standard_normal(6)}
    command = [KEEL, "run", str(src), "--entry", "mse", "--grad", "w,x"]
    for k, v in arrays.items():
        np.save(tmp_path / f"{k}.npy", v)
        command += ["--arg", f"{k}={tmp_path / (k + '.npy')}"]
    done = subprocess.run(command + ["--out", str(tmp_path / "out")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [f"{tmp_path}/out/mse.npy:", "f64[]", f"{tmp_path}/out/grad_w.npy:", "f64[3]",
                                   f"{tmp_path}/out/grad_x.npy:", "f64[6,3]"]
    ts = {k: torch.tensor(v, requires_grad=True) for k, v in arrays.items()}
    loss = ((ts["x"] @ ts["w"] - ts["y"]) ** 2).sum() / 6
    loss.backward()
    out = tmp_path / "out"
    assert abs(float(np.load(out / "mse.npy")) - loss.item()) < 1e-12
    assert np.allclose(np.load(out / "grad_w.npy"), ts["w"].grad.numpy(), rtol=0, atol=1e-12)
    assert np.allclose(np.load(out / "grad_x.npy"), ts["x"].grad.numpy(), rtol=0, atol=1e-12)
    # fused, unfused and the reference exit: the same bytes
    for extra in (["--no-fuse"], ["--exit", "reference"]):
        other = tmp_path / ("o" + extra[-1])
        done = subprocess.run(command + ["--out", str(other)] + extra, capture_output=True, text=True)
        assert done.returncode == 0, done.stderr
        for name in ("mse", "grad_w", "grad_x"):
            assert (out / f"{name}.npy").read_bytes() == (other / f"{name}.npy").read_bytes()


def test_smooth_derivatives_are_accurate():
    """tanh', sigmoid', gelu' and silu' (docs/autodiff.md): f32 within 1 ulp
    of the exact derivative (a float64 evaluation of cancellation-free
    forms, erfc for gelu's Phi) on 100,000 points spread over 4 decades;
    tanh' and sigmoid' in f64 within 4 ulps of mpmath at 200 bits."""
    import math
    mpmath = pytest.importorskip("mpmath")

    def sig(x):
        return 1 / (1 + np.exp(-x))

    erfc = np.vectorize(math.erfc)
    exact = {"tanh": lambda x: (lambda e: 4 * e / (1 + e) ** 2)(np.exp(-2 * np.abs(x))),
             "sigmoid": lambda x: (lambda e: e / (1 + e) ** 2)(np.exp(-np.abs(x))),
             "gelu": lambda x: 0.5 * erfc(-x / math.sqrt(2)) + x * np.exp(-x * x / 2) / math.sqrt(2 * math.pi),
             "silu": lambda x: sig(x) * (1 + x * sig(-x))}
    points = rng.standard_normal(100000) * rng.choice([0.01, 1.0, 4.0, 12.0], 100000)
    for name, d in exact.items():
        m = keel.compile(f"fn f(x: Tensor<f32, [N]>) -> Tensor<f32, []> {{ return sum({name}(x), axis: 0); }}")
        x = points.astype(np.float32)
        _, g = m.value_and_grad("f", ["x"])(x)
        want = d(x.astype(np.float64))
        ok = np.abs(want) > 1e-35
        ulps = np.abs(g[ok] - want[ok]) / np.spacing(np.abs(want[ok]).astype(np.float32)).astype(np.float64)
        assert ulps.max() <= 1.0, (name, float(ulps.max()), float(x[ok][ulps.argmax()]))
    mpmath.mp.prec = 200
    slow = {"tanh": lambda v: 1 / mpmath.cosh(v) ** 2,
            "sigmoid": lambda v: (lambda s: s * (1 - s))(1 / (1 + mpmath.exp(-v)))}
    x = points[:2000]
    for name, d in slow.items():
        m = keel.compile(f"fn f(x: Tensor<f64, [N]>) -> Tensor<f64, []> {{ return sum({name}(x), axis: 0); }}")
        _, g = m.value_and_grad("f", ["x"])(x)
        for got, v in zip(g, x):
            want = d(mpmath.mpf(float(v)))
            assert abs(mpmath.mpf(float(got)) - want) <= 4 * np.spacing(abs(float(want))), (name, v)
