//===- MlirFuzzer.cpp - fuzz target for tfm IR text and the graph passes -===//
//
// One input is one .mlir file, as attune-compile and attune-opt read it. The
// target parses it with the dialects attune-opt registers (tfm, func,
// arith), capturing every diagnostic instead of printing it. Most inputs do
// not parse or verify; that must end in an error diagnostic, never a crash,
// an assertion or a sanitizer report. An input that verifies is the
// contract the passes rely on ("never crash on verifier-valid input",
// STYLE.md), so it is then
//  - printed and parsed again: the tfm dialect's printers and parsers must
//    agree, since --emit=mlir output is read back by attune-compile;
//  - run through the graph pipeline attune-compile runs before host code
//    generation (pipeline::buildGraphPipeline), twice, on copies: with
//    attune-compile's defaults on an AVX-512 host (fusion, raised
//    encodings, layouts, weights packed in 96-wide panels), and with the
//    other switches (attention decomposed, epilogues fused, bf16 panels).
//    Each run either succeeds, leaving IR that verifies and no error, or
//    fails with at least one error diagnostic. The pass manager's own
//    verifier is off and this target verifies after every pass instead, so
//    a pass that turns valid IR into invalid IR is reported by name as a
//    bug, rather than passing as "failed with a diagnostic".
// Weights are not materialised and no host code or kernel is generated
// (Halide and linking take seconds per input).
//
// Built two ways (tests/fuzz/CMakeLists.txt): with libFuzzer's main under
// clang, and with MlirReplay.cpp's under any compiler.
//
//===----------------------------------------------------------------------===//

#include "compiler/pipeline/Pipeline.h"
#include "dialects/tfm/TfmDialect.h"
#include "tests/fuzz/FuzzSupport.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>
#include <string>

namespace attune::fuzz {
/// Whether the last input parsed and verified; the replay driver counts them.
bool lastMlirVerified = false;
} // namespace attune::fuzz

namespace {

/// The input, the diagnostics so far and what broke, then abort.
[[noreturn]] void broken(const std::string &what, llvm::StringRef input,
                         const std::string &diagnostics) {
  const bool showInput = std::getenv("ATTUNE_FUZZ_SHOW_INPUT") != nullptr;
  attune::fuzz::fail("mlir", what + "\ndiagnostics:\n" + diagnostics +
                                 (showInput ? "input:\n" + input.str() : ""));
}

/// Every diagnostic of one input, kept rather than printed: most inputs are
/// invalid, and printing thousands of errors would bury a real failure.
struct Captured {
  std::string text;
  unsigned errors = 0;
};

/// Verifies after every pass and reports, by pass name, one that left
/// invalid IR behind (the pass manager's verifier would turn that into an
/// ordinary failure with a diagnostic).
class VerifyEachPass final : public mlir::PassInstrumentation {
public:
  VerifyEachPass(llvm::StringRef input, const Captured &captured)
      : input(input), captured(captured) {}
  void runAfterPass(mlir::Pass *pass, mlir::Operation *op) override {
    if (mlir::failed(mlir::verify(op)))
      broken("pass '" + pass->getArgument().str() +
                 "' succeeded but left IR that does not verify",
             input, captured.text);
  }

private:
  llvm::StringRef input;
  const Captured &captured;
};

/// Runs the graph pipeline with `options` on a copy of `module`.
void runPipeline(mlir::MLIRContext &context, mlir::ModuleOp module,
                 const attune::pipeline::CompileOptions &options,
                 const char *which, llvm::StringRef input, Captured &captured) {
  mlir::OwningOpRef<mlir::ModuleOp> copy(module.clone());
  mlir::PassManager pm(&context, mlir::ModuleOp::getOperationName());
  pm.enableVerifier(false);
  pm.addInstrumentation(std::make_unique<VerifyEachPass>(input, captured));
  attune::pipeline::buildGraphPipeline(pm, options);
  const unsigned errorsBefore = captured.errors;
  if (mlir::failed(pm.run(*copy))) {
    if (captured.errors == errorsBefore)
      broken(std::string("the ") + which +
                 " pipeline failed without an error diagnostic",
             input, captured.text);
    return;
  }
  if (captured.errors != errorsBefore)
    broken(std::string("the ") + which +
               " pipeline succeeded but emitted an error",
           input, captured.text);
  // Verified after each pass above; the whole module once more, as the host
  // code generation after the pipeline would see it.
  if (mlir::failed(mlir::verify(*copy)))
    broken(std::string("the ") + which + " pipeline left IR that does not verify",
           input, captured.text);
  // The printers must cope with whatever the passes built (--emit=mlir).
  std::string printed;
  llvm::raw_string_ostream os(printed);
  copy->print(os);
}

/// Whether `input` holds a dense array of `index` (`array<index: 1>`, or of
/// a type alias, which may name index). MLIR 22's parser crashes on those
/// (a null dereference in parseDenseArrayAttr, which asks index for its bit
/// width): llvm/llvm-project#179045, fixed upstream by #179075 after the
/// 22.1 packages this project builds against. It is not attune's to fix,
/// and attune-compile reads the same way, so the target skips such inputs
/// rather than report the known crash again and again.
bool hasIndexDenseArray(llvm::StringRef input) {
  for (size_t at = input.find("array"); at != llvm::StringRef::npos;
       at = input.find("array", at + 1)) {
    llvm::StringRef rest = input.drop_front(at + 5).ltrim();
    if (!rest.consume_front("<"))
      continue;
    rest = rest.ltrim();
    if (rest.starts_with("index") || rest.starts_with("!"))
      return true;
  }
  return false;
}

} // namespace

/// Turns off ASan's user poisoning, in the replay and the libFuzzer binary
/// alike. LLVM's BumpPtrAllocator poisons the unused part of each slab when
/// the code that inlines it is built with ASan; this target compiles the
/// tfm dialect, whose attribute storage is allocated by inlined uniquer
/// code, into an instrumented binary while libMLIR is not instrumented. So a
/// slab that instrumented code poisoned is then handed out by libMLIR's own
/// copy of the allocator, which does not unpoison it, and ASan reports
/// libMLIR's first write to it as a use-after-poison (FileLineColRange::get
/// into a slab a tfm attribute started). Every real heap error (overflow,
/// use after free) is still caught.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  attune::fuzz::lastMlirVerified = false;
  llvm::StringRef input(reinterpret_cast<const char *>(data), size);
  if (hasIndexDenseArray(input))
    return 0;

  mlir::DialectRegistry registry;
  registry.insert<attune::tfm::TfmDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();
  // One context per input: uniqued types and attributes would otherwise
  // pile up over millions of inputs. No threads: one input at a time, and a
  // report's stack is the pass's own.
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  // Diagnostics are only read when a promise breaks; dumping the op with
  // each would cost more than the parse.
  context.printOpOnDiagnostic(false);
  context.printStackTraceOnDiagnostic(false);
  Captured captured;
  mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diag) {
    if (diag.getSeverity() == mlir::DiagnosticSeverity::Error)
      ++captured.errors;
    captured.text += diag.str() + "\n";
    return mlir::success();
  });

  // From a null-terminated copy, as attune-compile and attune-opt read a
  // file (MemoryBuffer::getFileOrSTDIN): MLIR's lexer finds the end of its
  // buffer by the NUL a MemoryBuffer guarantees, and parseSourceString
  // reads past a StringRef that has none (libFuzzer's data has none).
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(input, "input.mlir"), llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr,
                                            mlir::ParserConfig(&context));
  if (!module) {
    if (captured.errors == 0)
      broken("the input was refused without an error diagnostic", input,
             captured.text);
    return 0;
  }
  if (captured.errors != 0)
    broken("the input parsed and verified but an error was emitted", input,
           captured.text);
  attune::fuzz::lastMlirVerified = true;

  // What the parser accepted prints, and the print parses and verifies
  // again (in the same context: its dialects are the same). A
  // std::string's data is null-terminated, so it is parsed in place.
  {
    std::string printed;
    llvm::raw_string_ostream os(printed);
    module->print(os);
    mlir::OwningOpRef<mlir::ModuleOp> again =
        mlir::parseSourceString<mlir::ModuleOp>(printed,
                                                mlir::ParserConfig(&context));
    if (!again)
      broken("the verified input, printed, does not parse again:\n" + printed,
             input, captured.text);
  }

  // attune-compile's defaults on a host with an AVX-512 variant, where
  // weights are packed (CpuBackend::weightPanelWidth).
  attune::pipeline::CompileOptions defaults;
  runPipeline(context, *module, defaults, "default", input, captured);

  // The fused build's opt-in passes (they need its bshd attentions).
  attune::pipeline::CompileOptions fusedExtras;
  fusedExtras.mergeProjections = true;
  runPipeline(context, *module, fusedExtras, "merged", input, captured);

  // Every other switch: the decomposed build, epilogues fused, bf16 panels.
  attune::pipeline::CompileOptions others;
  others.fuseAttention = false;
  others.fuseEpilogues = true;
  others.propagateLayouts = false;
  others.bf16Weights = true;
  runPipeline(context, *module, others, "decomposed", input, captured);
  return 0;
}
