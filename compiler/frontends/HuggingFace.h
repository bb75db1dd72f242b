//===- HuggingFace.h - Hugging Face checkpoint folders as tfm IR -*- C++ -*-===//
//
// `attune-compile DIR` for a folder as Hugging Face's `save_pretrained`
// writes it: config.json, and model.safetensors (or shards listed in
// model.safetensors.index.json). The importer reads the config, checks every
// tensor the architecture needs against the checkpoint's headers, and writes
// the model as ordinary tfm IR whose tfm.weight ops carry the checkpoint's
// tensor names; the driver then compiles that IR with the folder as its
// weights, as it would a hand-written model and a --weights file.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_FRONTENDS_HUGGINGFACE_H
#define ATTUNE_COMPILER_FRONTENDS_HUGGINGFACE_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace attune::frontends {

struct HuggingFaceModel {
  /// config.json's model_type, e.g. "bert".
  std::string modelType;
  /// The model as tfm IR text: one public function named after the folder's
  /// architecture, with HF's input and output names.
  std::string ir;
  /// One line for --verbose: the architecture and its sizes.
  std::string summary;
};

/// True when `path` is a directory holding a config.json.
bool isHuggingFaceFolder(llvm::StringRef path);

/// Imports the checkpoint folder `dir`. Supported model types: bert (with
/// sentence-transformers' mean pooling and normalisation when modules.json
/// lists them), gpt2, llama, mistral, t5 (the encoder). Errors name the file
/// and the field or tensor at fault.
llvm::Expected<HuggingFaceModel> importHuggingFace(llvm::StringRef dir);

} // namespace attune::frontends

#endif // ATTUNE_COMPILER_FRONTENDS_HUGGINGFACE_H
