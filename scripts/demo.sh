#!/usr/bin/env bash
# Sets up and builds Keel, then runs its main job on a shipped example: how
# well-known values round in every format Keel knows.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh >/dev/null
echo "== keel fp show < examples/fp/well-known-values.txt"
build/src/driver/keel fp show < examples/fp/well-known-values.txt
echo
echo "== keel fp table fp8e4m3fn"
build/src/driver/keel fp table fp8e4m3fn
