//===- keel/codegen/Codegen.h - Loop IR to LLVM, and the JIT ---*- C++ -*-===//
//
// LLVM 22 code generation (SFEP-0054 §3.7): carriers are i1 (bool), iN
// (integers), float (f32, tf32), double (f64), i16 (f16, bf16), i8 (fp8).
// Low-precision arithmetic, conversions and comparisons go through the
// numerics library's format-named helpers (keel/numerics/Helpers.h), which
// are exact by construction and tested bit for bit; LLVM's half/bfloat are
// not used until their rounding on this target is shown identical. No
// fast-math flags are set and no FMA is formed. Every operation has a
// defined result (docs/semantics.md): integer division by zero gives 0 (and
// remainder the dividend), MIN / -1 gives MIN, float-to-integer casts
// saturate with NaN to 0 (llvm.fpto[su]i.sat).
//
// The JIT (ORC LLJIT) runs `main` or a test in this process; runtime
// helpers are bound as absolute symbols, not looked up by name in the
// process, so generated code sees exactly Keel's helpers. A module is
// compiled in parts, on threads: each function with the small functions it
// calls (what LLVM might inline), the parts chosen from the module alone so
// the machine code does not depend on the host's cores; their objects are
// linked by the JIT, and kept in the compile cache (ObjectCache.h).
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_CODEGEN_CODEGEN_H
#define KEEL_CODEGEN_CODEGEN_H

#include "keel/codegen/ObjectCache.h"
#include "keel/loop/LoopIR.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace keel::codegen {

/// The LLVM IR text of a loop IR module, as generated or (`optimized`)
/// after the -O2 pipeline the JIT runs. User functions are named
/// `keel.fn.NAME`.
std::string emitLLVMText(const loop::Module &m, bool optimized = false);

/// Emits the module and runs LLVM's verifier on it; false with the problems
/// (a Keel bug: verified loop IR must always give valid LLVM IR).
bool checkLLVM(const loop::Module &m, std::string &problems);

/// The widest vector registers the host's code may use and how many there
/// are: 512 bits and 32 with AVX-512, 256 and 16 with AVX, else 128 and 16
/// (what the JIT compiles for, preferring vectors of that width; the CPU
/// schedule sizes its register tiles from it).
struct HostVectors {
  unsigned bits, registers;
};
HostVectors hostVectors();

/// Whether the f32 math function `name` (keel/support/MathFunctions.def)
/// is called through vector variants of the library function (gelu, silu,
/// sin, cos), not emitted inline.
bool hasVectorVariants(std::string_view name);
/// The lanes of the widest such variant worth calling on this host, which
/// loops over them are vectorized at: a quarter of the vector registers'
/// worth of doubles (AVX-512: 8 of 32 registers, 64 lanes; AVX2: 4 of 16,
/// 16 lanes), leaving the polynomials' other operands room in registers.
unsigned wideKernelLanes();

/// Where compilation's time went, in seconds (added to what is there).
struct CompileTimes {
  double emit = 0;        ///< loop IR to LLVM IR, and LLVM's verifier
  double optimize = 0;    ///< LLVM's -O2 pipeline
  double machineCode = 0; ///< the JIT's code generation for this machine
  double cache = 0;       ///< the compile cache: the key, loading and linking a hit, storing a miss
  std::optional<bool> cacheHit; ///< whether the cache had the module (unset: no cache)
};

class Program {
public:
  /// Compiles a module for this machine, machine code included; nullopt
  /// with `error` set on failure (a Keel bug: the loop IR was verified).
  /// With a usable `cache`, loads the module's object from it instead when
  /// it is there, and stores it when not; the cache's warnings go to
  /// `warnings` (they never fail the compilation).
  static std::unique_ptr<Program> compile(const loop::Module &m, std::string &error, CompileTimes *times = nullptr,
                                          const ObjectCache *cache = nullptr,
                                          std::vector<std::string> *warnings = nullptr);
  ~Program();

  /// The address of a compiled function, to call with its C signature
  /// (carriers as documented above; ptr as void*); null with `error` set.
  void *address(const std::string &function, std::string &error);

  /// Runs a function of no arguments; returns its i64 result (0 for void).
  std::optional<int64_t> run(const std::string &function, std::string &error);

private:
  Program();
  struct Impl;
  std::unique_ptr<Impl> impl_;
  const loop::Module *module_ = nullptr;
};

} // namespace keel::codegen

#endif // KEEL_CODEGEN_CODEGEN_H
