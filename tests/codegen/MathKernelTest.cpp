//===- MathKernelTest.cpp - Inline f32 kernels equal the library ---------===//
//
// Code generation emits exp, tanh, sigmoid and rsqrt on f32 inline, as
// vectorizable LLVM IR, and gives gelu, silu, sin and cos vector variants
// that the loop vectorizer calls (src/codegen/Codegen.cpp, F32Kernels), instead of
// calling keel/numerics/Math.h element by element. They must give the
// library's bits exactly: a loop applying each to a buffer is compiled and
// compared with the library function, on special values and random inputs
// at the vector width code generation asks for and at each forced width of
// 2 to 64 lanes (so that every variant runs; unit), and on all 2^32 f32
// encodings at the width it asks for (exhaustive:
// --gtest_also_run_disabled_tests).
//
//===----------------------------------------------------------------------===//
#include "keel/codegen/Codegen.h"
#include "keel/numerics/Math.h"

#include <gtest/gtest.h>
#include <llvm/Support/CommandLine.h>

#include <bit>
#include <cstdint>
#include <cstring>
#include <atomic>
#include <random>
#include <thread>

using namespace keel;
using namespace keel::loop;

namespace {

struct Kernel {
  const char *name;
  UnaryOp op;
  float (*library)(float);
};
const Kernel kKernels[] = {
    {"exp", UnaryOp::Exp, keel_exp_f32},
    {"tanh", UnaryOp::Tanh, keel_tanh_f32},
    {"sigmoid", UnaryOp::Sigmoid, keel_sigmoid_f32},
    {"rsqrt", UnaryOp::Rsqrt, keel_rsqrt_f32},
    {"gelu", UnaryOp::Gelu, keel_gelu_f32},
    {"silu", UnaryOp::Silu, keel_silu_f32},
    {"sin", UnaryOp::Sin, keel_sin_f32},
    {"cos", UnaryOp::Cos, keel_cos_f32},
};
/// Whether optimized LLVM IR calls NAME's variant of `lanes` lanes (not
/// only defines it).
bool callsVariant(const std::string &optimizedIr, const std::string &name, unsigned lanes) {
  std::string variant = "@keel_kernel_" + name + "_f32_v" + std::to_string(lanes) + "(";
  bool called = false;
  for (size_t at = optimizedIr.find(variant); at != std::string::npos; at = optimizedIr.find(variant, at + 1)) {
    size_t line = optimizedIr.rfind('\n', at);
    called |= optimizedIr.compare(line + 1, std::string::npos, "define", 0, 6) != 0 &&
              optimizedIr.substr(line + 1, at - line).find("call") != std::string::npos;
  }
  return called;
}

/// Sets LLVM's -force-vector-width (0: the loop vectorizer's own choice)
/// for the compilations that follow in this process.
void forceVectorWidth(unsigned lanes) {
  auto &options = llvm::cl::getRegisteredOptions();
  auto it = options.find("force-vector-width");
  ASSERT_NE(it, options.end()) << "LLVM has no -force-vector-width";
  // (Parsed by the option itself, whatever its storage: LLVM keeps this
  // one in an external variable.)
  ASSERT_FALSE(it->second->addOccurrence(0, "force-vector-width", std::to_string(lanes)));
}

/// fn apply(in: ptr, out: ptr, n: i64) { for i in 0..n { out[i] = op(in[i]) } }
Module applyModule(UnaryOp op) {
  Module m;
  Function f;
  f.name = "apply";
  f.slots = {Type::Ptr, Type::Ptr, Type::I64, Type::I64};
  f.params = 3;
  f.result = Type::Void;
  auto store = std::make_unique<Stmt>();
  store->kind = Stmt::Kind::Store;
  store->slot = 1;
  store->index = makeVar(3, Type::I64);
  store->value = makeUnary(op, makeLoad(Type::F32, makeVar(0, Type::Ptr), makeVar(3, Type::I64)));
  auto loop = std::make_unique<Stmt>();
  loop->kind = Stmt::Kind::For;
  loop->slot = 3;
  loop->from = makeConst(Type::I64, 0);
  loop->to = makeVar(2, Type::I64);
  loop->body.push_back(std::move(store));
  f.body.push_back(std::move(loop));
  m.functions.push_back(std::move(f));
  return m;
}

using Apply = void (*)(const float *, float *, int64_t);

/// Compares kernel and library on `in`; returns the number of differences
/// (reporting the first few).
int64_t compare(Apply apply, const Kernel &k, const std::vector<float> &in) {
  std::vector<float> out(in.size());
  apply(in.data(), out.data(), static_cast<int64_t>(in.size()));
  int64_t differences = 0;
  for (size_t i = 0; i < in.size(); ++i) {
    uint32_t want = std::bit_cast<uint32_t>(k.library(in[i])), got = std::bit_cast<uint32_t>(out[i]);
    if (want != got && ++differences <= 3)
      ADD_FAILURE() << k.name << "(" << std::hexfloat << in[i] << " = 0x" << std::hex
                    << std::bit_cast<uint32_t>(in[i]) << "): kernel 0x" << got << ", library 0x" << want;
  }
  return differences;
}

class MathKernelTest : public ::testing::TestWithParam<Kernel> {
protected:
  void SetUp() override { compile(0); }
  void compile(unsigned lanes) {
    forceVectorWidth(lanes);
    module_ = applyModule(GetParam().op);
    std::string error;
    program_ = codegen::Program::compile(module_, error);
    optimizedIr_ = codegen::emitLLVMText(module_, true);
    forceVectorWidth(0);
    ASSERT_TRUE(program_) << error;
    apply_ = reinterpret_cast<Apply>(program_->address("apply", error));
    ASSERT_TRUE(apply_) << error;
  }
  Module module_;
  std::string optimizedIr_; ///< the LLVM IR after -O2
  std::unique_ptr<codegen::Program> program_;
  Apply apply_ = nullptr;
};

std::vector<float> specialAndRandomInputs() {
  std::vector<float> in;
  for (uint32_t bits : {0x00000000u, 0x80000000u, 0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFFC00001u, 0x7F800001u,
                        0x00000001u, 0x80000001u, 0x007FFFFFu, 0x00800000u, 0x7F7FFFFFu, 0xFF7FFFFFu, 0x3F800000u})
    in.push_back(std::bit_cast<float>(bits));
  // The library's branch points and clamps, and around them.
  for (double edge : {0x1p-28, 0.17325, 0.3465, 1.0, 22.0, 11.0, -150.0, 100.0, 88.72, -103.97, -87.3, 37.0, 38.0,
                      2.12, 3.0, 40.0, 800.0,
                      // sin and cos: the reduction's start, multiples of pi/2, the variants' bound
                      0.7853981633974483, 1.5707963267948966, 3.141592653589793, 4.71238898038469,
                      6.283185307179586, 0x1p19, 0x1p20, 823549.6})
    for (double v : {edge, -edge})
      for (int step = -4; step <= 4; ++step) {
        uint32_t b = std::bit_cast<uint32_t>(static_cast<float>(v)) + static_cast<uint32_t>(step);
        in.push_back(std::bit_cast<float>(b));
      }
  std::mt19937 rng(11);
  for (int i = 0; i < 2000000; ++i)
    in.push_back(std::bit_cast<float>(static_cast<uint32_t>(rng())));
  std::uniform_real_distribution<float> moderate(-30.0f, 30.0f);
  for (int i = 0; i < 1000000; ++i)
    in.push_back(moderate(rng));
  std::normal_distribution<float> activations; // mostly gelu's and silu's common branch, a few lanes not
  for (int i = 0; i < 1000000; ++i)
    in.push_back(activations(rng));
  return in;
}

TEST_P(MathKernelTest, SpecialAndRandomInputs) {
  EXPECT_EQ(compare(apply_, GetParam(), specialAndRandomInputs()), 0);
}

/// Each vector width the loop vectorizer may choose, so that each variant
/// (2 to 64 lanes) runs whatever the host.
TEST_P(MathKernelTest, EveryVectorWidth) {
  std::vector<float> in = specialAndRandomInputs();
  in.resize(in.size() / 4);
  std::string name = GetParam().name;
  for (unsigned lanes : {2u, 4u, 8u, 16u, 32u, 64u}) {
    compile(lanes);
    EXPECT_EQ(compare(apply_, GetParam(), in), 0) << lanes << " lanes";
    // The loop calls the variant of that width (so it is the one compared).
    if (codegen::hasVectorVariants(name)) {
      EXPECT_TRUE(callsVariant(optimizedIr_, name, lanes)) << "no call of the " << lanes << "-lane variant";
    }
  }
}

/// Disabled among the unit tests; the exhaustive CTest entry runs it.
TEST_P(MathKernelTest, DISABLED_EveryF32Input) {
  // At the vectorizer's own width: the widest variant for this host.
  if (codegen::hasVectorVariants(GetParam().name)) {
    ASSERT_TRUE(callsVariant(optimizedIr_, GetParam().name, codegen::wideKernelLanes()))
        << "the loop does not call the " << codegen::wideKernelLanes() << "-lane variant";
  }
  constexpr uint64_t kChunk = uint64_t{1} << 24;
  std::atomic<int64_t> differences{0};
  auto sweep = [&](uint64_t first, uint64_t last) {
    std::vector<float> in(kChunk);
    for (uint64_t base = first; base < last; base += kChunk) {
      for (uint64_t i = 0; i < kChunk; ++i)
        in[i] = std::bit_cast<float>(static_cast<uint32_t>(base + i));
      std::vector<float> out(kChunk);
      apply_(in.data(), out.data(), static_cast<int64_t>(kChunk));
      for (uint64_t i = 0; i < kChunk; ++i)
        if (std::bit_cast<uint32_t>(out[i]) != std::bit_cast<uint32_t>(GetParam().library(in[i])))
          ++differences;
    }
  };
  std::thread half(sweep, 0, uint64_t{1} << 31);
  sweep(uint64_t{1} << 31, uint64_t{1} << 32);
  half.join();
  EXPECT_EQ(differences.load(), 0) << GetParam().name;
}

INSTANTIATE_TEST_SUITE_P(Kernels, MathKernelTest, ::testing::ValuesIn(kKernels),
                         [](const ::testing::TestParamInfo<Kernel> &info) { return std::string(info.param.name); });

} // namespace
