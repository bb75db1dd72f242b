//===- GraphDot.h - a drawing of the model graph (Graphviz) -----*- C++ -*-===//
//
// `attune-compile --graph=FILE.dot|FILE.svg` draws the model function as the
// graph passes leave it: one node per op (its name without `tfm.`, its result
// shape, a weight's checkpoint name, an attention's causal/scale/modifiers/
// rope), one edge per SSA use, and the function's inputs and outputs as
// their own nodes under their tfm.name. tfm.attention nodes, the sites the
// fuse pass raised (or the model wrote fused), have their own fill colour and
// a legend entry, so a picture shows at a glance what was fused.
//
// DOT is written directly; SVG runs Graphviz's `dot` when it is on PATH.
// Graphviz is an optional tool, not a dependency of attune: without it, SVG
// is a clear error and DOT still works.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_PIPELINE_GRAPHDOT_H
#define ATTUNE_COMPILER_PIPELINE_GRAPHDOT_H

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace attune::pipeline {

enum class GraphFormat { Dot, Svg };

/// The format `path` asks for by its extension (.dot or .svg, any case).
/// Returns "" and sets `format`, or a message naming the accepted
/// extensions; for .svg, also a message when Graphviz's `dot` is not on
/// PATH. Cheap, so a tool calls it before compiling anything. Messages do
/// not name the flag; the caller prefixes its own.
std::string checkGraphPath(llvm::StringRef path, GraphFormat &format);

/// Writes `func` as a DOT digraph to `os`. Deterministic: nodes are numbered
/// in program order.
void printGraphDot(mlir::func::FuncOp func, llvm::raw_ostream &os);

/// Writes the drawing of `func` to `path` as checkGraphPath's format says.
/// Returns "" on success, else one message naming what failed.
std::string writeGraph(mlir::func::FuncOp func, llvm::StringRef path);

} // namespace attune::pipeline

#endif // ATTUNE_COMPILER_PIPELINE_GRAPHDOT_H
