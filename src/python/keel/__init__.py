"""Keel from Python: compile and run Keel tensor functions on NumPy arrays
and PyTorch tensors, in-process, with Keel's shape errors and exact numerics.

    import keel
    m = keel.load("examples/transformer.sfn")    # parsed and checked once
    y = m.softmax(x)                              # compiled once per sizes and dtypes
    y = m["multi_head_attention"](x, wq, wk, wv, wo, threads=2)
    print(m.stablehlo("softmax", S=2, T=5))       # the texts `keel emit` prints

docs/python.md is the reference.
"""
import numpy as _np

from ._keel import (  # noqa: F401  (the package's interface)
    ArgumentError,
    CompileError,
    Error,
    Function,
    ShapeError,
    reset_stats,
    set_threads,
    stats,
    threads,
)
from . import _keel

__all__ = [
    "load", "compile", "Module", "Signature", "ShapeCheck", "Error", "CompileError", "ShapeError",
    "ArgumentError", "bf16", "f16", "tf32", "fp8e4m3fn", "fp8e5m2", "to_float32", "to_torch", "dtype",
    "stats", "reset_stats", "set_threads", "threads",
]


def load(path):
    """Parses and checks the .sfn file at `path`; raises keel.CompileError
    (whose .diagnostics are `keel check --json`'s records) when it has
    errors, OSError when it cannot be read."""
    return Module(_keel.load(str(path)))


def compile(source, name="<string>"):  # noqa: A001 (the name the issue asks for)
    """As load, from source text; `name` is the file name messages show."""
    return Module(_keel.compile(source, name))


class Signature:
    """A function's interface as written: its parameters (name, type,
    dtype, dims), dimension parameters, requires clause, result type."""

    def __init__(self, info):
        self.name = info["name"]
        self.params = info["params"]
        self.dim_params = info["dim_params"]
        self.requires = info["requires"]
        self.result = info["result"]
        self.location = info["location"]

    def __str__(self):
        dims = "<" + ", ".join(self.dim_params) + ">" if self.dim_params else ""
        params = ", ".join(p["name"] + ": " + p["type"] for p in self.params)
        text = "fn " + self.name + dims + "(" + params + ")"
        if self.result != "void":
            text += " -> " + self.result
        if self.requires:
            text += " requires " + ", ".join(self.requires)
        return text

    def __repr__(self):
        return "<keel.Signature " + str(self) + ">"


class ShapeCheck:
    """Whether a function accepts shapes: true or false, and when false the
    message a call would raise as keel.ShapeError."""

    def __init__(self, ok, message):
        self.ok = ok
        self.message = message

    def __bool__(self):
        return self.ok

    def __repr__(self):
        return "<keel.ShapeCheck accepted>" if self.ok else "<keel.ShapeCheck: " + self.message + ">"


class Module:
    """A checked source file. Its functions are attributes (`m.softmax`)
    and items (`m["softmax"]`); each call compiles once per (function,
    sizes, dtypes) and reads its arrays in place where their layout fits."""

    def __init__(self, native):
        object.__setattr__(self, "_native", native)

    @property
    def path(self):
        return self._native.path

    @property
    def functions(self):
        """The functions' names, in declaration order."""
        return list(self._native.names)

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        try:
            f = self._native.function(name)
        except KeyError as e:
            raise AttributeError(e.args[0]) from None
        object.__setattr__(self, name, f)  # the next lookup is a plain attribute
        return f

    def __getitem__(self, name):
        return self._native.function(name)

    def __contains__(self, name):
        return name in self._native.names

    def __dir__(self):
        return sorted(set(object.__dir__(self)) | set(self._native.names))

    def __repr__(self):
        return "<keel.Module " + self.path + ": " + ", ".join(self._native.names) + ">"

    def value_and_grad(self, name, wrt):
        """`name`'s value and its gradient with respect to the parameters
        `wrt` (names), from one forward and one backward sweep: a callable
        that takes `name`'s arguments and returns (value, grad, ...), the
        gradients in the order of `wrt` (docs/autodiff.md). `name` returns
        one f32 or f64 scalar."""
        if isinstance(wrt, str):
            wrt = [wrt]
        return self._native.value_and_grad(name, list(wrt))

    def signature(self, name):
        """The parameters of `name` with their symbolic shapes, its
        dimension parameters and its requires clause."""
        return Signature(self._native.info(name))

    def ir(self, name, *shapes, fuse=False, locations=False, **sizes):
        """The tensor IR of `name` at the given sizes (`keel ir`): sizes as
        keywords (S=2), or arrays or shape tuples for its parameters."""
        return self._native.text("ir", name, *shapes, fuse=fuse, locations=locations, **sizes)

    def stablehlo(self, name, *shapes, version=None, allow_reorder=False, **sizes):
        """StableHLO text of `name` (`keel emit --stablehlo`)."""
        extra = {} if version is None else {"version": version}
        return self._native.text("stablehlo", name, *shapes, allow_reorder=allow_reorder, **extra, **sizes)

    def linalg(self, name, *shapes, keel_math=False, **sizes):
        """MLIR linalg text of `name` (`keel emit --linalg`)."""
        return self._native.text("linalg", name, *shapes, keel_math=keel_math, **sizes)

    def check_shapes(self, name, *shapes, **sizes):
        """Whether `name` accepts these shapes (tuples, or arrays) and sizes:
        a ShapeCheck, false with the counterexample-style message when not."""
        ok, message = self._native.check_shapes(name, *shapes, **sizes)
        return ShapeCheck(ok, message)


# -- Low-precision arrays ----------------------------------------------------

def dtype(name):
    """The NumPy dtype Keel's arrays of element type `name` have: NumPy's
    own (float16, float32, ...) or Keel's one-field structured dtype
    ([('bf16', '<u2')]) for bf16, tf32, fp8e4m3fn, fp8e5m2 and i4, the
    same as in Keel's .npy files."""
    structured = {"bf16": "<u2", "tf32": "<u4", "fp8e4m3fn": "|u1", "fp8e5m2": "|u1", "i4": "|i1"}
    if name in structured:
        return _np.dtype([(name, structured[name])])
    return _np.dtype({"f16": "<f2", "f32": "<f4", "f64": "<f8", "pred": "?"}.get(name, name))


def _converter(name):
    def convert(a):
        return _keel.convert(name, _np.require(a, requirements=["C", "A"]))
    convert.__name__ = name
    convert.__doc__ = ("`a` (float or integer) as " + name + ", each element rounded once to nearest even "
                       "as `x as " + name + "` rounds in Keel" +
                       (" (beyond the range: saturated to +-448)" if name == "fp8e4m3fn" else "") + ".")
    return convert


bf16 = _converter("bf16")
f16 = _converter("float16")
f16.__name__ = "f16"
tf32 = _converter("tf32")
fp8e4m3fn = _converter("fp8e4m3fn")
fp8e5m2 = _converter("fp8e5m2")


def to_float32(a):
    """A floating array's values as float32: exact from f16, bf16, tf32
    and the fp8 formats (and f32); f64 rounds once to nearest even."""
    return _keel.to_float32(_np.require(a, requirements=["C", "A"]))


def to_torch(a):
    """A Keel result (a NumPy array) as a PyTorch tensor sharing its memory:
    bf16 as torch.bfloat16, f16 as torch.float16, tf32 as its float32
    carrier; fp8 as PyTorch's float8 types where it has them."""
    import torch
    if a.dtype.names is None:
        return torch.from_numpy(a)
    field = a.dtype.names[0]
    storage = a.view(a.dtype.fields[field][0])
    if field == "bf16":
        return torch.from_numpy(storage.view(_np.int16)).view(torch.bfloat16)
    if field == "tf32":
        return torch.from_numpy(storage.view(_np.float32))
    if field == "i4":
        return torch.from_numpy(storage)
    kind = {"fp8e4m3fn": "float8_e4m3fn", "fp8e5m2": "float8_e5m2"}[field]
    if not hasattr(torch, kind):
        raise TypeError("this PyTorch (" + torch.__version__ + ") has no " + kind +
                        "; keel.to_float32(a) gives the values as float32")
    return torch.from_numpy(storage).view(getattr(torch, kind))
