//===- LegalizeTest.cpp - Legalization and the exits' capability records -===//
//
// Every elementwise operation the tensor IR admits, on every dtype (unary,
// binary, compare, convert between every pair, iota past fp8's and i8's
// range, reductions and contractions into every float result), is
// legalized for each exit's capability record. Then:
//   - the result verifies, and every op in it is native for the record;
//   - the MLIR exits print it without an internal error, and refuse the
//     module as it was before legalization (their check is real);
//   - run on the CPU reference exit, the legalized module gives the
//     encodings the original gives, on inputs chosen to reach every rule
//     (0 and -1 divisors under MIN, NaN, infinities, values just past every
//     integer range and past +-448): the pass changes no result. NaNs
//     compare as NaNs (SFEP-0054 §6): f16, bf16 and tf32 arithmetic
//     computed in f32 gives the host's default NaN for inf - inf, where the
//     CPU exit's own helpers give the positive canonical NaN.
//
//===----------------------------------------------------------------------===//
#include "keel/exits/Linalg.h"
#include "keel/exits/StableHlo.h"
#include "keel/exits/cpu/Lower.h"
#include "keel/ir/Infer.h"
#include "keel/ir/Text.h"
#include "keel/ir/Verifier.h"
#include "keel/numerics/Format.h"
#include "keel/pipeline/Pipeline.h"
#include "keel/transforms/Legalize.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <limits>

using namespace keel;
using ir::DType;
using ir::OpKind;

namespace {

constexpr int64_t kN = 48; // elements per parameter
/// neg, abs, relu, not, then MathFunctions.def's rows.
constexpr int kUnaryCodes = 4
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary) +1
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
    ;

std::vector<DType> allDtypes() {
  std::vector<DType> out;
  for (int i = 0; i < kNumElementTypes; ++i)
    out.push_back(static_cast<DType>(i));
  return out;
}

/// Builds one function: parameters a and b of `dtype`[kN], then ops added
/// by `add` (each kept only if it verifies on its own), all returned.
class FunctionBuilder {
public:
  FunctionBuilder(std::string name, DType dtype, int params = 2) {
    f_.name = std::move(name);
    for (int i = 0; i < params; ++i)
      f_.params.push_back(f_.newValue(ir::TensorType::make(dtype, {kN})));
  }
  ir::ValueId param(size_t i) const { return f_.params[i]; }
  /// Adds `o` with a result of `t` if the op verifies; returns whether.
  bool add(ir::Op o, ir::TensorType t) {
    ir::Function trial = f_;
    o.resultTypes = {t};
    o.results = {trial.newValue(t)};
    ir::Op ret;
    ret.kind = OpKind::Return;
    ret.operands = {o.results[0]};
    trial.ops.push_back(o);
    trial.ops.push_back(ret);
    trial.resultTypes = {t};
    ir::Module m;
    m.functions.push_back(trial);
    if (!ir::verify(m).empty())
      return false;
    o.results = {f_.newValue(t)};
    f_.ops.push_back(o);
    f_.resultTypes.push_back(t);
    results_.push_back(o.results[0]);
    return true;
  }
  /// The function (empty when no op verified).
  std::optional<ir::Function> finish() {
    if (results_.empty())
      return std::nullopt;
    ir::Op ret;
    ret.kind = OpKind::Return;
    ret.operands = results_;
    f_.ops.push_back(ret);
    return f_;
  }

private:
  ir::Function f_;
  std::vector<ir::ValueId> results_;
};

ir::Op makeOp(OpKind kind, std::vector<ir::ValueId> operands) {
  ir::Op o;
  o.kind = kind;
  o.operands = std::move(operands);
  return o;
}

/// The module: per dtype, its unary, binary and compare ops, its converts
/// to every dtype, an iota, and reductions and contractions into it.
ir::Module everyOperation(size_t &opCount) {
  ir::Module m;
  opCount = 0;
  auto keep = [&](FunctionBuilder &b) {
    if (std::optional<ir::Function> f = b.finish())
      m.functions.push_back(std::move(*f));
  };
  for (DType t : allDtypes()) {
    std::string n(ir::dtypeName(t));
    ir::TensorType type = ir::TensorType::make(t, {kN});
    FunctionBuilder elementwise("elementwise_" + n, t);
    for (int c = 0; c < kUnaryCodes; ++c) {
      ir::Op o = makeOp(OpKind::Unary, {elementwise.param(0)});
      o.unary = static_cast<ir::UnaryCode>(c);
      opCount += elementwise.add(o, type);
    }
    for (int c = 0; c <= static_cast<int>(ir::BinaryCode::Xor); ++c) {
      ir::Op o = makeOp(OpKind::Binary, {elementwise.param(0), elementwise.param(1)});
      o.binary = static_cast<ir::BinaryCode>(c);
      opCount += elementwise.add(o, type);
    }
    for (int d = 0; d <= static_cast<int>(ir::CompareDir::Ge); ++d) {
      ir::Op o = makeOp(OpKind::Compare, {elementwise.param(0), elementwise.param(1)});
      o.compare = static_cast<ir::CompareDir>(d);
      opCount += elementwise.add(o, ir::TensorType::make(DType::Bool, {kN}));
    }
    keep(elementwise);
    FunctionBuilder conversions("convert_from_" + n, t, 1);
    for (DType to : allDtypes())
      opCount += conversions.add(makeOp(OpKind::Convert, {conversions.param(0)}), ir::TensorType::make(to, {kN}));
    keep(conversions);
    FunctionBuilder made("made_" + n, DType::F32, 2);
    ir::Op iota = makeOp(OpKind::Iota, {});
    opCount += made.add(iota, ir::TensorType::make(t, {600}));
    for (DType acc : {DType::F32, DType::F64, DType::I64}) {
      ir::Op reduce = makeOp(OpKind::Reduce, {made.param(0)});
      reduce.combiner = ir::Combiner::Sum;
      reduce.dims = {0};
      reduce.acc = acc;
      ir::Op dot = makeOp(OpKind::DotGeneral, {made.param(0), made.param(1)});
      dot.lhsContract = {0};
      dot.rhsContract = {0};
      dot.acc = acc;
      opCount += made.add(reduce, ir::TensorType::make(t, {}));
      opCount += made.add(dot, ir::TensorType::make(t, {}));
    }
    keep(made);
  }
  return m;
}

/// kN encodings of `t` that reach every rule, `shift` rotating them.
std::vector<uint64_t> inputs(DType t, size_t shift) {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<double> values = {0, -0.0, 1, -1, 2.5, -3.5, 7, -8, 100, -128, 127.9, 255.5, 256, -129, 447, 449,
                                464, 480, -500, 65504, 70000, -70000, 2147483647.0, 2147483648.0, -2147483649.0,
                                4294967296.0, 9.3e18, -9.3e18, 1.9e19, 3e38, inf, -inf, std::nan(""), 1e-40,
                                -1e-45, 0.1, -0.7, 1e300, 6.1e-5, 3.0e-8};
  std::vector<uint64_t> out;
  int bits = ir::encodingBits(t);
  uint64_t mask = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
  for (int64_t i = 0; i < kN; ++i) {
    size_t k = (static_cast<size_t>(i) + shift) % (values.size() + 8);
    if (ir::isFloatType(t)) {
      double v = k < values.size() ? values[k] : static_cast<double>(k) - 40.5;
      out.push_back(fp::fromF64(*ir::formatOf(t), v));
    } else if (t == DType::Bool) {
      out.push_back(k % 2);
    } else if (k < 4) { // MIN, MAX, 0 and -1: the division's edges
      uint64_t min = ir::isSignedType(t) ? uint64_t{1} << (bits - 1) : 0;
      uint64_t edges[] = {min, ir::isSignedType(t) ? mask >> 1 : mask, 0, mask};
      out.push_back(edges[k]);
    } else {
      double v = k < values.size() && std::isfinite(values[k]) ? values[k] : static_cast<double>(k);
      out.push_back(static_cast<uint64_t>(static_cast<int64_t>(std::fmod(v, 1e18))) & mask);
    }
  }
  return out;
}

rt::Tensor tensorOf(DType t, const std::vector<uint64_t> &encodings) {
  rt::Tensor out = rt::Tensor::make(static_cast<KeelDType>(t), {static_cast<int64_t>(encodings.size())});
  size_t size = out.data.size() / encodings.size();
  for (size_t i = 0; i < encodings.size(); ++i) {
    uint64_t e = encodings[i];
    if (t == DType::I4 && (e & 8))
      e |= ~uint64_t{0xF}; // stored sign-extended in its byte
    std::memcpy(&out.data[i * size], &e, size); // little-endian hosts
  }
  return out;
}

/// The bytes of every result of `entry` of `text` (IR text) on the CPU
/// reference exit.
std::vector<std::vector<uint8_t>> run(const std::string &text, const ir::Function &entry, std::string &problem) {
  SourceManager sources;
  DiagnosticEngine diags(sources);
  FileId file = sources.add("legalized.kir", text);
  pipeline::Options options;
  options.target = pipeline::Target::CpuReference;
  std::vector<std::vector<uint8_t>> out;
  pipeline::Compilation c(sources, diags, options);
  std::shared_ptr<const pipeline::Loaded> m = pipeline::load(c, file);
  if (!m) {
    problem = "the IR text does not load";
    return out;
  }
  pipeline::Request request;
  request.entry = entry.name;
  for (size_t i = 0; i < entry.params.size(); ++i) {
    DType t = entry.valueTypes[entry.params[i]].dtype;
    request.arguments.push_back({std::to_string(i), tensorOf(t, inputs(t, i * 7)), std::nullopt, "inputs", std::nullopt});
  }
  pipeline::Compiled compiled = pipeline::compile(c, *m, std::move(request));
  if (compiled.status != pipeline::Compiled::Status::Ok) {
    problem = compiled.error;
    for (const Diagnostic &d : diags.diagnostics())
      problem += d.message + "\n";
    return out;
  }
  std::string error;
  pipeline::Executable::Entry call = compiled.executable->entry(entry.name, error);
  if (!call) {
    problem = error;
    return out;
  }
  std::vector<rt::Tensor> results;
  for (const pipeline::TensorSpec &r : compiled.signature->results)
    results.push_back(rt::Tensor::make(r.dtype, r.shape));
  std::vector<KeelBuffer> buffers;
  for (rt::Tensor &t : compiled.inputs)
    buffers.push_back(t.view());
  for (rt::Tensor &t : results)
    buffers.push_back(t.view());
  std::vector<KeelBuffer *> pointers;
  for (KeelBuffer &b : buffers)
    pointers.push_back(&b);
  call(pointers.data());
  for (rt::Tensor &t : results)
    out.push_back(t.data);
  return out;
}

/// The first element at which `a` and `b` (elements of `t`) differ, NaNs
/// compared as NaNs (SFEP-0054 §6: an invalid operation computed in f32
/// gives the host's default NaN, whose sign is the host's).
std::optional<size_t> firstDifference(const ir::TensorType &type, const std::vector<uint8_t> &a,
                                      const std::vector<uint8_t> &b) {
  DType t = type.dtype;
  size_t count = static_cast<size_t>(type.elementCount().value_or(1));
  if (a.size() != b.size() || count == 0 || a.size() % count != 0 || a.size() / count > 8)
    return 0;
  size_t size = a.size() / count;
  for (size_t i = 0; i * size < a.size(); ++i) {
    uint64_t x = 0, y = 0;
    std::memcpy(&x, &a[i * size], size);
    std::memcpy(&y, &b[i * size], size);
    if (x == y)
      continue;
    if (ir::isFloatType(t) && std::isnan(fp::toF64(*ir::formatOf(t), x)) &&
        std::isnan(fp::toF64(*ir::formatOf(t), y)))
      continue;
    return i;
  }
  return std::nullopt;
}

void forEachOp(const std::vector<ir::Op> &ops, const std::function<void(const ir::Op &)> &visit) {
  for (const ir::Op &o : ops) {
    visit(o);
    if (o.region)
      forEachOp(o.region->ops, visit);
  }
}

struct Exit {
  const char *name;
  const transforms::Capabilities &caps;
  /// Prints function `entry` of `m`; throws what the exit throws.
  std::function<void(const ir::Module &, const std::string &)> print;
};

std::vector<Exit> exitsUnderTest() {
  return {
      {"linalg", exits::linalgCapabilities(),
       [](const ir::Module &m, const std::string &entry) { exits::emitLinalg(m, {entry, false, std::nullopt, "t"}); }},
      {"stablehlo", exits::stableHloCapabilities(),
       [](const ir::Module &m, const std::string &entry) { exits::emitStableHlo(m, {entry, "t", std::nullopt, ""}); }},
      {"cpu", cpu::cpuCapabilities(), nullptr},
  };
}

class LegalizeTest : public ::testing::TestWithParam<int> {};

TEST_P(LegalizeTest, EveryOpIsNativeAfterAndNoResultChanges) {
  Exit exit = exitsUnderTest()[static_cast<size_t>(GetParam())];
  size_t count = 0;
  ir::Module original = everyOperation(count);
  ASSERT_GT(count, 700u) << "the admissible operations were not all built";
  ASSERT_TRUE(ir::verify(original).empty());
  ir::Module legal = original;
  bool changed = transforms::legalize(legal, exit.caps);
  EXPECT_EQ(changed, exit.caps.exit != std::string_view("CPU"));
  std::vector<ir::VerifierError> problems = ir::verify(legal);
  for (const ir::VerifierError &e : problems)
    ADD_FAILURE() << e.message;
  ASSERT_TRUE(problems.empty());

  size_t unlegalizedRefusals = 0;
  for (size_t i = 0; i < legal.functions.size(); ++i) {
    const ir::Function &f = legal.functions[i];
    forEachOp(f.ops, [&](const ir::Op &o) {
      EXPECT_TRUE(exit.caps.native(f, o)) << f.name << ": `" << ir::print(f) << "` keeps a non-native op";
    });
    if (exit.print) {
      EXPECT_NO_THROW(exit.print(legal, f.name)) << exit.name << " on legalized " << f.name;
      try {
        exit.print(original, f.name);
      } catch (const std::logic_error &) {
        ++unlegalizedRefusals;
      }
    }
  }
  if (exit.print) {
    EXPECT_GT(unlegalizedRefusals, 10u) << "the " << exit.name << " exit mapped unlegalized ops it cannot map";
  }

  // The same results on the CPU reference exit, function by function (each
  // alone in its module: none calls another).
  for (size_t i = 0; i < original.functions.size(); ++i) {
    std::string problem;
    const ir::Function &f = original.functions[i];
    std::vector<std::vector<uint8_t>> before = run(ir::print(f), f, problem);
    ASSERT_TRUE(problem.empty()) << f.name << ": " << problem;
    std::vector<std::vector<uint8_t>> after = run(ir::print(legal.functions[i]), f, problem);
    ASSERT_TRUE(problem.empty()) << f.name << " legalized: " << problem;
    ASSERT_EQ(before.size(), after.size());
    for (size_t r = 0; r < before.size(); ++r) {
      std::optional<size_t> at = firstDifference(f.resultTypes[r], before[r], after[r]);
      EXPECT_FALSE(at) << f.name << " result " << r << ", `" << ir::opName(f.ops[r]) << "` ("
                       << ir::typeText(f.resultTypes[r]) << "), element " << at.value_or(0)
                       << " differs after legalization for " << exit.name;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Exits, LegalizeTest, ::testing::Values(0, 1, 2),
                         [](const ::testing::TestParamInfo<int> &i) {
                           return std::string(exitsUnderTest()[static_cast<size_t>(i.param)].name);
                         });

TEST(LegalizeTest, GuardedIsDroppedAndGuardedAfresh) {
  // A `guarded` the IR text claims is not trusted: the division is guarded
  // again, so a zero divisor cannot reach the target's division.
  ir::Module m;
  FunctionBuilder b("f", DType::I32);
  ir::Op div = makeOp(OpKind::Binary, {b.param(0), b.param(1)});
  div.binary = ir::BinaryCode::Div;
  div.guarded = true;
  ASSERT_TRUE(b.add(div, ir::TensorType::make(DType::I32, {kN})));
  m.functions.push_back(*b.finish());
  ASSERT_TRUE(transforms::legalize(m, exits::linalgCapabilities()));
  size_t selects = 0, guardedDivisions = 0;
  forEachOp(m.functions[0].ops, [&](const ir::Op &o) {
    selects += o.kind == OpKind::Select;
    guardedDivisions += o.kind == OpKind::Binary && o.guarded;
  });
  EXPECT_EQ(selects, 2u); // the divisor, then the result
  EXPECT_EQ(guardedDivisions, 1u);
  // The CPU exit computes every division itself: the claim is only dropped.
  ir::Module cpuModule;
  FunctionBuilder c("f", DType::I32);
  ASSERT_TRUE(c.add(div, ir::TensorType::make(DType::I32, {kN})));
  cpuModule.functions.push_back(*c.finish());
  EXPECT_TRUE(transforms::legalize(cpuModule, cpu::cpuCapabilities()));
  EXPECT_FALSE(cpuModule.functions[0].ops[0].guarded);
  EXPECT_FALSE(transforms::legalize(cpuModule, cpu::cpuCapabilities()));
}

} // namespace
