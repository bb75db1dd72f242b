//===- OnnxFuzzer.cpp - fuzz target for the ONNX importer -----------------===//
//
// One input is one model.onnx. The importer reads a path, so the target
// writes the input as model.onnx into a scratch folder and imports it. An
// import may fail (that is most inputs), but with a message and in bounded
// time, never a crash or a sanitizer report. An import that succeeds must
// keep OnnxImporter.h's promise, since the driver compiles what it returns:
// the IR is a module that parses and verifies again, holding one public
// function whose arguments and results carry their graph names (tfm.name),
// and the weights blob is a safetensors file holding exactly the tensors the
// IR's tfm.weight ops name, which binds to them as attune-compile binds it
// (materializeWeights).
//
// With ATTUNE_FUZZ_PRINT_ERRORS set in the environment, each rejected input's
// error is printed, to see what a seed or a mutant trips over.
//
// The scratch folder also holds weights.bin and sub/weights.bin, which the
// seeds' external data points into (make_onnx_corpus.py): 64 float32 values
// (k - 32) / 16.
//
// Built two ways (tests/fuzz/CMakeLists.txt): with libFuzzer's main under
// clang, and with OnnxReplay.cpp's under any compiler.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/OnnxImporter.h"
#include "compiler/frontends/SafeTensors.h"
#include "compiler/frontends/Weights.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"
#include "tests/fuzz/FuzzSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace attune::fuzz {
/// Whether the last input imported; the replay driver counts them.
bool lastOnnxImported = false;
} // namespace attune::fuzz

namespace {

[[noreturn]] void broken(const std::string &what) {
  attune::fuzz::fail("onnx", what);
}

void writeFile(llvm::StringRef file, llvm::StringRef bytes) {
  attune::fuzz::writeFile("onnx", file, bytes);
}

/// The scratch folder, made once and removed at exit.
class Scratch {
public:
  Scratch() : root(attune::fuzz::makeScratchFolder("onnx", "attune-onnx-fuzz")) {
    std::string weights;
    for (int k = 0; k < 64; ++k) {
      float v = float(k - 32) / 16.0f;
      weights.append(reinterpret_cast<const char *>(&v), sizeof v);
    }
    writeFile(file("weights.bin"), weights);
    if (std::error_code ec = fs::create_directory(file("sub")))
      broken("cannot create '" + file("sub") + "': " + ec.message());
    writeFile(file("sub/weights.bin"), weights);
    model = file("model.onnx");
    blob = file("imported.safetensors");
  }
  ~Scratch() { (void)fs::remove_directories(root); }

  std::string file(llvm::StringRef name) const {
    llvm::SmallString<256> p(root);
    path::append(p, name);
    return std::string(p);
  }

  llvm::SmallString<128> root;
  std::string model, blob;
};

/// What a successful import promises (OnnxImporter.h).
void checkImported(const attune::frontends::OnnxModel &model,
                   const Scratch &scratch) {
  if (model.ir.empty() || model.summary.empty())
    broken("a successful import left a field empty");
  attune::fuzz::Reparsed reparsed =
      attune::fuzz::reparseImported("onnx", model.ir, /*showIR=*/true);
  mlir::OwningOpRef<mlir::ModuleOp> &module = reparsed.module;

  // One public function, its arguments and results named.
  auto funcs = module->getOps<mlir::func::FuncOp>();
  if (std::distance(funcs.begin(), funcs.end()) != 1)
    broken("the imported module does not hold exactly one function");
  mlir::func::FuncOp func = *funcs.begin();
  if (!func.isPublic())
    broken("the imported function is not public");
  for (unsigned k = 0; k < func.getNumArguments(); ++k)
    if (!func.getArgAttrOfType<mlir::StringAttr>(k, "tfm.name"))
      broken("argument " + std::to_string(k) + " has no tfm.name");
  if (func.getNumResults() == 0)
    broken("the imported function returns nothing");
  for (unsigned k = 0; k < func.getNumResults(); ++k)
    if (!func.getResultAttrOfType<mlir::StringAttr>(k, "tfm.name"))
      broken("result " + std::to_string(k) + " has no tfm.name");

  // The blob holds the tensors the weight ops name, no more, no fewer.
  llvm::Expected<attune::SafeTensorsView> view = attune::SafeTensorsView::parse(
      model.weights.data(), model.weights.size());
  if (!view)
    broken("the weights blob does not parse: " +
           llvm::toString(view.takeError()));
  llvm::StringSet<> named;
  module->walk([&](attune::tfm::WeightOp op) { named.insert(op.getName()); });
  for (const attune::SafeTensorEntry &e : view->entries())
    if (!named.contains(e.name))
      broken("the weights blob holds '" + e.name + "', which no tfm.weight reads");
  if (named.size() != view->entries().size())
    broken("a tfm.weight names a tensor the weights blob lacks");
  if (named.empty())
    return;
  // And binds as the driver binds it: from a file, by name, shape and dtype.
  writeFile(scratch.blob, model.weights);
  llvm::Expected<std::string> bound =
      attune::materializeWeights(*module, scratch.blob);
  if (!bound)
    broken("the weights blob does not bind to the IR: " +
           llvm::toString(bound.takeError()) + "\n" + model.ir);
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static const Scratch scratch;
  static const bool printErrors = std::getenv("ATTUNE_FUZZ_PRINT_ERRORS");
  attune::fuzz::lastOnnxImported = false;
  writeFile(scratch.model,
            llvm::StringRef(reinterpret_cast<const char *>(data), size));
  llvm::Expected<attune::frontends::OnnxModel> model =
      attune::frontends::importOnnx(scratch.model);
  if (!model) {
    std::string message = llvm::toString(model.takeError());
    if (message.empty())
      broken("an error without a message");
    if (printErrors)
      std::fprintf(stderr, "onnx fuzz: rejected: %s\n", message.c_str());
    return 0;
  }
  checkImported(*model, scratch);
  attune::fuzz::lastOnnxImported = true;
  return 0;
}
