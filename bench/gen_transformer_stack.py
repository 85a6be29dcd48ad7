#!/usr/bin/env python3
"""Writes a Keel program: a stack of LAYERS pre-norm transformer blocks,
unrolled into one function with symbolic shapes (S, D, F, H, Dh), for the
shape-checking benchmark (bench/shape_check_bench.sh). Prints the number of
tensor operations it wrote to stderr.

usage: gen_transformer_stack.py [--calls] LAYERS > stack.sfn

With --calls, the layers are calls of examples/transformer.sfn's
transformer_block instead (each call binds shapes and proves the callee's
requires clause in the caller's context).
"""
import os
import sys


def main() -> int:
    args = sys.argv[1:]
    calls = bool(args) and args[0] == "--calls"
    if calls:
        args = args[1:]
    if len(args) != 1 or not args[0].isdigit() or int(args[0]) < 1:
        print(__doc__, file=sys.stderr)
        return 2
    layers = int(args[0])
    out = []
    ops = 0
    if calls:
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        with open(os.path.join(root, "examples", "transformer.sfn")) as example:
            out.append(example.read())

    def emit(line: str, count: int) -> None:
        nonlocal ops
        out.append("    " + line)
        ops += count

    out.append("fn stack(x: Tensor<f32, [S, D]>, gamma: Tensor<f32, [D]>, beta: Tensor<f32, [D]>,")
    out.append("         wq: Tensor<f32, [D, H, Dh]>, wk: Tensor<f32, [D, H, Dh]>, wv: Tensor<f32, [D, H, Dh]>,")
    out.append("         wo: Tensor<f32, [H, Dh, D]>, w1: Tensor<f32, [D, F]>, b1: Tensor<f32, [F]>,")
    out.append("         w2: Tensor<f32, [F, D]>, b2: Tensor<f32, [D]>) -> Tensor<f32, [S, D]>")
    out.append("    requires D % H == 0, Dh == D / H {")
    emit("let h0 = x;", 0)
    for i in range(layers if calls else 0):
        emit(f"let h{i + 1} = transformer_block(h{i}, gamma, beta, wq, wk, wv, wo, gamma, beta, w1, b1, w2, b2);", 1)
    for i in range(0 if calls else layers):
        h, n = f"h{i}", f"h{i + 1}"
        p = f"l{i}_"
        # layer norm: sum, div, cast, sub, mul, sum, div, cast, add, rsqrt, mul, mul, add
        emit(f"let {p}mean = sum({h}, axis: 1, keepdims: true) / (D as f32);", 3)
        emit(f"let {p}c = {h} - {p}mean;", 1)
        emit(f"let {p}var = sum({p}c * {p}c, axis: 1, keepdims: true) / (D as f32);", 4)
        emit(f"let {p}ln = {p}c * rsqrt({p}var + 0.00001) * gamma + beta;", 5)
        # attention: 3 x (reshape, matmul, reshape, transpose)
        for name, perm in (("q", "[1, 0, 2]"), ("k", "[1, 2, 0]"), ("v", "[1, 0, 2]")):
            emit(f"let {p}{name} = transpose(reshape(matmul({p}ln, reshape(w{name}, [D, H * Dh])), "
                 f"[S, H, Dh]), {perm});", 4)
        emit(f"let {p}s = matmul({p}q, {p}k) / sqrt(Dh as f32);", 4)
        emit(f"let {p}flat = reshape({p}s, [H * S, S]);", 1)
        emit(f"let {p}e = exp({p}flat - max({p}flat, axis: 1, keepdims: true));", 3)
        emit(f"let {p}w = reshape({p}e / sum({p}e, axis: 1, keepdims: true), [H, S, S]);", 3)
        emit(f"let {p}ctx = reshape(transpose(matmul({p}w, {p}v), [1, 0, 2]), [S, H * Dh]);", 3)
        emit(f"let {p}a = {h} + matmul({p}ctx, reshape(wo, [H * Dh, D]));", 3)
        # MLP with residual
        emit(f"let {n} = {p}a + matmul(gelu(matmul({p}a, w1) + b1), w2) + b2;", 7)
    emit(f"return h{layers};", 0)
    out.append("}")
    print("\n".join(out))
    what = "calls of transformer_block" if calls else "tensor operations"
    print(f"{ops} {what} in {layers} layers", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
