//===- TestPasses.cpp - Passes that test the pipeline ---------------------===//
#include "keel/transforms/TestPasses.h"

namespace keel::transforms {

namespace {

bool returnsCopy(const ir::Function &f, ir::ValueId v) {
  for (const ir::Op &o : f.ops)
    if (o.kind == ir::OpKind::Copy && o.results[0] == v)
      return true;
  return false;
}

} // namespace

bool testInsertCopies(ir::Module &m) {
  bool changed = false;
  for (ir::Function &f : m.functions) {
    ir::Op ret = std::move(f.ops.back());
    f.ops.pop_back();
    for (ir::ValueId &v : ret.operands) {
      if (returnsCopy(f, v))
        continue; // already a copy: a second run changes nothing
      ir::Op copy;
      copy.kind = ir::OpKind::Copy;
      copy.operands = {v};
      copy.resultTypes = {f.valueTypes[v]};
      copy.results = {f.newValue(f.valueTypes[v])};
      copy.loc = ret.loc;
      v = copy.results[0];
      f.ops.push_back(std::move(copy));
      changed = true;
    }
    f.ops.push_back(std::move(ret));
  }
  return changed;
}

bool testBreakVerifier(ir::Module &m) {
  for (ir::Function &f : m.functions) {
    ir::Op &ret = f.ops.back();
    if (ret.operands.empty())
      continue;
    ret.operands[0] = static_cast<ir::ValueId>(f.valueTypes.size() + 1000); // defined nowhere
    return true;
  }
  return false;
}

} // namespace keel::transforms
