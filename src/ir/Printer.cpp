//===- Printer.cpp - Tensor IR to text -----------------------------------===//
#include "keel/ir/Text.h"

#include <cstdio>
#include <set>
#include <unordered_map>

namespace keel::ir {

namespace {

class Printer {
public:
  Printer(const Function &f, const PrintOptions &options) : f_(f), options_(options) {}

  std::string run() {
    out_ = "func @" + f_.name + "(";
    for (size_t i = 0; i < f_.params.size(); ++i)
      out_ += (i ? ", " : "") + define(f_.params[i]) + ": " + typeText(f_.valueTypes[f_.params[i]]);
    out_ += ") -> ";
    if (f_.resultTypes.size() == 1) {
      out_ += typeText(f_.resultTypes[0]);
    } else {
      out_ += "(";
      for (size_t i = 0; i < f_.resultTypes.size(); ++i)
        out_ += (i ? ", " : "") + typeText(f_.resultTypes[i]);
      out_ += ")";
    }
    if (!f_.effects.empty())
      out_ += " ![" + f_.effects.text() + "]";
    out_ += location(f_.loc) + " {\n";
    for (const Op &op : f_.ops)
      printOp(op, 1);
    out_ += "}\n";
    return out_;
  }

private:
  /// The next name: `%N` in definition order, or with keepNames the
  /// author's (the first value to claim it) and else the next number no
  /// author name takes.
  std::string define(ValueId v) {
    std::string name;
    if (options_.keepNames) {
      if (authored_.empty())
        for (const std::string &n : f_.names)
          authored_.insert(n);
      std::string_view own = f_.authorName(v);
      if (!own.empty() && claimed_.insert(std::string(own)).second) {
        name = own;
      } else {
        do
          name = std::to_string(counter_++);
        while (authored_.count(name) || !claimed_.insert(name).second);
      }
    } else {
      name = std::to_string(counter_++);
    }
    name = "%" + name;
    names_.emplace(v, name);
    return name;
  }
  std::string use(ValueId v) const {
    auto it = names_.find(v);
    return it != names_.end() ? it->second : "%<undefined " + std::to_string(v) + ">";
  }
  std::string location(const Location &l) const {
    if (!options_.locations || !l.known())
      return "";
    return " " + locationText(l);
  }
  /// `key = value, ...`: the attributes Ops.def gives the op's kind, in
  /// the attribute table's order (a unit attribute only when set).
  static std::string attributes(const Op &op) {
    std::string text;
    const OpInfo &info = opInfo(op.kind);
#define KEEL_IR_ATTR(Name, Key, Kind, Field)                                                                \
  if (info.takes(Attr::Name))                                                                              \
    add##Kind(text, Key, op.Field, op);
#include "keel/ir/Ops.def"
#undef KEEL_IR_ATTR
    return text;
  }
  static void add(std::string &text, std::string_view key, const std::string &value) {
    text += (text.empty() ? "" : ", ") + std::string(key) + (value.empty() ? "" : " = " + value);
  }
  static void addIntList(std::string &text, std::string_view key, const std::vector<int64_t> &v, const Op &) {
    add(text, key, list(v));
  }
  static void addInt(std::string &text, std::string_view key, int64_t v, const Op &) { add(text, key, std::to_string(v)); }
  static void addDType(std::string &text, std::string_view key, const std::optional<DType> &t, const Op &) {
    add(text, key, std::string(dtypeName(t.value_or(DType::F32))));
  }
  static void addEncodings(std::string &text, std::string_view key, const std::vector<uint64_t> &v, const Op &op) {
    DType t = op.resultTypes.empty() ? DType::F32 : op.resultTypes[0].dtype;
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + encoding(v[i], t);
    add(text, key, s + "]");
  }
  static void addUnit(std::string &text, std::string_view key, bool set, const Op &) {
    if (set)
      add(text, key, "");
  }
  static void addOrder(std::string &text, std::string_view key, SumOrder o, const Op &) {
    if (o != SumOrder::Sequential) // the default is not written
      add(text, key, std::string(sumOrderName(o)));
  }

  static std::string list(const std::vector<int64_t> &v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i)
      s += (i ? ", " : "") + std::to_string(v[i]);
    return s + "]";
  }
  static std::string encoding(uint64_t bits, DType t) {
    int digits = (encodingBits(t) + 3) / 4;
    char buf[24];
    std::snprintf(buf, sizeof buf, "0x%0*llx", digits, static_cast<unsigned long long>(bits));
    return buf;
  }

  void printOp(const Op &op, int depth) {
    std::string indent(2 * static_cast<size_t>(depth), ' ');
    std::string line = indent;
    if (op.kind == OpKind::Return) {
      line += "return";
      for (size_t i = 0; i < op.operands.size(); ++i)
        line += (i ? ", " : " ") + use(op.operands[i]);
      out_ += line + location(op.loc) + "\n";
      return;
    }
    std::string operands;
    for (size_t i = 0; i < op.operands.size(); ++i)
      operands += (i ? ", " : "") + use(op.operands[i]);
    std::string mnemonic(opInfo(op.kind).mnemonic);
    switch (op.kind) {
    case OpKind::Unary: mnemonic += "." + std::string(unaryName(op.unary)); break;
    case OpKind::Binary: mnemonic += "." + std::string(binaryName(op.binary)); break;
    case OpKind::Compare: mnemonic += "." + std::string(compareName(op.compare)); break;
    case OpKind::Reduce: mnemonic += "." + std::string(combinerName(op.combiner)); break;
    case OpKind::Call: mnemonic += " @" + op.callee; break;
    case OpKind::Select: case OpKind::Convert: case OpKind::Constant: case OpKind::Iota: case OpKind::BroadcastInDim:
    case OpKind::Reshape: case OpKind::Transpose: case OpKind::Slice: case OpKind::Concatenate: case OpKind::DotGeneral:
    case OpKind::Copy: case OpKind::Relayout: case OpKind::Fusion: case OpKind::Return:
      break;
    }
    std::string attrs = attributes(op);
    std::string results;
    for (size_t i = 0; i < op.results.size(); ++i)
      results += (i ? ", " : "") + define(op.results[i]);
    if (!results.empty())
      line += results + " = ";
    line += mnemonic + "(" + operands + ")";
    if (!attrs.empty())
      line += " {" + attrs + "}";
    line += " :";
    for (size_t i = 0; i < op.resultTypes.size(); ++i)
      line += (i ? ", " : " ") + typeText(op.resultTypes[i]);
    line += location(op.loc);
    if (op.kind == OpKind::Fusion && op.region) {
      out_ += line + " {\n" + indent + "^(";
      for (size_t i = 0; i < op.region->params.size(); ++i)
        out_ += (i ? ", " : "") + define(op.region->params[i]) + ": " +
                typeText(f_.valueTypes[op.region->params[i]]);
      out_ += "):\n";
      for (const Op &inner : op.region->ops)
        printOp(inner, depth + 1);
      out_ += indent + "}\n";
      return;
    }
    out_ += line + "\n";
  }

public:
  /// The names the last run() gave each value.
  const std::unordered_map<ValueId, std::string> &names() const { return names_; }

private:
  const Function &f_;
  const PrintOptions &options_;
  std::unordered_map<ValueId, std::string> names_;
  size_t counter_ = 0;
  std::set<std::string> authored_, claimed_; ///< keepNames: every author name; the names given
  std::string out_;
};

} // namespace

std::string print(const Function &f, const PrintOptions &options) { return Printer(f, options).run(); }

std::unordered_map<ValueId, std::string> valueNames(const Function &f, const PrintOptions &options) {
  Printer p(f, options);
  p.run();
  return p.names();
}

std::unordered_map<ValueId, std::string> displayNames(const Function &f) {
  PrintOptions options;
  options.keepNames = true;
  return valueNames(f, options);
}

std::string valueName(const Function &f, ValueId v) {
  std::unordered_map<ValueId, std::string> names = displayNames(f);
  auto it = names.find(v);
  return it != names.end() ? it->second : "%<value " + std::to_string(v) + ">";
}

std::string print(const Module &m, const PrintOptions &options) {
  std::string out;
  for (size_t i = 0; i < m.functions.size(); ++i)
    out += (i ? "\n" : "") + print(m.functions[i], options);
  return out;
}

} // namespace keel::ir
