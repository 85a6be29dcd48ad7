//===- StableHlo.cpp - The StableHLO exit --------------------------------===//
//
// Each function of the tensor IR becomes a func.func of StableHLO
// operations over whole tensors. Fusion regions, copies and relayouts are
// flattened away first (a region's parameters and results, a copy's and a
// relayout's result are names for other values), then the function is
// checked for what StableHLO cannot express (tf32 outside a contraction)
// and each operation written out with Keel's meaning (`Code`).
//
//===----------------------------------------------------------------------===//
#include "keel/exits/StableHlo.h"

#include "MlirModule.h"
#include "keel/exits/MlirText.h"
#include "keel/ir/Infer.h"
#include "keel/ir/Text.h"
#include "keel/support/Effects.h"

#include <algorithm>
#include <charconv>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <stdexcept>
#include <unordered_map>

namespace keel::exits {

using namespace ir;
using detail::commaList;
using detail::SsaNames;

namespace {

constexpr Integers kInts = Integers::Unsigned;

using Shape = std::vector<int64_t>;

std::string tensorOf(DType t, const Shape &shape) { return mlirTensorType(TensorType::make(t, shape), kInts); }

std::string shapeSuffix(DType t, const Shape &shape) { // `4x16xf32`, `f32`: the type inside `tensor<...>`
  std::string type = tensorOf(t, shape);
  return type.substr(7, type.size() - 8);
}

std::string csv(const std::vector<int64_t> &v) { // `0, 2`
  std::vector<std::string> text;
  for (int64_t x : v)
    text.push_back(std::to_string(x));
  return commaList(text);
}
std::string list(const std::vector<int64_t> &v) { return "[" + csv(v) + "]"; }

/// A function type's results, as after `->`: `tensor<f32>` or `(A, B)`.
bool isFloat(DType t) { return isFloatType(t); }

const fp::FormatInfo &formatInfo(DType t) { return fp::info(*formatOf(t)); }

/// Every value of integer dtype `from` is a value of integer dtype `to`.
bool intFits(DType from, DType to) {
  int a = encodingBits(from), b = encodingBits(to);
  if (isSignedType(from) == isSignedType(to))
    return b >= a;
  return !isSignedType(from) && b > a;
}


/// Module-wide state: the decomposition functions of composites, by name;
/// the StableHLO ops (and versioned features) written for each IR op, for
/// --target-version.
struct ModuleState {
  bool allowReorder = false; ///< StableHloOptions::allowReorder
  std::map<std::string, std::string> decompositions;
  struct Use {
    std::string feature; ///< a mnemonic (`composite`) or a StableHloVersions.def feature
    const Function *function;
    const Op *op; ///< null for a function's own (its signature, return, call)
  };
  std::vector<Use> uses;
  const Function *function = nullptr;
  const Op *op = nullptr;
  /// Records every `stablehlo.NAME` a line of text writes (outside the
  /// file names of its locations: `loc("stablehlo.kir":1:1)`).
  void note(const std::string &text) {
    for (size_t at = nextUse(text, 0); at != std::string::npos; at = nextUse(text, at + 1)) {
      size_t end = at + 10;
      while (end < text.size() && (std::islower(static_cast<unsigned char>(text[end])) || text[end] == '_'))
        ++end;
      uses.push_back({text.substr(at + 10, end - at - 10), function, op});
    }
  }
  static size_t nextUse(const std::string &text, size_t from) {
    for (size_t at = text.find("stablehlo.", from); at != std::string::npos; at = text.find("stablehlo.", at + 1)) {
      size_t loc = text.rfind("loc(\"", at);
      if (loc == std::string::npos)
        return at;
      size_t close = loc + 5; // the file name's closing quote (mlirLocation escapes `"` and `\`)
      while (close < text.size() && text[close] != '"')
        close += text[close] == '\\' ? 2 : 1;
      if (at > close)
        return at;
    }
    return std::string::npos;
  }
};

struct VersionRow {
  const char *name;
  StableHloVersion since;
};
constexpr VersionRow kOpVersions[] = {
#define KEEL_STABLEHLO_OP(NAME, MAJOR, MINOR, PATCH) {NAME, {MAJOR, MINOR, PATCH}},
#define KEEL_STABLEHLO_FEATURE(NAME, MAJOR, MINOR, PATCH)
#include "StableHloVersions.def"
};
constexpr VersionRow kFeatureVersions[] = {
#define KEEL_STABLEHLO_OP(NAME, MAJOR, MINOR, PATCH)
#define KEEL_STABLEHLO_FEATURE(NAME, MAJOR, MINOR, PATCH) {NAME, {MAJOR, MINOR, PATCH}},
#include "StableHloVersions.def"
};

std::optional<StableHloVersion> versionOf(const std::string &feature) {
  for (const VersionRow *table : {std::begin(kOpVersions), std::begin(kFeatureVersions)}) {
    const VersionRow *end = table == std::begin(kOpVersions) ? std::end(kOpVersions) : std::end(kFeatureVersions);
    for (const VersionRow *r = table; r != end; ++r)
      if (feature == r->name)
        return r->since;
  }
  return std::nullopt;
}

//===-- Element code over whole tensors ----------------------------------===//

/// Straight-line StableHLO in one block (a function body, a decomposition
/// or a reduction's body). Every operation computes on tensors of `shape`
/// and carries `loc`. Its values are the function's SsaNames: an
/// operation that gives a tensor IR value its result is written with that
/// value's name (`as`, which every writer below takes for the operation
/// it writes last); the rest are temporaries.
class Code {
public:
  Code(SsaNames &names, std::string indent, ModuleState &module)
      : names_(names), indent_(std::move(indent)), module_(module) {}

  Shape shape;
  std::string loc;

  std::string fresh() { return names_.fresh(); }
  std::string op(const std::string &rhs, const std::string &as = "") {
    std::string n = as.empty() ? fresh() : as;
    text_ += indent_ + n + " = " + rhs + loc + "\n";
    module_.note(rhs);
    return n;
  }
  void line(const std::string &text) {
    text_ += indent_ + text + loc + "\n";
    module_.note(text);
  }
  const std::string &text() const { return text_; }

  std::string ty(DType t) const { return tensorOf(t, shape); }

  //===-- Primitives -------------------------------------------------------===//

  /// A splat constant of one encoding (shared within the block).
  std::string splat(DType t, uint64_t encoding) {
    std::string key = ty(t) + "=" + mlirLiteral(t, encoding, kInts);
    auto it = constants_.find(key);
    if (it != constants_.end())
      return it->second;
    std::string n = op("stablehlo.constant dense<" + mlirLiteral(t, encoding, kInts) + "> : " + ty(t));
    constants_[key] = n;
    return n;
  }
  std::string number(DType t, double v) { // a float or integer splat of an exact value
    if (isFloat(t))
      return splat(t, fp::fromF64(*formatOf(t), v));
    return splat(t, static_cast<uint64_t>(static_cast<int64_t>(v)));
  }
  std::string un(const std::string &name, DType t, const std::string &x, const std::string &as = "") {
    return op("stablehlo." + name + " " + x + " : " + ty(t), as);
  }
  std::string bin(const std::string &name, DType t, const std::string &a, const std::string &b,
                  const std::string &as = "") {
    return op("stablehlo." + name + " " + a + ", " + b + " : " + ty(t), as);
  }
  std::string cmp(const char *dir, DType t, const std::string &a, const std::string &b, const std::string &as = "") {
    const char *kind = isFloat(t) ? "FLOAT" : isSignedType(t) ? "SIGNED" : "UNSIGNED";
    return op(std::string("stablehlo.compare ") + dir + ", " + a + ", " + b + ", " + kind + " : (" + ty(t) + ", " + ty(t) +
              ") -> " + ty(DType::Bool), as);
  }
  std::string sel(DType t, const std::string &c, const std::string &a, const std::string &b, const std::string &as = "") {
    return op("stablehlo.select " + c + ", " + a + ", " + b + " : " + ty(DType::Bool) + ", " + ty(t), as);
  }
  std::string cvt(DType from, DType to, const std::string &x, const std::string &as = "") {
    if (mlirElementType(from, kInts) == mlirElementType(to, kInts))
      return x;
    return op("stablehlo.convert " + x + " : (" + ty(from) + ") -> " + ty(to), as);
  }
  std::string bitcast(DType from, DType to, const std::string &x, const std::string &as = "") {
    return op("stablehlo.bitcast_convert " + x + " : (" + ty(from) + ") -> " + ty(to), as);
  }
  /// `call @f(args)`: the names of its results (`as` for one, else `%t4#0`, ...).
  std::vector<std::string> call(const std::string &symbol, const std::vector<std::string> &args,
                                const std::vector<std::string> &argTypes, const std::vector<std::string> &results,
                                const std::string &as = "") {
    std::string r = results.empty() ? "" : results.size() == 1 && !as.empty() ? as : fresh();
    line(detail::resultsDefined(r, results.size()) + "call " + detail::callText(symbol, args, argTypes, results));
    return detail::resultNames(r, results.size());
  }
  std::string either(const std::string &a, const std::string &b) { return b.empty() ? a : a.empty() ? b : bin("or", DType::Bool, a, b); }

  //===-- Keel's element semantics ------------------------------------------===//

  std::string convert(DType from, DType to, const std::string &x, const std::string &as = "");
  std::string unary(UnaryCode c, DType t, const std::string &x, const std::string &as = "");
  std::string binary(BinaryCode c, DType t, const std::string &a, const std::string &b, const std::string &as = "");
  std::string compare(CompareDir d, DType t, const std::string &a, const std::string &b, const std::string &as = "");
  /// An f32 holding the tf32 value nearest `x` (an f32): ties to even on
  /// the 13 dropped bits, an overflow carries into infinity, a NaN is the
  /// canonical NaN of its sign.
  std::string roundToTf32(const std::string &x, const std::string &as = "");
  /// The canonical NaN of `to` with the sign of `x` (a `from`).
  std::string canonicalNaN(DType from, DType to, const std::string &x);

private:
  std::string intToInt(DType from, DType to, const std::string &x, const std::string &as);
  std::string composite(UnaryCode c, DType t, const std::string &x, const std::string &as);

public:
  /// 1 / (1 + e) for x >= 0, else e / (1 + e), with e = exp(-|x|): no
  /// overflow, and no flush to zero below x = -88 (f32), where
  /// 1 / (1 + exp(-x)) underflows long before the result does. NaN in,
  /// NaN out.
  std::string sigmoid(DType t, const std::string &x, const std::string &as) {
    std::string e = un("exponential", t, un("negate", t, un("abs", t, x)));
    std::string denominator = bin("add", t, number(t, 1.0), e);
    std::string positive = cmp("GE", t, x, number(t, 0.0));
    return sel(t, positive, bin("divide", t, number(t, 1.0), denominator), bin("divide", t, e, denominator), as);
  }

private:
  SsaNames &names_;
  std::string indent_;
  ModuleState &module_;
  std::string text_;
  std::map<std::string, std::string> constants_; ///< type=literal -> name
};

std::string Code::intToInt(DType from, DType to, const std::string &x, const std::string &as) {
  if (intFits(from, to))
    return cvt(from, to, x, as);
  // Wrap explicitly (StableHLO leaves out-of-range conversions to the
  // consumer): the two's-complement bits of a 64-bit copy, masked.
  DType wide = isSignedType(from) ? DType::I64 : DType::U64;
  std::string w = cvt(from, wide, x);
  std::string u = wide == DType::I64 ? bitcast(DType::I64, DType::U64, w) : w;
  int bits = encodingBits(to);
  if (bits == 64)
    return isSignedType(to) ? bitcast(DType::U64, DType::I64, u, as) : u;
  std::string m = bin("and", DType::U64, u, splat(DType::U64, (uint64_t{1} << bits) - 1));
  if (!isSignedType(to))
    return cvt(DType::U64, to, m, as);
  std::string s = cvt(DType::U64, DType::I64, m);
  std::string high = cmp("GE", DType::I64, s, splat(DType::I64, uint64_t{1} << (bits - 1)));
  s = sel(DType::I64, high, bin("subtract", DType::I64, s, splat(DType::I64, uint64_t{1} << bits)), s);
  return cvt(DType::I64, to, s, as);
}

std::string Code::roundToTf32(const std::string &x, const std::string &as) {
  std::string bits = bitcast(DType::F32, DType::U32, x);
  std::string lsb = bin("and", DType::U32, bin("shift_right_logical", DType::U32, bits, splat(DType::U32, 13)),
                        splat(DType::U32, 1));
  std::string sum = bin("add", DType::U32, bits, bin("add", DType::U32, lsb, splat(DType::U32, 0xFFF)));
  std::string rounded = bin("and", DType::U32, sum, splat(DType::U32, 0xFFFFE000u));
  std::string tf32 = bitcast(DType::U32, DType::F32, rounded);
  std::string nan = cmp("NE", DType::F32, x, x);
  std::string canonical = canonicalNaN(DType::F32, DType::TF32, x);
  return sel(DType::F32, nan, canonical, tf32, as);
}

std::string Code::canonicalNaN(DType from, DType to, const std::string &x) {
  int width = encodingBits(from);
  DType bits = width == 8 ? DType::U8 : width == 16 ? DType::U16 : width == 32 ? DType::U32 : DType::U64;
  // One statement each, so that the text's order is the source's.
  std::string asBits = bitcast(from, bits, x);
  std::string signBit = splat(bits, uint64_t{1} << (width - 1));
  std::string negative = cmp("GE", bits, asBits, signBit);
  fp::Format f = *formatOf(to);
  DType carrier = to == DType::TF32 ? DType::F32 : to;
  std::string minus = splat(carrier, fp::canonicalNaN(f, true));
  std::string plus = splat(carrier, fp::canonicalNaN(f, false));
  return sel(carrier, negative, minus, plus);
}

std::string Code::convert(DType from, DType to, const std::string &x, const std::string &as) {
  if (from == to)
    return x;
  if (from == DType::TF32) // an f32 carrier of a tf32 value
    return convert(DType::F32, to, x, as);
  if (to == DType::TF32) // legal only from these (checkTf32)
    return from == DType::F32 ? roundToTf32(x, as) : convert(from, DType::F32, x, as);
  if (to == DType::Bool) // x != 0: a NaN gives true
    return cmp("NE", from, x, number(from, 0.0), as);
  if (from == DType::Bool)
    return cvt(from, to, x, as);
  if (!isFloat(from) && !isFloat(to))
    return intToInt(from, to, x, as);
  // A float to an integer (toward zero) of an in-range number, and into
  // fp8e4m3fn of a value within +-448: legalization guarded both. The
  // rest rounds once to nearest, ties to even, by StableHLO's convert,
  // and a NaN gives `to`'s canonical NaN of its sign (docs/numerics.md:
  // StableHLO leaves the payload to the consumer).
  if (!isFloat(from) || !isFloat(to))
    return cvt(from, to, x, as);
  std::string converted = cvt(from, to, x);
  std::string nan = cmp("NE", from, x, x);
  std::string canonical = canonicalNaN(from, to, x);
  return sel(to, nan, canonical, converted, as);
}

std::string Code::unary(UnaryCode c, DType t, const std::string &x, const std::string &as) {
  switch (c) {
  case UnaryCode::Neg:
    return un("negate", t, x, as); // floats: the sign bit; integers: wrapping
  case UnaryCode::Abs:
    if (isFloat(t))
      return un("abs", t, x, as);
    return sel(t, cmp("LT", t, x, splat(t, 0)), un("negate", t, x), x, as); // abs(MIN) == MIN
  case UnaryCode::Not: return un("not", t, x, as);
  case UnaryCode::Relu: return bin("maximum", t, x, number(t, 0.0), as);
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary) case UnaryCode::Enum:
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
    break;
  }
  // The math functions, in f32 or f64 (and sqrt, an IEEE basic operation,
  // in f16 and bf16): legalization computes the others in f32.
  std::string_view op = ir::mathFunction(c)->stablehlo;
  if (!op.empty())
    return un(std::string(op), t, x, as);
  // The functions written out (MathFunctions.def's empty `stablehlo`).
  if (c == UnaryCode::Sigmoid)
    return sigmoid(t, x, as);
  if (c == UnaryCode::Gelu || c == UnaryCode::Silu)
    return composite(c, t, x, as);
  throw std::logic_error("the StableHLO exit has neither an operation nor a composition for `" +
                         std::string(ir::mathFunction(c)->name) + "` (MathFunctions.def)");
}

std::string Code::binary(BinaryCode c, DType t, const std::string &a, const std::string &b, const std::string &as) {
  // keel/support/Operators.def's spellings. fp8 arithmetic and pow below
  // f32 arrive computed in f32 (legalization); an integer divisor is never
  // 0, nor -1 under MIN; float remainder is fmod (exact), minimum and
  // maximum are IEEE 754-2019's.
  return bin(std::string(binaryCodeInfo(c).stablehlo), t, a, b, as);
}

std::string Code::compare(CompareDir d, DType t, const std::string &a, const std::string &b, const std::string &as) {
  return cmp(std::string(compareDirInfo(d).stablehlo).c_str(), t, a, b, as);
}

//===-- gelu and silu: composites -----------------------------------------===//

/// The decomposition of keel.gelu / keel.silu on tensors of `t` and
/// `shape`, in StableHLO operations only. gelu(x) = x/2 * erfc(-x/sqrt2);
/// erfc(a) for a >= 0 is t * exp(-a^2 + P(t)), t = 1 / (1 + a/2), with
/// P the degree-9 polynomial of Press et al.'s Chebyshev fit (Numerical
/// Recipes, §6.2: relative error below 1.2e-7 for every a >= 0); for a < 0,
/// erfc(a) = 2 - erfc(-a). No cancellation for negative x, where gelu is
/// tiny. silu(x) = x * sigmoid(x), written so that no intermediate
/// underflows before the result does.
std::string decomposition(UnaryCode c, DType t, const Shape &shape, const std::string &name, ModuleState &module) {
  SsaNames names;
  Code b(names, "    ", module);
  b.shape = shape;
  auto body = [&](DType w, const std::string &x) {
    std::string minusInf = b.cmp("EQ", w, x, b.splat(w, fp::infinity(*formatOf(w), true)));
    if (c == UnaryCode::Silu) {
      // x / (1 + e) for x >= 0, else x * e / (1 + e), with e = exp(-|x|)
      // as the square of exp(-|x| / 2) and x * e as (x * e2) * e2, which
      // stays normal while the result is. -inf * 0 is NaN; Keel's
      // silu(-inf) is -0.
      std::string e2 = b.un("exponential", w, b.bin("multiply", w, b.un("negate", w, b.un("abs", w, x)), b.number(w, 0.5)));
      std::string d = b.bin("add", w, b.number(w, 1.0), b.bin("multiply", w, e2, e2));
      std::string negative = b.bin("divide", w, b.bin("multiply", w, b.bin("multiply", w, x, e2), e2), d);
      std::string r = b.sel(w, b.cmp("GE", w, x, b.number(w, 0.0)), b.bin("divide", w, x, d), negative);
      return b.sel(w, minusInf, b.number(w, -0.0), r);
    }
    static const double p[] = {-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
                               0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277};
    std::string z = b.bin("multiply", w, x, b.number(w, -0.70710678118654752440));
    std::string a = b.un("abs", w, z);
    std::string one = b.number(w, 1.0), half = b.number(w, 0.5);
    std::string tt = b.bin("divide", w, one, b.bin("add", w, one, b.bin("multiply", w, half, a)));
    std::string poly = b.number(w, p[9]);
    for (int i = 8; i >= 0; --i)
      poly = b.bin("add", w, b.number(w, p[i]), b.bin("multiply", w, tt, poly));
    // exp(P - a^2), a^2 = x^2 / 2, as exp(-h^2 / 2) * exp(P - (|x| - h)(|x| + h) / 2),
    // h = |x| with its low bits cleared so that h^2 is exact: a rounded
    // a^2 near 80 would be off by 2^-18, which exp turns into 30 ulps.
    bool f64 = w == DType::F64;
    DType bitsType = f64 ? DType::U64 : DType::U32;
    uint64_t keep = f64 ? ~((uint64_t{1} << 27) - 1) : 0xFFFFF000u; // 26 or 12 significant bits
    // |x| beyond 64 leaves exp(-x^2 / 2) = 0 in f64 too: clamped, so that
    // (|x| - h)(|x| + h) never meets an infinity.
    std::string ax = b.bin("minimum", w, b.un("abs", w, x), b.number(w, 64.0));
    std::string h = b.bitcast(bitsType, w, b.bin("and", bitsType, b.bitcast(w, bitsType, ax), b.splat(bitsType, keep)));
    std::string rest = b.bin("multiply", w, b.bin("multiply", w, b.bin("subtract", w, ax, h), b.bin("add", w, ax, h)), half);
    std::string e = b.bin("multiply", w, b.un("exponential", w, b.un("negate", w, b.bin("multiply", w, b.bin("multiply", w, h, h), half))),
                          b.un("exponential", w, b.bin("subtract", w, poly, rest)));
    std::string erfcA = b.bin("multiply", w, tt, e);
    std::string negative = b.cmp("LT", w, z, b.number(w, 0.0));
    std::string erfcZ = b.sel(w, negative, b.bin("subtract", w, b.number(w, 2.0), erfcA), erfcA);
    std::string g = b.bin("multiply", w, b.bin("multiply", w, x, half), erfcZ);
    // x = -inf: -inf * 0 is NaN; Keel's gelu(-inf) is -0.
    return b.sel(w, minusInf, b.number(w, -0.0), g);
  };
  std::string r = body(t, "%x"); // t is f32 or f64: other formats go through f32 (Code::unary)
  std::string type = tensorOf(t, shape);
  return "  func.func private @" + name + "(%x: " + type + ") -> " + type + " {\n" + b.text() + "    return " + r +
         " : " + type + "\n  }\n";
}

std::string Code::composite(UnaryCode c, DType t, const std::string &x, const std::string &as) {
  std::string kind = c == UnaryCode::Gelu ? "keel.gelu" : "keel.silu";
  std::string name = kind + "." + shapeSuffix(t, shape);
  if (!module_.decompositions.count(name))
    module_.decompositions[name] = decomposition(c, t, shape, name, module_);
  return op("stablehlo.composite \"" + kind + "\" " + x + " {decomposition = @" + name + "} : (" + ty(t) + ") -> " + ty(t), as);
}

//===-- Functions ----------------------------------------------------------===//

class FunctionEmitter {
public:
  FunctionEmitter(const Function &f, ModuleState &module, const std::map<std::string, std::string> &symbols,
                  bool entry, bool isPublic, std::vector<Refusal> &refusals)
      : f_(f), symbols_(symbols), entry_(entry), public_(isPublic), refusals_(refusals), ssa_(f), code_(ssa_, "    ", module),
        module_(module) {}

  std::string emit();

private:
  void flatten(const std::vector<Op> &ops);
  ValueId resolve(ValueId v) const {
    for (auto it = alias_.find(v); it != alias_.end(); it = alias_.find(v))
      v = it->second;
    return v;
  }
  const TensorType &type(ValueId v) const { return f_.valueTypes[resolve(v)]; }
  std::string name(ValueId v) const { return names_.at(resolve(v)); }
  void define(ValueId v, const std::string &n) { names_[v] = n; }
  /// The name of the MLIR value about to be written for `v`.
  std::string as(ValueId v) { return ssa_.of(v); }
  template <typename At> void refuse(const At &at, std::string message) { // an Op or a Function
    refusals_.push_back({at.loc, std::move(message), "", at.textSpan, {}});
  }
  void check();
  void emitOp(const Op &o);
  void reduce(const Op &o);
  void argReduce(const Op &o);
  void dot(const Op &o);

  const Function &f_;
  const std::map<std::string, std::string> &symbols_;
  bool entry_, public_;
  std::vector<Refusal> &refusals_;
  SsaNames ssa_;
  Code code_;
  ModuleState &module_;
  std::vector<const Op *> ops_;
  std::unordered_map<ValueId, ValueId> alias_;
  std::unordered_map<ValueId, std::string> names_;
};

void FunctionEmitter::flatten(const std::vector<Op> &ops) {
  for (const Op &o : ops) {
    if (o.kind == OpKind::Fusion) {
      const Region &region = *o.region;
      for (size_t i = 0; i < region.params.size(); ++i)
        alias_[region.params[i]] = o.operands[i];
      for (size_t i = 0; i + 1 < region.ops.size(); ++i) {
        const Op &inner = region.ops[i];
        if (inner.kind == OpKind::Copy || inner.kind == OpKind::Relayout)
          alias_[inner.results[0]] = inner.operands[0];
        else
          ops_.push_back(&inner);
      }
      const Op &ret = region.ops.back();
      for (size_t i = 0; i < o.results.size(); ++i) {
        alias_[o.results[i]] = ret.operands[i];
        ssa_.holds(ret.operands[i], o.results[i]);
      }
    } else if (o.kind == OpKind::Copy || o.kind == OpKind::Relayout) {
      alias_[o.results[0]] = o.operands[0]; // a logical no-op
    } else {
      ops_.push_back(&o);
    }
  }
}

/// What StableHLO cannot express: tf32 outside a contraction's operands,
/// (for the entry) layouts other than row-major, and a sum's tree order
/// unless the user allows the consumer's.
void FunctionEmitter::check() {
  const std::string tf32Rule = "StableHLO has no tf32 type: a tf32 tensor can only be an operand of a contraction "
                               "(dot_general with the tf32 algorithm)";
  for (ValueId p : f_.params)
    if (f_.valueTypes[p].dtype == DType::TF32)
      refuse(f_, "`" + f_.name + "` takes " + valueName(f_, p) + ": " + typeText(f_.valueTypes[p]) + "; " + tf32Rule +
                         ", so round an f32 parameter inside the function instead");
  if (entry_) {
    // `what` names the parameter or result: it is built only when refused.
    auto rowMajor = [&](const TensorType &t, auto what) {
      if (!t.hasDefaultLayout())
        refuse(f_, "the entry `" + f_.name + "` " + what() + " in layout " + layoutText(t) + ": StableHLO receives " +
                       "logical tensors, so the entry's parameters and results must be row-major; " +
                       "relayout inside the function instead");
    };
    for (ValueId p : f_.params)
      rowMajor(f_.valueTypes[p], [&] { return "takes " + valueName(f_, p); });
    for (size_t i = 0; i < f_.resultTypes.size(); ++i)
      rowMajor(f_.resultTypes[i], [&] { return "returns result " + std::to_string(i); });
  }
  for (const Op *o : ops_) {
    std::string mnemonic(opInfo(o->kind).mnemonic);
    if (o->order == SumOrder::Tree && !module_.allowReorder && o->acc && isFloatType(*o->acc))
      refuse(*o, "`" + opName(*o) + "` sums in the tree order (`order = tree`), which StableHLO cannot keep: the " +
                     "consumer chooses the order of a reduction; pass --allow-reorder to emit it in the consumer's " +
                     "order (its bits may differ from Keel's), or sum in the default order");
    size_t before = refusals_.size();
    for (size_t i = 0; i < o->resultTypes.size() && refusals_.size() == before; ++i) {
      if (o->resultTypes[i].dtype != DType::TF32 || o->kind == OpKind::Constant)
        continue;
      if (o->kind == OpKind::Convert) {
        DType from = type(o->operands[0]).dtype;
        if (from == DType::F64 || !isFloat(from))
          refuse(*o, "`convert` from " + std::string(dtypeName(from)) + " to tf32 rounds once, which StableHLO can " +
                         "only write as two roundings (through f32): convert to f32 first");
        continue;
      }
      refuse(*o, "`" + mnemonic + "` gives a tf32 tensor; " + tf32Rule + ": compute in f32 and convert to tf32 " +
                     "just before the contraction");
    }
    if (refusals_.size() != before || o->kind == OpKind::DotGeneral)
      continue;
    for (ValueId v : o->operands)
      if (type(v).dtype == DType::TF32) {
        refuse(*o, "`" + mnemonic + "` takes a tf32 tensor; " + tf32Rule);
        break;
      }
  }
}

void FunctionEmitter::reduce(const Op &o) {
  // The verifier admits accumulators of f32, f64, pred and the integers
  // only, whose StableHLO combiners are Keel's: one op, no region.
  const TensorType &in = type(o.operands[0]);
  const TensorType &out = o.resultTypes[0];
  DType acc = *o.acc;
  code_.shape = in.shape;
  std::string x = code_.convert(in.dtype, acc, name(o.operands[0]));
  code_.shape = {};
  std::string init = code_.splat(acc, identityEncoding(o.combiner, acc));
  std::string combine;
  switch (o.combiner) {
  case Combiner::Sum: combine = "add"; break;
  case Combiner::Prod: combine = "multiply"; break;
  case Combiner::Max: combine = "maximum"; break;
  case Combiner::Min: combine = "minimum"; break;
  case Combiner::And: combine = "and"; break;
  case Combiner::Or: combine = "or"; break;
  case Combiner::ArgMax: case Combiner::ArgMin: break;
  }
  std::string name = as(o.results[0]); // the conversion's, or the reduction's when there is none
  std::string r = code_.op("stablehlo.reduce(" + x + " init: " + init + ") applies stablehlo." + combine +
                           " across dimensions = " + list(o.dims) + " : (" + tensorOf(acc, in.shape) + ", " +
                           tensorOf(acc, {}) + ") -> " + tensorOf(acc, out.shape), acc == out.dtype ? name : "");
  code_.shape = out.shape;
  define(o.results[0], code_.convert(acc, out.dtype, r, name));
}

void FunctionEmitter::argReduce(const Op &o) {
  // A two-operand reduce of (value, row-major position among the reduced
  // axes). The comparator keeps the better value, a NaN beating every
  // number, and the smaller position among equals (NaNs included): a
  // choice independent of the order the consumer combines in, so the
  // result is Keel's first extreme index.
  const TensorType &in = type(o.operands[0]);
  DType acc = *o.acc;
  code_.shape = in.shape;
  std::string x = code_.convert(in.dtype, acc, name(o.operands[0]));
  std::string position;
  int64_t stride = 1;
  for (size_t k = o.dims.size(); k-- > 0;) {
    std::string iota = code_.op("stablehlo.iota dim = " + std::to_string(o.dims[k]) + " : " + code_.ty(DType::I64));
    std::string term = stride == 1 ? iota : code_.bin("multiply", DType::I64, iota, code_.splat(DType::I64, static_cast<uint64_t>(stride)));
    position = position.empty() ? term : code_.bin("add", DType::I64, position, term);
    stride *= in.shape[static_cast<size_t>(o.dims[k])];
  }
  code_.shape = {};
  bool isMax = o.combiner == Combiner::ArgMax;
  uint64_t worst = identityEncoding(isMax ? Combiner::Max : Combiner::Min, acc);
  std::string initValue = code_.splat(acc, worst);
  std::string initIndex = code_.splat(DType::I64, 0x7FFFFFFFFFFFFFFFull);
  std::string a = code_.fresh(), ia = code_.fresh(), b = code_.fresh(), ib = code_.fresh();
  Code body(ssa_, "      ", module_);
  body.loc = code_.loc;
  std::string better = body.cmp(isMax ? "GT" : "LT", acc, a, b);
  std::string same = body.cmp("EQ", acc, a, b);
  if (isFloat(acc)) {
    std::string aNaN = body.cmp("NE", acc, a, a), bNaN = body.cmp("NE", acc, b, b);
    better = body.bin("or", DType::Bool, better, body.bin("and", DType::Bool, aNaN, body.un("not", DType::Bool, bNaN)));
    same = body.bin("or", DType::Bool, same, body.bin("and", DType::Bool, aNaN, bNaN));
  }
  std::string earlier = body.cmp("LT", DType::I64, ia, ib);
  std::string take = body.bin("or", DType::Bool, better, body.bin("and", DType::Bool, same, earlier));
  std::string value = body.sel(acc, take, a, b), index = body.sel(DType::I64, take, ia, ib);
  std::string sv = tensorOf(acc, {}), si = tensorOf(DType::I64, {});
  const TensorType &out = o.resultTypes[0];
  std::string r = code_.fresh();
  code_.line(r + ":2 = \"stablehlo.reduce\"(" + x + ", " + position + ", " + initValue + ", " + initIndex + ") ({\n    ^bb0(" +
             a + ": " + sv + ", " + ia + ": " + si + ", " + b + ": " + sv + ", " + ib + ": " + si + "):\n" + body.text() +
             "      \"stablehlo.return\"(" + value + ", " + index + ") : (" + sv + ", " + si + ") -> ()" + code_.loc +
             "\n    }) {dimensions = array<i64: " + csv(o.dims) + ">} : (" + tensorOf(acc, in.shape) +
             ", " + tensorOf(DType::I64, in.shape) + ", " + sv + ", " + si + ") -> (" + tensorOf(acc, out.shape) + ", " +
             tensorOf(DType::I64, out.shape) + ")");
  code_.shape = out.shape;
  define(o.results[0], code_.convert(DType::I64, out.dtype, r + "#1", as(o.results[0])));
}

void FunctionEmitter::dot(const Op &o) {
  // Operands converted to the accumulator (exactly: it is at least as wide),
  // the contraction in it, the result converted once. tf32 operands are
  // rounded to tf32 where they are made, so the tf32 algorithm's operand
  // reduction is exact whatever the consumer's hardware does.
  const TensorType &lhs = type(o.operands[0]), &rhs = type(o.operands[1]);
  const TensorType &out = o.resultTypes[0];
  DType acc = *o.acc;
  bool tf32 = lhs.dtype == DType::TF32 && acc == DType::F32;
  code_.shape = lhs.shape;
  std::string a = code_.convert(lhs.dtype, acc, name(o.operands[0]));
  code_.shape = rhs.shape;
  std::string b = code_.convert(rhs.dtype, acc, name(o.operands[1]));
  std::string dims;
  if (!o.lhsBatch.empty())
    dims += ", batching_dims = " + list(o.lhsBatch) + " x " + list(o.rhsBatch);
  dims += ", contracting_dims = " + list(o.lhsContract) + " x " + list(o.rhsContract);
  if (tf32)
    module_.uses.push_back({"dot_general algorithm", &f_, &o});
  if (tf32)
    dims += ", algorithm = <lhs_precision_type = tf32, rhs_precision_type = tf32, accumulation_type = f32, "
            "lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, "
            "allow_imprecise_accumulation = false>";
  else if (isFloat(acc))
    dims += ", precision = [HIGHEST, HIGHEST]";
  code_.shape = out.shape;
  std::string name = as(o.results[0]);
  std::string r = code_.op("stablehlo.dot_general " + a + ", " + b + dims + " : (" + tensorOf(acc, lhs.shape) + ", " +
                           tensorOf(acc, rhs.shape) + ") -> " + code_.ty(acc), acc == out.dtype ? name : "");
  define(o.results[0], code_.convert(acc, out.dtype, r, name));
}

void FunctionEmitter::emitOp(const Op &o) {
  stableHloCapabilities().require(f_, o);
  module_.function = &f_;
  module_.op = &o;
  code_.loc = mlirLocation(o.loc);
  const TensorType *out = o.resultTypes.empty() ? nullptr : &o.resultTypes[0];
  if (out)
    code_.shape = out->shape;
  auto operand = [&](size_t i) { return name(o.operands[i]); };
  auto dtypeOf = [&](size_t i) { return type(o.operands[i]).dtype; };
  auto operandList = [&] { // the operands' names and types
    std::pair<std::vector<std::string>, std::vector<std::string>> r;
    for (size_t i = 0; i < o.operands.size(); ++i) {
      r.first.push_back(operand(i));
      r.second.push_back(tensorOf(dtypeOf(i), type(o.operands[i]).shape));
    }
    return r;
  };
  auto result = [&] { return as(o.results[0]); };
  auto single = [&](const std::string &rhs) { define(o.results[0], code_.op(rhs, result())); };
  switch (o.kind) {
  case OpKind::Unary: define(o.results[0], code_.unary(o.unary, out->dtype, operand(0), result())); return;
  case OpKind::Binary: define(o.results[0], code_.binary(o.binary, out->dtype, operand(0), operand(1), result())); return;
  case OpKind::Compare: define(o.results[0], code_.compare(o.compare, dtypeOf(0), operand(0), operand(1), result())); return;
  case OpKind::Select: define(o.results[0], code_.sel(out->dtype, operand(0), operand(1), operand(2), result())); return;
  case OpKind::Convert: define(o.results[0], code_.convert(dtypeOf(0), out->dtype, operand(0), result())); return;
  case OpKind::Constant:
    single("stablehlo.constant " + mlirDense(TensorType::make(out->dtype, out->shape), o.constant, kInts) + " : " +
           code_.ty(out->dtype));
    return;
  case OpKind::Iota: // every index a value of the dtype (legalization)
    single("stablehlo.iota dim = " + std::to_string(o.axis) + " : " + code_.ty(out->dtype));
    return;
  case OpKind::BroadcastInDim:
    single("stablehlo.broadcast_in_dim " + operand(0) + ", dims = " + list(o.dims) + " : (" +
           tensorOf(dtypeOf(0), type(o.operands[0]).shape) + ") -> " + code_.ty(out->dtype));
    return;
  case OpKind::Reshape:
    single("stablehlo.reshape " + operand(0) + " : (" + tensorOf(dtypeOf(0), type(o.operands[0]).shape) + ") -> " +
           code_.ty(out->dtype));
    return;
  case OpKind::Transpose:
    single("stablehlo.transpose " + operand(0) + ", dims = " + list(o.dims) + " : (" +
           tensorOf(dtypeOf(0), type(o.operands[0]).shape) + ") -> " + code_.ty(out->dtype));
    return;
  case OpKind::Slice: {
    std::string ranges;
    for (size_t d = 0; d < o.dims.size(); ++d)
      ranges += (d ? ", " : "") + std::to_string(o.dims[d]) + ":" + std::to_string(o.limits[d]);
    single("stablehlo.slice " + operand(0) + " [" + ranges + "] : (" + tensorOf(dtypeOf(0), type(o.operands[0]).shape) +
           ") -> " + code_.ty(out->dtype));
    return;
  }
  case OpKind::Concatenate: {
    auto [names, types] = operandList();
    single("stablehlo.concatenate " + commaList(names) + ", dim = " + std::to_string(o.axis) + " : (" + commaList(types) +
           ") -> " + code_.ty(out->dtype));
    return;
  }
  case OpKind::Reduce:
    if (o.combiner == Combiner::ArgMax || o.combiner == Combiner::ArgMin)
      argReduce(o);
    else
      reduce(o);
    return;
  case OpKind::DotGeneral: dot(o); return;
  case OpKind::Call: {
    auto [names, types] = operandList();
    std::vector<std::string> results;
    for (const TensorType &t : o.resultTypes)
      results.push_back(tensorOf(t.dtype, t.shape));
    std::vector<std::string> r =
        code_.call(symbols_.at(o.callee), names, types, results, results.size() == 1 ? result() : "");
    for (size_t i = 0; i < r.size(); ++i)
      define(o.results[i], r[i]);
    return;
  }
  case OpKind::Return: {
    auto [names, types] = operandList();
    code_.line(names.empty() ? "return" : "return " + commaList(names) + " : " + commaList(types));
    return;
  }
  case OpKind::Copy: case OpKind::Relayout: case OpKind::Fusion: break; // flattened
  }
}

std::string FunctionEmitter::emit() {
  flatten(f_.ops);
  check();
  std::vector<std::string> params, results;
  for (ValueId p : f_.params) {
    const TensorType &t = f_.valueTypes[p];
    define(p, as(p));
    params.push_back(names_[p] + ": " + tensorOf(t.dtype, t.shape));
  }
  for (const TensorType &t : f_.resultTypes)
    results.push_back(tensorOf(t.dtype, t.shape));
  for (const Op *o : ops_)
    emitOp(*o);
  return detail::functionHead(public_ ? "public " : "private ", symbols_.at(f_.name), params, results) + " {\n" +
         code_.text() + "  }" + mlirLocation(f_.loc) + "\n";
}

/// `@main()` for --main: the arguments as constants, the entry called, and
/// each result returned with floats as unsigned integers of their width.
std::string emitMain(const Function &entry, const std::string &symbol, const std::vector<std::vector<uint64_t>> &args,
                     ModuleState &module) {
  SsaNames names;
  Code b(names, "    ", module);
  std::vector<std::string> r = detail::writeMainCall(b, entry, symbol, args, kInts, "stablehlo.constant", "call");
  std::vector<std::string> returned, returnedTypes;
  for (size_t k = 0; k < r.size(); ++k) {
    const TensorType &t = entry.resultTypes[k];
    std::string v = r[k];
    b.shape = t.shape;
    if (isFloat(t.dtype)) {
      DType bits = formatInfo(t.dtype).storageBits == 64   ? DType::U64
                   : formatInfo(t.dtype).storageBits == 32 ? DType::U32
                   : formatInfo(t.dtype).storageBits == 16 ? DType::U16
                                                           : DType::U8;
      v = b.bitcast(t.dtype, bits, v);
      returnedTypes.push_back(tensorOf(bits, t.shape));
    } else {
      returnedTypes.push_back(tensorOf(t.dtype, t.shape));
    }
    returned.push_back(v);
  }
  b.line(returned.empty() ? "return" : "return " + commaList(returned) + " : " + commaList(returnedTypes));
  return detail::functionHead("public ", "main", {}, returnedTypes) + " {\n" + b.text() + "  }\n";
}

/// E0915 for each op the module writes that `target` does not have yet, at
/// the IR op it was written for (once per op and feature); an op without a
/// version row is the exit's own bug (std::logic_error, an internal error).
void refuseNewer(const ModuleState &module, const std::string &target, std::vector<Refusal> &refusals) {
  std::optional<StableHloVersion> want = parseStableHloVersion(target);
  std::set<std::pair<std::string, const void *>> seen;
  for (const ModuleState::Use &u : module.uses) {
    std::optional<StableHloVersion> since = versionOf(u.feature);
    const void *at = u.op ? static_cast<const void *>(u.op) : static_cast<const void *>(u.function);
    if (!seen.insert({u.feature, at}).second)
      continue;
    Location loc = u.op ? u.op->loc : u.function ? u.function->loc : Location{};
    Span span = u.op ? u.op->textSpan : u.function ? u.function->textSpan : Span{};
    if (!since) // the exit's own bug, reported as an internal error (as Capabilities::require's)
      throw std::logic_error("the StableHLO exit wrote `stablehlo." + u.feature +
                             "`, which src/exits/StableHloVersions.def does not date");
    if (want && *want < *since) {
      std::string what = u.feature == "dot_general algorithm"
                             ? "the tf32 contraction (`stablehlo.dot_general` with an `algorithm`)"
                             : "`stablehlo." + u.feature + "`";
      std::string op = u.op ? "`" + opName(*u.op) + "` becomes " : "";
      refusals.push_back({loc, op + what + ", which StableHLO has from " + since->str() + " on, but the target is " +
                                   target + " (--target-version)", "", span, {}});
    }
  }
}

} // namespace

std::string StableHloVersion::str() const {
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

namespace {
/// MAJOR.MINOR.PATCH, each one to four decimal digits, and nothing else.
std::optional<StableHloVersion> parseVersionText(const std::string &text) {
  StableHloVersion v;
  int *parts[] = {&v.major, &v.minor, &v.patch};
  const char *p = text.data(), *end = text.data() + text.size();
  for (int i = 0; i < 3; ++i) {
    if (i > 0) {
      if (p == end || *p != '.')
        return std::nullopt;
      ++p;
    }
    if (p == end || !std::isdigit(static_cast<unsigned char>(*p)))
      return std::nullopt;
    auto [next, ec] = std::from_chars(p, end, *parts[i]);
    if (ec != std::errc() || next - p > 4)
      return std::nullopt;
    p = next;
  }
  if (p != end)
    return std::nullopt;
  return v;
}
} // namespace

std::optional<StableHloVersion> parseStableHloVersion(const std::string &text) {
  std::optional<StableHloVersion> v = parseVersionText(text);
  if (!v || *v < *parseVersionText(kStableHloOldest) || *parseVersionText(kStableHloNewest) < *v)
    return std::nullopt;
  return v;
}

const transforms::Capabilities &stableHloCapabilities() {
  static const transforms::Capabilities caps = [] {
    transforms::Capabilities c;
    c.exit = "StableHLO";
    // StableHLO's IEEE operations in f16 and bf16 are Keel's correctly
    // rounded ones; fp8 and the other math functions go through f32.
    c.basicArithmetic = {DType::F16, DType::BF16, DType::F32, DType::F64};
    c.mathFunctions = {DType::F32, DType::F64};
    c.leftToExit = {DType::TF32}; // refused outside a contraction's operands
    c.treeOrder = true;           // refused unless --allow-reorder (FunctionEmitter::check)
    c.exactIota = {DType::I4, DType::I8, DType::I16, DType::I32, DType::I64, DType::U8, DType::U16, DType::U32,
                   DType::U64, DType::F16, DType::BF16, DType::F32, DType::F64};
    return c;
  }();
  return caps;
}

ExitOutput emitStableHlo(const Module &m, const StableHloOptions &options) {
  ExitOutput out;
  std::vector<const Function *> functions = reachableFrom(m, options.entry);
  const Function &entry = *functions.front();
  if (!entry.effects.contains(Effect::Gpu)) {
    std::vector<std::string> declare;
    EffectSet needed = entry.effects | EffectSet{Effect::Gpu};
    for (size_t i = 0; i < kNumEffects; ++i)
      if (needed.contains(static_cast<Effect>(i)))
        declare.emplace_back(kEffectNames[i]);
    out.refusals.push_back({entry.loc,
                            "`" + entry.name + "` is emitted for a device (the StableHLO exit), so it must declare the " +
                                "effect gpu, which it does not",
                            "gpu", entry.textSpan, declare});
  }
  // Symbols: the entry is @main (unless --main adds its own); every other
  // function keeps Keel's name unless it is one the module needs (`main`,
  // the `keel.` decompositions).
  std::map<std::string, std::string> symbols =
      detail::symbolTable(functions, {"main"}, options.mainArguments ? nullptr : &entry);
  ModuleState module;
  module.allowReorder = options.allowReorder;
  std::string body;
  for (const Function *f : functions)
    body += FunctionEmitter(*f, module, symbols, f == &entry, f == &entry && !options.mainArguments, out.refusals).emit();
  if (!out.refusals.empty())
    return out;
  if (options.mainArguments)
    body += emitMain(entry, symbols.at(entry.name), *options.mainArguments, module);
  for (const auto &[name, text] : module.decompositions)
    body += text;
  std::string version = options.targetVersion.empty() ? kStableHloVersion : options.targetVersion;
  refuseNewer(module, version, out.refusals);
  if (!out.refusals.empty())
    return out;
  std::string moduleName = options.mainArguments ? "main" : entry.name;
  out.text = "// Keel's StableHLO exit: @" + entry.name + (options.source.empty() ? "" : " of " + options.source) +
             (options.mainArguments ? ", called by a @main that runs it on fixed arguments," : " as @main") +
             " and the functions it calls.\n// StableHLO " + version +
             " (keel.stablehlo_version). Portable artifact:\n//   stablehlo-translate --serialize --target=" +
             version + " FILE.mlir -o FILE.mlirbc\n// docs/exits.md says which results equal keel run's.\n" +
             "module @" + moduleName + " attributes {keel.stablehlo_version = \"" + version + "\"} {\n" + body +
             "}\n";
  return out;
}

} // namespace keel::exits
