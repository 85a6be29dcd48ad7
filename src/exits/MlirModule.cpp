//===- MlirModule.cpp - The scaffold both MLIR exits write ---------------===//
#include "MlirModule.h"

#include "keel/ir/Text.h"

namespace keel::exits::detail {

SsaNames::SsaNames(const ir::Function &f) {
  for (const auto &[v, name] : ir::displayNames(f))
    names_[v] = "%v" + name.substr(1);
}

std::string SsaNames::of(ir::ValueId v) {
  auto outer = outer_.find(v);
  auto it = names_.find(outer != outer_.end() ? outer->second : v);
  if (it != names_.end() && given_.insert(it->second).second)
    return it->second;
  return fresh();
}

std::map<std::string, std::string> symbolTable(const std::vector<const ir::Function *> &functions,
                                               std::set<std::string> reserved, const ir::Function *main) {
  std::map<std::string, std::string> symbols;
  for (const ir::Function *f : functions) {
    if (f == main) {
      symbols[f->name] = "main";
      continue;
    }
    std::string s = f->name.rfind("keel.", 0) == 0 ? "user." + f->name : f->name;
    while (reserved.count(s))
      s += "_";
    reserved.insert(s);
    symbols[f->name] = s;
  }
  return symbols;
}

std::string commaList(const std::vector<std::string> &items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i)
    s += (i ? ", " : "") + items[i];
  return s;
}

std::string resultTypeList(const std::vector<std::string> &types) {
  return types.size() == 1 ? types[0] : "(" + commaList(types) + ")";
}

std::string functionHead(std::string_view visibility, const std::string &symbol, const std::vector<std::string> &params,
                         const std::vector<std::string> &resultTypes) {
  std::string head = "  func.func " + std::string(visibility) + "@" + symbol + "(" + commaList(params) + ")";
  if (!resultTypes.empty())
    head += " -> " + resultTypeList(resultTypes);
  return head;
}

std::string callText(const std::string &symbol, const std::vector<std::string> &args,
                     const std::vector<std::string> &argTypes, const std::vector<std::string> &resultTypes) {
  return "@" + symbol + "(" + commaList(args) + ") : (" + commaList(argTypes) + ") -> " + resultTypeList(resultTypes);
}

std::vector<std::string> resultNames(const std::string &r, size_t count) {
  if (count == 1)
    return {r};
  std::vector<std::string> names;
  for (size_t i = 0; i < count; ++i)
    names.push_back(r + "#" + std::to_string(i));
  return names;
}

std::string resultsDefined(const std::string &r, size_t count) {
  if (count == 0)
    return "";
  return r + (count > 1 ? ":" + std::to_string(count) : "") + " = ";
}

} // namespace keel::exits::detail
