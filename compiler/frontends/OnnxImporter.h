//===- OnnxImporter.h - ONNX models as tfm IR ---------------*- C++ -*-===//
//
// `attune-compile model.onnx`: reads an ONNX ModelProto (protobuf, with its
// external data files), and writes the graph as ordinary tfm IR plus a
// safetensors blob holding its initializers, which the driver binds as it
// would a --weights file. Shape plumbing (Shape/Gather/Concat feeding Reshape,
// Range over a Shape) is folded at import; the decomposed functions exporters
// write (GELU, SiLU, RMSNorm, L2 normalisation) are recognised into their tfm
// ops; attention stays decomposed for tfm-fuse-attention to raise.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_FRONTENDS_ONNXIMPORTER_H
#define ATTUNE_COMPILER_FRONTENDS_ONNXIMPORTER_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace attune::frontends {

struct OnnxModel {
  /// The model as tfm IR text: one public function named after the graph,
  /// with the graph's input and output names as `tfm.name` and its dim_param
  /// names as `tfm.dim_names`.
  std::string ir;
  /// Every initializer the IR reads as a tfm.weight, as a safetensors file
  /// (in memory) keyed by the initializer's name.
  std::string weights;
  /// One line for --verbose: graph name, node count, opset.
  std::string summary;
};

/// True when `path` names a file ending in `.onnx`.
bool isOnnxFile(llvm::StringRef path);

/// Imports the ONNX model at `path` (default domain, opset 17 to 23). Errors
/// name the node (its name, op type and the opset) or the field at fault: an
/// unsupported op, a truncated or corrupt file, a cycle, a value nothing
/// produces, an external data file out of bounds, shapes that do not agree.
llvm::Expected<OnnxModel> importOnnx(llvm::StringRef path);

} // namespace attune::frontends

#endif // ATTUNE_COMPILER_FRONTENDS_ONNXIMPORTER_H
