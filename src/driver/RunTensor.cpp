//===- RunTensor.cpp - `keel run --entry`: a tensor function on the CPU --===//
//
//   keel run FILE --entry F --arg x=x.npy --arg w=random:7 [--bind N=4]
//            [--out DIR] [--repeat N]
//
// FILE is a .sfn program (F is instantiated at the sizes its arguments give
// its shape variables) or tensor IR text (.kir, static already). Every
// argument is checked against F's parameter types before anything runs;
// F runs through the CPU exit (the oracle), and each
// result is written to DIR/F.npy (several: F.0.npy, F.1.npy, ...; with
// --grad P,...: F.npy and grad_P.npy for each P) or, with no --out, printed. --repeat N runs it N more times and reports the best
// and median wall time of the call (compilation and files excluded).
//
//===----------------------------------------------------------------------===//
#include "Commands.h"
#include "Output.h"

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

/// The --arg values: .npy files read (within the memory limit), random
/// seeds parsed; nullopt after saying what is wrong.
std::optional<std::vector<pipeline::Argument>> readArguments(const TensorRunOptions &o) {
  std::vector<pipeline::Argument> args;
  for (const auto &[name, spec] : o.args) {
    pipeline::Argument a{name, std::nullopt, randomSeed(spec), spec, std::nullopt};
    if (!a.seed) {
      if (spec.rfind("random", 0) == 0) {
        fail(o, "--arg " + name + "=" + spec + ": a random argument is random:SEED, with SEED a non-negative integer");
        return std::nullopt;
      }
      std::string error;
      a.tensor = rt::readNpy(spec, error, static_cast<uint64_t>(keel_rt_memory_limit()));
      if (!a.tensor) {
        fail(o, "--arg " + name + ": " + error);
        return std::nullopt;
      }
    }
    args.push_back(std::move(a));
  }
  return args;
}

/// Runs the compiled entry on its inputs, --repeat times more when asked,
/// and prints or writes the results.
int runEntry(const TensorRunOptions &o, pipeline::Compiled &compiled) {
  std::string error;
  pipeline::Executable::Entry run = compiled.executable->entry(o.entry, error);
  if (!run) {
    fail(o, "internal compiler error: " + error);
    return 70;
  }
  const pipeline::Signature &sig = *compiled.signature;
  std::vector<rt::Tensor> outputs;
  for (const pipeline::TensorSpec &t : sig.results) {
    rt::Tensor out = rt::Tensor::make(t.dtype, t.shape);
    out.minorToMajor = t.minorToMajor;
    outputs.push_back(std::move(out));
  }
  // The entry takes the one buffer descriptor of keel/runtime/Buffer.h.
  std::vector<KeelBuffer> buffers;
  for (rt::Tensor &t : compiled.inputs)
    buffers.push_back(t.view());
  for (rt::Tensor &t : outputs)
    buffers.push_back(t.view());
  std::vector<KeelBuffer *> pointers;
  for (KeelBuffer &b : buffers)
    pointers.push_back(&b);
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
    // With --grad: F.npy, then grad_P.npy for each parameter P.
    std::string name = !o.grad.empty() ? (i == 0 ? o.entry : "grad_" + o.grad[i - 1])
                       : outputs.size() == 1 ? o.entry
                                             : o.entry + "." + std::to_string(i);
    paths.push_back(o.outDir + "/" + name + ".npy");
    results.push_back(&outputs[i]);
  }
  if (!rt::writeNpyFiles(paths, results, error))
    return fail(o, error + "; no result was written");
  for (size_t i = 0; i < outputs.size(); ++i)
    std::printf("%s: %s\n", paths[i].c_str(), sig.results[i].text().c_str());
  return 0;
}

/// `keel run --entry` (exit null) or `keel emit --linalg / --stablehlo`:
/// one request to the pipeline, then the results run or printed.
int tensorEntry(const TensorRunOptions &o, const ExitEmitOptions *exit) {
  std::optional<std::vector<pipeline::Argument>> args = readArguments(o);
  if (!args)
    return 1;
  SourceManager sources;
  std::optional<FileId> file = loadOrComplain(sources, o.path, "run");
  if (!file)
    return 1;
  DiagnosticEngine diags(sources);
  pipeline::Options options = o.output.pipeline;
  if (exit)
    options.target = exit->stablehlo ? pipeline::Target::StableHlo : pipeline::Target::Linalg;
  pipeline::Request request;
  request.entry = o.entry;
  request.bindings = o.bindings;
  request.arguments = std::move(*args);
  request.argumentsRequired = o.argumentsRequired;
  request.gradient = o.grad;
  request.argumentFlag = "--arg";
  request.missingArgumentHelp = ": give NAME=FILE.npy or NAME=random:SEED";
  request.product = exit ? pipeline::Product::ExitText : pipeline::Product::Executable;
  request.mainFunction = exit && exit->main;
  request.keelMath = exit && exit->keelMath;
  request.stableHloVersion = exit ? exit->targetVersion : "";
  request.allowReorder = exit && exit->allowReorder;
  const uint64_t memoryLimit = static_cast<uint64_t>(keel_rt_memory_limit());
  request.memoryLimit = memoryLimit;
  request.memoryLimitSetting = "keel run --max-memory sets it; by default it is the least of the machine's memory, "
                               "its cgroup's limit and what ulimit -v leaves";
  pipeline::Compiled compiled;
  {
    pipeline::Compilation c(sources, diags, options);
    std::shared_ptr<const pipeline::Loaded> loaded = pipeline::load(c, *file);
    if (loaded)
      compiled = pipeline::compile(c, *loaded, std::move(request));
  } // the compilation ends here: --time-passes covers it alone
  if (!compiled.error.empty())
    fail(o, compiled.error);
  report(sources, diags, o.output);
  if (!compiled.ok())
    return compiled.status == pipeline::Compiled::Status::Internal ? 70 : 1;
  if (exit)
    return writeOutput(o.command, compiled.text, o.output);
  keel_rt_set_memory_limit(static_cast<int64_t>(memoryLimit - compiled.hostBytes)); // what compiled code may hold
  return runEntry(o, compiled);
}

} // namespace

int runTensorEntry(const TensorRunOptions &o) { return tensorEntry(o, nullptr); }

int emitExitEntry(const TensorRunOptions &o, const ExitEmitOptions &exit) { return tensorEntry(o, &exit); }

} // namespace keel::driver
