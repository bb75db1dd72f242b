//===- OnnxImporter.cpp - ONNX models as tfm IR ---------------------------===//
//
// The graph is converted on demand, from its outputs back: asking for a value
// converts the node that produces it, which asks for its inputs. Nodes nothing
// needs are never converted, a node that is part of a recognised function
// (the Erf of a GELU, the ReduceMean of an RMSNorm) is read only by the
// pattern that absorbs it, and a value that depends on itself is a cycle,
// reported with the node that closes it. Graphs need not be sorted.
//
// Each ONNX value becomes one of three things:
//  - a tensor: an SSA value of the tfm function;
//  - a constant: host data (an initializer, a Constant node, or folded shape
//    arithmetic), emitted only where a tensor op reads it: an initializer as
//    a tfm.weight named after it (its bytes go to the weights blob), a
//    one-element constant as a splat arith.constant, which the fusion passes
//    read scales and mask fills from;
//  - a shape: a list of dimensions, each a number or "dimension `axis` of
//    tensor `t`" (Shape and the Gather/Concat/Unsqueeze plumbing around it),
//    so Reshape gets its target and Range over a sequence length becomes
//    tfm.arange.
//
// Grouped heads. Exporters write multi-head attention over rank-5 tensors,
// [B, KV, R, S, D] with R query heads per key/value head, broadcasting k and v
// over R. tfm's attention and matmul are rank 4, so a rank-5 tensor is kept as
// a rank-4 one whose axis m holds the logical axes m and m+1 merged ("lazy",
// Val::merge); matmuls, elementwise ops, softmax and transposes that keep the
// pair together work on the rank-4 value, and a broadcast of a key/value head
// over its R query heads becomes tfm.repeat_interleave, the form
// tfm-fuse-attention raises as GQA. Anything else reshapes to rank 5 first.
//
// Masks. Trilu of a constant folds; of a tensor it becomes tfm.compare of
// tfm.arange positions and a tfm.where, so a dynamic causal mask is computed,
// not stored. Expand broadcasts to a shape known at compile time.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/OnnxImporter.h"
#include "compiler/frontends/ImportContext.h"
#include "compiler/frontends/SafeTensors.h"
#include "compiler/frontends/Support.h"
#include "dialects/tfm/TfmBuilders.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"
#include "passes/DecomposeAttention.h"

#include "onnx/onnx.pb.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/thread.h"

#include <cctype>
#include <cmath>
#include <limits>
#include <cstring>
#include <memory>
#include <optional>

using namespace mlir;
using namespace attune;
using namespace attune::frontends;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

constexpr int64_t kDyn = ShapedType::kDynamic;
constexpr int64_t kMinOpset = 17, kMaxOpset = 23;
/// Host-side constants larger than this are not folded (shape arithmetic is
/// tiny; a big folded tensor would be a weight the file does not hold).
constexpr int64_t kMaxFoldElements = 1 << 16;
/// Converting a value converts its producer first, so the conversion
/// recurses once per node along a path (Importer::get), a few KB a node (ten
/// times that with the address sanitizer). It runs on a thread with this
/// much stack, and a graph deeper than the stack holds, less the reserve, is
/// an error rather than a stack overflow.
constexpr unsigned kImportStackBytes = 64u << 20;
constexpr uintptr_t kImportStackReserve = 4u << 20;

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

/// Host data: an initializer, a Constant node's value, or folded arithmetic.
struct Const {
  int onnxType = 0;
  llvm::SmallVector<int64_t> shape;
  std::vector<float> f;   ///< FLOAT, and FLOAT16/BFLOAT16 widened exactly
  std::vector<int64_t> i; ///< INT64, INT32, BOOL
  /// The initializer this is (or the transpose of, with `transposed`);
  /// empty for folded values.
  std::string init;
  bool transposed = false;

  bool isFloat() const {
    return onnxType == onnx::TensorProto::FLOAT || is16BitFloat();
  }
  bool is16BitFloat() const {
    return onnxType == onnx::TensorProto::FLOAT16 ||
           onnxType == onnx::TensorProto::BFLOAT16;
  }
  /// The element count: -1 when a dim is negative (dynamic), INT64_MAX when
  /// the count overflows; neither passes a check.
  int64_t numel() const {
    if (llvm::any_of(shape, [](int64_t d) { return d <= 0; }))
      return llvm::any_of(shape, [](int64_t d) { return d < 0; }) ? -1 : 0;
    int64_t n = 1;
    for (int64_t d : shape)
      if (llvm::MulOverflow(n, d, n))
        return INT64_MAX;
    return n;
  }
  double at(int64_t k) const { return isFloat() ? f[k] : double(i[k]); }
};

/// A dimension of a shape value: a number, or dimension `axis` of `source`.
struct Dim {
  int64_t size = kDyn;
  Value source;
  int64_t axis = 0;
};

struct Val {
  enum Kind { Tensor, Constant, Shape } kind = Tensor;
  // Tensor. With merge >= 0, `v` is rank 4 and the value is rank 5,
  // `logical`, with axes merge and merge + 1 merged into v's axis merge.
  Value v;
  int merge = -1;
  llvm::SmallVector<int64_t> logical;
  // Constant.
  std::shared_ptr<Const> c;
  // Shape: a rank-1 int64 tensor of `dims`, or a scalar (rank 0) when
  // `scalar`.
  llvm::SmallVector<Dim> dims;
  bool scalar = false;

  bool isLazy() const { return kind == Tensor && merge >= 0; }
};

Val tensorVal(Value v) {
  Val out;
  out.v = v;
  return out;
}

Val constVal(std::shared_ptr<Const> c) {
  Val out;
  out.kind = Val::Constant;
  out.c = std::move(c);
  return out;
}

llvm::SmallVector<int64_t> shapeOf(Value v) {
  return llvm::SmallVector<int64_t>(cast<RankedTensorType>(v.getType()).getShape());
}

/// Merges logical axes m and m + 1 of `shape`.
llvm::SmallVector<int64_t> mergedShape(llvm::ArrayRef<int64_t> shape, int m) {
  llvm::SmallVector<int64_t> out;
  for (int k = 0; k < int(shape.size()); ++k) {
    if (k == m + 1)
      continue;
    if (k == m) {
      int64_t a = shape[m], b = shape[m + 1];
      out.push_back(a == kDyn || b == kDyn ? kDyn : a * b);
    } else {
      out.push_back(shape[k]);
    }
  }
  return out;
}

/// Whether a reshape may merge axes m, m+1: tfm.reshape keeps the dynamic
/// dims in order, so at most one of the two may be dynamic, and then the
/// other must be 1.
bool canMerge(llvm::ArrayRef<int64_t> shape, int m) {
  int64_t a = shape[m], b = shape[m + 1], ab;
  if (a != kDyn && b != kDyn)
    return !llvm::MulOverflow(a, b, ab);
  return a == 1 || b == 1;
}

/// "node 'name' (Op)", or for an unnamed node (exporters often leave names
/// empty) "node (Op) producing 'output'".
std::string nodeLabel(const onnx::NodeProto &n) {
  if (!n.name().empty())
    return "node '" + n.name() + "' (" + n.op_type() + ")";
  return "node (" + n.op_type() + ") producing '" +
         (n.output_size() ? n.output(0) : std::string()) + "'";
}

/// A node's k-th input name, or "" when it has fewer inputs: the patterns
/// look at nodes before anything checks their inputs.
const std::string &inputName(const onnx::NodeProto &n, int k) {
  static const std::string none;
  return k < n.input_size() ? n.input(k) : none;
}

llvm::StringRef onnxTypeName(int t) {
  if (onnx::TensorProto::DataType_IsValid(t))
    return onnx::TensorProto::DataType_Name(onnx::TensorProto::DataType(t));
  return "unknown";
}

/// ONNX's 16-bit float formats: FLOAT16 (IEEE half) and BFLOAT16. Constants
/// hold them widened to float, which is exact, and narrow them back when
/// they are stored.
const llvm::fltSemantics &semantics16(int onnxType) {
  return onnxType == onnx::TensorProto::BFLOAT16 ? APFloat::BFloat()
                                                 : APFloat::IEEEhalf();
}
float widen16(int onnxType, uint16_t bits) {
  return APFloat(semantics16(onnxType), APInt(16, bits)).convertToFloat();
}
APFloat narrow16(int onnxType, float value) {
  APFloat v(value);
  bool losesInfo;
  v.convert(semantics16(onnxType), APFloat::rmNearestTiesToEven, &losesInfo);
  return v;
}

//===----------------------------------------------------------------------===//
// The importer
//===----------------------------------------------------------------------===//

class Importer {
public:
  Importer(MLIRContext &context, const onnx::ModelProto &model,
           std::string folder, int64_t opset, std::string &diagnostics)
      : b(&context), model(model), graph(model.graph()),
        folder(std::move(folder)), opset(opset), diagnostics(diagnostics) {}

  /// Call on a thread with kImportStackBytes of stack.
  llvm::Expected<OwningOpRef<ModuleOp>> run();
  std::vector<SafeTensorData> takeWeights() { return std::move(weights); }

private:
  // Errors ----------------------------------------------------------------
  LogicalResult fail(const llvm::Twine &message) {
    if (!error)
      error = message.str();
    return failure();
  }
  LogicalResult fail(const onnx::NodeProto &n, const llvm::Twine &message) {
    return fail(nodeLabel(n) + " (opset " + llvm::Twine(opset) + "): " + message);
  }
  /// After an op the verifier rejected: its message, captured, is the error.
  LogicalResult failBuild(const onnx::NodeProto &n) {
    std::string d = llvm::StringRef(diagnostics).rtrim().str();
    diagnostics.clear();
    return fail(n, d.empty() ? std::string("the op does not verify") : d);
  }

  // Values ----------------------------------------------------------------
  FailureOr<Val> get(const std::string &name);
  FailureOr<Val> getInput(const onnx::NodeProto &n, int k) {
    if (k >= n.input_size() || n.input(k).empty()) {
      (void)fail(n, "input " + llvm::Twine(k) + " is missing");
      return failure();
    }
    const std::string &name = n.input(k);
    if (!values.count(name) && !initializers.count(name) && !producer.count(name)) {
      (void)fail(n, "input " + llvm::Twine(k) + " '" + name +
                        "' is neither a graph input, an initializer nor the "
                        "output of a node");
      return failure();
    }
    return get(name);
  }
  bool hasInput(const onnx::NodeProto &n, int k) {
    return k < n.input_size() && !n.input(k).empty();
  }
  LogicalResult convert(const onnx::NodeProto &n);
  LogicalResult convertNode(const onnx::NodeProto &n);
  FailureOr<std::shared_ptr<Const>> readTensor(const onnx::TensorProto &t,
                                               llvm::StringRef what);
  FailureOr<llvm::StringRef> externalData(const onnx::TensorProto &t,
                                          llvm::StringRef what, uint64_t bytes);

  /// The value as a tfm tensor (reshaped to rank 5 if lazy).
  FailureOr<Value> tensor(const Val &val, const onnx::NodeProto &n);
  FailureOr<Value> tensorOf(const onnx::NodeProto &n, int k) {
    FailureOr<Val> v = getInput(n, k);
    if (failed(v))
      return failure();
    return tensor(*v, n);
  }
  /// Input k as a tensor, or a null Value when the node leaves it out.
  FailureOr<Value> optionalTensorOf(const onnx::NodeProto &n, int k) {
    if (!hasInput(n, k))
      return Value();
    return tensorOf(n, k);
  }
  FailureOr<Value> weight(const Const &c, const onnx::NodeProto &n);
  FailureOr<Value> constant(const Const &c, const onnx::NodeProto &n);
  /// A constant input's data (initializer, Constant, folded shape).
  FailureOr<std::shared_ptr<Const>> constInput(const onnx::NodeProto &n, int k);
  /// The one-element constant `name` holds (an initializer or a Constant
  /// node's), or null.
  std::shared_ptr<Const> scalarConstOf(const std::string &name);
  std::optional<double> scalarOf(const std::string &name) {
    std::shared_ptr<Const> c = scalarConstOf(name);
    return c ? std::optional<double>(c->at(0)) : std::nullopt;
  }
  std::optional<std::vector<int64_t>> intsOf(const onnx::NodeProto &n, int k);
  FailureOr<llvm::SmallVector<int64_t>> axesOf(const onnx::NodeProto &n, int input,
                                               int64_t rank, bool required);

  // Building ----------------------------------------------------------------
  Location loc(const onnx::NodeProto &n) {
    return NameLoc::get(b.getStringAttr(n.name().empty() ? n.op_type() : n.name()));
  }
  template <typename OpTy, typename... Args>
  FailureOr<Value> create(const onnx::NodeProto &n, Args &&...args) {
    FailureOr<OpTy> op =
        tfm::createChecked<OpTy>(b, loc(n), std::forward<Args>(args)...);
    if (failed(op)) {
      (void)failBuild(n);
      return failure();
    }
    return op->getResult();
  }
  /// Ops whose result type is given: checked by their verifier.
  FailureOr<Value> checked(const onnx::NodeProto &n, Operation *op) {
    if (failed(mlir::verify(op))) {
      (void)failBuild(n);
      op->erase();
      return failure();
    }
    return op->getResult(0);
  }
  FailureOr<Value> reshape(const onnx::NodeProto &n, Value x,
                           llvm::ArrayRef<int64_t> shape) {
    if (llvm::ArrayRef<int64_t>(shapeOf(x)) == shape)
      return x;
    auto type = RankedTensorType::get(
        shape, cast<RankedTensorType>(x.getType()).getElementType());
    return checked(n, b.create<tfm::ReshapeOp>(loc(n), type, x));
  }
  FailureOr<Value> castTo(const onnx::NodeProto &n, Value x, Type element) {
    auto type = cast<RankedTensorType>(x.getType());
    if (type.getElementType() == element)
      return x;
    return checked(n, b.create<tfm::CastOp>(loc(n), type.clone(element), x));
  }
  Value splat(Type element, double value, llvm::ArrayRef<int64_t> shape = {}) {
    auto type = RankedTensorType::get(shape, element);
    if (auto f = dyn_cast<FloatType>(element)) {
      // In the element's own format: an f32 APFloat in an f16 or bf16
      // tensor was stored as its low 16 bits (1.0 became 0).
      APFloat v(value);
      bool losesInfo;
      v.convert(f.getFloatSemantics(), APFloat::rmNearestTiesToEven, &losesInfo);
      return b.create<arith::ConstantOp>(b.getUnknownLoc(),
                                         DenseElementsAttr::get(type, v));
    }
    if (element.isInteger(1))
      return b.create<arith::ConstantOp>(b.getUnknownLoc(),
                                         DenseElementsAttr::get(type, value != 0));
    return b.create<arith::ConstantOp>(
        b.getUnknownLoc(),
        DenseElementsAttr::get(type, APInt(element.getIntOrFloatBitWidth(),
                                           int64_t(value), true)));
  }
  LogicalResult trilu(const onnx::NodeProto &n);
  FailureOr<Value> positions(const onnx::NodeProto &n, Value like, int64_t axis,
                             llvm::ArrayRef<int64_t> shape);
  LogicalResult attention(const onnx::NodeProto &n);
  LogicalResult rotaryEmbedding(const onnx::NodeProto &n);
  LogicalResult expand(const onnx::NodeProto &n);
  /// An exact all-ones tensor of like's float type (f32 when like is not a
  /// float), 1 on every axis but those in `axes`, where it is as long as
  /// that axis of `like` (dynamic or not): each factor is
  /// `arange == arange`, which is true for every integer.
  FailureOr<Value> onesLike(const onnx::NodeProto &n, Value like,
                            llvm::ArrayRef<int64_t> axes, int64_t rank);
  /// Makes a rank-5 tensor lazy at m (reshaping it to rank 4).
  FailureOr<Val> toLazy(const onnx::NodeProto &n, const Val &val, int m);
  /// A rank-5 result of a reshape: lazy where the merge is free or cheap.
  FailureOr<Val> reshapeResult(const onnx::NodeProto &n, Value physical,
                               llvm::ArrayRef<int64_t> logical);

  // Ops -----------------------------------------------------------------
  LogicalResult setOut(const onnx::NodeProto &n, FailureOr<Value> v) {
    if (failed(v))
      return failure();
    values[n.output(0)] = tensorVal(*v);
    return success();
  }
  LogicalResult setOut(const onnx::NodeProto &n, Val v, int k = 0) {
    values[n.output(k)] = std::move(v);
    return success();
  }
  LogicalResult binary(const onnx::NodeProto &n);
  LogicalResult matmul(const onnx::NodeProto &n);
  LogicalResult einsum(const onnx::NodeProto &n);
  LogicalResult reshapeLike(const onnx::NodeProto &n);
  LogicalResult transpose(const onnx::NodeProto &n);
  LogicalResult gather(const onnx::NodeProto &n);
  LogicalResult range(const onnx::NodeProto &n);
  LogicalResult concat(const onnx::NodeProto &n);
  LogicalResult split(const onnx::NodeProto &n);
  LogicalResult slice(const onnx::NodeProto &n);
  LogicalResult reduceSum(const onnx::NodeProto &n);
  LogicalResult logical(const onnx::NodeProto &n);
  /// Aligns two operands for an elementwise op or a matmul, either of which
  /// may be lazy; on success both are rank-4-lazy at `m` (or neither is and
  /// m = -1), and `logical` is the logical result shape (lazy only).
  LogicalResult align(const onnx::NodeProto &n, Val &a, Val &c, Value &x,
                      Value &y, int &m, bool matmulOperands);

  // Patterns: the functions exporters decompose ---------------------------
  const onnx::NodeProto *producerOf(const std::string &name) {
    auto it = producer.find(name);
    return it == producer.end() ? nullptr : it->second;
  }
  const onnx::NodeProto *producerIs(const std::string &name, llvm::StringRef type) {
    const onnx::NodeProto *p = producerOf(name);
    return p && p->op_type() == type ? p : nullptr;
  }
  /// Whether `name` is a one-element constant equal to `value` within
  /// `tolerance` (relative, absolute below 1) or, in a FLOAT16 or BFLOAT16
  /// constant, to `value` rounded to that format: an fp16 export of
  /// GELU's 0.044715 holds 0.04471.
  bool isScalar(const std::string &name, double value, double tolerance = 1e-6) {
    std::shared_ptr<Const> c = scalarConstOf(name);
    if (!c)
      return false;
    const double s = c->at(0);
    if (std::abs(s - value) <= tolerance * std::max(1.0, std::abs(value)))
      return true;
    return c->is16BitFloat() && s == narrow16(c->onnxType, float(value)).convertToDouble();
  }
  /// Binary node `p` with one input `x` and the other the scalar `value`:
  /// returns x's name (or "" when it does not match).
  std::string otherThanScalar(const onnx::NodeProto *p, double value,
                              bool commutative = true) {
    if (!p || p->input_size() != 2)
      return "";
    if (isScalar(p->input(1), value))
      return p->input(0);
    if (commutative && isScalar(p->input(0), value))
      return p->input(1);
    return "";
  }
  LogicalResult tryMulPatterns(const onnx::NodeProto &n, bool &matched);
  LogicalResult tryDivPatterns(const onnx::NodeProto &n, bool &matched);
  std::optional<std::pair<std::string, double>> matchRmsInverse(const std::string &name);

  OpBuilder b;
  const onnx::ModelProto &model;
  const onnx::GraphProto &graph;
  std::string folder;
  int64_t opset;
  std::string &diagnostics;
  std::optional<std::string> error;
  /// run()'s frame: how deep get() has recursed is measured from here.
  uintptr_t stackTop = 0;

  llvm::StringMap<const onnx::NodeProto *> producer;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  llvm::StringMap<Val> values;
  llvm::StringSet<> converting;
  /// Weight ops by blob key, and the blob's tensors in order of first use.
  llvm::StringMap<Value> weightOps;
  llvm::StringSet<> weightData;
  std::vector<SafeTensorData> weights;
  /// External data files, read once each.
  llvm::StringMap<std::unique_ptr<llvm::MemoryBuffer>> externalFiles;
};

//===----------------------------------------------------------------------===//
// Tensors, initializers and external data
//===----------------------------------------------------------------------===//

FailureOr<llvm::StringRef> Importer::externalData(const onnx::TensorProto &t,
                                                  llvm::StringRef what,
                                                  uint64_t bytes) {
  std::string location;
  uint64_t offset = 0;
  std::optional<uint64_t> length;
  for (const onnx::StringStringEntryProto &e : t.external_data()) {
    auto number = [&](uint64_t &out) -> LogicalResult {
      if (llvm::StringRef(e.value()).getAsInteger(10, out))
        return fail(what + ": external_data '" + e.key() +
                    "' is not a non-negative integer: '" + e.value() + "'");
      return success();
    };
    if (e.key() == "location") {
      location = e.value();
    } else if (e.key() == "offset") {
      if (failed(number(offset)))
        return failure();
    } else if (e.key() == "length") {
      uint64_t l;
      if (failed(number(l)))
        return failure();
      length = l;
    }
  }
  if (location.empty())
    return fail(what + ": external data without a 'location'"), failure();
  // The location is relative to the model's folder and may not leave it.
  if (path::is_absolute(location) ||
      llvm::any_of(llvm::make_range(path::begin(location), path::end(location)),
                   [](llvm::StringRef part) { return part == ".."; }))
    return fail(what + ": external data location '" + location +
                "' must be a path inside the model's folder"),
           failure();
  llvm::SmallString<256> file(folder);
  path::append(file, location);
  auto &buffer = externalFiles[file];
  if (!buffer) {
    auto read = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
    if (!read)
      return fail(what + ": cannot read external data file '" + file +
                  "': " + read.getError().message()),
             failure();
    buffer = std::move(*read);
  }
  uint64_t size = buffer->getBufferSize();
  if (length && *length != bytes)
    return fail(llvm::formatv("{0}: external data length {1} does not match "
                              "its type and shape ({2} bytes)",
                              what, *length, bytes)),
           failure();
  if (offset > size || bytes > size - offset)
    return fail(llvm::formatv("{0}: external data [{1}, {1} + {2}) lies beyond "
                              "the end of '{3}' ({4} bytes)",
                              what, offset, bytes, file, size)),
           failure();
  return buffer->getBuffer().substr(offset, bytes);
}

FailureOr<std::shared_ptr<Const>> Importer::readTensor(const onnx::TensorProto &t,
                                                       llvm::StringRef what) {
  auto c = std::make_shared<Const>();
  int type = t.data_type();
  int64_t elementBytes;
  switch (type) {
  case onnx::TensorProto::FLOAT:
  case onnx::TensorProto::INT32:
    elementBytes = 4;
    break;
  case onnx::TensorProto::INT64:
    elementBytes = 8;
    break;
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    elementBytes = 2;
    break;
  case onnx::TensorProto::BOOL:
    elementBytes = 1;
    break;
  default:
    return fail(what + ": data type " + onnxTypeName(type) +
                " is not supported (FLOAT, FLOAT16, BFLOAT16, INT64, INT32, "
                "BOOL)"),
           failure();
  }
  c->onnxType = type;
  uint64_t numel = 1;
  for (int64_t d : t.dims()) {
    if (d < 0 || d > (int64_t(1) << 40) || (d && numel > (uint64_t(1) << 40) / d))
      return fail(what + ": dims " + llvm::formatv("{0:$[, ]}",
                                                   llvm::make_range(t.dims().begin(),
                                                                    t.dims().end()))
                                         .str() +
                  " are negative or too large"),
             failure();
    numel *= d;
    c->shape.push_back(d);
  }
  uint64_t bytes = numel * elementBytes;
  llvm::StringRef raw;
  bool haveRaw = false;
  if (t.data_location() == onnx::TensorProto::EXTERNAL) {
    FailureOr<llvm::StringRef> data = externalData(t, what, bytes);
    if (failed(data))
      return failure();
    raw = *data;
    haveRaw = true;
  } else if (t.has_raw_data()) {
    raw = t.raw_data();
    haveRaw = true;
    if (raw.size() != bytes)
      return fail(llvm::formatv("{0}: raw_data holds {1} bytes, but its type "
                                "and shape need {2}",
                                what, raw.size(), bytes)),
             failure();
  }
  auto countMismatch = [&](size_t got) {
    return fail(llvm::formatv("{0}: holds {1} values, but its shape needs {2}",
                              what, got, numel)),
           failure();
  };
  // The typed fields' counts are checked before anything is allocated: the
  // dims alone may ask for 2^40 elements. FLOAT16 and BFLOAT16 keep their
  // bits in int32_data, one value each.
  if (!haveRaw) {
    int got = type == onnx::TensorProto::FLOAT   ? t.float_data_size()
              : type == onnx::TensorProto::INT64 ? t.int64_data_size()
                                                 : t.int32_data_size();
    if (uint64_t(got) != numel)
      return countMismatch(got);
  }
  if (c->is16BitFloat()) {
    c->f.resize(numel);
    for (uint64_t k = 0; k < numel; ++k) {
      uint16_t bits;
      if (haveRaw) {
        std::memcpy(&bits, raw.data() + 2 * k, 2);
      } else {
        int32_t v = t.int32_data(int(k));
        if (v < 0 || v > 0xffff)
          return fail(llvm::formatv("{0}: value {1} holds {2}, which is not "
                                    "16 bits of {3}",
                                    what, k, v, onnxTypeName(type))),
                 failure();
        bits = uint16_t(v);
      }
      c->f[k] = widen16(type, bits);
    }
    return c;
  }
  if (type == onnx::TensorProto::FLOAT) {
    c->f.resize(numel);
    if (!haveRaw)
      std::copy(t.float_data().begin(), t.float_data().end(), c->f.begin());
    else if (bytes)
      std::memcpy(c->f.data(), raw.data(), bytes);
    return c;
  }
  c->i.resize(numel);
  if (haveRaw) {
    for (uint64_t k = 0; k < numel; ++k) {
      const char *p = raw.data() + k * elementBytes;
      if (elementBytes == 8) {
        int64_t v;
        std::memcpy(&v, p, 8);
        c->i[k] = v;
      } else if (elementBytes == 4) {
        int32_t v;
        std::memcpy(&v, p, 4);
        c->i[k] = v;
      } else {
        c->i[k] = *p != 0;
      }
    }
  } else if (type == onnx::TensorProto::INT64) {
    std::copy(t.int64_data().begin(), t.int64_data().end(), c->i.begin());
  } else {
    std::copy(t.int32_data().begin(), t.int32_data().end(), c->i.begin());
  }
  return c;
}

Type elementTypeOf(Builder &b, int onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    return Type();
  }
}

FailureOr<Value> Importer::weight(const Const &c, const onnx::NodeProto &n) {
  std::string key = c.transposed ? c.init + "^T" : c.init;
  if (Value existing = weightOps.lookup(key))
    return existing;
  Type element = elementTypeOf(b, c.onnxType);
  // c.shape is the IR's view; the file holds its reverse when transposed.
  llvm::SmallVector<int64_t> shape(c.shape);
  // At the top of the function, so that every later use is dominated.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(b.getInsertionBlock());
  auto op = b.create<tfm::WeightOp>(NameLoc::get(b.getStringAttr(c.init)),
                                    RankedTensorType::get(shape, element),
                                    b.getStringAttr(c.init), tfm::InitKindAttr(),
                                    FloatAttr(),
                                    c.transposed ? b.getUnitAttr() : UnitAttr(),
                                    /*part_sizes=*/DenseI64ArrayAttr());
  weightOps[key] = op.getResult();
  if (weightData.insert(c.init).second) {
    SafeTensorData t;
    t.name = c.init;
    t.shape.assign(c.shape.begin(), c.shape.end());
    if (c.transposed)
      std::reverse(t.shape.begin(), t.shape.end());
    if (c.is16BitFloat()) {
      t.dtype = c.onnxType == onnx::TensorProto::FLOAT16 ? ScalarType::F16
                                                         : ScalarType::BF16;
      t.bytes.resize(c.f.size() * 2);
      for (size_t k = 0; k < c.f.size(); ++k) {
        uint16_t bits = uint16_t(
            narrow16(c.onnxType, c.f[k]).bitcastToAPInt().getZExtValue());
        std::memcpy(t.bytes.data() + 2 * k, &bits, 2);
      }
    } else if (c.isFloat()) {
      t.dtype = ScalarType::F32;
      t.bytes.resize(c.f.size() * 4);
      if (!t.bytes.empty())
        std::memcpy(t.bytes.data(), c.f.data(), t.bytes.size());
    } else if (c.onnxType == onnx::TensorProto::BOOL) {
      t.dtype = ScalarType::Bool;
      for (int64_t v : c.i)
        t.bytes.push_back(v != 0);
    } else if (c.onnxType == onnx::TensorProto::INT32) {
      t.dtype = ScalarType::I32;
      t.bytes.resize(c.i.size() * 4);
      for (size_t k = 0; k < c.i.size(); ++k) {
        int32_t v = int32_t(c.i[k]);
        std::memcpy(t.bytes.data() + 4 * k, &v, 4);
      }
    } else {
      t.dtype = ScalarType::I64;
      t.bytes.resize(c.i.size() * 8);
      if (!t.bytes.empty())
        std::memcpy(t.bytes.data(), c.i.data(), t.bytes.size());
    }
    weights.push_back(std::move(t));
  }
  (void)n;
  return op.getResult();
}

FailureOr<Value> Importer::constant(const Const &c, const onnx::NodeProto &n) {
  Type element = elementTypeOf(b, c.onnxType);
  if (c.numel() == 1) {
    Value s = splat(element, c.at(0), c.shape);
    if (c.transposed)
      return s; // a 1x1 transpose is itself
    return s;
  }
  if (!c.init.empty())
    return weight(c, n);
  auto type = RankedTensorType::get(c.shape, element);
  DenseElementsAttr attr;
  if (c.is16BitFloat()) {
    llvm::SmallVector<APFloat> values;
    values.reserve(c.f.size());
    for (float v : c.f)
      values.push_back(narrow16(c.onnxType, v));
    attr = DenseElementsAttr::get(type, values);
  } else if (c.isFloat())
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<float>(c.f));
  else if (c.onnxType == onnx::TensorProto::BOOL) {
    llvm::SmallVector<bool> bits;
    for (int64_t v : c.i)
      bits.push_back(v != 0);
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<bool>(bits));
  } else if (c.onnxType == onnx::TensorProto::INT32) {
    llvm::SmallVector<int32_t> v(c.i.begin(), c.i.end());
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<int32_t>(v));
  } else {
    attr = DenseElementsAttr::get(type, llvm::ArrayRef<int64_t>(c.i));
  }
  return Value(b.create<arith::ConstantOp>(loc(n), attr));
}

FailureOr<Value> Importer::tensor(const Val &val, const onnx::NodeProto &n) {
  switch (val.kind) {
  case Val::Tensor:
    if (val.isLazy())
      return reshape(n, val.v, val.logical);
    return val.v;
  case Val::Constant:
    return constant(*val.c, n);
  case Val::Shape: {
    Const c;
    c.onnxType = onnx::TensorProto::INT64;
    if (!val.scalar)
      c.shape.push_back(val.dims.size());
    for (const Dim &d : val.dims) {
      if (d.size == kDyn)
        return fail(n, "a shape with a dynamic dimension is used as a tensor "
                       "(only Reshape, Range, Expand-free shape plumbing folds)"),
               failure();
      c.i.push_back(d.size);
    }
    return constant(c, n);
  }
  }
  return failure();
}

FailureOr<std::shared_ptr<Const>> Importer::constInput(const onnx::NodeProto &n, int k) {
  FailureOr<Val> v = getInput(n, k);
  if (failed(v))
    return failure();
  if (v->kind == Val::Constant)
    return v->c;
  if (v->kind == Val::Shape) {
    auto c = std::make_shared<Const>();
    c->onnxType = onnx::TensorProto::INT64;
    if (!v->scalar)
      c->shape.push_back(v->dims.size());
    for (const Dim &d : v->dims) {
      if (d.size == kDyn)
        return fail(n, "input " + llvm::Twine(k) + " ('" + n.input(k) +
                           "') depends on a dynamic dimension; expected a "
                           "constant"),
               failure();
      c->i.push_back(d.size);
    }
    return c;
  }
  return fail(n, "input " + llvm::Twine(k) + " ('" + n.input(k) +
                     "') must be a constant (an initializer, a Constant or "
                     "shape arithmetic on static dimensions)"),
         failure();
}

std::shared_ptr<Const> Importer::scalarConstOf(const std::string &name) {
  const onnx::TensorProto *t = initializers.lookup(name);
  if (!t) {
    const onnx::NodeProto *p = producerIs(name, "Constant");
    if (!p)
      return nullptr;
  } else if (!llvm::all_of(t->dims(), [](int64_t d) { return d == 1; })) {
    return nullptr;
  }
  FailureOr<Val> v = get(name);
  if (failed(v) || v->kind != Val::Constant || v->c->numel() != 1)
    return nullptr;
  return v->c;
}

std::optional<std::vector<int64_t>> Importer::intsOf(const onnx::NodeProto &n, int k) {
  FailureOr<std::shared_ptr<Const>> c = constInput(n, k);
  if (failed(c))
    return std::nullopt;
  if ((*c)->isFloat()) {
    (void)fail(n, "input " + llvm::Twine(k) + " must hold integers");
    return std::nullopt;
  }
  return (*c)->i;
}

const onnx::AttributeProto *findAttr(const onnx::NodeProto &n, llvm::StringRef name) {
  for (const onnx::AttributeProto &a : n.attribute())
    if (a.name() == name)
      return &a;
  return nullptr;
}
int64_t attrInt(const onnx::NodeProto &n, llvm::StringRef name, int64_t fallback) {
  const onnx::AttributeProto *a = findAttr(n, name);
  return a ? a->i() : fallback;
}
float attrFloat(const onnx::NodeProto &n, llvm::StringRef name, float fallback) {
  const onnx::AttributeProto *a = findAttr(n, name);
  return a ? a->f() : fallback;
}

FailureOr<llvm::SmallVector<int64_t>>
Importer::axesOf(const onnx::NodeProto &n, int input, int64_t rank, bool required) {
  std::vector<int64_t> raw;
  if (hasInput(n, input)) {
    std::optional<std::vector<int64_t>> v = intsOf(n, input);
    if (!v)
      return failure();
    raw = *v;
  } else if (const onnx::AttributeProto *a = findAttr(n, "axes")) {
    raw.assign(a->ints().begin(), a->ints().end());
  } else if (required) {
    return fail(n, "expected 'axes'"), failure();
  }
  llvm::SmallVector<int64_t> out;
  for (int64_t a : raw) {
    if (a < -rank || a >= rank)
      return fail(n, llvm::formatv("axis {0} is out of range for rank {1}", a, rank)),
             failure();
    out.push_back(a < 0 ? a + rank : a);
  }
  return out;
}

FailureOr<Val> Importer::get(const std::string &name) {
  auto it = values.find(name);
  if (it != values.end())
    return it->second;
  if (const onnx::TensorProto *t = initializers.lookup(name)) {
    FailureOr<std::shared_ptr<Const>> c = readTensor(*t, "initializer '" + name + "'");
    if (failed(c))
      return failure();
    (*c)->init = name;
    return values[name] = constVal(*c);
  }
  const onnx::NodeProto *n = producerOf(name);
  if (!n)
    return fail("value '" + name + "' is neither a graph input, an initializer "
                "nor the output of a node"),
           failure();
  if (!converting.insert(n->output(0)).second)
    return fail(nodeLabel(*n) + " depends on its own output '" + name +
                "': the graph has a cycle"),
           failure();
  if (stackTop - uintptr_t(__builtin_frame_address(0)) >
      kImportStackBytes - kImportStackReserve) {
    converting.erase(n->output(0));
    return fail(nodeLabel(*n) + ": the graph is too deep to import (a path of " +
                llvm::Twine(converting.size()) +
                " nodes leads to it, more than the importer's stack holds)"),
           failure();
  }
  LogicalResult r = convert(*n);
  converting.erase(n->output(0));
  if (failed(r))
    return failure();
  it = values.find(name);
  if (it == values.end())
    return fail(nodeLabel(*n) + ": output '" + name + "' was not produced"),
           failure();
  return it->second;
}

LogicalResult Importer::convert(const onnx::NodeProto &n) {
  if (!n.domain().empty() && n.domain() != "ai.onnx")
    return fail(n, "domain '" + n.domain() + "' is not supported (only the default ONNX domain)");
  return convertNode(n);
}

//===----------------------------------------------------------------------===//
// Lazy rank-5 tensors
//===----------------------------------------------------------------------===//

FailureOr<Val> Importer::toLazy(const onnx::NodeProto &n, const Val &val, int m) {
  FailureOr<Value> t = tensor(val, n);
  if (failed(t))
    return failure();
  llvm::SmallVector<int64_t> logical = shapeOf(*t);
  if (logical.size() != 5 || !canMerge(logical, m))
    return failure();
  FailureOr<Value> physical = reshape(n, *t, mergedShape(logical, m));
  if (failed(physical))
    return failure();
  Val out;
  out.v = *physical;
  out.merge = m;
  out.logical = logical;
  return out;
}

FailureOr<Val> Importer::reshapeResult(const onnx::NodeProto &n, Value physical,
                                       llvm::ArrayRef<int64_t> logical) {
  if (logical.size() == 5) {
    llvm::SmallVector<int64_t> in = shapeOf(physical);
    // The merge that leaves the input as it is, else axes 1 and 2 (where
    // exporters put [KV, R]), else any valid one.
    llvm::SmallVector<int> order = {1, 0, 2, 3};
    for (int m : order)
      if (canMerge(logical, m) && mergedShape(logical, m) == in) {
        Val out;
        out.v = physical;
        out.merge = m;
        out.logical.assign(logical.begin(), logical.end());
        return out;
      }
    for (int m : order)
      if (canMerge(logical, m)) {
        FailureOr<Value> r = reshape(n, physical, mergedShape(logical, m));
        if (failed(r))
          break;
        Val out;
        out.v = *r;
        out.merge = m;
        out.logical.assign(logical.begin(), logical.end());
        return out;
      }
  }
  FailureOr<Value> r = reshape(n, physical, logical);
  if (failed(r))
    return failure();
  return tensorVal(*r);
}

LogicalResult Importer::align(const onnx::NodeProto &n, Val &a, Val &c, Value &x,
                              Value &y, int &m, bool matmulOperands) {
  m = -1;
  auto plain = [&]() -> LogicalResult {
    FailureOr<Value> tx = tensor(a, n), ty = tensor(c, n);
    if (failed(tx) || failed(ty))
      return failure();
    x = *tx;
    y = *ty;
    return success();
  };
  if (!a.isLazy() && !c.isLazy())
    return plain();
  int mm = a.isLazy() ? a.merge : c.merge;
  // The other operand: lazy at the same axis, rank 5 and mergeable there, or
  // of low enough rank not to reach the merged axes.
  auto prepare = [&](Val &v) -> std::optional<Val> {
    if (v.isLazy())
      return v.merge == mm ? std::optional<Val>(v) : std::nullopt;
    FailureOr<Value> t = tensor(v, n);
    if (failed(t))
      return std::nullopt;
    int64_t rank = shapeOf(*t).size();
    if (!matmulOperands && rank <= 5 - (mm + 2))
      return tensorVal(*t);
    if (rank == 5) {
      FailureOr<Val> l = toLazy(n, tensorVal(*t), mm);
      if (succeeded(l))
        return *l;
    }
    return std::nullopt;
  };
  std::optional<Val> pa = prepare(a), pc = prepare(c);
  if (error)
    return failure();
  if (!pa || !pc || (matmulOperands && mm > 1))
    return plain();
  Value vx = pa->v, vy = pc->v;
  if (pa->isLazy() && pc->isLazy()) {
    int64_t a0 = pa->logical[mm], a1 = pa->logical[mm + 1];
    int64_t c0 = pc->logical[mm], c1 = pc->logical[mm + 1];
    auto repeat = [&](Value v, int64_t times) -> FailureOr<Value> {
      // Repeat before a transpose (k^T): fuse-attention looks for the
      // transpose of k right at the matmul.
      if (auto t = v.getDefiningOp<tfm::TransposeOp>()) {
        int64_t axis = t.getPermutation()[mm];
        FailureOr<Value> r = create<tfm::RepeatInterleaveOp>(
            n, t.getInput(), uint64_t(axis), uint64_t(times));
        if (failed(r))
          return failure();
        return create<tfm::TransposeOp>(n, *r, t.getPermutation());
      }
      return create<tfm::RepeatInterleaveOp>(n, v, uint64_t(mm), uint64_t(times));
    };
    if (a0 == c0 && a1 == c1) {
    } else if ((a0 == 1 && a1 == 1) || (c0 == 1 && c1 == 1)) {
      // A [1, 1] pair broadcasts as the merged 1 does.
    } else if (a0 == c0 && a0 != kDyn && c1 == 1 && a1 != kDyn && a1 > 1) {
      FailureOr<Value> r = repeat(vy, a1);
      if (failed(r))
        return failure();
      vy = *r;
    } else if (a0 == c0 && a0 != kDyn && a1 == 1 && c1 != kDyn && c1 > 1) {
      FailureOr<Value> r = repeat(vx, c1);
      if (failed(r))
        return failure();
      vx = *r;
    } else {
      return plain();
    }
  }
  x = vx;
  y = vy;
  m = mm;
  return success();
}

/// numpy's broadcast of two static-or-dynamic shapes.
llvm::SmallVector<int64_t> broadcastShapes(llvm::ArrayRef<int64_t> a,
                                           llvm::ArrayRef<int64_t> b) {
  size_t rank = std::max(a.size(), b.size());
  llvm::SmallVector<int64_t> out(rank);
  for (size_t k = 0; k < rank; ++k) {
    int64_t x = k < rank - a.size() ? 1 : a[k - (rank - a.size())];
    int64_t y = k < rank - b.size() ? 1 : b[k - (rank - b.size())];
    out[k] = x == 1 ? y : y == 1 ? x : x == kDyn ? y : x;
  }
  return out;
}

llvm::SmallVector<int64_t> logicalShape(const Val &v) {
  if (v.isLazy())
    return v.logical;
  if (v.kind == Val::Constant)
    return v.c->shape;
  if (v.kind == Val::Shape)
    return v.scalar ? llvm::SmallVector<int64_t>{}
                    : llvm::SmallVector<int64_t>{int64_t(v.dims.size())};
  return shapeOf(v.v);
}

//===----------------------------------------------------------------------===//
// Patterns
//===----------------------------------------------------------------------===//

/// `Reciprocal(Sqrt(Add(ReduceMean(Mul(x, x), [-1], keepdims), eps)))`:
/// returns x and eps.
std::optional<std::pair<std::string, double>>
Importer::matchRmsInverse(const std::string &name) {
  const onnx::NodeProto *rec = producerIs(name, "Reciprocal");
  const onnx::NodeProto *sq = rec ? producerIs(inputName(*rec, 0), "Sqrt") : nullptr;
  const onnx::NodeProto *add = sq ? producerIs(inputName(*sq, 0), "Add") : nullptr;
  if (!add || add->input_size() != 2)
    return std::nullopt;
  for (int k = 0; k < 2; ++k) {
    std::optional<double> eps = scalarOf(inputName(*add, 1 - k));
    const onnx::NodeProto *mean = producerIs(inputName(*add, k), "ReduceMean");
    if (!eps || !mean || attrInt(*mean, "keepdims", 1) != 1)
      continue;
    const onnx::NodeProto *sqr = producerIs(inputName(*mean, 0), "Mul");
    if (!sqr || inputName(*sqr, 0) != inputName(*sqr, 1))
      continue;
    // The axes: the last one only.
    std::vector<int64_t> axes;
    if (mean->input_size() > 1 && !mean->input(1).empty()) {
      std::optional<std::vector<int64_t>> v = intsOf(*mean, 1);
      if (!v)
        return std::nullopt;
      axes = *v;
    } else if (const onnx::AttributeProto *a = findAttr(*mean, "axes")) {
      axes.assign(a->ints().begin(), a->ints().end());
    }
    if (axes.size() != 1)
      continue;
    FailureOr<Val> x = get(inputName(*sqr, 0));
    if (failed(x))
      return std::nullopt;
    int64_t rank = logicalShape(*x).size();
    if (axes[0] != -1 && axes[0] != rank - 1)
      continue;
    return std::make_pair(inputName(*sqr, 0), *eps);
  }
  return std::nullopt;
}

LogicalResult Importer::tryMulPatterns(const onnx::NodeProto &n, bool &matched) {
  matched = false;
  const std::string &a = inputName(n, 0), &c = inputName(n, 1);
  for (int k = 0; k < 2; ++k) {
    const std::string &x = k ? c : a, &other = k ? a : c;
    // SiLU: x * Sigmoid(x).
    if (const onnx::NodeProto *s = producerIs(other, "Sigmoid"); s && inputName(*s, 0) == x) {
      matched = true;
      FailureOr<Val> xv = get(x);
      if (failed(xv))
        return failure();
      FailureOr<Value> t = tensor(*xv, n);
      if (failed(t))
        return failure();
      return setOut(n, create<tfm::SiluOp>(n, *t));
    }
    // RMSNorm without its weight: x * inverse(x), and with it:
    // w * (x * inverse(x)), w a rank-1 constant of x's last dimension.
    if (auto rms = matchRmsInverse(other); rms && rms->first == x) {
      FailureOr<Val> xv = get(x);
      if (failed(xv))
        return failure();
      FailureOr<Value> t = tensor(*xv, n);
      if (failed(t))
        return failure();
      llvm::SmallVector<int64_t> shape = shapeOf(*t);
      if (shape.empty() || shape.back() == kDyn)
        continue;
      int64_t d = shape.back();
      matched = true;
      Value ones = splat(cast<RankedTensorType>(t->getType()).getElementType(), 1.0, {d});
      return setOut(n, create<tfm::RmsNormOp>(n, *t, ones, Value(), APFloat(rms->second)));
    }
    if (const onnx::NodeProto *inner = producerIs(other, "Mul")) {
      for (int j = 0; j < 2; ++j) {
        auto rms = matchRmsInverse(inputName(*inner, 1 - j));
        if (!rms || rms->first != inputName(*inner, j))
          continue;
        FailureOr<Val> w = get(x);
        if (failed(w))
          return failure();
        if (w->kind != Val::Constant || w->c->shape.size() != 1)
          continue;
        FailureOr<Val> xv = get(inputName(*inner, j));
        if (failed(xv))
          return failure();
        FailureOr<Value> t = tensor(*xv, n), g = tensor(*w, n);
        if (failed(t) || failed(g))
          return failure();
        matched = true;
        return setOut(n, create<tfm::RmsNormOp>(n, *t, *g, Value(), APFloat(rms->second)));
      }
    }
  }
  // GELU: (x * 0.5) * (1 + Erf(x / sqrt 2)) and
  // (x * 0.5) * (1 + Tanh((x + x^3 * 0.044715) * sqrt(2 / pi))).
  for (int k = 0; k < 2; ++k) {
    const std::string &half = k ? c : a, &onePlus = k ? a : c;
    std::string x = otherThanScalar(producerIs(half, "Mul"), 0.5);
    if (x.empty())
      continue;
    const onnx::NodeProto *add = producerIs(onePlus, "Add");
    std::string inner = otherThanScalar(add, 1.0);
    if (inner.empty())
      continue;
    std::optional<tfm::GeluApproxKind> kind;
    if (const onnx::NodeProto *erf = producerIs(inner, "Erf")) {
      std::string y = otherThanScalar(producerIs(inputName(*erf, 0), "Div"),
                                      std::sqrt(2.0), /*commutative=*/false);
      if (y.empty())
        y = otherThanScalar(producerIs(inputName(*erf, 0), "Mul"), 1.0 / std::sqrt(2.0));
      if (y == x)
        kind = tfm::GeluApproxKind::none;
    } else if (const onnx::NodeProto *tanh = producerIs(inner, "Tanh")) {
      std::string sum = otherThanScalar(producerIs(inputName(*tanh, 0), "Mul"),
                                        std::sqrt(2.0 / M_PI));
      const onnx::NodeProto *s = producerIs(sum, "Add");
      if (s && s->input_size() == 2)
        for (int j = 0; j < 2; ++j) {
          std::string cube = otherThanScalar(producerIs(inputName(*s, 1 - j), "Mul"), 0.044715);
          const onnx::NodeProto *pow = producerIs(cube, "Pow");
          if (inputName(*s, j) == x && pow && inputName(*pow, 0) == x &&
              isScalar(inputName(*pow, 1), 3.0))
            kind = tfm::GeluApproxKind::tanh;
        }
    }
    if (!kind)
      continue;
    matched = true;
    FailureOr<Val> xv = get(x);
    if (failed(xv))
      return failure();
    FailureOr<Value> t = tensor(*xv, n);
    if (failed(t))
      return failure();
    return setOut(n, create<tfm::GeluOp>(n, *t, *kind));
  }
  return success();
}

LogicalResult Importer::tryDivPatterns(const onnx::NodeProto &n, bool &matched) {
  // sentence-transformers' Normalize: x / Max(ReduceL2(x, [-1], keepdims), eps).
  matched = false;
  const onnx::NodeProto *max = producerIs(inputName(n, 1), "Max");
  if (!max || max->input_size() != 2)
    return success();
  for (int k = 0; k < 2; ++k) {
    const onnx::NodeProto *l2 = producerIs(inputName(*max, k), "ReduceL2");
    std::optional<double> eps = scalarOf(inputName(*max, 1 - k));
    if (!l2 || !eps || inputName(*l2, 0) != inputName(n, 0) || attrInt(*l2, "keepdims", 1) != 1)
      continue;
    FailureOr<Val> xv = get(inputName(n, 0));
    if (failed(xv))
      return failure();
    FailureOr<Value> x = tensor(*xv, n);
    if (failed(x))
      return failure();
    llvm::SmallVector<int64_t> shape = shapeOf(*x);
    FailureOr<llvm::SmallVector<int64_t>> axes = axesOf(*l2, 1, shape.size(), true);
    if (failed(axes))
      return failure();
    if (shape.empty() || axes->size() != 1 ||
        (*axes)[0] != int64_t(shape.size()) - 1 || shape.back() == kDyn)
      continue;
    int64_t d = shape.back();
    // rms_norm(x, 1/sqrt(D), eps^2/D) = x / sqrt(|x|^2 + eps^2), which is
    // x / max(|x|, eps) but where |x| is within a few eps of eps (the
    // Hugging Face frontend's Normalize is the same op).
    matched = true;
    Type element = cast<RankedTensorType>(x->getType()).getElementType();
    Value gamma = splat(element, 1.0 / std::sqrt(double(d)), {d});
    return setOut(n, create<tfm::RmsNormOp>(n, *x, gamma, Value(),
                                            APFloat(*eps * *eps / double(d))));
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Ops
//===----------------------------------------------------------------------===//

LogicalResult Importer::binary(const onnx::NodeProto &n) {
  llvm::StringRef op = n.op_type();
  if (op == "Mul" || op == "Div") {
    bool matched = false;
    if (failed(op == "Mul" ? tryMulPatterns(n, matched) : tryDivPatterns(n, matched)))
      return failure();
    if (matched)
      return success();
  }
  if (op == "Pow") {
    std::optional<double> e = scalarOf(inputName(n, 1));
    if (!e || (*e != 1.0 && *e != 2.0))
      return fail(n, "only Pow(x, 2) and Pow(x, 1) are supported outside a "
                     "recognised GELU (tfm has no general power)");
    FailureOr<Val> x = getInput(n, 0);
    if (failed(x))
      return failure();
    if (*e == 1.0)
      return setOut(n, *x);
    FailureOr<Value> t = tensor(*x, n);
    if (failed(t))
      return failure();
    return setOut(n, create<tfm::MulOp>(n, *t, *t));
  }
  FailureOr<Val> a = getInput(n, 0), c = getInput(n, 1);
  if (failed(a) || failed(c))
    return failure();
  Value x, y;
  int m;
  if (failed(align(n, *a, *c, x, y, m, false)))
    return failure();
  FailureOr<Value> r = failure();
  if (op == "Add")
    r = create<tfm::AddOp>(n, x, y);
  else if (op == "Sub")
    r = create<tfm::SubOp>(n, x, y);
  else if (op == "Mul")
    r = create<tfm::MulOp>(n, x, y);
  else if (op == "Div")
    r = create<tfm::DivOp>(n, x, y);
  else if (op == "Max")
    r = create<tfm::MaximumOp>(n, x, y);
  else if (op == "Min")
    r = create<tfm::MinimumOp>(n, x, y);
  else {
    tfm::ComparePredicateKind p =
        op == "Equal"            ? tfm::ComparePredicateKind::eq
        : op == "Less"           ? tfm::ComparePredicateKind::lt
        : op == "LessOrEqual"    ? tfm::ComparePredicateKind::le
        : op == "Greater"        ? tfm::ComparePredicateKind::gt
                                 : tfm::ComparePredicateKind::ge;
    r = create<tfm::CompareOp>(n, x, y, p);
  }
  if (failed(r))
    return failure();
  if (m < 0)
    return setOut(n, *r);
  Val out;
  out.v = *r;
  out.merge = m;
  out.logical = broadcastShapes(logicalShape(*a), logicalShape(*c));
  return setOut(n, out);
}

LogicalResult Importer::matmul(const onnx::NodeProto &n) {
  FailureOr<Val> a = getInput(n, 0), c = getInput(n, 1);
  if (failed(a) || failed(c))
    return failure();
  // x W with W a 2-D initializer (or its transpose): tfm.linear, the weight
  // bound as the file holds it.
  if (c->kind == Val::Constant && !c->c->init.empty() && c->c->shape.size() == 2 &&
      c->c->isFloat() && !a->isLazy() && a->kind == Val::Tensor &&
      shapeOf(a->v).size() >= 2) {
    FailureOr<Value> w = weight(*c->c, n);
    if (failed(w))
      return failure();
    return setOut(n, create<tfm::LinearOp>(n, a->v, *w, Value()));
  }
  Value x, y;
  int m;
  if (failed(align(n, *a, *c, x, y, m, true)))
    return failure();
  llvm::SmallVector<int64_t> sx = shapeOf(x), sy = shapeOf(y);
  if (sx.size() != sy.size() || sx.size() < 2)
    return fail(n, "MatMul of " + shapeString(sx) + " and " + shapeString(sy) +
                       " is supported only with equal ranks >= 2, or with B a "
                       "2-D initializer");
  // Batch dimensions of 1 against N: tfm.matmul takes equal batch dims.
  for (size_t k = 0; k + 2 < sx.size(); ++k) {
    if (sx[k] == sy[k])
      continue;
    Value &one = sx[k] == 1 ? x : y;
    int64_t times = sx[k] == 1 ? sy[k] : sx[k];
    if ((sx[k] != 1 && sy[k] != 1) || times == kDyn ||
        !isa<FloatType>(cast<RankedTensorType>(one.getType()).getElementType()))
      continue; // left to the verifier, which names the dims
    FailureOr<Value> r =
        create<tfm::RepeatInterleaveOp>(n, one, uint64_t(k), uint64_t(times));
    if (failed(r))
      return failure();
    one = *r;
  }
  FailureOr<Value> r = create<tfm::MatmulOp>(n, x, y, false, false);
  if (failed(r))
    return failure();
  if (m < 0)
    return setOut(n, *r);
  Val out;
  out.v = *r;
  out.merge = m;
  llvm::SmallVector<int64_t> la = logicalShape(*a), lc = logicalShape(*c);
  out.logical = broadcastShapes(llvm::ArrayRef<int64_t>(la).drop_back(2),
                                llvm::ArrayRef<int64_t>(lc).drop_back(2));
  out.logical.push_back(la[la.size() - 2]);
  out.logical.push_back(lc.back());
  return setOut(n, out);
}

/// Einsum of one operand (a transpose) or two (a contraction). With two,
/// each index is a batch index (both operands and the output), a free index
/// of one operand (it and the output), or a contracted one (both operands,
/// not the output). Each operand is put in an order tfm.matmul reads,
/// [batch, free, contracted] or its transpose (no copy when the operand
/// already has one of them), the free and the contracted indices of each
/// merged into one axis, and one tfm.matmul multiplies them; its result is
/// reshaped and transposed to the output's order. x W with W a 2-D
/// initializer is a tfm.linear, as for MatMul.
LogicalResult Importer::einsum(const onnx::NodeProto &n) {
  const onnx::AttributeProto *attr = findAttr(n, "equation");
  if (!attr)
    return fail(n, "expected the attribute 'equation'");
  std::string equation;
  for (char ch : attr->s())
    if (!std::isspace(static_cast<unsigned char>(ch)))
      equation += ch;
  const int operands = n.input_size();
  if (operands != 1 && operands != 2)
    return fail(n, "Einsum of " + llvm::Twine(operands) +
                       " operands is not supported, only of one or two");
  llvm::StringRef lhs = equation, rhs;
  const bool explicitOutput = lhs.contains("->");
  if (explicitOutput)
    std::tie(lhs, rhs) = lhs.split("->");
  llvm::SmallVector<llvm::StringRef> terms;
  lhs.split(terms, ',');
  if (int(terms.size()) != operands)
    return fail(n, "equation '" + equation + "' has " + llvm::Twine(terms.size()) +
                       " operand terms for " + llvm::Twine(operands) + " inputs");

  // A term's letters by their code, with kEllipsis standing for "...".
  constexpr int kEllipsis = 256;
  auto parse = [&](llvm::StringRef term, llvm::SmallVector<int> &out) -> LogicalResult {
    for (size_t p = 0; p < term.size(); ++p) {
      if (term.substr(p).starts_with("...") && !llvm::is_contained(out, kEllipsis)) {
        out.push_back(kEllipsis);
        p += 2;
      } else if (std::isalpha(static_cast<unsigned char>(term[p]))) {
        out.push_back(static_cast<unsigned char>(term[p]));
      } else {
        return fail(n, "equation '" + equation + "': unexpected '" + term.substr(p, 1) +
                           "' in term '" + term + "'");
      }
    }
    return success();
  };
  llvm::SmallVector<Val> vals;
  llvm::SmallVector<llvm::SmallVector<int64_t>> shapes;
  llvm::SmallVector<llvm::SmallVector<int>> raw(operands);
  llvm::SmallVector<int> broadcastDims;
  for (int k = 0; k < operands; ++k) {
    FailureOr<Val> v = getInput(n, k);
    if (failed(v) || failed(parse(terms[k], raw[k])))
      return failure();
    vals.push_back(*v);
    shapes.push_back(v->kind == Val::Constant ? llvm::SmallVector<int64_t>(v->c->shape)
                                              : logicalShape(*v));
    const int rank = shapes[k].size();
    const bool ellipsis = llvm::is_contained(raw[k], kEllipsis);
    const int letters = int(raw[k].size()) - (ellipsis ? 1 : 0);
    if (rank < letters || (!ellipsis && rank != letters))
      return fail(n, "term '" + terms[k] + "' has " + llvm::Twine(letters) +
                         " indices for input " + llvm::Twine(k) + " of shape " +
                         shapeString(shapes[k]));
    broadcastDims.push_back(rank - letters);
  }
  // The "..." dims are right-aligned across the operands, as numpy aligns
  // them: the t-th of operand k's e is label kEllipsis + (maxE - e + t).
  const int maxBroadcast = *llvm::max_element(broadcastDims);
  auto labelName = [&](int l) {
    return l < kEllipsis ? "'" + std::string(1, char(l)) + "'"
                         : "'...' dim " + std::to_string(l - kEllipsis);
  };
  auto expand = [&](llvm::ArrayRef<int> term, int e, llvm::StringRef text,
                    llvm::SmallVector<int> &out) -> LogicalResult {
    for (int l : term) {
      if (l != kEllipsis) {
        if (llvm::is_contained(out, l))
          return fail(n, "term '" + text + "' repeats index " + labelName(l) +
                             " (a diagonal or trace), which is not supported");
        out.push_back(l);
        continue;
      }
      for (int t = 0; t < e; ++t)
        out.push_back(kEllipsis + maxBroadcast - e + t);
    }
    return success();
  };
  llvm::SmallVector<llvm::SmallVector<int>> labels(operands);
  for (int k = 0; k < operands; ++k)
    if (failed(expand(raw[k], broadcastDims[k], terms[k], labels[k])))
      return failure();
  // The output: as written, or numpy's implicit one ("..." first, then the
  // letters that appear once, in alphabetical order).
  llvm::SmallVector<int> out;
  if (explicitOutput) {
    llvm::SmallVector<int> rawOut;
    if (failed(parse(rhs, rawOut)) || failed(expand(rawOut, maxBroadcast, rhs, out)))
      return failure();
    for (int l : out)
      if (llvm::none_of(labels, [&](auto &ls) { return llvm::is_contained(ls, l); }))
        return fail(n, "output index " + labelName(l) + " of equation '" + equation +
                           "' is in no input");
  } else {
    for (int t = 0; t < maxBroadcast; ++t)
      out.push_back(kEllipsis + t);
    for (int l = 0; l < kEllipsis; ++l) {
      int count = 0;
      for (auto &ls : labels)
        count += llvm::count(ls, l);
      if (count == 1)
        out.push_back(l);
    }
  }
  auto sizeOf = [&](int k, int l) { return shapes[k][llvm::find(labels[k], l) - labels[k].begin()]; };
  auto permutationTo = [](llvm::ArrayRef<int> from, llvm::ArrayRef<int> to) {
    llvm::SmallVector<int64_t> perm;
    for (int l : to)
      perm.push_back(llvm::find(from, l) - from.begin());
    return perm;
  };
  auto isIdentity = [](llvm::ArrayRef<int64_t> perm) {
    for (size_t k = 0; k < perm.size(); ++k)
      if (perm[k] != int64_t(k))
        return false;
    return true;
  };
  // `value`, whose indices are `have`, transposed to `want`.
  auto transposeTo = [&](Value value, llvm::ArrayRef<int> have,
                         llvm::ArrayRef<int> want) -> FailureOr<Value> {
    llvm::SmallVector<int64_t> perm = permutationTo(have, want);
    if (isIdentity(perm))
      return value;
    return create<tfm::TransposeOp>(n, value, perm);
  };

  if (operands == 1) {
    for (int l : labels[0])
      if (!llvm::is_contained(out, l))
        return fail(n, "equation '" + equation + "' sums over index " + labelName(l) +
                           ", which is not supported (only a transpose of one operand is)");
    FailureOr<Value> x = tensor(vals[0], n);
    if (failed(x))
      return failure();
    return setOut(n, transposeTo(*x, labels[0], out));
  }

  // Two operands: the index classes, each in operand 0's order (then 1's).
  llvm::ArrayRef<int> la = labels[0], lb = labels[1];
  llvm::SmallVector<int> batch, freeA, freeB, contracted;
  for (int l : la) {
    const bool inB = llvm::is_contained(lb, l), inOut = llvm::is_contained(out, l);
    if (inB)
      (inOut ? batch : contracted).push_back(l);
    else if (inOut)
      freeA.push_back(l);
    else
      return fail(n, "equation '" + equation + "' sums over index " + labelName(l) +
                         " of input 0 alone, which is not supported");
  }
  for (int l : lb) {
    if (llvm::is_contained(la, l))
      continue;
    if (!llvm::is_contained(out, l))
      return fail(n, "equation '" + equation + "' sums over index " + labelName(l) +
                         " of input 1 alone, which is not supported");
    freeB.push_back(l);
  }
  for (int l : llvm::concat<int>(batch, contracted)) {
    int64_t a = sizeOf(0, l), c = sizeOf(1, l);
    if (a != kDyn && c != kDyn && a != c)
      return fail(n, "index " + labelName(l) + " of equation '" + equation + "' is " +
                         llvm::Twine(a) + " in input 0 of shape " + shapeString(shapes[0]) +
                         " and " + llvm::Twine(c) + " in input 1 of shape " +
                         shapeString(shapes[1]));
  }

  // x W: a linear layer over x's last index, the weight bound as stored.
  const Val &wv = vals[1];
  if (wv.kind == Val::Constant && !wv.c->init.empty() && wv.c->isFloat() && lb.size() == 2 &&
      batch.empty() && contracted.size() == 1 && freeB.size() == 1 && la.size() >= 2 &&
      la.back() == contracted[0] && vals[0].kind == Val::Tensor && !vals[0].isLazy()) {
    Const w = *wv.c;
    if (lb[0] != contracted[0]) { // [N, K]: the weight's transpose
      w.transposed = !w.transposed;
      std::swap(w.shape[0], w.shape[1]);
    }
    FailureOr<Value> weightValue = weight(w, n);
    if (failed(weightValue))
      return failure();
    FailureOr<Value> y = create<tfm::LinearOp>(n, vals[0].v, *weightValue, Value());
    if (failed(y))
      return failure();
    llvm::SmallVector<int> have(la.drop_back());
    have.push_back(freeB[0]);
    return setOut(n, transposeTo(*y, have, out));
  }

  // The product of a group's sizes: 1 for none; dynamic only alone (a
  // reshape keeps dynamic dims in order and cannot merge one with others).
  auto groupSize = [&](int k, llvm::ArrayRef<int> group) -> FailureOr<int64_t> {
    if (group.size() == 1)
      return sizeOf(k, group[0]);
    int64_t size = 1;
    for (int l : group) {
      int64_t d = sizeOf(k, l);
      if (d == kDyn)
        return fail(n, "equation '" + equation + "' merges index " + labelName(l) +
                           ", whose size is dynamic, with others into one matmul axis; "
                           "that is not supported"),
               failure();
      size *= d;
    }
    return size;
  };
  // Operand k as [batch, rows, cols] or, with `transposed`, [batch, cols,
  // rows]: whichever it already is, else the first.
  auto arrange = [&](int k, llvm::ArrayRef<int> rows, llvm::ArrayRef<int> cols,
                     bool &transposed) -> FailureOr<Value> {
    FailureOr<Value> x = tensor(vals[k], n);
    FailureOr<int64_t> r = groupSize(k, rows), c = groupSize(k, cols);
    if (failed(x) || failed(r) || failed(c))
      return failure();
    llvm::SmallVector<int> straight(batch), swapped(batch);
    straight.append(rows.begin(), rows.end());
    straight.append(cols.begin(), cols.end());
    swapped.append(cols.begin(), cols.end());
    swapped.append(rows.begin(), rows.end());
    transposed = isIdentity(permutationTo(labels[k], swapped)) &&
                 !isIdentity(permutationTo(labels[k], straight));
    FailureOr<Value> t = transposeTo(*x, labels[k], transposed ? swapped : straight);
    if (failed(t))
      return failure();
    llvm::SmallVector<int64_t> shape;
    for (int l : batch)
      shape.push_back(sizeOf(k, l));
    shape.push_back(transposed ? *c : *r);
    shape.push_back(transposed ? *r : *c);
    return reshape(n, *t, shape);
  };
  bool transA = false, transB = false;
  FailureOr<Value> x = arrange(0, freeA, contracted, transA);
  FailureOr<Value> y = arrange(1, contracted, freeB, transB);
  if (failed(x) || failed(y))
    return failure();
  FailureOr<Value> product = create<tfm::MatmulOp>(n, *x, *y, transA, transB);
  if (failed(product))
    return failure();
  // [batch, rows of 0, cols of 1] with each group's indices apart again.
  llvm::SmallVector<int> have(batch);
  llvm::SmallVector<int64_t> shape = shapeOf(*product);
  shape.resize(batch.size());
  for (int l : freeA) {
    have.push_back(l);
    shape.push_back(sizeOf(0, l));
  }
  for (int l : freeB) {
    have.push_back(l);
    shape.push_back(sizeOf(1, l));
  }
  FailureOr<Value> split = reshape(n, *product, shape);
  if (failed(split))
    return failure();
  return setOut(n, transposeTo(*split, have, out));
}

/// Reshape, Unsqueeze, Squeeze, Flatten.
LogicalResult Importer::reshapeLike(const onnx::NodeProto &n) {
  llvm::StringRef op = n.op_type();
  FailureOr<Val> in = getInput(n, 0);
  if (failed(in))
    return failure();
  llvm::SmallVector<int64_t> shape = logicalShape(*in);
  llvm::SmallVector<Dim> dims; // of the input, for shape values
  if (in->kind == Val::Shape) {
    dims = in->dims;
    shape = in->scalar ? llvm::SmallVector<int64_t>{} : llvm::SmallVector<int64_t>{int64_t(dims.size())};
  }
  int64_t rank = shape.size();
  llvm::SmallVector<int64_t> out;
  if (op == "Reshape") {
    FailureOr<Val> target = getInput(n, 1);
    if (failed(target))
      return failure();
    llvm::SmallVector<int64_t> want;
    if (target->kind == Val::Shape) {
      for (const Dim &d : target->dims)
        want.push_back(d.size == kDyn ? -2 : d.size); // -2: a dynamic dim
    } else if (target->kind == Val::Constant && !target->c->isFloat()) {
      want.assign(target->c->i.begin(), target->c->i.end());
    } else {
      return fail(n, "the target shape must be a constant or shape arithmetic");
    }
    bool allowZero = attrInt(n, "allowzero", 0) != 0;
    int inferred = -1;
    int64_t known = 1;
    bool knownDyn = false;
    for (auto [k, w] : llvm::enumerate(want)) {
      int64_t d;
      if (w == 0 && !allowZero) {
        if (int64_t(k) >= rank)
          return fail(n, "target dim " + llvm::Twine(k) + " copies a dimension the "
                         "input " + shapeString(shape) + " lacks");
        d = shape[k];
      } else if (w == -1) {
        if (inferred >= 0)
          return fail(n, "the target shape has two -1 dimensions");
        inferred = k;
        out.push_back(kDyn);
        continue;
      } else if (w == -2) {
        d = kDyn;
      } else if (w < 0) {
        return fail(n, "target dim " + llvm::Twine(k) + " is " + llvm::Twine(w));
      } else {
        d = w;
      }
      if (d == kDyn)
        knownDyn = true;
      else if (llvm::MulOverflow(known, d, known))
        return fail(n, "the target shape " + shapeString(want) +
                           " has more elements than int64 counts");
      out.push_back(d);
    }
    if (inferred >= 0) {
      int64_t total = 1;
      bool dyn = false;
      for (int64_t d : shape)
        if (d == kDyn)
          dyn = true;
        else if (llvm::MulOverflow(total, d, total))
          return fail(n, "the input shape " + shapeString(shape) +
                             " has more elements than int64 counts");
      if (!dyn && !knownDyn) {
        if (known == 0 || total % known)
          return fail(n, "cannot reshape " + shapeString(shape) + " to " +
                             shapeString(want));
        out[inferred] = total / known;
      }
    }
  } else if (op == "Unsqueeze") {
    // The axes index the result, whose rank is rank + their count.
    int64_t count = 0;
    if (hasInput(n, 1)) {
      std::optional<std::vector<int64_t>> raw = intsOf(n, 1);
      if (!raw)
        return failure();
      count = raw->size();
    } else if (const onnx::AttributeProto *a = findAttr(n, "axes")) {
      count = a->ints_size();
    }
    int64_t outRank = rank + count;
    FailureOr<llvm::SmallVector<int64_t>> axes = axesOf(n, 1, outRank, true);
    if (failed(axes))
      return failure();
    llvm::SmallVector<bool> inserted(outRank, false);
    for (int64_t a : *axes) {
      // Twice would leave fewer 1s than axes, and read past `shape`.
      if (inserted[a])
        return fail(n, "axis " + llvm::Twine(a) + " is given twice");
      inserted[a] = true;
    }
    for (int64_t k = 0, j = 0; k < outRank; ++k)
      out.push_back(inserted[k] ? 1 : shape[j++]);
  } else if (op == "Squeeze") {
    FailureOr<llvm::SmallVector<int64_t>> axes = axesOf(n, 1, rank, false);
    if (failed(axes))
      return failure();
    for (int64_t k = 0; k < rank; ++k) {
      bool drop = axes->empty() ? shape[k] == 1 : llvm::is_contained(*axes, k);
      if (drop && shape[k] != 1)
        return fail(n, "cannot squeeze axis " + llvm::Twine(k) + " of " +
                           shapeString(shape) + " (not 1)");
      if (!drop)
        out.push_back(shape[k]);
    }
  } else { // Flatten
    int64_t axis = attrInt(n, "axis", 1);
    if (axis < -rank || axis > rank)
      return fail(n, "axis " + llvm::Twine(axis) + " is out of range for rank " +
                         llvm::Twine(rank));
    if (axis < 0)
      axis += rank;
    int64_t lead = 1, tail = 1;
    for (int64_t k = 0; k < rank; ++k) {
      int64_t &p = k < axis ? lead : tail;
      if (p == kDyn || shape[k] == kDyn)
        p = kDyn;
      else if (llvm::MulOverflow(p, shape[k], p))
        return fail(n, "flattening " + shapeString(shape) +
                           " gives a dim larger than int64 counts");
    }
    out = {lead, tail};
  }
  // Shape values (and small constants) reshape on the host.
  if (in->kind == Val::Shape) {
    if (out.size() > 1)
      return fail(n, "a shape value reshaped to rank " + llvm::Twine(out.size()));
    Val v = *in;
    v.scalar = out.empty();
    return setOut(n, v);
  }
  if (in->kind == Val::Constant && in->c->init.empty()) {
    Val v = *in;
    v.c = std::make_shared<Const>(*in->c);
    v.c->shape.assign(out.begin(), out.end());
    if (v.c->numel() != in->c->numel())
      return fail(n, "cannot reshape " + shapeString(shape) + " to " + shapeString(out));
    return setOut(n, v);
  }
  Value physical;
  if (in->isLazy()) {
    physical = in->v;
  } else {
    FailureOr<Value> t = tensor(*in, n);
    if (failed(t))
      return failure();
    physical = *t;
  }
  FailureOr<Val> r = reshapeResult(n, physical, out);
  if (failed(r))
    return failure();
  return setOut(n, *r);
}

LogicalResult Importer::transpose(const onnx::NodeProto &n) {
  FailureOr<Val> in = getInput(n, 0);
  if (failed(in))
    return failure();
  llvm::SmallVector<int64_t> shape = logicalShape(*in);
  int64_t rank = shape.size();
  llvm::SmallVector<int64_t> perm;
  if (const onnx::AttributeProto *a = findAttr(n, "perm"))
    perm.assign(a->ints().begin(), a->ints().end());
  else
    for (int64_t k = rank - 1; k >= 0; --k)
      perm.push_back(k);
  // A transposed 2-D initializer stays one, for MatMul to bind as
  // tfm.weight {transpose}.
  if (in->kind == Val::Constant && !in->c->init.empty() && rank == 2 &&
      perm == llvm::SmallVector<int64_t>{1, 0}) {
    Val v = *in;
    v.c = std::make_shared<Const>(*in->c);
    v.c->transposed = !v.c->transposed;
    std::swap(v.c->shape[0], v.c->shape[1]);
    return setOut(n, v);
  }
  if (in->isLazy()) {
    int m = in->merge;
    auto p = llvm::find(perm, int64_t(m));
    if (p != perm.end() && p + 1 != perm.end() && *(p + 1) == m + 1) {
      llvm::SmallVector<int64_t> physicalPerm;
      for (int64_t l : perm)
        if (l != m + 1)
          physicalPerm.push_back(l <= m ? l : l - 1);
      FailureOr<Value> r = create<tfm::TransposeOp>(n, in->v, physicalPerm);
      if (failed(r))
        return failure();
      Val out;
      out.v = *r;
      out.merge = int(p - perm.begin());
      for (int64_t l : perm)
        out.logical.push_back(shape[l]);
      return setOut(n, out);
    }
  }
  FailureOr<Value> t = tensor(*in, n);
  if (failed(t))
    return failure();
  return setOut(n, create<tfm::TransposeOp>(n, *t, perm));
}

LogicalResult Importer::gather(const onnx::NodeProto &n) {
  FailureOr<Val> data = getInput(n, 0), idx = getInput(n, 1);
  if (failed(data) || failed(idx))
    return failure();
  int64_t rank = logicalShape(*data).size();
  int64_t axis = attrInt(n, "axis", 0);
  if (axis < -rank || axis >= rank)
    return fail(n, "axis " + llvm::Twine(axis) + " is out of range for rank " +
                       llvm::Twine(rank));
  if (axis < 0)
    axis += rank;
  // Shape plumbing: picking dims of a shape.
  if (data->kind == Val::Shape && idx->kind == Val::Constant && !idx->c->isFloat()) {
    Val out;
    out.kind = Val::Shape;
    out.scalar = idx->c->shape.empty();
    if (idx->c->shape.size() > 1)
      return fail(n, "indices of rank > 1 into a shape");
    for (int64_t k : idx->c->i) {
      int64_t size = data->dims.size();
      if (k < -size || k >= size)
        return fail(n, "index " + llvm::Twine(k) + " is out of range for a shape of " +
                           llvm::Twine(size) + " dims");
      out.dims.push_back(data->dims[k < 0 ? k + size : k]);
    }
    return setOut(n, out);
  }
  // A table lookup: tfm.embedding.
  if (axis == 0 && rank == 2 && idx->kind != Val::Shape) {
    FailureOr<Value> table = tensor(*data, n), ids = tensor(*idx, n);
    if (failed(table) || failed(ids))
      return failure();
    return setOut(n, create<tfm::EmbeddingOp>(n, *table, *ids));
  }
  // One constant index along an axis: a slice.
  if (idx->kind == Val::Constant && idx->c->numel() == 1 && !idx->c->isFloat()) {
    FailureOr<Value> t = tensor(*data, n);
    if (failed(t))
      return failure();
    llvm::SmallVector<int64_t> shape = shapeOf(*t);
    int64_t k = idx->c->i[0], d = shape[axis];
    if (d == kDyn)
      return fail(n, "a constant index along a dynamic axis is not supported");
    if (k < -d || k >= d)
      return fail(n, "index " + llvm::Twine(k) + " is out of range for dim " + llvm::Twine(d));
    if (k < 0)
      k += d;
    FailureOr<Value> s = create<tfm::SliceOp>(n, *t, uint64_t(axis), uint64_t(k),
                                              uint64_t(k + 1), uint64_t(1));
    if (failed(s))
      return failure();
    llvm::SmallVector<int64_t> out(shape);
    out.erase(out.begin() + axis);
    for (int64_t e : idx->c->shape)
      out.insert(out.begin() + axis, e);
    return setOut(n, reshape(n, *s, out));
  }
  return fail(n, "only lookups in a 2-D table along axis 0, constant indices "
                 "and dims of a shape are supported");
}

LogicalResult Importer::range(const onnx::NodeProto &n) {
  FailureOr<std::shared_ptr<Const>> start = constInput(n, 0), delta = constInput(n, 2);
  FailureOr<Val> limit = getInput(n, 1);
  if (failed(start) || failed(delta) || failed(limit))
    return failure();
  if ((*start)->numel() != 1 || (*delta)->numel() != 1)
    return fail(n, "start and delta must be scalars");
  double s = (*start)->at(0), step = (*delta)->at(0);
  if (limit->kind == Val::Shape && limit->dims.size() == 1 &&
      limit->dims[0].size == kDyn) {
    if (s != 0 || step != 1)
      return fail(n, "a Range to a dynamic limit must start at 0 with delta 1");
    const Dim &d = limit->dims[0];
    Type element = elementTypeOf(b, (*start)->onnxType);
    auto type = RankedTensorType::get({kDyn}, element);
    return setOut(n, checked(n, b.create<tfm::ArangeOp>(loc(n), type, d.source,
                                                        d.axis, int64_t(0))));
  }
  FailureOr<std::shared_ptr<Const>> l = constInput(n, 1);
  if (failed(l))
    return failure();
  if ((*l)->numel() != 1)
    return fail(n, "limit must be a scalar");
  if (step == 0)
    return fail(n, "delta is 0");
  double count = std::max(0.0, std::ceil(((*l)->at(0) - s) / step));
  if (count > kMaxFoldElements)
    return fail(n, "a constant Range of more than 65536 elements");
  auto c = std::make_shared<Const>();
  c->onnxType = (*start)->onnxType;
  c->shape = {int64_t(count)};
  for (int64_t k = 0; k < int64_t(count); ++k) {
    if (c->isFloat()) {
      c->f.push_back(float(s + k * step));
      continue;
    }
    // start + k * delta in int64, as ONNX computes it.
    int64_t v;
    if ((*delta)->isFloat() || llvm::MulOverflow(k, (*delta)->i[0], v) ||
        llvm::AddOverflow((*start)->i[0], v, v))
      return fail(n, "element " + llvm::Twine(k) +
                         " overflows int64, or delta is not an integer");
    c->i.push_back(v);
  }
  return setOut(n, constVal(c));
}

LogicalResult Importer::concat(const onnx::NodeProto &n) {
  llvm::SmallVector<Val> ins;
  bool shapes = true;
  for (int k = 0; k < n.input_size(); ++k) {
    FailureOr<Val> v = getInput(n, k);
    if (failed(v))
      return failure();
    ins.push_back(*v);
    bool shapeLike = v->kind == Val::Shape ||
                     (v->kind == Val::Constant && !v->c->isFloat() &&
                      v->c->shape.size() == 1);
    shapes &= shapeLike;
  }
  if (shapes) {
    Val out;
    out.kind = Val::Shape;
    for (const Val &v : ins) {
      if (v.kind == Val::Shape) {
        out.dims.append(v.dims.begin(), v.dims.end());
      } else {
        for (int64_t x : v.c->i) {
          Dim d;
          d.size = x;
          out.dims.push_back(d);
        }
      }
    }
    return setOut(n, out);
  }
  llvm::SmallVector<Value> tensors;
  int64_t rank = -1;
  for (const Val &v : ins) {
    FailureOr<Value> t = tensor(v, n);
    if (failed(t))
      return failure();
    tensors.push_back(*t);
    rank = shapeOf(*t).size();
  }
  int64_t axis = attrInt(n, "axis", 0);
  if (axis < 0)
    axis += rank;
  return setOut(n, create<tfm::ConcatOp>(n, ValueRange(tensors), uint64_t(axis)));
}

LogicalResult Importer::split(const onnx::NodeProto &n) {
  FailureOr<Value> t = tensorOf(n, 0);
  if (failed(t))
    return failure();
  llvm::SmallVector<int64_t> shape = shapeOf(*t);
  int64_t rank = shape.size(), axis = attrInt(n, "axis", 0);
  if (axis < -rank || axis >= rank)
    return fail(n, "axis " + llvm::Twine(axis) + " is out of range");
  if (axis < 0)
    axis += rank;
  int64_t d = shape[axis], parts = n.output_size();
  if (d == kDyn)
    return fail(n, "splitting a dynamic axis is not supported");
  std::vector<int64_t> sizes;
  if (hasInput(n, 1)) {
    std::optional<std::vector<int64_t>> s = intsOf(n, 1);
    if (!s)
      return failure();
    sizes = *s;
  } else if (const onnx::AttributeProto *a = findAttr(n, "split")) {
    sizes.assign(a->ints().begin(), a->ints().end());
  } else {
    // Equal parts, the last smaller when d does not divide (opset 18).
    int64_t each = (d + parts - 1) / parts;
    for (int64_t k = 0; k < parts; ++k)
      sizes.push_back(std::min(each, d - k * each));
  }
  int64_t total = 0;
  bool overflow = false;
  for (int64_t s : sizes)
    if (llvm::AddOverflow(total, s, total))
      overflow = true;
  if (int64_t(sizes.size()) != parts || total != d || overflow ||
      llvm::any_of(sizes, [](int64_t s) { return s <= 0; }))
    return fail(n, "split sizes do not tile axis " + llvm::Twine(axis) + " of " +
                       shapeString(shape) + " into " + llvm::Twine(parts) + " outputs");
  int64_t begin = 0;
  for (int64_t k = 0; k < parts; ++k) {
    FailureOr<Value> s = create<tfm::SliceOp>(n, *t, uint64_t(axis), uint64_t(begin),
                                              uint64_t(begin + sizes[k]), uint64_t(1));
    if (failed(s))
      return failure();
    values[n.output(k)] = tensorVal(*s);
    begin += sizes[k];
  }
  return success();
}

LogicalResult Importer::slice(const onnx::NodeProto &n) {
  FailureOr<Val> in = getInput(n, 0);
  if (failed(in))
    return failure();
  std::optional<std::vector<int64_t>> starts = intsOf(n, 1), ends = intsOf(n, 2);
  if (!starts || !ends)
    return failure();
  int64_t rank = logicalShape(*in).size();
  if (in->kind == Val::Shape)
    rank = 1;
  std::vector<int64_t> axes, steps(starts->size(), 1);
  if (hasInput(n, 3)) {
    std::optional<std::vector<int64_t>> a = intsOf(n, 3);
    if (!a)
      return failure();
    axes = *a;
  } else {
    for (size_t k = 0; k < starts->size(); ++k)
      axes.push_back(k);
  }
  if (hasInput(n, 4)) {
    std::optional<std::vector<int64_t>> s = intsOf(n, 4);
    if (!s)
      return failure();
    steps = *s;
  }
  if (axes.size() != starts->size() || ends->size() != starts->size() ||
      steps.size() != starts->size())
    return fail(n, "starts, ends, axes and steps differ in length");
  auto clampRange = [&](int64_t d, int64_t &s, int64_t &e, int64_t step) {
    if (s < 0)
      s += d;
    if (e < 0)
      e += d;
    s = std::clamp<int64_t>(s, 0, d);
    e = std::clamp<int64_t>(e, 0, d);
    (void)step;
  };
  if (in->kind == Val::Shape) {
    if (axes.size() != 1 || steps[0] != 1)
      return fail(n, "a slice of a shape must be one range with step 1");
    int64_t s = (*starts)[0], e = (*ends)[0];
    clampRange(in->dims.size(), s, e, 1);
    Val out = *in;
    out.dims.assign(in->dims.begin() + s, in->dims.begin() + std::max(s, e));
    return setOut(n, out);
  }
  FailureOr<Value> t = tensor(*in, n);
  if (failed(t))
    return failure();
  Value x = *t;
  for (size_t k = 0; k < axes.size(); ++k) {
    int64_t axis = axes[k] < 0 ? axes[k] + rank : axes[k];
    if (axis < 0 || axis >= rank)
      return fail(n, "axis " + llvm::Twine(axes[k]) + " is out of range");
    int64_t d = shapeOf(x)[axis], s = (*starts)[k], e = (*ends)[k];
    if (steps[k] < 1)
      return fail(n, "step " + llvm::Twine(steps[k]) + " (only positive steps)");
    if (d == kDyn) {
      if (s == 0 && e >= (int64_t(1) << 62) && steps[k] == 1)
        continue; // the whole axis
      return fail(n, "a slice of dynamic axis " + llvm::Twine(axis) +
                         " is supported only over the whole axis");
    }
    clampRange(d, s, e, steps[k]);
    if (s == 0 && e == d && steps[k] == 1)
      continue;
    if (s >= e)
      return fail(n, "an empty slice of axis " + llvm::Twine(axis));
    // A step past the end takes element s alone, as a step of e - s does;
    // tfm.slice's result size (e - s + step - 1) / step must not overflow.
    int64_t step = std::min(steps[k], e - s);
    FailureOr<Value> r = create<tfm::SliceOp>(n, x, uint64_t(axis), uint64_t(s),
                                              uint64_t(e), uint64_t(step));
    if (failed(r))
      return failure();
    x = *r;
  }
  return setOut(n, x);
}

/// 0, 1, ... along axis `axis` of `like` (tfm.arange, i64), reshaped to
/// `shape` (that dim and 1s) so that it broadcasts against other positions.
FailureOr<Value> Importer::positions(const onnx::NodeProto &n, Value like, int64_t axis,
                                     llvm::ArrayRef<int64_t> shape) {
  auto type = RankedTensorType::get({shapeOf(like)[axis]}, b.getI64Type());
  FailureOr<Value> r =
      checked(n, b.create<tfm::ArangeOp>(loc(n), type, like, axis, int64_t(0)));
  if (failed(r))
    return failure();
  return reshape(n, *r, shape);
}

/// Trilu: x where j - i >= k (upper) or j - i <= k (lower) over the last
/// two axes, else 0. A constant x folds; otherwise the positions come from
/// tfm.arange over x's own dims, so a dynamic mask stays dynamic.
LogicalResult Importer::trilu(const onnx::NodeProto &n) {
  FailureOr<Val> in = getInput(n, 0);
  if (failed(in))
    return failure();
  int64_t k = 0;
  if (hasInput(n, 1)) {
    FailureOr<std::shared_ptr<Const>> kc = constInput(n, 1);
    if (failed(kc))
      return failure();
    if ((*kc)->numel() != 1)
      return fail(n, "'k' must be a scalar");
    k = int64_t((*kc)->at(0));
  }
  const bool upper = attrInt(n, "upper", 1) != 0;
  auto keep = [&](int64_t i, int64_t j) { return upper ? j - i >= k : j - i <= k; };
  llvm::SmallVector<int64_t> shape = logicalShape(*in);
  if (shape.size() < 2)
    return fail(n, "expected an input of rank 2 or more, got rank " +
                       llvm::Twine(shape.size()));
  if (in->kind == Val::Constant) {
    auto c = std::make_shared<Const>(*in->c);
    c->init.clear();
    c->transposed = false;
    const int64_t rows = c->shape[c->shape.size() - 2], cols = c->shape.back();
    for (int64_t e = 0; e < c->numel(); ++e)
      if (!keep((e / cols) % rows, e % cols)) {
        if (c->isFloat())
          c->f[e] = 0;
        else
          c->i[e] = 0;
      }
    return setOut(n, constVal(c));
  }
  FailureOr<Value> x = tensor(*in, n);
  if (failed(x))
    return failure();
  const int64_t rank = shape.size();
  Type i64 = b.getI64Type();
  const int64_t rows = shapeOf(*x)[rank - 2], cols = shapeOf(*x)[rank - 1];
  FailureOr<Value> i = positions(n, *x, rank - 2, {rows, 1}),
                   j = positions(n, *x, rank - 1, {1, cols});
  if (failed(i) || failed(j))
    return failure();
  FailureOr<Value> diff = create<tfm::SubOp>(n, *j, *i);
  if (failed(diff))
    return failure();
  FailureOr<Value> cond =
      create<tfm::CompareOp>(n, *diff, splat(i64, double(k)),
                             upper ? tfm::ComparePredicateKind::ge
                                   : tfm::ComparePredicateKind::le);
  if (failed(cond))
    return failure();
  Type element = cast<RankedTensorType>(x->getType()).getElementType();
  return setOut(n, create<tfm::WhereOp>(n, *cond, *x, splat(element, 0.0)));
}

/// Attention (opset 23) on 4-D q [B, H, Sq, D], k [B, Hkv, Sk, D] and
/// v [B, Hkv, Sk, Dv]: tfm.attention with the node's scale (default
/// 1/sqrt(D)) and its attn_mask as the additive mask (a bool mask becomes
/// 0 / -inf). 3-D inputs [B, S, heads * size] (q_num_heads, kv_num_heads)
/// are split into heads by a reshape and read in place, tfm.attention's
/// bshd layout, and the result merged back.
///
/// past_key and past_value [B, Hkv, P, D] are joined with k and v along
/// the sequence (tfm.concat: with P dynamic, the library computes the
/// joined length from the input shapes), and present_key / present_value
/// are the joined tensors; 3-D inputs are then moved to [B, H, S, D] to
/// join them.
///
/// ONNX's is_causal keeps key j <= query i + P (the upper-left triangle of
/// the new keys; every past key is visible), tfm's causal j <= i + Sk - Sq:
/// the same when the new keys are as many as the queries. So is_causal
/// becomes tfm's causal when Sq and the new Sk are static and equal, and
/// otherwise an additive mask computed from tfm.arange positions (zeros
/// over the past, the triangle over the new keys). `softcap` > 0 is the
/// op's softcap (applied, as there, before the mask).
///
/// qk_matmul_output (output 3) is the scores at the stage
/// qk_matmul_output_mode names: 0 scale * q . k, 1 after the softcap, 2
/// after the masks, 3 the softmax. The op is then written out as its chain
/// of ops (decomposeAttention) and that value is an output: the scores
/// exist as a tensor, so the fusion pass leaves this site unfused.
LogicalResult Importer::attention(const onnx::NodeProto &n) {
  if (hasInput(n, 4) != hasInput(n, 5))
    return fail(n, "past_key and past_value must be given together");
  const float softcap = attrFloat(n, "softcap", 0.0f);
  if (!(softcap >= 0.0f) || std::isinf(softcap))
    return fail(n, "expected softcap >= 0 and finite (0: none), got " +
                       llvm::formatv("{0}", softcap).str());
  const int64_t qkMode = attrInt(n, "qk_matmul_output_mode", 0);
  if (qkMode < 0 || qkMode > 3)
    return fail(n, "expected qk_matmul_output_mode 0 (q . k scaled), 1 (softcapped), 2 "
                   "(masked) or 3 (softmax), got " + llvm::Twine(qkMode));
  const bool past = hasInput(n, 4);
  auto wanted = [&](int k) { return k < n.output_size() && !n.output(k).empty(); };
  FailureOr<Value> q = tensorOf(n, 0), k = tensorOf(n, 1), v = tensorOf(n, 2);
  if (failed(q) || failed(k) || failed(v))
    return failure();
  const size_t rank = shapeOf(*q).size();
  if (rank != shapeOf(*k).size() || rank != shapeOf(*v).size() || (rank != 3 && rank != 4))
    return fail(n, "expected q, k and v all 4-D ([batch, heads, sequence, head size]) "
                   "or all 3-D ([batch, sequence, heads * head size])");
  // 3-D: heads split off the last dim, [B, S, H, D] (bshd), and moved to
  // [B, H, S, D] when the cache or the present outputs need that layout.
  const bool split = rank == 3;
  const bool bshd = split && !past && !wanted(1) && !wanted(2);
  if (split) {
    const int64_t heads[3] = {attrInt(n, "q_num_heads", 0), attrInt(n, "kv_num_heads", 0),
                              attrInt(n, "kv_num_heads", 0)};
    Value *operands[3] = {&*q, &*k, &*v};
    const char *names[3] = {"q", "k", "v"};
    for (int o = 0; o < 3; ++o) {
      llvm::SmallVector<int64_t> shape = shapeOf(*operands[o]);
      if (heads[o] < 1 || shape[2] == kDyn || shape[2] % heads[o] != 0)
        return fail(n, llvm::Twine("3-D inputs need q_num_heads and kv_num_heads dividing "
                                   "the static hidden sizes; ") +
                           names[o] + " is " + shapeString(shape) + " with " +
                           llvm::Twine(heads[o]) + " heads");
      FailureOr<Value> r =
          reshape(n, *operands[o], {shape[0], shape[1], heads[o], shape[2] / heads[o]});
      if (failed(r) || (!bshd && failed(r = create<tfm::TransposeOp>(
                                            n, *r, llvm::ArrayRef<int64_t>{0, 2, 1, 3}))))
        return failure();
      *operands[o] = *r;
    }
  }
  const int64_t seqAxis = bshd ? 1 : 2;
  const Value newKeys = *k;
  Value pastKeys;
  if (past) {
    FailureOr<Value> pk = tensorOf(n, 4), pv = tensorOf(n, 5);
    if (failed(pk) || failed(pv))
      return failure();
    if (shapeOf(*pk).size() != 4 || shapeOf(*pv).size() != 4)
      return fail(n, "expected past_key and past_value 4-D [batch, kv heads, past "
                     "sequence, head size], got " + shapeString(shapeOf(*pk)) + " and " +
                     shapeString(shapeOf(*pv)));
    FailureOr<Value> joinedK = create<tfm::ConcatOp>(n, ValueRange{*pk, *k}, uint64_t(2));
    FailureOr<Value> joinedV = create<tfm::ConcatOp>(n, ValueRange{*pv, *v}, uint64_t(2));
    if (failed(joinedK) || failed(joinedV))
      return failure();
    pastKeys = *pk;
    k = joinedK;
    v = joinedV;
  }
  llvm::SmallVector<int64_t> qs = shapeOf(*q), ks = shapeOf(newKeys);
  if (qs[3] == kDyn)
    return fail(n, "the head size (q's last dim) must be static");
  Type element = cast<RankedTensorType>(q->getType()).getElementType();
  const double scale = findAttr(n, "scale")
                           ? double(attrFloat(n, "scale", 1.0f))
                           : 1.0 / std::sqrt(double(qs[3]));
  FailureOr<Value> maskIn = optionalTensorOf(n, 3);
  if (failed(maskIn))
    return failure();
  Value mask = *maskIn;
  const double inf = std::numeric_limits<double>::infinity();
  if (mask) {
    if (cast<RankedTensorType>(mask.getType()).getElementType().isInteger(1)) {
      FailureOr<Value> additive =
          create<tfm::WhereOp>(n, mask, splat(element, 0.0), splat(element, -inf));
      if (failed(additive))
        return failure();
      mask = *additive;
    }
  }
  bool causal = attrInt(n, "is_causal", 0) != 0;
  if (causal && !(qs[seqAxis] != kDyn && qs[seqAxis] == ks[seqAxis])) {
    // Over the new keys, tril [Sq, Sk_new]: keep key j <= query i.
    FailureOr<Value> i = positions(n, *q, seqAxis, {qs[seqAxis], 1}),
                     j = positions(n, newKeys, seqAxis, {1, ks[seqAxis]});
    if (failed(i) || failed(j))
      return failure();
    FailureOr<Value> keep = create<tfm::CompareOp>(n, *j, *i, tfm::ComparePredicateKind::le);
    if (failed(keep))
      return failure();
    FailureOr<Value> bias =
        create<tfm::WhereOp>(n, *keep, splat(element, 0.0), splat(element, -inf));
    if (failed(bias))
      return failure();
    if (past) {
      // Zeros [Sq, P] in front: (0 where i == i) + (0 where p == p).
      FailureOr<Value> pastPositions = positions(n, pastKeys, 2, {1, shapeOf(pastKeys)[2]});
      if (failed(pastPositions))
        return failure();
      auto zerosWhereEqual = [&](Value x) -> FailureOr<Value> {
        FailureOr<Value> same = create<tfm::CompareOp>(n, x, x, tfm::ComparePredicateKind::eq);
        if (failed(same))
          return failure();
        return create<tfm::WhereOp>(n, *same, splat(element, 0.0), splat(element, -inf));
      };
      FailureOr<Value> rows = zerosWhereEqual(*i), cols = zerosWhereEqual(*pastPositions);
      if (failed(rows) || failed(cols))
        return failure();
      FailureOr<Value> pastBias = create<tfm::AddOp>(n, *rows, *cols);
      if (failed(pastBias) ||
          failed(bias = create<tfm::ConcatOp>(n, ValueRange{*pastBias, *bias}, uint64_t(1))))
        return failure();
    }
    if (mask) {
      FailureOr<Value> sum = create<tfm::AddOp>(n, mask, *bias);
      if (failed(sum))
        return failure();
      mask = *sum;
    } else {
      mask = *bias;
    }
    causal = false;
  }
  FailureOr<Value> y = create<tfm::AttentionOp>(
      n, *q, *k, *v, mask, /*key_padding_mask=*/Value(), ValueRange(),
      b.getF64FloatAttr(scale), causal ? b.getBoolAttr(true) : BoolAttr(), ArrayAttr(),
      DictionaryAttr(),
      tfm::HeadLayoutKindAttr::get(b.getContext(),
                                   bshd ? tfm::HeadLayoutKind::bshd : tfm::HeadLayoutKind::bhsd),
      /*product_type=*/TypeAttr(),
      softcap > 0 ? b.getF64FloatAttr(softcap) : FloatAttr());
  if (failed(y))
    return failure();
  if (wanted(3)) {
    FailureOr<DecomposedAttention> parts =
        decomposeAttention(y->getDefiningOp<tfm::AttentionOp>());
    if (failed(parts))
      return fail(n, "cannot write the attention out for qk_matmul_output (see the "
                     "error above)");
    const Value stages[4] = {parts->scaled, parts->capped, parts->masked,
                             parts->probabilities};
    *y = parts->result;
    (void)setOut(n, tensorVal(stages[qkMode]), 3);
  }
  if (wanted(1))
    (void)setOut(n, tensorVal(*k), 1);
  if (wanted(2))
    (void)setOut(n, tensorVal(*v), 2);
  if (!split)
    return setOut(n, y);
  // [B, Sq, H, Dv] -> [B, Sq, H * Dv], from [B, H, Sq, Dv] when moved.
  if (!bshd && failed(y = create<tfm::TransposeOp>(n, *y, llvm::ArrayRef<int64_t>{0, 2, 1, 3})))
    return failure();
  llvm::SmallVector<int64_t> ys = shapeOf(*y);
  return setOut(n, reshape(n, *y, {ys[0], ys[1], ys[2] * ys[3]}));
}

/// RotaryEmbedding (opset 23): x [B, H, S, D], or [B, S, H * D] with
/// num_heads, rotated by the cos/sin rows the caches hold for each position:
/// caches [P, R/2] gathered by position_ids [B, S] (tfm.embedding), or
/// already [B, S, R/2] without them. Pairs are halves of the first R dims,
/// or neighbours when interleaved; the dims past R pass through. Written out
/// as slices, products and a concat, the spec's reference computation: the
/// tables are data here (tfm.rope derives its angles from a base), and
/// attention is still fused on the rotated q and k.
LogicalResult Importer::rotaryEmbedding(const onnx::NodeProto &n) {
  FailureOr<Value> xIn = tensorOf(n, 0), cosIn = tensorOf(n, 1), sinIn = tensorOf(n, 2);
  if (failed(xIn) || failed(cosIn) || failed(sinIn))
    return failure();
  Value x = *xIn, cosT = *cosIn, sinT = *sinIn;
  llvm::SmallVector<int64_t> xs = shapeOf(x);
  const bool split = xs.size() == 3;
  if (xs.size() != 3 && xs.size() != 4)
    return fail(n, "expected x of rank 4 [batch, heads, sequence, head size] or 3 "
                   "[batch, sequence, hidden], got " + shapeString(xs));
  if (split) {
    const int64_t heads = attrInt(n, "num_heads", 0);
    if (heads < 1 || xs[2] == kDyn || xs[2] % heads != 0)
      return fail(n, "a 3-D x needs num_heads dividing its static hidden size; x is " +
                         shapeString(xs) + " with num_heads " + llvm::Twine(heads));
    FailureOr<Value> r = reshape(n, x, {xs[0], xs[1], heads, xs[2] / heads});
    if (failed(r))
      return failure();
    x = *r; // [B, S, H, D]
  }
  llvm::SmallVector<int64_t> shape = shapeOf(x);
  const int64_t D = shape[3];
  const int64_t R = attrInt(n, "rotary_embedding_dim", 0) > 0
                        ? attrInt(n, "rotary_embedding_dim", 0)
                        : D;
  if (D == kDyn || R % 2 != 0 || R > D)
    return fail(n, "expected an even rotary_embedding_dim within a static head size, got " +
                       llvm::Twine(R) + " of " + shapeString(shape));
  const bool interleaved = attrInt(n, "interleaved", 0) != 0;
  // cos and sin as [B, S, R/2].
  auto rows = [&](Value cache) -> FailureOr<Value> {
    if (!hasInput(n, 3))
      return cache;
    FailureOr<Value> ids = tensorOf(n, 3);
    if (failed(ids))
      return failure();
    return create<tfm::EmbeddingOp>(n, cache, *ids);
  };
  FailureOr<Value> c = rows(cosT), sn = rows(sinT);
  if (failed(c) || failed(sn))
    return failure();
  llvm::SmallVector<int64_t> cs = shapeOf(*c);
  if (cs.size() != 3 || cs[2] != R / 2)
    return fail(n, "expected cos/sin rows of [batch, sequence, " + llvm::Twine(R / 2) +
                       "], got " + shapeString(cs));
  // Broadcast over the heads: [B, 1, S, R/2] (bhsd) or [B, S, 1, R/2].
  llvm::SmallVector<int64_t> bshape =
      split ? llvm::SmallVector<int64_t>{cs[0], cs[1], 1, cs[2]}
            : llvm::SmallVector<int64_t>{cs[0], 1, cs[1], cs[2]};
  FailureOr<Value> cb = reshape(n, *c, bshape), sb = reshape(n, *sn, bshape);
  if (failed(cb) || failed(sb))
    return failure();
  auto slice = [&](Value v, int64_t start, int64_t end, int64_t step) {
    return create<tfm::SliceOp>(n, v, uint64_t(3), uint64_t(start), uint64_t(end),
                                uint64_t(step));
  };
  FailureOr<Value> x1 = interleaved ? slice(x, 0, R, 2) : slice(x, 0, R / 2, 1);
  FailureOr<Value> x2 = interleaved ? slice(x, 1, R, 2) : slice(x, R / 2, R, 1);
  if (failed(x1) || failed(x2))
    return failure();
  auto mul = [&](Value a, Value b2) { return create<tfm::MulOp>(n, a, b2); };
  FailureOr<Value> c1 = mul(*x1, *cb), s2 = mul(*x2, *sb), s1 = mul(*x1, *sb),
                   c2 = mul(*x2, *cb);
  if (failed(c1) || failed(s2) || failed(s1) || failed(c2))
    return failure();
  FailureOr<Value> real = create<tfm::SubOp>(n, *c1, *s2),
                   imag = create<tfm::AddOp>(n, *s1, *c2);
  if (failed(real) || failed(imag))
    return failure();
  Value rotated;
  if (interleaved) {
    // Pairs back side by side: [.., R/2, 2] -> [.., R].
    llvm::SmallVector<int64_t> half = shapeOf(*real), pair = half;
    pair.push_back(1);
    FailureOr<Value> r1 = reshape(n, *real, pair), i1 = reshape(n, *imag, pair);
    if (failed(r1) || failed(i1))
      return failure();
    FailureOr<Value> both = create<tfm::ConcatOp>(n, ValueRange{*r1, *i1}, uint64_t(4));
    if (failed(both))
      return failure();
    half[3] = R;
    FailureOr<Value> flat = reshape(n, *both, half);
    if (failed(flat))
      return failure();
    rotated = *flat;
  } else {
    FailureOr<Value> both = create<tfm::ConcatOp>(n, ValueRange{*real, *imag}, uint64_t(3));
    if (failed(both))
      return failure();
    rotated = *both;
  }
  if (R < D) {
    FailureOr<Value> rest = slice(x, R, D, 1);
    if (failed(rest))
      return failure();
    FailureOr<Value> whole = create<tfm::ConcatOp>(n, ValueRange{rotated, *rest}, uint64_t(3));
    if (failed(whole))
      return failure();
    rotated = *whole;
  }
  if (!split)
    return setOut(n, rotated);
  return setOut(n, reshape(n, rotated, xs));
}

/// Expand: numpy broadcasting of x against a constant shape (folded plumbing
/// included); a dim of 1 in the shape keeps x's. A constant x folds.
LogicalResult Importer::expand(const onnx::NodeProto &n) {
  FailureOr<Val> in = getInput(n, 0);
  if (failed(in))
    return failure();
  std::optional<std::vector<int64_t>> target = intsOf(n, 1);
  if (!target)
    return failure(); // constInput said why
  llvm::SmallVector<int64_t> from = logicalShape(*in);
  const size_t rank = std::max(from.size(), target->size());
  llvm::SmallVector<int64_t> to(rank);
  for (size_t d = 0; d < rank; ++d) {
    const int64_t a = d + from.size() >= rank ? from[d + from.size() - rank] : 1;
    const int64_t t = d + target->size() >= rank ? (*target)[d + target->size() - rank] : 1;
    if (t < 0)
      return fail(n, "shape " + shapeString(*target) + " has a negative dim");
    if (a != 1 && t != 1 && a != kDyn && a != t)
      return fail(n, "cannot expand " + shapeString(from) + " to " + shapeString(*target));
    // A dim of x that is not 1 (static or dynamic) is the result's; a 1
    // stretches to the shape's.
    to[d] = a == 1 ? t : a;
  }
  if (in->kind == Val::Constant) {
    const Const &src = *in->c;
    auto c = std::make_shared<Const>();
    c->onnxType = src.onnxType;
    c->shape = to;
    if (c->numel() < 0 || c->numel() > kMaxFoldElements)
      return fail(n, "shape " + shapeString(to) + " is too large to fold");
    llvm::SmallVector<int64_t> aligned(rank, 1);
    for (size_t d = 0; d < src.shape.size(); ++d)
      aligned[rank - src.shape.size() + d] = src.shape[d];
    for (int64_t e = 0; e < c->numel(); ++e) {
      int64_t rest = e, offset = 0, stride = 1;
      for (int64_t d = rank - 1; d >= 0; --d) {
        const int64_t index = rest % to[d];
        rest /= to[d];
        offset += (aligned[d] == 1 ? 0 : index) * stride;
        stride *= aligned[d];
      }
      if (c->isFloat())
        c->f.push_back(src.f[offset]);
      else
        c->i.push_back(src.i[offset]);
    }
    return setOut(n, constVal(c));
  }
  FailureOr<Value> x = tensor(*in, n);
  if (failed(x))
    return failure();
  if (llvm::ArrayRef<int64_t>(shapeOf(*x)) == llvm::ArrayRef<int64_t>(to))
    return setOut(n, *x);
  auto type = RankedTensorType::get(to, cast<RankedTensorType>(x->getType()).getElementType());
  return setOut(n, checked(n, b.create<tfm::ExpandOp>(loc(n), type, *x)));
}

FailureOr<Value> Importer::onesLike(const onnx::NodeProto &n, Value like,
                                    llvm::ArrayRef<int64_t> axes, int64_t rank) {
  Value ones;
  // In like's type when it is a float (an fp16 graph's sums stay fp16).
  Type element = cast<RankedTensorType>(like.getType()).getElementType();
  if (!isa<FloatType>(element))
    element = b.getF32Type();
  for (int64_t axis : axes) {
    auto type = RankedTensorType::get({shapeOf(like)[axis]}, b.getI64Type());
    FailureOr<Value> r = checked(
        n, b.create<tfm::ArangeOp>(loc(n), type, like, axis, int64_t(0)));
    if (failed(r))
      return failure();
    FailureOr<Value> eq = create<tfm::CompareOp>(n, *r, *r, tfm::ComparePredicateKind::eq);
    if (failed(eq))
      return failure();
    FailureOr<Value> f = castTo(n, *eq, element);
    if (failed(f))
      return failure();
    llvm::SmallVector<int64_t> shape(rank, 1);
    shape[axis] = shapeOf(like)[axis];
    FailureOr<Value> shaped = reshape(n, *f, shape);
    if (failed(shaped))
      return failure();
    if (!ones) {
      ones = *shaped;
      continue;
    }
    FailureOr<Value> m = create<tfm::MulOp>(n, ones, *shaped);
    if (failed(m))
      return failure();
    ones = *m;
  }
  return ones;
}

/// ReduceSum over one of the last two axes of a float tensor, as a matmul
/// with exact ones: sum_s x[.., s, d] = (1 [.., 1, S] x [.., S, D])[.., 0, d].
LogicalResult Importer::reduceSum(const onnx::NodeProto &n) {
  FailureOr<Value> t = tensorOf(n, 0);
  if (failed(t))
    return failure();
  llvm::SmallVector<int64_t> shape = shapeOf(*t);
  int64_t rank = shape.size();
  FailureOr<llvm::SmallVector<int64_t>> axes = axesOf(n, 1, rank, false);
  if (failed(axes))
    return failure();
  bool keep = attrInt(n, "keepdims", 1) != 0;
  if (axes->size() != 1 || rank < 2 || (*axes)[0] < rank - 2 ||
      !isa<FloatType>(cast<RankedTensorType>(t->getType()).getElementType()))
    return fail(n, "ReduceSum is supported over one of the last two axes of a "
                   "float tensor of rank >= 2 (tfm has no general reduction)");
  int64_t axis = (*axes)[0];
  bool rows = axis == rank - 2;
  // Ones over every batch axis and the reduced one.
  llvm::SmallVector<int64_t> onesAxes;
  for (int64_t k = 0; k < rank - 2; ++k)
    onesAxes.push_back(k);
  onesAxes.push_back(axis);
  FailureOr<Value> ones = onesLike(n, *t, onesAxes, rank);
  if (failed(ones))
    return failure();
  // Row sums: [.., 1, S] x [.., S, D]; column sums: [.., S, D] x [.., D, 1].
  llvm::SmallVector<int64_t> onesShape(shape.begin(), shape.end() - 2);
  if (rows) {
    onesShape.push_back(1);
    onesShape.push_back(shape[axis]);
  } else {
    onesShape.push_back(shape[axis]);
    onesShape.push_back(1);
  }
  FailureOr<Value> o = reshape(n, *ones, onesShape);
  if (failed(o))
    return failure();
  FailureOr<Value> r = rows ? create<tfm::MatmulOp>(n, *o, *t, false, false)
                            : create<tfm::MatmulOp>(n, *t, *o, false, false);
  if (failed(r))
    return failure();
  llvm::SmallVector<int64_t> out(shape);
  if (keep)
    out[axis] = 1;
  else
    out.erase(out.begin() + axis);
  return setOut(n, reshape(n, *r, out));
}

/// And, Or, Xor, Not on booleans, through i32 arithmetic (tfm has no logical
/// ops): and = a*b != 0, or = a+b != 0, xor = a != b, not = a == 0.
LogicalResult Importer::logical(const onnx::NodeProto &n) {
  Type i32 = b.getI32Type();
  auto asInt = [&](int k) -> FailureOr<Value> {
    FailureOr<Value> t = tensorOf(n, k);
    if (failed(t))
      return failure();
    return castTo(n, *t, i32);
  };
  FailureOr<Value> x = asInt(0);
  if (failed(x))
    return failure();
  if (n.op_type() == "Not")
    return setOut(n, create<tfm::CompareOp>(n, *x, splat(i32, 0),
                                            tfm::ComparePredicateKind::eq));
  FailureOr<Value> y = asInt(1);
  if (failed(y))
    return failure();
  if (n.op_type() == "Xor")
    return setOut(n, create<tfm::CompareOp>(n, *x, *y, tfm::ComparePredicateKind::ne));
  FailureOr<Value> r = n.op_type() == "And" ? create<tfm::MulOp>(n, *x, *y)
                                            : create<tfm::AddOp>(n, *x, *y);
  if (failed(r))
    return failure();
  return setOut(n, create<tfm::CompareOp>(n, *r, splat(i32, 0),
                                          tfm::ComparePredicateKind::ne));
}

LogicalResult Importer::convertNode(const onnx::NodeProto &n) {
  llvm::StringRef op = n.op_type();
  if (n.output_size() < 1)
    return fail(n, "has no outputs");
  auto unary = [&](auto tag) -> LogicalResult {
    using OpTy = decltype(tag);
    FailureOr<Value> t = tensorOf(n, 0);
    if (failed(t))
      return failure();
    return setOut(n, create<OpTy>(n, *t));
  };
  if (op == "Identity") {
    FailureOr<Val> v = getInput(n, 0);
    if (failed(v))
      return failure();
    return setOut(n, *v);
  }
  if (op == "Constant") {
    const onnx::AttributeProto *a = n.attribute_size() == 1 ? &n.attribute(0) : nullptr;
    auto c = std::make_shared<Const>();
    if (a && a->name() == "value") {
      FailureOr<std::shared_ptr<Const>> t = readTensor(a->t(), nodeLabel(n) + " value");
      if (failed(t))
        return failure();
      c = *t;
    } else if (a && a->name() == "value_float") {
      c->onnxType = onnx::TensorProto::FLOAT;
      c->f = {a->f()};
    } else if (a && a->name() == "value_int") {
      c->onnxType = onnx::TensorProto::INT64;
      c->i = {a->i()};
    } else if (a && a->name() == "value_floats") {
      c->onnxType = onnx::TensorProto::FLOAT;
      c->f.assign(a->floats().begin(), a->floats().end());
      c->shape = {int64_t(c->f.size())};
    } else if (a && a->name() == "value_ints") {
      c->onnxType = onnx::TensorProto::INT64;
      c->i.assign(a->ints().begin(), a->ints().end());
      c->shape = {int64_t(c->i.size())};
    } else {
      return fail(n, "expected one attribute value, value_float, value_int, "
                     "value_floats or value_ints");
    }
    return setOut(n, constVal(c));
  }
  if (op == "Add" || op == "Sub" || op == "Mul" || op == "Div" || op == "Pow" ||
      op == "Equal" || op == "Less" || op == "LessOrEqual" || op == "Greater" ||
      op == "GreaterOrEqual")
    return binary(n);
  if (op == "Max" || op == "Min") {
    if (n.input_size() == 1) {
      FailureOr<Val> v = getInput(n, 0);
      if (failed(v))
        return failure();
      return setOut(n, *v);
    }
    if (n.input_size() != 2)
      return fail(n, "only two inputs are supported");
    return binary(n);
  }
  if (op == "And" || op == "Or" || op == "Xor" || op == "Not")
    return logical(n);
  if (op == "MatMul")
    return matmul(n);
  if (op == "Einsum")
    return einsum(n);
  if (op == "Gemm") {
    if (attrFloat(n, "alpha", 1) != 1 || attrFloat(n, "beta", 1) != 1 ||
        attrInt(n, "transA", 0))
      return fail(n, "only alpha = beta = 1 and transA = 0 are supported");
    FailureOr<Value> a = tensorOf(n, 0);
    FailureOr<Val> w = getInput(n, 1);
    if (failed(a) || failed(w))
      return failure();
    if (w->kind != Val::Constant || w->c->init.empty() || w->c->shape.size() != 2)
      return fail(n, "B must be a 2-D initializer");
    Const c = *w->c;
    if (attrInt(n, "transB", 0)) {
      c.transposed = !c.transposed;
      std::swap(c.shape[0], c.shape[1]);
    }
    FailureOr<Value> wt = weight(c, n);
    if (failed(wt))
      return failure();
    FailureOr<Value> bias = optionalTensorOf(n, 2);
    if (failed(bias))
      return failure();
    return setOut(n, create<tfm::LinearOp>(n, *a, *wt, *bias));
  }
  if (op == "Reshape" || op == "Unsqueeze" || op == "Squeeze" || op == "Flatten")
    return reshapeLike(n);
  if (op == "Transpose")
    return transpose(n);
  if (op == "Gather")
    return gather(n);
  if (op == "Range")
    return range(n);
  if (op == "Concat")
    return concat(n);
  if (op == "Split")
    return split(n);
  if (op == "Slice")
    return slice(n);
  if (op == "ReduceSum")
    return reduceSum(n);
  if (op == "Shape") {
    FailureOr<Value> t = tensorOf(n, 0);
    if (failed(t))
      return failure();
    llvm::SmallVector<int64_t> shape = shapeOf(*t);
    int64_t rank = shape.size();
    int64_t start = attrInt(n, "start", 0), end = attrInt(n, "end", rank);
    start = std::clamp<int64_t>(start < 0 ? start + rank : start, 0, rank);
    end = std::clamp<int64_t>(end < 0 ? end + rank : end, 0, rank);
    Val out;
    out.kind = Val::Shape;
    for (int64_t k = start; k < end; ++k) {
      Dim d;
      d.size = shape[k];
      d.source = *t;
      d.axis = k;
      out.dims.push_back(d);
    }
    return setOut(n, out);
  }
  if (op == "Cast") {
    int to = attrInt(n, "to", 0);
    Type element = elementTypeOf(b, to);
    if (!element)
      return fail(n, "cast to " + onnxTypeName(to) + " is not supported");
    FailureOr<Val> in = getInput(n, 0);
    if (failed(in))
      return failure();
    if (in->kind == Val::Shape && to == onnx::TensorProto::INT64)
      return setOut(n, *in);
    FailureOr<Value> t = tensor(*in, n);
    if (failed(t))
      return failure();
    return setOut(n, castTo(n, *t, element));
  }
  if (op == "Where") {
    FailureOr<Value> c = tensorOf(n, 0), x = tensorOf(n, 1), y = tensorOf(n, 2);
    if (failed(c) || failed(x) || failed(y))
      return failure();
    return setOut(n, create<tfm::WhereOp>(n, *c, *x, *y));
  }
  if (op == "ConstantOfShape") {
    FailureOr<std::shared_ptr<Const>> shape = constInput(n, 0);
    if (failed(shape))
      return failure();
    auto c = std::make_shared<Const>();
    c->onnxType = onnx::TensorProto::FLOAT;
    double value = 0;
    if (const onnx::AttributeProto *a = findAttr(n, "value")) {
      FailureOr<std::shared_ptr<Const>> v = readTensor(a->t(), nodeLabel(n) + " value");
      if (failed(v))
        return failure();
      if ((*v)->numel() != 1)
        return fail(n, "'value' must hold one element");
      c->onnxType = (*v)->onnxType;
      value = (*v)->at(0);
    }
    c->shape.assign((*shape)->i.begin(), (*shape)->i.end());
    if (c->numel() > kMaxFoldElements || llvm::any_of(c->shape, [](int64_t d) { return d < 0; }))
      return fail(n, "shape " + shapeString(c->shape) + " is negative or too large to fold");
    if (c->isFloat())
      c->f.assign(c->numel(), float(value));
    else
      c->i.assign(c->numel(), int64_t(value));
    return setOut(n, constVal(c));
  }
  if (op == "Softmax") {
    FailureOr<Val> in = getInput(n, 0);
    if (failed(in))
      return failure();
    int64_t rank = logicalShape(*in).size(), axis = attrInt(n, "axis", -1);
    if (axis < -rank || axis >= rank)
      return fail(n, "axis " + llvm::Twine(axis) + " is out of range");
    if (axis < 0)
      axis += rank;
    if (in->isLazy() && (axis < in->merge || axis > in->merge + 1)) {
      FailureOr<Value> r = create<tfm::SoftmaxOp>(
          n, in->v, uint64_t(axis < in->merge ? axis : axis - 1));
      if (failed(r))
        return failure();
      Val out = *in;
      out.v = *r;
      return setOut(n, out);
    }
    FailureOr<Value> t = tensor(*in, n);
    if (failed(t))
      return failure();
    return setOut(n, create<tfm::SoftmaxOp>(n, *t, uint64_t(axis)));
  }
  if (op == "LayerNormalization" || op == "RMSNormalization") { // RMS: opset 23
    FailureOr<Value> x = tensorOf(n, 0), g = tensorOf(n, 1);
    if (failed(x) || failed(g))
      return failure();
    int64_t rank = shapeOf(*x).size(), axis = attrInt(n, "axis", -1);
    if (axis != -1 && axis != rank - 1)
      return fail(n, "only axis = -1 (the last) is supported");
    const APFloat epsilon(double(attrFloat(n, "epsilon", 1e-5f)));
    if (op == "RMSNormalization")
      return setOut(n, create<tfm::RmsNormOp>(n, *x, *g, Value(), epsilon));
    for (int k = 1; k < n.output_size(); ++k)
      if (!n.output(k).empty())
        return fail(n, "the Mean and InvStdDev outputs are not supported");
    FailureOr<Value> bv = optionalTensorOf(n, 2);
    if (failed(bv))
      return failure();
    Value beta = *bv;
    if (!beta) {
      // Zeros shaped as the scale (X's last dim may be dynamic, or absent).
      llvm::SmallVector<int64_t> shape = shapeOf(*g);
      if (llvm::is_contained(shape, kDyn))
        return fail(n, "without B, the scale's shape " + shapeString(shape) +
                           " must be static");
      beta = splat(cast<RankedTensorType>(x->getType()).getElementType(), 0.0,
                   shape);
    }
    return setOut(n, create<tfm::LayerNormOp>(n, *x, *g, beta, Value(), epsilon));
  }
  if (op == "Trilu")
    return trilu(n);
  if (op == "Attention") // opset 23
    return attention(n);
  if (op == "RotaryEmbedding") // opset 23
    return rotaryEmbedding(n);
  if (op == "Expand")
    return expand(n);
  if (op == "Neg")
    return unary(tfm::NegOp());
  if (op == "Abs")
    return unary(tfm::AbsOp());
  if (op == "Log")
    return unary(tfm::LogOp());
  if (op == "Cos")
    return unary(tfm::CosOp());
  if (op == "Sin")
    return unary(tfm::SinOp());
  if (op == "Tanh")
    return unary(tfm::TanhOp());
  if (op == "Relu")
    return unary(tfm::ReluOp());
  if (op == "Gelu") { // opset 20
    FailureOr<Value> t = tensorOf(n, 0);
    if (failed(t))
      return failure();
    const onnx::AttributeProto *a = findAttr(n, "approximate");
    bool tanh = a && a->s() == "tanh";
    return setOut(n, create<tfm::GeluOp>(n, *t, tanh ? tfm::GeluApproxKind::tanh
                                                     : tfm::GeluApproxKind::none));
  }
  if (op == "Erf" || op == "Sigmoid" || op == "Sqrt" ||
      op == "Reciprocal" || op == "ReduceMean" || op == "ReduceL2")
    return fail(n, "'" + op + "' is supported only inside the functions the "
                   "importer recognises (GELU, SiLU, RMSNorm, L2 "
                   "normalisation); tfm has no standalone " + op);
  return fail(n, "unsupported op '" + op + "'");
}

//===----------------------------------------------------------------------===//
// The function
//===----------------------------------------------------------------------===//

llvm::Expected<OwningOpRef<ModuleOp>> Importer::run() {
  stackTop = uintptr_t(__builtin_frame_address(0));
  for (const onnx::TensorProto &t : graph.initializer()) {
    if (!initializers.try_emplace(t.name(), &t).second)
      return makeError("initializer '" + t.name() + "' is defined twice");
  }
  for (const onnx::NodeProto &n : graph.node())
    for (const std::string &out : n.output()) {
      if (out.empty())
        continue;
      if (initializers.count(out) || !producer.try_emplace(out, &n).second)
        return makeError(nodeLabel(n) + ": output '" + out +
                         "' is already defined by another node or an initializer");
    }

  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());
  // Inputs: the graph's inputs that are not initializers.
  llvm::SmallVector<Type> inputs;
  llvm::SmallVector<std::string> inputNames;
  llvm::SmallVector<llvm::SmallVector<std::string>> dimNames;
  for (const onnx::ValueInfoProto &in : graph.input()) {
    if (initializers.count(in.name()))
      continue;
    std::string what = "graph input '" + in.name() + "'";
    if (!in.type().has_tensor_type())
      return makeError(what + " is not a tensor");
    const onnx::TypeProto::Tensor &tt = in.type().tensor_type();
    Type element = elementTypeOf(b, tt.elem_type());
    if (!element)
      return makeError(what + " has element type " +
                       onnxTypeName(tt.elem_type()).str() + " (supported: FLOAT, FLOAT16, "
                       "BFLOAT16, INT64, INT32, BOOL)");
    if (!tt.has_shape())
      return makeError(what + " has no shape (its rank must be known)");
    llvm::SmallVector<int64_t> shape;
    llvm::SmallVector<std::string> names;
    for (const onnx::TensorShapeProto::Dimension &d : tt.shape().dim()) {
      if (d.has_dim_value()) {
        if (d.dim_value() < 0)
          return makeError(what + " has a negative dimension");
        shape.push_back(d.dim_value());
        names.push_back("");
      } else {
        shape.push_back(kDyn);
        names.push_back(d.dim_param());
      }
    }
    inputs.push_back(RankedTensorType::get(shape, element));
    inputNames.push_back(in.name());
    dimNames.push_back(names);
  }
  std::string name;
  for (char ch : graph.name())
    name += std::isalnum(static_cast<unsigned char>(ch)) ? ch : '_';
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0])))
    name = "main" + name;
  auto func = b.create<func::FuncOp>(NameLoc::get(b.getStringAttr(graph.name())), name,
                                     b.getFunctionType(inputs, {}));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);
  for (auto [k, argName] : llvm::enumerate(inputNames)) {
    func.setArgAttr(k, "tfm.name", b.getStringAttr(argName));
    if (llvm::any_of(dimNames[k], [](const std::string &s) { return !s.empty(); })) {
      llvm::SmallVector<llvm::StringRef> refs(dimNames[k].begin(), dimNames[k].end());
      func.setArgAttr(k, "tfm.dim_names", b.getStrArrayAttr(refs));
    }
    values[argName] = tensorVal(body->getArgument(k));
  }
  // Outputs, converted from the back.
  llvm::SmallVector<Value> results;
  llvm::SmallVector<std::string> outputNames;
  onnx::NodeProto output;
  output.set_op_type("graph output");
  for (const onnx::ValueInfoProto &out : graph.output()) {
    output.set_name(out.name());
    FailureOr<Val> v = get(out.name());
    if (failed(v))
      return makeError(error.value_or("the graph could not be imported"));
    FailureOr<Value> t = tensor(*v, output);
    if (failed(t))
      return makeError(error.value_or("the graph could not be imported"));
    results.push_back(*t);
    outputNames.push_back(out.name());
  }
  if (results.empty())
    return makeError("the graph has no outputs");
  b.setInsertionPointToEnd(body);
  b.create<func::ReturnOp>(b.getUnknownLoc(), results);
  func.setType(b.getFunctionType(inputs, ValueRange(results).getTypes()));
  for (auto [k, outName] : llvm::enumerate(outputNames))
    func.setResultAttr(k, "tfm.name", b.getStringAttr(outName));
  if (failed(mlir::verify(*module)))
    return makeError("the imported model does not verify: " +
                     llvm::StringRef(diagnostics).rtrim());
  return module;
}

} // namespace

bool attune::frontends::isOnnxFile(llvm::StringRef file) {
  return path::extension(file) == ".onnx" && !fs::is_directory(file);
}

llvm::Expected<OnnxModel> attune::frontends::importOnnx(llvm::StringRef file) {
  auto buffer = llvm::MemoryBuffer::getFile(file, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return makeError("cannot read '" + file + "': " + buffer.getError().message());
  onnx::ModelProto model;
  llvm::StringRef bytes = (*buffer)->getBuffer();
  if (bytes.size() > size_t(INT32_MAX))
    return makeError("'" + file + "' is larger than protobuf's 2 GiB limit; keep "
                     "the weights as external data");
  if (!model.ParseFromArray(bytes.data(), int(bytes.size())))
    return makeError("'" + file + "' is not a valid ONNX model (the protobuf "
                     "does not parse: truncated or corrupt)");
  if (!model.has_graph())
    return makeError("'" + file + "' has no graph");
  int64_t opset = -1;
  for (const onnx::OperatorSetIdProto &o : model.opset_import())
    if (o.domain().empty() || o.domain() == "ai.onnx")
      opset = o.version();
  if (opset < kMinOpset || opset > kMaxOpset)
    return makeError(llvm::formatv("'{0}': default-domain opset {1} is not "
                                   "supported (expected {2} to {3})",
                                   file, opset, kMinOpset, kMaxOpset)
                         .str());

  ImportContext context;
  llvm::SmallString<256> folder(file);
  path::remove_filename(folder);
  if (folder.empty())
    folder = ".";
  Importer importer(context.get(), model, folder.str().str(), opset,
                    context.diagnostics());
  std::optional<llvm::Expected<OwningOpRef<ModuleOp>>> module;
  llvm::thread worker(std::optional<unsigned>(kImportStackBytes),
                      [&] { module.emplace(importer.run()); });
  worker.join();
  if (!*module)
    return module->takeError();

  OnnxModel out;
  llvm::raw_string_ostream os(out.ir);
  os << "// Imported by attune-compile from " << file << " (ONNX, opset " << opset
     << ").\n";
  (**module)->print(os);
  out.weights = writeSafeTensors(importer.takeWeights());
  out.summary = llvm::formatv("ONNX graph '{0}': {1} nodes, {2} initializers, opset {3}",
                              model.graph().name(), model.graph().node_size(),
                              model.graph().initializer_size(), opset);
  return out;
}
