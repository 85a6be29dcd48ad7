//===- EntryTest.cpp - A tensor function's entry and its descriptors -----===//
//
// Tensor IR lowered by the CPU oracle, compiled, and called through
// `@F.entry` with KeelBuffer descriptors, as the host does: a descriptor
// that matches the static type gives the values (worked by hand); one that
// does not stops the program naming both types.
//
//===----------------------------------------------------------------------===//
#include "keel/codegen/Codegen.h"
#include "keel/ir/Text.h"
#include "keel/exits/cpu/Lower.h"
#include "keel/runtime/Buffer.h"

#include <gtest/gtest.h>

using namespace keel;

namespace {

constexpr const char *kIR = R"(func @f(%x: f32[2,3]) -> f32[3,2] {
  %t = transpose(%x) {perm = [1, 0]} : f32[3,2]
  %two = constant() {value = [0x40000000]} : f32[3,2]
  %r = binary.mul(%t, %two) : f32[3,2]
  return %r
}
)";

class EntryTest : public ::testing::Test {
protected:
  void SetUp() override {
    SourceManager sources;
    DiagnosticEngine diags(sources);
    std::optional<ir::Module> m = ir::parse(sources, sources.add("f.kir", kIR), diags);
    ASSERT_TRUE(m);
    cpu::lowerScheduled(*m, cpu::cpuSchedule(*m), module_);
    std::string error;
    program_ = codegen::Program::compile(module_, error);
    ASSERT_TRUE(program_) << error;
    entry_ = reinterpret_cast<Entry>(program_->address(cpu::entryName("f"), error));
    ASSERT_TRUE(entry_) << error;
  }
  static KeelBuffer buffer(uint8_t dtype, std::vector<int64_t> dims, std::vector<int64_t> order, void *data) {
    KeelBuffer b{};
    b.dtype = dtype;
    b.rank = static_cast<uint8_t>(dims.size());
    for (size_t i = 0; i < dims.size(); ++i) {
      b.dims[i] = dims[i];
      b.minor_to_major[i] = order[i];
    }
    b.data = data;
    return b;
  }
  using Entry = void (*)(KeelBuffer **);
  loop::Module module_;
  std::unique_ptr<codegen::Program> program_;
  Entry entry_ = nullptr;
};

TEST_F(EntryTest, MatchingDescriptorsGiveTheResult) {
  float in[6] = {0, 1, 2, 3, 4, 5}, out[6] = {};
  KeelBuffer x = buffer(KEEL_F32, {2, 3}, {1, 0}, in), r = buffer(KEEL_F32, {3, 2}, {1, 0}, out);
  KeelBuffer *args[] = {&x, &r};
  entry_(args);
  // transpose([[0,1,2],[3,4,5]]) * 2 = [[0,6],[2,8],[4,10]]
  const float want[6] = {0, 6, 2, 8, 4, 10};
  for (int i = 0; i < 6; ++i)
    EXPECT_EQ(out[i], want[i]) << i;
}

TEST_F(EntryTest, AMismatchedDescriptorStopsTheProgram) {
  float in[6] = {}, out[6] = {};
  KeelBuffer x = buffer(KEEL_F16, {2, 3}, {1, 0}, in), r = buffer(KEEL_F32, {3, 2}, {1, 0}, out);
  KeelBuffer *args[] = {&x, &r};
  EXPECT_EXIT(entry_(args), ::testing::ExitedWithCode(1),
              "argument 0 of `f` is f16\\[2,3\\]\\{1,0\\}, but `f` takes f32\\[2,3\\]\\{1,0\\}");
  KeelBuffer good = buffer(KEEL_F32, {2, 3}, {1, 0}, in), columns = buffer(KEEL_F32, {3, 2}, {0, 1}, out);
  KeelBuffer *layout[] = {&good, &columns};
  EXPECT_EXIT(entry_(layout), ::testing::ExitedWithCode(1),
              "argument 1 of `f` is f32\\[3,2\\]\\{0,1\\}, but `f` takes f32\\[3,2\\]\\{1,0\\}");
  KeelBuffer *missing[] = {&good, nullptr};
  EXPECT_EXIT(entry_(missing), ::testing::ExitedWithCode(1), "argument 1 of `f` is no buffer");
}

} // namespace
