//===- Codegen.cpp - Loop IR to LLVM IR, and the ORC JIT -----------------===//
#include "keel/codegen/Codegen.h"

#include "keel/numerics/Format.h"
#include "keel/numerics/Helpers.h"
#include "keel/numerics/Math.h"
#include "keel/runtime/Print.h"
#include "keel/runtime/Threads.h"

#include <llvm/Analysis/LoopAccessAnalysis.h>
#include <llvm/ExecutionEngine/Orc/AbsoluteSymbols.h>
#include <llvm/ExecutionEngine/Orc/CompileUtils.h>
#include <llvm/ExecutionEngine/Orc/LLJIT.h>
#include <llvm/IR/DiagnosticHandler.h>
#include <llvm/IR/DiagnosticInfo.h>
#include <llvm/IR/IRBuilder.h>
#include <llvm/IR/Intrinsics.h>
#include <llvm/IR/LLVMContext.h>
#include <llvm/IR/Module.h>
#include <llvm/IR/Verifier.h>
#include <llvm/Passes/PassBuilder.h>
#include <llvm/Support/TargetSelect.h>
#include <llvm/Support/raw_ostream.h>
#include <llvm/TargetParser/Host.h>
#include <llvm/Transforms/Utils/ModuleUtils.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <pthread.h>
#include <set>
#include <thread>

namespace keel::codegen {

using loop::Type;

namespace {

/// The format name of a floating type in helper names: its spelling.
std::string formatName(Type t) { return std::string(loop::typeName(t)); }
bool isLowPrecision(Type t) { return loop::isLowPrecisionType(t); }
/// The numerics library's format of a floating type (keel_rt_print_lowp
/// takes its index); nullopt for the other types.
std::optional<keel::fp::Format> formatOf(Type t) {
  switch (t) {
  case Type::F16: return keel::fp::Format::F16;
  case Type::BF16: return keel::fp::Format::BF16;
  case Type::TF32: return keel::fp::Format::TF32;
  case Type::FP8E4M3FN: return keel::fp::Format::FP8E4M3FN;
  case Type::FP8E5M2: return keel::fp::Format::FP8E5M2;
  case Type::F32: return keel::fp::Format::F32;
  case Type::F64: return keel::fp::Format::F64;
  case Type::Bool: case Type::I4: case Type::I8: case Type::I16: case Type::I32: case Type::I64: case Type::U8:
  case Type::U16: case Type::U32: case Type::U64: case Type::Void: case Type::Ptr:
    return std::nullopt;
  }
  return std::nullopt;
}

/// G(s) = exp(s^2 / 2) erfc(s / sqrt 2) on [from, next piece's from): the
/// polynomial sum coefficients[k] (s - center)^k, printed by
/// scripts/gelu_tail_fit.py (Chebyshev interpolants at 200 bits).
struct GeluTailPiece {
  double from, center;
  double coefficients[17];
};
constexpr GeluTailPiece kGeluTail[] = {
    {2.12, 0x1.67ae147ae147bp+1,
     {0x1.06f519c6c5073p-2, -0x1.387e63b50e295p-4, 0x1.5b71db4bfc7a1p-6, -0x1.6cdf99df8bf2ep-8, 0x1.6c7c1148943eap-10,
      -0x1.5c3bc9a30867ap-12, 0x1.3f99fdbe1c685p-14, -0x1.1ac60dfb1ebbap-16, 0x1.e3cfe96aa7bf3p-19,
      -0x1.91308f8df365cp-21, 0x1.43297b7d0f1e2p-23, -0x1.faaf7dbf82d02p-26, 0x1.83313ce3ba953p-28,
      -0x1.20560aac12364p-30, 0x1.a48b29dd44cdcp-33, -0x1.3f5f239aaa9a8p-35, 0x1.bd703ec8a1036p-38}},
    {3.5, 0x1.1000000000000p+2,
     {0x1.6e0409710781ap-3, -0x1.3a009352b6b4dp-5, 0x1.031b67492b0c1p-7, -0x1.9ccf90dfb5017p-10, 0x1.3e69129297202p-12,
      -0x1.dccc54194bca1p-15, 0x1.5b42ca1b6d072p-17, -0x1.ecf3f3f3bb3d1p-20, 0x1.5584c2160ee5ep-22,
      -0x1.ce8a4959b4323p-25, 0x1.328a810ff3d64p-27, -0x1.8e1661fdae480p-30, 0x1.faff2ad590e9bp-33,
      -0x1.3c8418283e6c4p-35, 0x1.84c1acbfa8908p-38, -0x1.ef07cb7b9637ep-41, 0x1.258c0e6a38bb5p-43}},
    {5.0, 0x1.a000000000000p+2,
     {0x1.eba5fe5b14b2ap-4, -0x1.21ae9268527c2p-6, 0x1.4ea50718ea862p-9, -0x1.7b5fb857006c7p-12, 0x1.a6741523bc447p-15,
      -0x1.ce785bafeb458p-18, 0x1.f218716d563e1p-21, -0x1.081491200dcc7p-23, 0x1.13dc1dc0744a3p-26,
      -0x1.1c0be0caa565dp-29, 0x1.2073eddd83298p-32, -0x1.211dc4fe6d494p-35, 0x1.1dfbd1fc9dc03p-38,
      -0x1.1503e827f44f5p-41, 0x1.0b78761aa3b3fp-44, -0x1.259eddc0daea5p-47, 0x1.1422c8c2b123fp-50}},
};

/// The lanes of the vector variants of a math function (f32).
constexpr unsigned kVariantLanes[] = {2, 4, 8, 16, 32, 64};

/// exp, tanh and sigmoid on f32, as inlinable LLVM IR without branches:
/// the same IEEE f64 operations, in the same order, as keel_exp_f32,
/// keel_tanh_f32 and keel_sigmoid_f32 (src/numerics/Math.cpp) perform on
/// every f32 input, each branch of theirs computed and selected (tanh
/// mirrors the library's f32-specific tanhF32). Arguments
/// are clamped where the library's result no longer changes the f32
/// outcome (exp: below -150 the f32 result is +0, above 100 infinity).
///
/// gelu, silu, sin and cos keep calling the library, as a call without
/// side effects that carries vector variants (LLVM's vector function ABI):
/// when the loop vectorizer vectorizes a loop over them, it calls a variant
/// of 2 to 16 lanes instead, which computes the common case on every lane
/// in vector registers and calls the library only for the lanes outside it.
/// gelu and silu compute the library's common branch with the library's own
/// operations (gelu: the erf series for -2.12 <= x <= 3; silu: x >= -38,
/// through exp); silu's double-double tail and NaN go to the library.
/// Elsewhere a variant computes a double within a known bound of the true
/// value and keeps it where that bound shows how it rounds, which is how
/// the library's value rounds too (roundsSurely), the library deciding the
/// rest: gelu's tails 2.12 < |x| <= 8 (where the library runs a continued
/// fraction of 100 divisions) and sin and cos for 0 < |x| < 2^20 (the
/// library's are correctly rounded).
/// MathKernelTest compares every kernel and variant with the library on
/// every f32 input.
class F32Kernels {
public:
  F32Kernels(llvm::LLVMContext &ctx, llvm::Module &m) : ctx_(ctx), m_(m), b_(ctx) {}

  /// Whether NAME on f32 is emitted inline (get) or as a call with vector
  /// variants (call).
  static bool isInline(const std::string &name) { return name == "exp" || name == "tanh" || name == "sigmoid"; }
  static unsigned wideLanes() { return wideKernelLanes(); }
  static bool hasVariants(const std::string &name) { return hasVectorVariants(name); }

  llvm::Function *get(const std::string &name) {
    if (llvm::Function *f = m_.getFunction("keel.kernel." + name + ".f32"))
      return f;
    auto *f = llvm::Function::Create(llvm::FunctionType::get(b_.getFloatTy(), {b_.getFloatTy()}, false),
                                     llvm::Function::InternalLinkage, "keel.kernel." + name + ".f32", m_);
    f->addFnAttr(llvm::Attribute::AlwaysInline);
    lanes_ = 1;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", f));
    llvm::Value *x = b_.CreateFPExt(f->getArg(0), b_.getDoubleTy());
    llvm::Value *r = name == "exp" ? exp(x) : name == "tanh" ? tanh(x) : sigmoid(x);
    b_.CreateRet(b_.CreateFPTrunc(r, b_.getFloatTy()));
    return f;
  }

  /// The library's keel_NAME_f32 for a function with variants
  /// (libraryFunction), with its vector variants declared for the loop
  /// vectorizer (defined by defineVariants, once it is known which are
  /// called). `attributes` is what each call must carry.
  llvm::Function *call(const std::string &name, llvm::AttributeList &attributes) {
    std::string library = "keel_" + name + "_f32";
    llvm::Function *f = libraryFunction(name);
    std::string mappings;
    for (unsigned lanes : kVariantLanes) {
      std::string vector = std::string(kVariantPrefix) + name + "_f32_v" + std::to_string(lanes);
      if (!m_.getFunction(vector)) {
        auto *floats = llvm::FixedVectorType::get(b_.getFloatTy(), lanes);
        llvm::Function *v = llvm::Function::Create(llvm::FunctionType::get(floats, {floats}, false),
                                                   llvm::Function::ExternalLinkage, vector, m_);
        v->setDoesNotAccessMemory();
        v->setDoesNotThrow();
        v->setWillReturn();
        llvm::appendToCompilerUsed(m_, {v}); // kept through -O2 for the vectorizer
      }
      mappings += (mappings.empty() ? "" : ",") + std::string("_ZGV_LLVM_N") + std::to_string(lanes) + "v_" + library +
                  "(" + vector + ")";
    }
    llvm::AttrBuilder call(ctx_);
    call.addMemoryAttr(llvm::MemoryEffects::none());
    call.addAttribute(llvm::Attribute::NoUnwind);
    call.addAttribute(llvm::Attribute::WillReturn);
    call.addAttribute("vector-function-abi-variant", mappings);
    attributes = llvm::AttributeList::get(ctx_, llvm::AttributeList::FunctionIndex, call);
    return f;
  }

  /// Defines the module's declared vector variants: those called only
  /// (`calledOnly`: after the optimizer, which has vectorized what it will;
  /// the others go, so the code generator never compiles them: a module
  /// calling gelu compiled in 134 ms with all six defined, 43 with the one
  /// called), or all of them (a module printed unoptimized, complete).
  static void defineVariants(llvm::Module &m, bool calledOnly) {
    F32Kernels kernels(m.getContext(), m);
    auto isVariant = [](const llvm::Constant *c) { return c->getName().starts_with(kVariantPrefix); };
    llvm::removeFromUsedLists(m, isVariant);
    for (llvm::Function &f : llvm::make_early_inc_range(m)) {
      f.removeDeadConstantUsers(); // the used list's
      llvm::StringRef symbol = f.getName();
      if (!f.isDeclaration() || !symbol.consume_front(kVariantPrefix))
        continue;
      if (calledOnly && f.use_empty()) {
        f.eraseFromParent();
        continue;
      }
      auto [name, lanes] = symbol.rsplit("_f32_v");
      kernels.variant(name.str(), static_cast<unsigned>(std::stoul(lanes.str())), f);
    }
  }

private:
  /// keel_NAME_f32, declared without side effects (it reads and writes no
  /// memory of the caller's).
  llvm::Function *libraryFunction(const std::string &name) {
    std::string library = "keel_" + name + "_f32";
    if (llvm::Function *f = m_.getFunction(library))
      return f;
    llvm::Function *f = llvm::Function::Create(llvm::FunctionType::get(b_.getFloatTy(), {b_.getFloatTy()}, false),
                                               llvm::Function::ExternalLinkage, library, m_);
    f->setDoesNotAccessMemory();
    f->setDoesNotThrow();
    f->setWillReturn();
    return f;
  }
  static constexpr const char *kVariantPrefix = "keel_kernel_";

  /// <lanes x float> NAME(<lanes x float> x), declared by call(): the
  /// common branch on every lane (and gelu's tails where a lane needs
  /// them); the lanes they do not cover go to the library one by one.
  void variant(const std::string &name, unsigned lanes, llvm::Function &declared) {
    llvm::Function *f = &declared, *library = libraryFunction(name); // (-O2 may have dropped it)
    f->setLinkage(llvm::Function::InternalLinkage);
    auto *floats = llvm::cast<llvm::FixedVectorType>(f->getReturnType());
    lanes_ = lanes;
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", f));
    llvm::Value *input = f->getArg(0);
    llvm::Value *x = b_.CreateFPExt(input, llvm::FixedVectorType::get(b_.getDoubleTy(), lanes));
    llvm::Value *covered = nullptr;
    llvm::Value *wide = name == "gelu"   ? geluSeries(x, covered)
                        : name == "silu" ? siluCommon(x, covered)
                                         : trig(x, name == "sin", covered);
    if (name == "gelu")
      addGeluTails(*f, x, wide, covered);
    llvm::Value *r = b_.CreateFPTrunc(wide, floats);
    // Any lane not covered: those through the library, in lane order, by a
    // loop over the lanes in memory (a block per lane made the 64-lane
    // variant slow to compile).
    llvm::BasicBlock *fast = b_.GetInsertBlock();
    llvm::BasicBlock *slow = llvm::BasicBlock::Create(ctx_, "slow", f);
    llvm::BasicBlock *lane = llvm::BasicBlock::Create(ctx_, "lane", f);
    llvm::BasicBlock *call = llvm::BasicBlock::Create(ctx_, "call", f);
    llvm::BasicBlock *next = llvm::BasicBlock::Create(ctx_, "next", f);
    llvm::BasicBlock *patched = llvm::BasicBlock::Create(ctx_, "patched", f);
    llvm::BasicBlock *done = llvm::BasicBlock::Create(ctx_, "done", f);
    b_.CreateCondBr(anyFalse(covered), slow, done);
    b_.SetInsertPoint(slow);
    llvm::IRBuilder<> atEntry(&f->getEntryBlock(), f->getEntryBlock().begin());
    llvm::Value *ins = atEntry.CreateAlloca(floats), *outs = atEntry.CreateAlloca(floats);
    b_.CreateStore(input, ins);
    b_.CreateStore(r, outs);
    llvm::Value *uncovered =
        b_.CreateZExt(b_.CreateBitCast(b_.CreateNot(covered), b_.getIntNTy(lanes)), b_.getInt64Ty());
    b_.CreateBr(lane);
    b_.SetInsertPoint(lane);
    llvm::PHINode *i = b_.CreatePHI(b_.getInt64Ty(), 2);
    i->addIncoming(b_.getInt64(0), slow);
    b_.CreateCondBr(b_.CreateTrunc(b_.CreateLShr(uncovered, i), b_.getInt1Ty()), call, next);
    b_.SetInsertPoint(call);
    llvm::Value *in = b_.CreateLoad(b_.getFloatTy(), b_.CreateInBoundsGEP(b_.getFloatTy(), ins, i));
    b_.CreateStore(b_.CreateCall(library, {in}), b_.CreateInBoundsGEP(b_.getFloatTy(), outs, i));
    b_.CreateBr(next);
    b_.SetInsertPoint(next);
    llvm::Value *following = b_.CreateAdd(i, b_.getInt64(1));
    i->addIncoming(following, next);
    b_.CreateCondBr(b_.CreateICmpULT(following, b_.getInt64(lanes)), lane, patched);
    b_.SetInsertPoint(patched);
    llvm::Value *withLibrary = b_.CreateLoad(floats, outs);
    b_.CreateBr(done);
    b_.SetInsertPoint(done);
    llvm::PHINode *out = b_.CreatePHI(floats, 2);
    out->addIncoming(r, fast);
    out->addIncoming(withLibrary, patched);
    b_.CreateRet(out);
    lanes_ = 1;
  }

  /// Whether any lane of an i1 vector is false.
  llvm::Value *anyFalse(llvm::Value *mask) {
    unsigned lanes = llvm::cast<llvm::FixedVectorType>(mask->getType())->getNumElements();
    return b_.CreateICmpNE(b_.CreateBitCast(b_.CreateNot(mask), b_.getIntNTy(lanes)), b_.getIntN(lanes, 0));
  }

  /// gelu's tails (geluTail) into `wide` and `covered`, the series' value
  /// and lanes, for each group of 16 lanes in which any lane is not covered
  /// yet (about 2% of normally distributed lanes are not).
  void addGeluTails(llvm::Function &f, llvm::Value *x, llvm::Value *&wide, llvm::Value *&covered) {
    unsigned lanes = lanes_, group = std::min(lanes, 16u);
    for (unsigned first = 0; first < lanes; first += group) {
      auto part = [&](llvm::Value *v) { // lanes [first, first + group)
        if (group == lanes)
          return v;
        std::vector<int> indices(group);
        std::iota(indices.begin(), indices.end(), static_cast<int>(first));
        return b_.CreateShuffleVector(v, indices);
      };
      auto putBack = [&](llvm::Value *whole, llvm::Value *piece) {
        if (group == lanes)
          return piece;
        std::vector<int> widened(lanes, -1), indices(lanes);
        std::iota(widened.begin(), widened.begin() + group, 0);
        for (unsigned i = 0; i < lanes; ++i)
          indices[i] = static_cast<int>(i >= first && i < first + group ? lanes + i - first : i);
        return b_.CreateShuffleVector(whole, b_.CreateShuffleVector(piece, widened), indices);
      };
      llvm::Value *groupCovered = part(covered);
      llvm::BasicBlock *from = b_.GetInsertBlock();
      llvm::BasicBlock *tails = llvm::BasicBlock::Create(ctx_, "tails", &f);
      llvm::BasicBlock *merged = llvm::BasicBlock::Create(ctx_, "merged", &f);
      b_.CreateCondBr(anyFalse(groupCovered), tails, merged);
      b_.SetInsertPoint(tails);
      lanes_ = group;
      llvm::Value *tailCovered = nullptr;
      llvm::Value *tail = geluTail(part(x), tailCovered);
      lanes_ = lanes;
      llvm::Value *withTails = putBack(wide, select(groupCovered, part(wide), tail));
      llvm::Value *coveredWithTails = putBack(covered, b_.CreateOr(groupCovered, tailCovered));
      b_.CreateBr(merged);
      b_.SetInsertPoint(merged);
      llvm::PHINode *value = b_.CreatePHI(wide->getType(), 2), *mask = b_.CreatePHI(covered->getType(), 2);
      value->addIncoming(wide, from);
      value->addIncoming(withTails, tails);
      mask->addIncoming(covered, from);
      mask->addIncoming(coveredWithTails, tails);
      wide = value;
      covered = mask;
    }
  }

  /// geluF32's series branch (src/numerics/Math.cpp): for -2.12 <= x <= 3,
  /// Phi(x) = 1/2 + 1/2 erf(x / sqrt 2) by the library's terms of erf's
  /// Taylor series in t^2 (keel_gelu_f32_series).
  llvm::Value *geluSeries(llvm::Value *x, llvm::Value *&covered) {
    const double *coefficients = keel_gelu_f32_series();
    covered = b_.CreateAnd(b_.CreateFCmpOGE(x, c(-2.12)), b_.CreateFCmpOLE(x, c(3.0)));
    llvm::Value *t = mul(x, c(0x1.6a09e667f3bcdp-1)); // x / sqrt 2, as the library rounds it
    llvm::Value *u = mul(t, t), *p = c(coefficients[KEEL_GELU_F32_SERIES_TERMS - 1]);
    for (int n = KEEL_GELU_F32_SERIES_TERMS - 2; n >= 0; --n)
      p = add(c(coefficients[n]), mul(u, p));
    llvm::Value *erf = mul(c(0x1.20dd750429b6dp0), mul(t, p)); // 2 / sqrt(pi)
    return mul(x, add(c(0.5), mul(c(0.5), erf)));
  }

  /// geluF32's tails (src/numerics/Math.cpp) for 2.12 < |x| <= 8 outside
  /// the series range, where the library evaluates erfc(|x| / sqrt 2) by a
  /// continued fraction of 100 divisions: here exp(-x^2 / 2) G(|x|), with
  /// G(s) = exp(s^2 / 2) erfc(s / sqrt 2) one polynomial of degree 16 per
  /// interval (kGeluTail, from scripts/gelu_tail_fit.py: within 2^-52.6 of
  /// G in double). Both values lie within 2^-49 of the true gelu(x)
  /// (relative), so a lane is covered where this one is sure to round as
  /// the true value does (roundsSurely, 2^-46), and therefore as the
  /// library's does.
  llvm::Value *geluTail(llvm::Value *x, llvm::Value *&covered) {
    llvm::Value *magnitude = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value *inTail = b_.CreateAnd(b_.CreateOr(b_.CreateFCmpOLT(x, c(-2.12)), b_.CreateFCmpOGT(x, c(3.0))),
                                       b_.CreateFCmpOLE(magnitude, c(8.0)));
    // Other lanes (NaN too) compute at s = 3, so no lane is poison.
    llvm::Value *s = select(inTail, magnitude, c(3.0));
    llvm::Value *above = b_.CreateFCmpOGE(s, c(kGeluTail[1].from)), *far = b_.CreateFCmpOGE(s, c(kGeluTail[2].from));
    auto pick = [&](auto field) {
      return select(far, c(field(kGeluTail[2])), select(above, c(field(kGeluTail[1])), c(field(kGeluTail[0]))));
    };
    llvm::Value *y = sub(s, pick([](const GeluTailPiece &p) { return p.center; }));
    llvm::Value *g = pick([](const GeluTailPiece &p) { return p.coefficients[16]; });
    for (int k = 15; k >= 0; --k)
      g = add(pick([k](const GeluTailPiece &p) { return p.coefficients[k]; }), mul(y, g));
    llvm::Value *erfc = mul(expInRange(mul(b_.CreateFNeg(mul(s, s)), c(0.5))), g);
    llvm::Value *half = mul(c(0.5), erfc); // x < 0: x Phi(x); x > 0: x - x Phi(-x)
    llvm::Value *v = select(b_.CreateFCmpOLT(x, c(0.0)), mul(x, half), sub(x, mul(x, half)));
    covered = b_.CreateAnd(inTail, roundsSurely(v, 0x1p-46));
    return v;
  }

  /// siluF64 for -38 <= x (src/numerics/Math.cpp): x / (1 + exp(-x)) for
  /// x >= 0, x e / (1 + e) with e = exp(x) below; both exp(-|x|), clamped
  /// at -150 where 1 + e no longer changes (x >= 0) and below which no x
  /// is covered.
  llvm::Value *siluCommon(llvm::Value *x, llvm::Value *&covered) {
    covered = b_.CreateFCmpOGE(x, c(-38.0));
    llvm::Value *nonNegative = b_.CreateFCmpOGE(x, c(0.0));
    llvm::Value *a = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value *e = expInRange(clamp(b_.CreateFNeg(a), -150.0, 0.0));
    llvm::Value *denominator = add(c(1.0), e);
    return select(nonNegative, div(x, denominator), div(mul(x, e), denominator));
  }

  /// sin (sine) or cos of f32 lanes in double, within about 2^-50 of the
  /// true value (relative), for 0 < |x| < 2^20; covered where that value
  /// rounds to the correctly rounded f32 whatever its error (below 2^-46).
  /// |x| = k pi/2 + r by Cody and Waite's reduction: pi/2 = C1 + C2 + C3
  /// with C1 and C2 of 32 significant bits, so for k < 2^20 the products
  /// k C1 and k C2 are exact, and so is |x| - k C1 (a multiple of 2^-31
  /// below 1); r is then within 2^-53 relative, and 2^-98 absolute, of
  /// |x| - k pi/2, whose smallest magnitude over these f32 inputs is far
  /// above 2^-40. The kernels are the library's Taylor polynomials
  /// (sinPoly, cosPoly in src/numerics/Trig.cpp), accurate on |r| <= pi/4
  /// and a little beyond. MathKernelTest checks every f32 input.
  llvm::Value *trig(llvm::Value *x, bool sine, llvm::Value *&covered) {
    // Lanes outside the range (NaN too) reduce 0 instead, so that k always
    // converts to an integer (a poison lane would poison `covered`).
    llvm::Value *magnitude = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value *inRange = b_.CreateFCmpOLT(magnitude, c(0x1p20));
    llvm::Value *a = select(inRange, magnitude, c(0.0));
    llvm::Value *kd =
        select(b_.CreateFCmpOGT(a, c(0x1.921fb54442d18p-1)), nearest(mul(a, c(0x1.45f306dc9c883p-1))), c(0.0));
    llvm::Value *r = sub(sub(sub(a, mul(kd, c(0x1.921fb544p0))), mul(kd, c(0x1.0b4611a6p-34))),
                         mul(kd, c(0x1.3198a2e037073p-69)));
    // The quadrant q = k mod 4, plus one for cos (cos x = sin(x + pi/2)).
    llvm::Value *q = b_.CreateAdd(b_.CreateFPToSI(kd, int64s()), llvm::ConstantInt::get(int64s(), sine ? 0 : 1));
    llvm::Value *one = llvm::ConstantInt::get(int64s(), 1), *two = llvm::ConstantInt::get(int64s(), 2);
    llvm::Value *zero = llvm::ConstantInt::get(int64s(), 0);
    llvm::Value *v = select(b_.CreateICmpNE(b_.CreateAnd(q, one), zero), cosPoly(r), sinPoly(r));
    llvm::Value *flip = b_.CreateICmpNE(b_.CreateAnd(q, two), zero);
    if (sine)
      flip = b_.CreateXor(flip, b_.CreateFCmpOLT(x, c(0.0)));
    v = select(flip, b_.CreateFNeg(v), v);
    covered = b_.CreateAnd(inRange, roundsSurely(v, 0x1p-46));
    return v;
  }

  /// sinPoly and cosPoly of src/numerics/Trig.cpp: r + r z P(z) with P's
  /// terms (-1)^(i+1) / (2i+3)! for i <= 8, and 1 - z/2 + z^2 Q(z) with
  /// Q's (-1)^i / (2i+4)! (z = r^2; n! is exact in double for n <= 20).
  static double inverseFactorial(int n) {
    double f = 1;
    for (int i = 2; i <= n; ++i)
      f *= i;
    return 1.0 / f;
  }
  llvm::Value *taylor(llvm::Value *z, int first, double sign) {
    auto term = [&](int i) { return c((i % 2 ? -sign : sign) * inverseFactorial(first + 2 * i)); };
    llvm::Value *p = term(8);
    for (int i = 7; i >= 0; --i)
      p = add(term(i), mul(z, p));
    return p;
  }
  llvm::Value *sinPoly(llvm::Value *r) {
    llvm::Value *z = mul(r, r);
    return add(r, mul(mul(r, z), taylor(z, 3, -1.0)));
  }
  llvm::Value *cosPoly(llvm::Value *r) {
    llvm::Value *z = mul(r, r);
    return add(sub(c(1.0), mul(z, c(0.5))), mul(mul(z, z), taylor(z, 4, 1.0)));
  }

  /// Whether v, within `bound` of a true value (relative), rounds to the
  /// same f32 as that value: v's nearest f32 is a nonzero finite float and v
  /// lies farther than the bound from the midpoints on either side of it.
  llvm::Value *roundsSurely(llvm::Value *v, double bound) {
    llvm::Type *floats = ofLanes(b_.getFloatTy()), *int32s = ofLanes(b_.getInt32Ty());
    llvm::Value *a = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v);
    llvm::Value *f = b_.CreateFPTrunc(a, floats);
    llvm::Value *bits = b_.CreateBitCast(f, int32s);
    auto neighbour = [&](int step) {
      llvm::Value *n = b_.CreateAdd(bits, llvm::ConstantInt::get(int32s, static_cast<uint64_t>(step), true));
      return b_.CreateFPExt(b_.CreateBitCast(n, floats), doubles());
    };
    llvm::Value *fd = b_.CreateFPExt(f, doubles());
    llvm::Value *up = sub(neighbour(1), fd), *down = sub(fd, neighbour(-1));
    llvm::Value *diff = sub(a, fd), *margin = mul(a, c(bound));
    llvm::Value *clear = select(b_.CreateFCmpOGE(diff, c(0.0)), b_.CreateFCmpOLT(add(diff, margin), mul(up, c(0.5))),
                                b_.CreateFCmpOLT(sub(margin, diff), mul(down, c(0.5))));
    llvm::Value *finite = b_.CreateAnd(b_.CreateICmpNE(bits, llvm::ConstantInt::get(int32s, 0)),
                                       b_.CreateICmpULT(bits, llvm::ConstantInt::get(int32s, 0x7F800000)));
    return b_.CreateAnd(finite, clear);
  }

  /// The double type of the kernel being emitted: scalar, or `lanes_` lanes.
  llvm::Type *ofLanes(llvm::Type *t) { return lanes_ == 1 ? t : llvm::FixedVectorType::get(t, lanes_); }
  llvm::Type *doubles() { return ofLanes(b_.getDoubleTy()); }
  llvm::Type *int64s() { return ofLanes(b_.getInt64Ty()); }

  llvm::Value *c(double v) { return llvm::ConstantFP::get(doubles(), v); }
  llvm::Value *add(llvm::Value *a, llvm::Value *b) { return b_.CreateFAdd(a, b); }
  llvm::Value *sub(llvm::Value *a, llvm::Value *b) { return b_.CreateFSub(a, b); }
  llvm::Value *mul(llvm::Value *a, llvm::Value *b) { return b_.CreateFMul(a, b); }
  llvm::Value *div(llvm::Value *a, llvm::Value *b) { return b_.CreateFDiv(a, b); }
  llvm::Value *select(llvm::Value *c, llvm::Value *a, llvm::Value *b) { return b_.CreateSelect(c, a, b); }
  llvm::Value *clamp(llvm::Value *x, double lo, double hi) {
    llvm::Value *low = select(b_.CreateFCmpOLT(x, c(lo)), c(lo), x);
    return select(b_.CreateFCmpOGT(low, c(hi)), c(hi), low);
  }

  /// nearestInteger: the 1.5 * 2^52 trick.
  llvm::Value *nearest(llvm::Value *v) { return sub(add(v, c(0x1.8p52)), c(0x1.8p52)); }
  /// 2^k for an integral double kd in the normal range.
  llvm::Value *pow2(llvm::Value *kd) {
    llvm::Value *k = b_.CreateFPToSI(kd, int64s());
    return b_.CreateBitCast(b_.CreateShl(b_.CreateAdd(k, llvm::ConstantInt::get(int64s(), 1023)), 52), doubles());
  }
  /// expm1Kernel: Taylor to r^14 by Horner.
  llvm::Value *expm1Kernel(llvm::Value *r) {
    static const double coefficients[] = {1.0 / 2,       1.0 / 6,         1.0 / 24,        1.0 / 120,
                                          1.0 / 720,     1.0 / 5040,      1.0 / 40320,     1.0 / 362880,
                                          1.0 / 3628800, 1.0 / 39916800,  1.0 / 479001600, 1.0 / 6227020800,
                                          1.0 / 87178291200.0};
    llvm::Value *q = c(coefficients[12]);
    for (int i = 11; i >= 0; --i)
      q = add(c(coefficients[i]), mul(r, q));
    return add(r, mul(mul(r, r), q));
  }
  static constexpr double kLn2Hi = 0x1.62e42fee00000p-1, kLn2Lo = 0x1.a39ef35793c76p-33,
                          kInvLn2 = 0x1.71547652b82fep0;

  /// expTail(x, 0) for x in [-150, 100]: scale() multiplies by 2^k once.
  llvm::Value *expInRange(llvm::Value *x) {
    llvm::Value *kd = nearest(mul(x, c(kInvLn2)));
    llvm::Value *rh = sub(x, mul(kd, c(kLn2Hi)));
    llvm::Value *t = sub(c(0.0), mul(kd, c(kLn2Lo)));
    llvm::Value *s = add(rh, t), *bb = sub(s, rh);
    llvm::Value *err = add(sub(rh, sub(s, bb)), sub(t, bb));
    llvm::Value *p = expm1Kernel(s);
    llvm::Value *y = add(c(1.0), add(p, mul(err, add(c(1.0), p))));
    return mul(y, pow2(kd));
  }
  llvm::Value *isNaN(llvm::Value *x) { return b_.CreateFCmpUNO(x, x); }

  llvm::Value *exp(llvm::Value *x) { return select(isNaN(x), add(x, x), expInRange(clamp(x, -150.0, 100.0))); }

  /// keel_tanh_f32 (tanhF32 in src/numerics/Math.cpp), its branches
  /// selected: a clamped to [2^-28, 9.1] where the library would not use
  /// the value.
  llvm::Value *tanh(llvm::Value *x) {
    static const double shortCoefficients[] = {1.0 / 2,    1.0 / 6,     1.0 / 24,     1.0 / 120,     1.0 / 720,
                                               1.0 / 5040, 1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800};
    llvm::Value *a = b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, x);
    llvm::Value *x2 = mul(c(2.0), clamp(a, 0x1p-28, 9.1));
    llvm::Value *kd = select(b_.CreateFCmpOLT(x2, c(0.3465)), c(0.0), nearest(mul(x2, c(kInvLn2))));
    llvm::Value *rh = sub(x2, mul(kd, c(kLn2Hi))), *rl = mul(kd, c(kLn2Lo));
    llvm::Value *r = sub(rh, rl);
    llvm::Value *correction = sub(sub(rh, r), rl);
    llvm::Value *q = c(shortCoefficients[9]);
    for (int i = 8; i >= 0; --i)
      q = add(c(shortCoefficients[i]), mul(r, q));
    llvm::Value *e = add(r, mul(mul(r, r), q));
    e = add(e, mul(correction, add(c(1.0), e)));
    llvm::Value *p2 = pow2(kd);
    e = add(mul(e, p2), sub(p2, c(1.0)));
    llvm::Value *atLeastOne = b_.CreateFCmpOGE(a, c(1.0));
    llvm::Value *ratio = div(select(atLeastOne, c(2.0), e), add(e, c(2.0)));
    llvm::Value *t = select(b_.CreateFCmpOLT(a, c(9.1)), select(atLeastOne, sub(c(1.0), ratio), ratio), c(1.0));
    llvm::Value *negative = b_.CreateICmpSLT(b_.CreateBitCast(x, b_.getInt64Ty()), b_.getInt64(0));
    llvm::Value *signed_ = select(negative, b_.CreateFNeg(t), t);
    llvm::Value *tiny = b_.CreateFCmpOLT(a, c(0x1p-28));
    return select(isNaN(x), add(x, x), select(tiny, x, signed_));
  }

  llvm::Value *sigmoid(llvm::Value *x) {
    llvm::Value *nonNegative = b_.CreateFCmpOGE(x, c(0.0));
    // x >= 0: 1 / (1 + exp(-x)); x < 0: exp(x) / (1 + exp(x)).
    llvm::Value *e = expInRange(clamp(select(nonNegative, b_.CreateFNeg(x), x), -150.0, 100.0));
    llvm::Value *positive = div(c(1.0), add(c(1.0), e));
    llvm::Value *negative = div(e, add(c(1.0), e));
    return select(isNaN(x), add(x, x), select(nonNegative, positive, negative));
  }

  llvm::LLVMContext &ctx_;
  llvm::Module &m_;
  llvm::IRBuilder<> b_;
  unsigned lanes_ = 1;
};

class Emitter {
public:
  /// `defines`: the indices of the functions to define (null: all); the
  /// others are declared, for a module compiled apart from them.
  Emitter(llvm::LLVMContext &ctx, llvm::Module &m, const loop::Module &lm, const std::vector<size_t> *defines = nullptr)
      : ctx_(ctx), m_(m), lm_(lm), defines_(defines), b_(ctx), kernels_(ctx, m) {}

  /// What the code generator met and cannot translate (empty: nothing).
  const std::string &problem() const { return problem_; }

  void run() {
    for (const std::vector<uint8_t> &bytes : lm_.constants) {
      auto *init = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint8_t>(bytes));
      auto *g = new llvm::GlobalVariable(m_, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init,
                                         "keel.const");
      g->setAlignment(llvm::Align(64));
      constants_.push_back(g);
    }
    // Fresh tensor memory aliases nothing else (what lets LLVM keep a tile
    // of results in registers).
    llvm::Function *alloc = llvm::cast<llvm::Function>(
        helper("keel_rt_alloc", b_.getPtrTy(), {b_.getInt64Ty(), b_.getPtrTy(), b_.getInt32Ty(), b_.getInt32Ty()})
            .getCallee());
    alloc->addRetAttr(llvm::Attribute::NoAlias);
    for (const loop::Function &f : lm_.functions)
      declare(f);
    if (!defines_)
      for (const loop::Function &f : lm_.functions)
        define(f);
    else
      for (size_t i : *defines_)
        define(lm_.functions[i]);
  }

private:
  //===-- Types and helpers ------------------------------------------------===//
  llvm::Type *carrier(Type t) {
    switch (t) {
    case Type::Void: return b_.getVoidTy();
    case Type::Bool: return b_.getInt1Ty();
    case Type::I4: // (not in verified loop IR: i4 is computed in i8)
    case Type::I8: case Type::U8: case Type::FP8E4M3FN: case Type::FP8E5M2: return b_.getInt8Ty();
    case Type::I16: case Type::U16: case Type::F16: case Type::BF16: return b_.getInt16Ty();
    case Type::I32: case Type::U32: return b_.getInt32Ty();
    case Type::I64: case Type::U64: return b_.getInt64Ty();
    case Type::TF32: case Type::F32: return b_.getFloatTy();
    case Type::F64: return b_.getDoubleTy();
    case Type::Ptr: return b_.getPtrTy();
    }
    return b_.getVoidTy();
  }

  llvm::FunctionCallee helper(const std::string &name, llvm::Type *result, std::vector<llvm::Type *> args) {
    return m_.getOrInsertFunction(name, llvm::FunctionType::get(result, args, false));
  }
  llvm::Value *callHelper(const std::string &name, llvm::Type *result, std::vector<llvm::Value *> args) {
    std::vector<llvm::Type *> types;
    for (llvm::Value *a : args)
      types.push_back(a->getType());
    return b_.CreateCall(helper(name, result, types), args);
  }

  static std::string userName(const std::string &name) { return "keel.fn." + name; }

  void declare(const loop::Function &f) {
    std::vector<llvm::Type *> params;
    for (size_t i = 0; i < f.params; ++i)
      params.push_back(carrier(f.slots[i]));
    llvm::Function::Create(llvm::FunctionType::get(carrier(f.result), params, false),
                           llvm::Function::ExternalLinkage, userName(f.name), m_);
  }

  //===-- Functions --------------------------------------------------------===//
  void define(const loop::Function &f) {
    fn_ = m_.getFunction(userName(f.name));
    lf_ = &f;
    llvm::BasicBlock *entry = llvm::BasicBlock::Create(ctx_, "entry", fn_);
    b_.SetInsertPoint(entry);
    slots_.clear();
    for (Type t : f.slots)
      slots_.push_back(b_.CreateAlloca(carrier(t)));
    size_t i = 0;
    for (llvm::Argument &a : fn_->args())
      b_.CreateStore(&a, slots_[i++]);
    if (f.checksStack) {
      // Every call takes a frame, so that recursion without end always ends
      // at the guard: LLVM may not turn a recursive call into a loop.
      fn_->addFnAttr("disable-tail-calls", "true");
      checkStack(f);
    }
    loops_.clear();
    block(f.body);
    if (!b_.GetInsertBlock()->getTerminator()) {
      if (f.result == Type::Void) {
        b_.CreateRetVoid();
      } else { // the checker proved every path returns: reaching here is a bug
        b_.CreateCall(helper("keel_rt_internal_error", b_.getVoidTy(), {b_.getPtrTy()}),
                      {b_.CreateGlobalString("a function ended without returning its value")});
        b_.CreateUnreachable();
      }
    }
  }

  /// Stops the program when this frame lies below keel_rt_stack_limit
  /// (stacks grow down): deep recursion ends with a message, not SIGSEGV.
  void checkStack(const loop::Function &f) {
    llvm::GlobalVariable *limit = m_.getGlobalVariable("keel_rt_stack_limit");
    if (!limit)
      limit = new llvm::GlobalVariable(m_, b_.getInt64Ty(), false, llvm::GlobalValue::ExternalLinkage, nullptr,
                                       "keel_rt_stack_limit");
    llvm::Value *frame = b_.CreateIntrinsic(llvm::Intrinsic::frameaddress, {b_.getPtrTy()}, {b_.getInt32(0)});
    llvm::Value *low = b_.CreateICmpULT(b_.CreatePtrToInt(frame, b_.getInt64Ty()), b_.CreateLoad(b_.getInt64Ty(), limit));
    llvm::BasicBlock *fail = llvm::BasicBlock::Create(ctx_, "stack.overflow", fn_);
    llvm::BasicBlock *ok = llvm::BasicBlock::Create(ctx_, "stack.ok", fn_);
    b_.CreateCondBr(low, fail, ok);
    b_.SetInsertPoint(fail);
    callHelper("keel_rt_stack_overflow", b_.getVoidTy(),
               {b_.CreateGlobalString(f.name.rfind("test.", 0) == 0 ? "a test" : f.name),
                b_.CreateGlobalString(f.loc.file), b_.getInt32(f.loc.line), b_.getInt32(f.loc.column)});
    b_.CreateUnreachable();
    b_.SetInsertPoint(ok);
  }

  /// After a terminator, later statements go to a fresh (unreachable) block.
  void ensureOpen() {
    if (b_.GetInsertBlock()->getTerminator())
      b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "dead", fn_));
  }

  void block(const std::vector<loop::StmtPtr> &body) {
    for (const loop::StmtPtr &s : body) {
      ensureOpen();
      stmt(*s);
    }
  }

  struct LoopTargets {
    llvm::BasicBlock *continueTo, *breakTo;
  };

  void stmt(const loop::Stmt &s) {
    switch (s.kind) {
    case loop::Stmt::Kind::Assign:
      b_.CreateStore(expr(*s.value), slots_[s.slot]);
      return;
    case loop::Stmt::Kind::If: {
      llvm::BasicBlock *then = llvm::BasicBlock::Create(ctx_, "then", fn_);
      llvm::BasicBlock *otherwise = llvm::BasicBlock::Create(ctx_, "else", fn_);
      llvm::BasicBlock *join = llvm::BasicBlock::Create(ctx_, "endif", fn_);
      b_.CreateCondBr(expr(*s.value), then, otherwise);
      b_.SetInsertPoint(then);
      block(s.body);
      if (!b_.GetInsertBlock()->getTerminator())
        b_.CreateBr(join);
      b_.SetInsertPoint(otherwise);
      block(s.orElse);
      if (!b_.GetInsertBlock()->getTerminator())
        b_.CreateBr(join);
      b_.SetInsertPoint(join);
      return;
    }
    case loop::Stmt::Kind::For:
      if (s.parallel)
        parallelFor(s);
      else
        serialFor(s.slot, expr(*s.from), expr(*s.to), s.body);
      return;
    case loop::Stmt::Kind::Loop: {
      llvm::BasicBlock *bodyBlock = llvm::BasicBlock::Create(ctx_, "loop", fn_);
      llvm::BasicBlock *exit = llvm::BasicBlock::Create(ctx_, "loop.end", fn_);
      b_.CreateBr(bodyBlock);
      b_.SetInsertPoint(bodyBlock);
      loops_.push_back({bodyBlock, exit});
      block(s.body);
      loops_.pop_back();
      if (!b_.GetInsertBlock()->getTerminator())
        b_.CreateBr(bodyBlock);
      b_.SetInsertPoint(exit);
      return;
    }
    case loop::Stmt::Kind::Break: b_.CreateBr(loops_.back().breakTo); return;
    case loop::Stmt::Kind::Continue: b_.CreateBr(loops_.back().continueTo); return;
    case loop::Stmt::Kind::Return:
      if (s.value)
        b_.CreateRet(expr(*s.value));
      else
        b_.CreateRetVoid();
      return;
    case loop::Stmt::Kind::Eval: expr(*s.value); return;
    case loop::Stmt::Kind::Store: {
      llvm::Value *value = expr(*s.value), *index = expr(*s.index);
      llvm::Value *base = b_.CreateLoad(b_.getPtrTy(), slots_[s.slot]);
      b_.CreateStore(value, b_.CreateGEP(carrier(s.value->type), base, index));
      return;
    }
    case loop::Stmt::Kind::CheckIndex: {
      // One unsigned comparison covers negative indices too.
      llvm::Value *index = expr(*s.value);
      llvm::BasicBlock *fail = llvm::BasicBlock::Create(ctx_, "index.fail", fn_);
      llvm::BasicBlock *ok = llvm::BasicBlock::Create(ctx_, "index.ok", fn_);
      b_.CreateCondBr(b_.CreateICmpULT(index, b_.getInt64(static_cast<uint64_t>(s.extent))), ok, fail);
      b_.SetInsertPoint(fail);
      callHelper("keel_rt_index_error", b_.getVoidTy(),
                 {index, b_.getInt64(static_cast<uint64_t>(s.extent)), b_.getInt64(static_cast<uint64_t>(s.axis)),
                  b_.CreateGlobalString(s.loc.file), b_.getInt32(s.loc.line), b_.getInt32(s.loc.column),
                  b_.getInt8(s.unsignedIndex)});
      b_.CreateUnreachable();
      b_.SetInsertPoint(ok);
      return;
    }
    case loop::Stmt::Kind::Free:
      callHelper("keel_rt_free", b_.getVoidTy(), {b_.CreateLoad(b_.getPtrTy(), slots_[s.slot])});
      return;
    case loop::Stmt::Kind::Print:
      text(s.text);
      b_.CreateCall(helper("keel_rt_print_end", b_.getVoidTy(), {}));
      return;
    case loop::Stmt::Kind::Assert: {
      llvm::BasicBlock *fail = llvm::BasicBlock::Create(ctx_, "assert.fail", fn_);
      llvm::BasicBlock *ok = llvm::BasicBlock::Create(ctx_, "assert.ok", fn_);
      b_.CreateCondBr(expr(*s.value), ok, fail);
      b_.SetInsertPoint(fail);
      b_.CreateCall(helper("keel_rt_assert_begin", b_.getVoidTy(), {b_.getPtrTy(), b_.getInt32Ty(), b_.getInt32Ty(), b_.getInt8Ty()}),
                    {b_.CreateGlobalString(s.loc.file), b_.getInt32(s.loc.line), b_.getInt32(s.loc.column),
                     b_.getInt8(s.text.empty() ? 0 : 1)});
      text(s.text);
      b_.CreateCall(helper("keel_rt_assert_fail", b_.getVoidTy(), {}));
      b_.CreateUnreachable();
      b_.SetInsertPoint(ok);
      return;
    }
    }
  }

  /// slot = from; while (slot < to) { body; slot += 1 }, `to` evaluated once.
  void serialFor(loop::Slot slot, llvm::Value *from, llvm::Value *to, const std::vector<loop::StmtPtr> &body) {
    Type t = lf_->slots[slot];
    b_.CreateStore(from, slots_[slot]);
    llvm::BasicBlock *head = llvm::BasicBlock::Create(ctx_, "for.head", fn_);
    llvm::BasicBlock *bodyBlock = llvm::BasicBlock::Create(ctx_, "for.body", fn_);
    llvm::BasicBlock *latch = llvm::BasicBlock::Create(ctx_, "for.next", fn_);
    llvm::BasicBlock *exit = llvm::BasicBlock::Create(ctx_, "for.end", fn_);
    b_.CreateBr(head);
    b_.SetInsertPoint(head);
    llvm::Value *i = b_.CreateLoad(carrier(t), slots_[slot]);
    b_.CreateCondBr(loop::isSignedType(t) ? b_.CreateICmpSLT(i, to) : b_.CreateICmpULT(i, to), bodyBlock, exit);
    b_.SetInsertPoint(bodyBlock);
    loops_.push_back({latch, exit});
    unsigned kernelCallsBefore = kernelCalls_;
    block(body);
    bool hint = kernelCalls_ > kernelCallsBefore && onlyStores(body);
    loops_.pop_back();
    if (!b_.GetInsertBlock()->getTerminator())
      b_.CreateBr(latch);
    b_.SetInsertPoint(latch);
    llvm::Value *current = b_.CreateLoad(carrier(t), slots_[slot]);
    b_.CreateStore(b_.CreateAdd(current, llvm::ConstantInt::get(carrier(t), 1)), slots_[slot]);
    llvm::BranchInst *back = b_.CreateBr(head);
    if (hint)
      vectorizeWide(back);
    b_.SetInsertPoint(exit);
  }

  /// Whether a loop body only stores (no assignment, no inner loop): each
  /// iteration independent of the others, nothing carried from one to the
  /// next that vectorizing could reorder.
  static bool onlyStores(const std::vector<loop::StmtPtr> &body) {
    for (const loop::StmtPtr &s : body)
      if (s->kind != loop::Stmt::Kind::Store)
        return false;
    return true;
  }

  /// Asks the loop vectorizer to vectorize the loop of `latch` at
  /// F32Kernels::wideLanes() lanes: a loop over F32Kernels' functions
  /// spends its time in their polynomials, chains of dependent operations
  /// in f64, which LLVM's own choice (one register of f32 lanes) leaves
  /// waiting on each other; several registers' worth of lanes at once run
  /// side by side (on one AVX-512 core: W1's tanh 51.4 to 28.0 ms, gelu's
  /// series on 4M f32 14.9 to 7.8 ms). Only for loops of independent
  /// stores (onlyStores):
  /// the hint also lets LLVM reassociate a floating-point reduction, which
  /// would change results. LLVM's own -force-vector-width (tests) wins.
  void vectorizeWide(llvm::BranchInst *latch) {
    if (llvm::VectorizerParams::VectorizationFactor != 0)
      return;
    llvm::Metadata *width[] = {llvm::MDString::get(ctx_, "llvm.loop.vectorize.width"),
                               llvm::ConstantAsMetadata::get(b_.getInt32(F32Kernels::wideLanes()))};
    llvm::Metadata *parts[] = {nullptr, llvm::MDNode::get(ctx_, width)};
    llvm::MDNode *id = llvm::MDNode::getDistinct(ctx_, parts);
    id->replaceOperandWith(0, id);
    latch->setMetadata(llvm::LLVMContext::MD_loop, id);
  }

  /// The slots a loop body reads (variables, the buffers it stores to and
  /// frees) and those it assigns (its loops' counters included).
  static void slotsOf(const std::vector<loop::StmtPtr> &body, std::set<loop::Slot> &reads,
                      std::set<loop::Slot> &assigns) {
    std::function<void(const loop::Expr &)> walk = [&](const loop::Expr &e) {
      if (e.kind == loop::Expr::Kind::Var)
        reads.insert(e.slot);
      for (const loop::ExprPtr &o : e.operands)
        walk(*o);
    };
    for (const loop::StmtPtr &s : body) {
      switch (s->kind) {
      case loop::Stmt::Kind::Assign: case loop::Stmt::Kind::For: assigns.insert(s->slot); break;
      case loop::Stmt::Kind::Store: case loop::Stmt::Kind::Free: reads.insert(s->slot); break;
      case loop::Stmt::Kind::If: case loop::Stmt::Kind::Loop: case loop::Stmt::Kind::Break:
      case loop::Stmt::Kind::Continue: case loop::Stmt::Kind::Return: case loop::Stmt::Kind::Eval:
      case loop::Stmt::Kind::Print: case loop::Stmt::Kind::Assert: case loop::Stmt::Kind::CheckIndex:
        break;
      }
      for (const loop::ExprPtr *e : {&s->value, &s->from, &s->to, &s->index})
        if (*e)
          walk(**e);
      for (const loop::TextPart &p : s->text)
        if (p.value)
          walk(*p.value);
      slotsOf(s->body, reads, assigns);
      slotsOf(s->orElse, reads, assigns);
    }
  }

  /// A parallel `for`: its body becomes a function of (begin, end, the
  /// slots the body reads but does not assign) that runs the iterations
  /// begin .. end-1 in order; the verifier keeps the slots it assigns
  /// private, so each call has its own. keel_rt_parallel_for hands each
  /// thread one contiguous range through a wrapper of (context, begin,
  /// end) that unpacks the read slots from a context block. The body takes
  /// them as parameters, not loaded from memory, so that LLVM sees buffers
  /// as it does in the function they come from (a tile of fresh memory
  /// stays in registers: it cannot alias a parameter).
  void parallelFor(const loop::Stmt &s) {
    std::set<loop::Slot> reads, assigns{s.slot};
    slotsOf(s.body, reads, assigns);
    std::vector<loop::Slot> captured;
    std::vector<llvm::Type *> fields;
    for (loop::Slot r : reads)
      if (!assigns.count(r)) {
        captured.push_back(r);
        fields.push_back(carrier(lf_->slots[r]));
      }
    llvm::StructType *contextType = llvm::StructType::get(ctx_, fields);
    llvm::Value *from = expr(*s.from), *to = expr(*s.to);
    llvm::IRBuilder<> atEntry(&fn_->getEntryBlock(), fn_->getEntryBlock().begin());
    llvm::Value *context = atEntry.CreateAlloca(contextType);
    for (size_t i = 0; i < captured.size(); ++i)
      b_.CreateStore(b_.CreateLoad(fields[i], slots_[captured[i]]), b_.CreateStructGEP(contextType, context, static_cast<unsigned>(i)));

    llvm::Function *outer = fn_;
    std::vector<llvm::AllocaInst *> outerSlots = std::move(slots_);
    std::vector<LoopTargets> outerLoops = std::move(loops_);
    llvm::IRBuilderBase::InsertPoint resume = b_.saveIP();
    std::vector<llvm::Type *> params{b_.getInt64Ty(), b_.getInt64Ty()};
    params.insert(params.end(), fields.begin(), fields.end());
    fn_ = llvm::Function::Create(llvm::FunctionType::get(b_.getVoidTy(), params, false),
                                 llvm::Function::InternalLinkage, outer->getName() + ".parallel.body", m_);
    fn_->addFnAttr(llvm::Attribute::NoInline);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", fn_));
    slots_.clear();
    loops_.clear();
    for (Type t : lf_->slots)
      slots_.push_back(b_.CreateAlloca(carrier(t)));
    for (size_t i = 0; i < captured.size(); ++i)
      b_.CreateStore(fn_->getArg(static_cast<unsigned>(i + 2)), slots_[captured[i]]);
    serialFor(s.slot, fn_->getArg(0), fn_->getArg(1), s.body);
    b_.CreateRetVoid();
    llvm::Function *body = fn_;

    llvm::Function *wrapper = llvm::Function::Create(
        llvm::FunctionType::get(b_.getVoidTy(), {b_.getPtrTy(), b_.getInt64Ty(), b_.getInt64Ty()}, false),
        llvm::Function::InternalLinkage, outer->getName() + ".parallel", m_);
    b_.SetInsertPoint(llvm::BasicBlock::Create(ctx_, "entry", wrapper));
    std::vector<llvm::Value *> args{wrapper->getArg(1), wrapper->getArg(2)};
    for (size_t i = 0; i < captured.size(); ++i)
      args.push_back(b_.CreateLoad(fields[i], b_.CreateStructGEP(contextType, wrapper->getArg(0), static_cast<unsigned>(i))));
    b_.CreateCall(body, args);
    b_.CreateRetVoid();

    fn_ = outer;
    slots_ = std::move(outerSlots);
    loops_ = std::move(outerLoops);
    b_.restoreIP(resume);
    callHelper("keel_rt_parallel_for", b_.getVoidTy(), {wrapper, context, from, to});
  }

  void text(const std::vector<loop::TextPart> &parts) {
    for (const loop::TextPart &p : parts) {
      if (!p.value) {
        if (!p.text.empty())
          b_.CreateCall(helper("keel_rt_print_text", b_.getVoidTy(), {b_.getPtrTy(), b_.getInt64Ty()}),
                        {b_.CreateGlobalString(p.text), b_.getInt64(p.text.size())});
        continue;
      }
      llvm::Value *v = expr(*p.value);
      Type t = p.value->type;
      if (p.tensorDType >= 0) {
        std::vector<uint64_t> dims(p.shape.begin(), p.shape.end());
        auto *init = llvm::ConstantDataArray::get(ctx_, llvm::ArrayRef<uint64_t>(dims));
        auto *g = new llvm::GlobalVariable(m_, init->getType(), true, llvm::GlobalValue::PrivateLinkage, init,
                                           "keel.shape");
        callHelper("keel_rt_print_elements", b_.getVoidTy(),
                   {v, b_.getInt32(static_cast<uint32_t>(p.tensorDType)), b_.getInt32(static_cast<uint32_t>(p.shape.size())),
                    g});
        continue;
      }
      if (t == Type::Bool)
        callHelper("keel_rt_print_bool", b_.getVoidTy(), {b_.CreateZExt(v, b_.getInt8Ty())});
      else if (loop::isIntegerType(t))
        callHelper(loop::isSignedType(t) ? "keel_rt_print_i64" : "keel_rt_print_u64", b_.getVoidTy(),
                   {loop::isSignedType(t) ? b_.CreateSExt(v, b_.getInt64Ty()) : b_.CreateZExt(v, b_.getInt64Ty())});
      else if (t == Type::F32)
        callHelper("keel_rt_print_f32", b_.getVoidTy(), {v});
      else if (t == Type::F64)
        callHelper("keel_rt_print_f64", b_.getVoidTy(), {v});
      else {
        llvm::Value *bits = t == Type::TF32 ? b_.CreateBitCast(v, b_.getInt32Ty()) : v;
        callHelper("keel_rt_print_lowp", b_.getVoidTy(), {b_.getInt32(static_cast<int>(*formatOf(t))), b_.CreateZExt(bits, b_.getInt64Ty())});
      }
    }
  }

  //===-- Expressions ------------------------------------------------------===//
  llvm::Value *expr(const loop::Expr &e) {
    switch (e.kind) {
    case loop::Expr::Kind::Const: {
      llvm::Type *c = carrier(e.type);
      if (c->isFloatTy())
        return llvm::ConstantFP::get(ctx_, llvm::APFloat(llvm::APFloat::IEEEsingle(), llvm::APInt(32, e.bits)));
      if (c->isDoubleTy())
        return llvm::ConstantFP::get(ctx_, llvm::APFloat(llvm::APFloat::IEEEdouble(), llvm::APInt(64, e.bits)));
      if (c->isPointerTy())
        return llvm::ConstantPointerNull::get(b_.getPtrTy());
      return llvm::ConstantInt::get(c, e.bits);
    }
    case loop::Expr::Kind::Var: return b_.CreateLoad(carrier(e.type), slots_[e.slot]);
    case loop::Expr::Kind::Unary: return unary(e);
    case loop::Expr::Kind::Binary: return binary(e);
    case loop::Expr::Kind::Compare: return compare(e);
    case loop::Expr::Kind::Cast: return cast(expr(*e.operands[0]), e.operands[0]->type, e.type);
    case loop::Expr::Kind::Load: {
      llvm::Value *base = expr(*e.operands[0]), *index = expr(*e.operands[1]);
      return b_.CreateLoad(carrier(e.type), b_.CreateGEP(carrier(e.type), base, index));
    }
    case loop::Expr::Kind::Select: {
      llvm::Value *c = expr(*e.operands[0]), *a = expr(*e.operands[1]), *b = expr(*e.operands[2]);
      return b_.CreateSelect(c, a, b);
    }
    case loop::Expr::Kind::Global: return constants_[e.bits];
    case loop::Expr::Kind::Runtime: {
      std::vector<llvm::Value *> args;
      for (const loop::ExprPtr &o : e.operands)
        args.push_back(expr(*o));
      return callHelper(e.callee, carrier(e.type), args);
    }
    case loop::Expr::Kind::Alloc:
      return callHelper("keel_rt_alloc", b_.getPtrTy(),
                        {expr(*e.operands[0]), b_.CreateGlobalString(e.loc.file), b_.getInt32(e.loc.line),
                         b_.getInt32(e.loc.column)});
    case loop::Expr::Kind::Call: {
      std::vector<llvm::Value *> args;
      for (const loop::ExprPtr &o : e.operands)
        args.push_back(expr(*o));
      return b_.CreateCall(m_.getFunction(userName(e.callee)), args);
    }
    }
    return nullptr;
  }

  llvm::Value *unary(const loop::Expr &e) {
    llvm::Value *v = expr(*e.operands[0]);
    Type t = e.type;
    switch (e.unary) {
    case loop::UnaryOp::Neg:
      if (loop::isIntegerType(t))
        return b_.CreateSub(llvm::ConstantInt::get(carrier(t), 0), v); // wraps: -MIN == MIN
      if (carrier(t)->isIntegerTy()) // f16, bf16, fp8 in integer carriers: the sign bit
        return b_.CreateXor(v, llvm::ConstantInt::get(carrier(t), llvm::APInt::getSignMask(loop::typeBits(t))));
      return b_.CreateFNeg(v);
    case loop::UnaryOp::Abs:
      if (loop::isIntegerType(t)) { // wrapping: abs(MIN) == MIN
        if (!loop::isSignedType(t))
          return v;
        llvm::Value *negative = b_.CreateICmpSLT(v, llvm::ConstantInt::get(carrier(t), 0));
        return b_.CreateSelect(negative, b_.CreateSub(llvm::ConstantInt::get(carrier(t), 0), v), v);
      }
      if (carrier(t)->isIntegerTy())
        return b_.CreateAnd(v, llvm::ConstantInt::get(carrier(t), ~llvm::APInt::getSignMask(loop::typeBits(t))));
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, v);
    case loop::UnaryOp::Not: return b_.CreateXor(v, llvm::ConstantInt::get(carrier(t), 1));
    case loop::UnaryOp::BitNot: return b_.CreateNot(v);
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary)                                           \
  case loop::UnaryOp::Enum:                                                                                 \
    return math(#name, v, t);
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
    }
    return v;
  }

  /// keel/numerics/Math.h's function NAME on f32 or f64. sqrt is the IEEE
  /// square root (exact rounding) and rsqrt 1 / sqrt in f64; on f32, exp,
  /// tanh and sigmoid are emitted inline and gelu, silu, sin and cos call
  /// the library with vector variants (F32Kernels above), so loops over
  /// them vectorize; the rest call the library.
  llvm::Value *math(const char *name, llvm::Value *v, Type t) {
    std::string n = name;
    if (n == "sqrt")
      return b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, v);
    if (n == "rsqrt") { // 1 / sqrt, in f64 for f32 (keel_rsqrt_f32)
      llvm::Value *d = t == Type::F32 ? b_.CreateFPExt(v, b_.getDoubleTy()) : v;
      llvm::Value *r = b_.CreateFDiv(llvm::ConstantFP::get(b_.getDoubleTy(), 1.0),
                                     b_.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, d));
      return t == Type::F32 ? b_.CreateFPTrunc(r, b_.getFloatTy()) : r;
    }
    if (t == Type::F32 && F32Kernels::isInline(n)) {
      ++kernelCalls_;
      return b_.CreateCall(kernels_.get(n), {v});
    }
    if (t == Type::F32 && F32Kernels::hasVariants(n)) {
      llvm::AttributeList attributes;
      llvm::Function *library = kernels_.call(n, attributes);
      llvm::CallInst *call = b_.CreateCall(library, {v});
      call->setAttributes(attributes);
      ++kernelCalls_;
      return call;
    }
    return callHelper("keel_" + n + (t == Type::F32 ? "_f32" : "_f64"), carrier(t), {v});
  }

  llvm::Value *binary(const loop::Expr &e) {
    using Op = loop::BinaryOp;
    if (e.binary == Op::LogicalAnd || e.binary == Op::LogicalOr) {
      // Short-circuit: the right operand only when it decides.
      llvm::Value *l = expr(*e.operands[0]);
      llvm::BasicBlock *from = b_.GetInsertBlock();
      llvm::BasicBlock *right = llvm::BasicBlock::Create(ctx_, "rhs", fn_);
      llvm::BasicBlock *join = llvm::BasicBlock::Create(ctx_, "join", fn_);
      if (e.binary == Op::LogicalAnd)
        b_.CreateCondBr(l, right, join);
      else
        b_.CreateCondBr(l, join, right);
      b_.SetInsertPoint(right);
      llvm::Value *r = expr(*e.operands[1]);
      llvm::BasicBlock *rightEnd = b_.GetInsertBlock();
      b_.CreateBr(join);
      b_.SetInsertPoint(join);
      llvm::PHINode *phi = b_.CreatePHI(b_.getInt1Ty(), 2);
      phi->addIncoming(b_.getInt1(e.binary == Op::LogicalOr), from);
      phi->addIncoming(r, rightEnd);
      return phi;
    }
    llvm::Value *l = expr(*e.operands[0]), *r = expr(*e.operands[1]);
    Type t = e.type;
    if (isLowPrecision(t)) {
      static const char *names[] = {"add", "sub", "mul", "div"};
      return callHelper("keel_" + formatName(t) + "_" + names[static_cast<int>(e.binary)], carrier(t), {l, r});
    }
    if (t == Type::F32 || t == Type::F64) {
      switch (e.binary) {
      case Op::Add: return b_.CreateFAdd(l, r);
      case Op::Sub: return b_.CreateFSub(l, r);
      case Op::Mul: return b_.CreateFMul(l, r);
      case Op::Div: return b_.CreateFDiv(l, r);
      case Op::Pow: return callHelper(t == Type::F32 ? "keel_pow_f32" : "keel_pow_f64", carrier(t), {l, r});
      case Op::Min: case Op::Max: return minMax(e.binary == Op::Max, l, r, t);
      case Op::Rem: return b_.CreateFRem(l, r); // fmod
      case Op::And: case Op::Or: case Op::Xor: case Op::LogicalAnd: case Op::LogicalOr:
        return cannot("a float `" + std::string(loop::binaryName(e.binary)) + "`", t);
      }
      return cannot("an unknown binary operation", t);
    }
    bool isSigned = loop::isSignedType(t);
    llvm::Type *c = carrier(t);
    switch (e.binary) {
    case Op::Add: return b_.CreateAdd(l, r);
    case Op::Sub: return b_.CreateSub(l, r);
    case Op::Mul: return b_.CreateMul(l, r);
    case Op::And: return b_.CreateAnd(l, r);
    case Op::Or: return b_.CreateOr(l, r);
    case Op::Xor: return b_.CreateXor(l, r);
    case Op::Min: return b_.CreateSelect(isSigned ? b_.CreateICmpSLT(r, l) : b_.CreateICmpULT(r, l), r, l);
    case Op::Max: return b_.CreateSelect(isSigned ? b_.CreateICmpSGT(r, l) : b_.CreateICmpUGT(r, l), r, l);
    case Op::Div:
    case Op::Rem: {
      // x / 0 = 0 and x % 0 = x; MIN / -1 = MIN and MIN % -1 = 0.
      llvm::Value *zero = llvm::ConstantInt::get(c, 0), *one = llvm::ConstantInt::get(c, 1);
      llvm::Value *byZero = b_.CreateICmpEQ(r, zero);
      llvm::Value *overflow = b_.getInt1(false);
      if (isSigned)
        overflow = b_.CreateAnd(b_.CreateICmpEQ(l, llvm::ConstantInt::get(c, llvm::APInt::getSignedMinValue(loop::typeBits(t)))),
                                b_.CreateICmpEQ(r, llvm::ConstantInt::getSigned(c, -1)));
      llvm::Value *safe = b_.CreateSelect(b_.CreateOr(byZero, overflow), one, r);
      if (e.binary == Op::Div) {
        llvm::Value *q = isSigned ? b_.CreateSDiv(l, safe) : b_.CreateUDiv(l, safe);
        return b_.CreateSelect(byZero, zero, b_.CreateSelect(overflow, l, q));
      }
      llvm::Value *rem = isSigned ? b_.CreateSRem(l, safe) : b_.CreateURem(l, safe);
      return b_.CreateSelect(byZero, l, b_.CreateSelect(overflow, zero, rem));
    }
    case Op::Pow: case Op::LogicalAnd: case Op::LogicalOr:
      return cannot("an integer `" + std::string(loop::binaryName(e.binary)) + "`", t);
    }
    return cannot("an unknown binary operation", t);
  }

  /// IEEE 754-2019 maximum / minimum: a NaN operand is the result (the
  /// first NaN, payload kept), -0 < +0, otherwise the larger / smaller.
  llvm::Value *minMax(bool max, llvm::Value *l, llvm::Value *r, Type t) {
    llvm::Type *bitsType = b_.getIntNTy(loop::typeBits(t));
    llvm::Value *lNaN = b_.CreateFCmpUNO(l, l), *rNaN = b_.CreateFCmpUNO(r, r);
    llvm::Value *lWins = max ? b_.CreateFCmpOGT(l, r) : b_.CreateFCmpOLT(l, r);
    // Equal (zeros of either sign included): max takes the one without a sign bit.
    llvm::Value *lSign = b_.CreateICmpSLT(b_.CreateBitCast(l, bitsType), llvm::ConstantInt::get(bitsType, 0));
    llvm::Value *tie = b_.CreateFCmpOEQ(l, r);
    llvm::Value *tieL = max ? b_.CreateNot(lSign) : lSign;
    llvm::Value *pick = b_.CreateSelect(tie, b_.CreateSelect(tieL, l, r), b_.CreateSelect(lWins, l, r));
    return b_.CreateSelect(lNaN, l, b_.CreateSelect(rNaN, r, pick));
  }

  llvm::Value *compare(const loop::Expr &e) {
    using C = loop::CompareOp;
    Type t = e.operands[0]->type;
    llvm::Value *l = expr(*e.operands[0]), *r = expr(*e.operands[1]);
    if (isLowPrecision(t)) { // exact in f32
      l = cast(l, t, Type::F32);
      r = cast(r, t, Type::F32);
      t = Type::F32;
    }
    if (t == Type::F32 || t == Type::F64) {
      switch (e.compare) {
      case C::Eq: return b_.CreateFCmpOEQ(l, r);
      case C::Ne: return b_.CreateFCmpUNE(l, r);
      case C::Lt: return b_.CreateFCmpOLT(l, r);
      case C::Le: return b_.CreateFCmpOLE(l, r);
      case C::Gt: return b_.CreateFCmpOGT(l, r);
      case C::Ge: return b_.CreateFCmpOGE(l, r);
      }
    }
    bool s = loop::isSignedType(t);
    switch (e.compare) {
    case C::Eq: return b_.CreateICmpEQ(l, r);
    case C::Ne: return b_.CreateICmpNE(l, r);
    case C::Lt: return s ? b_.CreateICmpSLT(l, r) : b_.CreateICmpULT(l, r);
    case C::Le: return s ? b_.CreateICmpSLE(l, r) : b_.CreateICmpULE(l, r);
    case C::Gt: return s ? b_.CreateICmpSGT(l, r) : b_.CreateICmpUGT(l, r);
    case C::Ge: return s ? b_.CreateICmpSGE(l, r) : b_.CreateICmpUGE(l, r);
    }
    return nullptr;
  }

  /// Every conversion the checker allows, each with one rounding.
  llvm::Value *cast(llvm::Value *v, Type from, Type to) {
    if (from == to)
      return v;
    llvm::Type *dst = carrier(to);
    bool fromInt = loop::isIntegerType(from) || from == Type::Bool;
    if (fromInt && loop::isIntegerType(to))
      return loop::isSignedType(from) ? b_.CreateSExtOrTrunc(v, dst) : b_.CreateZExtOrTrunc(v, dst);
    if (fromInt) { // to a float
      if (to == Type::F32 || to == Type::F64)
        return loop::isSignedType(from) ? b_.CreateSIToFP(v, dst) : b_.CreateUIToFP(v, dst);
      bool s = loop::isSignedType(from);
      llvm::Value *wide = s ? b_.CreateSExt(v, b_.getInt64Ty()) : b_.CreateZExt(v, b_.getInt64Ty());
      return callHelper(std::string(s ? "keel_i64_to_" : "keel_u64_to_") + formatName(to), dst, {wide});
    }
    if (loop::isIntegerType(to)) { // from a float: saturating, NaN to 0
      if (isLowPrecision(from)) {
        v = cast(v, from, Type::F64);
        from = Type::F64;
      }
      auto id = loop::isSignedType(to) ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
      return b_.CreateIntrinsic(id, {dst, carrier(from)}, {v});
    }
    // Float to float. LLVM's fpext and fptrunc leave a NaN's payload and
    // sign to the target: a NaN gives the canonical NaN of its sign
    // (docs/numerics.md), as the helpers do for the other formats.
    if ((from == Type::F32 && to == Type::F64) || (from == Type::F64 && to == Type::F32)) {
      llvm::Value *r = from == Type::F32 ? b_.CreateFPExt(v, dst) : b_.CreateFPTrunc(v, dst);
      unsigned bits = from == Type::F32 ? 32 : 64;
      llvm::Value *negative = b_.CreateICmpSLT(b_.CreateBitCast(v, b_.getIntNTy(bits)), b_.getIntN(bits, 0));
      llvm::Value *canonical = canonicalNaN(to == Type::F32 ? fp::Format::F32 : fp::Format::F64, negative);
      return b_.CreateSelect(b_.CreateFCmpUNO(v, v), b_.CreateBitCast(canonical, dst), r);
    }
    if (isLowPrecision(from) && to == Type::F32)
      return widenToF32(v, from);
    if (isLowPrecision(from) && to == Type::F64) // both steps exact
      return cast(widenToF32(v, from), Type::F32, Type::F64);
    if ((from == Type::F32 || from == Type::F64) && isLowPrecision(to))
      return callHelper(std::string(from == Type::F32 ? "keel_f32_to_" : "keel_f64_to_") + formatName(to), dst, {v});
    // Low precision to low precision: widen exactly, round once.
    return cast(cast(v, from, Type::F64), Type::F64, to);
  }

  /// The canonical NaN of format `f` (f32 or f64) with the sign `negative`
  /// (an i1) says, as an integer of its width.
  llvm::Value *canonicalNaN(fp::Format f, llvm::Value *negative) {
    unsigned bits = f == fp::Format::F32 ? 32 : 64;
    return b_.CreateSelect(negative, b_.getIntN(bits, fp::canonicalNaN(f, true)),
                           b_.getIntN(bits, fp::canonicalNaN(f, false)));
  }

  /// A low-precision value widened to f32, exactly, inline (so that loops
  /// over such conversions, a contraction's packing among them, vectorize):
  /// the fields moved into f32's, subnormals (below f32's exponent range's
  /// start only if the format's exponent is narrower) as fraction * 2^(1 -
  /// bias - fraction bits), exact in f32; an infinity kept; a NaN the
  /// canonical NaN of its sign, as the numerics library's keel_F_to_f32
  /// (tests/codegen/CodegenTest.cpp compares every encoding).
  llvm::Value *widenToF32(llvm::Value *v, Type from) {
    fp::Format format = *formatOf(from);
    const fp::FormatInfo &f = fp::info(format);
    llvm::Type *i32 = b_.getInt32Ty();
    auto k = [&](uint64_t c) { return llvm::ConstantInt::get(i32, c); };
    if (from == Type::TF32) { // an f32 carrier already: only NaN changes
      llvm::Value *bits = b_.CreateBitCast(v, i32);
      llvm::Value *canonical = canonicalNaN(fp::Format::F32, b_.CreateICmpSLT(bits, k(0)));
      return b_.CreateBitCast(b_.CreateSelect(b_.CreateFCmpUNO(v, v), canonical, bits), b_.getFloatTy());
    }
    const uint64_t exponentMask = (uint64_t{1} << f.exponentBits) - 1, fractionMask = (uint64_t{1} << f.fractionBits) - 1;
    llvm::Value *bits = b_.CreateZExt(v, i32);
    llvm::Value *sign = b_.CreateShl(b_.CreateLShr(bits, static_cast<uint64_t>(f.storageBits - 1)), 31);
    llvm::Value *exponent = b_.CreateAnd(b_.CreateLShr(bits, static_cast<uint64_t>(f.fractionBits)), k(exponentMask));
    llvm::Value *fraction = b_.CreateAnd(bits, k(fractionMask));
    llvm::Value *normal = b_.CreateOr(
        b_.CreateOr(sign, b_.CreateShl(b_.CreateAdd(exponent, k(static_cast<uint64_t>(127 - f.bias))), 23)),
        b_.CreateShl(fraction, static_cast<uint64_t>(23 - f.fractionBits)));
    llvm::Value *out = normal;
    if (f.exponentBits < 8) { // subnormals become normal f32 values; zero stays zero
      llvm::Value *scaled = b_.CreateFMul(b_.CreateUIToFP(fraction, b_.getFloatTy()),
                                          llvm::ConstantFP::get(b_.getFloatTy(), std::ldexp(1.0, 1 - f.bias - f.fractionBits)));
      llvm::Value *subnormal = b_.CreateOr(sign, b_.CreateBitCast(scaled, i32));
      out = b_.CreateSelect(b_.CreateICmpEQ(exponent, k(0)), subnormal, out);
    }
    // The top exponent: an infinity (a zero fraction, where the format has
    // one) or NaN; fp8e4m3fn's is a number but for its one NaN fraction.
    llvm::Value *top = b_.CreateICmpEQ(exponent, k(exponentMask));
    llvm::Value *isNaN = f.hasInfinity ? b_.CreateAnd(top, b_.CreateICmpNE(fraction, k(0)))
                                       : b_.CreateAnd(top, b_.CreateICmpEQ(fraction, k(fractionMask)));
    if (f.hasInfinity)
      out = b_.CreateSelect(top, b_.CreateOr(sign, k(0x7F800000)), out);
    llvm::Value *canonical = canonicalNaN(fp::Format::F32, b_.CreateICmpNE(sign, k(0)));
    return b_.CreateBitCast(b_.CreateSelect(isNaN, canonical, out), b_.getFloatTy());
  }

  llvm::LLVMContext &ctx_;
  llvm::Module &m_;
  const loop::Module &lm_;
  const std::vector<size_t> *defines_;
  llvm::IRBuilder<> b_;
  llvm::Function *fn_ = nullptr;
  const loop::Function *lf_ = nullptr;
  std::vector<llvm::AllocaInst *> slots_;
  std::vector<llvm::GlobalVariable *> constants_;
  F32Kernels kernels_;
  unsigned kernelCalls_ = 0; ///< F32Kernels' functions called so far
  std::vector<LoopTargets> loops_;
  std::string problem_;

  /// Records something verified loop IR never holds; the module is then
  /// refused as a whole (an internal compiler error).
  llvm::Value *cannot(const std::string &what, Type t) {
    if (problem_.empty())
      problem_ = what + " on " + std::string(loop::typeName(t)) + " in @" + std::string(fn_ ? fn_->getName() : "?");
    return llvm::PoisonValue::get(carrier(t));
  }
};

/// The LLVM module of a verified loop IR module, or null with `error` set
/// when the code generator met something it cannot translate (Keel's bug).
/// LLVM's remarks and warnings (a loop it was asked to vectorize and did
/// not) are for LLVM's developers, not Keel's users: they are dropped. An
/// error keeps LLVM's own handling (printed, and the process stops), as
/// before any handler was set.
struct QuietDiagnostics : llvm::DiagnosticHandler {
  bool handleDiagnostics(const llvm::DiagnosticInfo &info) override { return info.getSeverity() != llvm::DS_Error; }
};

std::unique_ptr<llvm::Module> emit(const loop::Module &m, llvm::LLVMContext &ctx, std::string &error,
                                   const std::vector<size_t> *defines = nullptr) {
  ctx.setDiagnosticHandler(std::make_unique<QuietDiagnostics>());
  auto module = std::make_unique<llvm::Module>("keel", ctx);
  Emitter emitter(ctx, *module, m, defines);
  emitter.run();
  if (!emitter.problem().empty()) {
    error = "the code generator cannot translate " + emitter.problem();
    return nullptr;
  }
  return module;
}

/// Every helper generated code may call, by name.
llvm::orc::SymbolMap helperSymbols(llvm::orc::LLJIT &jit) {
  llvm::orc::SymbolMap symbols;
  auto add = [&](const char *name, auto *fn) {
    symbols[jit.mangleAndIntern(name)] = llvm::orc::ExecutorSymbolDef::fromPtr(fn);
  };
#define KEEL_BIND_FORMAT(NAME, CARRIER)                                        \
  add("keel_f32_to_" #NAME, &keel_f32_to_##NAME);                              \
  add("keel_f64_to_" #NAME, &keel_f64_to_##NAME);                              \
  add("keel_i64_to_" #NAME, &keel_i64_to_##NAME);                              \
  add("keel_u64_to_" #NAME, &keel_u64_to_##NAME);                              \
  add("keel_" #NAME "_to_f32", &keel_##NAME##_to_f32);                         \
  add("keel_" #NAME "_to_f64", &keel_##NAME##_to_f64);
  KEEL_FP_FORMATS(KEEL_BIND_FORMAT)
#undef KEEL_BIND_FORMAT
#define KEEL_BIND_ARITH(NAME)                                                  \
  add("keel_" #NAME "_add", &keel_##NAME##_add);                               \
  add("keel_" #NAME "_sub", &keel_##NAME##_sub);                               \
  add("keel_" #NAME "_mul", &keel_##NAME##_mul);                               \
  add("keel_" #NAME "_div", &keel_##NAME##_div);
  KEEL_BIND_ARITH(f16)
  KEEL_BIND_ARITH(bf16)
  KEEL_BIND_ARITH(tf32)
#undef KEEL_BIND_ARITH
  add("keel_rt_print_text", &keel_rt_print_text);
  add("keel_rt_print_bool", &keel_rt_print_bool);
  add("keel_rt_print_i64", &keel_rt_print_i64);
  add("keel_rt_print_u64", &keel_rt_print_u64);
  add("keel_rt_print_f32", &keel_rt_print_f32);
  add("keel_rt_print_f64", &keel_rt_print_f64);
  add("keel_rt_print_lowp", &keel_rt_print_lowp);
  add("keel_rt_print_end", &keel_rt_print_end);
  add("keel_rt_assert_begin", &keel_rt_assert_begin);
  add("keel_rt_assert_fail", &keel_rt_assert_fail);
  add("keel_rt_internal_error", &keel_rt_internal_error);
  add("keel_rt_alloc", &keel_rt_alloc);
  add("keel_rt_index_error", &keel_rt_index_error);
  add("keel_rt_stack_overflow", &keel_rt_stack_overflow);
  add("keel_rt_stack_limit", &keel_rt_stack_limit);
  add("keel_rt_buffer_data", &keel_rt_buffer_data);
  add("keel_rt_print_elements", &keel_rt_print_elements);
  add("keel_rt_free", &keel_rt_free);
  add("keel_rt_parallel_for", &keel_rt_parallel_for);
  // Every math function of the table (a row the numerics library lacks
  // does not compile), and pow.
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary)                                           \
  add("keel_" #name "_f32", &keel_##name##_f32);                                                            \
  add("keel_" #name "_f64", &keel_##name##_f64);
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
  add("keel_pow_f32", &keel_pow_f32);
  add("keel_pow_f64", &keel_pow_f64);
  return symbols;
}

} // namespace

bool hasVectorVariants(std::string_view name) { return name == "gelu" || name == "silu" || name == "sin" || name == "cos"; }

unsigned wideKernelLanes() {
  HostVectors host = hostVectors();
  unsigned lanes = host.registers / 4 * (host.bits / 64);
  unsigned widest = kVariantLanes[0];
  for (unsigned v : kVariantLanes)
    if (v <= lanes)
      widest = v;
  return widest;
}

HostVectors hostVectors() {
  static const HostVectors host = [] { // the host does not change: asked once
    llvm::StringMap<bool> features = llvm::sys::getHostCPUFeatures();
    if (features.lookup("avx512f"))
      return HostVectors{512, 32};
    return HostVectors{features.lookup("avx") ? 256u : 128u, 16};
  }();
  return host;
}

namespace {
/// The host target, registered once per process: LLVM's target registry is
/// not safe to fill from two threads at once, and compilations may run on
/// several (pipeline::compile).
void initializeTarget() {
  static std::once_flag once;
  std::call_once(once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// A target machine for this host, making code as ORC's LLJIT does for
/// the JITLink linker it uses here (-O2, position-independent, the small
/// code model: calls and constants within 2 GiB, not the large model's
/// 64-bit absolute addresses); null with `error` set.
std::unique_ptr<llvm::TargetMachine> hostMachine(std::string &error) {
  initializeTarget();
  auto builder = llvm::orc::JITTargetMachineBuilder::detectHost();
  if (!builder) {
    error = llvm::toString(builder.takeError());
    return nullptr;
  }
  builder->setCodeGenOptLevel(llvm::CodeGenOptLevel::Default);
  builder->setRelocationModel(llvm::Reloc::PIC_);
  builder->setCodeModel(llvm::CodeModel::Small);
  auto machine = builder->createTargetMachine();
  if (!machine) {
    error = llvm::toString(machine.takeError());
    return nullptr;
  }
  return std::move(*machine);
}

/// LLVM's standard -O2 pipeline for this machine. It changes no result: the
/// IR has no fast-math flags and no fmuladd, so floating-point operations
/// are neither reassociated nor contracted.
void optimize(llvm::Module &module, llvm::TargetMachine &machine) {
  module.setDataLayout(machine.createDataLayout());
  module.setTargetTriple(machine.getTargetTriple());
  // Vectors as wide as the host has: LLVM's x86 tuning prefers 256 bits on
  // AVX-512 CPUs, which halves the rate of the CPU schedule's register
  // tiles there (docs/performance.md).
  auto preferHostWidth = [&] {
    std::string width = std::to_string(hostVectors().bits);
    for (llvm::Function &f : module)
      if (!f.isDeclaration())
        f.addFnAttr("prefer-vector-width", width);
  };
  preferHostWidth();
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  // The SLP vectorizer packs independent scalar operations (the tree
  // order's 16 lanes) into vector ones lane for lane, reassociating
  // nothing, so it changes no bit; PassBuilder leaves it off unless asked,
  // as clang asks.
  llvm::PipelineTuningOptions tuning;
  tuning.SLPVectorization = true;
  llvm::PassBuilder passes(&machine, tuning);
  passes.registerModuleAnalyses(mam);
  passes.registerCGSCCAnalyses(cgam);
  passes.registerFunctionAnalyses(fam);
  passes.registerLoopAnalyses(lam);
  passes.crossRegisterProxies(lam, fam, cgam, mam);
  passes.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2).run(module, mam);
  F32Kernels::defineVariants(module, true);
  preferHostWidth();
}
} // namespace

std::string emitLLVMText(const loop::Module &m, bool optimized) {
  llvm::LLVMContext ctx;
  std::string text;
  std::unique_ptr<llvm::Module> module = emit(m, ctx, text);
  if (!module)
    return "; internal compiler error: " + text + "\n";
  if (optimized) {
    std::unique_ptr<llvm::TargetMachine> machine = hostMachine(text);
    if (!machine)
      return "; could not optimize: " + text + "\n";
    optimize(*module, *machine);
  }
  if (!optimized)
    F32Kernels::defineVariants(*module, false);
  llvm::raw_string_ostream os(text);
  module->print(os, nullptr);
  return text;
}

bool checkLLVM(const loop::Module &m, std::string &problems) {
  llvm::LLVMContext ctx;
  std::unique_ptr<llvm::Module> module = emit(m, ctx, problems);
  if (!module)
    return false;
  llvm::raw_string_ostream os(problems);
  return !llvm::verifyModule(*module, &os);
}

namespace {

/// Loop IR nodes (statements and expressions) a function holds, and the
/// functions it calls: what partition() weighs.
struct Weight {
  size_t nodes = 0;
  std::set<std::string> callees;
};
void weigh(const loop::Expr &e, Weight &w) {
  ++w.nodes;
  if (e.kind == loop::Expr::Kind::Call)
    w.callees.insert(e.callee);
  for (const loop::ExprPtr &o : e.operands)
    weigh(*o, w);
}
void weigh(const loop::Stmt &s, Weight &w) {
  ++w.nodes;
  for (const loop::ExprPtr *e : {&s.value, &s.from, &s.to, &s.index})
    if (*e)
      weigh(**e, w);
  for (const loop::TextPart &t : s.text)
    if (t.value)
      weigh(*t.value, w);
  for (const auto *list : {&s.body, &s.orElse})
    for (const loop::StmtPtr &b : *list)
      weigh(*b, w);
}

/// A function smaller than this stays in its callers' part, where LLVM may
/// inline it; larger ones LLVM's -O2 does not inline (they are kernels of
/// thousands of instructions), so splitting them off loses nothing.
constexpr size_t kInlinableNodes = 250;
/// Parts of at least this many nodes, at most kMaxParts of them.
constexpr size_t kPartNodes = 300, kMaxParts = 8;

/// The module's functions in parts that are compiled apart, on threads:
/// each function with the small functions it calls (and they with theirs),
/// these groups dealt largest first to the lightest part. The parts depend
/// on the module alone (not on the host's cores), so the machine code does
/// too. Function indices, each part in module order.
std::vector<std::vector<size_t>> partition(const loop::Module &m) {
  size_t n = m.functions.size();
  std::vector<Weight> weights(n);
  std::map<std::string, size_t> index;
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    for (const loop::StmtPtr &st : m.functions[i].body)
      weigh(*st, weights[i]);
    index.emplace(m.functions[i].name, i);
    total += weights[i].nodes;
  }
  std::vector<size_t> group(n);
  for (size_t i = 0; i < n; ++i)
    group[i] = i;
  std::function<size_t(size_t)> find = [&](size_t i) { return group[i] == i ? i : group[i] = find(group[i]); };
  for (size_t i = 0; i < n; ++i)
    for (const std::string &callee : weights[i].callees)
      if (auto it = index.find(callee); it != index.end() && weights[it->second].nodes < kInlinableNodes)
        group[find(it->second)] = find(i);
  std::map<size_t, std::pair<size_t, std::vector<size_t>>> groups; // by root: nodes, members
  for (size_t i = 0; i < n; ++i) {
    auto &g = groups[find(i)];
    g.first += weights[i].nodes;
    g.second.push_back(i);
  }
  std::vector<std::pair<size_t, std::vector<size_t>>> ordered;
  for (auto &[root, g] : groups)
    ordered.push_back(std::move(g));
  std::stable_sort(ordered.begin(), ordered.end(), [](const auto &a, const auto &b) { return a.first > b.first; });
  size_t parts = std::max<size_t>(1, std::min({kMaxParts, ordered.size(), total / kPartNodes}));
  std::vector<std::vector<size_t>> out(parts);
  std::vector<size_t> load(parts, 0);
  for (auto &[nodes, members] : ordered) {
    size_t lightest = static_cast<size_t>(std::min_element(load.begin(), load.end()) - load.begin());
    load[lightest] += nodes;
    out[lightest].insert(out[lightest].end(), members.begin(), members.end());
  }
  for (std::vector<size_t> &part : out)
    std::sort(part.begin(), part.end());
  return out;
}

/// The stack of a compiling thread: as large as the driver's (LLVM's
/// passes recurse over long expression chains, docs/reliability.md); only
/// what is used is ever touched.
constexpr size_t kCompileStackBytes = size_t{1} << 30;

/// Runs work(0) ... work(n - 1) on up to as many threads as the host has,
/// each with a kCompileStackBytes stack; when no such thread can be made
/// (an address-space limit), on the calling thread.
void onThreads(size_t n, const std::function<void(size_t)> &work) {
  size_t threads = std::min<size_t>(n, std::max(1u, std::thread::hardware_concurrency()));
  std::atomic<size_t> next{0};
  std::function<void()> run = [&] {
    for (size_t i; (i = next++) < n;)
      work(i);
  };
  std::vector<pthread_t> pool;
  pthread_attr_t attributes;
  if (pthread_attr_init(&attributes) == 0) {
    if (pthread_attr_setstacksize(&attributes, kCompileStackBytes) == 0)
      for (size_t t = 0; t < threads; ++t) {
        pthread_t thread;
        auto body = [](void *f) -> void * {
          (*static_cast<std::function<void()> *>(f))();
          return nullptr;
        };
        if (pthread_create(&thread, &attributes, body, &run) != 0)
          break;
        pool.push_back(thread);
      }
    pthread_attr_destroy(&attributes);
  }
  if (pool.empty())
    run();
  for (pthread_t thread : pool)
    pthread_join(thread, nullptr);
}

/// Machine code for each part of `m` (partition): each part emitted into a
/// context of its own with the other parts' functions declared, optimized
/// by -O2 and compiled to an object, the parts on threads. The wall time
/// is shared between -O2 and machine code as the threads' time was. Empty
/// with `error` set on failure.
std::vector<std::string> compileParts(const loop::Module &m, std::string &error, CompileTimes &t) {
  std::vector<std::vector<size_t>> parts = partition(m);
  struct Part {
    std::string object, error;
    double optimize = 0, machineCode = 0;
  };
  std::vector<Part> built(parts.size());
  auto start = std::chrono::steady_clock::now();
  onThreads(parts.size(), [&](size_t i) {
    Part &p = built[i];
    auto clock = std::chrono::steady_clock::now();
    auto lap = [&](double &field) {
      auto now = std::chrono::steady_clock::now();
      field += std::chrono::duration<double>(now - clock).count();
      clock = now;
    };
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> module = emit(m, ctx, p.error, &parts[i]);
    std::unique_ptr<llvm::TargetMachine> machine = module ? hostMachine(p.error) : nullptr;
    if (!machine)
      return;
    optimize(*module, *machine);
    lap(p.optimize);
    llvm::orc::SimpleCompiler compiler(*machine);
    auto object = compiler(*module);
    if (!object) {
      p.error = llvm::toString(object.takeError());
      return;
    }
    p.object = (*object)->getBuffer().str();
    lap(p.machineCode);
  });
  double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double optimizing = 0, generating = 0;
  for (const Part &p : built) {
    optimizing += p.optimize;
    generating += p.machineCode;
  }
  double share = optimizing + generating > 0 ? optimizing / (optimizing + generating) : 1;
  t.optimize += wall * share;
  t.machineCode += wall * (1 - share);
  std::vector<std::string> objects;
  for (Part &p : built) {
    if (!p.error.empty() || p.object.empty()) {
      error = p.error.empty() ? "no object was made" : p.error;
      return {};
    }
    objects.push_back(std::move(p.object));
  }
  return objects;
}

} // namespace

struct Program::Impl {
  std::unique_ptr<llvm::orc::LLJIT> jit;
};

Program::Program() : impl_(std::make_unique<Impl>()) {}
Program::~Program() = default;

std::unique_ptr<Program> Program::compile(const loop::Module &m, std::string &error, CompileTimes *times,
                                          const ObjectCache *cache, std::vector<std::string> *warnings) {
  initializeTarget();
  CompileTimes ignored;
  CompileTimes &t = times ? *times : ignored;
  std::vector<std::string> unreported;
  std::vector<std::string> &problems = warnings ? *warnings : unreported;
  auto clock = std::chrono::steady_clock::now();
  auto lap = [&](double CompileTimes::*field) {
    auto now = std::chrono::steady_clock::now();
    t.*field += std::chrono::duration<double>(now - clock).count();
    clock = now;
  };
  // The whole module, verified, and as the cache's key: a hit skips -O2 and
  // code generation.
  std::string key;
  {
    llvm::LLVMContext ctx;
    std::unique_ptr<llvm::Module> module = emit(m, ctx, error);
    if (!module)
      return nullptr;
    std::string verifier;
    llvm::raw_string_ostream os(verifier);
    if (llvm::verifyModule(*module, &os)) {
      error = "LLVM rejected the generated module: " + verifier;
      return nullptr;
    }
    lap(&CompileTimes::emit);
    if (cache && cache->usable()) {
      std::string text;
      llvm::raw_string_ostream printed(text);
      module->print(printed, nullptr);
      key = cacheKey(text, hostAndBuild());
    }
  }
  std::optional<std::vector<std::string>> objects;
  if (!key.empty()) {
    objects = cache->load(key, problems);
    t.cacheHit = objects.has_value();
    lap(&CompileTimes::cache);
  }
  if (!objects) {
    clock = std::chrono::steady_clock::now();
    objects = compileParts(m, error, t);
    if (objects->empty())
      return nullptr;
    if (!key.empty())
      cache->store(key, *objects, problems);
    clock = std::chrono::steady_clock::now();
  }
  auto jit = llvm::orc::LLJITBuilder().create();
  if (!jit) {
    error = llvm::toString(jit.takeError());
    return nullptr;
  }
  if (auto err = (*jit)->getMainJITDylib().define(llvm::orc::absoluteSymbols(helperSymbols(**jit)))) {
    error = llvm::toString(std::move(err));
    return nullptr;
  }
  for (size_t i = 0; i < objects->size(); ++i)
    if (auto err = (*jit)->addObjectFile(
            llvm::MemoryBuffer::getMemBufferCopy((*objects)[i], "keel.part" + std::to_string(i) + ".o"))) {
      error = llvm::toString(std::move(err));
      return nullptr;
    }
  std::unique_ptr<Program> program(new Program());
  program->impl_->jit = std::move(*jit);
  program->module_ = &m;
  // Every part linked now, rather than at the first call.
  for (const loop::Function &f : m.functions)
    if (!program->address(f.name, error))
      return nullptr;
  lap(t.cacheHit == true ? &CompileTimes::cache : &CompileTimes::machineCode);
  return program;
}

void *Program::address(const std::string &function, std::string &error) {
  auto address = impl_->jit->lookup("keel.fn." + function);
  if (!address) {
    error = llvm::toString(address.takeError());
    return nullptr;
  }
  return address->toPtr<void *>();
}

std::optional<int64_t> Program::run(const std::string &function, std::string &error) {
  const loop::Function *f = module_->find(function);
  if (!f || f->params != 0) {
    error = "no function `" + function + "` without parameters";
    return std::nullopt;
  }
  auto address = impl_->jit->lookup("keel.fn." + function);
  if (!address) {
    error = llvm::toString(address.takeError());
    return std::nullopt;
  }
  // Recursion may use 256 MiB of this thread's stack (the driver's thread
  // has 1 GiB), then stops with a message (keel_rt_stack_overflow).
  keel_rt_set_stack_limit(uint64_t{256} << 20);
  switch (f->result) {
  case Type::Void:
    address->toPtr<void (*)()>()();
    return 0;
  case Type::I64:
    return address->toPtr<int64_t (*)()>()();
  case Type::Bool: case Type::I4: case Type::I8: case Type::I16: case Type::I32: case Type::U8: case Type::U16:
  case Type::U32: case Type::U64: case Type::F16: case Type::BF16: case Type::TF32: case Type::FP8E4M3FN:
  case Type::FP8E5M2: case Type::F32: case Type::F64: case Type::Ptr:
    break;
  }
  {
    error = "`" + function + "` returns " + std::string(loop::typeName(f->result)) + ", not i64 or nothing";
    return std::nullopt;
  }
}

} // namespace keel::codegen
