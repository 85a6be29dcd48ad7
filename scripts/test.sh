#!/usr/bin/env bash
# Sets up and builds Keel, then runs the whole test suite (every label:
# unit, crosscheck, cli, exhaustive) with two jobs.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
cd build
ctest -j2 --output-on-failure --timeout 900 "$@"
