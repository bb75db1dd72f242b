//===- RunInputs.cpp - attune-run's --dim and --input, and its inputs -----===//
//
// Moved out of attune-run.cpp unchanged but for the error path: each
// `fail(message)` that exited there returns the message here (RunInputs.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/tools/attune-run/RunInputs.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/bit.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cassert>
#include <cmath>
#include <cstring>

using namespace llvm;

namespace attune::run {

namespace {

std::string unsupportedDtype(attune_dtype_t dtype) {
  return (Twine("dtype ") + attune_dtype_name(dtype) +
          " is not supported by attune-run")
      .str();
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
std::string bindNpyShape(const attune_tensor_info_t &info,
                         const InputSource &source,
                         StringMap<DimBinding> &dims) {
  const npy::Header &header = source.header;
  std::string what = "input '" + std::string(info.name) + "'";
  std::string file = "'" + source.path + "'";
  std::optional<npy::ElementType> want = npyTypeOf(info.dtype);
  if (!want)
    return unsupportedDtype(info.dtype);
  if (header.type != *want) {
    std::string is = info.dtype == ATTUNE_DTYPE_BF16
                         ? "bf16, read from f32 since NumPy has no bf16;"
                         : attune_dtype_name(info.dtype) + std::string(" but");
    return what + " is " + is + " " + file + " holds " +
           npy::elementTypeName(header.type) + " (" + npy::descr(header.type) +
           "): save arr.astype(" + numpyName(*want) + ")";
  }
  if (static_cast<int64_t>(header.shape.size()) != info.rank)
    return (what + " has shape " + declaredShape(info) + " (rank " +
            Twine(info.rank) + "), " + file + " has shape " +
            npy::shapeString(header.shape) + " (rank " +
            Twine(header.shape.size()) + ")")
        .str();
  for (int32_t d = 0; d < info.rank; ++d) {
    int64_t extent = header.shape[d];
    if (info.dims[d] >= 0) {
      if (extent != info.dims[d])
        return (what + " has shape " + declaredShape(info) + ", " + file +
                " has shape " + npy::shapeString(header.shape) +
                ": dimension " + Twine(d) + " must be " + Twine(info.dims[d]))
            .str();
      continue;
    }
    std::string origin =
        file + " (" + what + " dimension " + std::to_string(d) + ")";
    const char *name = info.dim_names[d] ? info.dim_names[d] : "";
    auto [it, inserted] = dims.try_emplace(name, DimBinding{extent, origin});
    if (!inserted && it->second.value != extent)
      return ("dimension '" + Twine(name) + "' is " + Twine(it->second.value) +
              " in " + it->second.origin + " but " + Twine(extent) + " in " +
              origin)
          .str();
  }
  return "";
}

/// Reads a .npy input into its buffer; a bf16 input is read as f32 and
/// rounded.
std::string readNpyInput(const attune_tensor_info_t &info,
                         const InputSource &source, attune_tensor_t &t,
                         Buffer &storage) {
  std::string what = "input '" + std::string(info.name) + "'";
  if (info.dtype != ATTUNE_DTYPE_BF16) {
    if (std::string error =
            npy::readData(source.path, source.header, storage.get());
        !error.empty())
      return what + ": " + error;
    return "";
  }
  Buffer f32;
  if (std::string error =
          f32.allocate(source.header.dataBytes, what + " as f32");
      !error.empty())
    return error;
  if (std::string error = npy::readData(source.path, source.header, f32.get());
      !error.empty())
    return what + ": " + error;
  const float *from = reinterpret_cast<const float *>(f32.get());
  uint16_t *to = reinterpret_cast<uint16_t *>(storage.get());
  for (int64_t i = 0, n = numElements(t); i < n; ++i)
    to[i] = floatToBf16(from[i]);
  return "";
}

} // namespace

std::string parseInputArguments(ArrayRef<std::string> dimSpecs,
                                ArrayRef<std::string> inputSpecs,
                                InputArguments &out) {
  // --dim seq=7 and --dim seq=9 together is a typo, not a choice; the same
  // value twice is harmless.
  for (const std::string &kv : dimSpecs) {
    auto [name, value] = StringRef(kv).split('=');
    int64_t v;
    if (name.empty() || value.getAsInteger(10, v) || v < 0)
      return "--dim expects name=N with N >= 0, got '" + kv + "'";
    auto [it, inserted] =
        out.dims.try_emplace(name, DimBinding{v, "--dim " + kv});
    if (!inserted && it->second.value != v)
      return ("dimension '" + name + "' is " + Twine(it->second.value) +
              " in " + it->second.origin + " but " + Twine(v) + " in --dim " +
              kv)
          .str();
  }
  for (const std::string &kv : inputSpecs) {
    auto [name, path] = StringRef(kv).split('=');
    InputSource source;
    source.isNpy = path.consume_front("@");
    if (name.empty() || path.empty())
      return "--input expects name=@FILE.npy or name=FILE, got '" + kv + "'";
    source.path = path.str();
    if (!out.sources.try_emplace(name, std::move(source)).second)
      return ("input '" + name + "' is given by --input twice").str();
  }
  return "";
}

std::vector<std::string>
unknownNameErrors(ArrayRef<std::string> dimSpecs,
                  ArrayRef<std::string> inputSpecs,
                  ArrayRef<attune_tensor_info_t> infos) {
  std::vector<std::string> inputNames, dimNames;
  StringSet<> dimNameSet;
  for (const attune_tensor_info_t &info : infos) {
    inputNames.push_back(info.name);
    for (int32_t d = 0; d < info.rank; ++d)
      if (info.dims[d] < 0 && info.dim_names[d] &&
          dimNameSet.insert(info.dim_names[d]).second)
        dimNames.push_back(info.dim_names[d]);
  }
  // A name the model lacks would otherwise be ignored and the run go ahead
  // on random data or the default dimension; every such name is reported.
  std::vector<std::string> errors;
  for (const std::string &kv : inputSpecs) {
    StringRef name = StringRef(kv).split('=').first;
    if (!is_contained(inputNames, name))
      errors.push_back("--input " + kv + ": the model has no input '" +
                       name.str() + "'; its inputs are " +
                       nameList(inputNames));
  }
  for (const std::string &kv : dimSpecs) {
    StringRef name = StringRef(kv).split('=').first;
    if (!dimNameSet.contains(name))
      errors.push_back("--dim " + kv + ": the model has no dynamic " +
                       "dimension '" + name.str() +
                       "'; its dynamic dimensions are " + nameList(dimNames));
  }
  return errors;
}

std::string bindNpyInputs(ArrayRef<attune_tensor_info_t> infos,
                          InputArguments &args) {
  // A .npy input's shape fixes the dynamic dimensions it has, so headers
  // are read, and checked against each other and --dim, before any shape
  // is set.
  for (const attune_tensor_info_t &info : infos) {
    auto it = args.sources.find(info.name);
    if (it == args.sources.end() || !it->second.isNpy)
      continue;
    if (std::string error = npy::readHeader(it->second.path, it->second.header);
        !error.empty())
      return ("input '" + Twine(info.name) + "': " + error).str();
    if (std::string error = bindNpyShape(info, it->second, args.dims);
        !error.empty())
      return error;
  }
  return "";
}

void resolveShapes(ArrayRef<attune_tensor_info_t> infos,
                   const StringMap<DimBinding> &dims,
                   MutableArrayRef<attune_tensor_t> inputs) {
  assert(infos.size() == inputs.size() && "one tensor per input");
  for (size_t i = 0; i < infos.size(); ++i) {
    const attune_tensor_info_t &info = infos[i];
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
}

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

std::string byteSize(const attune_tensor_t &t, const Twine &what,
                     size_t &out) {
  uint64_t n = attune_dtype_size(t.dtype);
  for (int32_t i = 0; i < t.rank; ++i)
    if (t.shape[i] < 0 ||
        __builtin_mul_overflow(n, static_cast<uint64_t>(t.shape[i]), &n) ||
        n > static_cast<uint64_t>(PTRDIFF_MAX))
      return (what + " of shape " + shapeString(t) + " " +
              attune_dtype_name(t.dtype) + " does not fit in memory")
          .str();
  out = static_cast<size_t>(n);
  return "";
}

std::string Buffer::allocate(size_t bytes, const Twine &what) {
  data.reset(static_cast<char *>(std::calloc(bytes ? bytes : 1, 1)));
  if (!data)
    return ("cannot allocate " + Twine(bytes) + " bytes for " + what).str();
  return "";
}

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

float bf16ToFloat(uint16_t b) {
  return llvm::bit_cast<float>(static_cast<uint32_t>(b) << 16);
}

uint16_t floatToBf16(float f) {
  uint32_t bits = llvm::bit_cast<uint32_t>(f);
  if ((bits & 0x7fffffff) > 0x7f800000)
    return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);
  return static_cast<uint16_t>(bits >> 16);
}

std::optional<double> readElement(const attune_tensor_t &t, int64_t i) {
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
  return std::nullopt;
}

std::optional<npy::ElementType> npyTypeOf(attune_dtype_t dtype) {
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
  return std::nullopt;
}

std::string fillInput(const attune_tensor_info_t &info, attune_tensor_t &t,
                      Buffer &storage, const InputSource *source,
                      bool randomInputs, std::mt19937_64 &rng) {
  size_t bytes = 0;
  if (std::string error = byteSize(t, "input '" + Twine(info.name) + "'", bytes);
      !error.empty())
    return error;
  if (std::string error =
          storage.allocate(bytes, "input '" + Twine(info.name) + "'");
      !error.empty())
    return error;
  t.data = storage.get();
  if (source && source->isNpy) {
    assert(source->header.dataBytes ==
               (info.dtype == ATTUNE_DTYPE_BF16 ? 2 * bytes : bytes) &&
           "bindNpyShape set the input's shape from this header");
    return readNpyInput(info, *source, t, storage);
  }
  if (source) {
    auto buffer = MemoryBuffer::getFile(source->path);
    if (!buffer)
      return ("cannot read input '" + Twine(info.name) + "' from '" +
              source->path + "': " + buffer.getError().message())
          .str();
    if ((*buffer)->getBufferSize() != bytes)
      return ("input '" + Twine(info.name) + "' file '" + source->path +
              "' has " + Twine((*buffer)->getBufferSize()) +
              " bytes, expected " + Twine(bytes) + " for shape " +
              shapeString(t) + " " + attune_dtype_name(t.dtype) +
              (StringRef(source->path).ends_with(".npy")
                   ? " (a .npy file is given as --input " +
                         std::string(info.name) + "=@FILE)"
                   : ""))
          .str();
    std::memcpy(storage.get(), (*buffer)->getBufferStart(), bytes);
    return "";
  }
  if (!randomInputs)
    return ("no data for input '" + Twine(info.name) + "': pass --input " +
            info.name + "=@FILE.npy, --input " + info.name +
            "=FILE (raw bytes) or --random-inputs")
        .str();
  int64_t n = numElements(t);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  // Integer inputs are ids unless the library says otherwise; keep them
  // small so a model without an index bound still gets valid ids.
  int64_t bound = info.index_bound > 0 ? info.index_bound : 100;
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
      reinterpret_cast<int32_t *>(storage.get())[i] =
          static_cast<int32_t>(ids(rng));
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
  return "";
}

} // namespace attune::run
