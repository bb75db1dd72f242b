//===- Driver.cpp - the compiler as a library -----------------------------===//
//
// The phases of a compile, in order:
//
//   parse + verify -> materialize weights -> graph pipeline (fusion)
//   -> host code (LLVM dialect) -> LLVM IR -> host object
//   -> kernels (through the target, cached) + the target's runtime
//   -> weights object -> link (cc), beside it archive (ld -r, objcopy, ar)
//   -> header
//
// Each text emit stops after the phase that produces it.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Driver.h"
#include "compiler/codegen/host/HostCodegen.h"
#include "compiler/driver/Artifacts.h"
#include "compiler/frontends/SafeTensors.h"
#include "compiler/frontends/Weights.h"
#include "compiler/pipeline/GraphDot.h"
#include "compiler/pipeline/KernelCache.h"
#include "compiler/pipeline/PhaseDump.h"
#include "compiler/pipeline/Pipeline.h"
#include "compiler/tuning/TuningDatabase.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"
#include "passes/DecomposeAttention.h"
#include "passes/PassUtils.h"

#include "attune/runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Target/TargetMachine.h"

#include <cassert>
#include <chrono>
#include <thread>

using namespace mlir;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace attune::driver {
namespace {

/// Every failure path returns its message through this, so a compile ends
/// with exactly one.
std::string fail(const llvm::Twine &message) { return message.str(); }

/// Wall time per phase, printed by --verbose in the order phases ran.
struct PhaseTimer {
  using Clock = std::chrono::steady_clock;
  std::vector<std::pair<std::string, double>> phases;
  Clock::time_point start = Clock::now();
  void done(llvm::StringRef phase) {
    auto now = Clock::now();
    phases.emplace_back(
        phase.str(), std::chrono::duration<double, std::milli>(now - start).count());
    start = now;
  }
};

/// The external weights file's base name: the output's stem (the library's
/// name without .so) + ".safetensors"; text emits without -o take the input's
/// stem, so their host code names the file a library would.
std::string externalWeightsName(const DriverOptions &options) {
  llvm::StringRef output = options.outputFile;
  llvm::StringRef from = output.empty() || output == "-"
                             ? llvm::StringRef(options.inputFile)
                             : output;
  return (path::stem(from) + ".safetensors").str();
}

/// Whether writing `dest` would replace a file that --weights reads: the
/// file itself, a folder's model.safetensors, or a shard an index names.
/// The compile has read them by then, but the user's checkpoint would be
/// gone, replaced by attune's own layout of it.
bool replacesInputWeights(llvm::StringRef dest, llvm::StringRef weightsPath) {
  if (weightsPath.empty() || !fs::exists(dest))
    return false;
  auto same = [&](const llvm::Twine &other) {
    bool result = false;
    return !fs::equivalent(dest, other, result) && result;
  };
  if (same(weightsPath))
    return true;
  llvm::SmallString<256> folder(weightsPath), index;
  if (fs::is_directory(weightsPath)) {
    if (same(folder + "/model.safetensors"))
      return true;
    index = (folder + "/model.safetensors.index.json").str();
  } else {
    path::remove_filename(folder);
    if (folder.empty())
      folder = ".";
    if (weightsPath.ends_with(".json"))
      index = weightsPath;
  }
  // Shards sit beside their index, which names each in quotes.
  bool sameFolder = false;
  llvm::SmallString<256> destFolder(dest);
  path::remove_filename(destFolder);
  if (destFolder.empty())
    destFolder = ".";
  if (index.empty() || fs::equivalent(destFolder, folder, sameFolder) ||
      !sameFolder)
    return false;
  auto text = llvm::MemoryBuffer::getFile(index);
  return text && (*text)->getBuffer().contains(
                     ("\"" + path::filename(dest) + "\"").str());
}

std::string printOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  os << "\n";
  return text;
}

} // namespace

std::string compileModel(std::unique_ptr<llvm::MemoryBuffer> buffer,
                         const DriverOptions &options, llvm::raw_ostream &textOut,
                         llvm::raw_ostream &log) {
  PhaseTimer timer;
  const Emit emit = options.emit;
  assert(options.target && "a compile needs a target");
  const targets::TargetBackend &target = *options.target;
  const std::string &inputFile = options.inputFile;
  const std::string &outputFile = options.outputFile;

  // Parse and verify. Diagnostics print with file:line:col from here on.
  DialectRegistry registry;
  registry.insert<attune::tfm::TfmDialect, func::FuncDialect,
                  arith::ArithDialect, LLVM::LLVMDialect, cf::ControlFlowDialect,
                  scf::SCFDialect>();
  registerBuiltinDialectTranslation(registry);
  registerLLVMDialectTranslation(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics carry file:line:col already; a dump of the whole module after
  // every error (MLIR's default) buries the message in a large model.
  context.printOpOnDiagnostic(false);

  // The source as given, embedded in the library for reference checks.
  std::string sourceIR = buffer->getBuffer().str();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context, log);
  // Remarks (an attention site left unfused, and why) are for --verbose and
  // --fusion-report; a successful compile prints nothing. Handlers registered
  // later run first, so this one sees every diagnostic before the printer.
  DiagnosticEngine::HandlerID remarkFilter =
      context.getDiagEngine().registerHandler([verbose = options.verbose](Diagnostic &diag) {
        return success(!verbose && diag.getSeverity() == DiagnosticSeverity::Remark);
      });
  (void)remarkFilter;
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return fail("cannot compile '" + inputFile + "': it is not a valid tfm model");
  // What the library's API cannot describe fails here, at the source
  // location, not when the linked library is opened. (Which function is the
  // model is host code generation's question: a module it cannot pick from
  // may still be run through the graph passes, --emit=mlir.)
  if (emit != Emit::Input) {
    SmallVector<func::FuncOp> models;
    for (auto func : module->getOps<func::FuncOp>())
      if (!func.isDeclaration() &&
          (options.entry.empty() ? func.isPublic() : func.getName() == options.entry))
        models.push_back(func);
    if (models.size() == 1 && failed(codegen::checkModelSignature(models.front())))
      return fail("cannot compile '" + inputFile + "' (see the errors above)");
  }
  timer.done("parse+verify");
  if (emit == Emit::Input) {
    textOut << printOp(module->getOperation());
    return "";
  }

  std::optional<pipeline::PhaseDumper> dumper;
  if (!options.dumpPhasesTo.empty()) {
    dumper.emplace(options.dumpPhasesTo);
    dumper->dump("input", module->getOperation());
  }
  auto checkDumps = [&]() -> std::string {
    if (dumper && !dumper->error().empty())
      return fail("--dump-phases-to: " + dumper->error());
    return "";
  };

  const bool externalWeights = options.weightStorage == WeightStorage::External;
  if (externalWeights && emit == Emit::Lib) {
    llvm::SmallString<256> dest(outputFile);
    path::remove_filename(dest);
    path::append(dest, externalWeightsName(options));
    if (replacesInputWeights(dest, options.weightsFile))
      return fail("--weights-storage=external would write the weights to '" +
                  dest + "', which is a file the weights are read from ('" +
                  options.weightsFile + "'); choose another -o");
  }

  // Weights are bound before any pass: passes may fold or drop a tfm.weight,
  // but the weights file must match the model as the user wrote it.
  // A missing or unreadable file is reported by materializeWeights, with
  // the system's reason (not found, permission denied, a directory).
  std::string blob;
  {
    auto weights = materializeWeights(*module, options.weightsFile, options.seed);
    if (!weights)
      return fail("cannot bind weights" +
                  (options.weightsFile.empty() ? std::string()
                                       : " from '" + options.weightsFile + "'") +
                  ": " + llvm::toString(weights.takeError()));
    blob = std::move(*weights);
  }
  timer.done("weights");

  // Graph pipeline.
  pipeline::CompileOptions pipelineOptions;
  // A target without a fused attention kernel builds every model unfused.
  std::string unfusedReason = target.unfusedAttentionReason(*module);
  pipelineOptions.fuseAttention = options.fuseAttention && unfusedReason.empty();
  if (options.fuseAttention && !unfusedReason.empty() && options.verbose)
    log << "attune-compile: attention unfused: " << unfusedReason << "\n";
  pipelineOptions.epilogueActivations = target.epilogueActivations();
  pipelineOptions.raiseEncodings = options.raiseEncodings;
  pipelineOptions.fuseEpilogues = options.fuseEpilogues;
  pipelineOptions.propagateLayouts = options.propagateLayouts;
  pipelineOptions.mergeProjections = options.mergeProjections;
  pipelineOptions.fuseResidualNorms = options.fuseResidualNorms;
  // On the CPU, bf16 lives in the packed panels (PanelLayout.h): without
  // them there is nothing to store it in. A target that rounds the
  // products' operands as it computes them (CUDA) stores nothing in bf16.
  const bool bf16 = options.precision == ScalarType::BF16;
  const bool roundedProducts = options.precision != ScalarType::F32 && target.roundsProducts();
  const bool bf16Weights = bf16 && !roundedProducts;
  // What the products round their operands to where the target does so.
  const ScalarType roundedTo = roundedProducts ? options.precision : ScalarType::F32;
  pipelineOptions.weightPanelWidth =
      options.packWeights ? target.weightPanelWidth(bf16Weights) : 0;
  if (options.precision == ScalarType::F16 && !roundedProducts)
    return fail("--precision=f16 rounds the products' operands to f16 on tensor cores: it is "
                "for --target=cuda; --target=" +
                target.name() + " takes --precision=f32 or bf16");
  if (bf16Weights && pipelineOptions.weightPanelWidth == 0)
    return fail(options.packWeights
                    ? "--precision=bf16 needs packed weights, which --target=" +
                          target.name() +
                          " does not use here (on the CPU they come with an "
                          "AVX-512 variant)"
                    : "--precision=bf16 stores linear weights packed: it cannot "
                      "be combined with --no-pack-weights");
  pipelineOptions.bf16Weights = bf16Weights;
  pipelineOptions.attentionProducts = roundedTo;
  pipelineOptions.fusionReportPath =
      pipelineOptions.fuseAttention ? options.fusionReportPath : std::string();
  PassManager pm(&context, ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(pm)))
    return fail("invalid pass manager options");
  if (dumper)
    pm.addInstrumentation(pipeline::createPhaseDumpInstrumentation(*dumper));
  pipeline::buildGraphPipeline(pm, pipelineOptions);
  if (failed(pm.run(*module)))
    return fail("the graph pipeline failed on '" + inputFile + "'");
  // The attentions the target has no fused kernel for (a configuration its
  // kernel does not take) run as their definition, each for its reason.
  if (pipelineOptions.fuseAttention) {
    SmallVector<std::pair<tfm::AttentionOp, std::string>> unfused;
    module->walk([&](tfm::AttentionOp op) {
      if (std::string reason = target.unfusedAttentionReasonFor(op); !reason.empty())
        unfused.push_back({op, reason});
    });
    std::map<std::string, std::string> reportReasons;
    for (auto &[op, reason] : unfused) {
      if (options.verbose)
        log << "attune-compile: attention at " << op.getLoc() << " unfused: " << reason
            << "\n";
      reportReasons[reportLocation(op.getLoc())] = reason;
      if (failed(decomposeAttention(op)))
        return fail("cannot decompose the attention the target has no kernel for");
    }
    if (!reportReasons.empty() && !options.fusionReportPath.empty())
      if (std::string error =
              pipeline::markTargetUnfusedSites(options.fusionReportPath, reportReasons);
          !error.empty())
        return fail(error);
  }
  if (!pipelineOptions.fuseAttention && !options.fusionReportPath.empty())
    if (std::string error =
            pipeline::writeFusionDisabledReport(options.fusionReportPath);
        !error.empty())
      return fail(error);
  timer.done("graph passes");
  if (std::string error = checkDumps(); !error.empty())
    return error;
  // The weights the passes gave a layout (tfm-pack-weights) are stored in it.
  {
    auto packed = packWeightBlob(*module, blob);
    if (!packed)
      return fail("cannot pack weights: " + llvm::toString(packed.takeError()));
    blob = std::move(*packed);
  }
  // The drawing shows the graph the later phases compile, so it is taken
  // here, where --emit=mlir prints, whatever is emitted.
  if (!options.graphPath.empty()) {
    func::FuncOp func = codegen::findModelFunction(*module, options.entry);
    if (!func)
      return fail("--graph: no model function to draw in '" + inputFile +
                  "' (see the error above)");
    if (std::string error = pipeline::writeGraph(func, options.graphPath);
        !error.empty())
      return fail("--graph: " + error);
    timer.done("graph drawing");
  }
  if (emit == Emit::Mlir)
    {
    textOut << printOp(module->getOperation());
    return "";
  }

  // Host code.
  codegen::HostLoweringOptions hostOptions;
  hostOptions.modelName = options.modelName;
  hostOptions.entry = options.entry;
  hostOptions.weightsBlob = blob;
  if (externalWeights && !blob.empty())
    hostOptions.externalWeightsFile = externalWeightsName(options);
  hostOptions.sourceIR = sourceIR;
  if (std::string error = target.configureHost(hostOptions); !error.empty())
    return fail(error);
  hostOptions.matmulProducts = roundedTo;
  codegen::HostLoweringResult host;
  if (failed(codegen::lowerModelToHost(*module, hostOptions, host)))
    return fail("cannot generate host code for '" + inputFile + "'");
  if (dumper) {
    dumper->dump("host-llvm", module->getOperation());
    dumper->dump("memory-plan", ".txt", host.memoryPlan);
  }
  // Schedules from the tuning database; a kernel or level without an entry
  // keeps the builder's formula. They change the kernels' code, not the host
  // code, so they are applied after it and before the kernels are built.
  {
    const std::vector<std::string> levels = target.tuningLevels();
    std::string report;
    for (codegen::KernelSpec &spec : host.kernels) {
      if (options.tuning)
        options.tuning->apply(spec, levels);
      report += spec.symbolName() + " " +
                tuning::describeTuning(spec, options.tuning, levels) + "\n";
    }
    if (options.verbose)
      for (llvm::StringRef line : llvm::split(llvm::StringRef(report).rtrim(), '\n'))
        log << "attune-compile: tuning " << line << "\n";
    if (dumper)
      dumper->dump("tuning", ".txt", report);
  }
  timer.done("host code");
  if (emit == Emit::HostMlir)
    {
    textOut << printOp(module->getOperation());
    return "";
  }

  // LLVM IR and the host object.
  std::string tmError;
  std::unique_ptr<llvm::TargetMachine> tm = createHostTargetMachine(tmError);
  if (!tm)
    return fail(tmError);
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(*module, llvmContext, path::stem(inputFile));
  if (!llvmModule)
    return fail("cannot translate the host code of '" + inputFile +
                "' to LLVM IR");
  llvmModule->setTargetTriple(tm->getTargetTriple());
  llvmModule->setDataLayout(tm->createDataLayout());
  optimizeModule(*llvmModule, *tm);
  // Printing a large module costs real time, so only when it is wanted.
  std::string llvmText;
  if (dumper || emit == Emit::Llvm) {
    llvm::raw_string_ostream os(llvmText);
    llvmModule->print(os, nullptr);
  }
  if (dumper)
    dumper->dump("llvm", ".ll", llvmText);
  timer.done("llvm ir");
  if (std::string error = checkDumps(); !error.empty())
    return error;
  if (emit == Emit::Llvm) {
    textOut << llvmText;
    return "";
  }
  if (emit == Emit::Obj) {
    if (std::string error = emitObject(*llvmModule, *tm, outputFile);
        !error.empty())
      return fail(error);
    return "";
  }

  // The library. Scratch files live beside the output, so the final renames
  // stay on one file system; TMPDIR is the fallback for a read-only place.
  llvm::SmallString<256> outputPath(outputFile);
  if (std::error_code ec = fs::make_absolute(outputPath))
    return fail("cannot resolve '" + outputFile + "': " + ec.message());
  // validateOptions checked that this directory exists.
  llvm::SmallString<256> outputDir = path::parent_path(outputPath);
  ScratchDir scratch;
  {
    llvm::SmallString<256> prefix(outputDir);
    path::append(prefix, ".attune-compile");
    if (fs::createUniqueDirectory(prefix, scratch.path))
      if (std::error_code ec =
              fs::createUniqueDirectory("attune-compile", scratch.path))
        return fail("cannot create a scratch directory: " + ec.message());
  }

  std::string hostObject = scratch.file("host.o");
  if (std::string error = emitObject(*llvmModule, *tm, hostObject);
      !error.empty())
    return fail(error);
  timer.done("host object");

  pipeline::KernelCache cache(options.kernelCacheDir);
  unsigned jobs = std::max(1u, options.jobs);
  std::vector<std::string> kernelObjects;
  KernelBuildStats kernelStats;
  // A cold compile spends most of its time here: past a few seconds, say
  // how far it is.
  const auto kernelsStart = std::chrono::steady_clock::now();
  bool progressShown = false;
  KernelProgress progress;
  if (options.progress)
    progress = [&](size_t ready, size_t compiled, size_t total) {
      std::chrono::duration<double> elapsed =
          std::chrono::steady_clock::now() - kernelsStart;
      if (elapsed.count() < kProgressAfterSeconds)
        return;
      log << (options.progressOnTerminal ? "\r" : "")
          << llvm::format("attune-compile: kernels %zu/%zu ready, %zu compiled, %.1f s",
                          ready, total, compiled, elapsed.count())
          << (options.progressOnTerminal ? "" : "\n");
      log.flush();
      progressShown = true;
    };
  std::string kernelError =
      buildKernelObjects(host.kernels, target, cache, scratch, jobs, kernelObjects,
                         kernelStats, progress);
  if (progressShown && options.progressOnTerminal)
    log << "\n";
  if (!kernelError.empty())
    return fail(kernelError);
  timer.done("kernels");

  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return fail("cannot find the C compiler 'cc' on PATH, needed to link");
  auto ar = llvm::sys::findProgramByName("ar");
  if (!ar)
    return fail("cannot find 'ar' on PATH, needed for the static library");
  // binutils: merging the objects and hiding all but the descriptor.
  auto ld = llvm::sys::findProgramByName("ld");
  if (!ld)
    return fail("cannot find the linker 'ld' on PATH, needed for the static "
                "library");
  auto objcopy = llvm::sys::findProgramByName("objcopy");
  if (!objcopy)
    return fail("cannot find 'objcopy' (binutils) on PATH, needed for the "
                "static library");

  std::vector<std::string> objects;
  objects.push_back(hostObject);
  objects.insert(objects.end(), kernelObjects.begin(), kernelObjects.end());
  // A model without weights has an empty blob, and its host code does not
  // reference attune_weights_data, so there is nothing to link; external
  // weights are written to their own file below instead.
  const std::string staticSymbol = staticDescriptorSymbol(host.modelName);
  std::string weightsObject;
  if (!blob.empty() && hostOptions.externalWeightsFile.empty())
    if (std::string error = buildWeightsObject(
            blob, *cc, weightsSymbolOf(staticSymbol), scratch, weightsObject);
        !error.empty())
      return fail("cannot build the weights object: " + error);

  // The static archive, on a thread of its own beside the shared library's
  // link: neither reads what the other writes, and each copies the weights
  // once (a 650 MB GPT-2: link 7.9 -> 3.9 s).
  std::string linkedArchive = scratch.file("model.a");
  std::string archiveError;
  std::thread archiver([&] {
    archiveError = buildStaticArchive(objects, weightsObject, staticSymbol, *ld,
                                      *objcopy, *ar, scratch, linkedArchive);
  });
  // Every return below waits for it (its closure refers to this frame).
  struct Joiner {
    std::thread &thread;
    ~Joiner() {
      if (thread.joinable())
        thread.join();
    }
  } joinArchiver{archiver};

  // Only the descriptor leaves the library: kernels and the Halide runtime
  // stay private, so two models (or Halide itself) can share a process.
  std::string versionScript = scratch.file("exports.map");
  if (std::string error = writeFile(
          versionScript,
          "{\n  global: " ATTUNE_MODEL_ABI_SYMBOL ";\n  local: *;\n};\n");
      !error.empty())
    return fail(error);
  std::string linkedLibrary = scratch.file("model.so");
  std::vector<std::string> linkArgs = {"-shared", "-o", linkedLibrary};
  linkArgs.insert(linkArgs.end(), objects.begin(), objects.end());
  if (!weightsObject.empty()) {
    linkArgs.push_back(weightsObject);
    linkArgs.push_back(weightsAliasFlag(weightsSymbolOf(staticSymbol)));
  }
  linkArgs.push_back("-Wl,--version-script=" + versionScript);
  linkArgs.push_back("-Wl,-z,noexecstack");
  for (const std::string &lib : target.linkLibraries())
    linkArgs.push_back(lib);
  std::string linkError = runCommand(*cc, linkArgs, scratch, "link.log");
  archiver.join();
  if (!linkError.empty())
    return fail("cannot link '" + outputFile + "': " + linkError);
  if (!archiveError.empty())
    return fail("cannot archive '" + outputFile + "': " + archiveError);
  timer.done("link");

  llvm::SmallString<256> archivePath(outputPath), headerPath(outputPath);
  path::replace_extension(archivePath, "a");
  path::replace_extension(headerPath, "h");
  // The external weights file, under its final name so that the header
  // names it; written here and moved into place with the library.
  std::string weightsTmp;
  llvm::SmallString<256> weightsPath;
  if (!hostOptions.externalWeightsFile.empty()) {
    weightsTmp = scratch.file(hostOptions.externalWeightsFile);
    if (std::string error = writeFile(weightsTmp, blob); !error.empty())
      return fail(error);
    weightsPath = outputDir;
    path::append(weightsPath, hostOptions.externalWeightsFile);
  }
  std::string header;
  if (std::string error = buildHeader(linkedLibrary, headerPath, inputFile,
                                      blob, staticSymbol, weightsTmp, header);
      !error.empty())
    return fail(error);
  std::string headerTmp = scratch.file("model.h");
  if (std::string error = writeFile(headerTmp, header); !error.empty())
    return fail(error);

  // Move the files into place last, so a failed compile never leaves a
  // half-written library where an old one was. The weights go first: should
  // a later move fail, the old library meets a new weights file, which its
  // recorded hash refuses at open, rather than a new library an old file.
  std::vector<std::pair<std::string, std::string>> moves;
  if (!weightsTmp.empty())
    moves.emplace_back(weightsTmp, std::string(weightsPath));
  moves.emplace_back(linkedLibrary, std::string(outputPath));
  moves.emplace_back(linkedArchive, std::string(archivePath));
  moves.emplace_back(headerTmp, std::string(headerPath));
  for (const auto &[from, to] : moves) {
    if (std::error_code ec = fs::rename(from, to))
      if ((ec = fs::copy_file(from, to)))
        return fail("cannot write '" + to + "': " + ec.message());
  }
  timer.done("header");

  if (options.verbose) {
    double total = 0;
    for (auto &[phase, ms] : timer.phases) {
      log << llvm::format("attune-compile: %-14s %9.1f ms\n",
                                   phase.c_str(), ms);
      total += ms;
    }
    log << llvm::format("attune-compile: %-14s %9.1f ms\n", "total",
                                 total);
    uint64_t size = 0;
    (void)fs::file_size(outputPath, size);
    log << "attune-compile: target " << target.name() << ": variants "
        << llvm::join(target.variants(), ", ") << "; " << target.describeHost()
        << "\n"
        << "attune-compile: " << host.kernels.size()
        << " kernels + runtime + support code: " << kernelStats.compiled << " compiled, "
        << kernelStats.cached << " from cache ("
        << (cache.enabled() ? cache.directory() : std::string("off")) << "); "
        << blob.size() << " bytes of weights"
        << (weightsPath.empty() ? "" : ", external") << "\n"
        << "attune-compile: wrote " << outputPath << " (" << size << " bytes), "
        << archivePath << ", " << headerPath;
    if (!weightsPath.empty())
      log << ", " << weightsPath;
    log << "\n";
  }
  return "";
}

} // namespace attune::driver
