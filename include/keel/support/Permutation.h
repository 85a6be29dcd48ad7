//===- keel/support/Permutation.h - Permutations of dimensions ---*- C++ -*-===//
//
// One check for every permutation of dimensions Keel meets: a transpose's
// `perm` (checked in source and in IR) and a layout's minor_to_major.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SUPPORT_PERMUTATION_H
#define KEEL_SUPPORT_PERMUTATION_H

#include <algorithm>
#include <cstdint>
#include <vector>

namespace keel {

/// Whether `dims` holds each of 0..rank-1 exactly once.
inline bool isPermutation(const std::vector<int64_t> &dims, size_t rank) {
  if (dims.size() != rank)
    return false;
  std::vector<int64_t> sorted = dims;
  std::sort(sorted.begin(), sorted.end());
  for (size_t i = 0; i < sorted.size(); ++i)
    if (sorted[i] != static_cast<int64_t>(i))
      return false;
  return true;
}

} // namespace keel

#endif // KEEL_SUPPORT_PERMUTATION_H
