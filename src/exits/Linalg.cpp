//===- Linalg.cpp - The MLIR linalg exit ---------------------------------===//
//
// Each function of the tensor IR becomes a func.func over tensors; each
// operation one MLIR operation (or none: copies and relayouts are the
// tensor itself), each fusion one linalg.generic when its region has the
// shape one generic can hold (elementwise operations, sources and affine
// index maps, at most one reduction or contraction as its root), else its
// operations one by one. Element code comes from ElementCode.h.
//
//===----------------------------------------------------------------------===//
#include "keel/exits/Linalg.h"

#include "ElementCode.h"
#include "MlirModule.h"
#include "keel/exits/MlirText.h"
#include "keel/ir/Text.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

namespace keel::exits {

using namespace ir;
using detail::Block;
using detail::Helpers;
using detail::SsaNames;

namespace {

std::string pointKey(const AffinePoint &p) {
  std::string s;
  for (const AffineRef &e : p)
    s += affineText(e) + ",";
  return s;
}

std::string list(const std::vector<int64_t> &v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i)
    s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

/// The binary operation a combiner accumulates with.
BinaryCode combineCode(Combiner c) {
  switch (c) {
  case Combiner::Sum: return BinaryCode::Add;
  case Combiner::Prod: return BinaryCode::Mul;
  case Combiner::Max: return BinaryCode::Max;
  case Combiner::Min: return BinaryCode::Min;
  case Combiner::And: return BinaryCode::And;
  case Combiner::Or: return BinaryCode::Or;
  case Combiner::ArgMax: case Combiner::ArgMin: break; // two results: reduceGeneric()
  }
  return BinaryCode::Add;
}

bool isArg(Combiner c) { return c == Combiner::ArgMax || c == Combiner::ArgMin; }

/// Operations a generic's body evaluates at any point of its space: element
/// operations, sources, and the index maps that are affine.
bool inlinable(OpKind k) {
  switch (k) {
  case OpKind::Unary: case OpKind::Binary: case OpKind::Compare: case OpKind::Select: case OpKind::Convert:
  case OpKind::Constant: case OpKind::Iota: case OpKind::BroadcastInDim: case OpKind::Reshape: case OpKind::Transpose:
  case OpKind::Slice:
    return true;
  case OpKind::Concatenate: case OpKind::Reduce: case OpKind::DotGeneral: case OpKind::Copy: case OpKind::Relayout:
  case OpKind::Call: case OpKind::Return: case OpKind::Fusion:
    return false;
  }
  return false;
}

//===-- Functions ---------------------------------------------------------===//

class FunctionEmitter;

/// One linalg.generic being built: its iteration space, its inputs (each
/// a tensor read at an affine point), its outputs and its body.
class Generic {
public:
  Generic(FunctionEmitter &fe, std::vector<int64_t> ranges, std::vector<std::string> iterators,
          const std::unordered_map<ValueId, const Op *> &inlined);

  /// The element of value `v` at `point`, in the body (memoized).
  std::string value(ValueId v, const AffinePoint &point);
  /// Tensor `tensor` read at `point`; returns its block argument.
  std::string input(const std::string &tensor, const TensorType &type, const AffinePoint &point);
  /// An output: its initial tensor, its type and map; returns its block
  /// argument (the accumulator, for reductions).
  std::string output(const std::string &init, const TensorType &type, const AffinePoint &point);
  Block &body() { return body_; }
  /// Prints the generic yielding `yields`; returns its results' names.
  /// `result` names it (with `#k` for each of several outputs).
  std::vector<std::string> finish(const std::vector<std::string> &yields, const Location &loc, const std::string &result);

private:
  std::string index(const AffineRef &e);

  FunctionEmitter &fe_;
  std::vector<int64_t> ranges_;
  std::vector<std::string> iterators_;
  const std::unordered_map<ValueId, const Op *> &inlined_;
  struct Operand {
    std::string tensor, arg;
    TensorType type;
    AffinePoint point;
  };
  std::vector<Operand> ins_, outs_;
  std::map<std::pair<ValueId, std::string>, std::string> memo_;
  std::map<std::string, std::string> indexMemo_;
  std::map<std::pair<std::string, std::string>, std::string> inputMemo_;
  Block body_;
};

class FunctionEmitter {
public:
  FunctionEmitter(const Function &f, Helpers &helpers, const std::map<std::string, std::string> &symbols, bool isPublic)
      : f_(f), helpers_(helpers), symbols_(symbols), isPublic_(isPublic), names_(f) {}

  std::string emit();

  // For Generic.
  SsaNames &names() { return names_; }
  Helpers &helpers() { return helpers_; }
  const TensorType &type(ValueId v) const { return f_.valueTypes[v]; }
  const Function &function() const { return f_; }
  std::string tensor(ValueId v) const { return ssa_.at(v); }
  void line(const std::string &text) { out_ += "    " + text + "\n"; }
  void raw(const std::string &text) { out_ += text; }
  std::string fresh() { return names_.fresh(); }
  /// A dense constant op's tensor, made once before the code that reads it.
  std::string constantTensor(const Op &o);

private:
  void ops(const std::vector<Op> &ops);
  void op(const Op &o);
  void fusion(const Op &o);
  std::string reshape(const Op &o);
  bool oneGeneric(const Op &o);
  /// A tensor of `t` to write into: empty, or filled with `encoding`.
  std::string empty(const TensorType &t);
  std::string filled(const TensorType &t, uint64_t encoding);
  /// One generic computing `o`'s result, named `name`.
  std::string elementwise(const Op &o, const std::unordered_map<ValueId, const Op *> &inlined, const std::string &name);
  void reduce(const Op &o, const std::unordered_map<ValueId, const Op *> &inlined, bool named);
  void dot(const Op &o, const std::unordered_map<ValueId, const Op *> &inlined, bool named);
  /// `NAME = convert acc -> dtype` when they differ; else `t`.
  std::string convertAll(const std::string &t, const TensorType &from, const TensorType &to, const Location &loc,
                         const std::string &name);
  void define(ValueId v, const std::string &name) { ssa_[v] = name; }
  /// `%a, %b` and their types, `tensor<..>, tensor<..>`.
  std::pair<std::string, std::string> operandList(const std::vector<ValueId> &values) const {
    std::string names, types;
    for (size_t i = 0; i < values.size(); ++i) {
      names += (i ? ", " : "") + tensor(values[i]);
      types += (i ? ", " : "") + mlirTensorType(type(values[i]));
    }
    return {names, types};
  }
  const Function &f_;
  Helpers &helpers_;
  const std::map<std::string, std::string> &symbols_;
  bool isPublic_;
  SsaNames names_;
  std::string out_;
  std::unordered_map<ValueId, std::string> ssa_; ///< each value's MLIR value
  std::map<const Op *, std::string> constants_;
};

Generic::Generic(FunctionEmitter &fe, std::vector<int64_t> ranges, std::vector<std::string> iterators,
                 const std::unordered_map<ValueId, const Op *> &inlined)
    : fe_(fe), ranges_(std::move(ranges)), iterators_(std::move(iterators)), inlined_(inlined),
      body_(fe.names(), "      ", fe.helpers()) {}

std::string Generic::input(const std::string &tensor, const TensorType &type, const AffinePoint &point) {
  auto key = std::make_pair(tensor, pointKey(point));
  auto it = inputMemo_.find(key);
  if (it != inputMemo_.end())
    return it->second;
  // linalg infers each loop's range from the operands that index by that
  // loop alone; an operand read over part of a dimension (through a slice)
  // would give it the wrong range, so it is read with tensor.extract.
  bool partial = false;
  for (size_t j = 0; j < point.size(); ++j)
    partial = partial || (point[j]->kind == Affine::Kind::Dim &&
                          type.shape[j] != ranges_[static_cast<size_t>(point[j]->value)]);
  if (partial) {
    std::string indices;
    for (const AffineRef &e : point)
      indices += (indices.empty() ? "" : ", ") + index(e);
    return inputMemo_[key] = body_.op("tensor.extract " + tensor + "[" + indices + "] : " + mlirTensorType(type));
  }
  std::string arg = fe_.fresh();
  ins_.push_back({tensor, arg, type, point});
  return inputMemo_[key] = arg;
}

std::string Generic::output(const std::string &init, const TensorType &type, const AffinePoint &point) {
  std::string arg = fe_.fresh();
  outs_.push_back({init, arg, type, point});
  return arg;
}

std::string Generic::index(const AffineRef &e) {
  std::string key = affineText(e);
  auto it = indexMemo_.find(key);
  if (it != indexMemo_.end())
    return it->second;
  std::string r;
  switch (e->kind) {
  case Affine::Kind::Dim: r = body_.op("linalg.index " + std::to_string(e->value) + " : index"); break;
  case Affine::Kind::Const: r = body_.constant(std::to_string(e->value), "index"); break;
  case Affine::Kind::Add: r = body_.op("arith.addi " + index(e->lhs) + ", " + index(e->rhs) + " : index"); break;
  case Affine::Kind::Mul:
    r = body_.op("arith.muli " + index(e->lhs) + ", " + body_.constant(std::to_string(e->value), "index") + " : index");
    break;
  case Affine::Kind::FloorDiv: // the operands are never negative
    r = body_.op("arith.divui " + index(e->lhs) + ", " + body_.constant(std::to_string(e->value), "index") + " : index");
    break;
  case Affine::Kind::Mod:
    r = body_.op("arith.remui " + index(e->lhs) + ", " + body_.constant(std::to_string(e->value), "index") + " : index");
    break;
  }
  return indexMemo_[key] = r;
}

std::string Generic::value(ValueId v, const AffinePoint &p) {
  auto key = std::make_pair(v, pointKey(p));
  auto found = memo_.find(key);
  if (found != memo_.end())
    return found->second;
  auto def = inlined_.find(v);
  std::string r;
  if (def == inlined_.end()) {
    r = input(fe_.tensor(v), fe_.type(v), p);
    return memo_[key] = r;
  }
  const Op &o = *def->second;
  linalgCapabilities().require(fe_.function(), o);
  const TensorType &t = fe_.type(v);
  auto operand = [&](size_t i) { return value(o.operands[i], p); };
  auto dtypeOf = [&](size_t i) { return fe_.type(o.operands[i]).dtype; };
  switch (o.kind) {
  case OpKind::Unary: r = body_.unary(o.unary, t.dtype, operand(0)); break;
  case OpKind::Binary: r = body_.binary(o.binary, t.dtype, operand(0), operand(1)); break;
  case OpKind::Compare: r = body_.compare(o.compare, dtypeOf(0), operand(0), operand(1)); break;
  case OpKind::Select: r = body_.select(t.dtype, operand(0), operand(1), operand(2)); break;
  case OpKind::Convert: r = body_.convert(dtypeOf(0), t.dtype, operand(0)); break;
  case OpKind::Constant:
    if (o.constant.size() == 1)
      r = body_.constant(t.dtype, o.constant[0]);
    else
      r = input(fe_.constantTensor(o), t, p);
    break;
  case OpKind::Iota: {
    std::string i = body_.op("arith.index_cast " + index(p[static_cast<size_t>(o.axis)]) + " : index to i64");
    r = body_.convert(DType::I64, t.dtype, i);
    break;
  }
  case OpKind::BroadcastInDim: {
    const TensorType &in = fe_.type(o.operands[0]);
    AffinePoint q;
    for (size_t k = 0; k < in.rank(); ++k) {
      size_t d = static_cast<size_t>(o.dims[k]);
      q.push_back(in.shape[k] == 1 && t.shape[d] != 1 ? affineConst(0) : p[d]);
    }
    r = value(o.operands[0], q);
    break;
  }
  case OpKind::Transpose: {
    AffinePoint q(p.size());
    for (size_t i = 0; i < p.size(); ++i)
      q[static_cast<size_t>(o.dims[i])] = p[i];
    r = value(o.operands[0], q);
    break;
  }
  case OpKind::Slice: {
    AffinePoint q;
    for (size_t i = 0; i < p.size(); ++i)
      q.push_back(affineAdd(p[i], affineConst(o.dims[i])));
    r = value(o.operands[0], q);
    break;
  }
  case OpKind::Reshape: r = value(o.operands[0], reshapePoint(p, t, fe_.type(o.operands[0]), ranges_)); break;
  case OpKind::Concatenate: case OpKind::Reduce: case OpKind::DotGeneral: case OpKind::Copy: case OpKind::Relayout:
  case OpKind::Call: case OpKind::Return: case OpKind::Fusion:
    r = input(fe_.tensor(v), t, p); // never inlined (inlinable() is false): read as a tensor
    break;
  }
  return memo_[key] = r;
}

std::vector<std::string> Generic::finish(const std::vector<std::string> &yields, const Location &loc,
                                         const std::string &result) {
  // A loop no operand indexes by alone gets its range from a small empty
  // tensor of that size, read by nothing.
  std::vector<bool> covered(ranges_.size(), false);
  for (const std::vector<Operand> *group : {&ins_, &outs_})
    for (const Operand &o : *group)
      for (const AffineRef &e : o.point)
        if (e->kind == Affine::Kind::Dim)
          covered[static_cast<size_t>(e->value)] = true;
  for (size_t k = 0; k < ranges_.size(); ++k)
    if (!covered[k]) {
      TensorType anchor = TensorType::make(DType::I8, {ranges_[k]});
      std::string t = fe_.fresh();
      fe_.line(t + " = tensor.empty() : " + mlirTensorType(anchor) + " // the range of loop d" + std::to_string(k));
      ins_.push_back({t, fe_.fresh(), anchor, {affineDim(static_cast<int64_t>(k))}});
    }
  std::string maps, insText, insTypes, outsText, outsTypes, args, iterators, yieldList, yieldTypes;
  auto add = [](std::string &s, const std::string &x) { s += (s.empty() ? "" : ", ") + x; };
  for (const std::vector<Operand> *group : {&ins_, &outs_})
    for (const Operand &o : *group) {
      add(maps, affineMapText(ranges_.size(), o.point));
      add(args, o.arg + ": " + mlirElementType(o.type.dtype));
      add(group == &ins_ ? insText : outsText, o.tensor);
      add(group == &ins_ ? insTypes : outsTypes, mlirTensorType(o.type));
    }
  for (const Operand &o : outs_)
    add(yieldTypes, mlirElementType(o.type.dtype));
  for (const std::string &i : iterators_)
    add(iterators, "\"" + i + "\"");
  for (const std::string &y : yields)
    add(yieldList, y);
  std::string head = detail::resultsDefined(result, outs_.size()) + "linalg.generic {indexing_maps = [" + maps +
                     "], iterator_types = [" + iterators + "]}";
  if (!ins_.empty())
    head += " ins(" + insText + " : " + insTypes + ")";
  fe_.line(head + " outs(" + outsText + " : " + outsTypes + ") {");
  fe_.raw("    ^bb0(" + args + "):\n" + body_.text() + "      linalg.yield " + yieldList + " : " + yieldTypes + "\n");
  fe_.line("} -> " + (outs_.size() > 1 ? "(" + outsTypes + ")" : outsTypes) + mlirLocation(loc));
  return detail::resultNames(result, outs_.size());
}

//===-- Operations --------------------------------------------------------===//

std::string FunctionEmitter::empty(const TensorType &t) {
  std::string e = fresh();
  line(e + " = tensor.empty() : " + mlirTensorType(t));
  return e;
}

std::string FunctionEmitter::filled(const TensorType &t, uint64_t encoding) {
  std::string e = empty(t), c = fresh(), r = fresh();
  line(c + " = " + mlirConstant(mlirLiteral(t.dtype, encoding), mlirElementType(t.dtype)));
  line(r + " = linalg.fill ins(" + c + " : " + mlirElementType(t.dtype) + ") outs(" + e + " : " + mlirTensorType(t) +
       ") -> " + mlirTensorType(t));
  return r;
}

std::string FunctionEmitter::constantTensor(const Op &o) {
  auto it = constants_.find(&o);
  if (it != constants_.end())
    return it->second;
  const TensorType &t = type(o.results[0]);
  std::string c = names_.of(o.results[0]);
  line(c + " = arith.constant " + mlirDense(t, o.constant) + " : " + mlirTensorType(t) + mlirLocation(o.loc));
  return constants_[&o] = c;
}

std::string FunctionEmitter::elementwise(const Op &o, const std::unordered_map<ValueId, const Op *> &inlined,
                                         const std::string &name) {
  const TensorType &t = type(o.results[0]);
  Generic g(*this, t.shape, std::vector<std::string>(t.rank(), "parallel"), inlined);
  g.output(empty(t), t, identityPoint(t.rank()));
  std::string v = g.value(o.results[0], identityPoint(t.rank()));
  return g.finish({v}, o.loc, name)[0];
}

std::string FunctionEmitter::convertAll(const std::string &x, const TensorType &from, const TensorType &to,
                                        const Location &loc, const std::string &name) {
  if (from.dtype == to.dtype)
    return x;
  std::unordered_map<ValueId, const Op *> none;
  Generic g(*this, to.shape, std::vector<std::string>(to.rank(), "parallel"), none);
  std::string out = empty(to);
  std::string in = g.input(x, from, identityPoint(to.rank()));
  g.output(out, to, identityPoint(to.rank()));
  return g.finish({g.body().convert(from.dtype, to.dtype, in)}, loc, name)[0];
}

void FunctionEmitter::reduce(const Op &o, const std::unordered_map<ValueId, const Op *> &inlined, bool named) {
  const TensorType &in = type(o.operands[0]), &out = type(o.results[0]);
  DType acc = *o.acc;
  TensorType accType = TensorType::make(acc, out.shape);
  auto reduced = [&](size_t d) { return std::binary_search(o.dims.begin(), o.dims.end(), static_cast<int64_t>(d)); };
  // The result's name goes to the conversion from the accumulator, or to
  // the reduction itself when there is none.
  std::string name = isArg(o.combiner) ? "" : names_.of(o.results[0]);
  auto accumulated = [&] { return acc == out.dtype ? name : fresh(); };
  if (named && !isArg(o.combiner)) { // linalg.reduce: its loops visit each output's inputs in index order
    std::string init = filled(accType, identityEncoding(o.combiner, acc));
    std::string x = fresh(), a = fresh(), r = accumulated();
    Block b(names_, "        ", helpers_);
    std::string combined = b.binary(combineCode(o.combiner), acc, a, b.convert(in.dtype, acc, x));
    line(r + " = linalg.reduce ins(" + tensor(o.operands[0]) + " : " + mlirTensorType(in) + ") outs(" + init + " : " +
         mlirTensorType(accType) + ") dimensions = " + list(o.dims));
    raw("      (" + x + ": " + mlirElementType(in.dtype) + ", " + a + ": " + mlirElementType(acc) + ") {\n" + b.text() +
        "        linalg.yield " + combined + " : " + mlirElementType(acc) + "\n      }" + mlirLocation(o.loc) + "\n");
    define(o.results[0], convertAll(r, accType, out, o.loc, name));
    return;
  }
  std::vector<std::string> iterators;
  AffinePoint outPoint;
  for (size_t d = 0; d < in.rank(); ++d) {
    iterators.push_back(reduced(d) ? "reduction" : "parallel");
    if (!reduced(d))
      outPoint.push_back(affineDim(static_cast<int64_t>(d)));
  }
  Generic g(*this, in.shape, iterators, inlined);
  if (!isArg(o.combiner)) {
    std::string a = g.output(filled(accType, identityEncoding(o.combiner, acc)), accType, outPoint);
    std::string x = g.value(o.operands[0], identityPoint(in.rank()));
    Block &b = g.body();
    std::string r = g.finish({b.binary(combineCode(o.combiner), acc, a, b.convert(in.dtype, acc, x))}, o.loc,
                             accumulated())[0];
    define(o.results[0], convertAll(r, accType, out, o.loc, name));
    return;
  }
  // argmax / argmin: the best value so far and its row-major position
  // among the reduced axes; the first element is always taken, then a
  // strictly better one or the first NaN.
  TensorType positions = TensorType::make(DType::I64, out.shape);
  std::string best = g.output(filled(accType, identityEncoding(o.combiner, acc)), accType, outPoint);
  std::string where = g.output(filled(positions, 0), positions, outPoint);
  std::string x = g.value(o.operands[0], identityPoint(in.rank()));
  Block &b = g.body();
  std::string v = b.convert(in.dtype, acc, x);
  std::string position = b.constant(DType::I64, 0);
  int64_t stride = 1;
  for (size_t k = o.dims.size(); k-- > 0;) {
    size_t d = static_cast<size_t>(o.dims[k]);
    std::string term = b.op("arith.muli " + b.indexI64(static_cast<int64_t>(d)) + ", " +
                            b.constant(DType::I64, static_cast<uint64_t>(stride)) + " : i64");
    position = b.op("arith.addi " + position + ", " + term + " : i64");
    stride *= in.shape[d];
  }
  std::string first = b.op("arith.cmpi eq, " + position + ", " + b.constant(DType::I64, 0) + " : i64");
  std::string wins = b.compare(o.combiner == Combiner::ArgMax ? CompareDir::Gt : CompareDir::Lt, acc, v, best);
  if (isFloatType(acc)) {
    std::string vNaN = b.compare(CompareDir::Ne, acc, v, v), bestNaN = b.compare(CompareDir::Ne, acc, best, best);
    std::string notBestNaN = b.op("arith.xori " + bestNaN + ", " + b.constant("true", "i1") + " : i1");
    wins = b.op("arith.ori " + wins + ", " + b.op("arith.andi " + vNaN + ", " + notBestNaN + " : i1") + " : i1");
  }
  std::string take = b.op("arith.ori " + first + ", " + wins + " : i1");
  std::string newBest = b.select(acc, take, v, best);
  std::string newWhere = b.op("arith.select " + take + ", " + position + ", " + where + " : i64");
  std::vector<std::string> r = g.finish({newBest, newWhere}, o.loc, fresh());
  define(o.results[0], r[1]);
}

void FunctionEmitter::dot(const Op &o, const std::unordered_map<ValueId, const Op *> &inlined, bool named) {
  const TensorType &lhs = type(o.operands[0]), &rhs = type(o.operands[1]), &out = type(o.results[0]);
  DType acc = *o.acc;
  TensorType accType = TensorType::make(acc, out.shape);
  std::string name = names_.of(o.results[0]);
  auto accumulated = [&] { return acc == out.dtype ? name : fresh(); };
  std::string init = filled(accType, identityEncoding(Combiner::Sum, acc)); // -0 for floats
  bool plain = named && !isFp8Element(lhs.dtype); // linalg widens with arith.extf, which fp8 lacks on the CPU
  auto is = [](const std::vector<int64_t> &v, std::vector<int64_t> want) { return v == want; };
  std::string kind;
  if (plain && lhs.rank() == 2 && rhs.rank() == 2 && o.lhsBatch.empty() && is(o.lhsContract, {1}) && is(o.rhsContract, {0}))
    kind = "linalg.matmul";
  if (plain && lhs.rank() == 3 && rhs.rank() == 3 && is(o.lhsBatch, {0}) && is(o.rhsBatch, {0}) && is(o.lhsContract, {2}) &&
      is(o.rhsContract, {1}))
    kind = "linalg.batch_matmul";
  if (!kind.empty()) { // its loops: the contracting one innermost, in index order
    std::string r = accumulated();
    line(r + " = " + kind + " ins(" + tensor(o.operands[0]) + ", " + tensor(o.operands[1]) + " : " + mlirTensorType(lhs) +
         ", " + mlirTensorType(rhs) + ") outs(" + init + " : " + mlirTensorType(accType) + ") -> " +
         mlirTensorType(accType) + mlirLocation(o.loc));
    define(o.results[0], convertAll(r, accType, out, o.loc, name));
    return;
  }
  // Loops: batch, lhs free, rhs free (the result's order), then the
  // contracting dimensions, innermost, in row-major order.
  auto freeDims = [](const TensorType &t, const std::vector<int64_t> &batch, const std::vector<int64_t> &contract) {
    std::vector<int64_t> free;
    for (int64_t d = 0; d < static_cast<int64_t>(t.rank()); ++d)
      if (std::find(batch.begin(), batch.end(), d) == batch.end() &&
          std::find(contract.begin(), contract.end(), d) == contract.end())
        free.push_back(d);
    return free;
  };
  std::vector<int64_t> lhsFree = freeDims(lhs, o.lhsBatch, o.lhsContract), rhsFree = freeDims(rhs, o.rhsBatch, o.rhsContract);
  size_t nb = o.lhsBatch.size(), nl = lhsFree.size(), nr = rhsFree.size(), nc = o.lhsContract.size();
  std::vector<int64_t> ranges;
  for (const auto &[t, dims] : {std::pair{&lhs, &o.lhsBatch}, {&lhs, &lhsFree}, {&rhs, &rhsFree}, {&lhs, &o.lhsContract}})
    for (int64_t d : *dims)
      ranges.push_back(t->shape[static_cast<size_t>(d)]);
  auto point = [&](const TensorType &t, const std::vector<int64_t> &batch, const std::vector<int64_t> &free,
                   size_t freeFirst, const std::vector<int64_t> &contract) {
    AffinePoint p(t.rank());
    for (size_t k = 0; k < batch.size(); ++k)
      p[static_cast<size_t>(batch[k])] = affineDim(static_cast<int64_t>(k));
    for (size_t k = 0; k < free.size(); ++k)
      p[static_cast<size_t>(free[k])] = affineDim(static_cast<int64_t>(freeFirst + k));
    for (size_t k = 0; k < contract.size(); ++k)
      p[static_cast<size_t>(contract[k])] = affineDim(static_cast<int64_t>(nb + nl + nr + k));
    return p;
  };
  std::vector<std::string> iterators(nb + nl + nr, "parallel");
  iterators.insert(iterators.end(), nc, "reduction");
  Generic g(*this, ranges, iterators, inlined);
  std::string a = g.output(init, accType, identityPoint(nb + nl + nr));
  std::string x = g.value(o.operands[0], point(lhs, o.lhsBatch, lhsFree, nb, o.lhsContract));
  std::string y = g.value(o.operands[1], point(rhs, o.rhsBatch, rhsFree, nb + nl, o.rhsContract));
  Block &b = g.body();
  std::string product = b.binary(BinaryCode::Mul, acc, b.convert(lhs.dtype, acc, x), b.convert(rhs.dtype, acc, y));
  std::string r = g.finish({b.binary(BinaryCode::Add, acc, a, product)}, o.loc, accumulated())[0];
  define(o.results[0], convertAll(r, accType, out, o.loc, name));
}

bool FunctionEmitter::oneGeneric(const Op &o) {
  const Region &region = *o.region;
  const Op &ret = region.ops.back();
  if (ret.kind != OpKind::Return || ret.operands.size() != 1 || o.results.size() != 1)
    return false;
  std::unordered_map<ValueId, const Op *> inlined;
  const Op *root = nullptr;
  for (size_t i = 0; i + 1 < region.ops.size(); ++i) {
    const Op &inner = region.ops[i];
    if (inner.results.size() != 1)
      return false;
    bool isRoot = inner.results[0] == ret.operands[0];
    bool rootKind = inner.kind == OpKind::Reduce || inner.kind == OpKind::DotGeneral;
    if (!inlinable(inner.kind) && !(isRoot && rootKind))
      return false;
    if (isRoot)
      root = &inner;
    if (inlinable(inner.kind))
      inlined[inner.results[0]] = &inner;
  }
  if (!root)
    return false;
  names_.holds(root->results[0], o.results[0]);
  if (root->kind == OpKind::DotGeneral) {
    // A contraction's body runs once per (result element, contracting
    // index): an operand computed there would be recomputed for every
    // element of the other operand's free dimensions. Each operand whose
    // producers compute (beyond index maps and conversions) is one generic
    // of its own first, as the CPU schedule keeps them in a buffer; the
    // contraction reads it through its index map.
    for (ValueId operand : root->operands) {
      std::vector<ValueId> work{operand};
      bool computes = false;
      while (!work.empty() && !computes) {
        auto def = inlined.find(work.back());
        work.pop_back();
        if (def == inlined.end())
          continue;
        OpKind k = def->second->kind;
        computes = k == OpKind::Unary || k == OpKind::Binary || k == OpKind::Compare || k == OpKind::Select;
        work.insert(work.end(), def->second->operands.begin(), def->second->operands.end());
      }
      if (!computes || !inlined.count(operand))
        continue;
      line("// fusion: the contraction's operand, computed once");
      define(operand, elementwise(*inlined.at(operand), inlined, names_.of(operand)));
      inlined.erase(operand);
    }
    line("// fusion of " + std::to_string(region.ops.size() - 1) + " operations: the contraction as one linalg.generic");
    dot(*root, inlined, false);
    define(o.results[0], tensor(root->results[0]));
    return true;
  }
  line("// fusion of " + std::to_string(region.ops.size() - 1) + " operations: one linalg.generic");
  if (root->kind == OpKind::Reduce)
    reduce(*root, inlined, false);
  else
    define(root->results[0], elementwise(*root, inlined, names_.of(root->results[0])));
  define(o.results[0], tensor(root->results[0]));
  return true;
}

void FunctionEmitter::fusion(const Op &o) {
  const Region &region = *o.region;
  for (size_t i = 0; i < region.params.size(); ++i)
    define(region.params[i], tensor(o.operands[i]));
  if (oneGeneric(o))
    return;
  line("// fusion of " + std::to_string(region.ops.size() - 1) + " operations, one by one");
  const Op &ret = region.ops.back();
  for (size_t k = 0; k < o.results.size(); ++k)
    names_.holds(ret.operands[k], o.results[k]);
  for (size_t i = 0; i + 1 < region.ops.size(); ++i)
    op(region.ops[i]);
  for (size_t k = 0; k < o.results.size(); ++k)
    define(o.results[k], tensor(ret.operands[k]));
}

/// A reshape to another shape: tensor.expand_shape, collapse_shape, or
/// both.
std::string FunctionEmitter::reshape(const Op &o) {
  const TensorType &in = type(o.operands[0]), &out = type(o.results[0]);
  std::string loc = mlirLocation(o.loc);
  std::string x = tensor(o.operands[0]), r = names_.of(o.results[0]);
  auto all = [](size_t n) {
    std::vector<int64_t> v;
    for (size_t i = 0; i < n; ++i)
      v.push_back(static_cast<int64_t>(i));
    return list(v);
  };
  if (in.rank() == 0) {
    line(r + " = tensor.expand_shape " + x + " [] output_shape " + list(out.shape) + " : " + mlirTensorType(in) +
         " into " + mlirTensorType(out) + loc);
  } else if (out.rank() == 0) {
    line(r + " = tensor.collapse_shape " + x + " [] : " + mlirTensorType(in) + " into " + mlirTensorType(out) + loc);
  } else { // through the row-major 1-D tensor of its elements
    TensorType flat = TensorType::make(out.dtype, {*out.elementCount()});
    if (in.rank() != 1) {
      std::string c = out.rank() == 1 ? r : fresh();
      line(c + " = tensor.collapse_shape " + x + " [" + all(in.rank()) + "] : " + mlirTensorType(in) + " into " +
           mlirTensorType(flat) + loc);
      x = c;
    }
    if (out.rank() != 1)
      line(r + " = tensor.expand_shape " + x + " [" + all(out.rank()) + "] output_shape " + list(out.shape) +
           " : " + mlirTensorType(flat) + " into " + mlirTensorType(out) + loc);
  }
  return r;
}

void FunctionEmitter::op(const Op &o) {
  auto in = [&](size_t i) -> const TensorType & { return type(o.operands[i]); };
  auto result = [&]() -> const TensorType & { return type(o.results[0]); };
  auto alias = [&]() { define(o.results[0], tensor(o.operands[0])); };
  std::string loc = mlirLocation(o.loc);
  switch (o.kind) {
  case OpKind::Unary: case OpKind::Binary: case OpKind::Compare: case OpKind::Select: case OpKind::Convert:
  case OpKind::Iota:
    define(o.results[0], elementwise(o, {{o.results[0], &o}}, names_.of(o.results[0])));
    return;
  case OpKind::Constant: define(o.results[0], constantTensor(o)); return;
  case OpKind::BroadcastInDim: {
    bool expands = false;
    for (size_t k = 0; k < in(0).rank(); ++k)
      expands = expands || (in(0).shape[k] == 1 && result().shape[static_cast<size_t>(o.dims[k])] != 1);
    if (expands) { // size-1 dimensions stretched: an indexing map reading index 0
      define(o.results[0], elementwise(o, {{o.results[0], &o}}, names_.of(o.results[0])));
      return;
    }
    if (in(0).rank() == result().rank())
      return alias();
    std::vector<int64_t> added;
    for (int64_t d = 0; d < static_cast<int64_t>(result().rank()); ++d)
      if (std::find(o.dims.begin(), o.dims.end(), d) == o.dims.end())
        added.push_back(d);
    std::string e = empty(result()), r = names_.of(o.results[0]);
    line(r + " = linalg.broadcast ins(" + tensor(o.operands[0]) + " : " + mlirTensorType(in(0)) + ") outs(" + e + " : " +
         mlirTensorType(result()) + ") dimensions = " + list(added) + loc);
    define(o.results[0], r);
    return;
  }
  case OpKind::Reshape:
    if (in(0).shape == result().shape)
      return alias();
    define(o.results[0], reshape(o));
    return;
  case OpKind::Transpose: {
    std::string e = empty(result()), r = names_.of(o.results[0]);
    line(r + " = linalg.transpose ins(" + tensor(o.operands[0]) + " : " + mlirTensorType(in(0)) + ") outs(" + e + " : " +
         mlirTensorType(result()) + ") permutation = " + list(o.dims) + loc);
    define(o.results[0], r);
    return;
  }
  case OpKind::Slice: {
    if (in(0).shape == result().shape)
      return alias();
    std::vector<int64_t> sizes, ones(result().rank(), 1);
    for (size_t i = 0; i < result().rank(); ++i)
      sizes.push_back(o.limits[i] - o.dims[i]);
    std::string r = names_.of(o.results[0]);
    line(r + " = tensor.extract_slice " + tensor(o.operands[0]) + list(o.dims) + " " + list(sizes) + " " + list(ones) + " : " +
         mlirTensorType(in(0)) + " to " + mlirTensorType(result()) + loc);
    define(o.results[0], r);
    return;
  }
  case OpKind::Concatenate: {
    if (o.operands.size() == 1)
      return alias();
    auto [names, types] = operandList(o.operands);
    std::string r = names_.of(o.results[0]);
    line(r + " = tensor.concat dim(" + std::to_string(o.axis) + ") " + names + " : (" + types + ") -> " +
         mlirTensorType(result()) + loc);
    define(o.results[0], r);
    return;
  }
  case OpKind::Reduce: reduce(o, {}, true); return;
  case OpKind::DotGeneral: dot(o, {}, true); return;
  case OpKind::Copy: case OpKind::Relayout: // a tensor is a value: the same one, whatever the layout
    return alias();
  case OpKind::Call: {
    std::vector<std::string> args, argTypes, resultTypes;
    for (ValueId v : o.operands) {
      args.push_back(tensor(v));
      argTypes.push_back(mlirTensorType(type(v)));
    }
    for (const TensorType &t : o.resultTypes)
      resultTypes.push_back(mlirTensorType(t));
    std::string r = o.results.size() == 1 ? names_.of(o.results[0]) : o.results.empty() ? "" : fresh();
    std::string call = detail::callText(symbols_.at(o.callee), args, argTypes, resultTypes);
    line(detail::resultsDefined(r, o.results.size()) + "func.call " + call + loc);
    std::vector<std::string> names = detail::resultNames(r, o.results.size());
    for (size_t k = 0; k < o.results.size(); ++k)
      define(o.results[k], names[k]);
    return;
  }
  case OpKind::Return: {
    auto [values, types] = operandList(o.operands);
    line("return" + (values.empty() ? "" : " " + values + " : " + types) + loc);
    return;
  }
  case OpKind::Fusion: fusion(o); return;
  }
}

void FunctionEmitter::ops(const std::vector<Op> &list) {
  for (const Op &o : list)
    op(o);
}

std::string FunctionEmitter::emit() {
  std::vector<std::string> params, results;
  for (ValueId p : f_.params) {
    define(p, names_.of(p));
    params.push_back(tensor(p) + ": " + mlirTensorType(type(p)));
  }
  for (const TensorType &t : f_.resultTypes)
    results.push_back(mlirTensorType(t));
  ops(f_.ops);
  return detail::functionHead(isPublic_ ? "" : "private ", symbols_.at(f_.name), params, results) + " {\n" + out_ +
         "  }" + mlirLocation(f_.loc) + "\n";
}

//===-- The module --------------------------------------------------------===//

/// `@main`: the arguments as constants, the call, and each result's
/// encodings printed as unsigned integers, one line per result.
std::string emitMain(const Function &entry, const std::string &symbol, const std::vector<std::vector<uint64_t>> &args,
                     Helpers &helpers) {
  SsaNames names;
  Block b(names, "    ", helpers);
  std::vector<std::string> results =
      detail::writeMainCall(b, entry, symbol, args, Integers::Signless, "arith.constant", "func.call");
  size_t n = results.size();
  std::string print = helpers.use("keel.print_bits");
  for (size_t k = 0; k < n; ++k) {
    const TensorType &t = entry.resultTypes[k];
    const std::string &r = results[k];
    TensorType bits = TensorType::make(DType::I64, t.shape);
    std::string e = b.op("tensor.empty() : " + mlirTensorType(bits));
    std::string id = affineMapText(t.rank(), identityPoint(t.rank()));
    std::string iterators;
    for (size_t i = 0; i < t.rank(); ++i)
      iterators += std::string(i ? ", " : "") + "\"parallel\"";
    std::string x = b.fresh(), o = b.fresh();
    Block body(names, "      ", helpers);
    std::string w = x;
    if (std::optional<fp::Format> f = formatOf(t.dtype)) {
      std::string storage = "i" + std::to_string(fp::info(*f).storageBits);
      w = body.op("arith.bitcast " + x + " : " + mlirElementType(t.dtype) + " to " + storage);
      if (storage != "i64")
        w = body.op("arith.extui " + w + " : " + storage + " to i64");
    } else if (mlirElementType(t.dtype) != "i64") {
      w = body.op("arith.extui " + x + " : " + mlirElementType(t.dtype) + " to i64");
    }
    std::string g = b.op("linalg.generic {indexing_maps = [" + id + ", " + id + "], iterator_types = [" + iterators +
                         "]} ins(" + r + " : " + mlirTensorType(t) + ") outs(" + e + " : " + mlirTensorType(bits) +
                         ") {\n    ^bb0(" + x + ": " + mlirElementType(t.dtype) + ", " + o + ": i64):\n" + body.text() +
                         "      linalg.yield " + w + " : i64\n    } -> " + mlirTensorType(bits));
    TensorType flat = TensorType::make(DType::I64, {*t.elementCount()});
    std::string v = g;
    if (t.rank() == 0)
      v = b.op("tensor.expand_shape " + g + " [] output_shape [1] : " + mlirTensorType(bits) + " into " + mlirTensorType(flat));
    else if (t.rank() > 1) {
      std::string dims;
      for (size_t i = 0; i < t.rank(); ++i)
        dims += (i ? ", " : "") + std::to_string(i);
      v = b.op("tensor.collapse_shape " + g + " [[" + dims + "]] : " + mlirTensorType(bits) + " into " + mlirTensorType(flat));
    }
    std::string dynamic = b.op("tensor.cast " + v + " : " + mlirTensorType(flat) + " to tensor<?xi64>");
    b.line("func.call " + print + "(" + dynamic + ") : (tensor<?xi64>) -> ()");
  }
  b.line("return");
  return "  func.func @main() {\n" + b.text() + "  }\n";
}

std::string indented(const std::string &text) {
  std::string out;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos)
      end = text.size();
    out += "  " + text.substr(start, end - start) + "\n";
    start = end + 1;
  }
  return out;
}

} // namespace

const transforms::Capabilities &linalgCapabilities() {
  static const transforms::Capabilities caps = [] {
    transforms::Capabilities c;
    c.exit = "linalg";
    c.basicArithmetic = {DType::F32, DType::F64}; // the rest through f32, as legalization writes it
    c.mathFunctions = {DType::F32, DType::F64};
    c.saturatingFp8e4m3fn = true;                 // @keel.round.fp8e4m3fn saturates
    c.convertingIota = true;                      // linalg.index converted in the body
    return c;
  }();
  return caps;
}

LinalgOutput emitLinalg(const Module &m, const LinalgOptions &options) {
  LinalgOutput out;
  std::vector<const Function *> functions = reachableFrom(m, options.entry);
  // Symbols: Keel's names, unless one is a name the module itself needs
  // (the runner's printing functions, Keel's math functions, @main, the
  // `keel.` helpers).
  std::set<std::string> reserved{"printU64", "printOpen", "printComma", "printClose", "printNewline"};
  for (std::string_view fn : {
#define KEEL_MATH_FUNCTION(Enum, name, mlir, stablehlo, summary) std::string_view(#name),
#include "keel/support/MathFunctions.def"
#undef KEEL_MATH_FUNCTION
           std::string_view("pow")})
    for (const char *w : {"_f32", "_f64"})
      reserved.insert("keel_" + std::string(fn) + w);
  if (options.mainArguments)
    reserved.insert("main");
  std::map<std::string, std::string> symbols = detail::symbolTable(functions, std::move(reserved));
  Helpers helpers(options.keelMath);
  std::string body;
  for (const Function *f : functions)
    body += FunctionEmitter(*f, helpers, symbols, f == functions.front()).emit();
  if (options.mainArguments)
    body += emitMain(*functions.front(), symbols.at(options.entry), *options.mainArguments, helpers);
  body += indented(helpers.text());
  out.text = "// Keel's MLIR linalg exit: @" + symbols.at(options.entry) +
             (options.source.empty() ? "" : " of " + options.source) +
             " and the functions it calls.\n"
             "// Upstream dialects only; docs/exits.md gives the mlir-opt pipeline and the\n"
             "// mlir-runner line that run it" +
             (options.keelMath ? " (with libkeel_math.so for Keel's own transcendentals)" : "") +
             ".\nmodule {\n" + body + "}\n";
  return out;
}

} // namespace keel::exits
