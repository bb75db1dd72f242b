//===- FuzzSupport.h - what the file-reading fuzz targets share -*- C++ -*-===//
//
// The Hugging Face and ONNX targets import from files, so each writes every
// input into a scratch folder of its own before importing it. These are the
// pieces they share: the failure that stops a run, the scratch folder, the
// write, and reading an import's IR back as the driver will.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_TESTS_FUZZ_FUZZSUPPORT_H
#define ATTUNE_TESTS_FUZZ_FUZZSUPPORT_H

#include "dialects/tfm/TfmDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

namespace attune::fuzz {

/// A broken promise: prints "<target> fuzz: <what>" and aborts, which
/// libFuzzer and the replay drivers both report as a failing input.
[[noreturn]] inline void fail(const char *target, const std::string &what) {
  std::fprintf(stderr, "%s fuzz: %s\n", target, what.c_str());
  std::abort();
}

/// A new folder named `<name>XXXXXX` for a target's scratch files. Every
/// input rewrites a file there; on a disk mounted with discard (as CI
/// machines often are) truncating it costs about 0.6 ms, several times an
/// import, so the folder lives in memory where /dev/shm is writable.
inline llvm::SmallString<128> makeScratchFolder(const char *target,
                                                llvm::StringRef name) {
  llvm::SmallString<128> prefix("/dev/shm");
  if (!llvm::sys::fs::is_directory(prefix) || !llvm::sys::fs::can_write(prefix))
    llvm::sys::path::system_temp_directory(/*ErasedOnReboot=*/true, prefix);
  llvm::sys::path::append(prefix, name);
  llvm::SmallString<128> root;
  if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(prefix, root))
    fail(target, "cannot create a scratch folder: " + ec.message());
  return root;
}

/// Writes `bytes` to `file`, replacing it.
inline void writeFile(const char *target, llvm::StringRef file,
                      llvm::StringRef bytes) {
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec, llvm::sys::fs::OF_None);
  if (ec)
    fail(target, "cannot write '" + file.str() + "': " + ec.message());
  os << bytes;
  os.close();
  if (os.has_error())
    fail(target, "cannot write '" + file.str() + "'");
}

/// An imported module parsed back, with the context that owns it (declared
/// first, so it is destroyed last).
struct Reparsed {
  std::unique_ptr<mlir::MLIRContext> context;
  mlir::OwningOpRef<mlir::ModuleOp> module;
};

/// What every successful import promises first: its IR is a module that
/// parses and verifies on its own (tfm, func and arith), as the driver will
/// read it. Otherwise fails the run with the diagnostics, and with the IR
/// when `showIR`.
inline Reparsed reparseImported(const char *target, const std::string &ir,
                                bool showIR) {
  mlir::DialectRegistry registry;
  registry.insert<attune::tfm::TfmDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();
  Reparsed r;
  r.context = std::make_unique<mlir::MLIRContext>(
      registry, mlir::MLIRContext::Threading::DISABLED);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(r.context.get(), [&](mlir::Diagnostic &diag) {
    diagnostics += diag.str() + "\n";
    return mlir::success();
  });
  r.module = mlir::parseSourceString<mlir::ModuleOp>(ir, r.context.get());
  if (!r.module || mlir::failed(mlir::verify(*r.module)))
    fail(target, "the imported IR does not parse and verify again: " + diagnostics +
                     (showIR ? "\n" + ir : std::string()));
  return r;
}

} // namespace attune::fuzz

#endif // ATTUNE_TESTS_FUZZ_FUZZSUPPORT_H
