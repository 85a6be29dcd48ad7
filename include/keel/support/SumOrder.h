//===- keel/support/SumOrder.h - The fixed orders of a sum's terms -*- C++ -*-===//
//
// The orders in which a sum (the source's sum, mean and matmul; the IR's
// reduce.sum and dot_general) adds its terms, their names (the source's
// `order:`, the IR's `order =`, the command line's --default-order), and
// the tree order's constants (docs/semantics.md "The tree order"). The
// checker, the tensor IR, the CPU exit and legalization share this one
// definition.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SUPPORT_SUMORDER_H
#define KEEL_SUPPORT_SUMORDER_H

#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace keel {

/// Sequential: index 0 upward (the default). Tree: 16 lanes per 4096-term
/// chunk (term j of a chunk to lane j mod 16), the lanes halved, then a
/// balanced tree over the chunks. Both are one fixed function of the inputs.
enum class SumOrder : uint8_t { Sequential, Tree };

/// The tree order's chunk length and lane count.
inline constexpr int64_t kTreeChunk = 4096, kTreeLanes = 16;

inline constexpr std::string_view kSumOrderNames[] = {"sequential", "tree"};

constexpr std::string_view sumOrderName(SumOrder o) { return kSumOrderNames[static_cast<size_t>(o)]; }

constexpr std::optional<SumOrder> parseSumOrder(std::string_view s) {
  for (size_t i = 0; i < std::size(kSumOrderNames); ++i)
    if (kSumOrderNames[i] == s)
      return static_cast<SumOrder>(i);
  return std::nullopt;
}

} // namespace keel

#endif // KEEL_SUPPORT_SUMORDER_H
