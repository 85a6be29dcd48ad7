//===- Module.cpp - `import keel`: the extension module _keel -------------===//
//
// The Python module's native half (docs/python.md), on the pipeline's one
// entry (keel/pipeline/Pipeline.h) as the `keel` command is:
//
//   _keel.load(path) / _keel.compile(text, name)  -> _Module (checked once)
//   module.function(name)(*arrays, H=8, threads=2) -> compiled once per
//       (function, sizes, dtypes), then called on the arrays in place
//   module.text("ir" | "stablehlo" | "linalg", name, ...) -> the CLI's text
//   module.check_shapes(name, ...) -> (accepted, message)
//
// Compiling runs without the GIL, on a thread with the compiler's stack
// (keel/support/Stack.h); so does a call's compiled code, with its own
// thread count. Problems are exceptions: keel.CompileError (with the
// records `keel check --json` prints), keel.ShapeError (a ValueError),
// keel.ArgumentError (a TypeError), MemoryError; the keel package
// (python/keel/__init__.py) adds attribute access and the helpers.
//
//===----------------------------------------------------------------------===//
#include "Arrays.h"

#include "keel/numerics/Format.h"
#include "keel/pipeline/Pipeline.h"
#include "keel/runtime/Npy.h"
#include "keel/runtime/Print.h"
#include "keel/runtime/Threads.h"
#include "keel/support/Stack.h"

#include <pybind11/stl.h>

#include <atomic>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>

namespace keel::python {

namespace {

//===-- Exceptions and counters -------------------------------------------===//

/// The exception classes, made when the module is imported.
struct Errors {
  py::object error, compileError, shapeError, argumentError;
};
Errors *errors = nullptr; // lives as long as the process (the module is never unloaded)

[[noreturn]] void raise(const py::object &cls, const std::string &message, py::object diagnostics = py::none()) {
  py::object e = cls(message);
  if (!diagnostics.is_none())
    e.attr("diagnostics") = diagnostics;
  PyErr_SetObject(cls.ptr(), e.ptr());
  throw py::error_already_set();
}

[[noreturn]] void raise(const ArgumentProblem &p) {
  switch (p.kind) {
  case ArgumentProblem::Type: raise(errors->argumentError, p.message);
  case ArgumentProblem::Shape: raise(errors->shapeError, p.message);
  case ArgumentProblem::Value: throw py::value_error(p.message);
  }
  throw py::value_error(p.message);
}

/// viewOf, its problem raised as the exception it is.
ArrayView viewOrRaise(const py::handle &obj, const std::string &argument) {
  try {
    return viewOf(obj, argument);
  } catch (const ArgumentProblem &p) {
    raise(p);
  }
}

struct Counters {
  std::atomic<uint64_t> calls{0}, compiles{0}, inPlace{0}, copies{0}, copiedBytes{0};
};
Counters counters;

//===-- Modules -----------------------------------------------------------===//

/// A compiled (function, sizes, dtypes).
struct Kernel {
  std::shared_ptr<pipeline::Executable> executable;
  pipeline::Executable::Entry entry = nullptr;
  pipeline::Signature signature;
};

/// A loaded source file and what was compiled from it.
struct Module {
  SourceManager sources;
  FileId file = 0;
  std::shared_ptr<const pipeline::Loaded> loaded;
  std::vector<pipeline::FunctionInfo> functions;
  pipeline::Options options;

  std::mutex lock; ///< guards `kernels`
  std::unordered_map<std::string, std::shared_ptr<const Kernel>> kernels;

  const pipeline::FunctionInfo *find(const std::string &name) const {
    for (const pipeline::FunctionInfo &f : functions)
      if (f.name == name)
        return &f;
    return nullptr;
  }
};

/// Every diagnostic as text, and as the records `keel check --json` prints.
std::pair<std::string, py::list> renderAll(const SourceManager &sources, const DiagnosticEngine &diags,
                                           bool errorsOnly) {
  std::string text;
  py::list records;
  py::object loads = py::module_::import("json").attr("loads");
  for (const Diagnostic &d : diags.diagnostics()) {
    if (errorsOnly && d.severity == Severity::Warning)
      continue;
    text += renderText(sources, d, false);
    records.append(loads(renderJson(sources, d)));
  }
  while (!text.empty() && text.back() == '\n')
    text.pop_back();
  return {text, records};
}

/// Warnings (a compile cache that cannot be used, W0510) as Python warnings.
void warn(const SourceManager &sources, const DiagnosticEngine &diags) {
  for (const Diagnostic &d : diags.diagnostics())
    if (d.severity == Severity::Warning) {
      std::string text = renderText(sources, d, false);
      if (PyErr_WarnEx(PyExc_UserWarning, text.c_str(), 1) < 0)
        throw py::error_already_set();
    }
}

/// Runs `body` without the GIL on a thread with the compiler's stack.
template <typename F> void compilerThread(F &&body) {
  py::gil_scoped_release released;
  runWithStack(kCompilerStackBytes, [&] {
    body();
    return 0;
  });
}

std::shared_ptr<Module> loadModule(const std::string &name, const std::optional<std::string> &text) {
  auto m = std::make_shared<Module>();
  if (text) {
    m->file = m->sources.add(name, *text);
  } else {
    std::string error;
    std::optional<FileId> file = m->sources.load(name, error);
    if (!file) {
      PyErr_SetString(PyExc_OSError, (name + ": " + error).c_str());
      throw py::error_already_set();
    }
    m->file = *file;
  }
  std::string error;
  if (!pipeline::cacheSettings(m->options, false, "", error))
    throw py::value_error(error);
  DiagnosticEngine diags(m->sources);
  compilerThread([&] {
    pipeline::Compilation c(m->sources, diags, m->options);
    m->loaded = pipeline::load(c, m->file, pipeline::FileKind::Source);
    if (m->loaded)
      m->functions = pipeline::functions(c, *m->loaded);
  });
  if (!m->loaded || diags.errorCount() > 0) {
    auto [message, records] = renderAll(m->sources, diags, false);
    raise(errors->compileError, message.empty() ? name + " does not compile" : message, records);
  }
  warn(m->sources, diags);
  return m;
}

//===-- A call's arguments ------------------------------------------------===//

/// The arguments of a call, by parameter, and its keywords.
struct Bound {
  std::vector<py::handle> tensors; ///< per parameter; null when not given
  std::map<std::string, int64_t> sizes;
  int32_t threads = 0;
  std::map<std::string, py::handle> options; ///< the keywords `options` names
};

std::string parameterList(const pipeline::FunctionInfo &f) {
  std::string list;
  for (const pipeline::FunctionInfo::Param &p : f.params)
    list += (list.empty() ? "" : ", ") + p.name;
  return list.empty() ? "none" : list;
}

/// Matches positional and keyword arguments to `f`'s parameters; keywords
/// that are neither parameters nor `options` are sizes.
Bound bind(const pipeline::FunctionInfo &f, const py::args &args, const py::kwargs &kwargs,
           std::initializer_list<const char *> options, bool requireAll) {
  Bound b;
  b.tensors.resize(f.params.size());
  for (const pipeline::FunctionInfo::Param &p : f.params)
    if (!p.tensor)
      raise(errors->argumentError, "`" + f.name + "` takes `" + p.name + ": " + p.type +
                                       "`, a scalar: Python calls tensor functions, whose parameters are all tensors");
  if (args.size() > f.params.size())
    raise(errors->argumentError, "`" + f.name + "` takes " + std::to_string(f.params.size()) + " argument" +
                                     (f.params.size() == 1 ? "" : "s") + " (" + parameterList(f) + "), but " +
                                     std::to_string(args.size()) + " were given");
  for (size_t i = 0; i < args.size(); ++i)
    b.tensors[i] = args[i];
  for (auto [key, value] : kwargs) {
    std::string name = py::str(key);
    auto param = std::find_if(f.params.begin(), f.params.end(), [&](const auto &p) { return p.name == name; });
    if (param != f.params.end()) {
      size_t i = static_cast<size_t>(param - f.params.begin());
      if (b.tensors[i])
        raise(errors->argumentError, "`" + f.name + "` got argument `" + name + "` twice");
      b.tensors[i] = value;
      continue;
    }
    if (std::find_if(options.begin(), options.end(), [&](const char *o) { return name == o; }) != options.end()) {
      b.options[name] = value;
      continue;
    }
    if (name == "threads") {
      if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value) || value.cast<int64_t>() < 1 ||
          value.cast<int64_t>() > KEEL_MAX_THREADS)
        raise(errors->argumentError, "threads= is a thread count from 1 to " + std::to_string(KEEL_MAX_THREADS) +
                                         ", not " + std::string(py::repr(value)));
      b.threads = value.cast<int32_t>();
      continue;
    }
    if (!py::isinstance<py::int_>(value) || py::isinstance<py::bool_>(value)) {
      bool dimension = std::find(f.dimParams.begin(), f.dimParams.end(), name) != f.dimParams.end();
      raise(errors->argumentError, dimension ? "the size " + name + "= of `" + f.name + "` is an int, not " +
                                                   std::string(py::repr(value))
                                             : "`" + f.name + "` has no parameter `" + name + "` (its parameters: " +
                                                   parameterList(f) + "), and a size such as " + name +
                                                   "=8 is an int, not " + std::string(py::repr(value)));
    }
    if (value.cast<py::int_>() < py::int_(1) || value.cast<py::int_>() > py::int_(int64_t{1} << 62))
      raise(errors->shapeError, "the size " + name + "= of `" + f.name + "` is " + std::string(py::repr(value)) +
                                    ": sizes are from 1 to 2^62");
    b.sizes[name] = value.cast<int64_t>();
  }
  if (requireAll)
    for (size_t i = 0; i < f.params.size(); ++i)
      if (!b.tensors[i])
        raise(errors->argumentError, "`" + f.name + "` is missing argument `" + f.params[i].name +
                                         "` (its parameters: " + parameterList(f) + ")");
  return b;
}

std::string argumentName(const pipeline::FunctionInfo &f, size_t i) {
  return "argument `" + f.params[i].name + "` of `" + f.name + "`";
}

/// A compile request's problem as the exception it is.
[[noreturn]] void raiseCompiled(const Module &m, const pipeline::Compiled &out, const DiagnosticEngine &diags) {
  if (!out.error.empty())
    switch (out.problem) {
    case pipeline::Compiled::Problem::Argument: case pipeline::Compiled::Problem::DType:
      raise(errors->argumentError, out.error);
    case pipeline::Compiled::Problem::Shape: raise(errors->shapeError, out.error);
    case pipeline::Compiled::Problem::Memory:
      PyErr_SetString(PyExc_MemoryError, out.error.c_str());
      throw py::error_already_set();
    case pipeline::Compiled::Problem::Request: raise(errors->error, out.error);
    }
  auto [message, records] = renderAll(m.sources, diags, true);
  bool shape = false, argument = false;
  for (const Diagnostic &d : diags.diagnostics()) {
    shape |= d.code == "E0401" || d.code == "E0402" || d.code == "E0404";
    argument |= d.code == "E0400";
  }
  raise(argument ? errors->argumentError : shape ? errors->shapeError : errors->compileError,
        message.empty() ? "the compilation failed" : message, records);
}

/// The pipeline's arguments for a call's tensors: dtype and shape alone.
std::vector<pipeline::Argument> typeArguments(const pipeline::FunctionInfo &f, const std::vector<ArrayView> &views) {
  std::vector<pipeline::Argument> out;
  for (size_t i = 0; i < views.size(); ++i)
    if (views[i].owner) // given
      out.push_back({f.params[i].name, std::nullopt, std::nullopt, views[i].origin,
                     pipeline::TensorSpec{views[i].dtype, views[i].shape, {}}});
  return out;
}

std::shared_ptr<const Kernel> compileKernel(Module &m, const pipeline::FunctionInfo &f, const Bound &b,
                                            const std::vector<ArrayView> &views, const std::vector<std::string> &wrt) {
  pipeline::Request r;
  r.entry = f.name;
  r.gradient = wrt;
  r.bindings = b.sizes;
  r.arguments = typeArguments(f, views);
  r.argumentFlag = "argument";
  r.keywordSizes = true;
  r.product = pipeline::Product::Executable;
  r.memoryLimit = static_cast<uint64_t>(keel_rt_memory_limit());
  r.memoryLimitSetting = "the least of the machine's memory, its cgroup's limit and what ulimit -v leaves";
  DiagnosticEngine diags(m.sources);
  pipeline::Compiled out;
  compilerThread([&] {
    pipeline::Compilation c(m.sources, diags, m.options);
    out = pipeline::compile(c, *m.loaded, std::move(r));
  });
  if (!out.ok())
    raiseCompiled(m, out, diags);
  warn(m.sources, diags);
  auto k = std::make_shared<Kernel>();
  k->executable = out.executable;
  k->signature = *out.signature;
  std::string error;
  k->entry = k->executable->entry(f.name, error);
  if (!k->entry)
    raise(errors->error, "internal compiler error: " + error);
  ++counters.compiles;
  return k;
}

/// The kernel cache's key: the function, its sizes, each argument's dtype and shape.
std::string kernelKey(const pipeline::FunctionInfo &f, const Bound &b, const std::vector<ArrayView> &views,
                      const std::vector<std::string> &wrt) {
  std::string key = f.name;
  for (const std::string &p : wrt)
    key += "/d" + p;
  for (const auto &[name, size] : b.sizes)
    key += ";" + name + "=" + std::to_string(size);
  for (const ArrayView &v : views) {
    key += "|" + std::to_string(v.dtype);
    for (int64_t d : v.shape)
      key += "," + std::to_string(d);
  }
  return key;
}

py::object call(const std::shared_ptr<Module> &m, const pipeline::FunctionInfo &f, const std::vector<std::string> &wrt,
                const py::args &args, const py::kwargs &kwargs) {
  Bound b = bind(f, args, kwargs, {}, true);
  std::vector<ArrayView> views;
  views.reserve(f.params.size());
  for (size_t i = 0; i < f.params.size(); ++i)
    views.push_back(viewOrRaise(b.tensors[i], argumentName(f, i)));
  std::string key = kernelKey(f, b, views, wrt);
  std::shared_ptr<const Kernel> k;
  {
    std::lock_guard<std::mutex> hold(m->lock);
    auto it = m->kernels.find(key);
    if (it != m->kernels.end())
      k = it->second;
  }
  if (!k) {
    k = compileKernel(*m, f, b, views, wrt);
    std::lock_guard<std::mutex> hold(m->lock);
    k = m->kernels.emplace(key, k).first->second; // another thread's, if it was first
  }

  const pipeline::Signature &sig = k->signature;
  std::vector<AlignedBytes> copies;
  std::vector<KeelBuffer> buffers(sig.params.size() + sig.results.size());
  auto describe = [](KeelBuffer &buffer, const pipeline::TensorSpec &t, void *data) {
    buffer.dtype = static_cast<uint8_t>(t.dtype);
    buffer.rank = static_cast<uint8_t>(t.shape.size());
    std::copy(t.shape.begin(), t.shape.end(), buffer.dims);
    std::copy(t.minorToMajor.begin(), t.minorToMajor.end(), buffer.minor_to_major);
    buffer.data = data;
  };
  for (size_t i = 0; i < sig.params.size(); ++i) {
    const pipeline::TensorSpec &t = sig.params[i];
    const uint8_t *data = views[i].data;
    if (readsInPlace(views[i], t.minorToMajor)) {
      ++counters.inPlace;
    } else {
      copies.push_back(gather(views[i], t.minorToMajor));
      data = copies.back().get();
      ++counters.copies;
      counters.copiedBytes += t.bytes();
    }
    int64_t count = 1;
    for (int64_t d : t.shape)
      count *= d;
    if (std::string bad = invalidElements(t.dtype, data, count); !bad.empty())
      throw py::value_error(argumentName(f, i) + " (" + views[i].origin + "): " + bad);
    describe(buffers[i], t, const_cast<uint8_t *>(data));
  }
  py::tuple results(sig.results.size());
  for (size_t i = 0; i < sig.results.size(); ++i) {
    const pipeline::TensorSpec &t = sig.results[i];
    py::array out = newArray(t.dtype, t.shape, t.minorToMajor);
    describe(buffers[sig.params.size() + i], t, out.mutable_data());
    results[i] = std::move(out);
  }
  std::vector<KeelBuffer *> pointers;
  for (KeelBuffer &buffer : buffers)
    pointers.push_back(&buffer);
  {
    py::gil_scoped_release released;
    keel_rt_set_threads_here(b.threads);
    k->entry(pointers.data());
    keel_rt_set_threads_here(0);
  }
  ++counters.calls;
  if (sig.results.size() == 1)
    return results[0];
  return results;
}

//===-- Texts and shape questions -----------------------------------------===//

/// The views of the tensors given (arrays, or shapes as tuples of ints with
/// the parameter's declared dtype); absent ones stay empty.
std::vector<ArrayView> shapeViews(const pipeline::FunctionInfo &f, const Bound &b) {
  std::vector<ArrayView> views(f.params.size());
  for (size_t i = 0; i < f.params.size(); ++i) {
    py::handle h = b.tensors[i];
    if (!h)
      continue;
    if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h)) {
      for (py::handle d : h) {
        if (!py::isinstance<py::int_>(d) || py::isinstance<py::bool_>(d))
          raise(errors->argumentError, argumentName(f, i) + ": a shape is a tuple of ints, not " +
                                           std::string(py::repr(h)));
        views[i].shape.push_back(d.cast<int64_t>());
      }
      views[i].dtype = f.params[i].dtype.value_or(KEEL_F32);
      views[i].owner = py::reinterpret_borrow<py::object>(h);
      views[i].origin = "shape " + std::string(py::repr(h));
      continue;
    }
    views[i] = viewOrRaise(h, argumentName(f, i));
    views[i].release(); // the type alone is read
  }
  return views;
}

std::string text(const std::shared_ptr<Module> &m, const std::string &kind, const pipeline::FunctionInfo &f,
                 const py::args &args, const py::kwargs &kwargs) {
  Bound b = bind(f, args, kwargs, {"fuse", "locations", "version", "keel_math", "allow_reorder"}, false);
  std::vector<ArrayView> views = shapeViews(f, b);
  pipeline::Options options = m->options;
  pipeline::Request r;
  r.entry = f.name;
  r.bindings = b.sizes;
  r.arguments = typeArguments(f, views);
  r.argumentsRequired = false;
  r.argumentFlag = "argument";
  r.keywordSizes = true;
  auto flag = [&](const char *name) { return b.options.count(name) && PyObject_IsTrue(b.options[name].ptr()) == 1; };
  if (kind == "ir") {
    r.product = pipeline::Product::TensorIr;
    r.fuseByDefault = flag("fuse");
    r.locations = flag("locations");
  } else if (kind == "stablehlo" || kind == "linalg") {
    options.target = kind == "stablehlo" ? pipeline::Target::StableHlo : pipeline::Target::Linalg;
    r.product = pipeline::Product::ExitText;
    r.keelMath = flag("keel_math");
    r.allowReorder = flag("allow_reorder");
    if (b.options.count("version")) {
      r.stableHloVersion = py::str(b.options["version"]);
      if (!pipeline::stableHloVersionSupported(r.stableHloVersion))
        throw py::value_error("version=" + r.stableHloVersion + ": the StableHLO exit writes versions " +
                              pipeline::stableHloVersionRange());
    }
  } else {
    throw py::value_error("no text kind `" + kind + "` (ir, stablehlo, linalg)");
  }
  DiagnosticEngine diags(m->sources);
  pipeline::Compiled out;
  compilerThread([&] {
    pipeline::Compilation c(m->sources, diags, options);
    out = pipeline::compile(c, *m->loaded, std::move(r));
  });
  if (!out.ok())
    raiseCompiled(*m, out, diags);
  return out.text;
}

/// Whether `f` accepts the given shapes and sizes: (true, "") or (false,
/// the message a call would raise as keel.ShapeError).
std::pair<bool, std::string> checkShapes(const std::shared_ptr<Module> &m, const pipeline::FunctionInfo &f,
                                         const py::args &args, const py::kwargs &kwargs) {
  try {
    text(m, "ir", f, args, kwargs);
  } catch (py::error_already_set &e) {
    if (!e.matches(errors->shapeError))
      throw;
    return {false, std::string(py::str(e.value()))};
  }
  return {true, ""};
}

//===-- Low-precision arrays ----------------------------------------------===//

std::optional<fp::Format> formatOf(KeelDType t) {
  switch (t) {
  case KEEL_F16: return fp::Format::F16;
  case KEEL_BF16: return fp::Format::BF16;
  case KEEL_TF32: return fp::Format::TF32;
  case KEEL_FP8E4M3FN: return fp::Format::FP8E4M3FN;
  case KEEL_FP8E5M2: return fp::Format::FP8E5M2;
  case KEEL_F32: return fp::Format::F32;
  case KEEL_F64: return fp::Format::F64;
  case KEEL_PRED: case KEEL_I4: case KEEL_I8: case KEEL_I16: case KEEL_I32: case KEEL_I64: case KEEL_U8:
  case KEEL_U16: case KEEL_U32: case KEEL_U64: case KEEL_NUM_DTYPES: return std::nullopt;
  }
  return std::nullopt;
}

uint64_t load(const uint8_t *p, size_t size) {
  uint64_t v = 0;
  std::memcpy(&v, p, size); // little-endian hosts (x86-64, AArch64)
  return v;
}

/// `a` (a C-contiguous array) converted to `to` element by element with
/// Keel's conversion (one rounding to nearest even; fp8e4m3fn saturates),
/// as `x as T` does in source.
py::array convert(KeelDType to, const py::array &a) {
  ArrayView v = viewOrRaise(a, "the array");
  std::optional<fp::Format> from = formatOf(v.dtype);
  bool integer = !from && v.dtype != KEEL_PRED && v.dtype != KEEL_I4;
  if (!from && !integer)
    raise(errors->argumentError, "keel." + dtypeText(to) + " converts numbers; " + v.origin + " is not");
  size_t inSize = keel_dtype_size(v.dtype), outSize = keel_dtype_size(to);
  std::vector<int64_t> rowMajor;
  for (size_t d = v.shape.size(); d-- > 0;)
    rowMajor.push_back(static_cast<int64_t>(d));
  py::array out = newArray(to, v.shape, rowMajor);
  auto *dst = static_cast<uint8_t *>(out.mutable_data());
  int64_t count = static_cast<int64_t>(out.size());
  fp::Format format = *formatOf(to);
  bool isSigned = v.dtype == KEEL_I8 || v.dtype == KEEL_I16 || v.dtype == KEEL_I32 || v.dtype == KEEL_I64;
  {
    py::gil_scoped_release released;
    for (int64_t i = 0; i < count; ++i) {
      uint64_t bits = load(v.data + static_cast<size_t>(i) * inSize, inSize);
      uint64_t r;
      if (from) {
        r = fp::convert(*from, format, bits);
      } else if (isSigned) {
        int shift = 64 - 8 * static_cast<int>(inSize);
        r = fp::fromI64(format, static_cast<int64_t>(bits << shift) >> shift);
      } else {
        r = fp::fromU64(format, bits);
      }
      std::memcpy(dst + static_cast<size_t>(i) * outSize, &r, outSize);
    }
  }
  return out;
}

/// A floating array's values as float32 (exact from every format but f64,
/// which rounds once).
py::array toFloat32(const py::array &a) {
  ArrayView v = viewOrRaise(a, "the array");
  std::optional<fp::Format> from = formatOf(v.dtype);
  if (!from)
    raise(errors->argumentError, "keel.to_float32 converts floating arrays; " + v.origin + " is not one");
  if (std::string bad = invalidElements(v.dtype, v.data, static_cast<int64_t>(a.size())); !bad.empty())
    throw py::value_error("the array: " + bad);
  size_t inSize = keel_dtype_size(v.dtype);
  py::array_t<float> out(std::vector<py::ssize_t>(v.shape.begin(), v.shape.end()));
  float *dst = out.mutable_data();
  int64_t count = static_cast<int64_t>(out.size());
  {
    py::gil_scoped_release released;
    for (int64_t i = 0; i < count; ++i)
      dst[i] = fp::toF32(*from, load(v.data + static_cast<size_t>(i) * inSize, inSize));
  }
  return out;
}

/// An element type as source spells it (`bool`, `f32`).
std::string sourceName(KeelDType t) { return t == KEEL_PRED ? "bool" : std::string(rt::dtypeName(t)); }

py::dict functionInfo(const pipeline::FunctionInfo &f) {
  py::list params;
  for (const pipeline::FunctionInfo::Param &p : f.params)
    params.append(py::dict(py::arg("name") = p.name, py::arg("type") = p.type,
                           py::arg("dtype") = p.dtype ? py::object(py::str(sourceName(*p.dtype))) : py::none(),
                           py::arg("dims") = p.dims));
  return py::dict(py::arg("name") = f.name, py::arg("dim_params") = f.dimParams, py::arg("params") = params,
                  py::arg("result") = f.result, py::arg("requires") = f.refinements,
                  py::arg("location") = f.location);
}

/// A function of a module, callable.
/// A function of a module, callable; with `wrt`, its value and gradient
/// with respect to those parameters (docs/autodiff.md).
struct Function {
  std::shared_ptr<Module> module;
  size_t index;
  std::vector<std::string> wrt;
  const pipeline::FunctionInfo &info() const { return module->functions[index]; }
};

Function functionOf(const std::shared_ptr<Module> &m, const std::string &name) {
  for (size_t i = 0; i < m->functions.size(); ++i)
    if (m->functions[i].name == name)
      return Function{m, i, {}};
  std::string list;
  for (const pipeline::FunctionInfo &f : m->functions)
    list += (list.empty() ? "" : ", ") + f.name;
  throw py::key_error("no function `" + name + "` in " + std::string(m->sources.name(m->file)) +
                      " (its functions: " + (list.empty() ? "none" : list) + ")");
}

} // namespace

} // namespace keel::python

using namespace keel;
using namespace keel::python;

PYBIND11_MODULE(_keel, mod) {
  mod.doc() = "Keel's native module; use the keel package (docs/python.md).";
  py::module_::import("numpy");
  py::object exception = py::reinterpret_borrow<py::object>(PyExc_Exception);
  py::object base = py::reinterpret_steal<py::object>(
      PyErr_NewExceptionWithDoc("keel.Error", "A problem Keel reports.", exception.ptr(), nullptr));
  auto subclass = [&](const char *name, const char *doc, PyObject *also) {
    py::object bases = also ? py::make_tuple(base, py::handle(also)) : py::make_tuple(base);
    return py::reinterpret_steal<py::object>(PyErr_NewExceptionWithDoc(name, doc, bases.ptr(), nullptr));
  };
  errors = new Errors{base,
                      subclass("keel.CompileError",
                               "A source that does not compile; .diagnostics holds keel check --json's records.",
                               nullptr),
                      subclass("keel.ShapeError", "Arguments whose shapes or sizes the function does not accept.",
                               PyExc_ValueError),
                      subclass("keel.ArgumentError",
                               "A call's arguments: a wrong dtype, a missing or extra argument, not an array.",
                               PyExc_TypeError)};
  errors->compileError.attr("diagnostics") = py::list();
  mod.attr("Error") = errors->error;
  mod.attr("CompileError") = errors->compileError;
  mod.attr("ShapeError") = errors->shapeError;
  mod.attr("ArgumentError") = errors->argumentError;

  py::class_<Module, std::shared_ptr<Module>>(mod, "_Module")
      .def_property_readonly("path", [](const Module &m) { return std::string(m.sources.name(m.file)); })
      .def_property_readonly("names",
                             [](const Module &m) {
                               std::vector<std::string> names;
                               for (const pipeline::FunctionInfo &f : m.functions)
                                 names.push_back(f.name);
                               return names;
                             })
      .def("function", &functionOf)
      .def("value_and_grad",
           [](const std::shared_ptr<Module> &m, const std::string &name, const std::vector<std::string> &wrt) {
             Function f = functionOf(m, name);
             if (wrt.empty())
               throw py::value_error("value_and_grad needs the parameters to differentiate with respect to (wrt=[...])");
             f.wrt = wrt;
             return f;
           })
      .def("info", [](const std::shared_ptr<Module> &m, const std::string &name) {
        return functionInfo(functionOf(m, name).info());
      })
      .def("text",
           [](const std::shared_ptr<Module> &m, const std::string &kind, const std::string &name, py::args args,
              py::kwargs kwargs) { return text(m, kind, functionOf(m, name).info(), args, kwargs); })
      .def("check_shapes", [](const std::shared_ptr<Module> &m, const std::string &name, py::args args,
                              py::kwargs kwargs) { return checkShapes(m, functionOf(m, name).info(), args, kwargs); })
      .def("compiled", [](const Module &m) {
        std::lock_guard<std::mutex> hold(const_cast<Module &>(m).lock);
        return m.kernels.size();
      });

  py::class_<Function>(mod, "Function")
      .def("__call__",
           [](const Function &f, py::args args, py::kwargs kwargs) {
             return call(f.module, f.info(), f.wrt, args, kwargs);
           })
      .def_property_readonly("name", [](const Function &f) { return f.info().name; })
      .def("__repr__", [](const Function &f) {
        return "<keel function " + f.info().name + " of " + std::string(f.module->sources.name(f.module->file)) + ">";
      });

  mod.def("load", [](const std::string &path) { return loadModule(path, std::nullopt); });
  mod.def("compile", [](const std::string &text, const std::string &name) { return loadModule(name, text); });
  mod.def("convert", [](const std::string &to, const py::array &a) {
    for (KeelDType t : {KEEL_F16, KEEL_BF16, KEEL_TF32, KEEL_FP8E4M3FN, KEEL_FP8E5M2})
      if (dtypeText(t) == to)
        return convert(t, a);
    throw py::value_error("no format `" + to + "`");
  });
  mod.def("to_float32", &toFloat32);
  mod.def("stats", [] {
    return py::dict(py::arg("calls") = counters.calls.load(), py::arg("compiles") = counters.compiles.load(),
                    py::arg("in_place") = counters.inPlace.load(), py::arg("copies") = counters.copies.load(),
                    py::arg("copied_bytes") = counters.copiedBytes.load());
  });
  mod.def("reset_stats", [] {
    counters.calls = counters.compiles = counters.inPlace = counters.copies = counters.copiedBytes = 0;
  });
  mod.def("set_threads", [](int32_t threads) {
    if (threads < 0 || threads > KEEL_MAX_THREADS)
      throw py::value_error("a thread count from 1 to " + std::to_string(KEEL_MAX_THREADS) + ", or 0 for every CPU");
    keel_rt_set_threads(threads);
  });
  mod.def("threads", [] { return keel_rt_threads(); });
  // KEEL_THREADS, as the keel command reads it.
  if (const char *env = std::getenv("KEEL_THREADS"); env && *env) {
    int32_t threads = 0;
    const char *end = env + std::strlen(env);
    auto [at, ec] = std::from_chars(env, end, threads);
    if (ec != std::errc() || at != end || threads < 1 || threads > KEEL_MAX_THREADS) {
      std::string message = std::string("KEEL_THREADS must be a thread count from 1 to ") +
                            std::to_string(KEEL_MAX_THREADS) + ", not '" + env + "'; using every CPU";
      if (PyErr_WarnEx(PyExc_RuntimeWarning, message.c_str(), 1) < 0)
        throw py::error_already_set();
    } else {
      keel_rt_set_threads(threads);
    }
  }
}
