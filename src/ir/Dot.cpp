//===- Dot.cpp - Tensor IR as a Graphviz dataflow graph -------------------===//
//
// One cluster per function, one nested cluster per fusion region; a node per
// parameter and per operation (labelled as `keel ir` prints it), an edge per
// value read, labelled with its type. A region's parameters are not nodes:
// the edge runs from the operation outside that made the value to the one
// inside that reads it. Barriers (copy, relayout, call, return) are shaded.
//
//===----------------------------------------------------------------------===//
#include "keel/ir/Text.h"

#include "keel/ir/Infer.h"

#include <map>

namespace keel::ir {

namespace {

std::string quoted(const std::string &s) {
  std::string out = "\"";
  for (char c : s)
    out += (c == '"' || c == '\\') ? std::string("\\") + c : std::string(1, c);
  return out + "\"";
}

class DotWriter {
public:
  explicit DotWriter(const Function &f) : f_(f), names_(displayNames(f)) {}

  /// The edges, written after all the clusters, outside them (they cross
  /// from one cluster to another).
  const std::string &edges() const { return edges_; }

  std::string run(size_t index) {
    prefix_ = "f" + std::to_string(index) + ".";
    out_ += "  subgraph " + quoted("cluster_" + prefix_) + " {\n    label=" + quoted("@" + f_.name) + ";\n";
    for (ValueId p : f_.params) {
      std::string node = prefix_ + "v" + std::to_string(p);
      out_ += "    " + quoted(node) + " [shape=ellipse, label=" +
              quoted(names_[p] + ": " + typeText(f_.valueTypes[p])) + "];\n";
      source_[p] = node;
    }
    ops(f_.ops, "    ");
    out_ += "  }\n";
    return out_;
  }

private:
  void ops(const std::vector<Op> &list, const std::string &indent) {
    for (const Op &o : list) {
      if (o.kind == OpKind::Fusion && o.region) {
        std::string cluster = prefix_ + "r" + std::to_string(regions_++);
        out_ += indent + "subgraph " + quoted("cluster_" + cluster) + " {\n" + indent +
                "  label=\"fusion\"; style=\"rounded,filled\"; fillcolor=\"#e8f0fe\"; color=\"#4a7bd0\";\n";
        for (size_t i = 0; i < o.region->params.size(); ++i)
          source_[o.region->params[i]] = source_[o.operands[i]];
        ops(o.region->ops, indent + "  ");
        out_ += indent + "}\n";
        const Op &ret = o.region->ops.back();
        for (size_t i = 0; i < o.results.size(); ++i)
          source_[o.results[i]] = source_[ret.operands[i]];
        continue;
      }
      if (o.kind == OpKind::Return && &list != &f_.ops)
        continue; // a region's return: its values leave through the fusion
      std::string node = prefix_ + "n" + std::to_string(nodes_++);
      std::string label;
      for (ValueId r : o.results)
        label += (label.empty() ? "" : ", ") + names_[r];
      label += (label.empty() ? "" : " = ") + opName(o);
      if (o.kind == OpKind::Call)
        label += " @" + o.callee;
      bool barrier = opInfo(o.kind).role == FusionRole::Barrier;
      out_ += indent + quoted(node) + " [label=" + quoted(label) +
              (barrier ? ", style=filled, fillcolor=\"#f4cccc\"" : "") + "];\n";
      for (ValueId v : o.operands)
        if (auto it = source_.find(v); it != source_.end())
          edges_ += "  " + quoted(it->second) + " -> " + quoted(node) + " [label=" +
                    quoted(typeText(f_.valueTypes[v])) + "];\n";
      for (ValueId r : o.results)
        source_[r] = node;
    }
  }

  const Function &f_;
  std::unordered_map<ValueId, std::string> names_;
  std::map<ValueId, std::string> source_; ///< the node that made each value
  std::string prefix_, out_, edges_;
  size_t nodes_ = 0, regions_ = 0;
};

} // namespace

std::string printDot(const Module &m) {
  std::string out = "digraph keel {\n  rankdir=TB;\n  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
                    "  edge [fontname=\"monospace\", fontsize=9];\n";
  std::string edges;
  for (size_t i = 0; i < m.functions.size(); ++i) {
    DotWriter w(m.functions[i]);
    out += w.run(i);
    edges += w.edges();
  }
  return out + edges + "}\n";
}

} // namespace keel::ir
