#!/usr/bin/env bash
# Builds the pinned StableHLO validator that the StableHLO exit's tests use:
# stablehlo-opt and stablehlo-translate of StableHLO 1.13.8 (openxla/stablehlo
# commit 6b4e61fe6), against Debian 12's MLIR 22 packages. A test tool only:
# Keel never needs it, and its tests are unsupported where it is absent.
#
#   scripts/stablehlo-tools.sh SOURCE_DIR PREFIX
#
# SOURCE_DIR: a git clone (or mirror) of openxla/stablehlo holding that
# commit. The tree is extracted with `git archive` without docs/ and rfcs/
# (a fetched mirror may lack large files there, so a plain checkout fails:
# ../shared/spec/README.md §7). PREFIX/bin receives the two tools; point the
# tests at them with KEEL_STABLEHLO_BIN=PREFIX/bin. 20-35 minutes on 2 cores.
set -euo pipefail
if [ $# -ne 2 ]; then
  echo "usage: scripts/stablehlo-tools.sh SOURCE_DIR PREFIX" >&2
  exit 2
fi
source_dir=$1
prefix=$(realpath -m "$2")
commit=6b4e61fe6
cd "$(dirname "$0")/.."
source scripts/packages.sh
ensure_packages cmake ninja-build clang-22 lld-22 libmlir-22-dev mlir-22-tools llvm-22-dev zlib1g-dev libzstd-dev
# (LLVM's CMake package needs zstd's; Keel's own build does not use it)

if ! git -C "$source_dir" cat-file -e "$commit^{commit}" 2>/dev/null; then
  echo "stablehlo-tools.sh: $source_dir has no commit $commit (StableHLO 1.13.8)" >&2
  exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
paths=$(git -C "$source_dir" ls-tree --name-only "$commit" | grep -v -x -e docs -e rfcs)
# shellcheck disable=SC2086
# (git archive names the docs/ blobs a mirror lacks even though it leaves
# them out; that message is dropped, any other kept.)
git -C "$source_dir" archive "$commit" $paths 2> >(grep -v "^error: invalid object .* for 'docs/" >&2) |
  tar -x -C "$work"
cmake -S "$work" -B "$work/build" -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
  -DSTABLEHLO_ENABLE_LLD=ON \
  -DSTABLEHLO_ENABLE_BINDINGS_PYTHON=OFF \
  -DMLIR_DIR=/usr/lib/llvm-22/lib/cmake/mlir >/dev/null
cmake --build "$work/build" -j2 --target stablehlo-opt stablehlo-translate
mkdir -p "$prefix/bin"
install -m 755 "$work/build/bin/stablehlo-opt" "$work/build/bin/stablehlo-translate" "$prefix/bin/"
"$prefix/bin/stablehlo-translate" --version >/dev/null 2>&1 || true
echo "installed $prefix/bin/stablehlo-opt and stablehlo-translate (StableHLO 1.13.8)"
