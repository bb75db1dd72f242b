//===- attune-run.cpp - run a compiled attune library ---------------------===//
//
// Opens a library produced by attune-compile through the runtime's C API,
// feeds it inputs (random, NumPy .npy files or raw little-endian files),
// prints a summary of each output, optionally writes the outputs as .npy
// files, checks them against the reference evaluator run on the tfm IR the
// library carries, and times the model.
//
//   attune-run libblock.so --random-inputs --dim seq=128 --check-reference
//   attune-run libblock.so --input ids=@ids.npy --output out/ --bench 20
//
// A .npy input fixes the dynamic dimensions of its shape; --dim sets the
// others. Every name on the command line is checked against the library's
// inputs and dimensions, so a typo is an error listing the valid names rather
// than a flag silently ignored.
//
//===----------------------------------------------------------------------===//

#include "attune/runtime.h"
#include "compiler/frontends/SafeTensors.h"
#include "compiler/reference/Evaluator.h"
#include "compiler/support/Npy.h"
#include "compiler/support/PanelLayout.h"
#include "compiler/tools/attune-run/RunInputs.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cassert>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

using namespace llvm;
using attune::ScalarType;
using attune::reference::Tensor;
namespace npy = attune::npy;
using namespace attune::run;

// Every option is in this category, and main hides all others: the tool
// links LLVM, whose hundreds of backend flags would otherwise bury these in
// --help.
static cl::OptionCategory runCategory("attune-run options");

static cl::opt<std::string> libraryPath(cl::Positional,
                                        cl::desc("<library.so>"), cl::Required,
                                        cl::cat(runCategory));
static cl::opt<bool>
    randomInputs("random-inputs",
                 cl::desc("Fill every input not given by --input with "
                          "random values (ids within the table size)"),
                 cl::cat(runCategory));
static cl::list<std::string> inputSpecs(
    "input",
    cl::desc("Data for one input: @FILE.npy is a NumPy array of the input's "
             "dtype (f32 for a bf16 input, rounded to nearest even) whose "
             "shape sets the input's dynamic dimensions; FILE without @ is raw "
             "little-endian data sized by --dim"),
    cl::value_desc("name=@FILE.npy|name=FILE"), cl::cat(runCategory));
static cl::list<std::string> dimValues(
    "dim",
    cl::desc("Value of a dynamic dimension no .npy input sets (default 8)"),
    cl::value_desc("name=N"), cl::cat(runCategory));
static cl::opt<std::string> outputDir(
    "output",
    cl::desc("Write each output to DIR/<output name>.npy, creating DIR if "
             "missing; bf16 outputs are written as f32, which holds them "
             "exactly (NumPy has no bf16)"),
    cl::value_desc("DIR"), cl::cat(runCategory));
static cl::opt<bool>
    checkReference("check-reference",
                   cl::desc("Compare outputs with the reference evaluator"),
                   cl::cat(runCategory));
static cl::opt<double>
    relTol("rtol", cl::init(1e-4),
           cl::desc("Relative tolerance of --check-reference"),
           cl::cat(runCategory));
static cl::opt<double>
    absTol("atol", cl::init(1e-5),
           cl::desc("Absolute tolerance of --check-reference"),
           cl::cat(runCategory));
static cl::opt<double> l2Tol(
    "l2-tol", cl::init(0.02),
    cl::desc("Relative L2 tolerance of --check-reference per output, "
             "||got - ref|| <= tol ||ref||: the check of a library with bf16 "
             "weights (whose elementwise error follows the magnitudes summed, "
             "not the result) and of a bf16 output unless --rtol or --atol is "
             "given, or of any output when given"),
    cl::cat(runCategory));
static cl::opt<unsigned> benchRuns("bench", cl::init(0),
                                   cl::desc("Time N runs and print the median"),
                                   cl::value_desc("N"), cl::cat(runCategory));
static cl::opt<int> numThreads("num-threads", cl::init(0),
                               cl::desc("Kernel threads (0: all cores)"),
                               cl::cat(runCategory));
static cl::opt<unsigned> seed("seed", cl::init(1),
                              cl::desc("Random input seed"),
                              cl::cat(runCategory));
static cl::opt<unsigned> printCount("print", cl::init(4),
                                    cl::desc("Values of each output to print"),
                                    cl::value_desc("N"), cl::cat(runCategory));

namespace {

[[noreturn]] void fail(const Twine &message) {
  errs() << "attune-run: error: " << message << "\n";
  std::exit(1);
}

void check(attune_status_t status, const Twine &what) {
  if (status != ATTUNE_OK)
    fail(what + ": " + attune_status_message());
}

/// Fails with `error` unless it is empty (RunInputs.h's convention).
void check(const std::string &error) {
  if (!error.empty())
    fail(error);
}

/// The .npy element type of `dtype`; fails on one attune-run does not know.
npy::ElementType npyTypeOrFail(attune_dtype_t dtype) {
  std::optional<npy::ElementType> type = npyTypeOf(dtype);
  if (!type)
    fail(Twine("dtype ") + attune_dtype_name(dtype) +
         " is not supported by attune-run");
  return *type;
}

/// Reads element i of a buffer as double.
double readElement(const attune_tensor_t &t, int64_t i) {
  if (std::optional<double> x = attune::run::readElement(t, i))
    return *x;
  fail(Twine("dtype ") + attune_dtype_name(t.dtype) +
       " is not supported by attune-run");
}

Tensor toReference(const attune_tensor_t &t) {
  static const ScalarType types[] = {ScalarType::F32, ScalarType::F16, ScalarType::BF16,
                                     ScalarType::I32, ScalarType::I64, ScalarType::I8,
                                     ScalarType::Bool};
  Tensor r;
  r.dtype = types[t.dtype];
  r.shape.assign(t.shape, t.shape + t.rank);
  r.data.resize(numElements(t));
  for (int64_t i = 0, e = r.data.size(); i < e; ++i)
    r.data[i] = readElement(t, i);
  return r;
}

/// Writes every output to `dir`/<name>.npy. Names are checked first, so a
/// bad one leaves no partial set of files behind.
void writeOutputs(attune_model_t *model,
                  const std::vector<attune_tensor_t> &outputs, StringRef dir) {
  std::vector<std::string> paths;
  StringSet<> seen;
  for (size_t o = 0; o < outputs.size(); ++o) {
    attune_tensor_info_t info;
    check(attune_model_output_info(model, static_cast<int32_t>(o), &info),
          "output info");
    StringRef name = info.name;
    if (name.empty() || name == "." || name == ".." || name.contains('/'))
      fail("--output: output name '" + name + "' cannot be a file name");
    if (!seen.insert(name).second)
      fail("--output: two outputs are named '" + name + "'");
    SmallString<256> path(dir);
    sys::path::append(path, name + ".npy");
    paths.push_back(path.str().str());
  }
  if (std::error_code ec = sys::fs::create_directories(dir))
    fail("--output: cannot create directory '" + dir + "': " + ec.message());
  for (size_t o = 0; o < outputs.size(); ++o) {
    const attune_tensor_t &t = outputs[o];
    std::vector<int64_t> shape(t.shape, t.shape + t.rank);
    const void *data = t.data;
    Buffer widened;
    if (t.dtype == ATTUNE_DTYPE_BF16) {
      int64_t n = numElements(t);
      check(widened.allocate(n * sizeof(float), "output as f32"));
      float *to = reinterpret_cast<float *>(widened.get());
      for (int64_t i = 0; i < n; ++i)
        to[i] = bf16ToFloat(static_cast<const uint16_t *>(t.data)[i]);
      data = widened.get();
    }
    if (std::string error =
            npy::writeFile(paths[o], npyTypeOrFail(t.dtype), shape, data);
        !error.empty())
      fail("--output: " + error);
    outs() << "wrote '" << paths[o] << "'\n";
  }
}

void printSummary(const char *name, const attune_tensor_t &t) {
  int64_t n = numElements(t);
  double sum = 0, sumSq = 0, lo = INFINITY, hi = -INFINITY;
  int64_t nonFinite = 0;
  for (int64_t i = 0; i < n; ++i) {
    double x = readElement(t, i);
    if (!std::isfinite(x)) {
      ++nonFinite;
      continue;
    }
    sum += x, sumSq += x * x, lo = std::min(lo, x), hi = std::max(hi, x);
  }
  double mean = n ? sum / n : 0, var = n ? sumSq / n - mean * mean : 0;
  outs() << "output '" << name << "' " << attune_dtype_name(t.dtype) << shapeString(t)
         << format(": mean %.6g std %.6g min %.6g max %.6g", mean,
                   std::sqrt(std::max(var, 0.0)), lo, hi);
  if (nonFinite)
    outs() << " (" << nonFinite << " non-finite)";
  outs() << "\n  first values:";
  for (int64_t i = 0; i < std::min<int64_t>(n, printCount); ++i)
    outs() << format(" %.6g", readElement(t, i));
  outs() << "\n";
}

/// Runs the reference evaluator on the library's own IR and weights; returns
/// false if any output is outside the tolerance.
bool checkAgainstReference(attune_model_t *model, const std::vector<attune_tensor_t> &inputs,
                           const std::vector<attune_tensor_t> &outputs) {
  mlir::MLIRContext context;
  context.loadDialect<attune::tfm::TfmDialect, mlir::func::FuncDialect,
                      mlir::arith::ArithDialect>();
  const char *ir = attune_model_source_ir(model);
  if (!ir || !*ir)
    fail("the library carries no tfm IR to check against");
  SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(MemoryBuffer::getMemBuffer(ir, "<library IR>"), SMLoc());
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(sourceMgr, &context);
  if (!module)
    fail("the library's tfm IR does not parse");
  mlir::func::FuncOp entry = module->lookupSymbol<mlir::func::FuncOp>(attune_model_name(model));
  if (!entry) {
    // A library compiled with --name: take the only public function.
    for (auto fn : module->getOps<mlir::func::FuncOp>())
      if (fn.isPublic()) {
        if (entry)
          fail("the library's IR has several public functions and none is named '" +
               Twine(attune_model_name(model)) + "'");
        entry = fn;
      }
  }
  if (!entry)
    fail("the library's IR has no function to evaluate");

  const void *weights = nullptr;
  size_t weightsSize = 0;
  check(attune_model_weights(model, &weights, &weightsSize), "reading the weights");
  attune::reference::WeightLookup lookup =
      [](StringRef name, mlir::RankedTensorType) -> Expected<Tensor> {
    return createStringError(inconvertibleErrorCode(),
                             "weight '" + name + "' needed but the library has no weights");
  };
  // bf16 weights (--precision=bf16): the blob says so by its packed keys.
  bool bf16Weights = false;
  if (weights) {
    auto view = attune::SafeTensorsView::parse(static_cast<const char *>(weights),
                                               weightsSize);
    if (!view)
      fail("the library's weights: " + toString(view.takeError()));
    for (const attune::SafeTensorEntry &entry : view->entries())
      bf16Weights |= attune::isBf16PanelsKey(entry.name);
  }
  // bf16 weights or a bf16 output (rounded to 2^-8 of itself): the relative
  // L2 check, unless a tolerance was asked for.
  const bool tolerancesGiven = relTol.getNumOccurrences() > 0 || absTol.getNumOccurrences() > 0;
  auto elementwiseFor = [&](const attune_tensor_t &output) {
    return l2Tol.getNumOccurrences() == 0 &&
           (tolerancesGiven || (!bf16Weights && output.dtype != ATTUNE_DTYPE_BF16));
  };
  if (weights) {
    auto fromBlob = attune::reference::weightsFromSafeTensors(weights, weightsSize);
    if (!fromBlob)
      fail("the library's weights: " + toString(fromBlob.takeError()));
    lookup = std::move(*fromBlob);
  }

  std::vector<Tensor> refInputs;
  for (const attune_tensor_t &t : inputs)
    refInputs.push_back(toReference(t));
  auto start = std::chrono::steady_clock::now();
  auto expected = attune::reference::evaluate(entry, refInputs, lookup);
  if (!expected)
    fail("reference evaluation failed: " + toString(expected.takeError()));
  double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (expected->size() != outputs.size())
    fail("the reference produced " + Twine(expected->size()) + " outputs, the library " +
         Twine(outputs.size()));

  bool ok = true;
  for (size_t o = 0; o < outputs.size(); ++o) {
    attune_tensor_info_t info;
    check(attune_model_output_info(model, static_cast<int32_t>(o), &info), "output info");
    const Tensor &ref = (*expected)[o];
    const attune_tensor_t &got = outputs[o];
    if (static_cast<int64_t>(ref.data.size()) != numElements(got))
      fail("output '" + Twine(info.name) + "' has " + Twine(numElements(got)) +
           " elements, the reference " + Twine(ref.data.size()));
    double maxAbs = 0, maxRel = 0, errSq = 0, refSq = 0;
    int64_t bad = 0;
    for (size_t i = 0; i < ref.data.size(); ++i) {
      double g = readElement(got, i), r = ref.data[i], err = std::fabs(g - r);
      if (std::isnan(g) != std::isnan(r))
        err = INFINITY;
      else if (std::isnan(r))
        err = 0;
      maxAbs = std::max(maxAbs, err);
      maxRel = std::max(maxRel, err / std::max(std::fabs(r), 1e-30));
      errSq += err * err, refSq += r * r;
      bad += !(err <= absTol + relTol * std::fabs(r));
    }
    const double relL2 = std::sqrt(errSq / std::max(refSq, 1e-300));
    outs() << "reference '" << info.name << "'"
           << format(": max abs err %.3g, max rel err %.3g, rel l2 err %.3g", maxAbs, maxRel,
                     relL2);
    if (elementwiseFor(got)) {
      outs() << format(" (|err| <= %g + %g|ref|: ", absTol.getValue(), relTol.getValue())
             << (bad ? "FAIL, " + std::to_string(bad) + " elements outside" : std::string("ok"))
             << ")\n";
      ok &= bad == 0;
    } else {
      // A NaN where the reference has none (or the reverse) is an infinite
      // error, so the sum is too.
      const bool within = relL2 <= l2Tol;
      outs() << format(" (%srel l2 err <= %g: ",
                       bf16Weights                        ? "bf16 weights, "
                       : got.dtype == ATTUNE_DTYPE_BF16 ? "bf16 output, "
                                                          : "",
                       l2Tol.getValue())
             << (within ? "ok" : "FAIL") << ")\n";
      ok &= within;
    }
  }
  outs() << format("reference evaluation took %.2f s\n", seconds);
  return ok;
}

} // namespace

int main(int argc, char **argv) {
  cl::HideUnrelatedOptions(runCategory);
  cl::ParseCommandLineOptions(argc, argv, "attune-run: run a library built by attune-compile\n");

  // Names and values are checked before the library is opened; a file is
  // read only once the model's signature says what it must hold.
  InputArguments arguments;
  check(parseInputArguments(dimValues, inputSpecs, arguments));

  attune_model_t *model = nullptr;
  // The runtime's message names the file and what is wrong with it.
  if (attune_model_open(libraryPath.c_str(), &model) != ATTUNE_OK)
    fail(attune_status_message());
  if (numThreads)
    check(attune_model_set_num_threads(model, numThreads), "--num-threads");
  outs() << "model '" << attune_model_name(model) << "' from " << libraryPath
         << (attune_model_device(model) == ATTUNE_DEVICE_CUDA ? " (runs on the GPU)" : "")
         << "\n";

  int32_t numInputs = attune_model_num_inputs(model);
  int32_t numOutputs = attune_model_num_outputs(model);
  std::vector<attune_tensor_t> inputs(numInputs);
  std::vector<attune_tensor_info_t> inputInfos(numInputs);
  for (int32_t i = 0; i < numInputs; ++i)
    check(attune_model_input_info(model, i, &inputInfos[i]), "input info");

  std::vector<std::string> unknown =
      unknownNameErrors(dimValues, inputSpecs, inputInfos);
  for (const std::string &error : unknown)
    errs() << "attune-run: error: " << error << "\n";
  if (!unknown.empty())
    std::exit(1);

  check(bindNpyInputs(inputInfos, arguments));
  resolveShapes(inputInfos, arguments.dims, inputs);

  // The runtime checks the input shapes (ranks, symbol maxima, agreement
  // between inputs) from shapes alone, so a bad --dim is reported here,
  // before any buffer is sized from it.
  std::vector<attune_tensor_t> outputs(numOutputs);
  for (int32_t o = 0; o < numOutputs; ++o)
    check(attune_model_output_shape(model, inputs.data(), numInputs, o, &outputs[o]),
          "output shape");

  std::vector<Buffer> inputStorage(numInputs);
  std::mt19937_64 rng(seed);
  for (int32_t i = 0; i < numInputs; ++i) {
    const attune_tensor_info_t &info = inputInfos[i];
    attune_tensor_t &t = inputs[i];
    auto source = arguments.sources.find(info.name);
    check(fillInput(info, t, inputStorage[i],
                    source == arguments.sources.end() ? nullptr
                                                      : &source->second,
                    randomInputs, rng));
    outs() << "input '" << info.name << "' " << attune_dtype_name(t.dtype) << shapeString(t) << "\n";
  }

  size_t workspace = 0;
  check(attune_model_workspace_size(model, inputs.data(), numInputs, &workspace),
        "workspace size");
  outs() << format("workspace: %zu bytes\n", workspace);

  std::vector<Buffer> outputStorage(numOutputs);
  for (int32_t o = 0; o < numOutputs; ++o) {
    attune_tensor_info_t info;
    check(attune_model_output_info(model, o, &info), "output info");
    std::string what = "output '" + std::string(info.name) + "'";
    size_t bytes = 0;
    check(byteSize(outputs[o], what, bytes));
    check(outputStorage[o].allocate(bytes, what));
    outputs[o].data = outputStorage[o].get();
  }

  check(attune_model_run(model, inputs.data(), numInputs, outputs.data(), numOutputs), "run");
  for (int32_t o = 0; o < numOutputs; ++o) {
    attune_tensor_info_t info;
    check(attune_model_output_info(model, o, &info), "output info");
    printSummary(info.name, outputs[o]);
  }
  // Written before the reference check, so a failing run leaves its outputs
  // behind to look at.
  if (!outputDir.empty())
    writeOutputs(model, outputs, outputDir);

  bool ok = true;
  if (checkReference)
    ok = checkAgainstReference(model, inputs, outputs);

  if (benchRuns) {
    std::vector<double> ms;
    for (unsigned r = 0; r < benchRuns; ++r) {
      auto start = std::chrono::steady_clock::now();
      check(attune_model_run(model, inputs.data(), numInputs, outputs.data(), numOutputs),
            "run");
      ms.push_back(std::chrono::duration<double, std::milli>(
                       std::chrono::steady_clock::now() - start)
                       .count());
    }
    std::sort(ms.begin(), ms.end());
    outs() << format("time over %u runs: median %.3f ms, min %.3f ms, max %.3f ms\n",
                     benchRuns.getValue(), ms[ms.size() / 2], ms.front(), ms.back());
  }
  attune_model_close(model);
  return ok ? 0 : 2;
}
