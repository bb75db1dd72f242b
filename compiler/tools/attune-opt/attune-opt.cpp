//===- attune-opt.cpp - mlir-opt for the tfm dialect ----------------------===//
//
// Parses, verifies, transforms and prints tfm IR. It is `mlir-opt` with the
// tfm dialect and the attune passes added, so every flag a user already knows
// (-split-input-file, -verify-diagnostics, --mlir-print-ir-after-all,
// --pass-pipeline=...) works unchanged; lit tests drive the passes through it.
//
//===----------------------------------------------------------------------===//

#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"
#include "passes/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/CommandLine.h"

/// Hides from --help every option registered so far except --help and
/// --version. Called first thing in main, when the only options registered
/// are those libLLVM's static initialisers added as it loaded: its backends'
/// and optimisers' internals (--amdgpu-..., --x86-..., --instcombine-...),
/// thousands of lines none of which affects MLIR. MlirOptMain registers its
/// own options (--split-input-file, --mlir-print-ir-*, the passes) later, so
/// they stay listed. Hidden rather than removed: every flag still parses and
/// --help-hidden still lists it.
static void hideLLVMInternalOptions() {
  for (auto &[name, option] : llvm::cl::getRegisteredOptions()) {
    // --help, --help-list and --version are in the category LLVM's own
    // HideUnrelatedOptions keeps; it has no accessor, so match its name.
    bool generic = llvm::any_of(option->Categories, [](auto *category) {
      return category->getName() == "Generic Options";
    });
    if (!generic && option->getOptionHiddenFlag() == llvm::cl::NotHidden)
      option->setHiddenFlag(llvm::cl::Hidden);
  }
}

int main(int argc, char **argv) {
  hideLLVMInternalOptions();
  // The generic transforms (canonicalize, cse, inline, symbol-dce, ...) and
  // the project's own passes.
  mlir::registerTransformsPasses();
  attune::registerAttunePasses();

  mlir::DialectRegistry registry;
  registry.insert<attune::tfm::TfmDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "attune optimizer driver\n", registry));
}
