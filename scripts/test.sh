#!/usr/bin/env bash
# Sets up and builds Keel, then runs the test suite (the labels unit,
# crosscheck, cli, python) with two jobs. Extra arguments go to ctest in place of
# the default selection (`-L unit`; `-L "exhaustive|sweep"` runs the sweeps
# over every f32 input, which .ci/run runs after this).
#
#   scripts/test.sh --sanitize [CTEST-ARGS...]
#     builds build-sanitize/ with AddressSanitizer, LeakSanitizer and
#     UndefinedBehaviorSanitizer and runs every label but the exhaustive
#     sweeps; any report fails the test that made it (docs/reliability.md).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--sanitize" ]; then
  shift
  bash scripts/setup.sh build-sanitize -DKEEL_SANITIZE=ON -DKEEL_BUILD_BENCHMARKS=OFF
  export ASAN_OPTIONS="detect_leaks=1:halt_on_error=1:detect_stack_use_after_return=0"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  export LSAN_OPTIONS="suppressions=$PWD/scripts/lsan.supp"
  # Fewer random programs (tests/run/random-programs.test and its
  # gradients, tests/exits/linalg-random.test) under the
  # sanitizers, which slow every compilation several times.
  export KEEL_FUZZ_ITERATIONS="${KEEL_FUZZ_ITERATIONS:-4}"
  export KEEL_GRAD_ITERATIONS="${KEEL_GRAD_ITERATIONS:-4}"
  export KEEL_LINALG_ITERATIONS="${KEEL_LINALG_ITERATIONS:-2}"
  cd build-sanitize
  exec ctest -j2 --output-on-failure --timeout 1800 -LE "exhaustive|sweep" "$@"
fi
bash scripts/setup.sh
# The Python module's tests: pytest, and PyTorch for its DLPack tests (a
# test dependency only; Keel never needs it).
source scripts/packages.sh
ensure_packages python3-pytest python3-torch
cd build
if [ $# -eq 0 ]; then
  set -- -LE "exhaustive|sweep"
fi
ctest -j2 --output-on-failure --timeout 900 "$@"
