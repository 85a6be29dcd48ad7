#!/usr/bin/env bash
# Sets up and builds Keel, then runs its main job on the shipped examples:
# the transformer block of examples/transformer.sfn, type-checked for every
# size and run end to end on generated inputs through the CPU oracle; a
# tensor function run on .npy-style arguments, through the MLIR linalg exit,
# and as StableHLO; how well-known values round in every format Keel knows.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
keel=build/src/driver/keel
echo "== keel check --stats examples/transformer.sfn   (shapes proved for every size)"
$keel check --stats examples/transformer.sfn
echo
echo "== keel run examples/transformer.sfn   (main: the block on generated inputs)"
$keel run examples/transformer.sfn
echo
echo "== keel run examples/transformer.sfn --entry softmax --arg x=random:7 --bind S=2,T=5"
$keel run examples/transformer.sfn --entry softmax --arg x=random:7 --bind S=2,T=5
echo
echo "== keel emit --linalg ... --main | scripts/mlir-run.sh   (the same softmax as MLIR linalg, run by MLIR's own tools; f32 bit patterns)"
$keel emit --linalg examples/transformer.sfn --entry softmax --bind S=2,T=5 --main --arg x=random:7 | scripts/mlir-run.sh
echo
echo "== keel emit --stablehlo examples/transformer.sfn --entry softmax --bind S=2,T=5   (StableHLO 1.13 for XLA / IREE)"
$keel emit --stablehlo examples/transformer.sfn --entry softmax --bind S=2,T=5
echo
echo "== keel ir examples/transformer.sfn --entry mlp --bind S=2,D=4,F=8"
$keel ir examples/transformer.sfn --entry mlp --bind S=2,D=4,F=8
echo
echo "== keel fp show < examples/fp/well-known-values.txt"
$keel fp show < examples/fp/well-known-values.txt
