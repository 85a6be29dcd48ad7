#!/usr/bin/env bash
# Runs one libFuzzer target for a while (docs/reliability.md):
#   scripts/fuzz.sh TARGET SECONDS [LIBFUZZER-ARGS...]
# TARGET: source, ir, npy, decimal, fp_lines (or `all`, each for SECONDS).
# Builds build-fuzz/ with clang-22 (-fsanitize=fuzzer,address,undefined),
# starts from the committed seeds in fuzz/corpus/TARGET and keeps what it
# learns in build-fuzz/corpus/TARGET. A crash leaves its input in
# build-fuzz/crashes/ and exits non-zero; reproduce it with
#   build-fuzz/fuzz/fuzz_TARGET build-fuzz/crashes/crash-...
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/packages.sh
if [ $# -lt 2 ] || ! [[ "$2" =~ ^[0-9]+$ ]]; then
  echo "usage: scripts/fuzz.sh source|ir|npy|decimal|fp_lines|all SECONDS [LIBFUZZER-ARGS...]" >&2
  exit 2
fi
target=$1 seconds=$2
shift 2
targets=(source ir npy decimal fp_lines)
if [ "$target" != all ]; then
  [[ " ${targets[*]} " == *" $target "* ]] || { echo "fuzz.sh: unknown target '$target' (${targets[*]} or all)" >&2; exit 2; }
  targets=("$target")
fi
ensure_packages clang-22 libclang-rt-22-dev libomp-22-dev
CC=clang-22 CXX=clang++-22 KEEL_TARGET=fuzzers bash scripts/setup.sh build-fuzz -DKEEL_FUZZ=ON \
  -DKEEL_BUILD_TESTS=OFF -DKEEL_BUILD_BENCHMARKS=OFF
mkdir -p build-fuzz/crashes
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  echo "== fuzz_$t for ${seconds}s"
  # Under CI the progress lines (NEW, REDUCE) are left out of the log;
  # reports and the final statistics stay.
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    "build-fuzz/fuzz/fuzz_$t" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -print_final_stats=1 \
    -artifact_prefix=build-fuzz/crashes/ "$@" "build-fuzz/corpus/$t" "fuzz/corpus/$t" 2>&1 |
    if [ -n "${CI:-}" ]; then grep -v -E '^#[0-9]+[[:space:]]+(NEW|REDUCE) ' || true; else cat; fi
done
