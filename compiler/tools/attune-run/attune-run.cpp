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
             "not the result) unless --rtol or --atol is given, or of any "
             "library when given"),
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

/// Element count of a tensor whose shape the runtime has already accepted
/// (see byteSize), so the product fits.
int64_t numElements(const attune_tensor_t &t) {
  int64_t n = 1;
  for (int32_t i = 0; i < t.rank; ++i)
    n *= t.shape[i];
  return n;
}

std::string shapeString(const attune_tensor_t &t) {
  std::string s = "[";
  for (int32_t i = 0; i < t.rank; ++i)
    s += (i ? "x" : "") + std::to_string(t.shape[i]);
  return s + "]";
}

/// Bytes of `t`, failing on a negative dimension or a count that overflows:
/// the shape comes from --dim, so it is user input until proven otherwise.
size_t byteSize(const attune_tensor_t &t, const Twine &what) {
  uint64_t n = attune_dtype_size(t.dtype);
  for (int32_t i = 0; i < t.rank; ++i)
    if (t.shape[i] < 0 ||
        __builtin_mul_overflow(n, static_cast<uint64_t>(t.shape[i]), &n) ||
        n > static_cast<uint64_t>(PTRDIFF_MAX))
      fail(what + " of shape " + shapeString(t) + " " +
           attune_dtype_name(t.dtype) + " does not fit in memory");
  return static_cast<size_t>(n);
}

/// A zeroed buffer of `bytes`; an allocation failure is an error naming the
/// tensor (this code has no exceptions, so std::vector would abort instead).
class Buffer {
public:
  void allocate(size_t bytes, const Twine &what) {
    data.reset(static_cast<char *>(std::calloc(bytes ? bytes : 1, 1)));
    if (!data)
      fail("cannot allocate " + Twine(bytes) + " bytes for " + what);
  }
  char *get() const { return data.get(); }

private:
  struct Free {
    void operator()(char *p) const { std::free(p); }
  };
  std::unique_ptr<char[], Free> data;
};

/// f16 bits to float; exact (every f16 is a float).
float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24, exact in float.
    float magnitude = std::ldexp(static_cast<float>(mantissa), -24);
    return sign ? -magnitude : magnitude;
  }
  uint32_t bits = exponent == 0x1f
                      ? sign | 0x7f800000 | (mantissa << 13) // inf, NaN
                      : sign | ((exponent + 112) << 23) | (mantissa << 13);
  return llvm::bit_cast<float>(bits);
}

/// float to f16 bits, rounding to nearest even as the kernels' casts do.
uint16_t floatToHalf(float f) {
  uint32_t bits = llvm::bit_cast<uint32_t>(f);
  uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  uint32_t magnitude = bits & 0x7fffffff;
  if (magnitude > 0x7f800000)
    return sign | 0x7e00; // NaN
  if (magnitude >= 0x477ff000)
    return sign | 0x7c00; // 65520 and up round to infinity
  if (magnitude < 0x38800000) {
    // Below f16's smallest normal (2^-14): a subnormal step is 2^-24, and
    // the scaled value is exact, so nearbyint rounds it to nearest even.
    float scaled = llvm::bit_cast<float>(magnitude) * 16777216.0f;
    return sign | static_cast<uint16_t>(std::nearbyint(scaled));
  }
  // Round the 13 dropped mantissa bits to nearest even, then rebias the
  // exponent from 127 to 15; a carry out of the mantissa bumps the exponent.
  magnitude += 0xfff + ((magnitude >> 13) & 1);
  return sign | static_cast<uint16_t>((magnitude - (112u << 23)) >> 13);
}

/// bf16 bits to float; exact (bf16 is float's upper half).
float bf16ToFloat(uint16_t b) {
  return llvm::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

/// float to bf16 bits, rounding to nearest even; NaN stays a (quiet) NaN.
uint16_t floatToBf16(float f) {
  uint32_t bits = llvm::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

/// Reads element i of a buffer as double.
double readElement(const attune_tensor_t &t, int64_t i) {
  switch (t.dtype) {
  case ATTUNE_DTYPE_F32:
    return static_cast<const float *>(t.data)[i];
  case ATTUNE_DTYPE_F16:
    return halfToFloat(static_cast<const uint16_t *>(t.data)[i]);
  case ATTUNE_DTYPE_BF16:
    return bf16ToFloat(static_cast<const uint16_t *>(t.data)[i]);
  case ATTUNE_DTYPE_I32:
    return static_cast<const int32_t *>(t.data)[i];
  case ATTUNE_DTYPE_I64:
    return static_cast<double>(static_cast<const int64_t *>(t.data)[i]);
  case ATTUNE_DTYPE_I8:
    return static_cast<const int8_t *>(t.data)[i];
  case ATTUNE_DTYPE_BOOL:
    return static_cast<const uint8_t *>(t.data)[i];
  }
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

//===----------------------------------------------------------------------===//
// Inputs from files, and the dimensions they fix
//===----------------------------------------------------------------------===//

/// The .npy element type a tensor of `dtype` is exchanged as. NumPy has no
/// bf16, so bf16 travels as f32, which holds every bf16 value exactly.
npy::ElementType npyTypeOf(attune_dtype_t dtype) {
  switch (dtype) {
  case ATTUNE_DTYPE_F32:
  case ATTUNE_DTYPE_BF16:
    return npy::ElementType::F32;
  case ATTUNE_DTYPE_F16:
    return npy::ElementType::F16;
  case ATTUNE_DTYPE_I32:
    return npy::ElementType::I32;
  case ATTUNE_DTYPE_I64:
    return npy::ElementType::I64;
  case ATTUNE_DTYPE_I8:
    return npy::ElementType::I8;
  case ATTUNE_DTYPE_BOOL:
    return npy::ElementType::Bool;
  }
  fail(Twine("dtype ") + attune_dtype_name(dtype) +
       " is not supported by attune-run");
}

/// NumPy's name of `type`, for the astype() hint of a dtype mismatch.
const char *numpyName(npy::ElementType type) {
  switch (type) {
  case npy::ElementType::F32:
    return "np.float32";
  case npy::ElementType::F16:
    return "np.float16";
  case npy::ElementType::F64:
    return "np.float64";
  case npy::ElementType::I32:
    return "np.int32";
  case npy::ElementType::I64:
    return "np.int64";
  case npy::ElementType::I8:
    return "np.int8";
  case npy::ElementType::U8:
    return "np.uint8";
  case npy::ElementType::Bool:
    return "bool";
  }
  return "?";
}

/// Where one input's data comes from, as one --input gave it.
struct InputSource {
  std::string path;
  /// name=@FILE: a .npy file, whose header is read before any shape is
  /// fixed, because its shape sets dynamic dimensions.
  bool isNpy = false;
  npy::Header header;
};

/// The value of a named dynamic dimension and what set it, so that a
/// conflict can name both sides.
struct DimBinding {
  int64_t value;
  std::string origin;
};

/// The input's declared shape with dynamic dimensions by name: "[1, seq]".
std::string declaredShape(const attune_tensor_info_t &info) {
  std::string s = "[";
  for (int32_t d = 0; d < info.rank; ++d) {
    s += d ? ", " : "";
    s += info.dims[d] >= 0   ? std::to_string(info.dims[d])
         : info.dim_names[d] ? info.dim_names[d]
                             : "?";
  }
  return s + "]";
}

/// "a, b and c", or "none" for no names.
std::string nameList(ArrayRef<std::string> names) {
  if (names.empty())
    return "none";
  std::string s;
  for (size_t i = 0; i < names.size(); ++i)
    s += (i == 0 ? "" : i + 1 == names.size() ? " and " : ", ") + names[i];
  return s;
}

/// Checks a .npy input's dtype and shape against the input's declaration
/// and binds the dynamic dimensions its shape fixes.
void bindNpyShape(const attune_tensor_info_t &info, const InputSource &source,
                  StringMap<DimBinding> &dims) {
  const npy::Header &header = source.header;
  std::string what = "input '" + std::string(info.name) + "'";
  std::string file = "'" + source.path + "'";
  npy::ElementType want = npyTypeOf(info.dtype);
  if (header.type != want) {
    std::string is = info.dtype == ATTUNE_DTYPE_BF16
                         ? "bf16, read from f32 since NumPy has no bf16;"
                         : attune_dtype_name(info.dtype) + std::string(" but");
    fail(what + " is " + is + " " + file + " holds " +
         npy::elementTypeName(header.type) + " (" + npy::descr(header.type) +
         "): save arr.astype(" + numpyName(want) + ")");
  }
  if (static_cast<int64_t>(header.shape.size()) != info.rank)
    fail(what + " has shape " + declaredShape(info) + " (rank " +
         Twine(info.rank) + "), " + file + " has shape " +
         npy::shapeString(header.shape) + " (rank " +
         Twine(header.shape.size()) + ")");
  for (int32_t d = 0; d < info.rank; ++d) {
    int64_t extent = header.shape[d];
    if (info.dims[d] >= 0) {
      if (extent != info.dims[d])
        fail(what + " has shape " + declaredShape(info) + ", " + file +
             " has shape " + npy::shapeString(header.shape) + ": dimension " +
             Twine(d) + " must be " + Twine(info.dims[d]));
      continue;
    }
    std::string origin =
        file + " (" + what + " dimension " + std::to_string(d) + ")";
    const char *name = info.dim_names[d] ? info.dim_names[d] : "";
    auto [it, inserted] = dims.try_emplace(name, DimBinding{extent, origin});
    if (!inserted && it->second.value != extent)
      fail("dimension '" + Twine(name) + "' is " + Twine(it->second.value) +
           " in " + it->second.origin + " but " + Twine(extent) + " in " +
           origin);
  }
}

/// Reads a .npy input into its buffer; a bf16 input is read as f32 and
/// rounded.
void readNpyInput(const attune_tensor_info_t &info, const InputSource &source,
                  attune_tensor_t &t, Buffer &storage) {
  std::string what = "input '" + std::string(info.name) + "'";
  if (info.dtype != ATTUNE_DTYPE_BF16) {
    if (std::string error =
            npy::readData(source.path, source.header, storage.get());
        !error.empty())
      fail(what + ": " + error);
    return;
  }
  Buffer f32;
  f32.allocate(source.header.dataBytes, what + " as f32");
  if (std::string error = npy::readData(source.path, source.header, f32.get());
      !error.empty())
    fail(what + ": " + error);
  const float *from = reinterpret_cast<const float *>(f32.get());
  uint16_t *to = reinterpret_cast<uint16_t *>(storage.get());
  for (int64_t i = 0, n = numElements(t); i < n; ++i)
    to[i] = floatToBf16(from[i]);
}

/// One input's buffer, filled from a file or at random.
void fillInput(const attune_tensor_info_t &info, attune_tensor_t &t,
               Buffer &storage, const InputSource *source, int64_t indexBound,
               std::mt19937_64 &rng) {
  size_t bytes = byteSize(t, "input '" + Twine(info.name) + "'");
  storage.allocate(bytes, "input '" + Twine(info.name) + "'");
  t.data = storage.get();
  if (source && source->isNpy) {
    assert(source->header.dataBytes ==
               (info.dtype == ATTUNE_DTYPE_BF16 ? 2 * bytes : bytes) &&
           "bindNpyShape set the input's shape from this header");
    readNpyInput(info, *source, t, storage);
    return;
  }
  if (source) {
    auto buffer = MemoryBuffer::getFile(source->path);
    if (!buffer)
      fail("cannot read input '" + Twine(info.name) + "' from '" +
           source->path + "': " + buffer.getError().message());
    if ((*buffer)->getBufferSize() != bytes)
      fail("input '" + Twine(info.name) + "' file '" + source->path + "' has " +
           Twine((*buffer)->getBufferSize()) + " bytes, expected " +
           Twine(bytes) + " for shape " + shapeString(t) + " " +
           attune_dtype_name(t.dtype) +
           (StringRef(source->path).ends_with(".npy")
                ? " (a .npy file is given as --input " +
                      std::string(info.name) + "=@FILE)"
                : ""));
    std::memcpy(storage.get(), (*buffer)->getBufferStart(), bytes);
    return;
  }
  if (!randomInputs)
    fail("no data for input '" + Twine(info.name) + "': pass --input " +
         info.name + "=@FILE.npy, --input " + info.name +
         "=FILE (raw bytes) or --random-inputs");
  int64_t n = numElements(t);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // Integer inputs are ids unless the library says otherwise; keep them
  // small so a model without an index bound still gets valid ids.
  int64_t bound = indexBound > 0 ? indexBound : 100;
  std::uniform_int_distribution<int64_t> ids(0, bound - 1);
  for (int64_t i = 0; i < n; ++i) {
    switch (t.dtype) {
    case ATTUNE_DTYPE_F32:
      reinterpret_cast<float *>(storage.get())[i] = normal(rng);
      break;
    case ATTUNE_DTYPE_F16:
      reinterpret_cast<uint16_t *>(storage.get())[i] = floatToHalf(normal(rng));
      break;
    case ATTUNE_DTYPE_BF16:
      reinterpret_cast<uint16_t *>(storage.get())[i] = floatToBf16(normal(rng));
      break;
    case ATTUNE_DTYPE_I32:
      reinterpret_cast<int32_t *>(storage.get())[i] = static_cast<int32_t>(ids(rng));
      break;
    case ATTUNE_DTYPE_I64:
      reinterpret_cast<int64_t *>(storage.get())[i] = ids(rng);
      break;
    case ATTUNE_DTYPE_I8:
    case ATTUNE_DTYPE_BOOL:
      // Masks: mostly "keep", so no row is masked out entirely by chance.
      storage.get()[i] = (rng() % 8) != 0;
      break;
    }
  }
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
      widened.allocate(n * sizeof(float), "output as f32");
      float *to = reinterpret_cast<float *>(widened.get());
      for (int64_t i = 0; i < n; ++i)
        to[i] = bf16ToFloat(static_cast<const uint16_t *>(t.data)[i]);
      data = widened.get();
    }
    if (std::string error =
            npy::writeFile(paths[o], npyTypeOf(t.dtype), shape, data);
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
  const bool elementwise =
      l2Tol.getNumOccurrences() == 0 &&
      (!bf16Weights || relTol.getNumOccurrences() > 0 || absTol.getNumOccurrences() > 0);
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
    if (elementwise) {
      outs() << format(" (|err| <= %g + %g|ref|: ", absTol.getValue(), relTol.getValue())
             << (bad ? "FAIL, " + std::to_string(bad) + " elements outside" : std::string("ok"))
             << ")\n";
      ok &= bad == 0;
    } else {
      // A NaN where the reference has none (or the reverse) is an infinite
      // error, so the sum is too.
      const bool within = relL2 <= l2Tol;
      outs() << format(" (%srel l2 err <= %g: ", bf16Weights ? "bf16 weights, " : "",
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

  // --dim seq=7 and --dim seq=9 together is a typo, not a choice; the same
  // value twice is harmless.
  StringMap<DimBinding> dims;
  for (const std::string &kv : dimValues) {
    auto [name, value] = StringRef(kv).split('=');
    int64_t v;
    if (name.empty() || value.getAsInteger(10, v) || v < 0)
      fail("--dim expects name=N with N >= 0, got '" + kv + "'");
    auto [it, inserted] = dims.try_emplace(name, DimBinding{v, "--dim " + kv});
    if (!inserted && it->second.value != v)
      fail("dimension '" + name + "' is " + Twine(it->second.value) + " in " +
           it->second.origin + " but " + Twine(v) + " in --dim " + kv);
  }
  StringMap<InputSource> sources;
  for (const std::string &kv : inputSpecs) {
    auto [name, path] = StringRef(kv).split('=');
    InputSource source;
    source.isNpy = path.consume_front("@");
    if (name.empty() || path.empty())
      fail("--input expects name=@FILE.npy or name=FILE, got '" + kv + "'");
    source.path = path.str();
    if (!sources.try_emplace(name, std::move(source)).second)
      fail("input '" + name + "' is given by --input twice");
  }

  attune_model_t *model = nullptr;
  // The runtime's message names the file and what is wrong with it.
  if (attune_model_open(libraryPath.c_str(), &model) != ATTUNE_OK)
    fail(attune_status_message());
  if (numThreads)
    check(attune_model_set_num_threads(model, numThreads), "--num-threads");
  outs() << "model '" << attune_model_name(model) << "' from " << libraryPath << "\n";

  int32_t numInputs = attune_model_num_inputs(model);
  int32_t numOutputs = attune_model_num_outputs(model);
  std::vector<attune_tensor_t> inputs(numInputs);
  std::vector<attune_tensor_info_t> inputInfos(numInputs);
  std::vector<std::string> inputNames, dimNames;
  StringSet<> dimNameSet;
  for (int32_t i = 0; i < numInputs; ++i) {
    attune_tensor_info_t &info = inputInfos[i];
    check(attune_model_input_info(model, i, &info), "input info");
    inputNames.push_back(info.name);
    for (int32_t d = 0; d < info.rank; ++d)
      if (info.dims[d] < 0 && info.dim_names[d] &&
          dimNameSet.insert(info.dim_names[d]).second)
        dimNames.push_back(info.dim_names[d]);
  }

  // A name the model lacks would otherwise be ignored and the run go ahead
  // on random data or the default dimension; every such name is reported.
  bool unknownName = false;
  for (const std::string &kv : inputSpecs) {
    StringRef name = StringRef(kv).split('=').first;
    if (is_contained(inputNames, name))
      continue;
    errs() << "attune-run: error: --input " << kv
           << ": the model has no input '" << name << "'; its inputs are "
           << nameList(inputNames) << "\n";
    unknownName = true;
  }
  for (const std::string &kv : dimValues) {
    StringRef name = StringRef(kv).split('=').first;
    if (dimNameSet.contains(name))
      continue;
    errs() << "attune-run: error: --dim " << kv << ": the model has no dynamic "
           << "dimension '" << name << "'; its dynamic dimensions are "
           << nameList(dimNames) << "\n";
    unknownName = true;
  }
  if (unknownName)
    std::exit(1);

  // A .npy input's shape fixes the dynamic dimensions it has, so headers
  // are read, and checked against each other and --dim, before any shape
  // is set.
  for (const attune_tensor_info_t &info : inputInfos) {
    auto it = sources.find(info.name);
    if (it == sources.end() || !it->second.isNpy)
      continue;
    if (std::string error = npy::readHeader(it->second.path, it->second.header);
        !error.empty())
      fail("input '" + Twine(info.name) + "': " + error);
    bindNpyShape(info, it->second, dims);
  }
  for (int32_t i = 0; i < numInputs; ++i) {
    const attune_tensor_info_t &info = inputInfos[i];
    attune_tensor_t &t = inputs[i];
    t.dtype = info.dtype;
    t.rank = info.rank;
    for (int32_t d = 0; d < info.rank; ++d) {
      if (info.dims[d] >= 0) {
        t.shape[d] = info.dims[d];
        continue;
      }
      auto it = dims.find(info.dim_names[d] ? info.dim_names[d] : "");
      t.shape[d] = it == dims.end() ? 8 : it->second.value;
    }
  }

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
    auto source = sources.find(info.name);
    fillInput(info, t, inputStorage[i],
              source == sources.end() ? nullptr : &source->second,
              info.index_bound, rng);
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
    outputStorage[o].allocate(byteSize(outputs[o], what), what);
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
