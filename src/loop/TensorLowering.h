//===- TensorLowering.h - The tensor lowering's class, shared -*- C++ -*-===//
//
// Private to src/loop. FunctionLowering lowers one tensor IR function to
// loop IR. Its reference members (LowerTensor.cpp) are the definition of
// every operation: a plain loop nest over the result in logical order,
// each value in a buffer of its own. The members that realize a schedule's
// faster loop orders (LowerScheduled.cpp) run only when Schedule.h's
// decisions ask for them; `keel run --exit reference` never reaches them.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_LOOP_TENSORLOWERING_H
#define KEEL_LOOP_TENSORLOWERING_H

#include "keel/ir/IR.h"
#include "keel/loop/LoopIR.h"
#include "keel/loop/Schedule.h"

#include <map>
#include <set>
#include <tuple>
#include <vector>

namespace keel::loop::detail {

using ir::DType;
using ir::OpKind;
using ir::TensorType;
using ir::ValueId;

/// The type an element of `t` is computed in (pred as bool, i4 in i8).
Type computeType(DType t);
/// Bytes one stored element of `t` takes.
int64_t storageBytes(DType t);
ExprPtr i64(int64_t v);
/// An encoding of `t` (as the IR holds it) as a constant of its compute type.
ExprPtr encodingConst(DType t, uint64_t bits);
/// Read-only bytes in the module, as a Global expression.
ExprPtr constantData(Module &out, std::vector<uint8_t> bytes);
/// One element converted from `from` to `to` (docs/semantics.md).
ExprPtr convert(ExprPtr v, DType from, DType to);
CompareOp compareOp(ir::CompareDir d);
/// The first value of an accumulator: the combiner's identity (-0 for a
/// float sum, so that a sum of negative zeros stays -0 as in IEEE).
ExprPtr identity(ir::Combiner c, DType acc);

/// An index into one dimension: a loop counter plus a constant (or, with
/// slot < 0, only the constant).
struct Ix {
  int64_t slot = -1;
  int64_t offset = 0;
  int64_t scale = 1; ///< the index is scale * counter + offset
};

/// Element strides of a type's layout.
std::vector<int64_t> strides(const TensorType &t);

class FunctionLowering {
public:
  FunctionLowering(const ir::Function &f, const FunctionSchedule &schedule, Module &out)
      : f_(f), s_(schedule), out_(out) {}

  Function run() {
    fn_.name = f_.name;
    fn_.loc = location(f_.loc);
    for (ValueId p : f_.params)
      buffer_[p] = newSlot(Type::Ptr);
    for (size_t i = 0; i < f_.resultTypes.size(); ++i)
      resultSlots_.push_back(newSlot(Type::Ptr));
    fn_.params = fn_.slots.size();
    fn_.result = Type::Void;
    block_ = &fn_.body;
    lowerOps(f_.ops, nullptr);
    return std::move(fn_);
  }

private:
  static Location location(const ir::Location &l) { return Location{l.file, l.line, l.column}; }

  Slot newSlot(Type t);
  void emit(StmtPtr s) { block_->push_back(std::move(s)); }
  const TensorType &type(ValueId v) const { return f_.valueTypes[v]; }

  void assign(Slot slot, ExprPtr value);
  ExprPtr var(Slot s) { return makeVar(s, fn_.slots[s]); }

  /// Opens `for` loops over `shape`, outermost first; later statements go
  /// into the innermost body. Returns the counters.
  std::vector<Slot> openNest(const std::vector<int64_t> &shape);
  static std::vector<Ix> ixs(const std::vector<Slot> &counters);

  ExprPtr address(const TensorType &t, const std::vector<Ix> &index);

  /// Element `addr` of the buffer in `ptr`, in the compute type of `t`.
  ExprPtr loadFrom(Slot ptr, DType t, ExprPtr addr);
  ExprPtr load(ValueId v, const std::vector<Ix> &index);

  /// Element `i` of a pointwise operation's result (each operand read at
  /// the same index).
  ExprPtr pointwise(const ir::Op &o, const std::vector<Ix> &i);
  /// The operand index an index map (broadcast_in_dim, transpose, slice)
  /// reads for result index `i`.
  std::vector<Ix> mappedIndex(const ir::Op &o, const std::vector<Ix> &i) const;
  /// Element `i` of a reshape's result: the operand's element at the same
  /// row-major position (index arithmetic emitted into the current loop).
  ExprPtr reshapedLoad(const ir::Op &o, const std::vector<Ix> &i);

  /// A buffer holding `v`: a value that has none (a splat, a broadcast) is
  /// written out the first time one is needed (a call's argument, the rhs
  /// of a tiled contraction).
  Slot bufferOf(ValueId v, const ir::Op &user);
  void storeTo(Slot ptr, DType t, ExprPtr addr, ExprPtr value);
  void store(ValueId v, ExprPtr addr, ExprPtr value);

  /// Gives result `v` its buffer: the caller's, or fresh memory.
  void define(ValueId v, const ir::Op &o);

  /// Defines `o`'s result and stores element(index) at every index.
  template <typename F> void elementwise(const ir::Op &o, F element) {
    ValueId r = o.results[0];
    define(r, o);
    std::vector<StmtPtr> *saved = block_;
    std::vector<Ix> index = ixs(openNest(type(r).shape));
    ExprPtr value = element(index);
    store(r, address(type(r), index), std::move(value));
    block_ = saved;
  }

  /// Copies `from` element by element into the buffer in `to`, of
  /// `from`'s type.
  void copyInto(Slot to, ValueId from);

  void free(ValueId v);

  /// Lowers a list of operations (a function body, or a fusion region whose
  /// returned values go to `regionResults`), freeing each owned buffer
  /// after its last use.
  void lowerOps(const std::vector<ir::Op> &ops, std::vector<ValueId> *regionResults);

  static bool isReturned(const std::vector<ir::Op> &ops, ValueId v);

  void lowerOp(const ir::Op &o);

  void constant(const ir::Op &o);

  /// Row-major order is kept: result element at row-major position p is
  /// the operand's element at row-major position p.
  void reshape(const ir::Op &o);

  void concatenate(const ir::Op &o);

  /// Accumulates `x` (already in the accumulator type) into `acc`.
  void accumulate(ir::Combiner c, DType acc, Slot accSlot, ExprPtr x);

  void reduce(const ir::Op &o);

  /// dot_general in the loop order the schedule chose (the reference:
  /// logicalContraction).
  void dotGeneral(const ir::Op &o);

  /// The schedule's RhsFreeInner: the loops run batch, lhs free,
  /// contracting, then rhs free dimensions innermost, accumulating in
  /// memory (the result itself when it has the accumulator's dtype): every
  /// element still starts at the identity and adds round(a * b) for its
  /// contracting indices in order, and the innermost loop runs over
  /// independent elements, which LLVM can vectorize without reassociating
  /// anything.
  void rhsFreeInnerContraction(const ir::Op &o);

  /// The reference contraction: for each result element in order (batch,
  /// lhs-free, rhs-free), acc = the identity (-0 for floats), then for each
  /// contracting index in row-major order acc = acc + round(a * b) in the
  /// accumulator dtype; the result is acc converted to the result dtype.
  void logicalContraction(const ir::Op &o);

  /// The dimensions of a contraction operand that are neither batch nor
  /// contracting, in order.
  static std::vector<int64_t> freeDims(const TensorType &t, const std::vector<int64_t> &batch,
                                       const std::vector<int64_t> &contract);

  static constexpr int64_t kTileRows = 4, kTileColumns = 16;

  /// Fresh memory for `bytes`, in a new Ptr slot.
  Slot allocateScratch(int64_t bytes, const ir::Op &o);
  void release(Slot slot) { emit(makeFree(slot)); }

  /// A matrix product (batch dims, one lhs-free dim M, one contracting dim
  /// K, one rhs-free dim N) with M % 4 == 0 and N % 16 == 0, by tiles, as
  /// BLAS does: for each 16-column panel of the rhs, copied (converted to
  /// the accumulator, exactly) into contiguous memory, every 4-row tile of
  /// results accumulates in a small buffer of its own across the whole
  /// contracting loop; its innermost loop over the 16 columns vectorizes
  /// and the tile stays in registers. Every result still starts at the
  /// identity and adds round(a * b) for k = 0, 1, ... in order: the same
  /// bits as the plain loops.
  bool tiledContraction(const ir::Op &o);

  const ir::Function &f_;
  const FunctionSchedule &s_;
  Module &out_;
  Function fn_;
  std::vector<StmtPtr> *block_ = nullptr;
  std::map<ValueId, Slot> buffer_;
  std::map<ValueId, const ir::Op *> indexMaps_; ///< index maps read through their operand (Schedule.h)
  std::map<ValueId, const ir::Op *> pointwiseOps_; ///< ... and the operations that compute them
  /// sharedInUser values computed in a loop body, by value, block and index.
  std::map<std::tuple<ValueId, std::vector<StmtPtr> *, std::vector<std::tuple<int64_t, int64_t, int64_t>>>, Slot>
      shared_;
  std::set<ValueId> owned_;
  std::vector<Slot> resultSlots_;
};

} // namespace keel::loop::detail

#endif // KEEL_LOOP_TENSORLOWERING_H
