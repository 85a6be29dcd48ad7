//===- RunTensor.cpp - `keel run --entry`: a tensor function on the CPU --===//
//
//   keel run FILE --entry F --arg x=x.npy --arg w=random:7 [--bind N=4]
//            [--out DIR] [--repeat N]
//
// FILE is a .sfn program (F is instantiated at the sizes its arguments give
// its shape variables) or tensor IR text (.kir, static already). Every
// argument is checked against F's parameter types before anything runs;
// F runs through the scalar-reference lowering (the CPU oracle), and each
// result is written to DIR/F.npy (several: F.0.npy, F.1.npy, ...) or, with
// no --out, printed. --repeat N runs it N more times and reports the best
// and median wall time of the call (compilation and files excluded).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Output.h"

#include "keel/codegen/Codegen.h"
#include "keel/exits/Linalg.h"
#include "keel/exits/StableHlo.h"
#include "keel/instantiate/Builder.h"
#include "keel/ir/Text.h"
#include "keel/exits/cpu/Elements.h"
#include "keel/exits/cpu/Lower.h"
#include "keel/pipeline/Pipeline.h"
#include "keel/runtime/Npy.h"
#include "keel/runtime/Print.h"

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <filesystem>

namespace keel::driver {

namespace {

int fail(const TensorRunOptions &o, const std::string &message) {
  std::fprintf(stderr, "keel %s: error: %s\n", o.command.c_str(), message.c_str());
  return 1;
}

/// One --arg: a .npy file, or `random:SEED`.
struct Argument {
  std::string name, spec;
  std::optional<uint64_t> seed;
  std::optional<rt::Tensor> tensor;
};

std::optional<uint64_t> randomSeed(const std::string &spec) {
  constexpr std::string_view kPrefix = "random:";
  if (spec.rfind(kPrefix, 0) != 0)
    return std::nullopt;
  uint64_t seed = 0;
  const char *begin = spec.data() + kPrefix.size(), *end = spec.data() + spec.size();
  auto [ptr, ec] = std::from_chars(begin, end, seed);
  if (ec != std::errc() || ptr != end || begin == end)
    return std::nullopt;
  return seed;
}

using rt::shapeText;

/// `1234567890 bytes (1.1 GiB)`
std::string bytesText(uint64_t bytes) {
  std::string s = std::to_string(bytes) + " bytes";
  if (bytes >= 1024) {
    const char *units[] = {"KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
    double v = static_cast<double>(bytes);
    int u = -1;
    while (v >= 1024 && u < 5) {
      v /= 1024;
      ++u;
    }
    char buf[32];
    std::snprintf(buf, sizeof buf, " (%.1f %s)", v, units[u]);
    s += buf;
  }
  return s;
}

/// `random:SEED` for a tensor of `t`'s dtype and shape (row-major), made a
/// million elements at a time: no more memory than the tensor's own.
rt::Tensor randomTensor(const ir::TensorType &t, uint64_t seed) {
  rt::Tensor out = rt::Tensor::make(static_cast<KeelDType>(t.dtype), t.shape);
  constexpr int64_t kPiece = int64_t{1} << 20;
  size_t size = keel_dtype_size(static_cast<KeelDType>(t.dtype));
  for (int64_t first = 0, count = *t.elementCount(); first < count; first += kPiece) {
    std::vector<uint8_t> piece =
        cpu::storedBytes(t.dtype, instantiate::randomEncodings(seed, std::min(kPiece, count - first), t.dtype, first));
    std::copy(piece.begin(), piece.end(), out.data.begin() + static_cast<std::ptrdiff_t>(first * static_cast<int64_t>(size)));
  }
  return out;
}

/// Every parameter named by exactly one --arg, and nothing else; false
/// after saying what is wrong.
bool checkNames(const TensorRunOptions &o, const std::vector<std::string> &names) {
  std::vector<bool> given(names.size(), false);
  for (const auto &[name, spec] : o.args) {
    auto it = std::find(names.begin(), names.end(), name);
    if (it == names.end()) {
      std::string list;
      for (const std::string &n : names)
        list += (list.empty() ? "" : ", ") + n;
      fail(o, "`" + o.entry + "` has no parameter `" + name + "` (its parameters: " + (list.empty() ? "none" : list) + ")");
      return false;
    }
    size_t i = static_cast<size_t>(it - names.begin());
    if (given[i]) {
      fail(o, "--arg " + name + " is given twice");
      return false;
    }
    given[i] = true;
  }
  for (size_t i = 0; i < given.size(); ++i)
    if (!given[i]) {
      fail(o, "no --arg for parameter `" + names[i] + "` of `" + o.entry + "`: give NAME=FILE.npy or NAME=random:SEED");
      return false;
    }
  return true;
}

/// The tensor IR module to run, through the pipeline up to its passes:
/// built from a program at the arguments' sizes, or read from IR text
/// (.kir). `names` gets the entry's parameter names (the source's, or 0, 1,
/// ... in IR text), checked against the arguments before anything is
/// built. Diagnostics are reported; nullopt on errors.
std::optional<ir::Module> moduleFor(pipeline::Compilation &c, FileId file, const TensorRunOptions &o,
                                    std::vector<Argument> &args, std::vector<std::string> &names) {
  if (o.path.size() > 4 && o.path.compare(o.path.size() - 4, 4, ".kir") == 0) {
    if (!o.bindings.empty()) {
      fail(o, "--bind sizes the shape variables of .sfn source; the shapes in tensor IR (" + o.path + ") are static");
      return std::nullopt;
    }
    std::optional<ir::Module> m = pipeline::readIr(c, file);
    if (!m)
      return std::nullopt;
    const ir::Function *f = m->find(o.entry);
    if (!f) {
      fail(o, o.path + " has no function `" + o.entry + "`");
      return std::nullopt;
    }
    for (size_t i = 0; i < f->params.size(); ++i)
      names.push_back(std::to_string(i));
    if ((o.argumentsRequired && !checkNames(o, names)) || !pipeline::runPasses(c, *m, true))
      return std::nullopt;
    return m;
  }
  pipeline::Checked source = pipeline::frontEnd(c, file);
  if (!source.ok)
    return std::nullopt;
  auto sig = source.checked.functions.find(o.entry);
  if (sig == source.checked.functions.end()) {
    fail(o, o.path + " has no function `" + o.entry + "`");
    return std::nullopt;
  }
  for (const syntax::Param &p : sig->second.decl->params)
    names.push_back(p.name);
  if (o.argumentsRequired && !checkNames(o, names))
    return std::nullopt;
  // The arguments' shapes bind the shape variables; --bind adds the rest.
  std::vector<std::optional<std::vector<int64_t>>> shapes;
  for (const syntax::Param &p : sig->second.decl->params) {
    std::optional<std::vector<int64_t>> shape;
    for (const Argument &a : args)
      if (a.name == p.name && a.tensor)
        shape = a.tensor->shape;
    shapes.push_back(shape);
  }
  std::map<std::string, int64_t> bindings = o.bindings;
  std::string error;
  if (!instantiate::bindFromShapes(source.checked, o.entry, shapes, bindings, error)) {
    fail(o, "the arguments do not fit `" + o.entry + "`: " + error);
    return std::nullopt;
  }
  std::optional<ir::Module> m = pipeline::instantiateEntry(c, source, {o.entry, bindings});
  if (!m || !pipeline::runPasses(c, *m, true))
    return std::nullopt;
  return m;
}

/// The entry's arguments as tensors of its parameter types: random ones
/// made, files checked. `physical`: in the parameter's layout (a .npy
/// file gives row-major or column-major only); else row-major, the logical
/// order. nullopt after saying what is wrong.
std::optional<std::vector<rt::Tensor>> inputsFor(const TensorRunOptions &o, const ir::Function &f, std::vector<Argument> &args,
                                                 const std::vector<std::string> &names, bool physical) {
  std::vector<rt::Tensor> inputs(f.params.size());
  for (Argument &a : args) {
    size_t i = static_cast<size_t>(std::find(names.begin(), names.end(), a.name) - names.begin());
    const ir::TensorType &want = f.valueTypes[f.params[i]];
    if (a.seed) {
      inputs[i] = randomTensor(want, *a.seed);
      continue;
    }
    rt::Tensor &t = *a.tensor;
    if (static_cast<ir::DType>(t.dtype) != want.dtype || t.shape != want.shape) {
      fail(o, "--arg " + a.name + ": `" + o.entry + "` takes " + ir::typeText(ir::TensorType::make(want.dtype, want.shape)) +
                  " but " + a.spec + " holds " + std::string(rt::dtypeName(t.dtype)) + shapeText(t.shape));
      return std::nullopt;
    }
    if (!physical) {
      inputs[i] = t.toRowMajor();
      continue;
    }
    inputs[i] = t.minorToMajor == want.minorToMajor ? std::move(t) : t.toRowMajor();
    if (inputs[i].minorToMajor != want.minorToMajor) {
      fail(o, "--arg " + a.name + ": `" + o.entry + "` takes the layout " + ir::typeText(want) +
                  ", which a .npy file cannot give");
      return std::nullopt;
    }
  }
  return inputs;
}

/// A row-major tensor's elements as encodings (i4: its 4 bits).
std::vector<uint64_t> encodingsOf(const rt::Tensor &t) {
  size_t width = keel_dtype_size(t.dtype);
  std::vector<uint64_t> out;
  for (size_t at = 0; at + width <= t.data.size(); at += width) {
    uint64_t v = 0;
    for (size_t b = 0; b < width; ++b)
      v |= uint64_t{t.data[at + b]} << (8 * b);
    out.push_back(t.dtype == KEEL_I4 ? v & 0xF : v);
  }
  return out;
}

/// `keel run --entry` (exit null) or `keel emit --linalg / --stablehlo`:
/// they share the arguments, the instantiation and the passes.
int tensorEntry(const TensorRunOptions &o, const ExitEmitOptions *exit) {
  std::vector<Argument> args;
  for (const auto &[name, spec] : o.args) {
    Argument a{name, spec, randomSeed(spec), std::nullopt};
    if (!a.seed) {
      if (spec.rfind("random", 0) == 0)
        return fail(o, "--arg " + name + "=" + spec + ": a random argument is random:SEED, with SEED a non-negative integer");
      std::string error;
      a.tensor = rt::readNpy(spec, error, static_cast<uint64_t>(keel_rt_memory_limit()));
      if (!a.tensor)
        return fail(o, "--arg " + name + ": " + error);
    }
    args.push_back(std::move(a));
  }
  SourceManager sources;
  std::optional<FileId> file = loadOrComplain(sources, o.path, "run");
  if (!file)
    return 1;
  DiagnosticEngine diags(sources);
  // Ends the compilation (--time-passes's report) and reports its
  // diagnostics, once: after compiling, or when an error returns early.
  struct Reporter {
    std::optional<pipeline::Compilation> c;
    const SourceManager &sources;
    const DiagnosticEngine &diags;
    const OutputOptions &output;
    bool done = false;
    void finish() {
      if (done)
        return;
      done = true;
      c.reset();
      report(sources, diags, output);
    }
    ~Reporter() { finish(); }
  } reporter{std::nullopt, sources, diags, o.output};
  pipeline::Compilation &c = reporter.c.emplace(sources, diags, o.output.pipeline);
  std::vector<std::string> names;
  std::optional<ir::Module> module = moduleFor(c, *file, o, args, names);
  if (!module || diags.errorCount() > 0)
    return 1;
  const ir::Function *f = module->find(o.entry);
  if (exit) {
    std::optional<std::vector<std::vector<uint64_t>>> mainArguments;
    if (exit->main) {
      std::optional<std::vector<rt::Tensor>> inputs = inputsFor(o, *f, args, names, false);
      if (!inputs)
        return 1;
      mainArguments.emplace();
      for (const rt::Tensor &t : *inputs)
        mainArguments->push_back(encodingsOf(t));
    }
    std::optional<std::string> text =
        exit->stablehlo
            ? pipeline::emitStableHlo(c, *module, exits::StableHloOptions{o.entry, o.path, mainArguments})
            : pipeline::emitLinalg(c, *module, exits::LinalgOptions{o.entry, exit->keelMath, mainArguments, o.path});
    reporter.finish();
    if (!text)
      return 1;
    std::fputs(text->c_str(), stdout);
    return 0;
  }

  for (ir::ValueId v : f->params)
    if (f->valueTypes[v].rank() > KEEL_MAX_RANK)
      return fail(o, "`" + o.entry + "` takes " + ir::typeText(f->valueTypes[v]) + ": tensors cross into compiled code " +
                  "with at most " + std::to_string(KEEL_MAX_RANK) + " dimensions");
  for (const ir::TensorType &t : f->resultTypes)
    if (t.rank() > KEEL_MAX_RANK)
      return fail(o, "`" + o.entry + "` returns " + ir::typeText(t) + ": tensors cross out of compiled code with at " +
                  "most " + std::to_string(KEEL_MAX_RANK) + " dimensions");
  // Every tensor the host holds, against the memory limit, before any is made.
  uint64_t limit = static_cast<uint64_t>(keel_rt_memory_limit()), hostBytes = 0;
  for (size_t i = 0; i < f->params.size() + f->resultTypes.size(); ++i) {
    bool param = i < f->params.size();
    const ir::TensorType &t = param ? f->valueTypes[f->params[i]] : f->resultTypes[i - f->params.size()];
    std::string what = param ? "argument `" + names[i] + "`" : "result " + std::to_string(i - f->params.size());
    uint64_t bytes = static_cast<uint64_t>(*t.byteCount()); // verified IR: it has one
    if (bytes > limit - hostBytes) {
      std::string where = f->loc.known() ? " (" + f->loc.file + ":" + std::to_string(f->loc.line) + ":" +
                                               std::to_string(f->loc.column) + ")"
                                         : "";
      std::string need = bytesText(bytes);
      if (hostBytes)
        need += ", after " + bytesText(hostBytes) + " for the tensors before it";
      return fail(o, what + " of `" + o.entry + "`" + where + " is " + ir::typeText(t) + ": it needs " + need +
                  ", over the memory limit of " + bytesText(limit) + " (keel run --max-memory)");
    }
    hostBytes += bytes;
  }
  keel_rt_set_memory_limit(static_cast<int64_t>(limit - hostBytes)); // what compiled code may hold
  std::optional<std::vector<rt::Tensor>> given = inputsFor(o, *f, args, names, true);
  if (!given)
    return 1;
  std::vector<rt::Tensor> &inputs = *given;

  std::optional<loop::Module> lowered = pipeline::lowerForCpu(c, *module);
  if (!lowered)
    return 70;
  std::unique_ptr<codegen::Program> program = pipeline::jit(c, *lowered);
  if (!program)
    return 70;
  reporter.finish(); // the compilation ends here: --time-passes covers it alone
  std::string error;
  void *entry = program->address(cpu::entryName(o.entry), error);
  if (!entry)
    {
    fail(o, "internal compiler error: " + error);
    return 70;
  }

  std::vector<rt::Tensor> outputs;
  for (const ir::TensorType &t : f->resultTypes) {
    rt::Tensor out = rt::Tensor::make(static_cast<KeelDType>(t.dtype), t.shape);
    out.minorToMajor = t.minorToMajor;
    outputs.push_back(std::move(out));
  }
  // The entry takes the one buffer descriptor of keel/runtime/Buffer.h.
  std::vector<KeelBuffer> buffers;
  for (rt::Tensor &t : inputs)
    buffers.push_back(t.view());
  for (rt::Tensor &t : outputs)
    buffers.push_back(t.view());
  std::vector<KeelBuffer *> pointers;
  for (KeelBuffer &b : buffers)
    pointers.push_back(&b);
  auto run = reinterpret_cast<void (*)(KeelBuffer **)>(entry);
  run(pointers.data());
  if (o.repeat > 0) { // wall time of the call alone, after a first (warming) run
    std::vector<double> ms;
    for (int i = 0; i < o.repeat; ++i) {
      auto start = std::chrono::steady_clock::now();
      run(pointers.data());
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    std::sort(ms.begin(), ms.end());
    std::fprintf(stderr, "%s: best %.3f ms, median %.3f ms of %d runs\n", o.entry.c_str(), ms.front(),
                 ms[ms.size() / 2], o.repeat);
  }

  keel_rt_release_memory();
  if (o.outDir.empty()) {
    for (rt::Tensor &t : outputs) {
      KeelBuffer b = t.view();
      keel_rt_print_tensor(&b);
      keel_rt_print_end();
    }
    std::fflush(stdout);
    return 0;
  }
  std::error_code ec;
  std::filesystem::create_directories(o.outDir, ec);
  if (ec)
    return fail(o, "--out " + o.outDir + ": " + ec.message());
  std::vector<std::string> paths;
  std::vector<const rt::Tensor *> results;
  for (size_t i = 0; i < outputs.size(); ++i) {
    paths.push_back(o.outDir + "/" + o.entry + (outputs.size() == 1 ? "" : "." + std::to_string(i)) + ".npy");
    results.push_back(&outputs[i]);
  }
  if (!rt::writeNpyFiles(paths, results, error))
    return fail(o, error + "; no result was written");
  for (size_t i = 0; i < outputs.size(); ++i)
    std::printf("%s: %s\n", paths[i].c_str(), ir::typeText(f->resultTypes[i]).c_str());
  return 0;
}

} // namespace

int runTensorEntry(const TensorRunOptions &o) { return tensorEntry(o, nullptr); }

int emitExitEntry(const TensorRunOptions &o, const ExitEmitOptions &exit) { return tensorEntry(o, &exit); }

} // namespace keel::driver
