#!/usr/bin/env bash
# Runs the module `keel emit --linalg --main` prints, with MLIR 22's own
# tools only: the upstream pipeline of docs/exits.md (bufferize, linalg to
# loops, everything to the LLVM dialect), then mlir-runner's JIT.
#
#   keel emit --linalg F.sfn --entry f --main --arg x=random:1 | scripts/mlir-run.sh
#   scripts/mlir-run.sh [--keel-math LIB] [--lower-only] [FILE.mlir]
#
#   --keel-math LIB   load Keel's functions (build/src/numerics/libkeel_math.so)
#                     for a module emitted with --keel-math
#   --lower-only      print the LLVM-dialect module instead of running it
# Tools: $KEEL_MLIR_BIN, else /usr/lib/llvm-22/bin (Debian's mlir-22-tools).
set -euo pipefail
bin=${KEEL_MLIR_BIN:-/usr/lib/llvm-22/bin}
libs=""
lower_only=0
input=-
while [ $# -gt 0 ]; do
  case "$1" in
    --keel-math) libs=",$2"; shift 2 ;;
    --lower-only) lower_only=1; shift ;;
    -*) echo "mlir-run.sh: unknown option $1" >&2; exit 2 ;;
    *) input=$1; shift ;;
  esac
done
for tool in mlir-opt mlir-runner; do
  if [ ! -x "$bin/$tool" ]; then
    echo "mlir-run.sh: $bin/$tool not found (apt-get install mlir-22-tools, or set KEEL_MLIR_BIN)" >&2
    exit 2
  fi
done
libdir=$(dirname "$(readlink -f "$bin/mlir-opt")")/../lib
runtime=$(ls "$libdir"/libmlir_c_runner_utils.so* 2>/dev/null | head -n 1)
if [ -z "$runtime" ]; then
  echo "mlir-run.sh: libmlir_c_runner_utils.so not found under $libdir (Debian's libmlir-22)" >&2
  exit 2
fi
# The documented pipeline (docs/exits.md): one-shot bufferization across
# function boundaries, linalg to loops in index order, then every dialect to
# LLVM; math to LLVM intrinsics where it has them, the rest (tanh, erf) to
# libm calls.
pipeline=(
  --one-shot-bufferize=bufferize-function-boundaries
  --buffer-deallocation-pipeline
  --convert-bufferization-to-memref
  --convert-linalg-to-loops
  --convert-scf-to-cf
  --expand-strided-metadata
  --lower-affine
  --convert-math-to-llvm
  --convert-math-to-libm
  --convert-to-llvm
  --reconcile-unrealized-casts
)
if [ "$lower_only" = 1 ]; then
  exec "$bin/mlir-opt" "$input" "${pipeline[@]}"
fi
"$bin/mlir-opt" "$input" "${pipeline[@]}" |
  "$bin/mlir-runner" -e main -entry-point-result=void "-shared-libs=$runtime$libs"
