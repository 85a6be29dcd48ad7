#!/usr/bin/env bash
# Installs what Keel needs from Debian 12's packages (as root, only what is
# missing), then configures and builds Keel with two jobs.
#   scripts/setup.sh                      build/ (RelWithDebInfo)
#   scripts/setup.sh DIR CMAKE-ARGS...    another build folder and options
#                                         (scripts/test.sh --sanitize, scripts/fuzz.sh);
#                                         KEEL_TARGET=T builds target T alone
# Used by scripts/demo.sh, scripts/test.sh, scripts/fuzz.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/packages.sh

ensure_packages \
  g++ cmake ninja-build pkg-config python3 \
  llvm-22-dev llvm-22-tools \
  libz3-dev \
  libgtest-dev libmpfr-dev \
  python3-numpy \
  python3-dev pybind11-dev libdlpack-dev \
  mlir-22-tools
# toolchain (lit runs on python3); APFloat cross-check, lit, FileCheck; shape
# obligations; tests and their MPFR reference; .npy interoperability tests
# and the Python module's arrays; the Python module (`import keel`,
# docs/python.md); MLIR's own mlir-opt and mlir-runner, which run the linalg
# exit's output in its tests (Keel itself builds and runs without MLIR)

build_dir=${1:-build}
if [ $# -gt 0 ]; then shift; fi
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
cmake --build "$build_dir" -j2 ${KEEL_TARGET:+--target "$KEEL_TARGET"}
