//===- TfmOps.cpp - tfm op verifiers and shape inference ------------------===//
//
// Each op's shape contract is written once, as a function that checks the
// operands and computes the result type: `verify()` runs it with the op as the
// diagnostic anchor and then compares the declared result with the inferred
// one; `inferReturnTypes` (the builders without a result type, and the
// InferTypeOpInterface check) runs the same function. Keeping one function
// per op means the verifier and the builders can never disagree on a shape.
//
// Dynamic dimensions (`?`) are checked only where they are static: a `?` may
// be anything at run time, and the runtime checks input shapes before a run.
//
//===----------------------------------------------------------------------===//
#include "dialects/tfm/TfmOps.h"
#include "dialects/tfm/TfmShapes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace mlir;
using namespace attune::tfm;
namespace modifiers = attune::modifiers;

#define GET_OP_CLASSES
#include "dialects/tfm/TfmOps.cpp.inc"

namespace {

/// Produces the diagnostic a check reports through. In `verify()` it is
/// `emitOpError()`; in `inferReturnTypes` it is an error at the op's location
/// with the same `'tfm.x' op` prefix, or a discarded diagnostic when the caller
/// gave no location (it only wants to know whether inference succeeds).
using EmitFn = llvm::function_ref<InFlightDiagnostic()>;

/// The type of `value` as a ranked tensor. ODS constraints guarantee this in
/// verified IR; builders may still hand inference anything.
FailureOr<RankedTensorType> getRanked(EmitFn emitError, StringRef name,
                                      Value value) {
  if (!value)
    return emitError() << "expected operand '" << name << "', got none";
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return emitError() << "expected '" << name
                       << "' to be a ranked tensor, got " << value.getType();
  return type;
}

LogicalResult checkRank(EmitFn emitError, StringRef name, RankedTensorType type,
                        int64_t rank) {
  if (type.getRank() == rank)
    return success();
  return emitError() << "expected '" << name << "' rank " << rank << ", got "
                     << type.getRank();
}

LogicalResult checkMinRank(EmitFn emitError, StringRef name,
                           RankedTensorType type, int64_t minRank) {
  if (type.getRank() >= minRank)
    return success();
  return emitError() << "expected '" << name << "' rank >= " << minRank
                     << ", got " << type.getRank();
}

/// Operands that are combined arithmetically must share an element type:
/// kernels compute in one type and nothing converts implicitly.
LogicalResult checkElementType(EmitFn emitError, StringRef name,
                               RankedTensorType type, StringRef source,
                               Type expected) {
  if (type.getElementType() == expected)
    return success();
  return emitError() << "expected '" << name << "' element type " << expected
                     << " as in '" << source << "', got "
                     << type.getElementType();
}

/// Dimension `dim` of operand `name` (what it means in `what`) must agree with
/// `expected`, which comes from operand `source`.
LogicalResult checkDim(EmitFn emitError, StringRef name, unsigned dim,
                       StringRef what, int64_t got, StringRef source,
                       int64_t expected) {
  if (dimsAgree(got, expected))
    return success();
  return emitError() << "expected '" << name << "' dim " << dim << " (" << what
                     << ") to be " << formatDim(expected) << " as in '"
                     << source << "', got " << formatDim(got);
}

/// Runs `infer` with an emitter suited to `inferReturnTypes` and appends the
/// result type. Shared by every inferring op.
template <typename OpTy, typename InferFn>
LogicalResult inferWith(std::optional<Location> location, ValueRange operands,
                        DictionaryAttr attributes, OpaqueProperties properties,
                        RegionRange regions,
                        SmallVectorImpl<Type> &inferredReturnTypes,
                        InferFn infer) {
  typename OpTy::Adaptor adaptor(operands, attributes, properties, regions);
  auto emit = [&]() -> InFlightDiagnostic {
    if (!location)
      return InFlightDiagnostic();
    InFlightDiagnostic diag = mlir::emitError(*location);
    diag << "'" << OpTy::getOperationName() << "' op ";
    return diag;
  };
  FailureOr<RankedTensorType> type = infer(adaptor, EmitFn(emit));
  if (failed(type))
    return failure();
  inferredReturnTypes.push_back(*type);
  return success();
}

/// The tail of every `verify()` of an inferring op: the operands were fine,
/// now the declared result must be the inferred one. This runs before
/// InferTypeOpInterface's own check so the user sees which type was expected.
template <typename OpTy>
LogicalResult verifyInferredType(OpTy op,
                                 FailureOr<RankedTensorType> inferred) {
  if (failed(inferred))
    return failure();
  Type declared = op.getResult().getType();
  if (declared == *inferred)
    return success();
  return op.emitOpError("expected result type ")
         << *inferred << " (inferred from the operands), got " << declared;
}

} // namespace

/// Defines OpTy::inferReturnTypes as `infer` run through inferWith.
#define TFM_INFER_RETURN_TYPES(OpTy, infer)                                    \
  LogicalResult OpTy::inferReturnTypes(                                        \
      MLIRContext *, std::optional<Location> location, ValueRange operands,    \
      DictionaryAttr attributes, OpaqueProperties properties,                  \
      RegionRange regions, SmallVectorImpl<Type> &inferredReturnTypes) {       \
    return inferWith<OpTy>(location, operands, attributes, properties,         \
                           regions, inferredReturnTypes, infer);               \
  }

/// Defines OpTy::verify for ops whose whole contract is `infer`.
#define TFM_VERIFY_INFERRED(OpTy, infer)                                       \
  LogicalResult OpTy::verify() {                                               \
    return verifyInferredType(                                                 \
        *this, infer(Adaptor(*this), [&] { return emitOpError(); }));          \
  }

//===----------------------------------------------------------------------===//
// WeightOp
//===----------------------------------------------------------------------===//

LogicalResult WeightOp::verify() {
  auto type = getResult().getType();
  if (!type.hasStaticShape())
    return emitOpError("expected 'result' to have a static shape, got ")
           << type;
  if (getName().empty())
    return emitOpError("expected a non-empty 'name'");
  // Kernels address a tensor through int32 extents and strides (Halide's
  // buffers), and the compiler holds every weight in memory to bind it: a
  // larger one could only fail later, at allocation or in the linker.
  constexpr int64_t kMaxElements = 0x7fffffff;
  int64_t elements = 1;
  bool overflow = false;
  for (int64_t dim : type.getShape())
    overflow |= llvm::MulOverflow(elements, dim, elements);
  if (overflow || elements > kMaxElements) {
    unsigned bits = type.getElementType().isIntOrFloat()
                        ? type.getElementType().getIntOrFloatBitWidth()
                        : 8;
    InFlightDiagnostic diag = emitOpError("weight '")
                              << getName() << "' of type " << type << " has ";
    int64_t bytes = 0;
    if (overflow || llvm::MulOverflow(elements, int64_t((bits + 7) / 8), bytes))
      diag << "more elements than int64 counts";
    else
      diag << elements << " elements (" << bytes << " bytes)";
    return diag << "; a tensor holds at most " << kMaxElements
                << " elements (2^31 - 1, the range of a kernel's strides)";
  }
  double stddev = getStd().convertToDouble();
  if (!(stddev >= 0.0))
    return emitOpError("expected 'std' >= 0, got ") << stddev;
  // A transpose of anything but a matrix would need a permutation to say
  // which one; checkpoints only ever need nn.Linear's.
  if (getTranspose() && type.getRank() != 2)
    return emitOpError("expected 'result' rank 2 with 'transpose', got ")
           << type.getRank();
  if (std::optional<ArrayRef<int64_t>> sizes = getPartSizes()) {
    SmallVector<StringRef> names = getPartNames();
    if (type.getRank() < 1)
      return emitOpError("expected a result of rank >= 1 with 'part_sizes'");
    if (sizes->size() < 2 || names.size() != sizes->size())
      return emitOpError("expected 'name' to list as many parts, separated by '")
             << kWeightPartSeparator << "', as 'part_sizes' has (at least 2), got "
             << names.size() << " and " << sizes->size();
    int64_t total = 0;
    for (auto [partName, size] : llvm::zip(names, *sizes)) {
      if (partName.empty() || partName.contains(kWeightPartExtent))
        return emitOpError("expected each part's name non-empty and without '")
               << kWeightPartExtent << "', got '" << partName << "'";
      if (size < 1)
        return emitOpError("expected 'part_sizes' >= 1, got ") << size;
      total += size;
    }
    if (total != type.getShape().back())
      return emitOpError("expected 'part_sizes' to sum to the last dimension, ")
             << type.getShape().back() << ", got " << total;
  }
  if (Attribute encoding = type.getEncoding()) {
    if (!isa<PanelsAttr>(encoding))
      return emitOpError("expected no encoding or #tfm.panels, got ")
             << encoding;
    if (type.getRank() != 2)
      return emitOpError("expected 'result' rank 2 with #tfm.panels, got ")
             << type.getRank();
    if (cast<PanelsAttr>(encoding).isBf16Pairs() && !type.getElementType().isF32())
      return emitOpError("expected an f32 matrix in bf16 panels, got ")
             << type.getElementType();
    // Code generation hands the panels to the GEMM as they are stored.
    for (OpOperand &use : getResult().getUses()) {
      auto linear = dyn_cast<LinearOp>(use.getOwner());
      if (!linear || use.getOperandNumber() != 1)
        return emitOpError("a weight packed into #tfm.panels is read only as "
                           "the weight of tfm.linear, but '")
               << use.getOwner()->getName() << "' uses it as operand "
               << use.getOperandNumber();
    }
  }
  return success();
}

LogicalResult PanelsAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                 int64_t width, Type storage) {
  if (width < 1 || width > 1024)
    return emitError() << "expected a panel width in [1, 1024], got " << width;
  if (storage && !storage.isBF16())
    return emitError() << "expected panels stored as the matrix's own type or "
                          "bf16, got "
                       << storage;
  return success();
}

//===----------------------------------------------------------------------===//
// EmbeddingOp
//===----------------------------------------------------------------------===//

static FailureOr<RankedTensorType> inferEmbedding(EmbeddingOp::Adaptor op,
                                                  EmitFn emitError) {
  auto table = getRanked(emitError, "table", op.getTable());
  auto ids = getRanked(emitError, "ids", op.getIds());
  if (failed(table) || failed(ids) ||
      failed(checkRank(emitError, "table", *table, 2)))
    return failure();
  SmallVector<int64_t> shape(ids->getShape());
  shape.push_back(table->getDimSize(1));
  return RankedTensorType::get(shape, table->getElementType());
}

TFM_VERIFY_INFERRED(EmbeddingOp, inferEmbedding)

TFM_INFER_RETURN_TYPES(EmbeddingOp, inferEmbedding)

//===----------------------------------------------------------------------===//
// LearnedPositionOp
//===----------------------------------------------------------------------===//

/// A learned position table `table : [P, D]` for `input : [B, S, D]`: rank
/// 2, the element type and model dim of `input`, and `S <= P` when both
/// are static (a dynamic S is checked by the runtime against P).
static LogicalResult checkPositionTable(EmitFn emitError, RankedTensorType input,
                                        Value tableValue) {
  auto table = getRanked(emitError, "table", tableValue);
  if (failed(table) || failed(checkRank(emitError, "table", *table, 2)) ||
      failed(checkElementType(emitError, "table", *table, "input",
                              input.getElementType())) ||
      failed(checkDim(emitError, "table", 1, "model dim", table->getDimSize(1),
                      "input", input.getDimSize(2))))
    return failure();
  int64_t seq = input.getDimSize(1);
  int64_t positions = table->getDimSize(0);
  if (!ShapedType::isDynamic(seq) && !ShapedType::isDynamic(positions) &&
      seq > positions)
    return emitError() << "expected 'input' sequence length (dim 1) <= "
                       << positions << " (the positions of 'table'), got "
                       << seq;
  return success();
}

static FailureOr<RankedTensorType>
inferLearnedPosition(LearnedPositionOp::Adaptor op, EmitFn emitError) {
  auto input = getRanked(emitError, "input", op.getInput());
  if (failed(input) || failed(checkRank(emitError, "input", *input, 3)) ||
      failed(checkPositionTable(emitError, *input, op.getTable())))
    return failure();
  return *input;
}

TFM_VERIFY_INFERRED(LearnedPositionOp, inferLearnedPosition)

TFM_INFER_RETURN_TYPES(LearnedPositionOp, inferLearnedPosition)

//===----------------------------------------------------------------------===//
// SinusoidalPositionOp
//===----------------------------------------------------------------------===//

static FailureOr<RankedTensorType>
inferSinusoidalPosition(SinusoidalPositionOp::Adaptor op, EmitFn emitError) {
  auto input = getRanked(emitError, "input", op.getInput());
  if (failed(input) || failed(checkRank(emitError, "input", *input, 3)))
    return failure();
  return *input;
}

/// Both sinusoid forms take logarithms of the timescales (and of their
/// ratio).
static LogicalResult checkTimescales(EmitFn emitError, double minTimescale,
                                     double maxTimescale) {
  if (!(minTimescale > 0.0))
    return emitError() << "expected 'min_timescale' > 0, got " << minTimescale;
  if (!(maxTimescale > 0.0))
    return emitError() << "expected 'max_timescale' > 0, got " << maxTimescale;
  return success();
}

LogicalResult SinusoidalPositionOp::verify() {
  if (failed(checkTimescales([&] { return emitOpError(); },
                             getMinTimescale().convertToDouble(),
                             getMaxTimescale().convertToDouble())))
    return failure();
  return verifyInferredType(*this, inferSinusoidalPosition(Adaptor(*this), [&] {
    return emitOpError();
  }));
}

TFM_INFER_RETURN_TYPES(SinusoidalPositionOp, inferSinusoidalPosition)

//===----------------------------------------------------------------------===//
// MultiplicativePositionOp
//===----------------------------------------------------------------------===//

static FailureOr<RankedTensorType>
inferMultiplicativePosition(MultiplicativePositionOp::Adaptor op,
                            EmitFn emitError) {
  auto input = getRanked(emitError, "input", op.getInput());
  if (failed(input) || failed(checkRank(emitError, "input", *input, 3)))
    return failure();
  if (Value table = op.getTable())
    if (failed(checkPositionTable(emitError, *input, table)))
      return failure();
  return *input;
}

LogicalResult MultiplicativePositionOp::verify() {
  auto emitOp = [&] { return emitOpError(); };
  if (getTable()) {
    // The sinusoid's attributes would silently do nothing next to a table.
    if (getFormAttr() || getMinTimescaleAttr() || getMaxTimescaleAttr())
      return emitOpError("expected no 'form', 'min_timescale' or "
                         "'max_timescale' with a 'table': they describe the "
                         "sinusoid used without one");
  } else if (failed(checkTimescales(emitOp, getMinTimescaleOrDefault(),
                                    getMaxTimescaleOrDefault()))) {
    return failure();
  }
  return verifyInferredType(*this, inferMultiplicativePosition(Adaptor(*this), emitOp));
}

TFM_INFER_RETURN_TYPES(MultiplicativePositionOp, inferMultiplicativePosition)

//===----------------------------------------------------------------------===//
// RecursivePositionOp
//===----------------------------------------------------------------------===//

/// Dimension `dim` of operand `name` must be `base + 1` (`base` a dimension
/// of `source`, `what` saying what the extra row is); only static sizes are
/// compared.
static LogicalResult checkDimPlusOne(EmitFn emitError, StringRef name,
                                     unsigned dim, StringRef what, int64_t got,
                                     StringRef source, int64_t base) {
  if (ShapedType::isDynamic(got) || ShapedType::isDynamic(base) ||
      got == base + 1)
    return success();
  return emitError() << "expected '" << name << "' dim " << dim << " (" << what
                     << ") to be " << base << " + 1 = " << base + 1
                     << " as in '" << source << "', got " << got;
}

static FailureOr<RankedTensorType>
inferRecursivePosition(RecursivePositionOp::Adaptor op, EmitFn emitError) {
  auto input = getRanked(emitError, "input", op.getInput());
  auto p0 = getRanked(emitError, "p0", op.getP0());
  auto w1 = getRanked(emitError, "w1", op.getW1());
  auto b1 = getRanked(emitError, "b1", op.getB1());
  auto w2 = getRanked(emitError, "w2", op.getW2());
  auto b2 = getRanked(emitError, "b2", op.getB2());
  if (failed(input) || failed(p0) || failed(w1) || failed(b1) || failed(w2) ||
      failed(b2) || failed(checkRank(emitError, "input", *input, 3)) ||
      failed(checkRank(emitError, "p0", *p0, 1)) ||
      failed(checkRank(emitError, "w1", *w1, 2)) ||
      failed(checkRank(emitError, "b1", *b1, 1)) ||
      failed(checkRank(emitError, "w2", *w2, 2)) ||
      failed(checkRank(emitError, "b2", *b2, 1)))
    return failure();
  Type elementType = input->getElementType();
  for (auto [name, type] : {std::pair<StringRef, RankedTensorType>{"p0", *p0},
                            {"w1", *w1}, {"b1", *b1}, {"w2", *w2}, {"b2", *b2}})
    if (failed(checkElementType(emitError, name, type, "input", elementType)))
      return failure();
  // p0 [D], w1 [D + 1, H], b1 [H], w2 [H + 1, D], b2 [D].
  int64_t model = input->getDimSize(2);
  if (failed(checkDim(emitError, "p0", 0, "model dim", p0->getDimSize(0),
                      "input", model)) ||
      failed(checkDim(emitError, "b2", 0, "model dim", b2->getDimSize(0),
                      "input", model)) ||
      failed(checkDim(emitError, "w2", 1, "model dim", w2->getDimSize(1),
                      "input", model)))
    return failure();
  model = mergeDims(mergeDims(mergeDims(model, p0->getDimSize(0)),
                              b2->getDimSize(0)),
                    w2->getDimSize(1));
  int64_t hidden = w1->getDimSize(1);
  if (failed(checkDimPlusOne(emitError, "w1", 0, "the model dim and a time row",
                             w1->getDimSize(0), "input", model)) ||
      failed(checkDim(emitError, "b1", 0, "hidden dim", b1->getDimSize(0),
                      "w1", hidden)))
    return failure();
  hidden = mergeDims(hidden, b1->getDimSize(0));
  if (failed(checkDimPlusOne(emitError, "w2", 0, "the hidden dim and a time row",
                             w2->getDimSize(0), "w1' and 'b1", hidden)))
    return failure();
  return *input;
}

LogicalResult RecursivePositionOp::verify() {
  double step = getTimeStep().convertToDouble();
  if (!std::isfinite(step))
    return emitOpError("expected a finite 'time_step', got ") << step;
  return verifyInferredType(
      *this, inferRecursivePosition(Adaptor(*this), [&] { return emitOpError(); }));
}

TFM_INFER_RETURN_TYPES(RecursivePositionOp, inferRecursivePosition)

//===----------------------------------------------------------------------===//
// ComplexEmbeddingOp
//===----------------------------------------------------------------------===//

static FailureOr<RankedTensorType>
inferComplexEmbedding(ComplexEmbeddingOp::Adaptor op, EmitFn emitError) {
  auto ids = getRanked(emitError, "ids", op.getIds());
  auto amplitude = getRanked(emitError, "amplitude", op.getAmplitude());
  auto frequency = getRanked(emitError, "frequency", op.getFrequency());
  auto phase = getRanked(emitError, "phase", op.getPhase());
  // ids [B, S]: the position of a word is its index along S.
  if (failed(ids) || failed(amplitude) || failed(frequency) || failed(phase) ||
      failed(checkRank(emitError, "ids", *ids, 2)) ||
      failed(checkRank(emitError, "amplitude", *amplitude, 2)) ||
      failed(checkRank(emitError, "frequency", *frequency, 2)) ||
      failed(checkRank(emitError, "phase", *phase, 2)))
    return failure();
  Type elementType = amplitude->getElementType();
  int64_t vocab = amplitude->getDimSize(0), width = amplitude->getDimSize(1);
  for (auto [name, type] :
       {std::pair<StringRef, RankedTensorType>{"frequency", *frequency},
        {"phase", *phase}}) {
    if (failed(checkElementType(emitError, name, type, "amplitude", elementType)) ||
        failed(checkDim(emitError, name, 0, "vocabulary", type.getDimSize(0),
                        "amplitude", vocab)) ||
        failed(checkDim(emitError, name, 1, "embedding dim", type.getDimSize(1),
                        "amplitude", width)))
      return failure();
    vocab = mergeDims(vocab, type.getDimSize(0));
    width = mergeDims(width, type.getDimSize(1));
  }
  int64_t both = width;
  if (!ShapedType::isDynamic(width) && llvm::MulOverflow(width, int64_t(2), both))
    return emitError() << "expected twice the embedding dim (" << width
                       << ") to fit in int64";
  return RankedTensorType::get({ids->getDimSize(0), ids->getDimSize(1), both},
                               elementType);
}

LogicalResult ComplexEmbeddingOp::verify() {
  // k = s + first_position is formed in 32-bit arithmetic by the kernel.
  int64_t first = getFirstPosition();
  if (first < 0 || first >= (int64_t(1) << 30))
    return emitOpError("expected 'first_position' in [0, 2^30), got ") << first;
  return verifyInferredType(
      *this, inferComplexEmbedding(Adaptor(*this), [&] { return emitOpError(); }));
}

TFM_INFER_RETURN_TYPES(ComplexEmbeddingOp, inferComplexEmbedding)

//===----------------------------------------------------------------------===//
// LayerNormOp, RmsNormOp
//===----------------------------------------------------------------------===//

/// A per-feature parameter of a norm (`gamma`, `beta`): rank 1, as long as the
/// last dimension of `input`, same element type.
static LogicalResult checkNormParam(EmitFn emitError, StringRef name,
                                    Value param, RankedTensorType input) {
  auto type = getRanked(emitError, name, param);
  if (failed(type) || failed(checkRank(emitError, name, *type, 1)) ||
      failed(checkElementType(emitError, name, *type, "input",
                              input.getElementType())))
    return failure();
  int64_t features = input.getDimSize(input.getRank() - 1);
  if (dimsAgree(type->getDimSize(0), features))
    return success();
  return emitError() << "expected '" << name << "' size " << formatDim(features)
                     << " (the last dim of 'input'), got "
                     << formatDim(type->getDimSize(0));
}

/// A norm's `residual`, when it has one: `input`'s shape and element type.
static LogicalResult checkNormResidual(EmitFn emitError, Value residual,
                                       RankedTensorType input) {
  if (!residual)
    return success();
  auto type = getRanked(emitError, "residual", residual);
  if (failed(type) ||
      failed(checkElementType(emitError, "residual", *type, "input",
                              input.getElementType())))
    return failure();
  bool agree = type->getRank() == input.getRank();
  for (int64_t d = 0; agree && d < input.getRank(); ++d)
    agree = dimsAgree(type->getDimSize(d), input.getDimSize(d));
  if (agree)
    return success();
  return emitError() << "expected 'residual' of the shape of 'input', "
                     << input << ", got " << *type;
}

static LogicalResult checkEpsilon(EmitFn emitError, APFloat epsilon) {
  double value = epsilon.convertToDouble();
  if (value >= 0.0)
    return success();
  return emitError() << "expected 'epsilon' >= 0, got " << value;
}

static FailureOr<RankedTensorType> inferLayerNorm(LayerNormOp::Adaptor op,
                                                  EmitFn emitError) {
  auto input = getRanked(emitError, "input", op.getInput());
  if (failed(input) || failed(checkMinRank(emitError, "input", *input, 1)) ||
      failed(checkNormParam(emitError, "gamma", op.getGamma(), *input)) ||
      failed(checkNormParam(emitError, "beta", op.getBeta(), *input)) ||
      failed(checkNormResidual(emitError, op.getResidual(), *input)))
    return failure();
  return *input;
}

LogicalResult LayerNormOp::verify() {
  if (failed(checkEpsilon([&] { return emitOpError(); }, getEpsilon())))
    return failure();
  return verifyInferredType(
      *this, inferLayerNorm(Adaptor(*this), [&] { return emitOpError(); }));
}

TFM_INFER_RETURN_TYPES(LayerNormOp, inferLayerNorm)

static FailureOr<RankedTensorType> inferRmsNorm(RmsNormOp::Adaptor op,
                                                EmitFn emitError) {
  auto input = getRanked(emitError, "input", op.getInput());
  if (failed(input) || failed(checkMinRank(emitError, "input", *input, 1)) ||
      failed(checkNormParam(emitError, "gamma", op.getGamma(), *input)) ||
      failed(checkNormResidual(emitError, op.getResidual(), *input)))
    return failure();
  return *input;
}

LogicalResult RmsNormOp::verify() {
  if (failed(checkEpsilon([&] { return emitOpError(); }, getEpsilon())))
    return failure();
  return verifyInferredType(
      *this, inferRmsNorm(Adaptor(*this), [&] { return emitOpError(); }));
}

TFM_INFER_RETURN_TYPES(RmsNormOp, inferRmsNorm)

//===----------------------------------------------------------------------===//
// LinearOp
//===----------------------------------------------------------------------===//

static FailureOr<RankedTensorType> inferLinear(LinearOp::Adaptor op,
                                               EmitFn emitError) {
  auto input = getRanked(emitError, "input", op.getInput());
  auto weight = getRanked(emitError, "weight", op.getWeight());
  if (failed(input) || failed(weight) ||
      failed(checkMinRank(emitError, "input", *input, 1)) ||
      failed(checkRank(emitError, "weight", *weight, 2)) ||
      failed(checkElementType(emitError, "weight", *weight, "input",
                              input->getElementType())))
    return failure();
  int64_t inFeatures = input->getDimSize(input->getRank() - 1);
  int64_t outFeatures = weight->getDimSize(1);
  if (!dimsAgree(weight->getDimSize(0), inFeatures))
    return emitError() << "expected 'weight' dim 0 (in features) to be "
                       << formatDim(inFeatures)
                       << " as the last dim of 'input', got "
                       << formatDim(weight->getDimSize(0));
  if (Value biasValue = op.getBias()) {
    auto bias = getRanked(emitError, "bias", biasValue);
    if (failed(bias) || failed(checkRank(emitError, "bias", *bias, 1)) ||
        failed(checkElementType(emitError, "bias", *bias, "input",
                                input->getElementType())) ||
        failed(checkDim(emitError, "bias", 0, "out features",
                        bias->getDimSize(0), "weight", outFeatures)))
      return failure();
    outFeatures = mergeDims(outFeatures, bias->getDimSize(0));
  }
  SmallVector<int64_t> shape(input->getShape().drop_back());
  shape.push_back(outFeatures);
  return RankedTensorType::get(shape, input->getElementType());
}

TFM_VERIFY_INFERRED(LinearOp, inferLinear)

TFM_INFER_RETURN_TYPES(LinearOp, inferLinear)

//===----------------------------------------------------------------------===//
// ComplexLinearOp
//===----------------------------------------------------------------------===//

static FailureOr<RankedTensorType> inferComplexLinear(ComplexLinearOp::Adaptor op,
                                                      EmitFn emitError) {
  auto input = getRanked(emitError, "input", op.getInput());
  auto real = getRanked(emitError, "weight_real", op.getWeightReal());
  auto imag = getRanked(emitError, "weight_imag", op.getWeightImag());
  if (failed(input) || failed(real) || failed(imag) ||
      failed(checkMinRank(emitError, "input", *input, 1)) ||
      failed(checkRank(emitError, "weight_real", *real, 2)) ||
      failed(checkRank(emitError, "weight_imag", *imag, 2)))
    return failure();
  Type elementType = input->getElementType();
  if (failed(checkElementType(emitError, "weight_real", *real, "input", elementType)) ||
      failed(checkElementType(emitError, "weight_imag", *imag, "input", elementType)) ||
      failed(checkDim(emitError, "weight_imag", 0, "in features",
                      imag->getDimSize(0), "weight_real", real->getDimSize(0))) ||
      failed(checkDim(emitError, "weight_imag", 1, "out features",
                      imag->getDimSize(1), "weight_real", real->getDimSize(1))))
    return failure();
  int64_t inFeatures = mergeDims(real->getDimSize(0), imag->getDimSize(0));
  int64_t outFeatures = mergeDims(real->getDimSize(1), imag->getDimSize(1));
  // input [..., 2K]: the real halves then the imaginary ones.
  int64_t width = input->getDimSize(input->getRank() - 1);
  if (!ShapedType::isDynamic(width)) {
    if (width % 2 != 0)
      return emitError() << "expected 'input' last dim to be even (real and "
                            "imaginary halves), got "
                         << width;
    if (!ShapedType::isDynamic(inFeatures) && width / 2 != inFeatures)
      return emitError() << "expected 'input' last dim to be 2 * "
                         << inFeatures
                         << " (real and imaginary halves of the weights' in "
                            "features), got "
                         << width;
  }
  Value biasReal = op.getBiasReal(), biasImag = op.getBiasImag();
  if (bool(biasReal) != bool(biasImag))
    return emitError() << "expected 'bias_real' and 'bias_imag' together, got only '"
                       << (biasReal ? "bias_real" : "bias_imag") << "'";
  for (auto [name, value] : {std::pair<StringRef, Value>{"bias_real", biasReal},
                             {"bias_imag", biasImag}}) {
    if (!value)
      continue;
    auto bias = getRanked(emitError, name, value);
    if (failed(bias) || failed(checkRank(emitError, name, *bias, 1)) ||
        failed(checkElementType(emitError, name, *bias, "input", elementType)) ||
        failed(checkDim(emitError, name, 0, "out features", bias->getDimSize(0),
                        "weight_real", outFeatures)))
      return failure();
    outFeatures = mergeDims(outFeatures, bias->getDimSize(0));
  }
  int64_t both = outFeatures;
  if (!ShapedType::isDynamic(outFeatures) &&
      llvm::MulOverflow(outFeatures, int64_t(2), both))
    return emitError() << "expected twice the out features (" << outFeatures
                       << ") to fit in int64";
  SmallVector<int64_t> shape(input->getShape().drop_back());
  shape.push_back(both);
  return RankedTensorType::get(shape, elementType);
}

TFM_VERIFY_INFERRED(ComplexLinearOp, inferComplexLinear)

TFM_INFER_RETURN_TYPES(ComplexLinearOp, inferComplexLinear)

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

static FailureOr<RankedTensorType> inferMatmul(MatmulOp::Adaptor op,
                                               EmitFn emitError) {
  auto lhs = getRanked(emitError, "lhs", op.getLhs());
  auto rhs = getRanked(emitError, "rhs", op.getRhs());
  if (failed(lhs) || failed(rhs) ||
      failed(checkMinRank(emitError, "lhs", *lhs, 2)) ||
      failed(checkElementType(emitError, "rhs", *rhs, "lhs",
                              lhs->getElementType())))
    return failure();
  int64_t rank = lhs->getRank();
  if (rhs->getRank() != rank)
    return emitError() << "expected 'rhs' rank " << rank
                       << " (the rank of 'lhs'), got " << rhs->getRank();
  SmallVector<int64_t> shape;
  for (int64_t i = 0; i < rank - 2; ++i) {
    if (failed(checkDim(emitError, "rhs", i, "batch", rhs->getDimSize(i), "lhs",
                        lhs->getDimSize(i))))
      return failure();
    shape.push_back(mergeDims(lhs->getDimSize(i), rhs->getDimSize(i)));
  }
  // A = transpose_a ? lhs^T : lhs is [M, K]; B = transpose_b ? rhs^T : rhs is
  // [K, N].
  bool transposeA = op.getTransposeA(), transposeB = op.getTransposeB();
  int64_t m = lhs->getDimSize(rank - (transposeA ? 1 : 2));
  int64_t kLhs = lhs->getDimSize(rank - (transposeA ? 2 : 1));
  int64_t kRhs = rhs->getDimSize(rank - (transposeB ? 1 : 2));
  int64_t n = rhs->getDimSize(rank - (transposeB ? 2 : 1));
  if (!dimsAgree(kLhs, kRhs))
    return emitError() << "expected contraction dims to match, got "
                       << formatDim(kLhs) << " in 'lhs' (dim "
                       << (rank - (transposeA ? 2 : 1)) << ") and "
                       << formatDim(kRhs) << " in 'rhs' (dim "
                       << (rank - (transposeB ? 1 : 2)) << ")";
  shape.push_back(m);
  shape.push_back(n);
  return RankedTensorType::get(shape, lhs->getElementType());
}

TFM_VERIFY_INFERRED(MatmulOp, inferMatmul)

TFM_INFER_RETURN_TYPES(MatmulOp, inferMatmul)

//===----------------------------------------------------------------------===//
// Elementwise binary ops and WhereOp
//===----------------------------------------------------------------------===//

/// Broadcasts `lhs` and `rhs` with numpy rules; the result has the element
/// type of `lhs` (SameOperandsAndResultElementType holds in verified IR).
template <typename OpTy>
static FailureOr<RankedTensorType> inferBinary(typename OpTy::Adaptor op,
                                               EmitFn emitError) {
  auto lhs = getRanked(emitError, "lhs", op.getLhs());
  auto rhs = getRanked(emitError, "rhs", op.getRhs());
  if (failed(lhs) || failed(rhs))
    return failure();
  auto shape = broadcastShapes(lhs->getShape(), rhs->getShape());
  if (failed(shape))
    return emitError() << "expected broadcast-compatible shapes, got 'lhs' "
                       << formatShape(lhs->getShape()) << " and 'rhs' "
                       << formatShape(rhs->getShape());
  return RankedTensorType::get(*shape, lhs->getElementType());
}

#define TFM_BINARY_OP_IMPL(OpTy)                                               \
  TFM_VERIFY_INFERRED(OpTy, inferBinary<OpTy>)                                 \
  TFM_INFER_RETURN_TYPES(OpTy, inferBinary<OpTy>)

TFM_BINARY_OP_IMPL(AddOp)
TFM_BINARY_OP_IMPL(SubOp)
TFM_BINARY_OP_IMPL(MulOp)
TFM_BINARY_OP_IMPL(DivOp)
TFM_BINARY_OP_IMPL(MinimumOp)
TFM_BINARY_OP_IMPL(MaximumOp)
#undef TFM_BINARY_OP_IMPL

static FailureOr<RankedTensorType> inferCompare(CompareOp::Adaptor op,
                                                EmitFn emitError) {
  auto lhs = getRanked(emitError, "lhs", op.getLhs());
  auto rhs = getRanked(emitError, "rhs", op.getRhs());
  if (failed(lhs) || failed(rhs) ||
      failed(checkElementType(emitError, "rhs", *rhs, "lhs", lhs->getElementType())))
    return failure();
  auto shape = broadcastShapes(lhs->getShape(), rhs->getShape());
  if (failed(shape))
    return emitError() << "expected broadcast-compatible shapes, got 'lhs' "
                       << formatShape(lhs->getShape()) << " and 'rhs' "
                       << formatShape(rhs->getShape());
  return RankedTensorType::get(*shape, IntegerType::get(lhs->getContext(), 1));
}

TFM_VERIFY_INFERRED(CompareOp, inferCompare)

TFM_INFER_RETURN_TYPES(CompareOp, inferCompare)

static FailureOr<RankedTensorType> inferWhere(WhereOp::Adaptor op,
                                              EmitFn emitError) {
  auto condition = getRanked(emitError, "condition", op.getCondition());
  auto onTrue = getRanked(emitError, "on_true", op.getOnTrue());
  auto onFalse = getRanked(emitError, "on_false", op.getOnFalse());
  if (failed(condition) || failed(onTrue) || failed(onFalse) ||
      failed(checkElementType(emitError, "on_false", *onFalse, "on_true",
                              onTrue->getElementType())))
    return failure();
  auto values = broadcastShapes(onTrue->getShape(), onFalse->getShape());
  FailureOr<SmallVector<int64_t>> shape = failure();
  if (succeeded(values))
    shape = broadcastShapes(condition->getShape(), *values);
  if (failed(shape))
    return emitError() << "expected broadcast-compatible shapes, got "
                          "'condition' "
                       << formatShape(condition->getShape()) << ", 'on_true' "
                       << formatShape(onTrue->getShape()) << " and 'on_false' "
                       << formatShape(onFalse->getShape());
  return RankedTensorType::get(*shape, onTrue->getElementType());
}

TFM_VERIFY_INFERRED(WhereOp, inferWhere)

TFM_INFER_RETURN_TYPES(WhereOp, inferWhere)

//===----------------------------------------------------------------------===//
// SoftmaxOp, CausalMaskOp
//===----------------------------------------------------------------------===//

// Their result type is the input type (SameOperandsAndResultType), so ODS
// generates their inferReturnTypes; only the attributes need checking.

LogicalResult SoftmaxOp::verify() {
  int64_t rank = getInput().getType().getRank();
  int64_t axis = getAxisAttr().getInt();
  if (axis < -rank || axis >= rank)
    return emitOpError("expected 'axis' in [")
           << -rank << ", " << rank << "), got " << axis;
  return success();
}

LogicalResult CausalMaskOp::verify() {
  // The mask relates the last two dimensions (queries, keys).
  int64_t rank = getInput().getType().getRank();
  if (rank < 2)
    return emitOpError("expected 'input' rank >= 2, got ") << rank;
  return success();
}

//===----------------------------------------------------------------------===//
// ReshapeOp
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType result = getResult().getType();
  if (input.getElementType() != result.getElementType())
    return emitOpError("expected 'result' element type ")
           << input.getElementType() << " as in 'input', got "
           << result.getElementType();
  // Dynamic dimensions pass through in order, so they must be as many on both
  // sides and the static parts must hold the same number of elements; that
  // makes the element counts equal whatever the dynamic sizes turn out to be.
  int64_t inputDynamic = input.getNumDynamicDims();
  int64_t resultDynamic = result.getNumDynamicDims();
  // Shapes come from user IR: a product past int64 is an error, not UB.
  auto staticProduct = [](RankedTensorType type) -> std::optional<int64_t> {
    int64_t product = 1;
    for (int64_t dim : type.getShape())
      if (!ShapedType::isDynamic(dim) && llvm::MulOverflow(product, dim, product))
        return std::nullopt;
    return product;
  };
  std::optional<int64_t> inputProduct = staticProduct(input);
  std::optional<int64_t> resultProduct = staticProduct(result);
  if (!inputProduct || !resultProduct)
    return emitOpError("expected the static dims of '")
           << (inputProduct ? "result" : "input")
           << "' to multiply to at most 2^63 - 1 elements";
  int64_t inputStatic = *inputProduct;
  int64_t resultStatic = *resultProduct;
  if (inputDynamic == 0 && resultDynamic == 0) {
    if (inputStatic != resultStatic)
      return emitOpError("expected 'result' to have ")
             << inputStatic << " elements as 'input' does, got "
             << resultStatic;
    return success();
  }
  if (inputDynamic != resultDynamic)
    return emitOpError("expected 'result' to have ")
           << inputDynamic << " dynamic dims as 'input' does, got "
           << resultDynamic;
  if (inputStatic != resultStatic)
    return emitOpError("expected the static dims of 'result' to multiply to ")
           << inputStatic << " as those of 'input' do, got " << resultStatic;
  return success();
}

OpFoldResult ReshapeOp::fold(FoldAdaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) is reshape(x): both steps keep the dynamic dims in
  // order and the static products equal, so the composition does too.
  if (auto producer = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(producer.getInput());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// TransposeOp
//===----------------------------------------------------------------------===//

static FailureOr<RankedTensorType> inferTranspose(TransposeOp::Adaptor op,
                                                  EmitFn emitError) {
  auto input = getRanked(emitError, "input", op.getInput());
  if (failed(input))
    return failure();
  // Read the property directly: a builder may not have set it yet, and the
  // generated getter asserts that it is there.
  DenseI64ArrayAttr permutationAttr = op.getProperties().permutation;
  if (!permutationAttr)
    return emitError() << "expected attribute 'permutation', got none";
  ArrayRef<int64_t> permutation = permutationAttr.asArrayRef();
  int64_t rank = input->getRank();
  if (static_cast<int64_t>(permutation.size()) != rank)
    return emitError() << "expected 'permutation' of size " << rank
                       << " (the rank of 'input'), got " << permutation.size();
  llvm::SmallBitVector seen(rank);
  for (int64_t index : permutation) {
    if (index < 0 || index >= rank || seen.test(index))
      return emitError() << "expected 'permutation' to be a permutation of [0, "
                         << rank << "), got " << formatShape(permutation);
    seen.set(index);
  }
  SmallVector<int64_t> shape;
  for (int64_t index : permutation)
    shape.push_back(input->getDimSize(index));
  return RankedTensorType::get(shape, input->getElementType());
}

TFM_VERIFY_INFERRED(TransposeOp, inferTranspose)

TFM_INFER_RETURN_TYPES(TransposeOp, inferTranspose)

static bool isIdentity(ArrayRef<int64_t> permutation) {
  for (auto [index, dim] : llvm::enumerate(permutation))
    if (dim != static_cast<int64_t>(index))
      return false;
  return true;
}

OpFoldResult TransposeOp::fold(FoldAdaptor) {
  // transpose(transpose(x, inner), outer) is x when the two cancel (result
  // dim k is x's dim inner[outer[k]]). Two that do not cancel are left as
  // written: the pattern matchers (DeBERTa's relative keys, K^T) recognise
  // an exporter's transposes one by one.
  if (auto producer = getInput().getDefiningOp<TransposeOp>()) {
    ArrayRef<int64_t> inner = producer.getPermutation();
    SmallVector<int64_t> composed;
    for (int64_t dim : getPermutation())
      composed.push_back(inner[dim]);
    if (isIdentity(composed))
      return producer.getInput();
  }
  if (!isIdentity(getPermutation()))
    return {};
  return getInput();
}

//===----------------------------------------------------------------------===//
// SliceOp, ConcatOp, ArangeOp
//===----------------------------------------------------------------------===//

/// Reads a required integer attribute from a property that a builder may not
/// have set yet (the generated getter would assert).
static FailureOr<int64_t> requireInt(EmitFn emitError, StringRef name,
                                     IntegerAttr attr) {
  if (!attr)
    return emitError() << "expected attribute '" << name << "', got none";
  return attr.getInt();
}

static FailureOr<RankedTensorType> inferSlice(SliceOp::Adaptor op,
                                              EmitFn emitError) {
  auto input = getRanked(emitError, "input", op.getInput());
  if (failed(input))
    return failure();
  const auto &props = op.getProperties();
  FailureOr<int64_t> axis = requireInt(emitError, "axis", props.axis);
  FailureOr<int64_t> start = requireInt(emitError, "start", props.start);
  FailureOr<int64_t> end = requireInt(emitError, "end", props.end);
  if (failed(axis) || failed(start) || failed(end))
    return failure();
  int64_t step = props.step ? props.step.getInt() : 1;
  int64_t rank = input->getRank();
  if (*axis < 0 || *axis >= rank)
    return emitError() << "expected 'axis' in [0, " << rank << "), got " << *axis;
  int64_t dim = input->getDimSize(*axis);
  if (ShapedType::isDynamic(dim))
    return emitError() << "expected a static dim " << *axis
                       << " of 'input' to slice, got ?";
  if (step < 1)
    return emitError() << "expected 'step' >= 1, got " << step;
  if (*start < 0 || *start >= *end || *end > dim)
    return emitError() << "expected 0 <= start < end <= " << dim
                       << " (dim " << *axis << " of 'input'), got start "
                       << *start << " and end " << *end;
  SmallVector<int64_t> shape(input->getShape());
  shape[*axis] = (*end - *start + step - 1) / step;
  return RankedTensorType::get(shape, input->getElementType());
}

TFM_VERIFY_INFERRED(SliceOp, inferSlice)

TFM_INFER_RETURN_TYPES(SliceOp, inferSlice)

static FailureOr<RankedTensorType> inferConcat(ConcatOp::Adaptor op,
                                               EmitFn emitError) {
  ValueRange inputs = op.getInputs();
  if (inputs.empty())
    return emitError() << "expected at least one input, got none";
  FailureOr<int64_t> axis = requireInt(emitError, "axis", op.getProperties().axis);
  if (failed(axis))
    return failure();
  auto first = getRanked(emitError, "inputs", inputs.front());
  if (failed(first))
    return failure();
  int64_t rank = first->getRank();
  if (*axis < 0 || *axis >= rank)
    return emitError() << "expected 'axis' in [0, " << rank << "), got " << *axis;
  SmallVector<int64_t> shape(first->getShape());
  for (auto [index, value] : llvm::enumerate(inputs.drop_front())) {
    auto type = getRanked(emitError, "inputs", value);
    if (failed(type))
      return failure();
    std::string name = "inputs #" + std::to_string(index + 1);
    if (failed(checkRank(emitError, name, *type, rank)) ||
        failed(checkElementType(emitError, name, *type, "inputs #0",
                                first->getElementType())))
      return failure();
    for (int64_t d = 0; d < rank; ++d) {
      int64_t got = type->getDimSize(d);
      if (d == *axis) {
        if (ShapedType::isDynamic(shape[d]) || ShapedType::isDynamic(got))
          shape[d] = ShapedType::kDynamic;
        else if (llvm::AddOverflow(shape[d], got, shape[d]))
          return emitError() << "expected the joined dim " << d
                             << " to fit in int64";
        continue;
      }
      if (failed(checkDim(emitError, name, d, "not joined", got, "inputs #0",
                          shape[d])))
        return failure();
      shape[d] = mergeDims(shape[d], got);
    }
  }
  return RankedTensorType::get(shape, first->getElementType());
}

TFM_VERIFY_INFERRED(ConcatOp, inferConcat)

TFM_INFER_RETURN_TYPES(ConcatOp, inferConcat)

static FailureOr<RankedTensorType> inferGatherElements(GatherElementsOp::Adaptor op,
                                                       EmitFn emitError) {
  auto input = getRanked(emitError, "input", op.getInput());
  auto indices = getRanked(emitError, "indices", op.getIndices());
  if (failed(input) || failed(indices))
    return failure();
  FailureOr<int64_t> axis = requireInt(emitError, "axis", op.getProperties().axis);
  if (failed(axis))
    return failure();
  int64_t rank = input->getRank();
  if (*axis < 0 || *axis >= rank)
    return emitError() << "expected 'axis' in [0, " << rank << "), got " << *axis;
  if (failed(checkRank(emitError, "indices", *indices, rank)))
    return failure();
  SmallVector<int64_t> shape(indices->getShape());
  for (int64_t d = 0; d < rank; ++d) {
    if (d == *axis)
      continue;
    if (failed(checkDim(emitError, "indices", d, "not gathered", indices->getDimSize(d),
                        "input", input->getDimSize(d))))
      return failure();
    shape[d] = mergeDims(shape[d], input->getDimSize(d));
  }
  return RankedTensorType::get(shape, input->getElementType());
}

TFM_VERIFY_INFERRED(GatherElementsOp, inferGatherElements)

TFM_INFER_RETURN_TYPES(GatherElementsOp, inferGatherElements)

LogicalResult ArangeOp::verify() {
  int64_t rank = getLike().getType().getRank();
  int64_t axis = getAxisAttr().getInt();
  if (axis < 0 || axis >= rank)
    return emitOpError("expected 'axis' in [0, ") << rank << "), got " << axis;
  // Exactly the counted dim, `?` included: a static length against a
  // dynamic one would be a claim nothing checks.
  RankedTensorType result = getResult().getType();
  int64_t length = getLike().getType().getDimSize(axis);
  if (result.getRank() != 1 || result.getDimSize(0) != length)
    return emitOpError("expected result shape [")
           << formatDim(length) << "] (dim " << axis << " of 'like'), got "
           << formatShape(result.getShape());
  return success();
}

//===----------------------------------------------------------------------===//
// ExpandOp
//===----------------------------------------------------------------------===//

LogicalResult ExpandOp::verify() {
  RankedTensorType input = getInput().getType(), result = getResult().getType();
  if (input.getElementType() != result.getElementType())
    return emitOpError("expected the result element type ")
           << input.getElementType() << " of 'input', got " << result.getElementType();
  int64_t offset = result.getRank() - input.getRank();
  if (offset < 0)
    return emitOpError("expected a result of rank >= ")
           << input.getRank() << " (the rank of 'input'), got " << result.getRank();
  for (int64_t d = 0; d < result.getRank(); ++d) {
    int64_t got = result.getDimSize(d);
    int64_t from = d < offset ? 1 : input.getDimSize(d - offset);
    // Exactly the input's dim, `?` included, as arange's: a static size
    // against a dynamic one would be a claim nothing checks.
    if (from != 1 && got != from)
      return emitOpError("expected result dim ")
             << d << " to be " << formatDim(from) << " (dim " << d - offset
             << " of 'input', which is not 1), got " << formatDim(got);
    if (from == 1 && ShapedType::isDynamic(got))
      return emitOpError("expected a static result dim ")
             << d << " where 'input' is stretched from 1, got ?";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// RepeatInterleaveOp
//===----------------------------------------------------------------------===//

static FailureOr<RankedTensorType>
inferRepeatInterleave(RepeatInterleaveOp::Adaptor op, EmitFn emitError) {
  auto input = getRanked(emitError, "input", op.getInput());
  if (failed(input))
    return failure();
  IntegerAttr axisAttr = op.getProperties().axis;
  IntegerAttr repeatsAttr = op.getProperties().repeats;
  if (!axisAttr)
    return emitError() << "expected attribute 'axis', got none";
  if (!repeatsAttr)
    return emitError() << "expected attribute 'repeats', got none";
  int64_t rank = input->getRank();
  int64_t axis = axisAttr.getInt();
  int64_t repeats = repeatsAttr.getInt();
  if (axis < 0 || axis >= rank)
    return emitError() << "expected 'axis' in [0, " << rank << "), got "
                       << axis;
  if (repeats < 1)
    return emitError() << "expected 'repeats' >= 1, got " << repeats;
  SmallVector<int64_t> shape(input->getShape());
  if (!ShapedType::isDynamic(shape[axis]) &&
      llvm::MulOverflow(shape[axis], repeats, shape[axis]))
    return emitError() << "expected 'repeats' (" << repeats
                       << ") times the repeated dim (" << input->getDimSize(axis)
                       << ") to fit in int64";
  return RankedTensorType::get(shape, input->getElementType());
}

TFM_VERIFY_INFERRED(RepeatInterleaveOp, inferRepeatInterleave)

TFM_INFER_RETURN_TYPES(RepeatInterleaveOp, inferRepeatInterleave)

OpFoldResult RepeatInterleaveOp::fold(FoldAdaptor) {
  if (getRepeatsAttr().getInt() == 1)
    return getInput();
  return {};
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

static FailureOr<RankedTensorType> inferAttention(AttentionOp::Adaptor op,
                                                  EmitFn emitError) {
  auto query = getRanked(emitError, "query", op.getQuery());
  auto key = getRanked(emitError, "key", op.getKey());
  auto value = getRanked(emitError, "value", op.getValue());
  if (failed(query) || failed(key) || failed(value) ||
      failed(checkRank(emitError, "query", *query, 4)) ||
      failed(checkRank(emitError, "key", *key, 4)) ||
      failed(checkRank(emitError, "value", *value, 4)))
    return failure();
  Type elementType = query->getElementType();
  if (failed(checkElementType(emitError, "key", *key, "query", elementType)) ||
      failed(
          checkElementType(emitError, "value", *value, "query", elementType)))
    return failure();
  if (TypeAttr products = op.getProductTypeAttr();
      products && !products.getValue().isBF16() && !products.getValue().isF16())
    return emitError() << "expected 'product_type' to be bf16 or f16 (the product types "
                          "besides the operands' own), got "
                       << products.getValue();

  // query [B, H, Sq, D], key [B, Hkv, Sk, D], value [B, Hkv, Sk, Dv]; the
  // H and S axes swapped in the bshd layout.
  // Read as an attribute: inference may run before ODS fills in defaults.
  HeadLayoutKindAttr layout = op.getLayoutAttr();
  const int64_t headAxis =
      AttentionOp::headAxisOf(layout ? layout.getValue() : HeadLayoutKind::bhsd);
  const int64_t seqAxis = 3 - headAxis;
  int64_t batch = query->getDimSize(0);
  int64_t heads = query->getDimSize(headAxis);
  int64_t querySeq = query->getDimSize(seqAxis);
  int64_t headDim = query->getDimSize(3);
  if (failed(checkDim(emitError, "key", 0, "batch", key->getDimSize(0), "query",
                      batch)) ||
      failed(checkDim(emitError, "key", 3, "head dim", key->getDimSize(3),
                      "query", headDim)))
    return failure();
  batch = mergeDims(batch, key->getDimSize(0));
  int64_t kvHeads = key->getDimSize(headAxis);
  int64_t keySeq = key->getDimSize(seqAxis);
  if (failed(checkDim(emitError, "value", 0, "batch", value->getDimSize(0),
                      "query' and 'key", batch)) ||
      failed(checkDim(emitError, "value", headAxis, "heads",
                      value->getDimSize(headAxis), "key", kvHeads)) ||
      failed(checkDim(emitError, "value", seqAxis, "key length",
                      value->getDimSize(seqAxis), "key", keySeq)))
    return failure();
  batch = mergeDims(batch, value->getDimSize(0));
  kvHeads = mergeDims(kvHeads, value->getDimSize(headAxis));
  keySeq = mergeDims(keySeq, value->getDimSize(seqAxis));

  // Each key/value head serves H / Hkv query heads (MHA, GQA, MQA).
  if (!ShapedType::isDynamic(kvHeads)) {
    if (kvHeads < 1)
      return emitError() << "expected 'key' heads (dim " << headAxis
                         << ") >= 1, got " << kvHeads;
    if (!ShapedType::isDynamic(heads) && heads % kvHeads != 0)
      return emitError() << "expected 'query' heads (" << heads
                         << ") to be a multiple of 'key' heads, got "
                         << kvHeads;
  }

  if (Value maskValue = op.getMask()) {
    auto mask = getRanked(emitError, "mask", maskValue);
    if (failed(mask) || failed(checkElementType(emitError, "mask", *mask,
                                                "query", elementType)))
      return failure();
    SmallVector<int64_t> scores = {batch, heads, querySeq, keySeq};
    if (!isBroadcastableTo(mask->getShape(), scores))
      return emitError() << "expected 'mask' to broadcast to the scores [B, "
                            "H, Sq, Sk] = "
                         << formatShape(scores) << ", got "
                         << formatShape(mask->getShape());
  }
  if (Value paddingValue = op.getKeyPaddingMask()) {
    auto padding = getRanked(emitError, "key_padding_mask", paddingValue);
    if (failed(padding) ||
        failed(checkRank(emitError, "key_padding_mask", *padding, 2)) ||
        failed(checkDim(emitError, "key_padding_mask", 0, "batch",
                        padding->getDimSize(0), "query", batch)) ||
        failed(checkDim(emitError, "key_padding_mask", 1, "key length",
                        padding->getDimSize(1), "key", keySeq)))
      return failure();
    batch = mergeDims(batch, padding->getDimSize(0));
  }

  // Score modifiers: each takes the next operands its definition lists.
  ValueRange modifierOperands = op.getModifierOperands();
  size_t next = 0;
  auto known = [](int64_t d) { return ShapedType::isDynamic(d) ? int64_t(-1) : d; };
  modifiers::AttentionDims dims{known(heads), known(querySeq), known(keySeq),
                                known(headDim), known(value->getDimSize(3))};
  if (ArrayAttr list = op.getModifiersAttr()) {
    for (auto [index, attr] : llvm::enumerate(list)) {
      auto dict = dyn_cast<DictionaryAttr>(attr);
      if (!dict)
        return emitError() << "expected 'modifiers' #" << index
                           << " to be a dictionary, got " << attr;
      auto kind = dict.getAs<StringAttr>("kind");
      const modifiers::ScoreModifier *definition =
          kind ? modifiers::lookupModifier(kind.str()) : nullptr;
      size_t count = definition ? definition->operands().size() : 0;
      if (next + count > modifierOperands.size())
        return emitError() << "expected " << count << " modifier operand(s) for '"
                           << kind.getValue() << "' (#" << index << "), "
                           << modifierOperands.size() - next << " left";
      for (Value operand : modifierOperands.slice(next, count)) {
        auto type = getRanked(emitError, "modifier operand", operand);
        if (failed(type) || failed(checkElementType(emitError, "modifier operand",
                                                    *type, "query", elementType)))
          return failure();
      }
      if (failed(resolveModifier(dict, modifierOperands.slice(next, count).getTypes(),
                                 dims, emitError)))
        return failure();
      next += count;
    }
  }
  if (next != modifierOperands.size())
    return emitError() << "expected " << next
                       << " modifier operand(s), as 'modifiers' lists, got "
                       << modifierOperands.size();
  if (DictionaryAttr rope = op.getRopeAttr()) {
    attune::codegen::RopeSpec spec;
    if (std::string problem = readRope(rope, known(headDim), spec); !problem.empty())
      return emitError() << problem;
  }
  if (FloatAttr softcap = op.getSoftcapAttr()) {
    double c = softcap.getValueAsDouble();
    if (!(c > 0) || !std::isfinite(c))
      return emitError() << "expected 'softcap' to be positive and finite, got " << c;
    if (ArrayAttr list = op.getModifiersAttr())
      for (Attribute attr : list) {
        auto kind = cast<DictionaryAttr>(attr).getAs<StringAttr>("kind");
        const modifiers::ScoreModifier *definition = modifiers::lookupModifier(kind.str());
        if (definition && !definition->contentTerms({}).empty())
          return emitError() << "expected no content modifier with 'softcap' (the cap "
                                "would have to include its terms), got '"
                             << kind.getValue() << "'";
      }
  }
  SmallVector<int64_t, 4> result = {batch, heads, querySeq, value->getDimSize(3)};
  if (headAxis == 2)
    std::swap(result[1], result[2]);
  return RankedTensorType::get(result, elementType);
}

SmallVector<ValueRange> AttentionOp::getModifierOperandGroups() {
  SmallVector<ValueRange> groups;
  ValueRange operands = getModifierOperands();
  size_t next = 0;
  if (ArrayAttr list = getModifiersAttr())
    for (Attribute attr : list) {
      auto kind = cast<DictionaryAttr>(attr).getAs<StringAttr>("kind");
      size_t count = modifiers::lookupModifier(kind.str())->operands().size();
      groups.push_back(operands.slice(next, count));
      next += count;
    }
  return groups;
}

TFM_VERIFY_INFERRED(AttentionOp, inferAttention)

TFM_INFER_RETURN_TYPES(AttentionOp, inferAttention)

//===----------------------------------------------------------------------===//
// Score modifiers
//===----------------------------------------------------------------------===//

std::string attune::tfm::parseModifier(DictionaryAttr dict, ResolvedModifier &out) {
  std::string text;
  llvm::raw_string_ostream os(text);
  auto kind = dict.getAs<StringAttr>("kind");
  if (!kind) {
    os << "expected a score modifier to have a string 'kind' ("
       << modifiers::modifierNames() << "), got " << dict;
    return text;
  }
  out.definition = modifiers::lookupModifier(kind.str());
  if (!out.definition) {
    os << "unknown score modifier '" << kind.getValue() << "', expected one of "
       << modifiers::modifierNames();
    return text;
  }
  out.params.clear();
  for (NamedAttribute entry : dict) {
    if (entry.getName() == "kind")
      continue;
    double value;
    if (auto integer = dyn_cast<IntegerAttr>(entry.getValue())) {
      value = integer.getType().isInteger(1)
                  ? double(integer.getValue().getBoolValue())
                  : double(integer.getValue().getSExtValue());
    } else if (auto real = dyn_cast<FloatAttr>(entry.getValue())) {
      value = real.getValueAsDouble();
    } else {
      os << "modifier '" << kind.getValue() << "': expected '"
         << entry.getName().getValue() << "' to be a number or a boolean, got "
         << entry.getValue();
      return text;
    }
    out.params[entry.getName().str()] = value;
  }
  return "";
}

FailureOr<ResolvedModifier>
attune::tfm::resolveModifier(DictionaryAttr dict, TypeRange operandTypes,
                             const modifiers::AttentionDims &dims,
                             EmitFn emitError) {
  ResolvedModifier resolved;
  if (std::string problem = parseModifier(dict, resolved); !problem.empty())
    return emitError() << problem;
  std::vector<std::vector<int64_t>> shapes;
  for (Type type : operandTypes) {
    ArrayRef<int64_t> shape = cast<RankedTensorType>(type).getShape();
    std::vector<int64_t> dimsOf;
    for (int64_t d : shape)
      dimsOf.push_back(ShapedType::isDynamic(d) ? -1 : d);
    shapes.push_back(std::move(dimsOf));
  }
  std::string problem = modifiers::checkModifier(*resolved.definition,
                                                 resolved.params, dims, shapes);
  if (!problem.empty())
    return emitError() << problem;
  return resolved;
}

//===----------------------------------------------------------------------===//
// RoPE
//===----------------------------------------------------------------------===//

namespace {

/// Checks a RoPE parameter set against head dim `headDim` (-1: dynamic).
std::string checkRope(const attune::codegen::RopeSpec &rope, int64_t headDim) {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (!(rope.base > 0) || !std::isfinite(rope.base))
    os << "expected rope 'base' finite and > 0, got " << rope.base;
  else if (rope.rotaryDims < 2 || rope.rotaryDims % 2 != 0)
    os << "expected rope 'rotary_dims' even and >= 2, got " << rope.rotaryDims;
  else if (headDim >= 0 && rope.rotaryDims > headDim)
    os << "expected rope 'rotary_dims' <= the head dim " << headDim << ", got "
       << rope.rotaryDims;
  else if (rope.positionOffset < 0 || rope.positionOffset >= (int64_t(1) << 30))
    os << "expected rope 'position_offset' in [0, 2^30), got " << rope.positionOffset;
  else
    os << attune::codegen::checkRopeScaling(rope);
  return text;
}

/// Reads a rope `scaling` dictionary into `out`; "" or what is wrong.
std::string readRopeScaling(DictionaryAttr dict, attune::codegen::RopeSpec &out) {
  using Scaling = attune::codegen::RopeSpec::Scaling;
  auto kind = dict.getAs<StringAttr>("kind");
  if (!kind)
    return "expected rope 'scaling' to have a string 'kind' (linear or llama3)";
  if (kind.getValue() == "linear")
    out.scaling = Scaling::Linear;
  else if (kind.getValue() == "llama3")
    out.scaling = Scaling::Llama3;
  else
    return "expected rope scaling kind 'linear' or 'llama3', got '" +
           kind.getValue().str() + "'";
  for (NamedAttribute entry : dict) {
    StringRef name = entry.getName().getValue();
    auto number = dyn_cast<FloatAttr>(entry.getValue());
    auto integer = dyn_cast<IntegerAttr>(entry.getValue());
    bool llama3 = out.scaling == Scaling::Llama3;
    if (name == "kind")
      continue;
    if (name == "factor" && number)
      out.factor = number.getValueAsDouble();
    else if (llama3 && name == "low_freq_factor" && number)
      out.lowFreqFactor = number.getValueAsDouble();
    else if (llama3 && name == "high_freq_factor" && number)
      out.highFreqFactor = number.getValueAsDouble();
    else if (llama3 && name == "original_max_positions" && integer)
      out.originalMaxPositions = integer.getInt();
    else
      return "expected rope " + kind.getValue().str() + " scaling entries " +
             (llama3 ? "factor, low_freq_factor, high_freq_factor (floats) and "
                       "original_max_positions (integer)"
                     : "factor (float)") +
             ", got '" + name.str() + "'";
  }
  return "";
}

} // namespace

std::string attune::tfm::readRope(DictionaryAttr dict, int64_t headDim,
                                  attune::codegen::RopeSpec &out) {
  out = attune::codegen::RopeSpec();
  out.enabled = true;
  out.rotaryDims = headDim;
  std::string text;
  llvm::raw_string_ostream os(text);
  for (NamedAttribute entry : dict) {
    StringRef name = entry.getName().getValue();
    Attribute value = entry.getValue();
    auto integer = dyn_cast<IntegerAttr>(value);
    bool isBool = integer && integer.getType().isInteger(1);
    if (name == "base" && isa<FloatAttr>(value)) {
      out.base = cast<FloatAttr>(value).getValueAsDouble();
    } else if (name == "rotary_dims" && integer && !isBool) {
      out.rotaryDims = integer.getInt();
    } else if (name == "interleaved" && isBool) {
      out.interleaved = integer.getValue().getBoolValue();
    } else if (name == "position_offset" && integer && !isBool) {
      out.positionOffset = integer.getInt();
    } else if (name == "scaling" && isa<DictionaryAttr>(value)) {
      if (std::string problem = readRopeScaling(cast<DictionaryAttr>(value), out);
          !problem.empty())
        return problem;
    } else {
      os << "expected 'rope' entries base (float), rotary_dims (integer), "
            "interleaved (bool), position_offset (integer) and scaling "
            "(dictionary), got '"
         << name << "' = " << value;
      return text;
    }
  }
  if (out.rotaryDims < 0) // dynamic head dim and no rotary_dims
    return "expected 'rope' to give rotary_dims when the head dim is dynamic";
  return checkRope(out, headDim);
}

DictionaryAttr attune::tfm::ropeScalingDictionary(MLIRContext *context,
                                                  const attune::codegen::RopeSpec &rope) {
  using Scaling = attune::codegen::RopeSpec::Scaling;
  if (rope.scaling == Scaling::None)
    return {};
  Builder b(context);
  SmallVector<NamedAttribute> entries = {
      b.getNamedAttr("factor", b.getF64FloatAttr(rope.factor))};
  if (rope.scaling == Scaling::Linear) {
    entries.push_back(b.getNamedAttr("kind", b.getStringAttr("linear")));
  } else {
    entries.push_back(b.getNamedAttr("kind", b.getStringAttr("llama3")));
    entries.push_back(
        b.getNamedAttr("low_freq_factor", b.getF64FloatAttr(rope.lowFreqFactor)));
    entries.push_back(
        b.getNamedAttr("high_freq_factor", b.getF64FloatAttr(rope.highFreqFactor)));
    entries.push_back(b.getNamedAttr("original_max_positions",
                                     b.getI64IntegerAttr(rope.originalMaxPositions)));
  }
  return b.getDictionaryAttr(entries);
}

DictionaryAttr attune::tfm::ropeDictionary(MLIRContext *context,
                                           const attune::codegen::RopeSpec &rope) {
  Builder b(context);
  SmallVector<NamedAttribute> entries = {
      b.getNamedAttr("base", b.getF64FloatAttr(rope.base)),
      b.getNamedAttr("rotary_dims", b.getI64IntegerAttr(rope.rotaryDims))};
  if (rope.interleaved)
    entries.push_back(b.getNamedAttr("interleaved", b.getBoolAttr(true)));
  if (rope.positionOffset != 0)
    entries.push_back(
        b.getNamedAttr("position_offset", b.getI64IntegerAttr(rope.positionOffset)));
  if (DictionaryAttr scaling = ropeScalingDictionary(context, rope))
    entries.push_back(b.getNamedAttr("scaling", scaling));
  return b.getDictionaryAttr(entries);
}

bool attune::tfm::isReadOnlyAsAttentionHeads(Value value) {
  if (value.use_empty())
    return false;
  for (Operation *user : value.getUsers()) {
    auto reshape = dyn_cast<ReshapeOp>(user);
    if (!reshape ||
        cast<RankedTensorType>(reshape.getType()).getRank() != 4 ||
        reshape.getResult().use_empty())
      return false;
    for (OpOperand &use : reshape.getResult().getUses()) {
      auto attention = dyn_cast<AttentionOp>(use.getOwner());
      if (!attention || attention.getLayout() != HeadLayoutKind::bshd ||
          use.getOperandNumber() > 2)
        return false;
    }
  }
  return true;
}

attune::codegen::RopeSpec attune::tfm::ropeOf(RopeOp op) {
  attune::codegen::RopeSpec rope;
  rope.enabled = true;
  rope.base = op.getBase().convertToDouble();
  rope.rotaryDims = op.getRotaryDims()
                        ? static_cast<int64_t>(*op.getRotaryDims())
                        : cast<RankedTensorType>(op.getInput().getType()).getDimSize(3);
  rope.interleaved = op.getInterleaved();
  rope.positionOffset = op.getPositionOffset();
  // The verifier reports a malformed dictionary; here it reads as far as
  // it is valid.
  if (DictionaryAttr scaling = op.getScalingAttr())
    (void)readRopeScaling(scaling, rope);
  return rope;
}

/// tfm.rope and tfm.score_bias: a rank-4 'input' whose type the result has.
static LogicalResult checkRank4Elementwise(EmitFn emitError, RankedTensorType input,
                                           Type result) {
  if (failed(checkRank(emitError, "input", input, 4)))
    return failure();
  if (result != input)
    return emitError() << "expected the result type " << input
                       << " of 'input', got " << result;
  return success();
}

LogicalResult RopeOp::verify() {
  auto emitOp = [&] { return emitOpError(); };
  EmitFn emitError = emitOp; // a function_ref: the lambda must outlive it
  auto input = cast<RankedTensorType>(getInput().getType());
  if (failed(checkRank4Elementwise(emitError, input, getType())))
    return failure();
  int64_t headDim = input.getDimSize(3);
  if (ShapedType::isDynamic(headDim) && !getRotaryDims())
    return emitError() << "expected 'rotary_dims' when the head dim is dynamic";
  if (Value align = getAlign()) {
    auto alignType = cast<RankedTensorType>(align.getType());
    if (failed(checkRank(emitError, "align", alignType, 4)))
      return failure();
    int64_t length = alignType.getDimSize(2), seq = input.getDimSize(2);
    if (!ShapedType::isDynamic(length) && !ShapedType::isDynamic(seq) && length < seq)
      return emitError() << "expected 'align' length (dim 2) >= the input's "
                         << seq << ", got " << length;
  }
  attune::codegen::RopeSpec rope = ropeOf(*this);
  if (DictionaryAttr scaling = getScalingAttr()) {
    attune::codegen::RopeSpec check;
    if (std::string problem = readRopeScaling(scaling, check); !problem.empty())
      return emitError() << problem;
  }
  if (ShapedType::isDynamic(headDim))
    headDim = -1;
  if (std::string problem = checkRope(rope, headDim); !problem.empty())
    return emitError() << problem;
  return success();
}

LogicalResult ScoreBiasOp::verify() {
  auto emitOp = [&] { return emitOpError(); };
  EmitFn emitError = emitOp; // a function_ref: the lambda must outlive it
  auto input = cast<RankedTensorType>(getInput().getType());
  if (failed(checkRank4Elementwise(emitError, input, getType())))
    return failure();
  for (Value operand : getModifierOperands())
    if (failed(checkElementType(emitError, "operand",
                                cast<RankedTensorType>(operand.getType()), "input",
                                input.getElementType())))
      return failure();
  // [B, H, Sq, Sk], and with content q [B, H, Sq, D], k [B, H, Sk, D].
  auto dyn = [](int64_t d) { return ShapedType::isDynamic(d) ? int64_t(-1) : d; };
  modifiers::AttentionDims dims{dyn(input.getDimSize(1)), dyn(input.getDimSize(2)),
                                dyn(input.getDimSize(3))};
  ResolvedModifier parsed;
  if (std::string problem = parseModifier(getModifier(), parsed); !problem.empty())
    return emitError() << problem;
  bool content = !parsed.definition->contentTerms(parsed.params).empty();
  if (content != bool(getQuery()))
    return emitError() << "modifier '" << parsed.definition->name() << "' "
                       << (content ? "reads the query and key rows: expected "
                                     "content(q, k) and 'scale'"
                                   : "has no content terms: expected no content(q, k)");
  if (content) {
    if (!getScale())
      return emitError() << "expected 'scale' with content(q, k): the content "
                            "terms are scaled like q . k";
    auto query = cast<RankedTensorType>(getQuery().getType());
    auto key = cast<RankedTensorType>(getKey().getType());
    if (failed(checkRank(emitError, "q", query, 4)) ||
        failed(checkRank(emitError, "k", key, 4)) ||
        failed(checkElementType(emitError, "q", query, "input", input.getElementType())) ||
        failed(checkElementType(emitError, "k", key, "input", input.getElementType())))
      return failure();
    for (auto [dim, what] : {std::pair<unsigned, StringRef>{0, "batch"}, {1, "heads"}})
      if (failed(checkDim(emitError, "q", dim, what, query.getDimSize(dim), "input",
                          input.getDimSize(dim))) ||
          failed(checkDim(emitError, "k", dim, what, key.getDimSize(dim), "input",
                          input.getDimSize(dim))))
        return failure();
    if (failed(checkDim(emitError, "q", 2, "query length", query.getDimSize(2), "input",
                        input.getDimSize(2))) ||
        failed(checkDim(emitError, "k", 2, "key length", key.getDimSize(2), "input",
                        input.getDimSize(3))) ||
        failed(checkDim(emitError, "k", 3, "head dim", key.getDimSize(3), "q",
                        query.getDimSize(3))))
      return failure();
    dims.headDim = dyn(query.getDimSize(3));
  }
  return success(succeeded(resolveModifier(
      getModifier(), getModifierOperands().getTypes(), dims, emitError)));
}

LogicalResult ScoreValuesOp::verify() {
  auto emitOp = [&] { return emitOpError(); };
  EmitFn emitError = emitOp; // a function_ref: the lambda must outlive it
  auto input = cast<RankedTensorType>(getInput().getType());
  if (failed(checkRank(emitError, "input", input, 4)))
    return failure();
  for (Value operand : getModifierOperands())
    if (failed(checkElementType(emitError, "operand",
                                cast<RankedTensorType>(operand.getType()), "input",
                                input.getElementType())))
      return failure();
  auto dyn = [](int64_t d) { return ShapedType::isDynamic(d) ? int64_t(-1) : d; };
  auto result = cast<RankedTensorType>(getType());
  modifiers::AttentionDims dims{dyn(input.getDimSize(1)), dyn(input.getDimSize(2)),
                                dyn(input.getDimSize(3))};
  if (result.getRank() == 4)
    dims.valueDim = dyn(result.getDimSize(3));
  FailureOr<ResolvedModifier> resolved = resolveModifier(
      getModifier(), getModifierOperands().getTypes(), dims, emitError);
  if (failed(resolved))
    return failure();
  std::optional<modifiers::ValueTerm> value =
      resolved->definition->valueTerm(resolved->params);
  if (!value)
    return emitError() << "modifier '" << resolved->definition->name()
                       << "' has no value term";
  auto table = cast<RankedTensorType>(getModifierOperands()[value->table].getType());
  SmallVector<int64_t> expected(input.getShape().take_front(3));
  expected.push_back(table.getDimSize(1));
  auto expectedType = RankedTensorType::get(expected, input.getElementType());
  if (result != expectedType)
    return emitError() << "expected the result type " << expectedType
                       << " ([B, H, Sq] of 'input', Dv of the value table), got "
                       << result;
  return success();
}
