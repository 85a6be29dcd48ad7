//===- Reference.h - The reference lowering's class, private -*- C++ -*-===//
//
// Private to src/exits/cpu. ReferenceLowering lowers one tensor IR function
// to loop IR as the definition: each operation a plain loop nest over its
// result in logical order (Reference.cpp), each value in a buffer of its
// own, every buffer freed when the function returns. It knows nothing of
// schedules.
//
// The scheduled lowering (Scheduled.cpp) derives from it and overrides the
// hooks below (marked virtual) to realize a schedule: where a value is
// computed, whether it is stored, and a contraction's loop order. Every
// element is still computed by the reference's element code.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_EXITS_CPU_REFERENCE_H
#define KEEL_EXITS_CPU_REFERENCE_H

#include "keel/exits/cpu/Elements.h"
#include "keel/ir/IR.h"
#include "keel/loop/LoopIR.h"

#include <cstdint>
#include <functional>
#include <map>
#include <set>
#include <vector>

namespace keel::cpu::detail {

using ir::DType;
using ir::OpKind;
using ir::TensorType;
using ir::ValueId;
using loop::ExprPtr;
using loop::Slot;
using loop::StmtPtr;
using loop::Type;

loop::ExprPtr i64(int64_t v);
/// Read-only bytes in the module, as a Global expression.
loop::ExprPtr constantData(loop::Module &out, std::vector<uint8_t> bytes);

/// An index into one dimension: a loop counter plus a constant (or, with
/// slot < 0, only the constant).
struct Ix {
  int64_t slot = -1;
  int64_t offset = 0;
  int64_t scale = 1; ///< the index is scale * counter + offset
};

/// Element strides of a type's layout.
std::vector<int64_t> strides(const TensorType &t);

/// A reshape's dimensions in groups, in order: the operand's dimensions
/// `in` hold the same elements, row-major, as the result's `out` (their
/// sizes' products agree). Groups are as small as that allows, so a
/// dimension a reshape keeps is a group of one on each side; dimensions of
/// size 1 join a neighbouring group; a reshape with no element is one
/// group.
struct ReshapeGroup {
  std::vector<size_t> in, out;
};
std::vector<ReshapeGroup> reshapeGroups(const std::vector<int64_t> &in, const std::vector<int64_t> &out);

class ReferenceLowering {
public:
  ReferenceLowering(const ir::Function &f, loop::Module &out) : f_(f), out_(out), types_(f.valueTypes) {}
  virtual ~ReferenceLowering() = default;
  ReferenceLowering(const ReferenceLowering &) = delete;
  ReferenceLowering &operator=(const ReferenceLowering &) = delete;

  loop::Function run();

protected:
  static loop::Location location(const ir::Location &l) { return loop::Location{l.file, l.line, l.column}; }

  Slot newSlot(Type t);
  void emit(StmtPtr s) { block_->push_back(std::move(s)); }
  /// The type the lowering gives `v`: its own (a schedule may lower a
  /// group of operations on blocks of their rows, with fewer rows).
  const TensorType &type(ValueId v) const { return types_[v]; }

  void assign(Slot slot, ExprPtr value);
  ExprPtr var(Slot s) { return loop::makeVar(s, fn_.slots[s]); }

  /// Opens `for` loops over `shape`, outermost first; later statements go
  /// into the innermost body. Returns the counters. The first
  /// `independent` loops (kEveryLoop: all) visit independent elements:
  /// each iteration stores what no other reads or stores, and assigns only
  /// slots of its own. While `threaded_` is set, the outermost of them with
  /// more than one iteration becomes a parallel loop, when the nest opens
  /// outside every loop and only loops of one iteration lie above it. A
  /// caller says so only for a nest over result elements; by default no
  /// loop is independent.
  static constexpr size_t kEveryLoop = SIZE_MAX;
  std::vector<Slot> openNest(const std::vector<int64_t> &shape, size_t independent = 0);
  /// Emits `for counter in from .. to` (a parallel loop if `parallel`) and
  /// moves into its body; returns the counter.
  Slot openLoop(ExprPtr from, ExprPtr to, bool parallel = false);
  static std::vector<Ix> ixs(const std::vector<Slot> &counters);

  ExprPtr address(const TensorType &t, const std::vector<Ix> &index);

  /// Element `addr` of the buffer in `ptr`, in the compute type of `t`.
  ExprPtr loadFrom(Slot ptr, DType t, ExprPtr addr);
  /// Element `index` of `v`: reference, from its buffer.
  virtual ExprPtr load(ValueId v, const std::vector<Ix> &index);
  /// Where in `v`'s buffer its element at `addr` (an address of type(v))
  /// is: reference, at `addr`.
  virtual ExprPtr inBuffer(ValueId, ExprPtr addr) { return addr; }

  /// Element `i` of a pointwise operation's result (each operand read at
  /// the same index).
  ExprPtr pointwise(const ir::Op &o, const std::vector<Ix> &i);
  /// The operand index an index map (broadcast_in_dim, transpose, slice)
  /// reads for result index `i`.
  std::vector<Ix> mappedIndex(const ir::Op &o, const std::vector<Ix> &i) const;
  /// Element `i` of a reshape's result: the operand's element at the same
  /// row-major position (index arithmetic emitted into the current loop).
  ExprPtr reshapedLoad(const ir::Op &o, const std::vector<Ix> &i);

  /// A buffer holding `v`, for a call's argument: reference, its own.
  virtual Slot bufferOf(ValueId v, const ir::Op &user);
  void storeTo(Slot ptr, DType t, ExprPtr addr, ExprPtr value);
  void store(ValueId v, ExprPtr addr, ExprPtr value);

  /// Gives result `v` its buffer: reference, fresh memory.
  virtual void define(ValueId v, const ir::Op &o);

  /// Defines `o`'s result and stores element(index) at every index.
  template <typename F> void elementwise(const ir::Op &o, F element) {
    ValueId r = o.results[0];
    define(r, o);
    std::vector<StmtPtr> *saved = block_;
    std::vector<Ix> index = ixs(openNest(type(r).shape, kEveryLoop));
    ExprPtr value = element(index);
    store(r, address(type(r), index), std::move(value));
    block_ = saved;
  }

  /// Copies `from` element by element into the buffer in `to`, of
  /// `from`'s type.
  void copyInto(Slot to, ValueId from);
  /// Copies value `from` element by element into value `to`, of its type.
  void copyValue(ValueId to, ValueId from);

  void free(ValueId v);

  /// Lowers a list of operations (a function body, or a fusion region whose
  /// returned values go to `regionResults`); on the function's return the
  /// results are copied out and every owned buffer freed.
  virtual void lowerOps(const std::vector<ir::Op> &ops, std::vector<ValueId> *regionResults);
  /// Called after the operation at `ops[position]` is lowered: reference,
  /// nothing.
  virtual void lowered(const std::vector<ir::Op> &ops, size_t position, bool inRegion);

  static bool isReturned(const std::vector<ir::Op> &ops, ValueId v);

  virtual void lowerOp(const ir::Op &o);
  /// The function's `return`: its values copied into the result buffers
  /// (unless already there), then every owned buffer freed.
  virtual void lowerReturn(const ir::Op &o);

  void constant(const ir::Op &o);

  /// Row-major order is kept: result element at row-major position p is
  /// the operand's element at row-major position p.
  void reshape(const ir::Op &o);

  void concatenate(const ir::Op &o);

  /// Accumulates `x` (already in the accumulator type) into `acc`.
  void accumulate(ir::Combiner c, DType acc, Slot accSlot, ExprPtr x);

  /// reduce: reference, each result element's accumulation in turn.
  virtual void reduce(const ir::Op &o);
  /// The operand index of a reduction's element: `kept` (the result's
  /// index) and `reduced` (the reduced dimensions' index) interleaved as
  /// the operand's dimensions are.
  static std::vector<Ix> reductionOperandIndex(const ir::Op &o, size_t rank, const std::vector<Ix> &kept,
                                               const std::vector<Ix> &reduced);

  void call(const ir::Op &o);

  /// A fusion region, lowered op by op in place; its results take the
  /// region's buffers where they own one alone, else a copy.
  void fusion(const ir::Op &o);
  /// Binds region parameter `param` to the caller's `operand`: reference,
  /// its buffer.
  virtual void bindRegionParam(ValueId operand, ValueId param);
  /// Whether region result `v` is already in a buffer of the caller's that
  /// the fusion result may take over: reference, never.
  virtual bool inCallerResult(ValueId v) const;

  /// dot_general: reference, logicalContraction.
  virtual void dotGeneral(const ir::Op &o);

  /// The reference contraction: for each result element in order (batch,
  /// lhs-free, rhs-free), acc = the identity (-0 for floats), then for each
  /// contracting index in row-major order acc = acc + round(a * b) in the
  /// accumulator dtype; the result is acc converted to the result dtype.
  void logicalContraction(const ir::Op &o);

  /// Sums `count` terms in the tree order: 4096-term chunks of 16 lanes
  /// (term j of a chunk goes to lane j mod 16, each lane adding its terms
  /// in order from the identity), lanes halved (l[i] + l[i+8], then +4,
  /// +2, +1), chunk values by a balanced tree (pairs, an odd last one
  /// carried up). `term(p)` emits term p, p = scale * counter + offset, in
  /// `acc`'s compute type into the current block. With `chunksOnThreads`
  /// the full chunks are a parallel loop (each its own lanes and its own
  /// slot of scratch memory). Returns a slot holding the sum.
  Slot treeSum(DType acc, int64_t count, const std::function<ExprPtr(const Ix &)> &term, bool chunksOnThreads,
               const ir::Op &o);
  /// The indices, in row-major order over `shape`, of position `p`: `p`
  /// itself for one dimension, else slots assigned (p / stride) % size.
  std::vector<Ix> positionIndex(const std::vector<int64_t> &shape, const Ix &p);
  /// Whether a tree sum's chunks may run on threads: the operation is
  /// threaded, its nest opens outside every loop (`topLevel`), and it has
  /// one result element (else its result elements are what threads share).
  bool chunksOnThreads(const TensorType &result, bool topLevel) const {
    return threaded_ && topLevel && result.elementCount().value_or(0) == 1;
  }

  /// round(a * b) in the accumulator `acc` (no fused multiply-add): the
  /// term every contraction order adds.
  ExprPtr product(DType acc, ExprPtr a, DType ta, ExprPtr b, DType tb);

  /// The dimensions of a contraction operand that are neither batch nor
  /// contracting, in order.
  static std::vector<int64_t> freeDims(const TensorType &t, const std::vector<int64_t> &batch,
                                       const std::vector<int64_t> &contract);

  /// Fresh memory for `bytes`, in a new Ptr slot: reference, allocated
  /// here.
  virtual Slot allocateScratch(int64_t bytes, const ir::Op &o);
  /// Frees allocateScratch's memory: reference, here.
  virtual void release(Slot slot) { emit(loop::makeFree(slot)); }

  const ir::Function &f_;
  loop::Module &out_;
  loop::Function fn_;
  std::vector<StmtPtr> *block_ = nullptr;
  std::vector<TensorType> types_; ///< by value: type()
  std::map<ValueId, Slot> buffer_;
  std::set<ValueId> owned_;
  std::vector<Slot> resultSlots_;
  /// Set by a schedule for an operation that runs on threads; the
  /// reference never sets it.
  bool threaded_ = false;
};

/// `NAME.entry(buffers)` for tensor function `f` (Lower.h).
loop::Function entryFunction(const ir::Function &f, loop::Module &out);

} // namespace keel::cpu::detail

#endif // KEEL_EXITS_CPU_REFERENCE_H
