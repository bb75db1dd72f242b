//===- Weights.cpp - binding tfm.weight ops to values ---------------------===//
//
// Weights either come from a checkpoint, checked tensor by tensor against
// the IR, or are generated. A checkpoint binds as PyTorch wrote it: an F16 or
// BF16 tensor widens exactly to an f32 weight (converted here, bit by bit,
// so the result does not depend on the host's float conversions), and a
// weight marked `transpose` reads nn.Linear's [out, in] as [in, out].
//
// Generated weights must be the same bits on every machine and with every
// standard library, because examples, tests and benchmarks compare numbers
// across builds: the generator (splitmix64 + Box-Muller) is written out here
// rather than taken from <random>, whose distributions are
// implementation-defined.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/Weights.h"
#include "compiler/frontends/SafeTensors.h"
#include "compiler/frontends/ScalarTypes.h"
#include "compiler/frontends/Support.h"
#include "compiler/frontends/WeightFiles.h"
#include "compiler/support/MergedWeights.h"
#include "compiler/support/PanelLayout.h"
#include "dialects/tfm/TfmOps.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>

using namespace mlir;
using namespace attune;

namespace {

std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

/// FNV-1a: a stable hash of the weight's name, so that each weight draws its
/// own stream whatever order the weights appear in.
uint64_t fnv1a(llvm::StringRef text) {
  uint64_t hash = 0xcbf29ce484222325ULL;
  for (unsigned char c : text) {
    hash ^= c;
    hash *= 0x100000001b3ULL;
  }
  return hash;
}

/// splitmix64 (Steele, Lea, Flood 2014): small, fast, and good enough for
/// initial weights; fully specified by its integer arithmetic.
class SplitMix64 {
public:
  explicit SplitMix64(uint64_t seed) : state(seed) {}
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }
  /// Uniform in (0, 1]: never 0, so log() below is finite.
  double uniformOpenClosed() {
    return static_cast<double>((next() >> 11) + 1) * 0x1.0p-53;
  }

private:
  uint64_t state;
};

/// Fills `count` standard normal samples by the Box-Muller transform, both
/// outputs of each pair used.
std::vector<double> standardNormals(uint64_t seed, llvm::StringRef name,
                                    size_t count) {
  // Mix the seed through the generator once so that seeds 0, 1, 2 ... and
  // names that hash close together do not give correlated streams.
  SplitMix64 seeder(seed);
  SplitMix64 rng(fnv1a(name) ^ seeder.next());
  std::vector<double> out;
  out.reserve(count + 1);
  constexpr double kTwoPi = 6.283185307179586476925286766559;
  while (out.size() < count) {
    double u1 = rng.uniformOpenClosed();
    double u2 = rng.uniformOpenClosed();
    double r = std::sqrt(-2.0 * std::log(u1));
    out.push_back(r * std::cos(kTwoPi * u2));
    out.push_back(r * std::sin(kTwoPi * u2));
  }
  out.resize(count);
  return out;
}

/// Encodes `values` as little-endian bytes of `type` (round to nearest even).
std::vector<uint8_t> encode(llvm::ArrayRef<double> values, ScalarType type) {
  std::vector<uint8_t> bytes;
  auto append = [&](const void *p, size_t n) {
    const auto *b = static_cast<const uint8_t *>(p);
    bytes.insert(bytes.end(), b, b + n);
  };
  for (double v : values) {
    switch (type) {
    case ScalarType::F32: {
      float f = static_cast<float>(v);
      append(&f, 4);
      break;
    }
    case ScalarType::F16:
    case ScalarType::BF16: {
      llvm::APFloat x(v);
      bool losesInfo;
      x.convert(type == ScalarType::F16 ? llvm::APFloat::IEEEhalf()
                                        : llvm::APFloat::BFloat(),
                llvm::APFloat::rmNearestTiesToEven, &losesInfo);
      uint16_t bits = static_cast<uint16_t>(x.bitcastToAPInt().getZExtValue());
      append(&bits, 2);
      break;
    }
    case ScalarType::I32: {
      int32_t i = static_cast<int32_t>(v);
      append(&i, 4);
      break;
    }
    case ScalarType::I64: {
      int64_t i = static_cast<int64_t>(v);
      append(&i, 8);
      break;
    }
    case ScalarType::I8:
    case ScalarType::Bool: {
      int8_t i = static_cast<int8_t>(v);
      append(&i, 1);
      break;
    }
    }
  }
  return bytes;
}

/// One parameter to bind: a plain tfm.weight, or one part of a merged one
/// (whose `type` is then the part's).
struct Parameter {
  llvm::StringRef name;
  bool transpose = false;
  tfm::InitKind init = tfm::InitKind::normal;
  double std = 0.0;
  RankedTensorType type;
  ScalarType dtype = ScalarType::F32;
};

/// Values of a weight with no file behind it, following its `init`.
llvm::Expected<std::vector<uint8_t>> initialise(const Parameter &p,
                                                uint64_t seed) {
  const RankedTensorType type = p.type;
  const ScalarType dtype = p.dtype;
  size_t count = static_cast<size_t>(type.getNumElements());
  std::vector<double> values;
  switch (p.init) {
  case tfm::InitKind::zeros:
    values.assign(count, 0.0);
    break;
  case tfm::InitKind::ones:
    values.assign(count, 1.0);
    break;
  case tfm::InitKind::normal: {
    if (dtype != ScalarType::F32 && dtype != ScalarType::F16 &&
        dtype != ScalarType::BF16)
      return makeError("weight '" + p.name +
                       "': expected a float type for init 'normal', got " +
                       typeString(type));
    double stddev = p.std;
    values = standardNormals(seed, p.name, count);
    for (double &v : values)
      v *= stddev;
    break;
  }
  }
  return encode(values, dtype);
}

/// IEEE binary16 to binary32. Every half is a float, so this is exact: a
/// normal number moves its exponent to the new bias, a subnormal becomes a
/// normal float, and inf and NaN keep their sign and payload (the quiet bit
/// included), shifted up 13 places.
float halfToFloat(uint16_t h) {
  uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000 | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent - 15 + 127) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {
    // mantissa * 2^-24: shift the leading one up to the implicit bit's place
    // (0x400), starting from the exponent of 2^-14, the smallest normal.
    uint32_t floatExponent = 1 - 15 + 127;
    while (!(mantissa & 0x400)) {
      mantissa <<= 1;
      --floatExponent;
    }
    bits = sign | (floatExponent << 23) | ((mantissa & 0x3ff) << 13);
  }
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// bfloat16 is the top half of a binary32, so widening appends zero bits.
float bfloat16ToFloat(uint16_t b) {
  uint32_t bits = static_cast<uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

/// Whether a file tensor of dtype `file` binds to a weight of element type
/// `ir`: the same type, or F16 and BF16 widened to f32, which PyTorch
/// checkpoints are often saved in. Nothing else converts: narrowing would
/// round, and an integer to or from a float would change the values' meaning.
bool binds(ScalarType file, ScalarType ir) {
  return file == ir || (ir == ScalarType::F32 &&
                        (file == ScalarType::F16 || file == ScalarType::BF16));
}

/// Calls `copy(dst, src)` for the index of every element of a [rows, cols]
/// tensor and where it goes: the same place, or with `transpose`, the place
/// in the [cols, rows] transpose. The transpose runs in tiles so that both
/// sides stay in cache for a large matrix.
template <typename CopyFn>
void forEachElement(int64_t rows, int64_t cols, bool transpose, CopyFn copy) {
  if (!transpose) {
    for (int64_t i = 0, e = rows * cols; i < e; ++i)
      copy(i, i);
    return;
  }
  constexpr int64_t kTile = 32;
  for (int64_t i0 = 0; i0 < rows; i0 += kTile)
    for (int64_t j0 = 0; j0 < cols; j0 += kTile)
      for (int64_t i = i0, ie = std::min(i0 + kTile, rows); i < ie; ++i)
        for (int64_t j = j0, je = std::min(j0 + kTile, cols); j < je; ++j)
          copy(j * rows + i, i * cols + j);
}

/// The bytes of weight `ir` from file tensor `found`, which binds(): read
/// element by element with memcpy, since a tensor may start at any byte of
/// the file, widened and transposed as the weight asks.
std::vector<uint8_t> readTensor(const WeightFileTensor &found, ScalarType ir,
                                bool transpose) {
  const SafeTensorEntry &entry = *found.entry;
  const uint8_t *src = found.data;
  if (entry.dtype == ir && !transpose)
    return std::vector<uint8_t>(src, src + entry.size);

  // A transposed weight is rank 2 (the verifier says so); anything else is
  // copied as one row.
  int64_t rows = 1, cols = 1;
  for (int64_t d : entry.shape)
    cols *= d;
  if (transpose) {
    rows = entry.shape[0];
    cols = entry.shape[1];
  }
  size_t count = static_cast<size_t>(rows * cols);
  size_t width = scalarTypeBytes(ir);
  std::vector<uint8_t> out(count * width);
  uint8_t *dst = out.data();
  auto widen = [&](float (*convert)(uint16_t)) {
    forEachElement(rows, cols, transpose, [&](int64_t d, int64_t s) {
      uint16_t half;
      std::memcpy(&half, src + 2 * s, 2);
      float f = convert(half);
      std::memcpy(dst + 4 * d, &f, 4);
    });
  };
  if (entry.dtype == ScalarType::F16 && ir == ScalarType::F32)
    widen(halfToFloat);
  else if (entry.dtype == ScalarType::BF16 && ir == ScalarType::F32)
    widen(bfloat16ToFloat);
  else
    forEachElement(rows, cols, transpose, [&](int64_t d, int64_t s) {
      std::memcpy(dst + width * d, src + width * s, width);
    });
  return out;
}

} // namespace

namespace {

/// Rewrites `t`, a row-major [K, N] matrix, into its panels of `width`, or
/// bf16 pair panels of an f32 `t` for #tfm.panels<W, bf16>.
void packTensor(SafeTensorData &t, tfm::PanelsAttr panels) {
  const int64_t k = t.shape[0], n = t.shape[1], width = panels.getWidth();
  if (panels.isBf16Pairs()) {
    // The verifier allows bf16 panels of f32 matrices only.
    std::vector<int64_t> shape = pairPanelStorageShape(k, n, width);
    std::vector<float> values(static_cast<size_t>(k * n));
    std::memcpy(values.data(), t.bytes.data(), values.size() * sizeof(float));
    std::vector<uint16_t> pairs(static_cast<size_t>(shape[0] * shape[1] * width * 2));
    packPairPanelsBf16(values.data(), pairs.data(), k, n, width);
    t.bytes.assign(reinterpret_cast<const uint8_t *>(pairs.data()),
                   reinterpret_cast<const uint8_t *>(pairs.data() + pairs.size()));
    t.dtype = ScalarType::BF16;
    t.shape = std::move(shape);
    return;
  }
  std::vector<int64_t> shape = panelStorageShape(k, n, width);
  std::vector<uint8_t> packed(static_cast<size_t>(shape[0] * k * width) *
                              scalarTypeBytes(t.dtype));
  packPanels(t.bytes.data(), packed.data(), k, n, width,
             scalarTypeBytes(t.dtype));
  t.bytes = std::move(packed);
  t.shape = std::move(shape);
}

/// The row-major [k, n] bytes of the matrix `entry` (at `data`) holds
/// packed into panels of `dtype` (or bf16 pairs of an f32 matrix), or
/// nothing when the entry is not such panels.
std::optional<std::vector<uint8_t>> unpackedPanels(const SafeTensorEntry &entry,
                                                   const uint8_t *data, int64_t k,
                                                   int64_t n, ScalarType dtype) {
  int64_t width = 0;
  PanelForm form = panelForm(entry.dtype, entry.shape, k, n, dtype, width);
  if (form == PanelForm::None)
    return std::nullopt;
  std::vector<uint8_t> bytes(static_cast<size_t>(k * n) * scalarTypeBytes(dtype));
  unpackPanelForm(form, data, bytes.data(), k, n, width, scalarTypeBytes(dtype));
  return bytes;
}

/// The bytes of `p`, row-major in its IR type: from `files` (a library's
/// own packed weights given back are unpacked) or, without files, from its
/// `init`.
llvm::Expected<std::vector<uint8_t>>
bindParameter(const Parameter &p, const std::optional<WeightFiles> &files,
              uint64_t seed) {
  const RankedTensorType type = p.type;
  const ScalarType dtype = p.dtype;
  if (!files)
    return initialise(p, seed);
  std::optional<WeightFileTensor> found = files->lookup(p.name), packed;
  if (!found && !p.transpose && type.getRank() == 2)
    packed = files->lookupPacked(p.name);
  if (packed) {
    // A library's own weights given back: this matrix is stored packed
    // into panels [ceil(N/W), K, W] of its own dtype, or bf16 pair panels
    // of an f32 matrix (widened exactly); unpacked here.
    const SafeTensorEntry *entry = packed->entry;
    if (std::optional<std::vector<uint8_t>> bytes = unpackedPanels(
            *entry, packed->data, type.getDimSize(0), type.getDimSize(1), dtype))
      return std::move(*bytes);
    return makeError(llvm::formatv(
        "weights file '{0}': tensor '{1}' has dtype {2} and shape {3}, "
        "which are not {4} packed into panels",
        packed->file, entry->name, safeTensorsDTypeName(entry->dtype),
        shapeString(entry->shape), typeString(type)));
  }
  int64_t offset = 0, total = 0;
  std::optional<WeightFileTensor> merged;
  if (!found)
    merged = files->lookupMergedPart(p.transpose ? (p.name + "^T").str() : p.name.str(),
                                     offset, total);
  if (merged) {
    // A library's own weights given back, compiled with
    // --merge-projections: this parameter is columns [offset, offset +
    // extent) of a merged [rows, total] entry, stored as the IR reads it
    // (already transposed), plain or packed into panels.
    const SafeTensorEntry *entry = merged->entry;
    const int64_t extent = type.getShape().back();
    const int64_t rows = type.getNumElements() / std::max<int64_t>(extent, 1);
    std::vector<int64_t> plainShape(type.getShape().begin(), type.getShape().end());
    plainShape.back() = total;
    const size_t bytes = scalarTypeBytes(dtype);
    std::optional<std::vector<uint8_t>> whole;
    if (type.getRank() == 2)
      whole = unpackedPanels(*entry, merged->data, rows, total, dtype);
    if (!whole && entry->dtype == dtype && entry->shape == plainShape)
      whole.emplace(merged->data, merged->data + static_cast<size_t>(rows * total) * bytes);
    if (!whole)
      return makeError(llvm::formatv(
          "weights file '{0}': merged tensor '{1}' has dtype {2} and shape {3}, "
          "which do not hold '{4}' as {5} at column {6} of {7}",
          merged->file, entry->name, safeTensorsDTypeName(entry->dtype),
          shapeString(entry->shape), p.name, typeString(type), offset, total));
    std::vector<uint8_t> part(static_cast<size_t>(rows * extent) * bytes);
    sliceLastAxis(whole->data(), rows, total, offset, extent, bytes, part.data());
    return part;
  }
  if (!found)
    return makeError(files->description() + " has no tensor '" + p.name +
                     "' (the IR declares " + typeString(type) + ")");
  const SafeTensorEntry *entry = found->entry;
  if (!binds(entry->dtype, dtype))
    return makeError(llvm::formatv(
        "weights file '{0}': tensor '{1}' has dtype {2}, but the IR "
        "declares {3} (only F16 and BF16 convert, widening to f32)",
        found->file, p.name, safeTensorsDTypeName(entry->dtype),
        typeString(type)));
  if (!p.transpose && llvm::ArrayRef<int64_t>(entry->shape) != type.getShape())
    return makeError(llvm::formatv(
        "weights file '{0}': tensor '{1}' has shape {2}, but the IR "
        "declares {3}",
        found->file, p.name, shapeString(entry->shape),
        shapeString(type.getShape())));
  if (p.transpose) {
    // The verifier allows `transpose` on rank 2 only.
    llvm::SmallVector<int64_t, 2> fileShape = {type.getDimSize(1),
                                               type.getDimSize(0)};
    if (llvm::ArrayRef<int64_t>(entry->shape) != llvm::ArrayRef(fileShape))
      return makeError(llvm::formatv(
          "weights file '{0}': tensor '{1}' has shape {2}, but the IR "
          "declares {3} with 'transpose', so the file must hold {4}",
          found->file, p.name, shapeString(entry->shape),
          shapeString(type.getShape()), shapeString(fileShape)));
  }
  return readTensor(*found, dtype, p.transpose);
}
} // namespace

llvm::Expected<std::string> attune::packWeightBlob(ModuleOp module,
                                                   llvm::StringRef blob) {
  // Weights the passes gave a new form the blob lacks (packed into panels,
  // merged from parts, or both), and the plain entries still read as such.
  llvm::StringMap<tfm::WeightOp> missing;
  llvm::StringSet<> plainKeys;
  module.walk([&](tfm::WeightOp op) {
    if (op.getPanels() || op.getPartSizes())
      missing.try_emplace(op.getBlobKey(), op);
    if (!op.getPanels())
      plainKeys.insert(op.getBlobKey());
  });
  if (missing.empty())
    return blob.str();
  llvm::Expected<SafeTensorsView> view =
      SafeTensorsView::parse(blob.data(), blob.size());
  if (!view)
    return view.takeError();
  for (const SafeTensorEntry &entry : view->entries())
    missing.erase(entry.name);
  if (missing.empty())
    return blob.str();

  // An entry of `blob`: its bytes copied (to be packed), or borrowed from
  // `blob`, which outlives the write, so that passing a large model's
  // entries through does not hold a third copy of its weights.
  auto entryOf = [&](const SafeTensorEntry &entry, bool copy) {
    SafeTensorData t;
    t.name = entry.name;
    t.dtype = entry.dtype;
    t.shape = entry.shape;
    llvm::ArrayRef<uint8_t> data(view->dataStart() + entry.offset, entry.size);
    if (copy)
      t.bytes.assign(data.begin(), data.end());
    else
      t.borrowed = data;
    return t;
  };
  // Sorted by key: the blob's bytes must not depend on hash order.
  std::vector<std::string> keys;
  for (auto &item : missing)
    keys.push_back(item.getKey().str());
  llvm::sort(keys);
  std::vector<SafeTensorData> derived;
  llvm::StringSet<> derivedFrom;
  for (const std::string &key : keys) {
    tfm::WeightOp op = missing.lookup(key);
    auto type = cast<RankedTensorType>(op.getType());
    std::string plain = llvm::StringRef(key).rsplit(kPanelsKeyMarker).first.str();
    SafeTensorData t;
    if (const SafeTensorEntry *entry = view->lookup(plain)) {
      if (llvm::ArrayRef<int64_t>(entry->shape) != type.getShape())
        return makeError("weight '" + op.getName() + "': cannot pack entry '" +
                         plain + "' of shape " + shapeString(entry->shape) +
                         " as " + typeString(type));
      t = entryOf(*entry, /*copy=*/true);
      derivedFrom.insert(plain);
    } else if (op.getPartSizes()) {
      // Merged (tfm-merge-projections): the parts were bound as weights of
      // their own before the passes ran.
      std::vector<const uint8_t *> parts;
      std::vector<int64_t> extents;
      t.shape.assign(type.getShape().begin(), type.getShape().end());
      for (const WeightPart &part : op.getParts()) {
        const SafeTensorEntry *entry = view->lookup(part.key);
        std::vector<int64_t> partShape = t.shape;
        partShape.back() = part.extent;
        if (!entry)
          return makeError("weight '" + op.getName() + "': the weights blob has no '" +
                           part.key + "' to merge");
        if (entry->shape != partShape ||
            (!parts.empty() && entry->dtype != t.dtype))
          return makeError("weight '" + op.getName() + "': cannot merge entry '" +
                           part.key + "' of shape " + shapeString(entry->shape) +
                           " as part " + shapeString(partShape) + " of " +
                           typeString(type));
        t.dtype = entry->dtype;
        parts.push_back(view->dataStart() + entry->offset);
        extents.push_back(part.extent);
        derivedFrom.insert(part.key);
      }
      t.bytes.resize(static_cast<size_t>(type.getNumElements()) *
                     scalarTypeBytes(t.dtype));
      concatLastAxis(parts, extents, type.getNumElements() / type.getShape().back(),
                     scalarTypeBytes(t.dtype), t.bytes.data());
    } else {
      return makeError("weight '" + op.getName() + "': the weights blob has no '" +
                       key + "' and no '" + plain + "' to pack it from");
    }
    t.name = key;
    if (tfm::PanelsAttr panels = op.getPanels())
      packTensor(t, panels);
    derived.push_back(std::move(t));
  }
  std::vector<SafeTensorData> tensors;
  // Plain entries stay unless only a derived form of them is read now: the
  // reference evaluator recovers those (weightsFromSafeTensors).
  for (const SafeTensorEntry &entry : view->entries())
    if (!derivedFrom.contains(entry.name) || plainKeys.contains(entry.name))
      tensors.push_back(entryOf(entry, /*copy=*/false));
  for (SafeTensorData &t : derived)
    tensors.push_back(std::move(t));
  return writeSafeTensors(tensors);
}

llvm::Expected<std::string> attune::materializeWeights(ModuleOp module,
                                                       llvm::StringRef path,
                                                       uint64_t seed) {
  // Collect the distinct weights in order of first appearance.
  std::vector<tfm::WeightOp> weights;
  llvm::StringMap<std::pair<RankedTensorType, bool>> declared;
  std::optional<llvm::Error> failure;
  module.walk([&](tfm::WeightOp op) {
    if (failure)
      return WalkResult::interrupt();
    auto type = dyn_cast<RankedTensorType>(op.getResult().getType());
    if (!type || !type.hasStaticShape()) {
      failure = makeError("weight '" + op.getName() +
                          "': expected a statically shaped tensor, got " +
                          typeString(op.getResult().getType()));
      return WalkResult::interrupt();
    }
    if (op.getTranspose() && type.getRank() != 2) {
      // The verifier's rule, checked again because a module given here
      // need not have been verified, and reading would index dims 0 and 1.
      failure = makeError("weight '" + op.getName() +
                          "': expected rank 2 with 'transpose', got " +
                          typeString(type));
      return WalkResult::interrupt();
    }
    // A tensor bound with and without `transpose` is two blob entries.
    auto [it, inserted] =
        declared.try_emplace(op.getBlobKey(), type, op.getTranspose());
    if (inserted) {
      weights.push_back(op);
    } else if (it->second.first != type) {
      failure = makeError(
          "weight '" + op.getName() + "' is declared with two types: " +
          typeString(it->second.first) + " and " + typeString(type));
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (failure)
    return std::move(*failure);

  std::optional<WeightFiles> files;
  if (!path.empty()) {
    llvm::Expected<WeightFiles> opened = WeightFiles::open(path);
    if (!opened)
      return opened.takeError();
    files = std::move(*opened);
  }

  std::vector<SafeTensorData> tensors;
  for (tfm::WeightOp op : weights) {
    auto type = cast<RankedTensorType>(op.getResult().getType());
    std::optional<ScalarType> dtype = scalarTypeOf(type.getElementType());
    if (!dtype)
      return makeError("weight '" + op.getName() +
                       "': unsupported element type in " + typeString(type) +
                       " (expected f32, f16, bf16, i64, i32, i8 or i1)");
    SafeTensorData t;
    t.name = op.getBlobKey();
    t.dtype = *dtype;
    t.shape.assign(type.getShape().begin(), type.getShape().end());

    Parameter p;
    p.name = op.getName();
    p.transpose = op.getTranspose();
    p.init = op.getInit();
    p.std = op.getStd().convertToDouble();
    p.type = RankedTensorType::get(type.getShape(), type.getElementType());
    p.dtype = *dtype;
    if (std::optional<ArrayRef<int64_t>> sizes = op.getPartSizes()) {
      // A merged weight (tfm-merge-projections): each part bound as the
      // weight of its own name would be, then concatenated.
      std::vector<std::vector<uint8_t>> parts;
      SmallVector<int64_t> partShape(type.getShape());
      for (auto [name, size] : llvm::zip(op.getPartNames(), *sizes)) {
        partShape.back() = size;
        Parameter part = p;
        part.name = name;
        part.type = RankedTensorType::get(partShape, type.getElementType());
        llvm::Expected<std::vector<uint8_t>> bytes = bindParameter(part, files, seed);
        if (!bytes)
          return bytes.takeError();
        parts.push_back(std::move(*bytes));
      }
      std::vector<const uint8_t *> partData;
      for (const std::vector<uint8_t> &part : parts)
        partData.push_back(part.data());
      t.bytes.resize(static_cast<size_t>(type.getNumElements()) *
                     scalarTypeBytes(*dtype));
      concatLastAxis(partData, std::vector<int64_t>(sizes->begin(), sizes->end()),
                     type.getNumElements() / type.getShape().back(),
                     scalarTypeBytes(*dtype), t.bytes.data());
    } else {
      llvm::Expected<std::vector<uint8_t>> bytes = bindParameter(p, files, seed);
      if (!bytes)
        return bytes.takeError();
      t.bytes = std::move(*bytes);
    }
    if (tfm::PanelsAttr panels = op.getPanels())
      packTensor(t, panels);
    tensors.push_back(std::move(t));
  }
  // No weights, no blob: a weightless library then embeds nothing and its
  // attune_model_weights() gives NULL/0, as runtime.h promises.
  if (tensors.empty())
    return std::string();
  return writeSafeTensors(tensors);
}
