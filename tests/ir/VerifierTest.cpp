//===- VerifierTest.cpp - Rules that IR text cannot express --------------===//
//
// Text names values per function, so a value of another function or an
// out-of-range id can only come from a buggy pass: built here directly.
//
//===----------------------------------------------------------------------===//
#include "keel/ir/Verifier.h"

#include <gtest/gtest.h>

using namespace keel::ir;

namespace {

Function identity(const std::string &name) {
  Function f;
  f.name = name;
  TensorType t = TensorType::make(DType::F32, {2});
  f.params.push_back(f.newValue(t));
  f.resultTypes.push_back(t);
  Op ret;
  ret.kind = OpKind::Return;
  ret.operands = {f.params[0]};
  f.ops.push_back(std::move(ret));
  return f;
}

bool mentions(const std::vector<VerifierError> &errors, const std::string &text) {
  for (const VerifierError &e : errors)
    if (e.message.find(text) != std::string::npos)
      return true;
  return false;
}

TEST(VerifierTest, AValidFunctionPasses) {
  Module m;
  m.functions.push_back(identity("f"));
  EXPECT_TRUE(verify(m).empty());
}

TEST(VerifierTest, ValueIdsFromNowhere) {
  Module m;
  Function f = identity("f");
  f.ops.back().operands = {7}; // no such value in @f
  m.functions.push_back(std::move(f));
  EXPECT_TRUE(mentions(verify(m), "`return` uses value id 7, which is not a value of @f"));
}

TEST(VerifierTest, ResultArityAndMissingReturn) {
  Module m;
  Function f = identity("f");
  Op neg;
  neg.kind = OpKind::Unary;
  neg.operands = {f.params[0]};
  neg.resultTypes = {TensorType::make(DType::F32, {2})}; // a type, but no result value
  f.ops.insert(f.ops.begin(), std::move(neg));
  m.functions.push_back(std::move(f));
  Function g = identity("g");
  g.ops.clear();
  m.functions.push_back(std::move(g));
  std::vector<VerifierError> errors = verify(m);
  EXPECT_TRUE(mentions(errors, "`unary.neg` has 1 result, not 0"));
  EXPECT_TRUE(mentions(errors, "@g does not end with `return`"));
}

TEST(VerifierTest, DuplicateFunctionsAndUnknownCallees) {
  Module m;
  m.functions.push_back(identity("f"));
  m.functions.push_back(identity("f"));
  Function g = identity("g");
  Op call;
  call.kind = OpKind::Call;
  call.callee = "missing";
  call.operands = {g.params[0]};
  call.resultTypes = {TensorType::make(DType::F32, {2})};
  call.results = {g.newValue(call.resultTypes[0])};
  g.ops.insert(g.ops.begin(), std::move(call));
  m.functions.push_back(std::move(g));
  std::vector<VerifierError> errors = verify(m);
  EXPECT_TRUE(mentions(errors, "function @f is defined twice"));
  EXPECT_TRUE(mentions(errors, "call to unknown function @missing"));
}

} // namespace
