#!/usr/bin/env bash
# Sets up and builds Keel, then runs its main job on shipped examples: how
# well-known values round in every format Keel knows, and the transformer
# example checked for every size and instantiated as tensor IR.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
keel=build/src/driver/keel
echo "== keel fp show < examples/fp/well-known-values.txt"
$keel fp show < examples/fp/well-known-values.txt
echo
echo "== keel fp table fp8e4m3fn"
$keel fp table fp8e4m3fn
echo
echo "== keel check --stats examples/transformer.sfn   (shapes proved for every size)"
$keel check --stats examples/transformer.sfn
echo
echo "== keel ir examples/transformer.sfn --entry mlp --bind S=2,D=4,F=8"
$keel ir examples/transformer.sfn --entry mlp --bind S=2,D=4,F=8
