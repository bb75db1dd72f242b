//===- ImportContext.h - the MLIR context a frontend builds in --*- C++ -*-===//
//
// Internal to the frontends: the Hugging Face and ONNX importers build tfm IR
// from user files, where an op that does not verify is bad input. Both build
// in this context, which loads the dialects imported models use and collects
// error diagnostics as text, so the importer's single message can carry them
// instead of a second stream printing before it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_FRONTENDS_IMPORTCONTEXT_H
#define ATTUNE_COMPILER_FRONTENDS_IMPORTCONTEXT_H

#include "dialects/tfm/TfmDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

#include <memory>
#include <string>

namespace attune::frontends {

class ImportContext {
public:
  ImportContext() {
    context.getOrLoadDialect<tfm::TfmDialect>();
    context.getOrLoadDialect<mlir::func::FuncDialect>();
    context.getOrLoadDialect<mlir::arith::ArithDialect>();
    handler = std::make_unique<mlir::ScopedDiagnosticHandler>(
        &context, [this](mlir::Diagnostic &diag) {
          if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
            errors += diag.str() + "\n";
          return mlir::success();
        });
  }
  mlir::MLIRContext &get() { return context; }
  /// The error diagnostics so far, one per line ("" when none); an importer
  /// that reports them may clear them.
  std::string &diagnostics() { return errors; }

private:
  mlir::MLIRContext context;
  std::string errors;
  std::unique_ptr<mlir::ScopedDiagnosticHandler> handler;
};

} // namespace attune::frontends

#endif // ATTUNE_COMPILER_FRONTENDS_IMPORTCONTEXT_H
