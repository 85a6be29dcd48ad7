//===- keel/ir/IR.h - The typed tensor IR (SFEP-0053 §3.2-§3.4) -*- C++ -*-===//
//
// A module of functions; a function is a straight-line list of operations
// over immutable SSA values. Every value has a TensorType: a dtype from the
// closed enum, a static positive shape (rank 0 is a scalar tensor) and a
// dense layout given as minor_to_major, a permutation of the dimensions
// (row-major is [rank-1, ..., 0]). Operations name their operands and result
// types; their attributes hold only semantic facts (no device, tiling or
// backend attributes); each carries the source location it came from.
//
// There is no implicit broadcast, dtype conversion or layout change: each is
// an explicit operation (broadcast_in_dim, convert, relayout), and the
// verifier (Verifier.h) rejects anything else.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_IR_IR_H
#define KEEL_IR_IR_H

#include "keel/numerics/Format.h"
#include "keel/support/Effects.h"
#include "keel/support/ElementType.h"
#include "keel/support/Operators.h"
#include "keel/support/Source.h"
#include "keel/support/SumOrder.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace keel::ir {

//===-- Element types ----------------------------------------------------===//

/// The element types of keel/support/ElementTypes.def; the IR text spells
/// Bool as `pred`.
using DType = ElementType;
inline constexpr int kNumDTypes = kNumElementTypes;

std::string_view dtypeName(DType t);
std::optional<DType> parseDType(std::string_view name);
inline bool isFloatType(DType t) { return isFloatElement(t); }
/// Signed or unsigned, i4 included.
inline bool isIntegerType(DType t) { return isIntegerElement(t); }
inline bool isSignedType(DType t) { return isSignedElement(t); }
/// Bits of one element's encoding (pred and i4 are stored one per byte in
/// the reference, but encode 1 and 4 bits).
inline int encodingBits(DType t) { return elementBits(t); }
/// The numerics library's format of a float dtype; nullopt for pred and
/// the integers.
std::optional<fp::Format> formatOf(DType t);

//===-- Types ------------------------------------------------------------===//

struct TensorType {
  DType dtype = DType::F32;
  std::vector<int64_t> shape;
  std::vector<int64_t> minorToMajor; ///< a permutation of 0..rank-1

  /// Row-major layout.
  static TensorType make(DType dtype, std::vector<int64_t> shape);
  static std::vector<int64_t> rowMajor(size_t rank);
  size_t rank() const { return shape.size(); }
  bool hasDefaultLayout() const { return minorToMajor == rowMajor(rank()); }
  /// Number of elements, or nullopt when it overflows int64.
  std::optional<int64_t> elementCount() const;
  /// Bytes of its elements in memory (i4 and pred take a byte each), or
  /// nullopt when they overflow int64; the verifier requires a count.
  std::optional<int64_t> byteCount() const;
  bool operator==(const TensorType &o) const = default;
};

/// `f32[2,16]`, with `{0,1}` after it for a non-default layout.
std::string typeText(const TensorType &t);
/// The layout alone: `{0,1}` (minor_to_major).
std::string layoutText(const TensorType &t);

//===-- Operations -------------------------------------------------------===//

enum class OpKind : uint8_t {
#define KEEL_IR_OP(Kind, Mnemonic, Operands, Results, Reads, Role, Attributes) Kind,
#include "keel/ir/Ops.def"
#undef KEEL_IR_OP
};

/// The attributes an operation may carry (Ops.def's KEEL_IR_ATTR rows, in
/// the order they print).
enum class Attr : uint8_t {
#define KEEL_IR_ATTR(Name, Key, Kind, Field) Name,
#include "keel/ir/Ops.def"
#undef KEEL_IR_ATTR
};
/// Sets of attributes, one bit each: Ops.def's last column.
namespace attrs {
inline constexpr uint32_t None = 0;
#define KEEL_IR_ATTR(Name, Key, Kind, Field) inline constexpr uint32_t Name = 1u << static_cast<unsigned>(Attr::Name);
#include "keel/ir/Ops.def"
#undef KEEL_IR_ATTR
} // namespace attrs
inline constexpr size_t kNumAttrs = 0
#define KEEL_IR_ATTR(Name, Key, Kind, Field) +1
#include "keel/ir/Ops.def"
#undef KEEL_IR_ATTR
    ;
/// An attribute's key in IR text (`axes`, `guarded`).
std::string_view attrKey(Attr a);

/// How an operation reads its operands' elements (Ops.def explains each).
enum class OperandReads : uint8_t { None, Elementwise, Once, Broadcast, Repeated, Buffer };
/// What an operation may be in a fusion region (Ops.def, SFEP-0053 §3.5).
enum class FusionRole : uint8_t { Elementwise, Source, IndexMap, Root, Barrier };

struct OpInfo {
  std::string_view mnemonic;
  int operands; ///< -1: variadic
  int results;  ///< -1: from the callee or the region
  OperandReads reads;
  FusionRole role;
  uint32_t attributes; ///< the attrs:: bits it carries
  /// May appear inside a fusion region (every role but Barrier).
  bool fusible() const { return role != FusionRole::Barrier; }
  bool takes(Attr a) const { return attributes & (1u << static_cast<unsigned>(a)); }
};
const OpInfo &opInfo(OpKind k);
std::optional<OpKind> parseOpKind(std::string_view mnemonic);

/// Elementwise unary codes: four of their own, then every math function of
/// keel/support/MathFunctions.def (floats only). Legality per dtype:
/// isLegal(UnaryCode, DType).
enum class UnaryCode : uint8_t {
  Neg,
  Abs,
  Relu,
  Not,
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary) Enum,
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
};
/// The row of keel/support/MathFunctions.def a unary code is.
struct MathFunction {
  std::string_view name, mlir, stablehlo; ///< the table's spellings ("" where an exit writes it out)
};
/// Its math function, or nullopt for neg, abs, relu and not.
std::optional<MathFunction> mathFunction(UnaryCode c);
/// Elementwise binary codes and comparison directions: the rows of
/// keel/support/Operators.def (legality per dtype: its `operands` column).
using keel::BinaryCode;
using keel::CompareDir;
/// The order in which a sum (reduce.sum, dot_general) adds its terms:
/// keel/support/SumOrder.h.
using keel::SumOrder;

/// Reduction combiners; ArgMax/ArgMin give i64 indices (first of equals).
enum class Combiner : uint8_t { Sum, Prod, Max, Min, And, Or, ArgMax, ArgMin };

std::string_view unaryName(UnaryCode c);
std::string_view binaryName(BinaryCode c);
std::string_view compareName(CompareDir c);
std::string_view combinerName(Combiner c);
std::optional<UnaryCode> parseUnary(std::string_view s);
std::optional<BinaryCode> parseBinary(std::string_view s);
std::optional<CompareDir> parseCompare(std::string_view s);
std::optional<Combiner> parseCombiner(std::string_view s);
bool isLegal(UnaryCode c, DType t);
bool isLegal(BinaryCode c, DType t);
bool isLegal(Combiner c, DType t);
/// The first value of a reduction's accumulator, as an encoding of `acc`:
/// the combiner's identity (-0 for a float sum, so that a sum of negative
/// zeros stays -0; 1 for a product; -inf / +inf, or the integer extremes,
/// for max / min; true for and, false for or). argmax / argmin start at the
/// sum's. A contraction starts at the sum's.
uint64_t identityEncoding(Combiner c, DType acc);

using ValueId = uint32_t;

/// Where an operation came from in the source (or nothing, for hand-written
/// IR without `loc(...)`).
struct Location {
  std::string file;
  uint32_t line = 0, column = 0;
  bool known() const { return line != 0; }
  bool operator==(const Location &o) const = default;
};
/// `loc("f.sfn":3:12)`, the spelling of the IR text and of MLIR; empty for
/// an unknown location.
std::string locationText(const Location &l);

struct Region;

/// A fusion's region, owned by its op and copied with it, so that a Module
/// is a value (a loaded module is copied before passes rewrite it).
class RegionPtr {
public:
  RegionPtr() = default;
  RegionPtr(std::unique_ptr<Region> r);
  RegionPtr(const RegionPtr &o);
  RegionPtr(RegionPtr &&o) noexcept;
  RegionPtr &operator=(const RegionPtr &o);
  RegionPtr &operator=(RegionPtr &&o) noexcept;
  ~RegionPtr();
  Region *operator->() const { return p_.get(); }
  Region &operator*() const { return *p_; }
  Region *get() const { return p_.get(); }
  explicit operator bool() const { return p_ != nullptr; }

private:
  std::unique_ptr<Region> p_;
};

struct Op {
  OpKind kind = OpKind::Return;
  std::vector<ValueId> operands;
  std::vector<ValueId> results;
  std::vector<TensorType> resultTypes;

  // Attributes: only those of the op's kind are meaningful.
  UnaryCode unary = UnaryCode::Neg;         ///< unary
  BinaryCode binary = BinaryCode::Add;      ///< binary
  CompareDir compare = CompareDir::Eq;      ///< compare
  Combiner combiner = Combiner::Sum;        ///< reduce
  std::vector<int64_t> dims;                ///< broadcast_in_dim: operand dim -> result dim;
                                            ///< transpose: permutation; reduce: axes;
                                            ///< slice: start indices
  std::vector<int64_t> limits;              ///< slice: limit indices (exclusive)
  std::vector<int64_t> lhsBatch, rhsBatch, lhsContract, rhsContract; ///< dot_general
  int64_t axis = 0;                         ///< iota, concatenate
  std::optional<DType> acc;                 ///< reduce, dot_general: accumulator dtype
  SumOrder order = SumOrder::Sequential;    ///< reduce.sum, dot_general: printed `order = tree`
  std::vector<uint64_t> constant;           ///< constant: encodings, 1 (splat) or one per element
  std::string callee;                       ///< call
  RegionPtr region;                         ///< fusion
  /// binary.div / binary.rem on integers, convert from a float to an
  /// integer or into fp8e4m3fn: legalization guarded the operands, so
  /// that the target's own operation has Keel's meaning on them
  /// (transforms/Legalize.h). Printed `{guarded}`.
  bool guarded = false;

  Location loc;    ///< source provenance
  Span textSpan;   ///< where the op is in IR text (set by the parser)
};

/// The body of a fusion: parameters (bound to the fusion's operands in
/// order), operations, and a final `return` of the region's results.
struct Region {
  std::vector<ValueId> params;
  std::vector<Op> ops;
};

struct Function {
  std::string name;
  std::vector<ValueId> params;
  std::vector<TensorType> resultTypes;
  /// The effects the function declares (`![gpu]`; support/Effects.h);
  /// text `-> T ![gpu, io]`, in the table's order.
  EffectSet effects;
  std::vector<Op> ops; ///< ends with `return`
  Location loc;
  Span textSpan;
  /// Where each parameter's and each result's type is in IR text (set by
  /// the parser; empty for built functions).
  std::vector<Span> paramSpans, resultSpans;

  /// The author's name of each value read from IR text (`q` for `%q`),
  /// indexed by ValueId; "" or past the end for a value a pass made.
  std::vector<std::string> names;
  std::string_view authorName(ValueId v) const { return v < names.size() ? std::string_view(names[v]) : ""; }

  /// The type of every value, indexed by ValueId.
  std::vector<TensorType> valueTypes;
  ValueId newValue(TensorType t) {
    valueTypes.push_back(std::move(t));
    return static_cast<ValueId>(valueTypes.size() - 1);
  }
};

/// Appends each call op of `ops` to `calls`, fusion regions included.
void collectCalls(const std::vector<Op> &ops, std::vector<const Op *> &calls);

struct Module {
  std::vector<Function> functions;
  const Function *find(std::string_view name) const;
};

/// `entry` (a function of `m`) and every function it calls, directly or
/// not (fusion regions included): entry first, then in module order.
std::vector<const Function *> reachableFrom(const Module &m, const std::string &entry);

} // namespace keel::ir

#endif // KEEL_IR_IR_H
