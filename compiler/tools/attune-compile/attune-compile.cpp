//===- attune-compile.cpp - tfm model to native library -------------------===//
//
//   attune-compile model.mlir --target=cpu -o libblock.so
//
// writes libblock.so, libblock.a and libblock.h. The phases, in order:
//
//   parse + verify -> materialize weights -> graph pipeline (fusion)
//   -> host code (LLVM dialect) -> LLVM IR -> host object
//   -> kernels (Halide, cached) + Halide runtime (cached) + weights object
//   -> link (cc) -> archive (ar) -> header
//
// Every failure prints "attune-compile: error: <what>" and exits 1; MLIR
// diagnostics before it carry the file:line:col of the op at fault.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/halide/Kernels.h"
#include "compiler/codegen/host/HostCodegen.h"
#include "compiler/frontends/SafeTensors.h"
#include "compiler/frontends/Weights.h"
#include "compiler/pipeline/KernelCache.h"
#include "compiler/pipeline/PhaseDump.h"
#include "compiler/pipeline/Pipeline.h"
#include "compiler/tuning/TuningDatabase.h"
#include "dialects/tfm/TfmDialect.h"
#include "passes/Passes.h"

#include "attune/runtime.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>

using namespace mlir;
namespace cl = llvm::cl;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

static cl::OptionCategory compileCategory("attune-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<model.mlir>"),
                                      cl::cat(compileCategory));
static cl::opt<std::string>
    outputFile("o", cl::desc("Output file (library for --emit=lib; "
                             "'-' or none prints text emits to stdout)"),
               cl::value_desc("file"), cl::cat(compileCategory));
// Plain strings rather than cl::values: a bad value must give attune's own
// "error: ..." line naming the accepted values, like every other failure.
static cl::opt<std::string> targetName("target", cl::init("cpu"),
                                       cl::desc("Code generation target: cpu "
                                                "(cuda is planned)"),
                                       cl::value_desc("cpu|cuda"),
                                       cl::cat(compileCategory));
static cl::opt<std::string>
    emitKind("emit", cl::init("lib"),
             cl::desc("What to write: mlir (tfm IR after the graph passes), "
                      "host-mlir (LLVM-dialect host code), llvm (host LLVM "
                      "IR), obj (host object), lib (.so + .a + .h, default)"),
             cl::value_desc("mlir|host-mlir|llvm|obj|lib"),
             cl::cat(compileCategory));
static cl::opt<std::string>
    dumpPhasesTo("dump-phases-to",
                 cl::desc("Write one numbered file per compile phase into DIR"),
                 cl::value_desc("DIR"), cl::cat(compileCategory));
static cl::opt<bool>
    noFuseAttention("no-fuse-attention",
                    cl::desc("Build attention unfused (decomposes tfm.attention)"),
                    cl::cat(compileCategory));
static cl::opt<std::string>
    fusionReport("fusion-report",
                 cl::desc("Write every attention site, fused or not and why, "
                          "as JSON"),
                 cl::value_desc("FILE"), cl::cat(compileCategory));
static cl::opt<std::string>
    weightsFile("weights",
                cl::desc("Weights (safetensors) for the model's tfm.weight ops; "
                         "without it weights are seeded from their init"),
                cl::value_desc("FILE.safetensors"), cl::cat(compileCategory));
static cl::opt<uint64_t> seed("seed", cl::init(0),
                              cl::desc("Seed for generated weights"),
                              cl::cat(compileCategory));
static cl::opt<std::string>
    entryName("entry", cl::desc("Function to compile (default: the only "
                                "public function)"),
              cl::value_desc("NAME"), cl::cat(compileCategory));
static cl::opt<std::string>
    modelName("name", cl::desc("Model name recorded in the library "
                               "(default: the function's name)"),
              cl::value_desc("NAME"), cl::cat(compileCategory));
static cl::list<std::string>
    cpuFeatures("cpu-features", cl::CommaSeparated,
                cl::desc("Halide feature sets the kernels are compiled for, "
                         "best first (default: "
                         "avx512_sapphirerapids,avx2-fma-f16c)"),
                cl::value_desc("SET,..."), cl::cat(compileCategory));
static cl::opt<std::string>
    kernelCacheDir("kernel-cache",
                   cl::desc("Directory caching compiled kernels (default: "
                            "$ATTUNE_KERNEL_CACHE, $XDG_CACHE_HOME/attune or "
                            "~/.cache/attune)"),
                   cl::value_desc("DIR"), cl::cat(compileCategory));
static cl::opt<bool> noKernelCache("no-kernel-cache",
                                   cl::desc("Compile every kernel afresh"),
                                   cl::cat(compileCategory));
static cl::opt<unsigned>
    numJobs("j", cl::Prefix, cl::init(0),
            cl::desc("Compile kernels on N threads (default: hardware threads)"),
            cl::value_desc("N"), cl::cat(compileCategory));
static cl::opt<bool> splitInputFile(
    "split-input-file",
    cl::desc("Compile each '// -----' chunk of the input on its own (text "
             "emits only; for tests)"),
    cl::cat(compileCategory));
static cl::opt<std::string>
    tuningFile("tuning",
               cl::desc("Tuning database (JSON, from attune-tune) giving the "
                        "kernels' schedule parameters; 'none' uses the "
                        "builders' formulas (default: the database shipped "
                        "with attune)"),
               cl::value_desc("FILE|none"), cl::cat(compileCategory));
static cl::opt<bool> verbose("verbose",
                             cl::desc("Print phase timings and a summary"),
                             cl::cat(compileCategory));

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

namespace {

/// Returned from every failure path so main() exits 1 after one message.
int fail(const llvm::Twine &message) {
  llvm::errs() << "attune-compile: error: " << message << "\n";
  return 1;
}

/// A scratch directory removed with everything in it when the compile ends,
/// on success and on every failure path alike.
struct ScratchDir {
  llvm::SmallString<256> path;
  ~ScratchDir() {
    if (!path.empty())
      fs::remove_directories(path, /*IgnoreErrors=*/true);
  }
  std::string file(llvm::StringRef name) const {
    llvm::SmallString<256> p(path);
    path::append(p, name);
    return std::string(p);
  }
};

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

std::string readFileOrEmpty(llvm::StringRef file) {
  auto buffer = llvm::MemoryBuffer::getFile(file);
  return buffer ? (*buffer)->getBuffer().str() : std::string();
}

/// Runs `program args...` and returns an empty string, or a message with the
/// full command and its output.
std::string runCommand(llvm::StringRef program,
                       llvm::ArrayRef<std::string> args,
                       const ScratchDir &scratch, llvm::StringRef logName) {
  llvm::SmallVector<llvm::StringRef> argv;
  argv.push_back(program);
  for (const std::string &a : args)
    argv.push_back(a);
  std::string log = scratch.file(logName);
  std::optional<llvm::StringRef> redirects[] = {llvm::StringRef(""),
                                                llvm::StringRef(log),
                                                llvm::StringRef(log)};
  std::string errMsg;
  int rc = llvm::sys::ExecuteAndWait(program, argv, std::nullopt, redirects,
                                     /*SecondsToWait=*/0, /*MemoryLimit=*/0,
                                     &errMsg);
  if (rc == 0)
    return "";
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "command failed";
  if (rc < 0)
    os << " (" << errMsg << ")";
  else
    os << " with exit code " << rc;
  os << ": " << llvm::join(argv, " ");
  std::string output = readFileOrEmpty(log);
  if (!output.empty())
    os << "\n" << llvm::StringRef(output).rtrim();
  return message;
}

std::string writeFile(llvm::StringRef file, llvm::StringRef contents) {
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec, fs::OF_None);
  if (ec)
    return ("cannot write '" + file + "': " + ec.message()).str();
  os << contents;
  os.close();
  if (os.has_error())
    return ("cannot write '" + file + "': " + os.error().message()).str();
  return "";
}

std::string printOp(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  op->print(os);
  os << "\n";
  return text;
}

//===----------------------------------------------------------------------===//
// Host LLVM IR -> object
//===----------------------------------------------------------------------===//

/// A TargetMachine for the machine that runs the compiler. The host code only
/// sequences kernel calls, so it targets the baseline CPU of the triple: the
/// kernels carry the ISA-specific code and dispatch at run time.
std::unique_ptr<llvm::TargetMachine> createHostTargetMachine(std::string &error) {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::Triple triple(llvm::sys::getProcessTriple());
  const llvm::Target *target = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, "generic", "", options, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Default));
  if (!tm)
    error = "cannot create a target machine for " + triple.str();
  return tm;
}

void optimizeModule(llvm::Module &module, llvm::TargetMachine &tm) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  mpm.run(module, mam);
}

std::string emitObject(llvm::Module &module, llvm::TargetMachine &tm,
                       llvm::StringRef file) {
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec, fs::OF_None);
  if (ec)
    return ("cannot write '" + file + "': " + ec.message()).str();
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, os, nullptr, llvm::CodeGenFileType::ObjectFile))
    return "the host target cannot emit object files";
  pm.run(module);
  os.close();
  if (os.has_error())
    return ("cannot write '" + file + "': " + os.error().message()).str();
  return "";
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

struct KernelBuildStats {
  unsigned compiled = 0, cached = 0;
};

/// Produces one object per kernel plus the Halide runtime, from the cache
/// where possible, compiling the rest on `jobs` threads. Objects are listed
/// in a deterministic order (kernels in order of first use, then runtime).
std::string buildKernelObjects(const std::vector<attune::codegen::KernelSpec> &kernels,
                               const attune::codegen::CpuTargetOptions &target,
                               const attune::pipeline::KernelCache &cache,
                               const ScratchDir &scratch, unsigned jobs,
                               std::vector<std::string> &objects,
                               KernelBuildStats &stats) {
  const std::string &buildId = attune::pipeline::compilerBuildId();
  // Work item i < kernels.size() is kernel i; the last one is the runtime.
  size_t numItems = kernels.size() + 1;
  std::vector<std::string> paths(numItems), errors(numItems);
  std::vector<char> fromCache(numItems, 0);
  std::atomic<size_t> nextItem{0};

  auto buildItem = [&](size_t i) {
    bool isRuntime = i == kernels.size();
    std::string name = isRuntime ? "halide_runtime" : kernels[i].symbolName();
    std::string key = attune::pipeline::kernelCacheKey(
        name, isRuntime ? "" : kernels[i].scheduleKey(), target.featureSets,
        buildId);
    if (auto hit = cache.lookup(key)) {
      paths[i] = *hit;
      fromCache[i] = 1;
      return;
    }
    std::string object = scratch.file(name + ".o");
    std::string error =
        isRuntime ? attune::codegen::compileHalideRuntime(target, object)
                  : attune::codegen::compileKernelObject(kernels[i], target, object);
    if (!error.empty()) {
      errors[i] = "cannot compile " +
                  (isRuntime ? std::string("the Halide runtime")
                             : "kernel '" + name + "'") +
                  ": " + error;
      return;
    }
    paths[i] = object;
    // A cache that cannot be written only costs time on the next compile.
    (void)cache.store(key, object);
  };
  auto worker = [&] {
    for (size_t i; (i = nextItem.fetch_add(1)) < numItems;)
      buildItem(i);
  };

  unsigned numThreads = std::max(1u, std::min<unsigned>(jobs, numItems));
  std::vector<std::thread> threads;
  for (unsigned t = 1; t < numThreads; ++t)
    threads.emplace_back(worker);
  worker();
  for (std::thread &t : threads)
    t.join();

  for (size_t i = 0; i < numItems; ++i) {
    if (!errors[i].empty())
      return errors[i];
    (fromCache[i] ? stats.cached : stats.compiled) += 1;
    objects.push_back(paths[i]);
  }
  return "";
}

/// The weights blob as an object defining `attune_weights_data`: the blob is
/// written next to an assembly file that .incbin's it, so a large model never
/// passes through a C array or the compiler's memory twice.
std::string buildWeightsObject(llvm::StringRef blob, llvm::StringRef cc,
                               const ScratchDir &scratch, std::string &object) {
  std::string binPath = scratch.file("weights.bin");
  if (std::string error = writeFile(binPath, blob); !error.empty())
    return error;
  std::string quoted;
  for (char c : binPath) {
    if (c == '"' || c == '\\')
      quoted += '\\';
    quoted += c;
  }
  std::string assembly =
      "  .section .rodata\n"
      "  .balign 64\n"
      "  .globl attune_weights_data\n"
      "  .hidden attune_weights_data\n"
      "attune_weights_data:\n"
      "  .incbin \"" + quoted + "\"\n"
      "  .section .note.GNU-stack,\"\",@progbits\n";
  std::string asmPath = scratch.file("weights.S");
  if (std::string error = writeFile(asmPath, assembly); !error.empty())
    return error;
  object = scratch.file("weights.o");
  return runCommand(cc, {"-c", asmPath, "-o", object}, scratch, "weights.log");
}

//===----------------------------------------------------------------------===//
// Header
//===----------------------------------------------------------------------===//

void describeTensor(llvm::raw_ostream &os, const attune_tensor_info_t &info) {
  os << " *   " << info.name << ": " << attune_dtype_name(info.dtype) << " [";
  for (int32_t d = 0; d < info.rank; ++d) {
    if (d)
      os << ", ";
    if (info.dims[d] < 0)
      os << (info.dim_names[d] ? info.dim_names[d] : "?");
    else
      os << info.dims[d];
  }
  os << "]\n";
}

/// The header for `library`, described through the runtime's own view of the
/// library (opening it is also the last check that what was linked loads).
std::string buildHeader(llvm::StringRef library, llvm::StringRef headerPath,
                        llvm::StringRef blob, std::string &header) {
  attune_model_t *model = nullptr;
  if (attune_model_open(library.str().c_str(), &model) != ATTUNE_OK)
    return ("the linked library '" + library + "' does not open: " +
            attune_status_message())
        .str();
  // The prefix keeps the guard an identifier whatever the file is called
  // (-o 2layer.so would otherwise give 2LAYER_H) and out of the way of the
  // user's own macros.
  llvm::StringRef stem = path::stem(headerPath);
  std::string guard = "ATTUNE_";
  for (char c : stem)
    guard += llvm::isAlnum(c) ? llvm::toUpper(c) : '_';
  guard += "_H";

  llvm::raw_string_ostream os(header);
  os << "/* " << path::filename(headerPath) << " - generated by attune-compile from "
     << path::filename(inputFile) << "; do not edit.\n"
     << " *\n"
     << " * Model: " << attune_model_name(model) << "\n"
     << " * Inputs (dense row-major; named dimensions are dynamic):\n";
  attune_tensor_info_t info;
  for (int32_t i = 0, e = attune_model_num_inputs(model); i < e; ++i)
    if (attune_model_input_info(model, i, &info) == ATTUNE_OK)
      describeTensor(os, info);
  os << " * Outputs:\n";
  for (int32_t i = 0, e = attune_model_num_outputs(model); i < e; ++i)
    if (attune_model_output_info(model, i, &info) == ATTUNE_OK)
      describeTensor(os, info);
  if (blob.empty()) {
    os << " * Weights: none.\n";
  } else {
    size_t numWeights = 0;
    if (auto view = attune::SafeTensorsView::parse(blob.data(), blob.size()))
      numWeights = view->entries().size();
    else
      llvm::consumeError(view.takeError());
    os << " * Weights: " << numWeights << " tensors, " << blob.size()
       << " bytes, embedded.\n";
  }
  os << " *\n"
     << " * Open the shared library with attune_model_open() from the attune\n"
     << " * runtime; attune_model_abi() is the descriptor the runtime reads.\n"
     << " */\n"
     << "#ifndef " << guard << "\n#define " << guard << "\n\n"
     << "#include <attune/runtime.h>\n\n"
     << "#ifdef __cplusplus\nextern \"C\" {\n#endif\n\n"
     << "const attune_model_abi_t *attune_model_abi(void);\n\n"
     << "#ifdef __cplusplus\n} /* extern \"C\" */\n#endif\n\n"
     << "#endif /* " << guard << " */\n";
  attune_model_close(model);
  return "";
}

//===----------------------------------------------------------------------===//
// The compile
//===----------------------------------------------------------------------===//

enum class Emit { Mlir, HostMlir, Llvm, Obj, Lib };

/// Flags checked once, before any input is read.
struct ValidatedOptions {
  Emit emit = Emit::Lib;
  attune::codegen::CpuTargetOptions target;
  /// Absent with --tuning=none: every kernel keeps its formula.
  std::optional<attune::tuning::TuningDatabase> tuning;
};

int validateOptions(ValidatedOptions &valid) {
  if (emitKind == "mlir")
    valid.emit = Emit::Mlir;
  else if (emitKind == "host-mlir")
    valid.emit = Emit::HostMlir;
  else if (emitKind == "llvm")
    valid.emit = Emit::Llvm;
  else if (emitKind == "obj")
    valid.emit = Emit::Obj;
  else if (emitKind == "lib")
    valid.emit = Emit::Lib;
  else
    return fail("unknown --emit value '" + emitKind +
                "', expected one of mlir, host-mlir, llvm, obj, lib");
  if (targetName == "cuda")
    return fail("target 'cuda' is not supported yet: only --target=cpu "
                "generates code in this version");
  if (targetName != "cpu")
    return fail("unknown --target value '" + targetName +
                "', expected cpu or cuda");
  bool binaryEmit = valid.emit == Emit::Obj || valid.emit == Emit::Lib;
  if (binaryEmit && (outputFile.empty() || outputFile == "-"))
    return fail("--emit=" + emitKind + " needs an output file (-o FILE)");
  if (binaryEmit) {
    // Checked before any work: a typo in -o should not cost a compile.
    llvm::SmallString<256> dir(outputFile.getValue());
    (void)fs::make_absolute(dir);
    path::remove_filename(dir);
    if (!fs::is_directory(dir))
      return fail("output directory '" + dir + "' does not exist");
  }
  if (binaryEmit && splitInputFile)
    return fail("--split-input-file needs a text --emit (mlir, host-mlir or "
                "llvm), got --emit=" + emitKind);
  if (!cpuFeatures.empty()) {
    valid.target.featureSets.clear();
    for (const std::string &features : cpuFeatures) {
      if (features.empty() ||
          !llvm::all_of(features, [](char c) {
            return llvm::isAlnum(c) || c == '_' || c == '-';
          }))
        return fail("invalid --cpu-features entry '" + features +
                    "', expected a Halide feature list such as avx2-fma-f16c");
      valid.target.featureSets.push_back(features);
    }
  }
  // Read before any input, so a bad database costs no compile. A missing
  // default database is an error too: it means a broken build tree, and
  // silently falling back to formulas would hide slower kernels.
  if (tuningFile != "none") {
    std::string path = tuningFile.empty()
                           ? attune::tuning::defaultTuningDatabasePath()
                           : tuningFile.getValue();
    auto db = attune::tuning::TuningDatabase::load(path);
    if (!db)
      return fail("--tuning: " + llvm::toString(db.takeError()));
    valid.tuning = std::move(*db);
  }
  return 0;
}

/// Compiles one model held in `buffer`. Text emits go to `textOut`.
int compile(std::unique_ptr<llvm::MemoryBuffer> buffer,
            const ValidatedOptions &valid, llvm::raw_ostream &textOut) {
  PhaseTimer timer;
  const Emit emit = valid.emit;
  const attune::codegen::CpuTargetOptions &target = valid.target;

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
  SourceMgrDiagnosticHandler diagHandler(sourceMgr, &context);
  // Remarks (an attention site left unfused, and why) are for --verbose and
  // --fusion-report; a successful compile prints nothing. Handlers registered
  // later run first, so this one sees every diagnostic before the printer.
  DiagnosticEngine::HandlerID remarkFilter =
      context.getDiagEngine().registerHandler([](Diagnostic &diag) {
        return success(!verbose && diag.getSeverity() == DiagnosticSeverity::Remark);
      });
  (void)remarkFilter;
  OwningOpRef<ModuleOp> module =
      parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
  if (!module)
    return fail("cannot compile '" + inputFile + "': it is not a valid tfm model");
  timer.done("parse+verify");

  std::optional<attune::pipeline::PhaseDumper> dumper;
  if (!dumpPhasesTo.empty()) {
    dumper.emplace(dumpPhasesTo);
    dumper->dump("input", module->getOperation());
  }
  auto checkDumps = [&]() -> int {
    if (dumper && !dumper->error().empty())
      return fail("--dump-phases-to: " + dumper->error());
    return 0;
  };

  // Weights are bound before any pass: passes may fold or drop a tfm.weight,
  // but the weights file must match the model as the user wrote it.
  // A missing or unreadable file is reported by materializeWeights, with
  // the system's reason (not found, permission denied, a directory).
  std::string blob;
  {
    auto weights = attune::materializeWeights(*module, weightsFile, seed);
    if (!weights)
      return fail("cannot bind weights" +
                  (weightsFile.empty() ? std::string()
                                       : " from '" + weightsFile + "'") +
                  ": " + llvm::toString(weights.takeError()));
    blob = std::move(*weights);
  }
  timer.done("weights");

  // Graph pipeline.
  attune::pipeline::CompileOptions options;
  options.fuseAttention = !noFuseAttention;
  options.fusionReportPath = noFuseAttention ? "" : fusionReport.getValue();
  PassManager pm(&context, ModuleOp::getOperationName());
  if (failed(applyPassManagerCLOptions(pm)))
    return fail("invalid pass manager options");
  if (dumper)
    pm.addInstrumentation(attune::pipeline::createPhaseDumpInstrumentation(*dumper));
  attune::pipeline::buildGraphPipeline(pm, options);
  if (failed(pm.run(*module)))
    return fail("the graph pipeline failed on '" + inputFile + "'");
  if (noFuseAttention && !fusionReport.empty())
    if (std::string error =
            attune::pipeline::writeFusionDisabledReport(fusionReport);
        !error.empty())
      return fail(error);
  timer.done("graph passes");
  if (int rc = checkDumps())
    return rc;
  if (emit == Emit::Mlir)
    {
    textOut << printOp(module->getOperation());
    return 0;
  }

  // Host code.
  attune::codegen::HostLoweringOptions hostOptions;
  hostOptions.modelName = modelName;
  hostOptions.entry = entryName;
  hostOptions.weightsBlob = blob;
  hostOptions.sourceIR = sourceIR;
  attune::codegen::HostLoweringResult host;
  if (failed(attune::codegen::lowerModelToHost(*module, hostOptions, host)))
    return fail("cannot generate host code for '" + inputFile + "'");
  if (dumper) {
    dumper->dump("host-llvm", module->getOperation());
    dumper->dump("memory-plan", ".txt", host.memoryPlan);
  }
  // Schedules from the tuning database; a kernel or level without an entry
  // keeps the builder's formula. They change the kernels' code, not the host
  // code, so they are applied after it and before the kernels are built.
  {
    std::string report;
    for (attune::codegen::KernelSpec &spec : host.kernels) {
      if (valid.tuning)
        valid.tuning->apply(spec);
      report += spec.symbolName() + " " +
                attune::tuning::describeTuning(
                    spec, valid.tuning ? &*valid.tuning : nullptr) +
                "\n";
    }
    if (verbose)
      for (llvm::StringRef line : llvm::split(llvm::StringRef(report).rtrim(), '\n'))
        llvm::errs() << "attune-compile: tuning " << line << "\n";
    if (dumper)
      dumper->dump("tuning", ".txt", report);
  }
  timer.done("host code");
  if (emit == Emit::HostMlir)
    {
    textOut << printOp(module->getOperation());
    return 0;
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
  if (int rc = checkDumps())
    return rc;
  if (emit == Emit::Llvm) {
    textOut << llvmText;
    return 0;
  }
  if (emit == Emit::Obj) {
    if (std::string error = emitObject(*llvmModule, *tm, outputFile);
        !error.empty())
      return fail(error);
    return 0;
  }

  // The library. Scratch files live beside the output, so the final renames
  // stay on one file system; TMPDIR is the fallback for a read-only place.
  llvm::SmallString<256> outputPath(outputFile.getValue());
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

  std::string cacheDir;
  if (!noKernelCache)
    cacheDir = kernelCacheDir.empty() ? attune::pipeline::defaultKernelCacheDir()
                                      : kernelCacheDir.getValue();
  attune::pipeline::KernelCache cache(cacheDir);
  unsigned jobs = numJobs ? numJobs.getValue()
                          : std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::string> kernelObjects;
  KernelBuildStats kernelStats;
  if (std::string error =
          buildKernelObjects(host.kernels, target, cache, scratch, jobs,
                             kernelObjects, kernelStats);
      !error.empty())
    return fail(error);
  timer.done("kernels");

  auto cc = llvm::sys::findProgramByName("cc");
  if (!cc)
    return fail("cannot find the C compiler 'cc' on PATH, needed to link");
  auto ar = llvm::sys::findProgramByName("ar");
  if (!ar)
    return fail("cannot find 'ar' on PATH, needed for the static library");

  std::vector<std::string> objects;
  objects.push_back(hostObject);
  objects.insert(objects.end(), kernelObjects.begin(), kernelObjects.end());
  // A model without weights has an empty blob, and its host code does not
  // reference attune_weights_data, so there is nothing to link.
  if (!blob.empty()) {
    std::string weightsObject;
    if (std::string error =
            buildWeightsObject(blob, *cc, scratch, weightsObject);
        !error.empty())
      return fail("cannot build the weights object: " + error);
    objects.push_back(weightsObject);
  }

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
  linkArgs.push_back("-Wl,--version-script=" + versionScript);
  linkArgs.push_back("-Wl,-z,noexecstack");
  for (const char *lib : {"-lpthread", "-ldl", "-lm"})
    linkArgs.push_back(lib);
  if (std::string error = runCommand(*cc, linkArgs, scratch, "link.log");
      !error.empty())
    return fail("cannot link '" + outputFile + "': " + error);

  std::string linkedArchive = scratch.file("model.a");
  std::vector<std::string> arArgs = {"rcs", linkedArchive};
  arArgs.insert(arArgs.end(), objects.begin(), objects.end());
  if (std::string error = runCommand(*ar, arArgs, scratch, "ar.log");
      !error.empty())
    return fail("cannot archive '" + outputFile + "': " + error);
  timer.done("link");

  llvm::SmallString<256> archivePath(outputPath), headerPath(outputPath);
  path::replace_extension(archivePath, "a");
  path::replace_extension(headerPath, "h");
  std::string header;
  if (std::string error = buildHeader(linkedLibrary, headerPath, blob, header);
      !error.empty())
    return fail(error);
  std::string headerTmp = scratch.file("model.h");
  if (std::string error = writeFile(headerTmp, header); !error.empty())
    return fail(error);

  // Move the three files into place last, so a failed compile never leaves a
  // half-written library where an old one was.
  for (auto [from, to] : {std::pair<std::string, std::string>(linkedLibrary, std::string(outputPath)),
                          {linkedArchive, std::string(archivePath)},
                          {headerTmp, std::string(headerPath)}}) {
    if (std::error_code ec = fs::rename(from, to))
      if ((ec = fs::copy_file(from, to)))
        return fail("cannot write '" + to + "': " + ec.message());
  }
  timer.done("header");

  if (verbose) {
    double total = 0;
    for (auto &[phase, ms] : timer.phases) {
      llvm::errs() << llvm::format("attune-compile: %-14s %9.1f ms\n",
                                   phase.c_str(), ms);
      total += ms;
    }
    llvm::errs() << llvm::format("attune-compile: %-14s %9.1f ms\n", "total",
                                 total);
    uint64_t size = 0;
    (void)fs::file_size(outputPath, size);
    llvm::errs() << "attune-compile: " << host.kernels.size()
                 << " kernels + Halide runtime: " << kernelStats.compiled
                 << " compiled, " << kernelStats.cached << " from cache ("
                 << (cache.enabled() ? cache.directory() : std::string("off"))
                 << "); " << blob.size() << " bytes of weights\n"
                 << "attune-compile: wrote " << outputPath << " (" << size
                 << " bytes), " << archivePath << ", " << headerPath << "\n";
  }
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  // Registered before the pass manager's options, which list the registered
  // passes when they are created, so that --mlir-print-ir-after=cse and
  // --mlir-print-ir-before=tfm-fuse-attention accept the pipeline's passes.
  attune::registerAttunePasses();
  registerCanonicalizer();
  registerCSE();
  registerAsmPrinterCLOptions();
  registerMLIRContextCLOptions();
  registerPassManagerCLOptions();
  cl::HideUnrelatedOptions({&compileCategory});
  cl::ParseCommandLineOptions(
      argc, argv,
      "attune-compile: compile a tfm model (.mlir) into a native library\n");
  ValidatedOptions valid;
  if (int rc = validateOptions(valid))
    return rc;

  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
  if (std::error_code ec = buffer.getError())
    return fail("cannot read '" + inputFile + "': " + ec.message());

  // Text emits go to -o (stdout by default); binary emits write their own
  // files, and a ToolOutputFile would leave an empty one behind.
  std::unique_ptr<llvm::ToolOutputFile> textFile;
  if (valid.emit != Emit::Obj && valid.emit != Emit::Lib) {
    std::string error;
    textFile = openOutputFile(outputFile.empty() ? "-" : outputFile.getValue(),
                              &error);
    if (!textFile)
      return fail(error);
  }
  llvm::raw_ostream &textOut = textFile ? textFile->os() : llvm::nulls();

  int rc = 0;
  if (splitInputFile) {
    // Each chunk is a whole compile; every chunk runs even after a failure,
    // so one file can hold many error cases.
    if (failed(splitAndProcessBuffer(
            std::move(*buffer),
            [&](std::unique_ptr<llvm::MemoryBuffer> chunk, llvm::raw_ostream &os) {
              return success(compile(std::move(chunk), valid, os) == 0);
            },
            textOut, kDefaultSplitMarker, kDefaultSplitMarker)))
      rc = 1;
  } else {
    rc = compile(std::move(*buffer), valid, textOut);
  }
  if (rc == 0 && textFile)
    textFile->keep();
  return rc;
}
