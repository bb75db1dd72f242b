//===- PhaseDump.cpp - numbered dumps of every compile phase --------------===//

#include "compiler/pipeline/PhaseDump.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OperationSupport.h"
#include "mlir/Pass/Pass.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace attune::pipeline {

std::string PhaseDumper::fileName(unsigned index, llvm::StringRef phase,
                                  llvm::StringRef extension) {
  std::string name;
  llvm::raw_string_ostream os(name);
  os << llvm::format_decimal(index, index < 100 ? 2 : 3) << '-' << phase
     << extension;
  // format_decimal pads with spaces; names need zeros to sort.
  for (char &c : name) {
    if (c != ' ')
      break;
    c = '0';
  }
  return name;
}

std::string PhaseDumper::dump(llvm::StringRef phase, llvm::StringRef extension,
                              llvm::StringRef contents) {
  std::string name = fileName(next++, phase, extension);
  if (std::error_code ec = llvm::sys::fs::create_directories(dir)) {
    if (firstError.empty())
      firstError = "cannot create '" + dir + "': " + ec.message();
    return "";
  }
  llvm::SmallString<256> path(dir);
  llvm::sys::path::append(path, name);
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (!ec) {
    os << contents;
    os.close();
    if (os.has_error())
      ec = os.error();
  }
  if (ec) {
    if (firstError.empty())
      firstError = ("cannot write '" + path + "': " + ec.message()).str();
    return "";
  }
  return std::string(path);
}

std::string PhaseDumper::dump(llvm::StringRef phase, Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os, OpPrintingFlags().enableDebugInfo(false));
  return dump(phase, ".mlir", text);
}

namespace {

struct PhaseDumpInstrumentation final : PassInstrumentation {
  explicit PhaseDumpInstrumentation(PhaseDumper &dumper) : dumper(dumper) {}

  void runAfterPass(Pass *pass, Operation *op) override {
    dumpAfter(pass, op, "");
  }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    dumpAfter(pass, op, "-failed");
  }

private:
  void dumpAfter(Pass *pass, Operation *op, llvm::StringRef suffix) {
    // Pass adaptors (the nesting machinery) have no argument and are not
    // phases of their own; the passes they run are dumped individually.
    llvm::StringRef argument = pass->getArgument();
    if (argument.empty())
      return;
    Operation *root = op;
    if (!isa<ModuleOp>(root))
      if (auto parent = root->getParentOfType<ModuleOp>())
        root = parent;
    std::string phase = (argument + suffix).str();
    dumper.dump(phase, root);
  }

  PhaseDumper &dumper;
};

} // namespace

std::unique_ptr<PassInstrumentation>
createPhaseDumpInstrumentation(PhaseDumper &dumper) {
  return std::make_unique<PhaseDumpInstrumentation>(dumper);
}

} // namespace attune::pipeline
