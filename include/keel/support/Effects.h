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

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace keel {

/// In the order they are listed (by name).
enum class Effect : uint8_t { Clock, Gpu, Io, Model, Net, Rand };

inline constexpr std::string_view kEffectNames[] = {"clock", "gpu", "io", "model", "net", "rand"};
inline constexpr size_t kNumEffects = sizeof kEffectNames / sizeof *kEffectNames;

constexpr std::string_view effectName(Effect e) { return kEffectNames[static_cast<size_t>(e)]; }

constexpr std::optional<Effect> parseEffect(std::string_view name) {
  for (size_t i = 0; i < kNumEffects; ++i)
    if (kEffectNames[i] == name)
      return static_cast<Effect>(i);
  return std::nullopt;
}

/// A set of effects, one bit each.
class EffectSet {
public:
  constexpr EffectSet() = default;
  constexpr EffectSet(std::initializer_list<Effect> effects) {
    for (Effect e : effects)
      insert(e);
  }

  constexpr bool contains(Effect e) const { return bits_ & bit(e); }
  constexpr void insert(Effect e) { bits_ = static_cast<uint8_t>(bits_ | bit(e)); }
  constexpr bool empty() const { return bits_ == 0; }
  constexpr EffectSet operator|(EffectSet o) const { return fromBits(static_cast<uint8_t>(bits_ | o.bits_)); }
  /// The effects of this set that `o` lacks.
  constexpr EffectSet without(EffectSet o) const { return fromBits(static_cast<uint8_t>(bits_ & ~o.bits_)); }
  constexpr size_t size() const {
    size_t n = 0;
    for (size_t i = 0; i < kNumEffects; ++i)
      n += contains(static_cast<Effect>(i)) ? 1 : 0;
    return n;
  }
  constexpr bool operator==(const EffectSet &o) const { return bits_ == o.bits_; }
  /// `gpu, io`: the names, in the table's order.
  std::string text() const {
    std::string s;
    for (size_t i = 0; i < kNumEffects; ++i)
      if (contains(static_cast<Effect>(i)))
        s += (s.empty() ? "" : ", ") + std::string(kEffectNames[i]);
    return s;
  }

private:
  static constexpr uint8_t bit(Effect e) { return static_cast<uint8_t>(1u << static_cast<unsigned>(e)); }
  static constexpr EffectSet fromBits(uint8_t b) {
    EffectSet s;
    s.bits_ = b;
    return s;
  }
  uint8_t bits_ = 0;
};

} // namespace keel

#endif // KEEL_SUPPORT_EFFECTS_H
