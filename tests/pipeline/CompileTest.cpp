//===- CompileTest.cpp - The pipeline's one entry, as a library ---------===//
//
// pipeline::load and pipeline::compile used as a tool embedding Keel uses
// them (the Python module will): source from memory, sizes bound from the
// arguments, errors as values, every target, and one loaded module
// compiled from several threads at once. Expected values are worked by
// hand.
//
//===----------------------------------------------------------------------===//
#include "keel/pipeline/Pipeline.h"

#include <gtest/gtest.h>

#include <cstring>
#include <thread>

using namespace keel;

namespace {

constexpr const char *kSource = R"(fn scale(x: Tensor<f32, [N]>, k: Tensor<f32, [N]>) -> Tensor<f32, [N]> ![gpu] {
    return x * k + 1.0;
}
fn rows(x: Tensor<f32, [R, C]>) -> Tensor<f32, [R]> ![gpu] {
    return sum(x, axis: 1);
}
)";

rt::Tensor f32Tensor(std::vector<int64_t> shape, const std::vector<float> &values) {
  rt::Tensor t = rt::Tensor::make(KEEL_F32, std::move(shape));
  std::memcpy(t.data.data(), values.data(), values.size() * sizeof(float));
  return t;
}

pipeline::Argument argument(std::string name, rt::Tensor t) {
  return pipeline::Argument{std::move(name), std::move(t), std::nullopt, "an array", std::nullopt};
}

/// Compiles `request` from kSource (loaded afresh) to `target`.
pipeline::Compiled compileSource(pipeline::Request request, pipeline::Target target = pipeline::Target::Cpu,
                                 std::string *diagnostics = nullptr) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  FileId file = sources.add("model.sfn", kSource);
  pipeline::Options options;
  options.target = target;
  pipeline::Compiled out;
  {
    pipeline::Compilation c(sources, diags, options);
    std::shared_ptr<const pipeline::Loaded> m = pipeline::load(c, file);
    EXPECT_TRUE(m);
    if (m)
      out = pipeline::compile(c, *m, std::move(request));
  }
  if (diagnostics)
    for (const Diagnostic &d : diags.diagnostics())
      *diagnostics += d.message + "\n";
  return out;
}

std::vector<float> call(pipeline::Compiled &compiled, const std::string &entry) {
  std::string error;
  pipeline::Executable::Entry run = compiled.executable->entry(entry, error);
  EXPECT_TRUE(run) << error;
  const pipeline::TensorSpec &result = compiled.signature->results.at(0);
  rt::Tensor out = rt::Tensor::make(result.dtype, result.shape);
  std::vector<KeelBuffer> buffers;
  for (rt::Tensor &t : compiled.inputs)
    buffers.push_back(t.view());
  buffers.push_back(out.view());
  std::vector<KeelBuffer *> pointers;
  for (KeelBuffer &b : buffers)
    pointers.push_back(&b);
  run(pointers.data());
  std::vector<float> values(static_cast<size_t>(out.elementCount()));
  std::memcpy(values.data(), out.data.data(), values.size() * sizeof(float));
  return values;
}

TEST(CompileTest, SizesComeFromTheArgumentsAndTheEntryRuns) {
  pipeline::Request r;
  r.entry = "scale";
  r.arguments.push_back(argument("x", f32Tensor({3}, {1, 2, 3})));
  r.arguments.push_back(argument("k", f32Tensor({3}, {0.5f, -2, 4})));
  pipeline::Compiled compiled = compileSource(std::move(r));
  ASSERT_TRUE(compiled.ok()) << compiled.error;
  ASSERT_TRUE(compiled.signature);
  EXPECT_EQ(compiled.signature->paramNames, (std::vector<std::string>{"x", "k"}));
  EXPECT_EQ(compiled.signature->results.at(0).text(), "f32[3]");
  // 1 * 0.5 + 1, 2 * -2 + 1, 3 * 4 + 1
  EXPECT_EQ(call(compiled, "scale"), (std::vector<float>{1.5f, -3.0f, 13.0f}));
}

TEST(CompileTest, BothCpuTargetsGiveTheSameValues) {
  for (pipeline::Target target : {pipeline::Target::Cpu, pipeline::Target::CpuReference}) {
    pipeline::Request r;
    r.entry = "rows";
    r.arguments.push_back(argument("x", f32Tensor({2, 3}, {1, 2, 3, 4, 5, 6})));
    pipeline::Compiled compiled = compileSource(std::move(r), target);
    ASSERT_TRUE(compiled.ok()) << pipeline::targetName(target) << ": " << compiled.error;
    EXPECT_EQ(call(compiled, "rows"), (std::vector<float>{6, 15})) << pipeline::targetName(target);
  }
}

TEST(CompileTest, ProblemsWithTheRequestAreValues) {
  pipeline::Request wrongDtype;
  wrongDtype.entry = "rows";
  rt::Tensor ints = rt::Tensor::make(KEEL_I32, {2, 2});
  wrongDtype.arguments.push_back(argument("x", std::move(ints)));
  pipeline::Compiled a = compileSource(std::move(wrongDtype));
  EXPECT_FALSE(a.ok());
  EXPECT_EQ(a.error, "argument x: `rows` takes f32[2,2] but an array holds i32[2,2]");

  pipeline::Request conflicting;
  conflicting.entry = "scale";
  conflicting.arguments.push_back(argument("x", f32Tensor({3}, {1, 2, 3})));
  conflicting.arguments.push_back(argument("k", f32Tensor({2}, {1, 2})));
  pipeline::Compiled b = compileSource(std::move(conflicting));
  EXPECT_FALSE(b.ok());
  EXPECT_NE(b.error.find("the arguments do not fit `scale`: `N` is 3"), std::string::npos) << b.error;

  pipeline::Request missing;
  missing.entry = "softmax";
  pipeline::Compiled c = compileSource(std::move(missing));
  EXPECT_FALSE(c.ok());
  EXPECT_EQ(c.error, "model.sfn has no function `softmax`");

  pipeline::Request noArgument;
  noArgument.entry = "rows";
  pipeline::Compiled d = compileSource(std::move(noArgument));
  EXPECT_EQ(d.error, "no argument for parameter `x` of `rows`");
}

TEST(CompileTest, TextTargetsAndProducts) {
  pipeline::Request r;
  r.entry = "rows";
  r.bindings = {{"R", 2}, {"C", 4}};
  r.argumentsRequired = false;
  r.product = pipeline::Product::ExitText;
  pipeline::Compiled linalg = compileSource(r, pipeline::Target::Linalg);
  ASSERT_TRUE(linalg.ok()) << linalg.error;
  EXPECT_NE(linalg.text.find("linalg.reduce ins(%v0 : tensor<2x4xf32>)"), std::string::npos) << linalg.text;
  EXPECT_NE(linalg.text.find("dimensions = [1]"), std::string::npos);
  pipeline::Compiled hlo = compileSource(r, pipeline::Target::StableHlo);
  ASSERT_TRUE(hlo.ok()) << hlo.error;
  EXPECT_NE(hlo.text.find("stablehlo.reduce"), std::string::npos);

  r.product = pipeline::Product::TensorIr;
  pipeline::Compiled ir = compileSource(r);
  ASSERT_TRUE(ir.ok());
  EXPECT_NE(ir.text.find("reduce.sum"), std::string::npos);

  // A CPU product from a text target is refused, not approximated.
  r.product = pipeline::Product::Executable;
  pipeline::Compiled refused = compileSource(r, pipeline::Target::Linalg);
  EXPECT_FALSE(refused.ok());
  EXPECT_EQ(refused.error, "the linalg exit gives MLIR text (`keel emit --linalg`) and the tensor IR it receives "
                           "(`keel ir --exit linalg`), not CPU code");
}

TEST(CompileTest, OneLoadedModuleCompilesOnSeveralThreads) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  FileId file = sources.add("model.sfn", kSource);
  pipeline::Options options;
  std::shared_ptr<const pipeline::Loaded> m;
  {
    pipeline::Compilation c(sources, diags, options);
    m = pipeline::load(c, file);
  }
  ASSERT_TRUE(m);
  constexpr int kThreads = 4;
  std::vector<std::vector<float>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      DiagnosticEngine own(sources); // each compilation its own diagnostics
      pipeline::Compilation c(sources, own, options);
      pipeline::Request r;
      r.entry = "rows";
      float v = static_cast<float>(t);
      r.arguments.push_back(argument("x", f32Tensor({1, 2 + t}, std::vector<float>(static_cast<size_t>(2 + t), v))));
      pipeline::Compiled compiled = pipeline::compile(c, *m, std::move(r));
      if (compiled.ok())
        results[static_cast<size_t>(t)] = call(compiled, "rows");
    });
  for (std::thread &t : threads)
    t.join();
  for (int t = 0; t < kThreads; ++t) // t added 2 + t times
    EXPECT_EQ(results[static_cast<size_t>(t)], (std::vector<float>{static_cast<float>(t * (2 + t))})) << "thread " << t;
}

} // namespace
