//===- attune-compile.cpp - tfm model to native library -------------------===//
//
//   attune-compile model.mlir --target=cpu -o libblock.so
//   attune-compile path/to/hf-checkpoint-folder -o libbert.so
//   attune-compile model.onnx -o libmodel.so
//
// writes libblock.so, libblock.a and libblock.h. A folder with config.json is
// a Hugging Face checkpoint: it is imported to tfm IR (compiler/frontends/
// HuggingFace.h) and compiled with the folder's safetensors as its weights; a
// .onnx file is imported likewise (OnnxImporter.h), its initializers the
// weights. A thin main over the driver
// library (compiler/driver): it parses flags, checks them before any input is
// read, creates the target and hands everything to compileModel.
//
// Every failure prints "attune-compile: error: <what>" and exits 1; MLIR
// diagnostics before it carry the file:line:col of the op at fault.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/Driver.h"
#include "compiler/frontends/HuggingFace.h"
#include "compiler/frontends/OnnxImporter.h"
#include "compiler/pipeline/GraphDot.h"
#include "compiler/pipeline/KernelCache.h"
#include "compiler/targets/TargetBackend.h"
#include "compiler/tuning/TuningDatabase.h"
#include "passes/Passes.h"

#include "mlir/IR/AsmState.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <thread>

using namespace mlir;
using attune::driver::Emit;
namespace cl = llvm::cl;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

static cl::OptionCategory compileCategory("attune-compile options");

static cl::opt<std::string> inputFile(cl::Positional, cl::Required,
                                      cl::desc("<model.mlir | checkpoint folder>"),
                                      cl::cat(compileCategory));
static cl::opt<std::string>
    outputFile("o", cl::desc("Output file (library for --emit=lib; "
                             "'-' or none prints text emits to stdout)"),
               cl::value_desc("file"), cl::cat(compileCategory));
// Plain strings rather than cl::values: a bad value must give attune's own
// "error: ..." line naming the accepted values, like every other failure.
static cl::opt<std::string> targetName("target", cl::init("cpu"),
                                       cl::desc("Code generation target: cpu, or "
                                                "cuda (an NVIDIA GPU: Halide kernels "
                                                "and cuBLASLt)"),
                                       cl::value_desc("cpu|cuda"),
                                       cl::cat(compileCategory));
static cl::opt<std::string>
    emitKind("emit", cl::init("lib"),
             cl::desc("What to write: input (the model as read: a checkpoint "
                      "folder's imported tfm IR), mlir (tfm IR after the graph passes), "
                      "host-mlir (LLVM-dialect host code), llvm (host LLVM "
                      "IR), obj (host object), lib (.so + .a + .h, default)"),
             cl::value_desc("input|mlir|host-mlir|llvm|obj|lib"),
             cl::cat(compileCategory));
static cl::opt<std::string>
    dumpPhasesTo("dump-phases-to",
                 cl::desc("Write one numbered file per compile phase into DIR"),
                 cl::value_desc("DIR"), cl::cat(compileCategory));
static cl::opt<bool>
    noFuseAttention("no-fuse-attention",
                    cl::desc("Build attention unfused (decomposes tfm.attention)"),
                    cl::cat(compileCategory));
static cl::opt<bool> noRaiseEncodings(
    "no-raise-encodings",
    cl::desc("Keep exporters' RoPE, ALiBi and T5-bias spellings as written "
             "instead of raising them to tfm.rope and score modifiers"),
    cl::cat(compileCategory));
static cl::opt<bool> fuseEpilogues(
    "fuse-epilogues",
    cl::desc("Apply the activation after a linear in the linear's kernel "
             "(tfm-fuse-epilogues; off by default: measured no faster on "
             "AVX-512, 2-3% slower on AVX2)"),
    cl::cat(compileCategory));
static cl::opt<bool> noPropagateLayouts(
    "no-propagate-layouts",
    cl::desc("Keep the transposes that split and merge heads around "
             "attention as copies instead of folding them into its layout "
             "(tfm-propagate-layouts)"),
    cl::cat(compileCategory));
static cl::opt<bool> noFuseResidualNorms(
    "no-fuse-residual-norms",
    cl::desc("Keep the residual add before a layer or RMS norm as its own "
             "kernel instead of adding it in the norm's (tfm-fuse-residual-norm)"),
    cl::cat(compileCategory));
static cl::opt<bool> mergeProjections(
    "merge-projections",
    cl::desc("Compute the q, k and v projections of one input as one linear "
             "over their concatenated weights (tfm-merge-projections; off by "
             "default: measured no faster on the CPU)"),
    cl::cat(compileCategory));
static cl::opt<bool> noPackWeights(
    "no-pack-weights",
    cl::desc("Store linear weights as the model has them instead of in the "
             "GEMM's panel layout (tfm-pack-weights)"),
    cl::cat(compileCategory));
enum class Precision { F32, BF16, F16 };
static cl::opt<Precision> precision(
    "precision",
    cl::desc("Arithmetic of the linear layers and fused attentions (the rest is f32)"),
    cl::values(clEnumValN(Precision::F32, "f32", "f32 weights and products (default)"),
               clEnumValN(Precision::BF16, "bf16",
                          "bf16 weights, inputs rounded to bf16, f32 accumulation"),
               clEnumValN(Precision::F16, "f16",
                          "--target=cuda: the linears' and attentions' operands rounded "
                          "to f16 for the tensor cores, f32 accumulation")),
    cl::init(Precision::F32), cl::cat(compileCategory));

/// --precision as the products' type.
static attune::ScalarType precisionType() {
  switch (precision) {
  case Precision::BF16:
    return attune::ScalarType::BF16;
  case Precision::F16:
    return attune::ScalarType::F16;
  case Precision::F32:
    break;
  }
  return attune::ScalarType::F32;
}

static cl::opt<std::string>
    fusionReport("fusion-report",
                 cl::desc("Write every attention site, fused or not and why, "
                          "as JSON"),
                 cl::value_desc("FILE"), cl::cat(compileCategory));
static cl::opt<std::string>
    graphFile("graph",
              cl::desc("Draw the model function after the graph passes: "
                       "FILE.dot (Graphviz source) or FILE.svg (needs "
                       "Graphviz's dot on PATH); fused attention is marked"),
              cl::value_desc("FILE.dot|FILE.svg"), cl::cat(compileCategory));
static cl::opt<std::string>
    weightsFile("weights",
                cl::desc("Weights (safetensors) for the model's tfm.weight ops; "
                         "without it weights are seeded from their init"),
                cl::value_desc("FILE.safetensors"), cl::cat(compileCategory));
static cl::opt<std::string> weightsStorage(
    "weights-storage", cl::init("embedded"),
    cl::desc("Where the library keeps its weights: embedded in the .so and "
             ".a (default), or external: in <output stem>.safetensors "
             "beside them, which the runtime memory-maps at open"),
    cl::value_desc("embedded|external"), cl::cat(compileCategory));
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
    cudaArch("cuda-arch", cl::init("sm_80"),
             cl::desc("--target=cuda: the GPU architecture the kernels' PTX is "
                      "for, sm_80 (runs on sm_80 and newer, sm_90 included) or "
                      "sm_86"),
             cl::value_desc("sm_NN"), cl::cat(compileCategory));
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
static cl::opt<cl::boolOrDefault> progressLine(
    "progress",
    cl::desc("Print how many kernels are ready once their compile takes over 2 s "
             "(default: when stderr is a terminal)"),
    cl::cat(compileCategory));
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


namespace {

/// Returned from every failure path so main() exits 1 after one message.
int fail(const llvm::Twine &message) {
  llvm::errs() << "attune-compile: error: " << message << "\n";
  return 1;
}

/// Flags checked once, before any input is read.
struct ValidatedOptions {
  attune::driver::DriverOptions driver;
  std::unique_ptr<attune::targets::TargetBackend> target;
  /// Absent with --tuning=none: every kernel keeps its formula.
  std::optional<attune::tuning::TuningDatabase> tuning;
};

int validateOptions(ValidatedOptions &valid) {
  if (emitKind == "input")
    valid.driver.emit = Emit::Input;
  else if (emitKind == "mlir")
    valid.driver.emit = Emit::Mlir;
  else if (emitKind == "host-mlir")
    valid.driver.emit = Emit::HostMlir;
  else if (emitKind == "llvm")
    valid.driver.emit = Emit::Llvm;
  else if (emitKind == "obj")
    valid.driver.emit = Emit::Obj;
  else if (emitKind == "lib")
    valid.driver.emit = Emit::Lib;
  else
    return fail("unknown --emit value '" + emitKind +
                "', expected one of input, mlir, host-mlir, llvm, obj, lib");
  bool binaryEmit = valid.driver.emit == Emit::Obj || valid.driver.emit == Emit::Lib;
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
  if (!graphFile.empty()) {
    // The extension, and for SVG that Graphviz is there, before any work:
    // a compile should not end in "cannot draw".
    attune::pipeline::GraphFormat format;
    if (std::string error = attune::pipeline::checkGraphPath(graphFile, format);
        !error.empty())
      return fail("--graph: " + error);
    if (valid.driver.emit == Emit::Input)
      return fail("--graph draws the model after the graph passes, which "
                  "--emit=input stops before; use --emit=mlir");
    if (splitInputFile)
      return fail("--graph writes one drawing; it does not combine with "
                  "--split-input-file");
    llvm::SmallString<256> dir(graphFile.getValue());
    (void)fs::make_absolute(dir);
    path::remove_filename(dir);
    if (!fs::is_directory(dir))
      return fail("--graph: directory '" + dir + "' does not exist");
  }
  // The target checks its own options (a malformed feature set, a target
  // this build cannot generate code for) before any input is read.
  attune::targets::TargetOptions targetOptions;
  targetOptions.cpuFeatureSets.assign(cpuFeatures.begin(), cpuFeatures.end());
  {
    llvm::StringRef arch = cudaArch.getValue();
    int capability = 0;
    if (!arch.consume_front("sm_") || arch.getAsInteger(10, capability))
      return fail("invalid --cuda-arch '" + cudaArch + "', expected sm_80 or sm_86");
    targetOptions.cudaCapability = capability;
  }
  targetOptions.precision = precisionType();
  std::string targetError;
  valid.target = attune::targets::createTargetBackend(targetName, targetOptions,
                                                      targetError);
  if (!valid.target)
    return fail(targetError);

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

  attune::driver::DriverOptions &d = valid.driver;
  d.tuning = valid.tuning ? &*valid.tuning : nullptr;
  d.inputFile = inputFile;
  d.outputFile = outputFile;
  d.target = valid.target.get();
  d.fuseAttention = !noFuseAttention;
  d.raiseEncodings = !noRaiseEncodings;
  d.fuseEpilogues = fuseEpilogues;
  d.packWeights = !noPackWeights;
  d.precision = precisionType();
  d.propagateLayouts = !noPropagateLayouts;
  d.mergeProjections = mergeProjections;
  d.fuseResidualNorms = !noFuseResidualNorms;
  d.fusionReportPath = fusionReport;
  d.dumpPhasesTo = dumpPhasesTo;
  d.graphPath = graphFile;
  d.weightsFile = weightsFile;
  if (weightsStorage == "external")
    d.weightStorage = attune::driver::WeightStorage::External;
  else if (weightsStorage != "embedded")
    return fail("unknown --weights-storage value '" + weightsStorage +
                "', expected embedded or external");
  d.seed = seed;
  d.entry = entryName;
  d.modelName = modelName;
  if (!noKernelCache)
    d.kernelCacheDir = kernelCacheDir.empty()
                           ? attune::pipeline::defaultKernelCacheDir()
                           : kernelCacheDir.getValue();
  d.jobs = numJobs ? numJobs.getValue()
                   : std::max(1u, std::thread::hardware_concurrency());
  d.verbose = verbose;
  d.progressOnTerminal = llvm::sys::Process::StandardErrIsDisplayed();
  d.progress = progressLine == cl::BOU_UNSET ? d.progressOnTerminal
                                              : progressLine == cl::BOU_TRUE;
  return 0;
}

/// Compiles one model held in `buffer`. Text emits go to `textOut`.

/// Compiles one model; a failure prints its message.
int compile(std::unique_ptr<llvm::MemoryBuffer> buffer,
            const attune::driver::DriverOptions &options, llvm::raw_ostream &textOut) {
  std::string error =
      attune::driver::compileModel(std::move(buffer), options, textOut, llvm::errs());
  return error.empty() ? 0 : fail(error);
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

  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> buffer = nullptr;
  llvm::SmallString<128> onnxWeights;
  llvm::FileRemover onnxWeightsRemover;
  if (attune::frontends::isHuggingFaceFolder(inputFile)) {
    if (splitInputFile)
      return fail("--split-input-file takes a .mlir file, not a checkpoint folder");
    auto imported = attune::frontends::importHuggingFace(inputFile);
    if (!imported)
      return fail("cannot import '" + inputFile +
                  "': " + llvm::toString(imported.takeError()));
    if (verbose)
      llvm::errs() << "attune-compile: imported " << imported->summary << "\n";
    // Diagnostics then point into the imported IR, which --dump-phases-to
    // writes as its first phase.
    llvm::SmallString<256> name(inputFile.getValue());
    path::append(name, "imported.mlir");
    buffer = llvm::MemoryBuffer::getMemBufferCopy(imported->ir, name);
    if (valid.driver.weightsFile.empty())
      valid.driver.weightsFile = inputFile;
  } else if (attune::frontends::isOnnxFile(inputFile)) {
    // An ONNX model: its initializers, written by the importer as a
    // safetensors blob, are bound from a temporary file removed on exit.
    if (splitInputFile)
      return fail("--split-input-file takes a .mlir file, not an ONNX model");
    auto imported = attune::frontends::importOnnx(inputFile);
    if (!imported)
      return fail("cannot import '" + inputFile +
                  "': " + llvm::toString(imported.takeError()));
    if (verbose)
      llvm::errs() << "attune-compile: imported " << imported->summary << "\n";
    buffer = llvm::MemoryBuffer::getMemBufferCopy(imported->ir,
                                                  inputFile + ".imported.mlir");
    if (valid.driver.weightsFile.empty()) {
      int fd;
      if (std::error_code ec = fs::createTemporaryFile("attune-onnx", "safetensors",
                                                      fd, onnxWeights))
        return fail("cannot create a temporary weights file: " + ec.message());
      onnxWeightsRemover.setFile(onnxWeights);
      llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
      os << imported->weights;
      os.close();
      if (os.has_error())
        return fail("cannot write the temporary weights file '" + onnxWeights + "'");
      valid.driver.weightsFile = onnxWeights.str().str();
    }
  } else {
    if (fs::is_directory(inputFile))
      return fail("'" + inputFile + "' is a directory without a config.json "
                  "(expected a .mlir file or a Hugging Face checkpoint folder)");
    buffer = llvm::MemoryBuffer::getFileOrSTDIN(inputFile);
    if (std::error_code ec = buffer.getError())
      return fail("cannot read '" + inputFile + "': " + ec.message());
  }

  // Text emits go to -o (stdout by default); binary emits write their own
  // files, and a ToolOutputFile would leave an empty one behind.
  std::unique_ptr<llvm::ToolOutputFile> textFile;
  if (valid.driver.emit != Emit::Obj && valid.driver.emit != Emit::Lib) {
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
              return success(compile(std::move(chunk), valid.driver, os) == 0);
            },
            textOut, kDefaultSplitMarker, kDefaultSplitMarker)))
      rc = 1;
  } else {
    rc = compile(std::move(*buffer), valid.driver, textOut);
  }
  if (rc == 0 && textFile)
    textFile->keep();
  return rc;
}
