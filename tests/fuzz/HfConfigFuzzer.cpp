//===- HfConfigFuzzer.cpp - fuzz target for the Hugging Face importer ----===//
//
// One input is one config.json. The importer reads a folder, so the target
// writes the input as config.json into a scratch folder that also holds a
// small valid checkpoint, and imports the folder. An import may fail (that
// is most inputs), but with a message and in bounded time, never a crash or
// a sanitizer report; an import that succeeds must give IR that parses and
// verifies again, since that text is what the driver compiles.
//
// The checkpoints are tests/models' six tiny ones (found through
// ATTUNE_FUZZ_MODELS_DIR, the source tree's tests/models), copied at start-up
// into one scratch folder each; the input's model_type picks the folder
// (bert-tiny when it has none), so that mutants of every architecture's seed
// get past the checkpoint lookups and into the IR builder. bert-tiny's folder
// keeps its sentence-transformers modules.json and pooling config.
//
// Built two ways (tests/fuzz/CMakeLists.txt): with libFuzzer's main under
// clang, and with HfConfigReplay.cpp's under any compiler.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/HuggingFace.h"
#include "tests/fuzz/FuzzSupport.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#ifndef ATTUNE_FUZZ_MODELS_DIR
#error "ATTUNE_FUZZ_MODELS_DIR must name the source tree's tests/models"
#endif

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace attune::fuzz {
/// Whether the last input imported; the replay driver counts them.
bool lastConfigImported = false;
} // namespace attune::fuzz

namespace {

[[noreturn]] void broken(const std::string &what) {
  attune::fuzz::fail("hf_config", what);
}

/// The scratch checkpoint folders, made once and removed at exit.
class Checkpoints {
public:
  Checkpoints()
      : root(attune::fuzz::makeScratchFolder("hf_config", "attune-hf-fuzz")) {
    // bert-tiny first: it is the folder for inputs without a model_type.
    for (const char *model :
         {"bert-tiny", "gpt2-tiny", "llama-tiny", "llama3-scaled-tiny",
          "mistral-tiny", "t5-encoder-tiny"}) {
      llvm::SmallString<256> to(root);
      path::append(to, model);
      if (std::error_code ec = fs::create_directories(to))
        broken("cannot create '" + std::string(to) + "': " + ec.message());
      copy(model, "model.safetensors");
      if (llvm::StringRef(model) == "bert-tiny") {
        copy(model, "modules.json");
        copy(model, "1_Pooling/config.json");
      }
      folders.push_back(std::string(to));
    }
  }
  ~Checkpoints() { (void)fs::remove_directories(root); }

  /// The folder for a config: by its model_type, and for llama by whether
  /// it scales RoPE (the two llama checkpoints differ in that).
  const std::string &folderFor(llvm::StringRef config) const {
    llvm::Expected<llvm::json::Value> json = llvm::json::parse(config);
    if (!json) {
      llvm::consumeError(json.takeError());
      return folders[0];
    }
    const llvm::json::Object *object = json->getAsObject();
    std::optional<llvm::StringRef> type =
        object ? object->getString("model_type") : std::nullopt;
    if (!type || *type == "bert")
      return folders[0];
    if (*type == "gpt2")
      return folders[1];
    if (*type == "llama")
      return object->getObject("rope_scaling") ||
                     object->getObject("rope_parameters")
                 ? folders[3]
                 : folders[2];
    if (*type == "mistral")
      return folders[4];
    return folders[5];
  }

private:
  void copy(llvm::StringRef model, llvm::StringRef file) {
    llvm::SmallString<256> from(ATTUNE_FUZZ_MODELS_DIR), to(root);
    path::append(from, model, file);
    path::append(to, model, file);
    if (std::error_code ec = fs::create_directories(path::parent_path(to)))
      broken("cannot create '" + std::string(path::parent_path(to)) +
             "': " + ec.message());
    if (std::error_code ec = fs::copy_file(from, to))
      broken("cannot copy '" + std::string(from) + "': " + ec.message());
  }

  llvm::SmallString<128> root;
  std::vector<std::string> folders;
};

/// What a successful import promises: its IR is a module that parses and
/// verifies on its own, as the driver will read it.
void checkImported(const attune::frontends::HuggingFaceModel &model) {
  if (model.ir.empty() || model.summary.empty() || model.modelType.empty())
    broken("a successful import left a field empty");
  (void)attune::fuzz::reparseImported("hf_config", model.ir, /*showIR=*/false);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const Checkpoints checkpoints;
  attune::fuzz::lastConfigImported = false;
  llvm::StringRef config(reinterpret_cast<const char *>(data), size);
  const std::string &folder = checkpoints.folderFor(config);

  llvm::SmallString<256> configPath(folder);
  path::append(configPath, "config.json");
  attune::fuzz::writeFile("hf_config", configPath, config);

  llvm::Expected<attune::frontends::HuggingFaceModel> model =
      attune::frontends::importHuggingFace(folder);
  if (!model) {
    if (llvm::toString(model.takeError()).empty())
      broken("an error without a message");
    return 0;
  }
  checkImported(*model);
  attune::fuzz::lastConfigImported = true;
  return 0;
}
