//===- IR.cpp - Names, legality and types of the tensor IR ---------------===//
#include "keel/ir/IR.h"

#include <array>
#include <set>
#include <limits>

namespace keel::ir {

namespace {

template <typename Enum, typename Names> std::optional<Enum> parseName(const Names &names, std::string_view s) {
  for (size_t i = 0; i < std::size(names); ++i)
    if (names[i] == s)
      return static_cast<Enum>(i);
  return std::nullopt;
}

constexpr std::string_view kUnaryNames[] = {
    "neg", "abs", "relu", "not",
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary) #name,
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
};
constexpr std::string_view kBinaryNames[] = {
#define KEEL_BINARY_CODE(Enum, name, source, operands, mlirFloat, mlirSigned, mlirUnsigned, stablehlo) #name,
#include "keel/support/Operators.def"
#undef KEEL_BINARY_CODE
};
constexpr std::string_view kCompareNames[] = {
#define KEEL_COMPARE_DIR(Enum, name, source, mlirFloat, mlirSigned, mlirUnsigned, stablehlo) #name,
#include "keel/support/Operators.def"
#undef KEEL_COMPARE_DIR
};
constexpr std::array<std::string_view, 8> kCombinerNames = {"sum", "prod", "max", "min",
                                                            "and", "or", "argmax", "argmin"};

using namespace attrs;
constexpr OpInfo kOps[] = {
#define KEEL_IR_OP(Kind, Mnemonic, Operands, Results, Reads, Role, Attributes)                        \
  {Mnemonic, Operands, Results, OperandReads::Reads, FusionRole::Role, Attributes},
#include "keel/ir/Ops.def"
#undef KEEL_IR_OP
};
constexpr std::string_view kAttrKeys[] = {
#define KEEL_IR_ATTR(Name, Key, Kind, Field) Key,
#include "keel/ir/Ops.def"
#undef KEEL_IR_ATTR
};

} // namespace

std::string_view dtypeName(DType t) { return t == DType::Bool ? "pred" : elementName(t); }

std::optional<fp::Format> formatOf(DType t) {
  switch (t) {
  case DType::F16: return fp::Format::F16;
  case DType::BF16: return fp::Format::BF16;
  case DType::TF32: return fp::Format::TF32;
  case DType::FP8E4M3FN: return fp::Format::FP8E4M3FN;
  case DType::FP8E5M2: return fp::Format::FP8E5M2;
  case DType::F32: return fp::Format::F32;
  case DType::F64: return fp::Format::F64;
  case DType::Bool: case DType::I4: case DType::I8: case DType::I16: case DType::I32: case DType::I64:
  case DType::U8: case DType::U16: case DType::U32: case DType::U64:
    return std::nullopt;
  }
  return std::nullopt;
}

std::string locationText(const Location &l) {
  if (!l.known())
    return "";
  std::string file;
  for (char c : l.file)
    file += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return "loc(\"" + file + "\":" + std::to_string(l.line) + ":" + std::to_string(l.column) + ")";
}

std::optional<DType> parseDType(std::string_view name) {
  if (name == "pred")
    return DType::Bool;
  if (name == "bool")
    return std::nullopt;
  return parseElementType(name);
}

std::vector<int64_t> TensorType::rowMajor(size_t rank) {
  std::vector<int64_t> order(rank);
  for (size_t i = 0; i < rank; ++i)
    order[i] = static_cast<int64_t>(rank - 1 - i);
  return order;
}

TensorType TensorType::make(DType dtype, std::vector<int64_t> shape) {
  TensorType t;
  t.dtype = dtype;
  t.minorToMajor = rowMajor(shape.size());
  t.shape = std::move(shape);
  return t;
}

std::optional<int64_t> TensorType::elementCount() const {
  int64_t n = 1;
  for (int64_t d : shape)
    if (__builtin_mul_overflow(n, d, &n))
      return std::nullopt;
  return n;
}

std::optional<int64_t> TensorType::byteCount() const {
  std::optional<int64_t> n = elementCount();
  int64_t bytes = 0;
  if (!n || __builtin_mul_overflow(*n, int64_t{(elementBits(dtype) + 7) / 8}, &bytes))
    return std::nullopt;
  return bytes;
}

std::string layoutText(const TensorType &t) {
  std::string s = "{";
  for (size_t i = 0; i < t.minorToMajor.size(); ++i)
    s += (i ? "," : "") + std::to_string(t.minorToMajor[i]);
  return s + "}";
}

std::string typeText(const TensorType &t) {
  std::string s = std::string(dtypeName(t.dtype)) + "[";
  for (size_t i = 0; i < t.shape.size(); ++i)
    s += (i ? "," : "") + std::to_string(t.shape[i]);
  s += "]";
  return t.hasDefaultLayout() ? s : s + layoutText(t);
}

const OpInfo &opInfo(OpKind k) { return kOps[static_cast<size_t>(k)]; }
std::string_view attrKey(Attr a) { return kAttrKeys[static_cast<size_t>(a)]; }

std::optional<OpKind> parseOpKind(std::string_view mnemonic) {
  for (size_t i = 0; i < sizeof kOps / sizeof *kOps; ++i)
    if (kOps[i].mnemonic == mnemonic)
      return static_cast<OpKind>(i);
  return std::nullopt;
}

std::string_view unaryName(UnaryCode c) { return kUnaryNames[static_cast<size_t>(c)]; }
std::string_view binaryName(BinaryCode c) { return kBinaryNames[static_cast<size_t>(c)]; }
std::string_view compareName(CompareDir c) { return kCompareNames[static_cast<size_t>(c)]; }
std::string_view combinerName(Combiner c) { return kCombinerNames[static_cast<size_t>(c)]; }
std::optional<UnaryCode> parseUnary(std::string_view s) { return parseName<UnaryCode>(kUnaryNames, s); }
std::optional<BinaryCode> parseBinary(std::string_view s) { return parseName<BinaryCode>(kBinaryNames, s); }
std::optional<CompareDir> parseCompare(std::string_view s) { return parseName<CompareDir>(kCompareNames, s); }
std::optional<Combiner> parseCombiner(std::string_view s) { return parseName<Combiner>(kCombinerNames, s); }

bool isLegal(UnaryCode c, DType t) {
  switch (c) {
  case UnaryCode::Neg: return t != DType::Bool;
  case UnaryCode::Abs:
  case UnaryCode::Relu: return isSignedType(t);
  case UnaryCode::Not: return !isFloatType(t);
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary) case UnaryCode::Enum:
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
    return isFloatType(t);
  }
  return false;
}

std::optional<MathFunction> mathFunction(UnaryCode c) {
  switch (c) {
  case UnaryCode::Neg: case UnaryCode::Abs: case UnaryCode::Relu: case UnaryCode::Not: return std::nullopt;
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary)                                           \
  case UnaryCode::Enum:                                                                                     \
    return MathFunction{#name, mlir, stablehlo};
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
  }
  return std::nullopt;
}

bool isLegal(BinaryCode c, DType t) { return admits(binaryCodeInfo(c).operands, t); }

bool isLegal(Combiner c, DType t) {
  switch (c) {
  case Combiner::Sum: case Combiner::Prod: case Combiner::Max: case Combiner::Min:
  case Combiner::ArgMax: case Combiner::ArgMin:
    return t != DType::Bool;
  case Combiner::And: case Combiner::Or: return t == DType::Bool;
  }
  return false;
}

uint64_t identityEncoding(Combiner c, DType acc) {
  bool isFloat = isFloatType(acc), isSigned = isSignedType(acc) && acc != DType::Bool;
  int bits = encodingBits(acc);
  uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  double inf = std::numeric_limits<double>::infinity();
  auto value = [&](double v) { return fp::fromF64(*formatOf(acc), v); };
  switch (c) {
  case Combiner::Sum: case Combiner::ArgMax: case Combiner::ArgMin:
    return isFloat ? fp::info(*formatOf(acc)).signMask() : 0; // -0
  case Combiner::Prod: return isFloat ? value(1.0) : 1;
  case Combiner::Max: return isFloat ? value(-inf) : isSigned ? uint64_t{1} << (bits - 1) : 0;
  case Combiner::Min: return isFloat ? value(inf) : isSigned ? mask >> 1 : mask;
  case Combiner::And: return 1;
  case Combiner::Or: return 0;
  }
  return 0;
}

void collectCalls(const std::vector<Op> &ops, std::vector<const Op *> &calls) {
  for (const Op &o : ops) {
    if (o.kind == OpKind::Call)
      calls.push_back(&o);
    if (o.region)
      collectCalls(o.region->ops, calls);
  }
}

std::vector<const Function *> reachableFrom(const Module &m, const std::string &entry) {
  std::set<std::string> seen{entry};
  std::vector<std::string> work{entry};
  while (!work.empty()) {
    const Function *f = m.find(work.back());
    work.pop_back();
    std::vector<const Op *> calls;
    if (f)
      collectCalls(f->ops, calls);
    for (const Op *call : calls)
      if (seen.insert(call->callee).second)
        work.push_back(call->callee);
  }
  std::vector<const Function *> out{m.find(entry)};
  for (const Function &f : m.functions)
    if (f.name != entry && seen.count(f.name))
      out.push_back(&f);
  return out;
}

const Function *Module::find(std::string_view name) const {
  for (const Function &f : functions)
    if (f.name == name)
      return &f;
  return nullptr;
}

RegionPtr::RegionPtr(std::unique_ptr<Region> r) : p_(std::move(r)) {}
RegionPtr::RegionPtr(const RegionPtr &o) : p_(o.p_ ? std::make_unique<Region>(*o.p_) : nullptr) {}
RegionPtr::RegionPtr(RegionPtr &&o) noexcept = default;
RegionPtr &RegionPtr::operator=(const RegionPtr &o) {
  if (this != &o)
    p_ = o.p_ ? std::make_unique<Region>(*o.p_) : nullptr;
  return *this;
}
RegionPtr &RegionPtr::operator=(RegionPtr &&o) noexcept = default;
RegionPtr::~RegionPtr() = default;

} // namespace keel::ir
