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

int main(int argc, char **argv) {
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
