//===- keel/exits/cpu/Schedule.h - How the CPU exit computes -*- C++ -*-===//
//
// The reference lowering (Lower.h) defines what every operation
// computes: each operation a plain loop nest over its result in logical
// order, each value in a buffer of its own, every buffer freed when the
// function returns. A schedule says how the CPU exit computes the same
// values faster, and changes no bit of any result:
//
//   computedInUser  a pointwise value with one user that reads each of its
//                   elements once is computed inside that user's loop (no
//                   buffer): the same element expression, so the same bits;
//                   read several times by one pointwise user (x * x), it is
//                   computed once per element into a scalar (sharedInUser);
//   readThrough     broadcasts are never stored, nor (inside a fusion
//                   region) transposes, slices and reshapes read once:
//                   loads index their operand;
//   splats          values whose elements are all one encoding (a one-value
//                   constant, or a broadcast, reshape, transpose, slice or
//                   copy of one) are never stored: loads become the constant;
//   intoResult      a value returned once is written straight into the
//                   caller's result buffer;
//   contractions    a contraction's loop order: the rhs-free dimensions
//                   innermost (the inner loop vectorizes), or register
//                   tiles (4x16) over a contiguous copy of the rhs panel,
//                   for any M and an N of at least one panel (the last
//                   row tiles shorter, the last panel padded); every
//                   element still adds its products from index 0 upward;
//   threaded        an operation with enough work runs the outermost loop
//                   over independent elements (result rows, batch
//                   entries, tiles; never a contracting or reduced
//                   dimension) as a parallel loop: each thread computes a
//                   contiguous range of them with the same code, so no
//                   bit depends on the thread count; a sum to one
//                   element in the tree order splits its chunks;
//   rowGroups       consecutive operations over the same rows (their
//                   results' leading dimensions), each row of every result
//                   computed from the same row of what they read, or from
//                   what is the same for every row or every outer row
//                   (layer norm's reductions and elementwise work; a
//                   softmax with the contractions around it, by batch
//                   entry and query row), run as one loop over blocks of
//                   rows: each block runs every operation in turn on its
//                   rows, so a row is read from memory once and stays in
//                   cache for the rest, and values used only inside the
//                   group live in block-sized scratch, never stored
//                   whole. Each element is computed as before (the same
//                   expression, a reduction's terms in the same order),
//                   whichever block holds its row; the blocks are
//                   independent and run on threads;
//   freeEarly       each buffer is freed after its last use, so that the
//                   runtime can hand its memory to the next allocation.
//
// Every decision is made in Schedule.cpp, one function each, and stored
// here; the scheduled lowering (Lower.h) only realizes them, and treats a
// decision it cannot realize as Keel's bug. The reference lowering reads no
// schedule. The fusion pass will take over computedInUser.
//
//===----------------------------------------------------------------------===//
#ifndef KEEL_EXITS_CPU_SCHEDULE_H
#define KEEL_EXITS_CPU_SCHEDULE_H

#include "keel/ir/IR.h"

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace keel::cpu {

/// The loop order of one contraction.
enum class ContractionOrder : uint8_t {
  Logical,      ///< over the result in order, the contracting loop innermost
  RhsFreeInner, ///< batch, lhs-free, contracting, then rhs-free innermost
  Tiled,        ///< tiles of results over rhs panels of the tile's width
  Tree,         ///< `order = tree`: over the result, each element's terms in the tree order
};

/// How one contraction is computed. Tiled: a matrix product (batch dims,
/// one lhs-free dim M, one contracting dim K, one rhs-free dim N), N at
/// least tileColumns: the rows past the last whole tile are one shorter
/// tile, and the last panel's columns past N are padding, never stored.
struct ContractionPlan {
  ContractionOrder order = ContractionOrder::Logical;
  int64_t tileRows = 0, tileColumns = 0; ///< Tiled only
};

/// Operations f.ops[first, first + count) whose results share their first
/// k dimensions, the group's `rows` (row-major), computed block by block:
/// each block is one index of the outer k - 1 rows and `blockRows` of the
/// last (the last block of each shorter), and runs the group's
/// operations in turn on them.
struct RowGroup {
  size_t first = 0, count = 0;
  std::vector<int64_t> rows;
  int64_t blockRows = 0;
  /// Every value the group reads or defines whose first p dimensions are
  /// the first p rows (1 <= p <= k), by value: the results, operands,
  /// region parameters and values inside regions (a value of each outer
  /// row, as attention's keys are of each batch entry, has p < k); values
  /// the same for every row (a gamma broadcast along rows, a scalar) are
  /// absent.
  std::map<ir::ValueId, size_t> rowIndexed;
  /// The results read only within the group: kept per block.
  std::set<ir::ValueId> local;
};

struct FunctionSchedule {
  std::set<ir::ValueId> computedInUser;
  std::set<ir::ValueId> sharedInUser; ///< of those, read more than once by their user
  std::set<ir::ValueId> readThrough;
  std::map<ir::ValueId, uint64_t> splats;      ///< value -> its one encoding
  std::map<ir::ValueId, size_t> intoResult;    ///< value -> result index
  std::map<ir::ValueId, ContractionPlan> contractions; ///< by result; absent: Logical
  /// Reductions whose result elements are accumulated this many at once
  /// (each in its own order), by result; absent: one at a time.
  std::map<ir::ValueId, int64_t> interleaved;
  std::set<ir::ValueId> threaded; ///< by result: its nests' independent loops run on threads
  std::vector<RowGroup> rowGroups; ///< in order, disjoint
  bool freeEarly = false;
};

/// The least element operations an operation needs to run on threads.
constexpr int64_t kThreadedWork = int64_t{1} << 16;

/// Per function name; a function that is absent is lowered as the reference.
using Schedule = std::map<std::string, FunctionSchedule>;

/// What the schedule knows of the machine the code is compiled for.
struct Machine {
  /// The widest vector registers the code may use, in bits, and how many
  /// there are (the host's, as the JIT compiles for it: 512 and 32 with
  /// AVX-512, 256 and 16 with AVX); register tiles are sized from them.
  unsigned vectorBits = 256;
  unsigned vectorRegisters = 16;
};

/// The CPU exit's schedule of a verified module; operations of at least
/// `threadedWork` element operations run on threads.
Schedule cpuSchedule(const ir::Module &m, int64_t threadedWork = kThreadedWork, Machine machine = {});

/// The decisions in text, one line each, for --print-after=schedule.
std::string printSchedule(const ir::Module &m, const Schedule &s);

} // namespace keel::cpu

#endif // KEEL_EXITS_CPU_SCHEDULE_H
