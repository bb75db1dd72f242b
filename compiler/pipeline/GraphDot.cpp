//===- GraphDot.cpp - a drawing of the model graph (Graphviz) -------------===//
//
// Labels are DOT's quoted strings (not HTML labels), so escaping is: `"` and
// `\` get a backslash, line breaks are DOT's `\n`, and bytes that are not
// printable text (control bytes, invalid UTF-8) are written as visible
// `\xNN`. Names come from checkpoints and user IR, so every piece of text a
// label takes from the model goes through escapeLabel. Node ids are made
// here (in0, n12, out0) and never need escaping.
//
//===----------------------------------------------------------------------===//

#include "compiler/pipeline/GraphDot.h"
#include "dialects/tfm/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallString.h"
#include "llvm/Support/ConvertUTF.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include <cstdio>

using namespace mlir;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace attune::pipeline {
namespace {

// Colours, one per kind of node; the legend repeats them.
constexpr const char *kInputColour = "#bcd4e6";
constexpr const char *kOutputColour = "#c7e9c0";
constexpr const char *kWeightColour = "#f3f3f3";
constexpr const char *kOpColour = "#ffffff";
constexpr const char *kAttentionColour = "#f4a261";

/// `text` made safe inside a DOT quoted string.
std::string escapeLabel(llvm::StringRef text) {
  // Valid UTF-8 passes through (Graphviz reads UTF-8); anything else is
  // shown byte by byte rather than handed to Graphviz to reject.
  const llvm::UTF8 *begin = text.bytes_begin();
  bool utf8 = llvm::isLegalUTF8String(&begin, text.bytes_end());
  std::string out;
  out.reserve(text.size());
  for (unsigned char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += char(c);
    } else if (c == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8)) {
      // `\\` is DOT's backslash, so the label reads \x1b.
      char hex[8];
      std::snprintf(hex, sizeof(hex), "\\\\x%02x", unsigned(c));
      out += hex;
    } else {
      out += char(c);
    }
  }
  return out;
}

/// Label lines, each escaped, joined by DOT's line break.
std::string joinLines(llvm::ArrayRef<std::string> lines) {
  std::string out;
  for (const std::string &line : lines) {
    if (!out.empty())
      out += "\\n";
    out += escapeLabel(line);
  }
  return out;
}

/// `tensor<?x12x?x64xf32>` as `?x12x?x64xf32`; other types as MLIR prints.
std::string shapeString(Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (auto ranked = dyn_cast<RankedTensorType>(type)) {
    for (int64_t d : ranked.getShape()) {
      if (ShapedType::isDynamic(d))
        os << "?";
      else
        os << d;
      os << "x";
    }
    os << ranked.getElementType();
  } else {
    os << type;
  }
  return text;
}

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", v);
  return text;
}

/// An attribute value as a short label fragment.
std::string attrString(Attribute attr) {
  if (auto b = dyn_cast<BoolAttr>(attr))
    return b.getValue() ? "true" : "false";
  if (auto i = dyn_cast<IntegerAttr>(attr))
    return std::to_string(i.getInt());
  if (auto f = dyn_cast<FloatAttr>(attr))
    return number(f.getValueAsDouble());
  if (auto s = dyn_cast<StringAttr>(attr))
    return s.getValue().str();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << attr;
  return text;
}

/// `base=10000, rotary_dims=64` (the dictionary's order: sorted by name).
std::string dictString(DictionaryAttr dict, llvm::StringRef skip = "") {
  std::string out;
  for (NamedAttribute named : dict) {
    if (named.getName() == skip)
      continue;
    if (!out.empty())
      out += ", ";
    out += named.getName().str() + "=" + attrString(named.getValue());
  }
  return out;
}

/// The label lines of a tfm.attention: what the kernel will evaluate.
void attentionLines(tfm::AttentionOp op, std::vector<std::string> &lines) {
  lines.push_back(std::string(op.getCausal() ? "causal" : "non-causal") +
                  ", scale " + number(op.getScale().convertToDouble()) +
                  (op.getLayout() == tfm::HeadLayoutKind::bshd ? ", [B, S, H, D]" : ""));
  if (ArrayAttr modifiers = op.getModifiersAttr()) {
    std::string line = "modifiers: ";
    for (auto [i, attr] : llvm::enumerate(modifiers)) {
      if (i)
        line += "; ";
      auto dict = dyn_cast<DictionaryAttr>(attr);
      if (!dict) {
        line += attrString(attr);
        continue;
      }
      Attribute kind = dict.get("kind");
      line += kind ? attrString(kind) : std::string("?");
      std::string params = dictString(dict, "kind");
      if (!params.empty())
        line += "(" + params + ")";
    }
    lines.push_back(line);
  }
  if (DictionaryAttr rope = op.getRopeAttr())
    lines.push_back("rope: " + dictString(rope));
}

/// The operand's role, for the edges into an attention node.
std::string attentionOperandRole(tfm::AttentionOp op, unsigned index) {
  static const char *const kQkv[] = {"q", "k", "v"};
  if (index < 3)
    return kQkv[index];
  index -= 3;
  if (op.getMask()) {
    if (index == 0)
      return "mask";
    --index;
  }
  if (op.getKeyPaddingMask()) {
    if (index == 0)
      return "key padding";
    --index;
  }
  return "modifier";
}

bool isSmall(Operation *op) {
  return isa<tfm::WeightOp, arith::ConstantOp>(op);
}

/// The node id of `value`'s producer, or "" for a value this drawing does
/// not show (one defined inside a nested region).
std::string sourceId(Value value,
                     const llvm::DenseMap<Operation *, unsigned> &ids,
                     Block &entry) {
  if (auto arg = dyn_cast<BlockArgument>(value))
    return arg.getOwner() == &entry ? "in" + std::to_string(arg.getArgNumber())
                                    : std::string();
  auto it = ids.find(value.getDefiningOp());
  return it == ids.end() ? std::string() : "n" + std::to_string(it->second);
}

/// An input's or output's tfm.name, else `fallback`.
std::string nameOr(DictionaryAttr attrs, llvm::StringRef fallback) {
  if (attrs)
    if (auto name = attrs.getAs<StringAttr>("tfm.name"))
      return name.getValue().str();
  return fallback.str();
}

} // namespace

std::string checkGraphPath(llvm::StringRef graphPath, GraphFormat &format) {
  std::string extension = path::extension(graphPath).lower();
  if (extension == ".dot") {
    format = GraphFormat::Dot;
    return "";
  }
  if (extension != ".svg")
    return "expected a file ending in .dot (Graphviz source) or .svg (drawn "
           "by Graphviz's dot), got '" +
           graphPath.str() + "'";
  format = GraphFormat::Svg;
  if (!llvm::sys::findProgramByName("dot"))
    return "drawing '" + graphPath.str() +
           "' needs Graphviz's 'dot' program, which is not on PATH: install "
           "Graphviz (apt-get install graphviz), or write a .dot file and "
           "render it elsewhere (dot -Tsvg FILE.dot -o FILE.svg)";
  return "";
}

void printGraphDot(func::FuncOp func, llvm::raw_ostream &os) {
  Block &entry = func.getBody().front();
  // Top-level ops only: tfm ops have no regions, and the return is drawn as
  // the output nodes.
  std::vector<Operation *> ops;
  for (Operation &op : entry)
    if (!isa<func::ReturnOp>(op))
      ops.push_back(&op);
  llvm::DenseMap<Operation *, unsigned> ids;
  for (auto [i, op] : llvm::enumerate(ops))
    ids[op] = i;
  unsigned fused = llvm::count_if(
      ops, [](Operation *op) { return isa<tfm::AttentionOp>(op); });
  bool hasSmall = llvm::any_of(ops, isSmall);

  std::string name = escapeLabel(func.getSymName());
  os << "// The tfm graph of @" << name
     << " after attune-compile's graph passes.\n"
     << "// Render: dot -Tsvg FILE.dot -o FILE.svg\n"
     << "digraph \"" << name << "\" {\n"
     << "  graph [label=\"@" << name << " after the graph passes: " << fused
     << " fused attention site" << (fused == 1 ? "" : "s")
     << "\", labelloc=t, fontname=\"Helvetica\", rankdir=TB];\n"
     << "  node [shape=box, style=\"rounded,filled\", fillcolor=\"" << kOpColour
     << "\", fontname=\"Helvetica\", fontsize=11];\n"
     << "  edge [color=\"#555555\", arrowsize=0.7, fontname=\"Helvetica\", "
        "fontsize=9];\n";

  // Inputs and outputs: house shapes, pointing into and out of the graph.
  for (BlockArgument arg : entry.getArguments()) {
    unsigned i = arg.getArgNumber();
    std::string label =
        joinLines({nameOr(func.getArgAttrDict(i), "input " + std::to_string(i)),
                   shapeString(arg.getType())});
    os << "  in" << i << " [label=\"" << label
       << "\", shape=invhouse, style=filled, fillcolor=\"" << kInputColour
       << "\", class=\"input\"];\n";
  }

  for (Operation *op : ops) {
    std::vector<std::string> lines;
    llvm::StringRef opName = op->getName().getStringRef();
    opName.consume_front("tfm.");
    opName.consume_front("arith.");
    lines.push_back(opName.str());
    if (auto weight = dyn_cast<tfm::WeightOp>(op))
      lines.push_back(weight.getName().str() +
                      (weight.getTranspose() ? " (transposed)" : ""));
    for (Type type : op->getResultTypes())
      lines.push_back(shapeString(type));
    if (auto constant = dyn_cast<arith::ConstantOp>(op))
      if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
        if (dense.isSplat() && isa<FloatType>(dense.getElementType()))
          lines.push_back(
              "= " +
              number(dense.getSplatValue<llvm::APFloat>().convertToDouble()));
    auto attention = dyn_cast<tfm::AttentionOp>(op);
    if (attention)
      attentionLines(attention, lines);

    os << "  n" << ids[op] << " [label=\"" << joinLines(lines) << "\"";
    if (attention)
      os << ", fillcolor=\"" << kAttentionColour
         << "\", penwidth=2, class=\"fused_attention\"";
    else if (isSmall(op))
      os << ", fillcolor=\"" << kWeightColour
         << "\", fontsize=8, height=0.3, margin=\"0.05,0.02\"";
    os << "];\n";
  }

  Operation *terminator = entry.getTerminator();
  for (auto [i, value] : llvm::enumerate(terminator->getOperands())) {
    std::string label = joinLines(
        {nameOr(func.getResultAttrDict(i), "output " + std::to_string(i)),
         shapeString(value.getType())});
    os << "  out" << i << " [label=\"" << label
       << "\", shape=house, style=filled, fillcolor=\"" << kOutputColour
       << "\", class=\"output\"];\n";
  }

  // Edges, in program order of their users.
  for (Operation *op : ops) {
    auto attention = dyn_cast<tfm::AttentionOp>(op);
    for (OpOperand &use : op->getOpOperands()) {
      std::string from = sourceId(use.get(), ids, entry);
      if (from.empty())
        continue;
      os << "  " << from << " -> n" << ids[op];
      if (attention)
        os << " [label=\""
           << escapeLabel(
                  attentionOperandRole(attention, use.getOperandNumber()))
           << "\"]";
      os << ";\n";
    }
  }
  for (auto [i, value] : llvm::enumerate(terminator->getOperands())) {
    std::string from = sourceId(value, ids, entry);
    if (!from.empty())
      os << "  " << from << " -> out" << i << ";\n";
  }

  // The legend lists the kinds of node this drawing has, fused attention
  // only where there is some, so an unfused build's picture says nothing
  // about fusion beyond the count in the title.
  os << "  subgraph cluster_legend {\n"
     << "    graph [label=\"legend\", style=dashed, fontsize=10];\n"
     << "    node [fontsize=9, height=0.3];\n"
     << "    legend_input [label=\"function input (tfm.name)\", "
        "shape=invhouse, style=filled, fillcolor=\""
     << kInputColour << "\"];\n"
     << "    legend_op [label=\"op (result shape)\"];\n";
  if (hasSmall)
    os << "    legend_weight [label=\"weight / constant\", fillcolor=\""
       << kWeightColour << "\"];\n";
  if (fused)
    os << "    legend_attention [label=\"fused attention (tfm.attention)\", "
          "fillcolor=\""
       << kAttentionColour << "\", penwidth=2];\n";
  os << "    legend_output [label=\"function output (tfm.name)\", "
        "shape=house, style=filled, fillcolor=\""
     << kOutputColour << "\"];\n"
     << "  }\n"
     << "}\n";
}

std::string writeGraph(func::FuncOp func, llvm::StringRef graphPath) {
  GraphFormat format;
  if (std::string error = checkGraphPath(graphPath, format); !error.empty())
    return error;
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    printGraphDot(func, os);
  }
  auto writeText = [](llvm::StringRef file, llvm::StringRef contents) {
    std::error_code ec;
    llvm::raw_fd_ostream os(file, ec, fs::OF_Text);
    if (!ec) {
      os << contents;
      os.close();
      ec = os.error();
    }
    return ec ? "cannot write '" + file.str() + "': " + ec.message()
              : std::string();
  };
  if (format == GraphFormat::Dot)
    return writeText(graphPath, text);

  // SVG: the DOT text through Graphviz. checkGraphPath found `dot`.
  llvm::ErrorOr<std::string> dot = llvm::sys::findProgramByName("dot");
  if (!dot)
    return "cannot find Graphviz's 'dot' on PATH";
  llvm::SmallString<128> source, messages;
  if (std::error_code ec =
          fs::createTemporaryFile("attune-graph", "dot", source))
    return "cannot create a temporary file: " + ec.message();
  llvm::FileRemover removeSource(source);
  if (std::error_code ec =
          fs::createTemporaryFile("attune-graph", "log", messages))
    return "cannot create a temporary file: " + ec.message();
  llvm::FileRemover removeMessages(messages);
  if (std::string error = writeText(source, text); !error.empty())
    return error;
  std::string output = graphPath.str();
  llvm::StringRef args[] = {*dot, "-Tsvg", "-o", output, source};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, std::nullopt,
                                                llvm::StringRef(messages)};
  std::string execError;
  int rc = llvm::sys::ExecuteAndWait(*dot, args, /*Env=*/std::nullopt,
                                     redirects, /*SecondsToWait=*/0,
                                     /*MemoryLimit=*/0, &execError);
  if (rc != 0) {
    std::string log;
    if (auto buffer = llvm::MemoryBuffer::getFile(messages))
      log = (*buffer)->getBuffer().trim().str();
    return "Graphviz's dot could not draw '" + output + "'" +
           (rc < 0 ? ": " + execError
                   : " (exit " + std::to_string(rc) + ")" +
                         (log.empty() ? "" : ": " + log));
  }
  return "";
}

} // namespace attune::pipeline
