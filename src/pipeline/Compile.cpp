//===- Compile.cpp - The request API: load once, compile requests ---------===//
//
// pipeline::load and pipeline::compile (Pipeline.h) call the steps of
// Steps.cpp in order; nothing here compiles by itself. What is here is the
// request's own business: a tensor entry's arguments (names, shapes that
// bind sizes, dtypes, layouts, memory), its signature, and what each
// product takes from the steps.
//
//===----------------------------------------------------------------------===//
#include "keel/pipeline/Pipeline.h"

#include "keel/exits/cpu/Elements.h"
#include "keel/exits/cpu/Lower.h"
#include "keel/ir/Text.h"
#include "keel/pipeline/Steps.h"
#include "keel/sema/Solver.h"
#include "keel/syntax/AST.h"
#include "keel/syntax/Parser.h"

#include "keel/support/Text.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

namespace keel::pipeline {

//===-- Small pieces ------------------------------------------------------===//

std::string defaultCacheDir() { return codegen::defaultCacheDir(); }

bool cacheSettings(Options &o, bool noCache, const std::string &dir, std::string &error) {
  if (const char *env = std::getenv("KEEL_CACHE_MAX_SIZE"); env && *env) {
    std::optional<int64_t> bytes = parseByteSize(env);
    if (!bytes) {
      error = std::string("KEEL_CACHE_MAX_SIZE must be a size such as 512M or 2G, not '") + env + "'";
      return false;
    }
    o.cacheMaxBytes = static_cast<uint64_t>(*bytes);
  }
  o.cacheDir.clear();
  if (noCache)
    return true;
  std::string chosen = dir;
  if (chosen.empty())
    if (const char *env = std::getenv("KEEL_CACHE_DIR"); env && *env)
      chosen = env;
  if (chosen.empty())
    chosen = defaultCacheDir();
  std::error_code ec;
  if (!chosen.empty() && chosen[0] != '/')
    chosen = std::filesystem::absolute(chosen, ec).string();
  o.cacheDir = chosen;
  return true;
}

namespace {
/// The cache in `dir` for `keel cache`; nullopt with `warning` set when it
/// cannot be used.
std::optional<codegen::ObjectCache> openCache(const std::string &dir, std::string &warning) {
  std::vector<std::string> warnings;
  std::optional<codegen::ObjectCache> cache(std::in_place, dir, kDefaultCacheBytes, warnings);
  if (cache->usable())
    return cache;
  warning = warnings.empty() ? "the compile cache cannot be used" : warnings.front();
  return std::nullopt;
}
} // namespace

std::optional<CacheUsage> cacheUsage(const std::string &dir, std::string &warning) {
  std::optional<codegen::ObjectCache> cache = openCache(dir, warning);
  if (!cache)
    return std::nullopt;
  codegen::ObjectCache::Usage u = cache->usage();
  return CacheUsage{u.entries, u.bytes};
}

std::optional<uint64_t> clearCache(const std::string &dir, std::string &warning) {
  std::optional<codegen::ObjectCache> cache = openCache(dir, warning);
  return cache ? std::optional<uint64_t>(cache->clear()) : std::nullopt;
}

std::string_view targetName(Target t) {
  switch (t) {
  case Target::Cpu: return "cpu";
  case Target::CpuReference: return "reference";
  case Target::Linalg: return "linalg";
  case Target::StableHlo: return "stablehlo";
  }
  return "";
}

bool isCpu(Target t) {
  switch (t) {
  case Target::Cpu: case Target::CpuReference: return true;
  case Target::Linalg: case Target::StableHlo: return false;
  }
  return false;
}

ProofCache::ProofCache(unsigned timeoutMs) : solver_(std::make_unique<sema::ShapeSolver>(timeoutMs)) {}
ProofCache::~ProofCache() = default;

ProofCache::Stats ProofCache::stats() const {
  const sema::SolverStats &s = solver_->stats();
  return Stats{s.obligations, s.normalForm, s.cached, s.z3Calls, s.z3Seconds};
}

std::optional<std::map<std::string, int64_t>> parseBindings(std::string_view text, std::string &error) {
  return instantiate::parseBindings(text, error);
}

bool stableHloVersionSupported(const std::string &version) { return exits::parseStableHloVersion(version).has_value(); }

std::string stableHloVersionRange() {
  return std::string(exits::kStableHloOldest) + " to " + exits::kStableHloNewest;
}

namespace {

ir::TensorType irType(const TensorSpec &t) {
  ir::TensorType out = ir::TensorType::make(static_cast<ir::DType>(t.dtype), t.shape);
  out.minorToMajor = t.minorToMajor;
  return out;
}

TensorSpec specOf(const ir::TensorType &t) { return TensorSpec{static_cast<KeelDType>(t.dtype), t.shape, t.minorToMajor}; }

} // namespace

std::string TensorSpec::text() const { return ir::typeText(irType(*this)); }

uint64_t TensorSpec::bytes() const { return static_cast<uint64_t>(*irType(*this).byteCount()); }

//===-- Loading -----------------------------------------------------------===//

struct Loaded {
  FileId file = 0;
  std::string path;
  std::optional<Checked> source;  ///< .sfn
  std::optional<ir::Module> ir;   ///< .kir
  bool ok = false;
};

namespace {

bool isIrText(std::string_view path) { return path.size() > 4 && path.substr(path.size() - 4) == ".kir"; }

} // namespace

std::shared_ptr<const Loaded> load(Compilation &c, FileId file, FileKind kind, bool keepProgram) {
  auto m = std::make_shared<Loaded>();
  m->file = file;
  m->path = std::string(c.sources.name(file));
  bool irText = false;
  switch (kind) {
  case FileKind::ByName: irText = isIrText(m->path); break;
  case FileKind::Source: break;
  case FileKind::TensorIr: irText = true; break;
  }
  if (irText) {
    m->ir = readIr(c, file);
    m->ok = m->ir.has_value();
  } else {
    m->source = frontEnd(c, file);
    m->ok = m->source->ok;
  }
  if (!m->ok && !(keepProgram && m->source))
    return nullptr;
  return m;
}

bool loadedOk(const Loaded &m) { return m.ok; }

std::string dumpAst(const Compilation &c, const Loaded &m) {
  return m.source ? syntax::dumpAst(c.sources, m.source->program) : "";
}

std::optional<std::vector<std::string>> parameterNames(const Loaded &m, std::string_view entry) {
  std::vector<std::string> names;
  if (m.ir) {
    const ir::Function *f = m.ir->find(entry);
    if (!f)
      return std::nullopt;
    for (size_t i = 0; i < f->params.size(); ++i) { // the IR file's names: `%q` is `q`
      std::string_view own = f->authorName(f->params[i]);
      names.push_back(own.empty() ? std::to_string(i) : std::string(own));
    }
    return names;
  }
  auto sig = m.source->checked.functions.find(std::string(entry));
  if (sig == m.source->checked.functions.end())
    return std::nullopt;
  for (const syntax::Param &p : sig->second.decl->params)
    names.push_back(p.name);
  return names;
}

std::vector<FunctionInfo> functions(const Compilation &c, const Loaded &m) {
  std::vector<FunctionInfo> out;
  if (!m.source)
    return out;
  const SourceManager &sources = c.sources;
  auto where = [&](Span s) {
    LineColumn lc = sources.lineColumn(s.file, s.begin);
    return std::string(sources.name(s.file)) + ":" + std::to_string(lc.line) + ":" + std::to_string(lc.column);
  };
  for (const syntax::FunctionDecl &decl : m.source->program.functions) {
    FunctionInfo f;
    f.name = decl.name;
    for (const syntax::DimParam &d : decl.dimParams)
      f.dimParams.push_back(d.name);
    for (const syntax::Param &p : decl.params) {
      FunctionInfo::Param info{p.name, std::string(sources.slice(p.type.span)), false, std::nullopt, {}};
      if (p.type.kind == syntax::TypeExpr::Kind::Tensor) {
        info.tensor = true;
        if (std::optional<ElementType> t = parseElementType(p.type.name)) // source names: `bool`, not `pred`
          info.dtype = static_cast<KeelDType>(*t);
        for (const std::unique_ptr<syntax::Dim> &d : p.type.dims)
          info.dims.emplace_back(sources.slice(d->span));
      }
      f.params.push_back(std::move(info));
    }
    f.result = decl.returnType ? std::string(sources.slice(decl.returnType->span)) : "void";
    for (const syntax::Predicate &p : decl.refinements)
      f.refinements.emplace_back(sources.slice(p.span));
    f.location = where(decl.nameSpan);
    out.push_back(std::move(f));
  }
  return out;
}

//===-- Executables -------------------------------------------------------===//

struct Executable::Impl {
  loop::Module module;
  std::unique_ptr<codegen::Program> program; ///< refers to `module`: neither moves
};

Executable::Executable(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Executable::~Executable() = default;

bool Executable::has(std::string_view name) const { return impl_->module.find(name) != nullptr; }

const std::vector<std::pair<std::string, std::string>> &Executable::tests() const { return impl_->module.tests; }

std::optional<int64_t> Executable::run(const std::string &function, std::string &error) {
  return impl_->program->run(function, error);
}

Executable::Entry Executable::entry(const std::string &function, std::string &error) {
  return reinterpret_cast<Entry>(impl_->program->address(cpu::entryName(function), error));
}

//===-- A tensor entry's arguments ----------------------------------------===//

namespace {

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

/// The element types whose .npy dtype a user has to know (NumPy has no
/// type of its own for them but f16): the message for a wrong one names it.
bool lowPrecisionNpy(ir::DType t) {
  switch (t) {
  case ir::DType::F16: case ir::DType::BF16: case ir::DType::TF32: case ir::DType::FP8E4M3FN:
  case ir::DType::FP8E5M2: case ir::DType::I4: return true;
  case ir::DType::Bool: case ir::DType::I8: case ir::DType::I16: case ir::DType::I32: case ir::DType::I64:
  case ir::DType::U8: case ir::DType::U16: case ir::DType::U32: case ir::DType::U64: case ir::DType::F32:
  case ir::DType::F64: return false;
  }
  return false;
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

/// The request's work on one tensor entry; each member a stage, false
/// after setting `out.error` or reporting a diagnostic.
class EntryCompilation {
public:
  EntryCompilation(Compilation &c, const Loaded &m, Request &r, Compiled &out) : c_(c), m_(m), r_(r), out_(out) {}

  bool checkNames(const std::vector<std::string> &names);
  /// The module to compile, through its passes.
  std::optional<ir::Module> module();
  /// The entry made its value and gradient when the request asks (--grad).
  bool differentiate(ir::Module &m);
  /// Limits of what crosses into compiled code: ranks and tensor memory.
  bool checkLimits(const ir::Function &f, const std::vector<std::string> &names);
  /// The arguments as tensors of `f`'s parameter types: random ones made,
  /// given ones checked. `physical`: in the parameter's layout; else
  /// row-major.
  std::optional<std::vector<rt::Tensor>> inputs(const ir::Function &f, const std::vector<std::string> &names,
                                                bool physical);

private:
  bool fail(Compiled::Problem problem, std::string message) {
    out_.problem = problem;
    out_.error = std::move(message);
    return false;
  }
  std::string argumentText(const std::string &name) const { return r_.argumentFlag + " " + name; }

  Compilation &c_;
  const Loaded &m_;
  Request &r_;
  Compiled &out_;
};

bool EntryCompilation::checkNames(const std::vector<std::string> &names) {
  std::vector<bool> given(names.size(), false);
  for (Argument &a : r_.arguments) {
    auto it = std::find(names.begin(), names.end(), a.name);
    // IR text: a parameter is also named by its position (`--arg 0=` is
    // the first), unless a parameter is named so.
    if (it == names.end() && m_.ir && !a.name.empty() &&
        std::all_of(a.name.begin(), a.name.end(), [](char ch) { return ch >= '0' && ch <= '9'; }) &&
        a.name.size() <= 9 && std::stoul(a.name) < names.size()) {
      a.name = names[std::stoul(a.name)];
      it = std::find(names.begin(), names.end(), a.name);
    }
    if (it == names.end()) {
      std::string list;
      for (const std::string &n : names)
        list += (list.empty() ? "" : ", ") + n;
      return fail(Compiled::Problem::Argument, "`" + r_.entry + "` has no parameter `" + a.name +
                                                   "` (its parameters: " + (list.empty() ? "none" : list) + ")");
    }
    size_t i = static_cast<size_t>(it - names.begin());
    if (given[i])
      return fail(Compiled::Problem::Argument, argumentText(a.name) + " is given twice");
    given[i] = true;
  }
  if (r_.argumentsRequired)
    for (size_t i = 0; i < given.size(); ++i)
      if (!given[i])
        return fail(Compiled::Problem::Argument, "no " + r_.argumentFlag + " for parameter `" + names[i] + "` of `" +
                                                     r_.entry + "`" + r_.missingArgumentHelp);
  return true;
}

std::optional<ir::Module> EntryCompilation::module() {
  bool fuse = r_.fuseByDefault;
  if (m_.ir) {
    if (!r_.bindings.empty()) {
      fail(Compiled::Problem::Request, "--bind sizes the shape variables of .sfn source; the shapes in tensor IR (" +
                                           m_.path + ") are static");
      return std::nullopt;
    }
    ir::Module m = *m_.ir; // the loaded module stays as it was read
    if (!differentiate(m) || !runPasses(c_, m, fuse))
      return std::nullopt;
    return m;
  }
  // The arguments' shapes bind the shape variables; the request's bindings add the rest.
  const sema::FunctionSig &sig = m_.source->checked.functions.at(r_.entry);
  std::vector<std::optional<std::vector<int64_t>>> shapes;
  for (const syntax::Param &p : sig.decl->params) {
    std::optional<std::vector<int64_t>> shape;
    for (const Argument &a : r_.arguments)
      if (a.name == p.name && (a.tensor || a.type))
        shape = a.tensor ? a.tensor->shape : a.type->shape;
    shapes.push_back(shape);
  }
  std::map<std::string, int64_t> bindings = r_.bindings;
  std::string error;
  if (!instantiate::bindFromShapes(m_.source->checked, r_.entry, shapes, bindings, error)) {
    fail(Compiled::Problem::Shape, "the arguments do not fit `" + r_.entry + "`: " + error);
    return std::nullopt;
  }
  instantiate::BuildRequest build{r_.entry, bindings};
  build.keywordSizes = r_.keywordSizes;
  std::optional<ir::Module> m = instantiateEntry(c_, *m_.source, build);
  if (!m || !differentiate(*m) || !runPasses(c_, *m, fuse))
    return std::nullopt;
  return m;
}

bool EntryCompilation::differentiate(ir::Module &m) {
  if (r_.gradient.empty())
    return true;
  std::vector<std::string> names = *parameterNames(m_, r_.entry); // checkNames found the entry
  std::vector<size_t> wrt;
  for (const std::string &p : r_.gradient) {
    auto it = std::find(names.begin(), names.end(), p);
    if (it == names.end()) {
      std::string list;
      for (const std::string &n : names)
        list += (list.empty() ? "" : ", ") + n;
      return fail(Compiled::Problem::Argument, "`" + r_.entry + "` has no parameter `" + p +
                                                   "` to differentiate with respect to (its parameters: " +
                                                   (list.empty() ? "none" : list) + ")");
    }
    size_t i = static_cast<size_t>(it - names.begin());
    if (std::find(wrt.begin(), wrt.end(), i) != wrt.end())
      return fail(Compiled::Problem::Argument, "the gradient with respect to `" + p + "` is asked for twice");
    wrt.push_back(i);
  }
  return gradient(c_, m, r_.entry, wrt);
}

bool EntryCompilation::checkLimits(const ir::Function &f, const std::vector<std::string> &names) {
  for (ir::ValueId v : f.params)
    if (f.valueTypes[v].rank() > KEEL_MAX_RANK)
      return fail(Compiled::Problem::Shape, "`" + r_.entry + "` takes " + ir::typeText(f.valueTypes[v]) +
                                                ": tensors cross into compiled code with at most " +
                                                std::to_string(KEEL_MAX_RANK) + " dimensions");
  for (const ir::TensorType &t : f.resultTypes)
    if (t.rank() > KEEL_MAX_RANK)
      return fail(Compiled::Problem::Shape, "`" + r_.entry + "` returns " + ir::typeText(t) +
                                                ": tensors cross out of compiled code with at most " +
                                                std::to_string(KEEL_MAX_RANK) + " dimensions");
  if (r_.memoryLimit == 0)
    return true;
  // Every tensor the host holds, against the limit, before any is made.
  uint64_t limit = r_.memoryLimit, hostBytes = 0;
  for (size_t i = 0; i < f.params.size() + f.resultTypes.size(); ++i) {
    bool param = i < f.params.size();
    const ir::TensorType &t = param ? f.valueTypes[f.params[i]] : f.resultTypes[i - f.params.size()];
    std::string what = param ? "argument `" + names[i] + "`" : "result " + std::to_string(i - f.params.size());
    uint64_t bytes = static_cast<uint64_t>(*t.byteCount()); // verified IR: it has one
    if (bytes > limit - hostBytes) {
      std::string where = f.loc.known() ? " (" + f.loc.file + ":" + std::to_string(f.loc.line) + ":" +
                                              std::to_string(f.loc.column) + ")"
                                        : "";
      std::string need = bytesText(bytes);
      if (hostBytes)
        need += ", after " + bytesText(hostBytes) + " for the tensors before it";
      return fail(Compiled::Problem::Memory, what + " of `" + r_.entry + "`" + where + " is " + ir::typeText(t) +
                                                 ": it needs " + need + ", over the memory limit of " +
                                                 bytesText(limit) + " (" + r_.memoryLimitSetting + ")");
    }
    hostBytes += bytes;
  }
  out_.hostBytes = hostBytes;
  return true;
}

std::optional<std::vector<rt::Tensor>> EntryCompilation::inputs(const ir::Function &f,
                                                               const std::vector<std::string> &names, bool physical) {
  std::vector<rt::Tensor> inputs(f.params.size());
  for (Argument &a : r_.arguments) {
    size_t i = static_cast<size_t>(std::find(names.begin(), names.end(), a.name) - names.begin());
    const ir::TensorType &want = f.valueTypes[f.params[i]];
    if (a.seed) { // the same elements whatever the layout: made row-major, then laid out
      inputs[i] = randomTensor(want, *a.seed);
      if (physical && !want.hasDefaultLayout())
        inputs[i] = inputs[i].toLayout(want.minorToMajor);
      continue;
    }
    KeelDType dtype = a.tensor ? a.tensor->dtype : a.type->dtype;
    const std::vector<int64_t> &shape = a.tensor ? a.tensor->shape : a.type->shape;
    if (static_cast<ir::DType>(dtype) != want.dtype || shape != want.shape) {
      bool wrongType = static_cast<ir::DType>(dtype) != want.dtype;
      fail(wrongType ? Compiled::Problem::DType : Compiled::Problem::Shape,
           argumentText(a.name) + ": `" + r_.entry + "` takes " +
               ir::typeText(ir::TensorType::make(want.dtype, want.shape)) + " but " + a.origin + " holds " +
               std::string(rt::dtypeName(dtype)) + rt::shapeText(shape) +
               (wrongType && lowPrecisionNpy(want.dtype) && a.tensor
                    ? "; a .npy of " + std::string(rt::dtypeName(static_cast<KeelDType>(want.dtype))) +
                          " has dtype " + rt::npyDescr(static_cast<KeelDType>(want.dtype)) + " (docs/numerics.md)"
                    : ""));
      return std::nullopt;
    }
    if (!a.tensor) { // the caller brings the data when it calls
      if (!physical) {
        fail(Compiled::Problem::Request, argumentText(a.name) + ": a `@main` needs the argument's values");
        return std::nullopt;
      }
      continue;
    }
    rt::Tensor &t = *a.tensor;
    // The file's tensor is moved, or reordered once and then freed: no
    // argument is held twice.
    if (!physical) {
      inputs[i] = t.isRowMajor() ? std::move(t) : t.toRowMajor();
      a.tensor.reset();
      continue;
    }
    // A .npy holds C or Fortran order: any other layout the parameter
    // takes is a copy, reordered once (said with --stats).
    if (t.minorToMajor == want.minorToMajor) {
      inputs[i] = std::move(t);
    } else {
      inputs[i] = t.toLayout(want.minorToMajor);
      if (c_.options.stats)
        std::fprintf(stderr, "%s: %s is in %s order; copied into %s, the layout `%s` takes\n",
                     argumentText(a.name).c_str(), a.origin.c_str(), t.isRowMajor() ? "C" : "Fortran",
                     ir::typeText(want).c_str(), r_.entry.c_str());
    }
    a.tensor.reset();
  }
  return inputs;
}

Signature signatureOf(const ir::Function &f, const std::vector<std::string> &names) {
  Signature s;
  s.name = f.name;
  s.paramNames = names;
  for (ir::ValueId v : f.params)
    s.params.push_back(specOf(f.valueTypes[v]));
  for (const ir::TensorType &t : f.resultTypes)
    s.results.push_back(specOf(t));
  if (f.loc.known())
    s.location = f.loc.file + ":" + std::to_string(f.loc.line) + ":" + std::to_string(f.loc.column);
  return s;
}

/// The CPU exit's products of a lowered module: its loop IR, LLVM IR, or
/// compiled code.
void cpuProduct(Compilation &c, const Request &r, loop::Module lowered, Compiled &out) {
  switch (r.product) {
  case Product::LoopIr: out.text = loop::print(lowered); break;
  case Product::LlvmIr: out.text = c.timed("llvm-ir", [&] { return codegen::emitLLVMText(lowered, false); }); break;
  case Product::LlvmIrOptimized:
    out.text = c.timed("llvm-O2", [&] { return codegen::emitLLVMText(lowered, true); });
    break;
  case Product::Executable: {
    auto impl = std::make_unique<Executable::Impl>();
    impl->module = std::move(lowered);
    impl->program = jit(c, impl->module);
    if (!impl->program) {
      out.status = Compiled::Status::Internal;
      return;
    }
    out.executable = std::make_shared<Executable>(std::move(impl));
    break;
  }
  case Product::Checked: case Product::TensorIr: case Product::ExitText: break;
  }
  out.status = Compiled::Status::Ok;
}

void tensorIrProduct(const Compilation &c, const Request &r, const ir::Module &m, Compiled &out) {
  out.text = ir::print(m, {r.locations, c.options.keepNames});
  if (r.dot)
    out.dot = ir::printDot(m);
  out.status = Compiled::Status::Ok;
}

/// Whether `product` can come out of `target`; else the request's error.
bool admits(Target target, Product product, std::string &error) {
  bool textExit = !isCpu(target);
  switch (product) {
  case Product::Checked: case Product::TensorIr: return true;
  case Product::LoopIr: case Product::LlvmIr: case Product::LlvmIrOptimized: case Product::Executable:
    if (!textExit)
      return true;
    break;
  case Product::ExitText:
    if (textExit)
      return true;
    break;
  }
  error = textExit ? "the " + std::string(targetName(target)) + " exit gives MLIR text (`keel emit --" +
                         std::string(targetName(target)) + "`) and the tensor IR it receives (`keel ir --exit " +
                         std::string(targetName(target)) + "`), not CPU code"
                   : "the " + std::string(targetName(target)) + " exit gives CPU code, not MLIR text";
  return false;
}

} // namespace

//===-- compile -----------------------------------------------------------===//

Compiled compile(Compilation &c, const Loaded &m, Request r) {
  Compiled out;
  if (r.product == Product::Checked) {
    if (r.dumpAst)
      out.text = dumpAst(c, m);
    out.status = m.ok ? Compiled::Status::Ok : Compiled::Status::Error;
    return out;
  }
  if (!m.ok || !admits(c.options.target, r.product, out.error))
    return out;

  if (r.entry.empty() && m.ir && r.product == Product::TensorIr) { // every function of the IR text
    ir::Module module = *m.ir;
    if (!runPasses(c, module, r.fuseByDefault))
      return out;
    tensorIrProduct(c, r, module, out);
    return out;
  }
  if (r.entry.empty()) { // the whole program: main, its tests, what they call
    if (!m.source || r.product == Product::TensorIr || r.product == Product::ExitText) {
      out.error = "only a source program's CPU code can be compiled without an entry function";
      return out;
    }
    std::optional<loop::Module> lowered = lowerProgram(c, *m.source, r.roots);
    if (!lowered)
      return out;
    cpuProduct(c, r, std::move(*lowered), out);
    return out;
  }

  std::optional<std::vector<std::string>> names = parameterNames(m, r.entry);
  if (!names) {
    out.error = m.path + " has no function `" + r.entry + "`";
    return out;
  }
  EntryCompilation entry(c, m, r, out);
  if (!entry.checkNames(*names))
    return out;
  std::optional<ir::Module> module = entry.module();
  if (!module || c.diags.errorCount() > 0)
    return out;
  const ir::Function &f = *module->find(r.entry);
  out.signature = signatureOf(f, *names);

  switch (r.product) {
  case Product::TensorIr: tensorIrProduct(c, r, *module, out); return out;
  case Product::ExitText: {
    std::optional<std::vector<std::vector<uint64_t>>> mainArguments;
    if (r.mainFunction) {
      std::optional<std::vector<rt::Tensor>> inputs = entry.inputs(f, *names, false);
      if (!inputs)
        return out;
      mainArguments.emplace();
      for (const rt::Tensor &t : *inputs)
        mainArguments->push_back(encodingsOf(t));
    }
    std::string path(c.sources.name(m.file));
    std::optional<std::string> text =
        c.options.target == Target::StableHlo
            ? emitStableHlo(c, *module, exits::StableHloOptions{r.entry, path, mainArguments, r.stableHloVersion, r.allowReorder})
            : emitLinalg(c, *module, exits::LinalgOptions{r.entry, r.keelMath, mainArguments, path});
    if (text) {
      out.text = std::move(*text);
      out.status = Compiled::Status::Ok;
    }
    return out;
  }
  case Product::Executable: {
    if (!entry.checkLimits(f, *names))
      return out;
    std::optional<std::vector<rt::Tensor>> inputs = entry.inputs(f, *names, true);
    if (!inputs)
      return out;
    out.inputs = std::move(*inputs);
    break;
  }
  case Product::LoopIr: case Product::LlvmIr: case Product::LlvmIrOptimized: break;
  case Product::Checked: return out; // answered above
  }
  std::optional<loop::Module> lowered = lowerForCpu(c, *module);
  if (!lowered) {
    out.status = Compiled::Status::Internal;
    return out;
  }
  cpuProduct(c, r, std::move(*lowered), out);
  return out;
}

} // namespace keel::pipeline
