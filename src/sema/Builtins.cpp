//===- Builtins.cpp - The built-in table's rows and lookups ---------------===//
#include "keel/sema/Builtins.h"

namespace keel::sema {

namespace {

constexpr BuiltinInfo kBuiltins[] = {
#define KEEL_BUILTIN(Id, Name, Family, Dtypes, Becomes, Named, Signature, Summary)                      \
  {BuiltinId::Id, Name, BuiltinFamily::Family, Admits::Dtypes, Named, Signature, Summary},
#include "keel/sema/Builtins.def"
#undef KEEL_BUILTIN
};

bool isReducing(BuiltinFamily f) {
  switch (f) {
  case BuiltinFamily::Reduce: case BuiltinFamily::ReduceIndex: case BuiltinFamily::ReduceBool:
    return true;
  case BuiltinFamily::Unary: case BuiltinFamily::Binary: case BuiltinFamily::Select: case BuiltinFamily::Matmul:
  case BuiltinFamily::Transpose:
  case BuiltinFamily::Reshape: case BuiltinFamily::Broadcast: case BuiltinFamily::Slice: case BuiltinFamily::Concat:
  case BuiltinFamily::Full: case BuiltinFamily::Zeros: case BuiltinFamily::Iota: case BuiltinFamily::TensorLit:
  case BuiltinFamily::Random: case BuiltinFamily::Print:
    return false;
  }
  return false;
}

} // namespace

bool admits(Admits a, ElementType t) {
  switch (a) {
  case Admits::FloatMath: return isFloatElement(t);
  case Admits::SignedMath: return isFloatElement(t) || elementInfo(t).kind == ElementKind::Signed;
  case Admits::IntegerBits: return isIntegerElement(t);
  case Admits::Arithmetic: return t != ElementType::Bool;
  case Admits::Bitwise: return isIntegerElement(t) || t == ElementType::Bool;
  case Admits::Reduce: return t != ElementType::Bool;
  case Admits::ReduceLogic: return t == ElementType::Bool;
  case Admits::Any: return true;
  }
  return false;
}

std::string_view admittedText(Admits a) {
  switch (a) {
  case Admits::FloatMath: return "floating-point elements";
  case Admits::SignedMath: return "floating-point or signed integer elements";
  case Admits::IntegerBits: return "integer elements";
  case Admits::Arithmetic: return "numeric elements (not bool)";
  case Admits::Bitwise: return "integer or bool elements";
  case Admits::Reduce: return "numeric elements (not bool)";
  case Admits::ReduceLogic: return "bool elements";
  case Admits::Any: return "elements of every type";
  }
  return "";
}

std::vector<std::string_view> BuiltinInfo::namedArguments() const {
  std::vector<std::string_view> out;
  std::string_view rest = named;
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    out.push_back(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return out;
}

std::span<const BuiltinInfo> builtins() { return kBuiltins; }

const BuiltinInfo &builtinInfo(BuiltinId id) { return kBuiltins[static_cast<size_t>(id)]; }

const BuiltinInfo *findBuiltin(std::string_view name, bool reductionForm) {
  const BuiltinInfo *found = nullptr;
  for (const BuiltinInfo &b : kBuiltins)
    if (b.name == name && (!found || isReducing(b.family) == reductionForm))
      found = &b;
  return found;
}

} // namespace keel::sema
