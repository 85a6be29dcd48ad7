//===- CodegenTest.cpp - Loop IR compiled and called through the JIT -----===//
//
// Loop IR built by hand (buffers, loads and stores, the operations with
// defined results), compiled, and called with its C signature. Expected
// values are worked by hand, or (widening) the numerics library's.
//
//===----------------------------------------------------------------------===//
#include "keel/codegen/Codegen.h"
#include "keel/numerics/Helpers.h"
#include "keel/runtime/Threads.h"

#include <bit>
#include <climits>
#include <cstring>
#include <gtest/gtest.h>

using namespace keel;
using namespace keel::loop;

namespace {

ExprPtr load(Type t, Slot ptr, Slot index) {
  auto e = std::make_unique<Expr>();
  e->kind = Expr::Kind::Load;
  e->type = t;
  e->operands.push_back(makeVar(ptr, Type::Ptr));
  e->operands.push_back(makeVar(index, Type::I64));
  return e;
}
StmtPtr assign(Slot s, ExprPtr v) {
  auto st = std::make_unique<Stmt>();
  st->kind = Stmt::Kind::Assign;
  st->slot = s;
  st->value = std::move(v);
  return st;
}
StmtPtr forLoop(Slot counter, Slot bound, std::vector<StmtPtr> body) {
  auto st = std::make_unique<Stmt>();
  st->kind = Stmt::Kind::For;
  st->slot = counter;
  st->from = makeConst(Type::I64, 0);
  st->to = makeVar(bound, Type::I64);
  st->body = std::move(body);
  return st;
}
StmtPtr ret(ExprPtr v) {
  auto st = std::make_unique<Stmt>();
  st->kind = Stmt::Kind::Return;
  st->value = std::move(v);
  return st;
}

Module buildModule() {
  Module m;
  { // fn sum(p: ptr, n: i64) -> f64: the f64 elements added in index order
    Function f;
    f.name = "sum";
    f.slots = {Type::Ptr, Type::I64, Type::F64, Type::I64};
    f.params = 2;
    f.result = Type::F64;
    f.body.push_back(assign(2, makeConst(Type::F64, 0)));
    std::vector<StmtPtr> body;
    body.push_back(assign(2, makeBinary(BinaryOp::Add, makeVar(2, Type::F64), load(Type::F64, 0, 3))));
    f.body.push_back(forLoop(3, 1, std::move(body)));
    f.body.push_back(ret(makeVar(2, Type::F64)));
    m.functions.push_back(std::move(f));
  }
  { // fn twice(p: ptr, n: i64): each f16 element times 2, in place
    Function f;
    f.name = "twice";
    f.slots = {Type::Ptr, Type::I64, Type::I64};
    f.params = 2;
    auto store = std::make_unique<Stmt>();
    store->kind = Stmt::Kind::Store;
    store->slot = 0;
    store->index = makeVar(2, Type::I64);
    store->value = makeBinary(BinaryOp::Mul, load(Type::F16, 0, 2), makeConst(Type::F16, 0x4000));
    std::vector<StmtPtr> body;
    body.push_back(std::move(store));
    f.body.push_back(forLoop(2, 1, std::move(body)));
    m.functions.push_back(std::move(f));
  }
  for (BinaryOp op : {BinaryOp::Div, BinaryOp::Rem}) { // fn div/rem(a: i64, b: i64) -> i64
    Function f;
    f.name = op == BinaryOp::Div ? "div" : "rem";
    f.slots = {Type::I64, Type::I64};
    f.params = 2;
    f.result = Type::I64;
    f.body.push_back(ret(makeBinary(op, makeVar(0, Type::I64), makeVar(1, Type::I64))));
    m.functions.push_back(std::move(f));
  }
  return m;
}

TEST(CodegenTest, BuffersLoadsStoresAndDefinedDivision) {
  Module m = buildModule();
  ASSERT_TRUE(verify(m).empty()) << verify(m)[0];
  std::string error;
  std::unique_ptr<codegen::Program> program = codegen::Program::compile(m, error);
  ASSERT_TRUE(program) << error;

  auto sum = reinterpret_cast<double (*)(void *, int64_t)>(program->address("sum", error));
  ASSERT_TRUE(sum) << error;
  double values[3] = {0.5, 1.25, 2.0};
  EXPECT_EQ(sum(values, 3), 3.75);

  auto twice = reinterpret_cast<void (*)(void *, int64_t)>(program->address("twice", error));
  ASSERT_TRUE(twice) << error;
  uint16_t halves[3] = {0x3c00, 0x7bff, 0x0001}; // 1, 65504, 2^-24
  twice(halves, 3);
  EXPECT_EQ(halves[0], 0x4000); // 2
  EXPECT_EQ(halves[1], 0x7c00); // overflow: inf
  EXPECT_EQ(halves[2], 0x0002); // 2^-23, exact

  auto div = reinterpret_cast<int64_t (*)(int64_t, int64_t)>(program->address("div", error));
  auto rem = reinterpret_cast<int64_t (*)(int64_t, int64_t)>(program->address("rem", error));
  ASSERT_TRUE(div && rem) << error;
  EXPECT_EQ(div(7, 0), 0);
  EXPECT_EQ(rem(7, 0), 7);
  EXPECT_EQ(div(INT64_MIN, -1), INT64_MIN);
  EXPECT_EQ(rem(INT64_MIN, -1), 0);
  EXPECT_EQ(div(-7, 2), -3);
  EXPECT_EQ(rem(-7, 2), -1);
}

TEST(CodegenTest, VerifierRejectsIllTypedLoopIR) {
  Module m;
  Function f;
  f.name = "bad";
  f.slots = {Type::I64};
  f.params = 1;
  f.result = Type::I64;
  f.body.push_back(ret(makeBinary(BinaryOp::Add, makeVar(0, Type::I64), makeConst(Type::F64, 0))));
  auto brk = std::make_unique<Stmt>();
  brk->kind = Stmt::Kind::Break;
  f.body.push_back(std::move(brk));
  m.functions.push_back(std::move(f));
  std::vector<std::string> problems = verify(m);
  ASSERT_EQ(problems.size(), 2u);
  EXPECT_NE(problems[0].find("binary operands must have the result's type"), std::string::npos);
  EXPECT_NE(problems[1].find("`break` or `continue` outside a loop"), std::string::npos);
}

} // namespace

namespace {
/// fn squares(p: ptr, n: i64, scale: i64): p[i] = scale * i * i for i in
/// 0..n as a parallel loop (its counter and a local private, p, n and scale
/// read from outside).
Module parallelModule() {
  Module m;
  Function f;
  f.name = "squares";
  f.slots = {Type::Ptr, Type::I64, Type::I64, Type::I64, Type::I64};
  f.params = 3;
  f.result = Type::Void;
  std::vector<StmtPtr> body;
  body.push_back(assign(4, makeBinary(BinaryOp::Mul, makeVar(3, Type::I64), makeVar(3, Type::I64))));
  auto store = std::make_unique<Stmt>();
  store->kind = Stmt::Kind::Store;
  store->slot = 0;
  store->index = makeVar(3, Type::I64);
  store->value = makeBinary(BinaryOp::Mul, makeVar(2, Type::I64), makeVar(4, Type::I64));
  body.push_back(std::move(store));
  StmtPtr loop = forLoop(3, 1, std::move(body));
  loop->parallel = true;
  f.body.push_back(std::move(loop));
  m.functions.push_back(std::move(f));
  return m;
}
} // namespace

TEST(CodegenTest, ParallelLoopsComputeEveryIterationOnceAtEveryThreadCount) {
  Module m = parallelModule();
  ASSERT_TRUE(verify(m).empty()) << verify(m)[0];
  EXPECT_NE(print(m).find("for.parallel %3 in"), std::string::npos);
  std::string error;
  std::unique_ptr<codegen::Program> program = codegen::Program::compile(m, error);
  ASSERT_TRUE(program) << error;
  auto squares = reinterpret_cast<void (*)(void *, int64_t, int64_t)>(program->address("squares", error));
  ASSERT_TRUE(squares) << error;
  for (int32_t threads : {1, 2, 3, 4, 7}) {
    keel_rt_set_threads(threads);
    for (int64_t n : {0, 1, 2, 5, 1000}) {
      std::vector<int64_t> out(static_cast<size_t>(n) + 1, -1);
      squares(out.data(), n, 3);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(out[static_cast<size_t>(i)], 3 * i * i) << "threads " << threads << ", n " << n << ", i " << i;
      EXPECT_EQ(out[static_cast<size_t>(n)], -1) << "stored past the range";
    }
  }
  keel_rt_set_threads(0);
}

TEST(CodegenTest, VerifierHoldsParallelLoopsToTheirRules) {
  auto problemsOf = [](auto edit) {
    Module m = parallelModule();
    edit(m.functions[0]);
    return verify(m);
  };
  auto has = [](const std::vector<std::string> &problems, const std::string &text) {
    for (const std::string &p : problems)
      if (p.find(text) != std::string::npos)
        return true;
    return false;
  };
  // A private slot read after the loop.
  std::vector<std::string> p = problemsOf([](Function &f) { f.body.push_back(assign(2, makeVar(4, Type::I64))); });
  EXPECT_TRUE(has(p, "%4 is assigned in a parallel loop and used outside it")) << (p.empty() ? "" : p[0]);
  // A parameter assigned inside.
  p = problemsOf([](Function &f) { f.body[0]->body.push_back(assign(1, makeConst(Type::I64, 0))); });
  EXPECT_TRUE(has(p, "%1 is assigned in a parallel loop and used outside it"));
  // return, print, break out of it, a parallel loop inside it, a free of an outside buffer.
  p = problemsOf([](Function &f) { f.body[0]->body.push_back(ret(nullptr)); });
  EXPECT_TRUE(has(p, "`return` inside a parallel `for`"));
  p = problemsOf([](Function &f) {
    auto print = std::make_unique<Stmt>();
    print->kind = Stmt::Kind::Print;
    f.body[0]->body.push_back(std::move(print));
  });
  EXPECT_TRUE(has(p, "`print` inside a parallel `for`"));
  p = problemsOf([](Function &f) {
    auto brk = std::make_unique<Stmt>();
    brk->kind = Stmt::Kind::Break;
    f.body[0]->body.push_back(std::move(brk));
  });
  EXPECT_TRUE(has(p, "`break` or `continue` of a parallel `for`, or out of it"));
  p = problemsOf([](Function &f) {
    f.slots.push_back(Type::I64);
    StmtPtr inner = forLoop(5, 1, {});
    inner->parallel = true;
    f.body[0]->body.push_back(std::move(inner));
  });
  EXPECT_TRUE(has(p, "a parallel `for` inside another"));
  p = problemsOf([](Function &f) { f.body[0]->body.push_back(makeFree(0)); });
  EXPECT_TRUE(has(p, "a parallel loop frees %0, which it did not allocate"));
  p = problemsOf([](Function &f) {
    f.slots[3] = Type::I32;
    f.body[0]->from = makeConst(Type::I32, 0);
    f.body[0]->to = makeConst(Type::I32, 4);
  });
  EXPECT_TRUE(has(p, "a parallel `for` needs an i64 counter"));
}

namespace {
/// fn widen(in: ptr, to32: ptr, to64: ptr, n: i64): each element of `t`
/// converted to f32 and to f64.
Module widenModule(Type t) {
  Module m;
  Function f;
  f.name = "widen";
  f.slots = {Type::Ptr, Type::Ptr, Type::Ptr, Type::I64, Type::I64};
  f.params = 4;
  std::vector<StmtPtr> body;
  for (auto [slot, to] : {std::pair{Slot{1}, Type::F32}, std::pair{Slot{2}, Type::F64}}) {
    auto store = std::make_unique<Stmt>();
    store->kind = Stmt::Kind::Store;
    store->slot = slot;
    store->index = makeVar(4, Type::I64);
    store->value = makeCast(load(t, 0, 4), to);
    body.push_back(std::move(store));
  }
  f.body.push_back(forLoop(4, 3, std::move(body)));
  m.functions.push_back(std::move(f));
  return m;
}

/// Every encoding of a format (tf32: its 2^19, the low carrier bits clear)
/// widened by generated code and by the numerics library's conversions,
/// which are exact and checked against LLVM's APFloat.
template <typename Carrier>
void expectWideningAsLibrary(Type t, const char *name, float (*to32)(Carrier), double (*to64)(Carrier), int bits,
                             int shift) {
  Module m = widenModule(t);
  ASSERT_TRUE(verify(m).empty()) << verify(m)[0];
  std::string error;
  std::unique_ptr<codegen::Program> program = codegen::Program::compile(m, error);
  ASSERT_TRUE(program) << error;
  auto widen = reinterpret_cast<void (*)(const Carrier *, float *, double *, int64_t)>(program->address("widen", error));
  ASSERT_TRUE(widen) << error;
  std::vector<Carrier> in;
  for (uint64_t e = 0; e < (uint64_t{1} << bits); ++e) {
    uint32_t encoding = static_cast<uint32_t>(e << shift);
    Carrier c;
    std::memcpy(&c, &encoding, sizeof c);
    in.push_back(c);
  }
  std::vector<float> out32(in.size());
  std::vector<double> out64(in.size());
  widen(in.data(), out32.data(), out64.data(), static_cast<int64_t>(in.size()));
  int differences = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    uint32_t got32 = std::bit_cast<uint32_t>(out32[i]), want32 = std::bit_cast<uint32_t>(to32(in[i]));
    uint64_t got64 = std::bit_cast<uint64_t>(out64[i]), want64 = std::bit_cast<uint64_t>(to64(in[i]));
    if ((got32 != want32 || got64 != want64) && ++differences <= 3)
      ADD_FAILURE() << name << " encoding " << i << ": f32 0x" << std::hex << got32 << " (library 0x" << want32
                    << "), f64 0x" << got64 << " (library 0x" << want64 << ")";
  }
  EXPECT_EQ(differences, 0) << name;
}
} // namespace

/// Widening a low-precision value is emitted inline (so that loops over it
/// vectorize); it must equal the library's exact conversion on every
/// encoding, NaNs (canonical, of their sign), infinities and subnormals
/// included.
TEST(CodegenTest, WideningEveryEncodingEqualsTheLibrary) {
  expectWideningAsLibrary<uint16_t>(Type::F16, "f16", keel_f16_to_f32, keel_f16_to_f64, 16, 0);
  expectWideningAsLibrary<uint16_t>(Type::BF16, "bf16", keel_bf16_to_f32, keel_bf16_to_f64, 16, 0);
  expectWideningAsLibrary<uint8_t>(Type::FP8E4M3FN, "fp8e4m3fn", keel_fp8e4m3fn_to_f32, keel_fp8e4m3fn_to_f64, 8, 0);
  expectWideningAsLibrary<uint8_t>(Type::FP8E5M2, "fp8e5m2", keel_fp8e5m2_to_f32, keel_fp8e5m2_to_f64, 8, 0);
  expectWideningAsLibrary<float>(Type::TF32, "tf32", keel_tf32_to_f32, keel_tf32_to_f64, 19, 13);
}
