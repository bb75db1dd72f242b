//===- Evaluator.cpp - reference evaluator for the tfm dialect ------------===//
//
// Each op is computed straight from the math in its ODS description, with
// plain loops and double arithmetic throughout, so that a disagreement with
// generated code points at the generated code. Nothing here is shared with
// the Halide code generator: an error copied into both would be invisible.
//
// Values are not rounded to their declared element type between ops; the
// evaluator computes the exact-arithmetic answer (to double precision) that
// the IR denotes, and tests state their tolerance per dtype against it.
//
//===----------------------------------------------------------------------===//

#include "compiler/reference/Evaluator.h"
#include "compiler/reference/AbsolutePositions.h"
#include "compiler/reference/ElementSemantics.h"
#include "compiler/frontends/SafeTensors.h"
#include "compiler/frontends/ScalarTypes.h"
#include "compiler/frontends/Support.h"
#include "compiler/support/MergedWeights.h"
#include "compiler/support/PanelLayout.h"
#include "dialects/tfm/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

using namespace mlir;
using namespace attune;
using namespace attune::reference;
using attune::reference::detail::asInt64;
using attune::reference::detail::isIntegerType;
using attune::reference::detail::wrapTo;

int64_t Tensor::numElements() const {
  // Shapes come from callers and IR; a count past int64 (or a negative
  // dimension) reads as -1, which no data size matches.
  int64_t n = 1;
  for (int64_t d : shape)
    if (d < 0 || llvm::MulOverflow(n, d, n))
      return -1;
  return n;
}

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// An integer-valued double without a fraction ("3", not "3.00").
std::string numberString(double x) {
  if (std::isfinite(x) && x == std::floor(x) && std::abs(x) < 0x1.0p63)
    return std::to_string(static_cast<int64_t>(x));
  std::string s;
  llvm::raw_string_ostream os(s);
  os << x;
  return s;
}

std::string typeString(Type type) {
  std::string s;
  llvm::raw_string_ostream os(s);
  type.print(os);
  return s;
}

/// "tfm.matmul at file.mlir:3:8: <message>" — the op's name always, its
/// source position when the IR came from a file.
llvm::Error opError(Operation *op, const llvm::Twine &message) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << op->getName().getStringRef();
  if (auto loc = dyn_cast<FileLineColLoc>(op->getLoc()))
    os << " at " << loc.getFilename().getValue() << ":" << loc.getLine() << ":"
       << loc.getColumn();
  os << ": " << message;
  return makeError(s);
}

Tensor makeTensor(ScalarType dtype, std::vector<int64_t> shape) {
  Tensor t;
  t.dtype = dtype;
  t.shape = std::move(shape);
  t.data.assign(static_cast<size_t>(t.numElements()), 0.0);
  return t;
}

/// Row-major strides of `shape`.
std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * shape[i + 1];
  return strides;
}

/// numpy broadcasting of several shapes, aligned from the right.
std::optional<std::vector<int64_t>>
broadcastShapes(llvm::ArrayRef<std::vector<int64_t>> shapes) {
  size_t rank = 0;
  for (const auto &s : shapes)
    rank = std::max(rank, s.size());
  std::vector<int64_t> result(rank, 1);
  for (const auto &s : shapes) {
    size_t offset = rank - s.size();
    for (size_t i = 0; i < s.size(); ++i) {
      int64_t &r = result[offset + i];
      if (s[i] == r || s[i] == 1)
        continue;
      if (r != 1)
        return std::nullopt;
      r = s[i];
    }
  }
  return result;
}

/// Strides that read `shape` broadcast to `resultShape`: 0 along stretched
/// and missing leading dimensions.
std::vector<int64_t> broadcastStrides(llvm::ArrayRef<int64_t> shape,
                                      llvm::ArrayRef<int64_t> resultShape) {
  std::vector<int64_t> natural = stridesOf(shape);
  std::vector<int64_t> strides(resultShape.size(), 0);
  size_t offset = resultShape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i)
    strides[offset + i] =
        (shape[i] == 1 && resultShape[offset + i] != 1) ? 0 : natural[i];
  return strides;
}

/// Offset into a tensor with `strides` of the element at row-major position
/// `linear` of `shape`.
int64_t offsetOf(int64_t linear, llvm::ArrayRef<int64_t> shape,
                 llvm::ArrayRef<int64_t> strides) {
  int64_t offset = 0;
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    int64_t idx = linear % shape[i];
    linear /= shape[i];
    offset += idx * strides[i];
  }
  return offset;
}

std::string indexString(int64_t linear, llvm::ArrayRef<int64_t> shape) {
  std::vector<int64_t> idx(shape.size());
  for (int64_t i = static_cast<int64_t>(shape.size()) - 1; i >= 0; --i) {
    idx[i] = linear % shape[i];
    linear /= shape[i];
  }
  return shapeString(idx);
}

/// Number of elements in all but the last `trailing` dimensions.
// The activations, shared by their element-wise ops and tfm.linear's
// `activation` (which must compute exactly what the op would).
double relu(double x) { return x < 0 ? 0.0 : x; } // NaN propagates
double silu(double x) { return x / (1.0 + std::exp(-x)); }
double geluErf(double x) {
  constexpr double kSqrtHalf = 0.70710678118654752440084436210485;
  return 0.5 * x * (1.0 + std::erf(x * kSqrtHalf));
}
double geluTanh(double x) {
  constexpr double kSqrt2OverPi = 0.79788456080286535587989211986876;
  return 0.5 * x * (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
}

/// tfm.linear's activation as a function; null for `none`.
double (*activationFunction(tfm::ActivationKind kind))(double) {
  switch (kind) {
  case tfm::ActivationKind::none:
    return nullptr;
  case tfm::ActivationKind::relu:
    return relu;
  case tfm::ActivationKind::gelu:
    return geluErf;
  case tfm::ActivationKind::gelu_tanh:
    return geluTanh;
  case tfm::ActivationKind::silu:
    return silu;
  }
  return nullptr;
}

int64_t leadingElements(llvm::ArrayRef<int64_t> shape, size_t trailing) {
  int64_t n = 1;
  for (size_t i = 0; i + trailing < shape.size(); ++i)
    n *= shape[i];
  return n;
}

/// Normalises a possibly negative axis; nullopt when out of range.
std::optional<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  if (axis < 0)
    axis += rank;
  if (axis < 0 || axis >= rank)
    return std::nullopt;
  return axis;
}

/// The element type of `op`'s result `index` (checked again by define).
std::optional<ScalarType> resultType(Operation *op, unsigned index = 0) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(index).getType());
  return type ? scalarTypeOf(type.getElementType()) : std::nullopt;
}

/// One row `x` of D values rotated at position `n` by the rotary embedding
/// `rope` (tfm.rope's description), in double.
void ropeRow(const codegen::RopeSpec &rope, double n, double *x, int64_t D) {
  const int64_t R = rope.rotaryDims, half = R / 2;
  std::vector<double> in(x, x + D);
  for (int64_t i = 0; i < half; ++i) {
    double theta = codegen::ropeInverseFrequency(rope, i);
    double c = std::cos(n * theta), s = std::sin(n * theta);
    int64_t a = rope.interleaved ? 2 * i : i;
    int64_t b = rope.interleaved ? 2 * i + 1 : i + half;
    x[a] = in[a] * c - in[b] * s;
    x[b] = in[b] * c + in[a] * s;
  }
}

/// Resolved score modifiers (tfm.attention's, tfm.score_bias's), evaluated
/// by their reference definitions in double.
struct ModifierTerms {
  struct Term {
    const modifiers::ScoreModifier *definition;
    modifiers::ModifierParams params;
    std::vector<modifiers::ReferenceOperand> operands;
  };
  std::vector<Term> terms;
  int64_t heads = 0;

  /// The sum of the biases of head h at distance delta.
  double bias(int64_t h, int64_t delta) const {
    double sum = 0;
    for (const Term &t : terms)
      sum += t.definition->referenceBias(t.params, t.operands, heads, h, delta);
    return sum;
  }
  /// The sum of the content terms, before the scale.
  double content(int64_t h, int64_t delta, const double *q, const double *k,
                 int64_t headDim) const {
    double sum = 0;
    for (const Term &t : terms)
      sum += modifiers::referenceContent(*t.definition, t.params, t.operands, h, delta,
                                         q, k, headDim);
    return sum;
  }
  bool hasContent() const {
    return llvm::any_of(terms, [](const Term &t) {
      return !t.definition->contentTerms(t.params).empty();
    });
  }
  bool hasValue() const {
    return llvm::any_of(terms, [](const Term &t) {
      return t.definition->valueTerm(t.params).has_value();
    });
  }
  /// Adds the value terms of probability p at distance delta to out.
  void addValue(double p, int64_t delta, double *out, int64_t valueDim) const {
    for (const Term &t : terms)
      modifiers::addReferenceValue(*t.definition, t.params, t.operands, p, delta, out,
                                   valueDim);
  }
};

class Interpreter {
public:
  explicit Interpreter(const WeightLookup &weights) : weights(weights) {}

  llvm::Expected<std::vector<Tensor>> run(func::FuncOp fn,
                                          llvm::ArrayRef<Tensor> inputs);

private:
  llvm::Error eval(Operation *op);
  const Tensor &get(Value v) { return values.find(v)->second; }
  /// Binds result `index` of `op` after checking `t` against its declared
  /// type (rank, static dimensions); the dtype is taken from the IR.
  llvm::Error define(Operation *op, Tensor t, unsigned index = 0);

  llvm::Error evalWeight(tfm::WeightOp op);
  llvm::Error evalEmbedding(tfm::EmbeddingOp op);
  llvm::Error evalLearnedPosition(tfm::LearnedPositionOp op);
  llvm::Error evalSinusoidal(tfm::SinusoidalPositionOp op);
  llvm::Error evalMultiplicativePosition(tfm::MultiplicativePositionOp op);
  llvm::Error evalRecursivePosition(tfm::RecursivePositionOp op);
  llvm::Error evalComplexEmbedding(tfm::ComplexEmbeddingOp op);
  llvm::Error evalComplexLinear(tfm::ComplexLinearOp op);
  /// Binds the result of a function of AbsolutePositions.h, or reports its
  /// error as the op's.
  llvm::Error defineOrError(Operation *op, llvm::Expected<Tensor> t) {
    if (!t)
      return opError(op, llvm::toString(t.takeError()));
    return define(op, std::move(*t));
  }
  llvm::Expected<const Tensor *> normInput(Operation *op, Value input, Value residual,
                                          Tensor &sum);
  llvm::Error evalLayerNorm(tfm::LayerNormOp op);
  llvm::Error evalRmsNorm(tfm::RmsNormOp op);
  llvm::Error evalLinear(tfm::LinearOp op);
  llvm::Error evalMatmul(tfm::MatmulOp op);
  /// `fn` on floats; on an integer result, `intFn` on int64 and the result
  /// wrapped to the type (an op without one is float-only).
  llvm::Error evalBinary(Operation *op, double (*fn)(double, double),
                         int64_t (*intFn)(int64_t, int64_t) = nullptr);
  llvm::Error evalCompare(tfm::CompareOp op);
  llvm::Error evalCast(tfm::CastOp op);
  llvm::Error evalWhere(tfm::WhereOp op);
  llvm::Error evalUnary(Operation *op, double (*fn)(double),
                        int64_t (*intFn)(int64_t) = nullptr);
  llvm::Error evalSoftmax(tfm::SoftmaxOp op);
  llvm::Error evalCausalMask(tfm::CausalMaskOp op);
  llvm::Error evalReshape(tfm::ReshapeOp op);
  llvm::Error evalTranspose(tfm::TransposeOp op);
  llvm::Error evalRepeatInterleave(tfm::RepeatInterleaveOp op);
  llvm::Error evalExpand(tfm::ExpandOp op);
  llvm::Error evalSlice(tfm::SliceOp op);
  llvm::Error evalConcat(tfm::ConcatOp op);
  llvm::Error evalArange(tfm::ArangeOp op);
  llvm::Error evalGatherElements(tfm::GatherElementsOp op);
  llvm::Error evalAttention(tfm::AttentionOp op);
  llvm::Error evalScoreBias(tfm::ScoreBiasOp op);
  llvm::Error evalScoreValues(tfm::ScoreValuesOp op);
  llvm::Error evalRope(tfm::RopeOp op);
  /// The score modifiers `dicts` with their operand groups, checked against
  /// the concrete dims.
  llvm::Expected<ModifierTerms>
  resolveModifiers(Operation *op, llvm::ArrayRef<mlir::DictionaryAttr> dicts,
                   llvm::ArrayRef<ValueRange> groups,
                   const modifiers::AttentionDims &dims);
  llvm::Error evalConstant(arith::ConstantOp op);
  llvm::Error evalReturn(func::ReturnOp op);

  const WeightLookup &weights;
  llvm::DenseMap<Value, Tensor> values;
  std::optional<std::vector<Tensor>> results;
  func::FuncOp function;
};

llvm::Error Interpreter::define(Operation *op, Tensor t, unsigned index) {
  auto type = dyn_cast<RankedTensorType>(op->getResult(index).getType());
  if (!type)
    return opError(op, "expected a ranked tensor result, got " +
                           typeString(op->getResult(index).getType()));
  std::optional<ScalarType> dtype = scalarTypeOf(type.getElementType());
  if (!dtype)
    return opError(op, "unsupported element type in result type " +
                           typeString(type));
  if (type.getRank() != static_cast<int64_t>(t.shape.size()))
    return opError(op, llvm::formatv("result {0} has rank {1} but the IR "
                                     "declares {2}",
                                     index, t.shape.size(), type.getRank()));
  for (auto [i, d] : llvm::enumerate(type.getShape()))
    if (!ShapedType::isDynamic(d) && d != t.shape[i])
      return opError(op, llvm::formatv("result {0} dimension {1} is {2} but "
                                       "the IR declares {3}",
                                       index, i, t.shape[i], d));
  t.dtype = *dtype;
  // An f32 tensor holds floats: each op's result is rounded to float, as
  // the graph it models stores it. This is what makes a mask of finfo.min
  // or -1e9 absorb the score it is added to (s + finfo.min == finfo.min in
  // float, not in double), so a row with every key masked by a finite fill
  // is the uniform average PyTorch and ONNX Runtime compute. (f16 and bf16
  // results stay in double: their kernels compute in f32.)
  if (*dtype == ScalarType::F32)
    for (double &v : t.data)
      v = static_cast<double>(static_cast<float>(v));
  values[op->getResult(index)] = std::move(t);
  return llvm::Error::success();
}

llvm::Expected<std::vector<Tensor>>
Interpreter::run(func::FuncOp fn, llvm::ArrayRef<Tensor> inputs) {
  function = fn;
  if (fn.isExternal())
    return makeError("function '@" + fn.getSymName() + "' has no body");
  if (inputs.size() != fn.getNumArguments())
    return makeError(
        llvm::formatv("function '@{0}' expects {1} inputs, got {2}",
                      fn.getSymName(), fn.getNumArguments(), inputs.size()));
  for (auto [i, arg] : llvm::enumerate(fn.getArguments())) {
    const Tensor &in = inputs[i];
    auto type = dyn_cast<RankedTensorType>(arg.getType());
    if (!type)
      return makeError(llvm::formatv("argument {0} has type {1}; expected a "
                                     "ranked tensor",
                                     i, typeString(arg.getType())));
    std::optional<ScalarType> dtype = scalarTypeOf(type.getElementType());
    if (!dtype)
      return makeError(llvm::formatv("argument {0}: unsupported element type "
                                     "in {1}",
                                     i, typeString(type)));
    if (in.dtype != *dtype)
      return makeError(llvm::formatv("argument {0} has dtype {1} but the IR "
                                     "declares {2}",
                                     i, mlirTypeName(in.dtype), typeString(type)));
    if (static_cast<int64_t>(in.shape.size()) != type.getRank())
      return makeError(llvm::formatv("argument {0} has rank {1} but the IR "
                                     "declares {2}",
                                     i, in.shape.size(), type.getRank()));
    for (auto [d, size] : llvm::enumerate(in.shape)) {
      if (size < 0)
        return makeError(llvm::formatv("argument {0} dimension {1} is "
                                       "negative ({2})",
                                       i, d, size));
      int64_t declared = type.getDimSize(d);
      if (!ShapedType::isDynamic(declared) && declared != size)
        return makeError(llvm::formatv("argument {0} dimension {1} is {2} but "
                                       "the IR declares {3}",
                                       i, d, size, declared));
    }
    if (static_cast<int64_t>(in.data.size()) != in.numElements())
      return makeError(llvm::formatv("argument {0} holds {1} values but its "
                                     "shape {2} needs {3}",
                                     i, in.data.size(), shapeString(in.shape),
                                     in.numElements()));
    values[arg] = in;
  }

  for (Operation &op : fn.getBody().front()) {
    if (llvm::Error err = eval(&op))
      return std::move(err);
    if (results)
      break;
  }
  if (!results)
    return makeError("function '@" + fn.getSymName() +
                     "' ended without func.return");
  return std::move(*results);
}

llvm::Error Interpreter::eval(Operation *op) {
  return llvm::TypeSwitch<Operation *, llvm::Error>(op)
      .Case([&](tfm::WeightOp o) { return evalWeight(o); })
      .Case([&](tfm::EmbeddingOp o) { return evalEmbedding(o); })
      .Case([&](tfm::LearnedPositionOp o) { return evalLearnedPosition(o); })
      .Case([&](tfm::SinusoidalPositionOp o) { return evalSinusoidal(o); })
      .Case([&](tfm::MultiplicativePositionOp o) {
        return evalMultiplicativePosition(o);
      })
      .Case([&](tfm::RecursivePositionOp o) { return evalRecursivePosition(o); })
      .Case([&](tfm::ComplexEmbeddingOp o) { return evalComplexEmbedding(o); })
      .Case([&](tfm::ComplexLinearOp o) { return evalComplexLinear(o); })
      .Case([&](tfm::LayerNormOp o) { return evalLayerNorm(o); })
      .Case([&](tfm::RmsNormOp o) { return evalRmsNorm(o); })
      .Case([&](tfm::LinearOp o) { return evalLinear(o); })
      .Case([&](tfm::MatmulOp o) { return evalMatmul(o); })
      // Integers wrap: the arithmetic is done on uint64, where it is
      // defined to, and evalBinary narrows an i32 result.
      .Case([&](tfm::AddOp o) {
        return evalBinary(
            o, [](double a, double b) { return a + b; },
            [](int64_t a, int64_t b) { return int64_t(uint64_t(a) + uint64_t(b)); });
      })
      .Case([&](tfm::SubOp o) {
        return evalBinary(
            o, [](double a, double b) { return a - b; },
            [](int64_t a, int64_t b) { return int64_t(uint64_t(a) - uint64_t(b)); });
      })
      .Case([&](tfm::MulOp o) {
        return evalBinary(
            o, [](double a, double b) { return a * b; },
            [](int64_t a, int64_t b) { return int64_t(uint64_t(a) * uint64_t(b)); });
      })
      .Case([&](tfm::DivOp o) {
        return evalBinary(o, [](double a, double b) { return a / b; });
      })
      .Case([&](tfm::MinimumOp o) {
        return evalBinary(
            o,
            [](double a, double b) {
              return std::isnan(a) || std::isnan(b) ? std::nan("") : std::min(a, b);
            },
            [](int64_t a, int64_t b) { return std::min(a, b); });
      })
      .Case([&](tfm::MaximumOp o) {
        return evalBinary(
            o,
            [](double a, double b) {
              return std::isnan(a) || std::isnan(b) ? std::nan("") : std::max(a, b);
            },
            [](int64_t a, int64_t b) { return std::max(a, b); });
      })
      .Case([&](tfm::CompareOp o) { return evalCompare(o); })
      .Case([&](tfm::CastOp o) { return evalCast(o); })
      .Case([&](tfm::WhereOp o) { return evalWhere(o); })
      .Case([&](tfm::ReluOp o) {
        return evalUnary(o, relu);
      })
      .Case([&](tfm::SiluOp o) {
        return evalUnary(o, silu);
      })
      .Case([&](tfm::NegOp o) {
        return evalUnary(
            o, [](double x) { return -x; },
            [](int64_t x) { return int64_t(0 - uint64_t(x)); });
      })
      .Case([&](tfm::AbsOp o) {
        // |INT_MIN| wraps to INT_MIN, as negation does.
        return evalUnary(
            o, [](double x) { return std::fabs(x); },
            [](int64_t x) { return x < 0 ? int64_t(0 - uint64_t(x)) : x; });
      })
      .Case([&](tfm::LogOp o) {
        return evalUnary(o, [](double x) { return std::log(x); });
      })
      .Case([&](tfm::SignOp o) {
        // Zeros and NaN are their own sign.
        return evalUnary(
            o, [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; },
            [](int64_t x) { return int64_t(x > 0) - int64_t(x < 0); });
      })
      .Case([&](tfm::CeilOp o) {
        return evalUnary(o, [](double x) { return std::ceil(x); });
      })
      .Case([&](tfm::CosOp o) {
        return evalUnary(o, [](double x) { return std::cos(x); });
      })
      .Case([&](tfm::SinOp o) {
        return evalUnary(o, [](double x) { return std::sin(x); });
      })
      .Case([&](tfm::TanhOp o) {
        return evalUnary(o, [](double x) { return std::tanh(x); });
      })
      .Case([&](tfm::GeluOp o) {
        return evalUnary(o, o.getApproximate() == tfm::GeluApproxKind::tanh
                                ? geluTanh
                                : geluErf);
      })
      .Case([&](tfm::SoftmaxOp o) { return evalSoftmax(o); })
      .Case([&](tfm::CausalMaskOp o) { return evalCausalMask(o); })
      .Case([&](tfm::ReshapeOp o) { return evalReshape(o); })
      .Case([&](tfm::TransposeOp o) { return evalTranspose(o); })
      .Case([&](tfm::RepeatInterleaveOp o) { return evalRepeatInterleave(o); })
      .Case([&](tfm::ExpandOp o) { return evalExpand(o); })
      .Case([&](tfm::SliceOp o) { return evalSlice(o); })
      .Case([&](tfm::ConcatOp o) { return evalConcat(o); })
      .Case([&](tfm::ArangeOp o) { return evalArange(o); })
      .Case([&](tfm::GatherElementsOp o) { return evalGatherElements(o); })
      .Case([&](tfm::AttentionOp o) { return evalAttention(o); })
      .Case([&](tfm::ScoreBiasOp o) { return evalScoreBias(o); })
      .Case([&](tfm::ScoreValuesOp o) { return evalScoreValues(o); })
      .Case([&](tfm::RopeOp o) { return evalRope(o); })
      .Case([&](arith::ConstantOp o) { return evalConstant(o); })
      .Case([&](func::ReturnOp o) { return evalReturn(o); })
      .Default([&](Operation *o) {
        return opError(o, "unsupported op in the reference evaluator");
      });
}

//===----------------------------------------------------------------------===//
// Parameters, embeddings, positions
//===----------------------------------------------------------------------===//

llvm::Error Interpreter::evalWeight(tfm::WeightOp op) {
  auto type = dyn_cast<RankedTensorType>(op.getType());
  if (!type || !type.hasStaticShape())
    return opError(op, "weight '" + op.getName() +
                           "': expected a statically shaped tensor, got " +
                           typeString(op.getType()));
  if (!weights)
    return opError(op, "weight '" + op.getName() +
                           "': no weights were given to the evaluator");
  llvm::Expected<Tensor> value = weights(op.getBlobKey(), type);
  if (!value)
    return opError(op, "weight '" + op.getName() +
                           "': " + llvm::toString(value.takeError()));
  if (llvm::ArrayRef<int64_t>(value->shape) != type.getShape())
    return opError(op, "weight '" + op.getName() + "' has shape " +
                           shapeString(value->shape) + " but the IR declares " +
                           shapeString(type.getShape()));
  if (static_cast<int64_t>(value->data.size()) != value->numElements())
    return opError(op, llvm::formatv("weight '{0}' holds {1} values but its "
                                     "shape needs {2}",
                                     op.getName(), value->data.size(),
                                     value->numElements()));
  return define(op, std::move(*value));
}

llvm::Error Interpreter::evalEmbedding(tfm::EmbeddingOp op) {
  const Tensor &table = get(op.getTable());
  const Tensor &ids = get(op.getIds());
  if (table.shape.size() != 2)
    return opError(op, llvm::formatv("expected 'table' rank 2, got {0}",
                                     table.shape.size()));
  int64_t V = table.shape[0], D = table.shape[1];
  std::vector<int64_t> shape = ids.shape;
  shape.push_back(D);
  Tensor out = makeTensor(ScalarType::F32, shape);
  for (int64_t p = 0, n = ids.numElements(); p < n; ++p) {
    double raw = ids.data[p];
    if (!(raw >= 0 && raw < static_cast<double>(V)) || raw != std::floor(raw))
      return opError(op, "id " + numberString(raw) + " at ids" +
                             indexString(p, ids.shape) +
                             " is outside the table's range [0, " +
                             llvm::Twine(V) + ")");
    int64_t id = static_cast<int64_t>(raw);
    std::copy_n(&table.data[id * D], D, &out.data[p * D]);
  }
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalLearnedPosition(tfm::LearnedPositionOp op) {
  const Tensor &in = get(op.getInput());
  const Tensor &table = get(op.getTable());
  if (in.shape.size() != 3)
    return opError(
        op, llvm::formatv("expected 'input' rank 3, got {0}", in.shape.size()));
  if (table.shape.size() != 2)
    return opError(op, llvm::formatv("expected 'table' rank 2, got {0}",
                                     table.shape.size()));
  int64_t B = in.shape[0], S = in.shape[1], D = in.shape[2];
  if (table.shape[1] != D)
    return opError(op, llvm::formatv("expected 'table' width {0} (the input's "
                                     "last dimension), got {1}",
                                     D, table.shape[1]));
  if (S > table.shape[0])
    return opError(op, llvm::formatv("sequence length {0} exceeds the "
                                     "position table's {1} rows",
                                     S, table.shape[0]));
  Tensor out = makeTensor(ScalarType::F32, in.shape);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s)
      for (int64_t d = 0; d < D; ++d)
        out.data[(b * S + s) * D + d] =
            in.data[(b * S + s) * D + d] + table.data[s * D + d];
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalSinusoidal(tfm::SinusoidalPositionOp op) {
  const Tensor &in = get(op.getInput());
  if (in.shape.size() != 3)
    return opError(
        op, llvm::formatv("expected 'input' rank 3, got {0}", in.shape.size()));
  double minTs = op.getMinTimescale().convertToDouble();
  double maxTs = op.getMaxTimescale().convertToDouble();
  if (!(minTs > 0) || !(maxTs > 0))
    return opError(op, llvm::formatv("expected positive timescales, got "
                                     "min {0} and max {1}",
                                     minTs, maxTs));
  int64_t B = in.shape[0], S = in.shape[1], D = in.shape[2];
  Tensor out = makeTensor(ScalarType::F32, in.shape);
  for (int64_t s = 0; s < S; ++s)
    for (int64_t d = 0; d < D; ++d) {
      double pe = reference::detail::sinusoid(op.getForm(), s, d, D, minTs, maxTs);
      for (int64_t b = 0; b < B; ++b)
        out.data[(b * S + s) * D + d] = in.data[(b * S + s) * D + d] + pe;
    }
  return define(op, std::move(out));
}

llvm::Error
Interpreter::evalMultiplicativePosition(tfm::MultiplicativePositionOp op) {
  const Tensor *table = op.getTable() ? &get(op.getTable()) : nullptr;
  return defineOrError(op, reference::detail::multiplicativePosition(
                               get(op.getInput()), table, op.getFormOrDefault(),
                               op.getMinTimescaleOrDefault(),
                               op.getMaxTimescaleOrDefault()));
}

llvm::Error Interpreter::evalRecursivePosition(tfm::RecursivePositionOp op) {
  return defineOrError(
      op, reference::detail::recursivePosition(get(op.getInput()), get(op.getP0()),
                                    get(op.getW1()), get(op.getB1()),
                                    get(op.getW2()), get(op.getB2()),
                                    op.getTimeStep().convertToDouble()));
}

llvm::Error Interpreter::evalComplexEmbedding(tfm::ComplexEmbeddingOp op) {
  return defineOrError(op, reference::detail::complexEmbedding(
                               get(op.getIds()), get(op.getAmplitude()),
                               get(op.getFrequency()), get(op.getPhase()),
                               op.getFirstPosition()));
}

llvm::Error Interpreter::evalComplexLinear(tfm::ComplexLinearOp op) {
  const Tensor *biasReal = op.getBiasReal() ? &get(op.getBiasReal()) : nullptr;
  const Tensor *biasImag = op.getBiasImag() ? &get(op.getBiasImag()) : nullptr;
  return defineOrError(op, reference::detail::complexLinear(get(op.getInput()),
                                                 get(op.getWeightReal()),
                                                 get(op.getWeightImag()),
                                                 biasReal, biasImag));
}

//===----------------------------------------------------------------------===//
// Norms and linear algebra
//===----------------------------------------------------------------------===//

/// Checks that `param` is a vector as long as the last dimension of `in`.
llvm::Error checkLastDimVector(Operation *op, llvm::StringRef what,
                               const Tensor &param, const Tensor &in) {
  if (in.shape.empty())
    return opError(op, "expected 'input' of rank at least 1, got a scalar");
  if (param.shape.size() != 1 || param.shape[0] != in.shape.back())
    return opError(op,
                   llvm::formatv("expected '{0}' of shape [{1}], got {2}", what,
                                 in.shape.back(), shapeString(param.shape)));
  return llvm::Error::success();
}

/// A norm's row source: its input, or input + residual (computed into
/// `sum`) rounded as the tfm.add it stands for rounds its result (to float
/// for f32; f16 and bf16 stay in double, their kernels computing in f32).
llvm::Expected<const Tensor *> Interpreter::normInput(Operation *op, Value input,
                                                      Value residual, Tensor &sum) {
  const Tensor &in = get(input);
  if (!residual)
    return &in;
  const Tensor &r = get(residual);
  if (r.shape != in.shape)
    return opError(op, "expected 'residual' of shape " + shapeString(in.shape) + ", got " +
                           shapeString(r.shape));
  sum = in;
  const bool f32 = isa<Float32Type>(cast<RankedTensorType>(input.getType()).getElementType());
  for (size_t i = 0; i < sum.data.size(); ++i) {
    sum.data[i] += r.data[i];
    if (f32)
      sum.data[i] = static_cast<double>(static_cast<float>(sum.data[i]));
  }
  return &sum;
}

llvm::Error Interpreter::evalLayerNorm(tfm::LayerNormOp op) {
  Tensor sum;
  llvm::Expected<const Tensor *> source = normInput(op, op.getInput(), op.getResidual(), sum);
  if (!source)
    return source.takeError();
  const Tensor &in = **source;
  const Tensor &gamma = get(op.getGamma());
  const Tensor &beta = get(op.getBeta());
  if (llvm::Error err = checkLastDimVector(op, "gamma", gamma, in))
    return err;
  if (llvm::Error err = checkLastDimVector(op, "beta", beta, in))
    return err;
  double eps = op.getEpsilon().convertToDouble();
  int64_t D = in.shape.back();
  int64_t rows = leadingElements(in.shape, 1);
  Tensor out = makeTensor(ScalarType::F32, in.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *x = &in.data[r * D];
    double mean = 0;
    for (int64_t d = 0; d < D; ++d)
      mean += x[d];
    mean /= static_cast<double>(D);
    double var = 0;
    for (int64_t d = 0; d < D; ++d)
      var += (x[d] - mean) * (x[d] - mean);
    var /= static_cast<double>(D);
    double inv = 1.0 / std::sqrt(var + eps);
    for (int64_t d = 0; d < D; ++d)
      out.data[r * D + d] = (x[d] - mean) * inv * gamma.data[d] + beta.data[d];
  }
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalRmsNorm(tfm::RmsNormOp op) {
  Tensor sum;
  llvm::Expected<const Tensor *> source = normInput(op, op.getInput(), op.getResidual(), sum);
  if (!source)
    return source.takeError();
  const Tensor &in = **source;
  const Tensor &gamma = get(op.getGamma());
  if (llvm::Error err = checkLastDimVector(op, "gamma", gamma, in))
    return err;
  double eps = op.getEpsilon().convertToDouble();
  int64_t D = in.shape.back();
  int64_t rows = leadingElements(in.shape, 1);
  Tensor out = makeTensor(ScalarType::F32, in.shape);
  for (int64_t r = 0; r < rows; ++r) {
    const double *x = &in.data[r * D];
    double meanSquare = 0;
    for (int64_t d = 0; d < D; ++d)
      meanSquare += x[d] * x[d];
    meanSquare /= static_cast<double>(D);
    double inv = 1.0 / std::sqrt(meanSquare + eps);
    for (int64_t d = 0; d < D; ++d)
      out.data[r * D + d] = x[d] * inv * gamma.data[d];
  }
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalLinear(tfm::LinearOp op) {
  const Tensor &in = get(op.getInput());
  const Tensor &w = get(op.getWeight());
  if (in.shape.empty())
    return opError(op, "expected 'input' of rank at least 1, got a scalar");
  if (w.shape.size() != 2)
    return opError(
        op, llvm::formatv("expected 'weight' rank 2, got {0}", w.shape.size()));
  int64_t K = w.shape[0], N = w.shape[1];
  if (in.shape.back() != K)
    return opError(op, llvm::formatv("expected 'input' last dimension {0} "
                                     "(the weight's rows), got {1}",
                                     K, in.shape.back()));
  const Tensor *bias = op.getBias() ? &get(op.getBias()) : nullptr;
  if (bias && (bias->shape.size() != 1 || bias->shape[0] != N))
    return opError(op, llvm::formatv("expected 'bias' of shape [{0}], got {1}",
                                     N, shapeString(bias->shape)));
  std::vector<int64_t> shape = in.shape;
  shape.back() = N;
  int64_t rows = leadingElements(in.shape, 1);
  Tensor out = makeTensor(ScalarType::F32, shape);
  // k outside n walks the weight row by row; each output still sums over k
  // in order, so the result is the same as the textbook loop nest.
  for (int64_t r = 0; r < rows; ++r) {
    double *acc = &out.data[r * N];
    for (int64_t n = 0; n < N; ++n)
      acc[n] = bias ? bias->data[n] : 0.0;
    for (int64_t k = 0; k < K; ++k) {
      double x = in.data[r * K + k];
      const double *wk = &w.data[k * N];
      for (int64_t n = 0; n < N; ++n)
        acc[n] += x * wk[n];
    }
  }
  if (double (*activation)(double) = activationFunction(op.getActivation()))
    for (double &v : out.data)
      v = activation(v);
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalMatmul(tfm::MatmulOp op) {
  const Tensor &a = get(op.getLhs());
  const Tensor &b = get(op.getRhs());
  size_t rank = a.shape.size();
  if (rank < 2 || b.shape.size() != rank)
    return opError(op,
                   llvm::formatv("expected operands of equal rank >= 2, "
                                 "got {0} and {1}",
                                 shapeString(a.shape), shapeString(b.shape)));
  for (size_t i = 0; i + 2 < rank; ++i)
    if (a.shape[i] != b.shape[i])
      return opError(op, llvm::formatv("batch dimension {0} differs: 'lhs' "
                                       "has {1}, 'rhs' has {2}",
                                       i, a.shape[i], b.shape[i]));
  bool ta = op.getTransposeA(), tb = op.getTransposeB();
  int64_t M = ta ? a.shape[rank - 1] : a.shape[rank - 2];
  int64_t K = ta ? a.shape[rank - 2] : a.shape[rank - 1];
  int64_t Kb = tb ? b.shape[rank - 1] : b.shape[rank - 2];
  int64_t N = tb ? b.shape[rank - 2] : b.shape[rank - 1];
  if (K != Kb)
    return opError(op, llvm::formatv("contraction sizes differ: 'lhs' {0} "
                                     "gives {1}, 'rhs' {2} gives {3}",
                                     shapeString(a.shape), K,
                                     shapeString(b.shape), Kb));
  std::vector<int64_t> shape(a.shape.begin(), a.shape.end() - 2);
  int64_t batch = 1;
  for (int64_t d : shape)
    batch *= d;
  shape.push_back(M);
  shape.push_back(N);
  Tensor out = makeTensor(ScalarType::F32, shape);
  for (int64_t bt = 0; bt < batch; ++bt) {
    const double *A = a.data.data() + bt * M * K;
    const double *B = b.data.data() + bt * K * N;
    double *C = out.data.data() + bt * M * N;
    // The loop order follows B's layout for locality; every C[i, j] is
    // still a sum over k in increasing order starting from 0.
    for (int64_t i = 0; i < M; ++i) {
      if (tb) {
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k)
            acc += (ta ? A[k * M + i] : A[i * K + k]) * B[j * K + k];
          C[i * N + j] = acc;
        }
        continue;
      }
      for (int64_t k = 0; k < K; ++k) {
        double a_ik = ta ? A[k * M + i] : A[i * K + k];
        for (int64_t j = 0; j < N; ++j)
          C[i * N + j] += a_ik * B[k * N + j];
      }
    }
  }
  return define(op, std::move(out));
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

llvm::Error Interpreter::evalBinary(Operation *op, double (*fn)(double, double),
                                    int64_t (*intFn)(int64_t, int64_t)) {
  const Tensor &a = get(op->getOperand(0));
  const Tensor &b = get(op->getOperand(1));
  std::optional<std::vector<int64_t>> shape =
      broadcastShapes({a.shape, b.shape});
  if (!shape)
    return opError(op, "cannot broadcast 'lhs' " + shapeString(a.shape) +
                           " with 'rhs' " + shapeString(b.shape));
  std::optional<ScalarType> type = resultType(op);
  bool integer = type && isIntegerType(*type);
  if (integer && !intFn)
    return opError(op, "expected a float element type, got " + llvm::Twine(mlirTypeName(*type)));
  std::vector<int64_t> sa = broadcastStrides(a.shape, *shape);
  std::vector<int64_t> sb = broadcastStrides(b.shape, *shape);
  Tensor out = makeTensor(ScalarType::F32, *shape);
  for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
    double x = a.data[offsetOf(i, *shape, sa)], y = b.data[offsetOf(i, *shape, sb)];
    out.data[i] = integer ? wrapTo(intFn(asInt64(x), asInt64(y)), *type) : fn(x, y);
  }
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalCompare(tfm::CompareOp op) {
  const Tensor &a = get(op.getLhs());
  const Tensor &b = get(op.getRhs());
  std::optional<std::vector<int64_t>> shape = broadcastShapes({a.shape, b.shape});
  if (!shape)
    return opError(op, "cannot broadcast 'lhs' " + shapeString(a.shape) +
                           " with 'rhs' " + shapeString(b.shape));
  std::vector<int64_t> sa = broadcastStrides(a.shape, *shape);
  std::vector<int64_t> sb = broadcastStrides(b.shape, *shape);
  // Integers are exact as doubles up to 2^53.
  Tensor out = makeTensor(ScalarType::Bool, *shape);
  for (int64_t i = 0, n = out.numElements(); i < n; ++i) {
    bool holds = reference::detail::compareElements(a.data[offsetOf(i, *shape, sa)],
                                                    b.data[offsetOf(i, *shape, sb)],
                                                    op.getPredicate());
    out.data[i] = holds ? 1.0 : 0.0;
  }
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalCast(tfm::CastOp op) {
  const Tensor &in = get(op.getInput());
  std::optional<ScalarType> to = resultType(op);
  if (!to)
    return opError(op, "unsupported element type in result type " +
                           typeString(op.getResult().getType()));
  Tensor out = makeTensor(*to, in.shape);
  for (size_t i = 0; i < in.data.size(); ++i)
    out.data[i] = reference::detail::castElement(in.data[i], in.dtype, *to);
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalWhere(tfm::WhereOp op) {
  const Tensor &c = get(op.getCondition());
  const Tensor &t = get(op.getOnTrue());
  const Tensor &f = get(op.getOnFalse());
  std::optional<std::vector<int64_t>> shape =
      broadcastShapes({c.shape, t.shape, f.shape});
  if (!shape)
    return opError(op, "cannot broadcast 'condition' " + shapeString(c.shape) +
                           ", 'on_true' " + shapeString(t.shape) +
                           " and 'on_false' " + shapeString(f.shape));
  std::vector<int64_t> sc = broadcastStrides(c.shape, *shape);
  std::vector<int64_t> st = broadcastStrides(t.shape, *shape);
  std::vector<int64_t> sf = broadcastStrides(f.shape, *shape);
  Tensor out = makeTensor(ScalarType::F32, *shape);
  for (int64_t i = 0, n = out.numElements(); i < n; ++i)
    out.data[i] = c.data[offsetOf(i, *shape, sc)] != 0
                      ? t.data[offsetOf(i, *shape, st)]
                      : f.data[offsetOf(i, *shape, sf)];
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalUnary(Operation *op, double (*fn)(double),
                                   int64_t (*intFn)(int64_t)) {
  Tensor out = get(op->getOperand(0));
  std::optional<ScalarType> type = resultType(op);
  bool integer = type && isIntegerType(*type);
  if (integer && !intFn)
    return opError(op, "expected a float element type, got " + llvm::Twine(mlirTypeName(*type)));
  for (double &x : out.data)
    x = integer ? wrapTo(intFn(asInt64(x)), *type) : fn(x);
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalSoftmax(tfm::SoftmaxOp op) {
  const Tensor &in = get(op.getInput());
  int64_t rank = static_cast<int64_t>(in.shape.size());
  std::optional<int64_t> axis = normalizeAxis(op.getAxisAttr().getInt(), rank);
  if (!axis)
    return opError(op, llvm::formatv("axis {0} is out of range for rank {1}",
                                     op.getAxisAttr().getInt(), rank));
  int64_t outer = 1, inner = 1, L = in.shape[*axis];
  for (int64_t i = 0; i < *axis; ++i)
    outer *= in.shape[i];
  for (int64_t i = *axis + 1; i < rank; ++i)
    inner *= in.shape[i];
  // A row of all -inf (every key masked) is 0, as tfm.attention defines it
  // and the kernels compute it: the formula's 0/0 (NaN in PyTorch) would
  // make the unfused form of a masked attention differ from the fused one.
  Tensor out = makeTensor(ScalarType::F32, in.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t in_ = 0; in_ < inner; ++in_) {
      auto at = [&](int64_t l) { return (o * L + l) * inner + in_; };
      double m = -kInf;
      for (int64_t l = 0; l < L; ++l)
        m = std::max(m, in.data[at(l)]);
      if (m == -kInf)
        continue; // zeros
      double sum = 0;
      for (int64_t l = 0; l < L; ++l)
        sum += std::exp(in.data[at(l)] - m);
      for (int64_t l = 0; l < L; ++l)
        out.data[at(l)] = std::exp(in.data[at(l)] - m) / sum;
    }
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalCausalMask(tfm::CausalMaskOp op) {
  const Tensor &in = get(op.getInput());
  size_t rank = in.shape.size();
  if (rank < 2)
    return opError(op, llvm::formatv("expected 'input' of rank at least 2, "
                                     "got {0}",
                                     rank));
  double value = op.getValue().convertToDouble();
  int64_t Sq = in.shape[rank - 2], Sk = in.shape[rank - 1];
  int64_t batch = leadingElements(in.shape, 2);
  Tensor out = in;
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < Sq; ++i)
      for (int64_t j = 0; j < Sk; ++j)
        if (j > i + (Sk - Sq))
          out.data[(b * Sq + i) * Sk + j] = value;
  return define(op, std::move(out));
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

llvm::Error Interpreter::evalReshape(tfm::ReshapeOp op) {
  const Tensor &in = get(op.getInput());
  auto inType = cast<RankedTensorType>(op.getInput().getType());
  auto outType = cast<RankedTensorType>(op.getType());
  // Dynamic dimensions are carried through in order (TfmOps.td); when the
  // counts differ, a single dynamic result dimension is inferred from the
  // element count.
  std::vector<int64_t> dynamicSizes;
  for (auto [i, d] : llvm::enumerate(inType.getShape()))
    if (ShapedType::isDynamic(d))
      dynamicSizes.push_back(in.shape[i]);
  std::vector<int64_t> shape(outType.getShape().begin(),
                             outType.getShape().end());
  int64_t numDynamic = outType.getNumDynamicDims();
  if (numDynamic == static_cast<int64_t>(dynamicSizes.size())) {
    size_t next = 0;
    for (int64_t &d : shape)
      if (ShapedType::isDynamic(d))
        d = dynamicSizes[next++];
  } else if (numDynamic == 1) {
    int64_t known = 1;
    for (int64_t d : shape)
      if (!ShapedType::isDynamic(d))
        known *= d;
    if (known == 0 || in.numElements() % known != 0)
      return opError(op,
                     llvm::formatv("cannot reshape {0} to {1}",
                                   shapeString(in.shape), typeString(outType)));
    for (int64_t &d : shape)
      if (ShapedType::isDynamic(d))
        d = in.numElements() / known;
  } else {
    return opError(op, "cannot tell the sizes of the dynamic dimensions of " +
                           typeString(outType) + " from input " +
                           typeString(inType));
  }
  Tensor out = in;
  out.shape = shape;
  if (out.numElements() != in.numElements())
    return opError(op, llvm::formatv("cannot reshape {0} ({1} elements) to "
                                     "{2} ({3} elements)",
                                     shapeString(in.shape), in.numElements(),
                                     shapeString(shape), out.numElements()));
  return define(op, std::move(out));
}

/// `in` with its dims permuted: result dim k is input dim perm[k] (a valid
/// permutation of in's rank).
static Tensor permuted(const Tensor &in, llvm::ArrayRef<int64_t> perm) {
  size_t rank = in.shape.size();
  std::vector<int64_t> shape(rank);
  std::vector<int64_t> inStrides = stridesOf(in.shape);
  std::vector<int64_t> readStrides(rank);
  for (size_t k = 0; k < rank; ++k) {
    shape[k] = in.shape[perm[k]];
    readStrides[k] = inStrides[perm[k]];
  }
  Tensor out = makeTensor(in.dtype, shape);
  for (int64_t i = 0, n = out.numElements(); i < n; ++i)
    out.data[i] = in.data[offsetOf(i, shape, readStrides)];
  return out;
}

llvm::Error Interpreter::evalTranspose(tfm::TransposeOp op) {
  const Tensor &in = get(op.getInput());
  llvm::ArrayRef<int64_t> perm = op.getPermutation();
  size_t rank = in.shape.size();
  std::vector<bool> seen(rank, false);
  if (perm.size() != rank)
    return opError(op, llvm::formatv("expected a permutation of {0} "
                                     "dimensions, got {1}",
                                     rank, shapeString(perm)));
  for (int64_t p : perm) {
    if (p < 0 || p >= static_cast<int64_t>(rank) || seen[p])
      return opError(op, "expected a permutation, got " + shapeString(perm));
    seen[p] = true;
  }
  return define(op, permuted(in, perm));
}

llvm::Error Interpreter::evalExpand(tfm::ExpandOp op) {
  const Tensor &in = get(op.getInput());
  RankedTensorType type = op.getResult().getType();
  int64_t rank = type.getRank(), offset = rank - static_cast<int64_t>(in.shape.size());
  if (offset < 0)
    return opError(op, "input " + shapeString(in.shape) + " has more dims than the result");
  // The result's static dims, and the input's where the type has `?` (the
  // verifier allows those only where the input is not stretched).
  std::vector<int64_t> shape(rank);
  for (int64_t d = 0; d < rank; ++d)
    shape[d] = type.isDynamicDim(d) ? in.shape[d - offset] : type.getDimSize(d);
  for (int64_t d = offset; d < rank; ++d)
    if (in.shape[d - offset] != 1 && in.shape[d - offset] != shape[d])
      return opError(op, "input " + shapeString(in.shape) + " does not broadcast to " +
                             shapeString(shape));
  std::vector<int64_t> strides = broadcastStrides(in.shape, shape);
  Tensor out = makeTensor(in.dtype, shape);
  for (int64_t i = 0, n = out.numElements(); i < n; ++i)
    out.data[i] = in.data[offsetOf(i, shape, strides)];
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalRepeatInterleave(tfm::RepeatInterleaveOp op) {
  const Tensor &in = get(op.getInput());
  int64_t rank = static_cast<int64_t>(in.shape.size());
  std::optional<int64_t> axis = normalizeAxis(op.getAxisAttr().getInt(), rank);
  if (!axis)
    return opError(op, llvm::formatv("axis {0} is out of range for rank {1}",
                                     op.getAxisAttr().getInt(), rank));
  int64_t repeats = op.getRepeatsAttr().getInt();
  if (repeats < 1)
    return opError(op,
                   llvm::formatv("expected repeats >= 1, got {0}", repeats));
  int64_t outer = 1, inner = 1, L = in.shape[*axis];
  for (int64_t i = 0; i < *axis; ++i)
    outer *= in.shape[i];
  for (int64_t i = *axis + 1; i < rank; ++i)
    inner *= in.shape[i];
  std::vector<int64_t> shape = in.shape;
  shape[*axis] = L * repeats;
  Tensor out = makeTensor(in.dtype, shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t l = 0; l < L * repeats; ++l)
      std::copy_n(&in.data[(o * L + l / repeats) * inner], inner,
                  &out.data[(o * L * repeats + l) * inner]);
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalSlice(tfm::SliceOp op) {
  const Tensor &in = get(op.getInput());
  int64_t rank = static_cast<int64_t>(in.shape.size());
  int64_t axis = op.getAxisAttr().getInt();
  int64_t start = op.getStartAttr().getInt(), end = op.getEndAttr().getInt();
  int64_t step = static_cast<int64_t>(op.getStep());
  if (axis < 0 || axis >= rank)
    return opError(op, llvm::formatv("axis {0} is out of range for rank {1}",
                                     axis, rank));
  int64_t L = in.shape[axis];
  if (step < 1 || start < 0 || start >= end || end > L)
    return opError(op, llvm::formatv("expected 0 <= start < end <= {0} and "
                                     "step >= 1, got start {1}, end {2}, step {3}",
                                     L, start, end, step));
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= in.shape[i];
  for (int64_t i = axis + 1; i < rank; ++i)
    inner *= in.shape[i];
  int64_t n = (end - start + step - 1) / step;
  std::vector<int64_t> shape = in.shape;
  shape[axis] = n;
  Tensor out = makeTensor(in.dtype, shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t k = 0; k < n; ++k)
      std::copy_n(&in.data[(o * L + start + k * step) * inner], inner,
                  &out.data[(o * n + k) * inner]);
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalConcat(tfm::ConcatOp op) {
  const Tensor &first = get(op.getInputs().front());
  int64_t rank = static_cast<int64_t>(first.shape.size());
  int64_t axis = op.getAxisAttr().getInt();
  if (axis < 0 || axis >= rank)
    return opError(op, llvm::formatv("axis {0} is out of range for rank {1}",
                                     axis, rank));
  std::vector<int64_t> shape = first.shape;
  shape[axis] = 0;
  for (auto [i, value] : llvm::enumerate(op.getInputs())) {
    const Tensor &t = get(value);
    bool agrees = t.shape.size() == first.shape.size();
    for (int64_t d = 0; agrees && d < rank; ++d)
      agrees = d == axis || t.shape[d] == first.shape[d];
    if (!agrees)
      return opError(op, "inputs #" + llvm::Twine(i) + " has shape " +
                             shapeString(t.shape) + ", which does not join " +
                             shapeString(first.shape) + " along axis " +
                             llvm::Twine(axis));
    shape[axis] += t.shape[axis];
  }
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= shape[i];
  for (int64_t i = axis + 1; i < rank; ++i)
    inner *= shape[i];
  Tensor out = makeTensor(first.dtype, shape);
  int64_t placed = 0; // rows of the axis filled so far
  for (Value value : op.getInputs()) {
    const Tensor &t = get(value);
    int64_t rows = t.shape[axis];
    for (int64_t o = 0; o < outer; ++o)
      std::copy_n(&t.data[o * rows * inner], rows * inner,
                  &out.data[(o * shape[axis] + placed) * inner]);
    placed += rows;
  }
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalArange(tfm::ArangeOp op) {
  const Tensor &like = get(op.getLike());
  int64_t axis = op.getAxisAttr().getInt();
  if (axis < 0 || axis >= static_cast<int64_t>(like.shape.size()))
    return opError(op, llvm::formatv("axis {0} is out of range for rank {1}",
                                     axis, like.shape.size()));
  // Integers are held as doubles, as every integer tensor is here (token
  // ids), exactly up to 2^53.
  int64_t start = static_cast<int64_t>(op.getStart());
  Tensor out = makeTensor(ScalarType::F32, {like.shape[axis]});
  for (int64_t n = 0; n < like.shape[axis]; ++n)
    out.data[n] = static_cast<double>(start + n);
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalGatherElements(tfm::GatherElementsOp op) {
  const Tensor &in = get(op.getInput());
  const Tensor &indices = get(op.getIndices());
  int64_t rank = static_cast<int64_t>(in.shape.size());
  int64_t axis = op.getAxisAttr().getInt();
  if (axis < 0 || axis >= rank)
    return opError(op, llvm::formatv("axis {0} is out of range for rank {1}",
                                     axis, rank));
  bool agrees = static_cast<int64_t>(indices.shape.size()) == rank;
  for (int64_t d = 0; agrees && d < rank; ++d)
    agrees = d == axis || indices.shape[d] == in.shape[d];
  if (!agrees)
    return opError(op, "indices of shape " + shapeString(indices.shape) +
                           " do not match input of shape " +
                           shapeString(in.shape) + " outside axis " +
                           llvm::Twine(axis));
  // Each output element reads the input at its own position with the axis
  // coordinate replaced by the index there: [outer, N, inner] against
  // [outer, L, inner], the other dims agreeing.
  int64_t outer = 1, inner = 1, L = in.shape[axis], N = indices.shape[axis];
  for (int64_t i = 0; i < axis; ++i)
    outer *= in.shape[i];
  for (int64_t i = axis + 1; i < rank; ++i)
    inner *= in.shape[i];
  Tensor out = makeTensor(in.dtype, indices.shape);
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t n = 0; n < N; ++n)
      for (int64_t i = 0; i < inner; ++i) {
        int64_t p = (o * N + n) * inner + i;
        double raw = indices.data[p];
        // ONNX's GatherElements: k < 0 counts from the end.
        if (!(raw >= -static_cast<double>(L) && raw < static_cast<double>(L)) ||
            raw != std::floor(raw))
          return opError(op, "index " + numberString(raw) + " at indices" +
                                 indexString(p, indices.shape) +
                                 " is outside [" + llvm::Twine(-L) + ", " +
                                 llvm::Twine(L) + ") along axis " +
                                 llvm::Twine(axis));
        int64_t k = static_cast<int64_t>(raw);
        if (k < 0)
          k += L;
        out.data[p] = in.data[(o * L + k) * inner + i];
      }
  return define(op, std::move(out));
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

llvm::Error Interpreter::evalAttention(tfm::AttentionOp op) {
  for (auto [name, value] :
       {std::pair<llvm::StringRef, Value>{"query", op.getQuery()},
        {"key", op.getKey()},
        {"value", op.getValue()}})
    if (get(value).shape.size() != 4)
      return opError(op, llvm::formatv("expected '{0}' rank 4, got {1}", name,
                                       get(value).shape.size()));
  // Evaluated in [B, H, S, D]; a bshd op's tensors are swapped into it and
  // its result back.
  const bool bshd = op.getLayout() == tfm::HeadLayoutKind::bshd;
  const int64_t kSwap[4] = {0, 2, 1, 3};
  Tensor swappedQ, swappedK, swappedV;
  if (bshd) {
    swappedQ = permuted(get(op.getQuery()), kSwap);
    swappedK = permuted(get(op.getKey()), kSwap);
    swappedV = permuted(get(op.getValue()), kSwap);
  }
  const Tensor &q = bshd ? swappedQ : get(op.getQuery());
  const Tensor &k = bshd ? swappedK : get(op.getKey());
  const Tensor &v = bshd ? swappedV : get(op.getValue());
  int64_t B = q.shape[0], H = q.shape[1], Sq = q.shape[2], D = q.shape[3];
  int64_t Hkv = k.shape[1], Sk = k.shape[2], Dv = v.shape[3];
  if (k.shape[0] != B || v.shape[0] != B)
    return opError(op, llvm::formatv("expected 'key' and 'value' batch {0}, "
                                     "got {1} and {2}",
                                     B, k.shape[0], v.shape[0]));
  if (k.shape[3] != D)
    return opError(op, llvm::formatv("expected 'key' head dim {0} (the "
                                     "query's), got {1}",
                                     D, k.shape[3]));
  if (v.shape[1] != Hkv || v.shape[2] != Sk)
    return opError(op, "expected 'value' heads and length to match 'key' " +
                           shapeString(k.shape) + ", got " +
                           shapeString(v.shape));
  if (Hkv == 0 || H % Hkv != 0)
    return opError(op, llvm::formatv("expected the {0} query heads to be a "
                                     "multiple of the {1} key/value heads",
                                     H, Hkv));
  int64_t group = H / Hkv;

  std::vector<int64_t> scoreShape = {B, H, Sq, Sk};
  const Tensor *mask = op.getMask() ? &get(op.getMask()) : nullptr;
  std::vector<int64_t> maskStrides;
  if (mask) {
    std::optional<std::vector<int64_t>> bs =
        broadcastShapes({mask->shape, scoreShape});
    if (mask->shape.size() > 4 || !bs || *bs != scoreShape)
      return opError(op, "expected 'mask' to broadcast to " +
                             shapeString(scoreShape) + ", got " +
                             shapeString(mask->shape));
    maskStrides = broadcastStrides(mask->shape, scoreShape);
  }
  const Tensor *padding =
      op.getKeyPaddingMask() ? &get(op.getKeyPaddingMask()) : nullptr;
  if (padding && padding->shape != std::vector<int64_t>{B, Sk})
    return opError(op, llvm::formatv("expected 'key_padding_mask' of shape "
                                     "[{0}, {1}], got {2}",
                                     B, Sk, shapeString(padding->shape)));

  ModifierTerms modifierTerms;
  if (ArrayAttr list = op.getModifiersAttr()) {
    SmallVector<DictionaryAttr> dicts;
    for (Attribute attr : list)
      dicts.push_back(cast<DictionaryAttr>(attr));
    auto resolved =
        resolveModifiers(op, dicts, op.getModifierOperandGroups(), {H, Sq, Sk, D, Dv});
    if (!resolved)
      return resolved.takeError();
    modifierTerms = std::move(*resolved);
  }
  const bool content = modifierTerms.hasContent();
  const bool valueTerms = modifierTerms.hasValue();

  // RoPE: rotated copies of q (at i + Sk - Sq + offset) and k (j + offset).
  const Tensor *qp = &q, *kp = &k;
  Tensor qRot, kRot;
  if (DictionaryAttr ropeAttr = op.getRopeAttr()) {
    codegen::RopeSpec rope;
    if (std::string problem = tfm::readRope(ropeAttr, D, rope); !problem.empty())
      return opError(op, problem);
    qRot = q, kRot = k;
    for (int64_t r = 0; r < B * H; ++r)
      for (int64_t i = 0; i < Sq; ++i)
        ropeRow(rope, double(i + (Sk - Sq) + rope.positionOffset),
                &qRot.data[(r * Sq + i) * D], D);
    for (int64_t r = 0; r < B * Hkv; ++r)
      for (int64_t j = 0; j < Sk; ++j)
        ropeRow(rope, double(j + rope.positionOffset), &kRot.data[(r * Sk + j) * D], D);
    qp = &qRot, kp = &kRot;
  }

  double scale = op.getScale().convertToDouble();
  // 0: no cap.
  const double softcap = op.getSoftcapAttr() ? op.getSoftcapAttr().getValueAsDouble() : 0.0;
  bool causal = op.getCausal();
  const bool roundScores = q.dtype == ScalarType::F32;
  Tensor out = makeTensor(ScalarType::F32, {B, H, Sq, Dv});
  std::vector<double> s(Sk);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h) {
      int64_t g = h / group;
      const double *K = &kp->data[(b * Hkv + g) * Sk * D];
      const double *V = &v.data[(b * Hkv + g) * Sk * Dv];
      for (int64_t i = 0; i < Sq; ++i) {
        const double *Q = &qp->data[((b * H + h) * Sq + i) * D];
        double m = -kInf;
        for (int64_t j = 0; j < Sk; ++j) {
          double dot = 0;
          for (int64_t d = 0; d < D; ++d)
            dot += Q[d] * K[j * D + d];
          if (content)
            dot += modifierTerms.content(h, j - (i + (Sk - Sq)), Q, &K[j * D], D);
          s[j] = scale * dot;
          if (softcap > 0)
            s[j] = softcap * std::tanh(s[j] / softcap);
          // The scores are float tensors in the graph this op replaces:
          // rounded as there, so a finite masking fill absorbs the score.
          if (roundScores)
            s[j] = static_cast<float>(s[j]);
          if (mask) {
            s[j] += mask->data[b * maskStrides[0] + h * maskStrides[1] +
                               i * maskStrides[2] + j * maskStrides[3]];
            if (roundScores)
              s[j] = static_cast<float>(s[j]);
          }
          if (!modifierTerms.terms.empty())
            s[j] += modifierTerms.bias(h, j - (i + (Sk - Sq)));
          if ((causal && j > i + (Sk - Sq)) ||
              (padding && padding->data[b * Sk + j] == 0))
            s[j] = -kInf;
          m = std::max(m, s[j]);
        }
        double *O = &out.data[((b * H + h) * Sq + i) * Dv];
        // Every key masked: the output is defined as 0, not 0/0.
        if (m == -kInf)
          continue;
        double sum = 0;
        for (int64_t j = 0; j < Sk; ++j) {
          s[j] = std::exp(s[j] - m);
          sum += s[j];
        }
        for (int64_t j = 0; j < Sk; ++j)
          for (int64_t d = 0; d < Dv; ++d)
            O[d] += s[j] / sum * V[j * Dv + d];
        if (valueTerms)
          for (int64_t j = 0; j < Sk; ++j)
            modifierTerms.addValue(s[j] / sum, j - (i + (Sk - Sq)), O, Dv);
      }
    }
  return define(op, bshd ? permuted(out, kSwap) : std::move(out));
}

llvm::Expected<ModifierTerms>
Interpreter::resolveModifiers(Operation *op, ArrayRef<DictionaryAttr> dicts,
                              ArrayRef<ValueRange> groups,
                              const modifiers::AttentionDims &dims) {
  ModifierTerms resolvedTerms;
  resolvedTerms.heads = dims.heads;
  for (auto [dict, group] : llvm::zip_equal(dicts, groups)) {
    tfm::ResolvedModifier resolved;
    if (std::string problem = tfm::parseModifier(dict, resolved); !problem.empty())
      return opError(op, problem);
    ModifierTerms::Term term{resolved.definition, resolved.params, {}};
    std::vector<std::vector<int64_t>> shapes;
    for (Value operand : group) {
      const Tensor &t = get(operand);
      term.operands.push_back({t.data.data(), t.shape});
      shapes.push_back(t.shape);
    }
    // Checked again with the concrete shapes: the IR may leave them dynamic.
    std::string problem =
        modifiers::checkModifier(*term.definition, term.params, dims, shapes);
    if (!problem.empty())
      return opError(op, problem);
    resolvedTerms.terms.push_back(std::move(term));
  }
  return resolvedTerms;
}

llvm::Error Interpreter::evalRope(tfm::RopeOp op) {
  const Tensor &in = get(op.getInput());
  if (in.shape.size() != 4)
    return opError(op, llvm::formatv("expected 'input' rank 4, got {0}",
                                     in.shape.size()));
  int64_t S = in.shape[2], D = in.shape[3];
  int64_t L = S;
  if (Value align = op.getAlign()) {
    L = get(align).shape[2];
    if (L < S)
      return opError(op, llvm::formatv("expected 'align' length (dim 2) >= "
                                       "the input's {0}, got {1}",
                                       S, L));
  }
  codegen::RopeSpec rope = tfm::ropeOf(op);
  if (rope.rotaryDims > D)
    return opError(op, llvm::formatv("expected 'rotary_dims' <= the head dim "
                                     "{0}, got {1}",
                                     D, rope.rotaryDims));
  Tensor out = in;
  for (int64_t r = 0; r < in.shape[0] * in.shape[1]; ++r)
    for (int64_t s = 0; s < S; ++s)
      ropeRow(rope, double(s + (L - S) + rope.positionOffset),
              &out.data[(r * S + s) * D], D);
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalScoreBias(tfm::ScoreBiasOp op) {
  const Tensor &in = get(op.getInput());
  if (in.shape.size() != 4)
    return opError(op, llvm::formatv("expected 'input' rank 4, got {0}",
                                     in.shape.size()));
  int64_t B = in.shape[0], H = in.shape[1], Sq = in.shape[2], Sk = in.shape[3];
  // Content terms read q [B, H, Sq, D] and k [B, H, Sk, D].
  const Tensor *q = op.getQuery() ? &get(op.getQuery()) : nullptr;
  const Tensor *k = op.getKey() ? &get(op.getKey()) : nullptr;
  int64_t D = -1;
  if (q && k) {
    D = q->shape.size() == 4 ? q->shape[3] : -1;
    if (q->shape != std::vector<int64_t>{B, H, Sq, D} ||
        k->shape != std::vector<int64_t>{B, H, Sk, D})
      return opError(op, "expected content q [B, H, Sq, D] and k [B, H, Sk, D] "
                         "for scores " + shapeString(in.shape) + ", got " +
                         shapeString(q->shape) + " and " + shapeString(k->shape));
  }
  ValueRange group = op.getModifierOperands();
  auto terms = resolveModifiers(op, {op.getModifier()}, {group}, {H, Sq, Sk, D});
  if (!terms)
    return terms.takeError();
  if (terms->hasContent() && !q)
    return opError(op, "expected content(q, k) for a modifier with content terms");
  const double scale = op.getScale() ? op.getScale()->convertToDouble() : 1.0;
  Tensor out = in;
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < H; ++h)
      for (int64_t i = 0; i < Sq; ++i)
        for (int64_t j = 0; j < Sk; ++j) {
          int64_t delta = j - (i + (Sk - Sq));
          double term = terms->bias(h, delta);
          if (q)
            term += scale * terms->content(h, delta, &q->data[((b * H + h) * Sq + i) * D],
                                           &k->data[((b * H + h) * Sk + j) * D], D);
          out.data[((b * H + h) * Sq + i) * Sk + j] += term;
        }
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalScoreValues(tfm::ScoreValuesOp op) {
  const Tensor &p = get(op.getInput());
  if (p.shape.size() != 4)
    return opError(op, llvm::formatv("expected 'input' rank 4, got {0}",
                                     p.shape.size()));
  int64_t B = p.shape[0], H = p.shape[1], Sq = p.shape[2], Sk = p.shape[3];
  int64_t Dv = cast<RankedTensorType>(op.getType()).getDimSize(3);
  auto terms = resolveModifiers(op, {op.getModifier()}, {op.getModifierOperands()},
                                {H, Sq, Sk, -1, Dv});
  if (!terms)
    return terms.takeError();
  Tensor out = makeTensor(ScalarType::F32, {B, H, Sq, Dv});
  for (int64_t r = 0; r < B * H; ++r)
    for (int64_t i = 0; i < Sq; ++i)
      for (int64_t j = 0; j < Sk; ++j)
        terms->addValue(p.data[(r * Sq + i) * Sk + j], j - (i + (Sk - Sq)),
                        &out.data[(r * Sq + i) * Dv], Dv);
  return define(op, std::move(out));
}

//===----------------------------------------------------------------------===//
// Builtin ops
//===----------------------------------------------------------------------===//

llvm::Error Interpreter::evalConstant(arith::ConstantOp op) {
  auto attr = dyn_cast<DenseElementsAttr>(op.getValue());
  auto type = dyn_cast<RankedTensorType>(op.getType());
  if (!attr || !type)
    return opError(op, "expected a dense tensor constant, got " +
                           typeString(op.getType()));
  if (!type.hasStaticShape())
    return opError(op, "expected a statically shaped constant, got " +
                           typeString(type));
  Tensor out =
      makeTensor(ScalarType::F32, std::vector<int64_t>(type.getShape().begin(),
                                                       type.getShape().end()));
  Type elementType = type.getElementType();
  if (isa<FloatType>(elementType)) {
    // getValues expands a splat to every element.
    for (auto [i, x] : llvm::enumerate(attr.getValues<llvm::APFloat>()))
      out.data[i] = x.convertToDouble();
  } else if (elementType.isSignlessInteger()) {
    bool isBool = elementType.isInteger(1);
    for (auto [i, x] : llvm::enumerate(attr.getValues<llvm::APInt>()))
      out.data[i] = isBool ? static_cast<double>(x.getBoolValue())
                           : static_cast<double>(x.getSExtValue());
  } else {
    return opError(op, "unsupported constant element type " +
                           typeString(elementType));
  }
  return define(op, std::move(out));
}

llvm::Error Interpreter::evalReturn(func::ReturnOp op) {
  std::vector<Tensor> out;
  llvm::ArrayRef<Type> declared = function.getResultTypes();
  if (declared.size() != op.getNumOperands())
    return opError(op, llvm::formatv("returns {0} values but the function "
                                     "declares {1}",
                                     op.getNumOperands(), declared.size()));
  for (auto [i, value] : llvm::enumerate(op.getOperands())) {
    const Tensor &t = get(value);
    if (auto type = dyn_cast<RankedTensorType>(declared[i]))
      for (auto [d, size] : llvm::enumerate(type.getShape()))
        if (!ShapedType::isDynamic(size) && size != t.shape[d])
          return opError(op, llvm::formatv("result {0} dimension {1} is {2} "
                                           "but the function declares {3}",
                                           i, d, t.shape[d], size));
    out.push_back(t);
  }
  results = std::move(out);
  return llvm::Error::success();
}

/// Decodes one element of a safetensors tensor to double.
double decodeElement(const uint8_t *p, ScalarType type) {
  switch (type) {
  case ScalarType::F32: {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  case ScalarType::F16:
  case ScalarType::BF16: {
    uint16_t bits;
    std::memcpy(&bits, p, 2);
    llvm::APFloat x(type == ScalarType::F16 ? llvm::APFloat::IEEEhalf()
                                            : llvm::APFloat::BFloat(),
                    llvm::APInt(16, bits));
    return x.convertToDouble();
  }
  case ScalarType::I32: {
    int32_t i;
    std::memcpy(&i, p, 4);
    return i;
  }
  case ScalarType::I64: {
    int64_t i;
    std::memcpy(&i, p, 8);
    return static_cast<double>(i);
  }
  case ScalarType::I8: {
    int8_t i;
    std::memcpy(&i, p, 1);
    return i;
  }
  case ScalarType::Bool:
    return *p != 0 ? 1.0 : 0.0;
  }
  return 0;
}

} // namespace

llvm::Expected<std::vector<Tensor>>
reference::evaluate(func::FuncOp fn, llvm::ArrayRef<Tensor> inputs,
                    const WeightLookup &weights) {
  Interpreter interpreter(weights);
  return interpreter.run(fn, inputs);
}

namespace {

/// `entry` of `view` as the tensor `type` (logical shape, row-major) that
/// `name` declares: stored as is, or `packed` into panels.
llvm::Expected<Tensor> readEntry(const SafeTensorsView &view,
                                 const SafeTensorEntry &entry, llvm::StringRef name,
                                 RankedTensorType type, bool packed) {
  std::optional<ScalarType> dtype = scalarTypeOf(type.getElementType());
  // Packed: panels of the declared dtype, or bf16 pair panels of an f32
  // matrix (the evaluator then computes with the bf16 weights, widened).
  int64_t panelWidth = 0;
  PanelForm form = PanelForm::None;
  if (packed && dtype && type.getRank() == 2)
    form = panelForm(entry.dtype, entry.shape, type.getDimSize(0),
                     type.getDimSize(1), *dtype, panelWidth);
  if (!dtype || (*dtype != entry.dtype && form != PanelForm::Bf16Pairs))
    return makeError(llvm::formatv(
        "tensor '{0}' has dtype {1}, but the IR declares {2}", name,
        safeTensorsDTypeName(entry.dtype), typeString(type)));
  if (packed ? form == PanelForm::None
             : entry.shape != std::vector<int64_t>(type.getShape().begin(),
                                                   type.getShape().end()))
    return makeError(
        llvm::formatv("tensor '{0}' has shape {1}, but the IR declares {2}",
                      entry.name, shapeString(entry.shape), typeString(type)));
  size_t width = scalarTypeBytes(*dtype);
  const uint8_t *p = view.dataStart() + entry.offset;
  std::vector<uint8_t> unpacked;
  if (packed) {
    unpacked.resize(type.getNumElements() * width);
    unpackPanelForm(form, p, unpacked.data(), type.getDimSize(0),
                    type.getDimSize(1), panelWidth, width);
    p = unpacked.data();
  }
  Tensor t = makeTensor(*dtype, std::vector<int64_t>(type.getShape().begin(),
                                                     type.getShape().end()));
  for (size_t i = 0; i < t.data.size(); ++i)
    t.data[i] = decodeElement(p + i * width, *dtype);
  return t;
}

} // namespace

llvm::Expected<WeightLookup> reference::weightsFromSafeTensors(const void *data,
                                                               size_t size) {
  llvm::Expected<SafeTensorsView> view = SafeTensorsView::parse(data, size);
  if (!view)
    return view.takeError();
  return WeightLookup([view = std::move(*view)](
                          llvm::StringRef name,
                          RankedTensorType type) -> llvm::Expected<Tensor> {
    const SafeTensorEntry *entry = view.lookup(name);
    // A matrix the library stores packed into panels (tfm-pack-weights)
    // under `name@panels<W>`, in place of the plain entry a model as
    // written names. Panels are [ceil(N/W), K, W]: W is the last dim.
    if (!entry && type.getRank() == 2)
      entry = view.lookupPanels(name);
    if (entry)
      return readEntry(view, *entry, name, type,
                       entry->name != name.str() ||
                           isa_and_nonnull<tfm::PanelsAttr>(type.getEncoding()));
    // A part of a merged weight: read the whole, keep the part's columns.
    int64_t offset = 0, total = 0;
    entry = view.lookupMergedPart(name, offset, total);
    if (!entry || type.getRank() < 1 || offset + type.getShape().back() > total)
      return makeError("no tensor '" + name + "' in the weights");
    SmallVector<int64_t> wholeShape(type.getShape());
    wholeShape.back() = total;
    llvm::Expected<Tensor> whole = readEntry(
        view, *entry, entry->name, RankedTensorType::get(wholeShape, type.getElementType()),
        /*packed=*/entry->name.find(kPanelsKeyMarker) != std::string::npos);
    if (!whole)
      return whole.takeError();
    const int64_t extent = type.getShape().back();
    const int64_t rows = type.getNumElements() / std::max<int64_t>(extent, 1);
    Tensor part = makeTensor(whole->dtype, std::vector<int64_t>(type.getShape().begin(),
                                                                type.getShape().end()));
    sliceLastAxis(reinterpret_cast<const uint8_t *>(whole->data.data()), rows, total, offset,
                  extent, sizeof(double), reinterpret_cast<uint8_t *>(part.data.data()));
    return part;
  });
}
