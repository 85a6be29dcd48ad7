//===- keel/support/Effects.h - The effects a function may declare -*- C++ -*-===//
//
// `fn f(...) -> T ![gpu, io]`: what a function may do besides computing.
// One table for the checker (E0120, unknown names) and the tensor IR, whose
// functions carry their declared effects (an exit may require one: the
// StableHLO exit emits only for `![gpu]`).
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_SUPPORT_EFFECTS_H
#define KEEL_SUPPORT_EFFECTS_H

#include <string_view>

namespace keel {

inline constexpr std::string_view kEffectNames[] = {"clock", "gpu", "io", "model", "net", "rand"};

constexpr bool isEffectName(std::string_view name) {
  for (std::string_view e : kEffectNames)
    if (name == e)
      return true;
  return false;
}

} // namespace keel

#endif // KEEL_SUPPORT_EFFECTS_H
