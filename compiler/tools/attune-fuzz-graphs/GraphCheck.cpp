//===- GraphCheck.cpp - compile, run and compare one fuzzed graph ---------===//

#include "compiler/tools/attune-fuzz-graphs/GraphCheck.h"

#include "attune/runtime.h"
#include "compiler/driver/Driver.h"
#include "compiler/frontends/ScalarTypes.h"
#include "compiler/reference/Evaluator.h"
#include "compiler/targets/TargetBackend.h"
#include "compiler/tools/attune-run/RunInputs.h"
#include "compiler/tuning/TuningDatabase.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <fcntl.h>
#include <poll.h>
#include <random>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace attune::fuzzgraphs {

using attune::reference::Tensor;

const char *outcomeName(Outcome outcome) {
  switch (outcome) {
  case Outcome::Ok:
    return "ok";
  case Outcome::Mismatch:
    return "mismatch";
  case Outcome::CompileError:
    return "compile error";
  case Outcome::RuntimeError:
    return "runtime error";
  case Outcome::ReferenceError:
    return "reference error";
  case Outcome::Crash:
    return "crash";
  case Outcome::Timeout:
    return "timeout";
  case Outcome::InvalidProgram:
    return "invalid program";
  case Outcome::Interrupted:
    return "interrupted";
  }
  return "unknown";
}

namespace {

CheckResult failure(Outcome outcome, std::string message, int fused = -1) {
  return CheckResult{outcome, std::move(message), fused};
}

/// A library opened through the runtime, closed on scope exit.
struct Library {
  attune_model_t *model = nullptr;
  ~Library() { attune_model_close(model); }
};

/// Owns the bytes of every input and output buffer of one run.
struct Buffers {
  std::vector<std::vector<unsigned char>> storage;
  std::vector<attune_tensor_t> tensors;
};

int64_t numElements(const attune_tensor_t &t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t.rank; ++i)
    n *= t.shape[i];
  return n;
}

double readElement(const attune_tensor_t &t, int64_t i) {
  return attune::run::readElement(t, i).value_or(NAN);
}

void writeElement(attune_tensor_t &t, int64_t i, double x) {
  switch (t.dtype) {
  case ATTUNE_DTYPE_F32:
    static_cast<float *>(t.data)[i] = static_cast<float>(x);
    return;
  case ATTUNE_DTYPE_I32:
    static_cast<int32_t *>(t.data)[i] = static_cast<int32_t>(x);
    return;
  case ATTUNE_DTYPE_I64:
    static_cast<int64_t *>(t.data)[i] = static_cast<int64_t>(x);
    return;
  case ATTUNE_DTYPE_I8:
    static_cast<int8_t *>(t.data)[i] = static_cast<int8_t>(x);
    return;
  case ATTUNE_DTYPE_BOOL:
    static_cast<uint8_t *>(t.data)[i] = x != 0;
    return;
  default:
    return;
  }
}

ScalarType referenceType(attune_dtype_t dtype) {
  switch (dtype) {
  case ATTUNE_DTYPE_F16:
    return ScalarType::F16;
  case ATTUNE_DTYPE_BF16:
    return ScalarType::BF16;
  case ATTUNE_DTYPE_I32:
    return ScalarType::I32;
  case ATTUNE_DTYPE_I64:
    return ScalarType::I64;
  case ATTUNE_DTYPE_I8:
    return ScalarType::I8;
  case ATTUNE_DTYPE_BOOL:
    return ScalarType::Bool;
  default:
    return ScalarType::F32;
  }
}

/// Fills one input by the role its name gives it (GraphGen.h). Rows are the
/// last dimension (the keys of a mask), so "a fully masked row" is a query
/// that sees no key.
void fillInput(attune_tensor_t &t, InputRole role, std::mt19937_64 &rng) {
  std::uniform_real_distribution<double> unit(0, 1);
  int64_t n = numElements(t);
  int64_t row = t.rank ? t.shape[t.rank - 1] : 1;
  switch (role) {
  case InputRole::Data: {
    // Mostly unit range; some inputs large (sharp softmax) or tiny.
    static const double amplitudes[] = {1, 1, 1, 4, 0.01};
    double a = amplitudes[rng() % 5];
    for (int64_t i = 0; i < n; ++i)
      writeElement(t, i, a * (2 * unit(rng) - 1));
    return;
  }
  case InputRole::Bias:
    for (int64_t i = 0; i < n; ++i)
      writeElement(t, i, 4 * unit(rng) - 2);
    return;
  case InputRole::Keep:
  case InputRole::KeepSomeKey:
  case InputRole::Drop:
  case InputRole::Additive: {
    double fill = role == InputRole::Additive ? (rng() % 2 ? -INFINITY : -1e9) : 1;
    double clear = 0;
    for (int64_t r = 0; r * row < n; ++r) {
      // 15% of rows fully masked, the others about a quarter.
      bool all = role != InputRole::KeepSomeKey && unit(rng) < 0.15;
      int64_t kept = rng() % row; // the key a KeepSomeKey row always keeps
      for (int64_t j = 0; j < row && r * row + j < n; ++j) {
        bool masked = all || unit(rng) < 0.25;
        if (role == InputRole::KeepSomeKey && j == kept)
          masked = false;
        double value = role == InputRole::Keep || role == InputRole::KeepSomeKey
                           ? (masked ? 0 : 1)
                           : (masked ? fill : clear);
        writeElement(t, r * row + j, value);
      }
    }
    return;
  }
  }
}

/// Sizes and fills the inputs of `model` (one draw of `rng`) and sizes its
/// outputs.
std::string prepareRun(attune_model_t *model, const Program &program, uint64_t seed,
                       Buffers &inputs, Buffers &outputs) {
  std::mt19937_64 rng(seed);
  int32_t numInputs = attune_model_num_inputs(model);
  inputs.tensors.resize(numInputs);
  inputs.storage.resize(numInputs);
  for (int32_t i = 0; i < numInputs; ++i) {
    attune_tensor_info_t info;
    if (attune_model_input_info(model, i, &info) != ATTUNE_OK)
      return std::string("input info: ") + attune_status_message();
    attune_tensor_t &t = inputs.tensors[i];
    t.dtype = info.dtype;
    t.rank = info.rank;
    for (int32_t d = 0; d < info.rank; ++d) {
      t.shape[d] = info.dims[d];
      if (t.shape[d] < 0) {
        auto it = info.dim_names[d] ? program.dims.find(info.dim_names[d])
                                    : program.dims.end();
        t.shape[d] = it == program.dims.end() ? 4 : it->second;
      }
    }
    inputs.storage[i].resize(std::max<size_t>(1, numElements(t) * attune_dtype_size(t.dtype)));
    t.data = inputs.storage[i].data();
    fillInput(t, inputRole(info.name), rng);
  }
  int32_t numOutputs = attune_model_num_outputs(model);
  outputs.tensors.resize(numOutputs);
  outputs.storage.resize(numOutputs);
  for (int32_t o = 0; o < numOutputs; ++o) {
    attune_tensor_t &t = outputs.tensors[o];
    if (attune_model_output_shape(model, inputs.tensors.data(), numInputs, o, &t) !=
        ATTUNE_OK)
      return std::string("output shape: ") + attune_status_message();
    outputs.storage[o].resize(std::max<size_t>(1, numElements(t) * attune_dtype_size(t.dtype)));
    t.data = outputs.storage[o].data();
  }
  return "";
}

/// Opens and runs the library at `path` on inputs drawn from `seed`.
std::string runLibrary(const std::string &path, const Program &program, uint64_t seed,
                       Library &library, Buffers &inputs, Buffers &outputs) {
  if (attune_model_open(path.c_str(), &library.model) != ATTUNE_OK)
    return "cannot open '" + path + "': " + attune_status_message();
  if (std::string error = prepareRun(library.model, program, seed, inputs, outputs);
      !error.empty())
    return error;
  if (attune_model_run(library.model, inputs.tensors.data(),
                       static_cast<int32_t>(inputs.tensors.size()), outputs.tensors.data(),
                       static_cast<int32_t>(outputs.tensors.size())) != ATTUNE_OK)
    return std::string("run: ") + attune_status_message();
  return "";
}

/// "" when every output of `got` is within tolerance of `ref`, else the
/// worst element of the first output that is not.
std::string compare(const std::vector<Tensor> &ref, const Buffers &got,
                    const CheckOptions &options) {
  if (ref.size() != got.tensors.size())
    return "the reference has " + std::to_string(ref.size()) + " outputs, the library " +
           std::to_string(got.tensors.size());
  for (size_t o = 0; o < ref.size(); ++o) {
    const attune_tensor_t &t = got.tensors[o];
    if (static_cast<int64_t>(ref[o].data.size()) != numElements(t))
      return "output " + std::to_string(o) + " has " + std::to_string(numElements(t)) +
             " elements, the reference " + std::to_string(ref[o].data.size());
    int64_t bad = 0, worst = -1;
    double worstExcess = 0;
    for (size_t i = 0; i < ref[o].data.size(); ++i) {
      double g = readElement(t, i), r = ref[o].data[i];
      bool ok;
      if (std::isnan(r) || std::isnan(g))
        ok = std::isnan(r) && std::isnan(g);
      else if (std::isinf(r) || std::isinf(g))
        ok = g == r;
      else
        ok = std::fabs(g - r) <= options.atol + options.rtol * std::fabs(r);
      if (ok)
        continue;
      ++bad;
      double excess = std::isfinite(g - r) ? std::fabs(g - r) : INFINITY;
      if (worst < 0 || excess > worstExcess)
        worst = i, worstExcess = excess;
    }
    if (bad) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "output " << o << ": " << bad << " of " << ref[o].data.size()
         << " elements outside |got - ref| <= "
         << llvm::format("%g + %g|ref|", options.atol, options.rtol)
         << "; worst at flat index " << worst
         << llvm::format(": got %.9g, ref %.9g", readElement(t, worst), ref[o].data[worst]);
      return text;
    }
  }
  return "";
}

/// Compiles `mlir` with `emit`; returns "" or the error with the log.
std::string compile(const Program &program, driver::DriverOptions options,
                    driver::Emit emit, const std::string &output, std::string &text) {
  options.emit = emit;
  options.outputFile = output;
  std::string log;
  llvm::raw_string_ostream logStream(log), textStream(text);
  std::string error = driver::compileModel(
      llvm::MemoryBuffer::getMemBufferCopy(program.mlir, "fuzz.mlir"), options, textStream,
      logStream);
  if (error.empty())
    return "";
  return error + (log.empty() ? "" : "\n" + log);
}

int countAttention(llvm::StringRef text) {
  int n = 0;
  for (size_t at = text.find("= tfm.attention "); at != llvm::StringRef::npos;
       at = text.find("= tfm.attention ", at + 1))
    ++n;
  return n;
}

void registerDialects(mlir::MLIRContext &context) {
  context.loadDialect<attune::tfm::TfmDialect, mlir::func::FuncDialect,
                      mlir::arith::ArithDialect>();
}

} // namespace

CheckResult checkProgram(const Program &program, const CheckOptions &options) {
  // The source must verify: anything else is the generator's fault.
  mlir::MLIRContext context(mlir::MLIRContext::Threading::DISABLED);
  registerDialects(context);
  std::string diagnostics;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(program.mlir, "fuzz.mlir"),
                               llvm::SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module;
  {
    llvm::raw_string_ostream os(diagnostics);
    mlir::SourceMgrDiagnosticHandler handler(sourceMgr, &context, os);
    module = mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  }
  if (!module)
    return failure(Outcome::InvalidProgram, "the program does not verify:\n" + diagnostics);
  mlir::func::FuncOp entry;
  for (auto fn : module->getOps<mlir::func::FuncOp>())
    if (fn.isPublic())
      entry = fn;
  if (!entry)
    return failure(Outcome::InvalidProgram, "the program has no public function");

  std::string targetError;
  targets::TargetOptions targetOptions;
  targetOptions.cpuFeatureSets = options.cpuFeatureSets;
  auto target = targets::createTargetBackend("cpu", targetOptions, targetError);
  if (!target)
    return failure(Outcome::CompileError, "target: " + targetError);
  auto database = tuning::TuningDatabase::load(tuning::defaultTuningDatabasePath());
  if (!database)
    return failure(Outcome::CompileError,
                   "tuning database: " + llvm::toString(database.takeError()));

  driver::DriverOptions base;
  base.inputFile = "fuzz.mlir";
  base.target = target.get();
  base.tuning = &*database;
  base.kernelCacheDir = options.kernelCacheDir;
  base.jobs = std::max(1u, options.jobs);
  if (std::error_code ec = llvm::sys::fs::create_directories(options.workDir))
    return failure(Outcome::CompileError, "cannot create '" + options.workDir + "': " + ec.message());

  // The fused graph first, as text: its tfm.attention ops are the fused sites.
  std::string text;
  if (std::string error = compile(program, base, driver::Emit::Mlir, "", text); !error.empty())
    return failure(Outcome::CompileError, "fused graph pipeline: " + error);
  int fused = countAttention(text);

  llvm::SmallString<256> fusedPath(options.workDir), unfusedPath(options.workDir);
  llvm::sys::path::append(fusedPath, "libfused.so");
  llvm::sys::path::append(unfusedPath, "libunfused.so");
  std::string ignored;
  if (std::string error =
          compile(program, base, driver::Emit::Lib, fusedPath.str().str(), ignored);
      !error.empty())
    return failure(Outcome::CompileError, "fused: " + error, fused);
  driver::DriverOptions unfusedOptions = base;
  unfusedOptions.fuseAttention = false;
  if (std::string error = compile(program, unfusedOptions, driver::Emit::Lib,
                                  unfusedPath.str().str(), ignored);
      !error.empty())
    return failure(Outcome::CompileError, "unfused (--no-fuse-attention): " + error, fused);

  Library fusedLib, unfusedLib;
  Buffers fusedIn, fusedOut, unfusedIn, unfusedOut;
  if (std::string error = runLibrary(fusedPath.str().str(), program, options.inputSeed,
                                     fusedLib, fusedIn, fusedOut);
      !error.empty())
    return failure(Outcome::RuntimeError, "fused library: " + error, fused);
  if (std::string error = runLibrary(unfusedPath.str().str(), program, options.inputSeed,
                                     unfusedLib, unfusedIn, unfusedOut);
      !error.empty())
    return failure(Outcome::RuntimeError, "unfused library: " + error, fused);
  if (options.perturbFused && !fusedOut.tensors.empty() && numElements(fusedOut.tensors[0]))
    writeElement(fusedOut.tensors[0], 0, readElement(fusedOut.tensors[0], 0) + 1.0);

  // The reference on the source, with the weights the library was built
  // with (seeded from the tfm.weight inits).
  const void *weights = nullptr;
  size_t weightsSize = 0;
  if (attune_model_weights(unfusedLib.model, &weights, &weightsSize) != ATTUNE_OK)
    return failure(Outcome::RuntimeError,
                   std::string("weights: ") + attune_status_message(), fused);
  reference::WeightLookup lookup = [](llvm::StringRef name,
                                      mlir::RankedTensorType) -> llvm::Expected<Tensor> {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "weight '" + name + "' but the library has none");
  };
  if (weights) {
    auto fromBlob = reference::weightsFromSafeTensors(weights, weightsSize);
    if (!fromBlob)
      return failure(Outcome::ReferenceError, llvm::toString(fromBlob.takeError()), fused);
    lookup = std::move(*fromBlob);
  }
  std::vector<Tensor> refInputs;
  for (const attune_tensor_t &t : unfusedIn.tensors) {
    Tensor r;
    r.dtype = referenceType(t.dtype);
    r.shape.assign(t.shape, t.shape + t.rank);
    for (int64_t i = 0, n = numElements(t); i < n; ++i)
      r.data.push_back(readElement(t, i));
    refInputs.push_back(std::move(r));
  }
  auto ref = reference::evaluate(entry, refInputs, lookup);
  if (!ref)
    return failure(Outcome::ReferenceError, llvm::toString(ref.takeError()), fused);
  for (const Tensor &t : *ref)
    for (double x : t.data)
      if (!std::isfinite(x))
        return failure(Outcome::InvalidProgram,
                       "the reference result is not finite on these inputs", fused);

  std::string fusedError = compare(*ref, fusedOut, options);
  std::string unfusedError = compare(*ref, unfusedOut, options);
  if (!fusedError.empty() || !unfusedError.empty()) {
    std::string message;
    if (!fusedError.empty())
      message += "fused vs reference: " + fusedError;
    if (!unfusedError.empty())
      message += std::string(message.empty() ? "" : "\n") +
                 "unfused vs reference: " + unfusedError;
    return failure(Outcome::Mismatch, message, fused);
  }
  return CheckResult{Outcome::Ok, "", fused};
}

namespace {
/// The process group of the child checkIsolated waits for, so that the
/// fuzzer stopped by a signal (Ctrl-C, a ctest timeout) does not leave a
/// compile running behind it.
volatile sig_atomic_t runningGroup = 0;
/// The first stopping signal received; a second one ends the process.
volatile sig_atomic_t stopRequested = 0;
/// When it came (CLOCK_MONOTONIC).
struct timespec stopTime;

void killChildAndStop(int sig) {
  if (runningGroup > 0)
    kill(-static_cast<pid_t>(runningGroup), SIGKILL);
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);
  if (stopRequested) {
    // timeout(1) signals the process and then its whole process group, so
    // one stop arrives twice at once: only a second signal half a second
    // later or more (Ctrl-C pressed again) ends the process without its
    // summary. graph_fuzz_stop_signal failed now and then for that.
    const long long sinceFirst =
        (now.tv_sec - stopTime.tv_sec) * 1000000000LL + (now.tv_nsec - stopTime.tv_nsec);
    if (sinceFirst >= 500000000LL) {
      signal(sig, SIG_DFL);
      raise(sig);
    }
    return;
  }
  stopTime = now;
  stopRequested = sig;
}
} // namespace

int stopSignal() { return stopRequested; }

CheckResult checkIsolated(const Program &program, const CheckOptions &options) {
  static bool handlersInstalled = [] {
    signal(SIGINT, killChildAndStop);
    signal(SIGTERM, killChildAndStop);
    return true;
  }();
  (void)handlersInstalled;
  auto interrupted = [] {
    return failure(Outcome::Interrupted,
                   "stopped by signal " + std::to_string(stopRequested));
  };
  if (stopRequested)
    return interrupted();
  int fds[2];
  if (pipe(fds) != 0)
    return failure(Outcome::Crash, std::string("pipe: ") + std::strerror(errno));
  (void)llvm::sys::fs::create_directories(options.workDir);
  llvm::SmallString<256> logPath(options.workDir);
  llvm::sys::path::append(logPath, "child.log");
  pid_t pid = fork();
  if (pid < 0)
    return failure(Outcome::Crash, std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    // The child: its own process group, so that a timeout also ends the
    // linker and compiler processes it started; stderr to a log whose tail
    // a crash reports.
    setpgid(0, 0);
    close(fds[0]);
    int log = open(logPath.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (log >= 0) {
      dup2(log, 2);
      dup2(log, 1);
      close(log);
    }
    CheckResult r = checkProgram(program, options);
    std::string out = std::to_string(static_cast<int>(r.outcome)) + "\n" +
                      std::to_string(r.fusedSites) + "\n" + r.message;
    for (size_t at = 0; at < out.size();) {
      ssize_t n = write(fds[1], out.data() + at, out.size() - at);
      if (n <= 0)
        break;
      at += n;
    }
    close(fds[1]);
    _exit(0);
  }
  setpgid(pid, pid);
  runningGroup = pid;
  close(fds[1]);
  std::string received;
  auto deadline = std::chrono::steady_clock::now() +
                  std::chrono::milliseconds(static_cast<int64_t>(options.timeoutSeconds * 1000));
  bool timedOut = false;
  for (;;) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                    deadline - std::chrono::steady_clock::now())
                    .count();
    if (left <= 0) {
      timedOut = true;
      break;
    }
    pollfd p{fds[0], POLLIN, 0};
    int ready = poll(&p, 1, static_cast<int>(std::min<int64_t>(left, 1000)));
    if (ready < 0 && errno != EINTR)
      break;
    if (ready <= 0)
      continue;
    char buffer[4096];
    ssize_t n = read(fds[0], buffer, sizeof buffer);
    if (n <= 0)
      break;
    received.append(buffer, n);
  }
  close(fds[0]);
  if (timedOut)
    kill(-pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  // Whatever the child left behind in its group (a linker it started).
  kill(-pid, SIGKILL);
  runningGroup = 0;
  if (stopRequested)
    return interrupted();

  auto logTail = [&]() {
    auto buffer = llvm::MemoryBuffer::getFile(logPath);
    if (!buffer)
      return std::string();
    llvm::StringRef text = (*buffer)->getBuffer();
    return text.substr(text.size() > 3000 ? text.size() - 3000 : 0).str();
  };
  if (timedOut)
    return failure(Outcome::Timeout, "no result after " +
                                         std::to_string(options.timeoutSeconds) + " s");
  if (WIFSIGNALED(status))
    return failure(Outcome::Crash, std::string("killed by signal ") +
                                       std::to_string(WTERMSIG(status)) + " (" +
                                       strsignal(WTERMSIG(status)) + ")\n" + logTail());
  auto [outcomeText, rest] = llvm::StringRef(received).split('\n');
  auto [fusedText, message] = rest.split('\n');
  int outcome = 0, fused = -1;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || outcomeText.getAsInteger(10, outcome) ||
      fusedText.getAsInteger(10, fused))
    return failure(Outcome::Crash, "the child exited with status " +
                                       std::to_string(WEXITSTATUS(status)) +
                                       " without a result\n" + logTail());
  return CheckResult{static_cast<Outcome>(outcome), message.str(), fused};
}

namespace {

/// A program parsed for editing, with its ops in order (the function
/// body's, without the return).
struct Parsed {
  mlir::MLIRContext context{mlir::MLIRContext::Threading::DISABLED};
  mlir::OwningOpRef<mlir::ModuleOp> module;
  mlir::func::FuncOp fn;
  std::vector<mlir::Operation *> ops;

  explicit Parsed(const std::string &text) {
    registerDialects(context);
    context.getDiagEngine().registerHandler([](mlir::Diagnostic &) { return mlir::success(); });
    module = mlir::parseSourceString<mlir::ModuleOp>(text, &context);
    if (!module)
      return;
    for (auto f : module->getOps<mlir::func::FuncOp>())
      if (!fn)
        fn = f;
    if (fn)
      for (mlir::Operation &op : fn.getBody().front().without_terminator())
        ops.push_back(&op);
  }
  bool ok() const { return module && fn; }

  /// Erases the ops left without users. Users come after what they use, so
  /// one pass from the end reaches a fixed point.
  void eraseDeadOps() {
    std::vector<mlir::Operation *> rest;
    for (mlir::Operation &other : fn.getBody().front().without_terminator())
      rest.push_back(&other);
    for (mlir::Operation *other : llvm::reverse(rest))
      if (other->use_empty())
        other->erase();
  }

  /// The module as text, or nullopt when it does not verify.
  std::optional<std::string> print() {
    if (mlir::failed(mlir::verify(*module)))
      return std::nullopt;
    std::string out;
    llvm::raw_string_ostream os(out);
    module->print(os);
    return out;
  }
};

/// The shape `value` has when the program runs with `dims` (dynamic
/// dimensions the program names but `dims` does not are 4, as prepareRun
/// makes them): the reference evaluator run on zeros with `value` as the
/// only result. Edits `parsed`, which the caller discards.
std::optional<std::vector<int64_t>> concreteShape(Parsed &parsed, mlir::Value value,
                                                  const std::map<std::string, int64_t> &dims) {
  auto type = mlir::cast<mlir::RankedTensorType>(value.getType());
  if (type.hasStaticShape())
    return std::vector<int64_t>(type.getShape().begin(), type.getShape().end());
  auto zerosOf = [](mlir::RankedTensorType t, std::vector<int64_t> shape) -> std::optional<Tensor> {
    auto dtype = scalarTypeOf(t.getElementType());
    if (!dtype)
      return std::nullopt;
    Tensor r;
    r.dtype = *dtype;
    r.shape = std::move(shape);
    r.data.assign(std::max<int64_t>(0, r.numElements()), 0.0);
    return r;
  };
  std::vector<Tensor> inputs;
  for (mlir::BlockArgument arg : parsed.fn.getArguments()) {
    auto argType = mlir::dyn_cast<mlir::RankedTensorType>(arg.getType());
    if (!argType)
      return std::nullopt;
    auto names = parsed.fn.getArgAttrOfType<mlir::ArrayAttr>(arg.getArgNumber(), "tfm.dim_names");
    std::vector<int64_t> shape;
    for (int64_t d = 0; d < argType.getRank(); ++d) {
      int64_t size = argType.getDimSize(d);
      if (mlir::ShapedType::isDynamic(size)) {
        size = 4;
        auto name = names && d < static_cast<int64_t>(names.size())
                        ? mlir::dyn_cast<mlir::StringAttr>(names[d])
                        : mlir::StringAttr();
        if (auto it = name ? dims.find(name.str()) : dims.end(); it != dims.end())
          size = it->second;
      }
      shape.push_back(size);
    }
    auto zeros = zerosOf(argType, std::move(shape));
    if (!zeros)
      return std::nullopt;
    inputs.push_back(std::move(*zeros));
  }
  reference::WeightLookup weights = [&](llvm::StringRef name,
                                        mlir::RankedTensorType t) -> llvm::Expected<Tensor> {
    if (auto zeros = zerosOf(t, std::vector<int64_t>(t.getShape().begin(), t.getShape().end())))
      return std::move(*zeros);
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "weight '" + name + "'");
  };
  mlir::Operation *ret = parsed.fn.getBody().front().getTerminator();
  ret->setOperands(value);
  parsed.fn.setType(mlir::FunctionType::get(&parsed.context,
                                            parsed.fn.getFunctionType().getInputs(), {type}));
  parsed.fn.removeResAttrsAttr();
  auto result = reference::evaluate(parsed.fn, inputs, weights);
  if (!result) {
    llvm::consumeError(result.takeError());
    return std::nullopt;
  }
  return result->front().shape;
}

/// The function argument `value` is computed from whose element type is
/// `value`'s (else the first it is computed from), searched breadth-first
/// from its operands; null for a value computed from constants only.
mlir::BlockArgument sourceArgument(mlir::Value value) {
  std::vector<mlir::Value> queue{value};
  llvm::DenseSet<mlir::Value> seen;
  mlir::BlockArgument first;
  mlir::Type element = mlir::cast<mlir::ShapedType>(value.getType()).getElementType();
  for (size_t at = 0; at < queue.size(); ++at) {
    mlir::Value v = queue[at];
    if (!seen.insert(v).second)
      continue;
    if (auto arg = mlir::dyn_cast<mlir::BlockArgument>(v)) {
      if (mlir::cast<mlir::ShapedType>(arg.getType()).getElementType() == element)
        return arg;
      if (!first)
        first = arg;
      continue;
    }
    for (mlir::Value operand : v.getDefiningOp()->getOperands())
      queue.push_back(operand);
  }
  return first;
}

} // namespace

int countOps(const std::string &text) {
  Parsed parsed(text);
  return parsed.ok() ? static_cast<int>(parsed.ops.size()) : -1;
}

std::optional<std::string> dropOp(const std::string &text, int index) {
  Parsed parsed(text);
  if (!parsed.ok() || index < 0 || index >= static_cast<int>(parsed.ops.size()))
    return std::nullopt;
  mlir::Operation *op = parsed.ops[index];
  // Constants and weights go when their users do.
  if (op->getNumOperands() == 0)
    return std::nullopt;
  for (mlir::Value result : op->getResults()) {
    if (result.use_empty())
      continue;
    mlir::Value same;
    for (mlir::Value operand : op->getOperands())
      if (operand.getType() == result.getType()) {
        same = operand;
        break;
      }
    if (!same)
      return std::nullopt;
    result.replaceAllUsesWith(same);
  }
  op->erase();
  parsed.eraseDeadOps();
  return parsed.print();
}

std::optional<std::string> cutToInput(const std::string &text, int index,
                                      std::map<std::string, int64_t> &dims) {
  Parsed parsed(text);
  if (!parsed.ok() || index < 0 || index >= static_cast<int>(parsed.ops.size()))
    return std::nullopt;
  mlir::Operation *op = parsed.ops[index];
  if (op->getNumOperands() == 0 || op->getNumResults() != 1 || op->use_empty())
    return std::nullopt;
  mlir::Value value = op->getResult(0);
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(value.getType());
  if (!type)
    return std::nullopt;
  std::optional<std::vector<int64_t>> shape;
  {
    Parsed scratch(text);
    shape = concreteShape(scratch, scratch.ops[index]->getResult(0), dims);
  }
  if (!shape || shape->size() != static_cast<size_t>(type.getRank()))
    return std::nullopt;

  // Named after the input it is computed from, so that the fuzzer fills it
  // in the same role (inputRole reads the prefix): a reshaped padding mask
  // stays a mask.
  mlir::BlockArgument source = sourceArgument(value);
  llvm::StringRef sourceName = "x";
  if (source)
    if (auto name = parsed.fn.getArgAttrOfType<mlir::StringAttr>(source.getArgNumber(), "tfm.name"))
      sourceName = name.getValue();
  llvm::StringSet<> taken;
  for (unsigned a = 0; a < parsed.fn.getNumArguments(); ++a)
    if (auto name = parsed.fn.getArgAttrOfType<mlir::StringAttr>(a, "tfm.name"))
      taken.insert(name.getValue());
  std::string name;
  for (int n = 0; name.empty() || taken.contains(name); ++n)
    name = (sourceName + "_cut" + llvm::Twine(n)).str();

  // A dynamic dimension takes the name of the one program dimension of its
  // size, else a new name with its size.
  mlir::Builder b(&parsed.context);
  llvm::SmallVector<mlir::Attribute> dimNames;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    if (!type.isDynamicDim(d)) {
      dimNames.push_back(b.getStringAttr(""));
      continue;
    }
    std::string dimName;
    int matches = 0;
    for (const auto &[existing, size] : dims)
      if (size == (*shape)[d])
        dimName = existing, ++matches;
    if (matches != 1) {
      dimName = name + "_d" + std::to_string(d);
      dims[dimName] = (*shape)[d];
    }
    dimNames.push_back(b.getStringAttr(dimName));
  }
  mlir::NamedAttrList attrs;
  attrs.set("tfm.name", b.getStringAttr(name));
  attrs.set("tfm.dim_names", b.getArrayAttr(dimNames));
  unsigned position = parsed.fn.getNumArguments();
  if (mlir::failed(parsed.fn.insertArgument(position, type, attrs.getDictionary(&parsed.context),
                                            op->getLoc())))
    return std::nullopt;
  value.replaceAllUsesWith(parsed.fn.getArgument(position));
  op->erase();
  parsed.eraseDeadOps();
  // Inputs nothing reads any more go too (a library keeps an input it does
  // not read, and the reduced program should not show it).
  llvm::BitVector unused(parsed.fn.getNumArguments());
  for (mlir::BlockArgument arg : parsed.fn.getArguments())
    if (arg.use_empty())
      unused.set(arg.getArgNumber());
  if (mlir::failed(parsed.fn.eraseArguments(unused)))
    return std::nullopt;
  return parsed.print();
}

Program shrinkFailure(const Program &program,
                      const std::function<bool(const Program &)> &stillFails,
                      int maxAttempts, int &attemptsMade) {
  Program best = program;
  attemptsMade = 0;
  // One candidate: `smaller` with `dims`; true when it still fails.
  auto tryCandidate = [&](std::string smaller, std::map<std::string, int64_t> dims) {
    Program candidate = best;
    candidate.mlir = std::move(smaller);
    candidate.dims = std::move(dims);
    // Which of the generated sites a removed softmax was is not known:
    // the sites left keep no expectation (else a replay would report a
    // missed fusion for a site that is gone).
    size_t softmaxes = 0;
    for (size_t at = 0; (at = candidate.mlir.find("tfm.softmax", at)) != std::string::npos; ++at)
      ++softmaxes;
    if (softmaxes < candidate.sites.size())
      candidate.sites.assign(softmaxes, Expect::Either);
    ++attemptsMade;
    if (!stillFails(candidate))
      return false;
    best = std::move(candidate);
    return true;
  };
  for (bool progress = true; progress && attemptsMade < maxAttempts;) {
    progress = false;
    // Ops dropped, last first: the ops near the results are the ones most
    // often removable, and removing them makes earlier ones dead.
    for (int i = countOps(best.mlir) - 1; i >= 0 && attemptsMade < maxAttempts && !progress; --i)
      if (std::optional<std::string> smaller = dropOp(best.mlir, i))
        progress = tryCandidate(std::move(*smaller), best.dims);
    // Then values made inputs, first first: what an op cannot be replaced
    // by (a reshape, a transpose, a norm before the projections) goes with
    // everything only it needed.
    for (int i = 0, n = countOps(best.mlir); i < n && attemptsMade < maxAttempts && !progress;
         ++i) {
      std::map<std::string, int64_t> dims = best.dims;
      if (std::optional<std::string> smaller = cutToInput(best.mlir, i, dims))
        progress = tryCandidate(std::move(*smaller), std::move(dims));
    }
  }
  return best;
}

} // namespace attune::fuzzgraphs
