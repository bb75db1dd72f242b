//===- KernelMapping.cpp - tfm ops to kernel calls over buffer views ------===//
//
// Step 2 of host code generation. Each tfm op becomes one call of a kernel
// from the catalogue in Kernels.h, its tensors seen through Halide buffer
// views (innermost dimension first, strides in elements, stride 0 where an
// operand broadcasts), flattened to the dimensionality the kernel documents.
// Reshapes become aliases, weights point into the embedded blob, constants
// become globals, and each function result is bound to the caller's output
// buffer (or copied there when its storage cannot be written).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/host/HostPlan.h"
#include "compiler/frontends/ScalarTypes.h"
#include "compiler/frontends/SafeTensors.h"
#include "compiler/support/PanelLayout.h"
#include "dialects/tfm/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

using namespace mlir;

namespace attune::codegen::host {

namespace {

/// Row-major strides of a shape, per dimension (outermost first).
SmallVector<Monomial, 4> denseStrides(ArrayRef<Monomial> shape) {
  SmallVector<Monomial, 4> strides(shape.size(), Monomial::constant(1));
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

bool isOne(const Monomial &m) { return m.isConstant() && m.factor == 1; }

ComparePredicate comparePredicate(tfm::ComparePredicateKind kind) {
  switch (kind) {
  case tfm::ComparePredicateKind::lt:
    return ComparePredicate::Lt;
  case tfm::ComparePredicateKind::le:
    return ComparePredicate::Le;
  case tfm::ComparePredicateKind::gt:
    return ComparePredicate::Gt;
  case tfm::ComparePredicateKind::ge:
    return ComparePredicate::Ge;
  case tfm::ComparePredicateKind::eq:
    return ComparePredicate::Eq;
  case tfm::ComparePredicateKind::ne:
    return ComparePredicate::Ne;
  }
  llvm_unreachable("the attribute holds one of the enum's cases");
}

/// Whether `slice` is one of q, k, v cut from a packed projection (GPT-2's
/// c_attn, [B, S, 3 * H * D]) that attention can read in place: a unit-step
/// slice of the last axis of a rank-3 tensor, read only through reshapes
/// splitting that axis into [H, D], each read only as the query, key or
/// value of a bshd tfm.attention. The attention then reads the packed rows
/// through strides (see headsView), and the slice is a view, not a copy.
bool isPackedHeadsSlice(tfm::SliceOp slice) {
  auto inputType = cast<RankedTensorType>(slice.getInput().getType());
  return inputType.getRank() == 3 && slice.getAxisAttr().getInt() == 2 &&
         slice.getStep() == 1 && tfm::isReadOnlyAsAttentionHeads(slice.getResult());
}

class KernelMapper {
public:
  KernelMapper(func::FuncOp func, const ShapeInfo &shapes,
               const KernelMappingOptions &options, KernelProgram &program)
      : func(func), shapes(shapes), options(options), program(program) {}

  LogicalResult run();

private:
  LogicalResult mapOp(Operation *op);
  LogicalResult bindWeight(tfm::WeightOp op);
  LogicalResult bindConstant(arith::ConstantOp op);
  LogicalResult bindOutputs(func::ReturnOp ret);
  LogicalResult addCall(Operation *op, KernelSpec spec,
                        SmallVector<BufferView, 6> args);

  /// Appends the score modifier `dict` (parameters with their defaults) to
  /// spec.modifiers and its operands, dense, to `args`.
  LogicalResult addModifier(Operation *op, DictionaryAttr dict, ValueRange operands,
                            KernelSpec &spec, SmallVector<BufferView, 6> &args) {
    // The verifier's own resolution: parameters with defaults, checked
    // against the operand types (no attention dims needed here).
    auto emit = [&] { return op->emitOpError(); };
    FailureOr<tfm::ResolvedModifier> resolved =
        tfm::resolveModifier(dict, operands.getTypes(), {}, emit);
    if (failed(resolved))
      return failure();
    ModifierSpec modifier;
    modifier.name = resolved->definition->name();
    for (Value operand : operands) {
      modifier.operandRanks.push_back(
          static_cast<int>(cast<RankedTensorType>(operand.getType()).getRank()));
      args.push_back(dense(operand));
    }
    modifier.params = std::move(resolved->params);
    spec.modifiers.push_back(std::move(modifier));
    return success();
  }

  Value root(Value v) const {
    auto it = aliasOf.find(v);
    return it == aliasOf.end() ? v : it->second;
  }
  ArrayRef<Monomial> dims(Value v) const { return shapes.dimsOf(v); }
  ScalarType typeOf(Value v) const {
    // Types were checked when the op was mapped (checkTypes).
    return *scalarTypeOf(cast<RankedTensorType>(v.getType()).getElementType());
  }

  /// `v` seen as the row-major shape `shape` (same element count).
  BufferView viewAs(Value v, ArrayRef<Monomial> shape) const {
    BufferView view;
    view.tensor = root(v);
    view.type = typeOf(v);
    SmallVector<Monomial, 4> strides = denseStrides(shape);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      view.extents.push_back(shape[d]);
      view.strides.push_back(strides[d]);
    }
    return view;
  }
  BufferView dense(Value v) const {
    ArrayRef<Monomial> shape = dims(v);
    if (shape.empty())
      return viewAs(v, {Monomial::constant(1)});
    return viewAs(v, shape);
  }
  BufferView flat1d(Value v) const { return viewAs(v, {product(dims(v))}); }
  /// Leading dimensions multiplied into one: [prod(d[0..r-k)), d[r-k..r)).
  BufferView flattenLeading(Value v, unsigned keep) const {
    ArrayRef<Monomial> d = dims(v);
    SmallVector<Monomial, 4> shape;
    shape.push_back(product(d.drop_back(keep)));
    shape.append(d.end() - keep, d.end());
    return viewAs(v, shape);
  }
  /// `v` broadcast from the right to `target` (outermost first): stride 0
  /// where `v` has a 1 (or no dimension) and the target does not.
  BufferView broadcastTo(Value v, ArrayRef<Monomial> target) const {
    ArrayRef<Monomial> d = dims(v);
    SmallVector<Monomial, 4> strides = denseStrides(d);
    BufferView view;
    view.tensor = root(v);
    view.type = typeOf(v);
    int64_t offset = static_cast<int64_t>(target.size()) -
                     static_cast<int64_t>(d.size());
    for (int64_t t = static_cast<int64_t>(target.size()) - 1; t >= 0; --t) {
      int64_t s = t - offset;
      bool stretched = s < 0 || (isOne(d[s]) && !isOne(target[t]));
      view.extents.push_back(target[t]);
      view.strides.push_back(stretched ? Monomial::constant(0) : strides[s]);
    }
    if (view.extents.empty()) { // rank 0 on both sides
      view.extents.push_back(Monomial::constant(1));
      view.strides.push_back(Monomial::constant(1));
    }
    return view;
  }

  func::FuncOp func;
  const ShapeInfo &shapes;
  const KernelMappingOptions &options;
  KernelProgram &program;
  llvm::DenseMap<Value, Value> aliasOf;
  std::optional<SafeTensorsView> weights;
};

/// Drops dimensions of extent 1 and merges neighbouring dimensions that
/// every argument walks contiguously (stride[i+1] == stride[i] * extent[i]);
/// an elementwise kernel then runs at the lowest rank that expresses the
/// access, and fewer distinct kernels get compiled. Extents are the same in
/// every argument (the output's), so one decision holds for all.
void collapseDims(SmallVectorImpl<BufferView> &args) {
  auto erase = [&](size_t i) {
    for (BufferView &v : args) {
      v.extents.erase(v.extents.begin() + i);
      v.strides.erase(v.strides.begin() + i);
    }
  };
  for (size_t i = 0; i < args.front().extents.size() &&
                     args.front().extents.size() > 1;) {
    if (isOne(args.front().extents[i]))
      erase(i);
    else
      ++i;
  }
  for (size_t i = 0; i + 1 < args.front().extents.size();) {
    bool mergeable = llvm::all_of(args, [&](const BufferView &v) {
      return v.strides[i + 1] == v.strides[i] * v.extents[i];
    });
    if (!mergeable) {
      ++i;
      continue;
    }
    for (BufferView &v : args)
      v.extents[i] = v.extents[i] * v.extents[i + 1];
    erase(i + 1);
  }
}

LogicalResult checkTypes(Operation *op) {
  for (Value v : llvm::concat<Value>(op->getOperands(), op->getResults())) {
    auto type = dyn_cast<RankedTensorType>(v.getType());
    if (!type || !scalarTypeOf(type.getElementType()))
      return op->emitOpError("expected tensors of f32, f16, bf16, i1, i8, i32 "
                             "or i64 for host code generation, got ")
             << v.getType();
  }
  return success();
}

LogicalResult KernelMapper::addCall(Operation *op, KernelSpec spec,
                                    SmallVector<BufferView, 6> args) {
  // The catalogue is the contract with the kernel generator: check the spec
  // (element types per kind, parameters) and the arguments against it here,
  // where the op can be named, not when the kernel fails to build.
  if (std::string problem = validateKernelSpec(spec); !problem.empty())
    return op->emitOpError("has no valid kernel: ") << problem;
  std::vector<KernelArg> signature = kernelSignature(spec);
  if (signature.size() != args.size())
    return op->emitOpError("internal error: kernel '")
           << spec.symbolName() << "' takes " << signature.size()
           << " buffers, got " << args.size();
  for (auto [arg, view] : llvm::zip(signature, args)) {
    if (arg.dimensions != static_cast<int>(view.extents.size()) ||
        arg.type != view.type)
      return op->emitOpError("internal error: kernel '")
             << spec.symbolName() << "' argument '" << arg.name
             << "' expects " << arg.dimensions << " dimensions of type "
             << static_cast<int>(arg.type) << ", got "
             << view.extents.size() << " of type "
             << static_cast<int>(view.type);
    if (view.offset.overflow)
      return op->emitOpError("needs a buffer offset of more than 2^63 "
                             "elements for argument '")
             << arg.name << "'";
    for (const Monomial &m : llvm::concat<const Monomial>(view.extents,
                                                          view.strides))
      if (m.overflow || (m.isConstant() && m.factor > kMaxBufferElements))
        return op->emitOpError("needs a buffer dimension of ")
               << (m.overflow ? std::string("more than 2^63")
                              : std::to_string(m.factor))
               << " elements for argument '" << arg.name
               << "', more than the 2^31-1 a kernel buffer can address";
  }
  KernelCall call;
  call.op = op;
  call.spec = std::move(spec);
  call.args = std::move(args);
  program.calls.push_back(std::move(call));
  return success();
}

LogicalResult KernelMapper::bindWeight(tfm::WeightOp op) {
  if (!weights) {
    if (options.weightsBlob.empty())
      return op.emitOpError("names weight '")
             << op.getName() << "' but no weights blob was given";
    auto parsed = SafeTensorsView::parse(options.weightsBlob.data(),
                                         options.weightsBlob.size());
    if (!parsed)
      return op.emitOpError("cannot read the weights blob: ")
             << llvm::toString(parsed.takeError());
    weights = std::move(*parsed);
  }
  const SafeTensorEntry *entry = weights->lookup(op.getBlobKey());
  if (!entry)
    return op.emitOpError("names weight '")
           << op.getName() << "', which the weights blob does not contain";
  auto type = cast<RankedTensorType>(op.getType());
  // A packed weight is stored as its panels (compiler/support/PanelLayout.h).
  std::vector<int64_t> stored(type.getShape().begin(), type.getShape().end());
  ScalarType storedType = typeOf(op.getResult());
  if (tfm::PanelsAttr panels = op.getPanels()) {
    stored = panels.isBf16Pairs()
                 ? pairPanelStorageShape(stored[0], stored[1], panels.getWidth())
                 : panelStorageShape(stored[0], stored[1], panels.getWidth());
    if (panels.isBf16Pairs())
      storedType = ScalarType::BF16;
  }
  if (entry->dtype != storedType ||
      ArrayRef<int64_t>(entry->shape) != ArrayRef<int64_t>(stored))
    return op.emitOpError("expected weight '")
           << op.getName() << "' of type " << type
           << " in the weights blob, got dtype "
           << safeTensorsDTypeName(entry->dtype) << " and shape ["
           << llvm::make_range(entry->shape.begin(), entry->shape.end())
           << "]";
  Storage storage;
  storage.kind = Storage::Weight;
  storage.weightOffset = weights->dataOffset() + entry->offset;
  program.storage[op.getResult()] = storage;
  program.usesWeights = true;
  return success();
}

LogicalResult KernelMapper::bindConstant(arith::ConstantOp op) {
  auto attr = dyn_cast<DenseElementsAttr>(op.getValue());
  if (!attr)
    return op.emitOpError("expected a dense tensor constant, got ")
           << op.getValue();
  Type elementType = attr.getElementType();
  std::string bytes;
  if (auto floatType = dyn_cast<FloatType>(elementType)) {
    unsigned width = floatType.getWidth() / 8;
    for (const APFloat &value : attr.getValues<APFloat>()) {
      uint64_t bits = value.bitcastToAPInt().getZExtValue();
      for (unsigned b = 0; b < width; ++b)
        bytes.push_back(static_cast<char>((bits >> (8 * b)) & 0xff));
    }
  } else {
    unsigned width = scalarTypeBytes(typeOf(op.getResult()));
    for (const APInt &value : attr.getValues<APInt>()) {
      uint64_t bits = value.getZExtValue();
      for (unsigned b = 0; b < width; ++b)
        bytes.push_back(static_cast<char>((bits >> (8 * b)) & 0xff));
    }
  }
  Storage storage;
  storage.kind = Storage::Constant;
  storage.global = "__attune_constant_" + std::to_string(program.constants.size());
  program.constants.push_back({storage.global, std::move(bytes)});
  program.storage[op.getResult()] = storage;
  return success();
}

LogicalResult KernelMapper::mapOp(Operation *op) {
  using namespace attune::tfm;
  if (failed(checkTypes(op)))
    return failure();
  auto elementType = [&](Value v) { return typeOf(v); };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<WeightOp>([&](WeightOp w) { return bindWeight(w); })
      .Case<arith::ConstantOp>([&](arith::ConstantOp c) { return bindConstant(c); })
      .Case<ReshapeOp>([&](ReshapeOp r) {
        aliasOf[r.getResult()] = root(r.getInput());
        return success();
      })
      .Case<EmbeddingOp>([&](EmbeddingOp e) {
        KernelSpec spec;
        spec.kind = KernelKind::Embedding;
        spec.elementType = elementType(e.getTable());
        spec.indexType = elementType(e.getIds());
        // Ids straight from an input (possibly reshaped) are range-checked
        // by the runtime against the table's rows.
        int64_t rows = e.getTable().getType().getDimSize(0);
        if (auto arg = dyn_cast<BlockArgument>(root(e.getIds()));
            arg && !ShapedType::isDynamic(rows)) {
          int64_t &bound = program.indexBounds[arg.getArgNumber()];
          bound = bound == 0 ? rows : std::min(bound, rows);
        }
        return addCall(op, spec,
                       {dense(e.getTable()), flat1d(e.getIds()),
                        flattenLeading(e.getResult(), 1)});
      })
      .Case<LearnedPositionOp>([&](LearnedPositionOp p) {
        KernelSpec spec;
        spec.kind = KernelKind::LearnedPosition;
        spec.elementType = elementType(p.getResult());
        return addCall(op, spec,
                       {dense(p.getInput()), dense(p.getTable()),
                        dense(p.getResult())});
      })
      .Case<SinusoidalPositionOp>([&](SinusoidalPositionOp p) -> LogicalResult {
        // inferSinusoidalPosition (the op's verifier) demands [B, S, D].
        assert(p.getInput().getType().getRank() == 3 &&
               "verifier guarantees a rank-3 input");
        KernelSpec spec;
        spec.kind = KernelKind::Sinusoidal;
        spec.elementType = elementType(p.getResult());
        spec.form = p.getForm() == SinusoidalFormKind::concat
                        ? SinusoidalForm::Concat
                        : SinusoidalForm::Interleaved;
        spec.minTimescale = p.getMinTimescale().convertToDouble();
        spec.maxTimescale = p.getMaxTimescale().convertToDouble();
        return addCall(op, spec, {dense(p.getInput()), dense(p.getResult())});
      })
      .Case<MultiplicativePositionOp>([&](MultiplicativePositionOp p) {
        KernelSpec spec;
        spec.kind = KernelKind::MultiplicativePosition;
        spec.elementType = elementType(p.getResult());
        SmallVector<BufferView, 6> args = {dense(p.getInput())};
        if (Value table = p.getTable()) {
          spec.hasTable = true;
          args.push_back(dense(table));
        } else {
          spec.form = p.getFormOrDefault() == SinusoidalFormKind::concat
                          ? SinusoidalForm::Concat
                          : SinusoidalForm::Interleaved;
          spec.minTimescale = p.getMinTimescaleOrDefault();
          spec.maxTimescale = p.getMaxTimescaleOrDefault();
        }
        args.push_back(dense(p.getResult()));
        return addCall(op, spec, std::move(args));
      })
      .Case<RecursivePositionOp>([&](RecursivePositionOp p) -> LogicalResult {
        // The scan adds the carry p_k on the last hidden unit: H >= 1.
        const Monomial &hidden = dims(p.getB1())[0];
        if (!hidden.isConstant() || hidden.factor < 1)
          return p.emitOpError("expected a static hidden dim >= 1 ('b1' dim 0) "
                               "for code generation, got ")
                 << hidden.str(shapes.symbolNames());
        KernelSpec spec;
        spec.kind = KernelKind::RecursivePosition;
        spec.elementType = elementType(p.getResult());
        spec.timeStep = p.getTimeStep().convertToDouble();
        return addCall(op, spec,
                       {dense(p.getInput()), dense(p.getP0()), dense(p.getW1()),
                        dense(p.getB1()), dense(p.getW2()), dense(p.getB2()),
                        dense(p.getResult())});
      })
      .Case<ComplexEmbeddingOp>([&](ComplexEmbeddingOp e) {
        KernelSpec spec;
        spec.kind = KernelKind::ComplexEmbedding;
        spec.elementType = elementType(e.getResult());
        spec.indexType = elementType(e.getIds());
        spec.firstPosition = e.getFirstPosition();
        // As for embedding: ids straight from an input are range-checked by
        // the runtime against the tables' rows.
        int64_t rows = e.getAmplitude().getType().getDimSize(0);
        if (auto arg = dyn_cast<BlockArgument>(root(e.getIds()));
            arg && !ShapedType::isDynamic(rows)) {
          int64_t &bound = program.indexBounds[arg.getArgNumber()];
          bound = bound == 0 ? rows : std::min(bound, rows);
        }
        return addCall(op, spec,
                       {dense(e.getIds()), dense(e.getAmplitude()),
                        dense(e.getFrequency()), dense(e.getPhase()),
                        dense(e.getResult())});
      })
      .Case<ComplexLinearOp>([&](ComplexLinearOp l) {
        KernelSpec spec;
        spec.kind = KernelKind::ComplexLinear;
        spec.elementType = elementType(l.getResult());
        spec.hasBias = static_cast<bool>(l.getBiasReal());
        SmallVector<BufferView, 6> args = {flattenLeading(l.getInput(), 1),
                                           dense(l.getWeightReal()),
                                           dense(l.getWeightImag())};
        if (spec.hasBias) {
          args.push_back(dense(l.getBiasReal()));
          args.push_back(dense(l.getBiasImag()));
        }
        args.push_back(flattenLeading(l.getResult(), 1));
        return addCall(op, spec, std::move(args));
      })
      .Case<LayerNormOp>([&](LayerNormOp n) {
        KernelSpec spec;
        spec.kind = KernelKind::LayerNorm;
        spec.elementType = elementType(n.getResult());
        spec.epsilon = n.getEpsilon().convertToDouble();
        spec.hasResidual = static_cast<bool>(n.getResidual());
        SmallVector<BufferView, 6> args = {flattenLeading(n.getInput(), 1)};
        if (spec.hasResidual)
          args.push_back(flattenLeading(n.getResidual(), 1));
        args.append({dense(n.getGamma()), dense(n.getBeta()),
                     flattenLeading(n.getResult(), 1)});
        return addCall(op, spec, std::move(args));
      })
      .Case<RmsNormOp>([&](RmsNormOp n) {
        KernelSpec spec;
        spec.kind = KernelKind::RmsNorm;
        spec.elementType = elementType(n.getResult());
        spec.epsilon = n.getEpsilon().convertToDouble();
        spec.hasResidual = static_cast<bool>(n.getResidual());
        SmallVector<BufferView, 6> args = {flattenLeading(n.getInput(), 1)};
        if (spec.hasResidual)
          args.push_back(flattenLeading(n.getResidual(), 1));
        args.append({dense(n.getGamma()), flattenLeading(n.getResult(), 1)});
        return addCall(op, spec, std::move(args));
      })
      .Case<LinearOp>([&](LinearOp l) {
        KernelSpec spec;
        spec.kind = KernelKind::Linear;
        spec.elementType = elementType(l.getResult());
        spec.hasBias = static_cast<bool>(l.getBias());
        switch (l.getActivation()) {
        case ActivationKind::none:
          break;
        case ActivationKind::relu:
          spec.activation = UnaryKind::Relu;
          break;
        case ActivationKind::gelu:
          spec.activation = UnaryKind::GeluErf;
          break;
        case ActivationKind::gelu_tanh:
          spec.activation = UnaryKind::GeluTanh;
          break;
        case ActivationKind::silu:
          spec.activation = UnaryKind::Silu;
          break;
        }
        SmallVector<BufferView, 6> args = {flattenLeading(l.getInput(), 1),
                                           dense(l.getWeight())};
        auto weightType = cast<RankedTensorType>(l.getWeight().getType());
        if (auto panels =
                dyn_cast_or_null<PanelsAttr>(weightType.getEncoding())) {
          // tfm.weight's verifier: static [K, N], read only by linears.
          int64_t K = weightType.getDimSize(0), N = weightType.getDimSize(1);
          spec.weightPanel = panels.getWidth();
          if (panels.isBf16Pairs()) {
            spec.weightType = ScalarType::BF16;
            std::vector<int64_t> stored =
                pairPanelStorageShape(K, N, panels.getWidth());
            args[1] = viewAs(l.getWeight(), {Monomial::constant(stored[0]),
                                             Monomial::constant(stored[1]),
                                             Monomial::constant(stored[2]),
                                             Monomial::constant(stored[3])});
            args[1].type = ScalarType::BF16;
          } else {
            std::vector<int64_t> stored =
                panelStorageShape(K, N, panels.getWidth());
            args[1] = viewAs(l.getWeight(), {Monomial::constant(stored[0]),
                                             Monomial::constant(stored[1]),
                                             Monomial::constant(stored[2])});
          }
        }
        if (l.getBias())
          args.push_back(dense(l.getBias()));
        args.push_back(flattenLeading(l.getResult(), 1));
        return addCall(op, spec, std::move(args));
      })
      .Case<MatmulOp>([&](MatmulOp m) {
        KernelSpec spec;
        spec.kind = KernelKind::Matmul;
        spec.elementType = elementType(m.getResult());
        spec.transposeA = m.getTransposeA();
        spec.transposeB = m.getTransposeB();
        return addCall(op, spec,
                       {flattenLeading(m.getLhs(), 2),
                        flattenLeading(m.getRhs(), 2),
                        flattenLeading(m.getResult(), 2)});
      })
      .Case<SoftmaxOp>([&](SoftmaxOp s) -> LogicalResult {
        int64_t rank = s.getInput().getType().getRank();
        int64_t axis = s.getAxis();
        if (axis < 0)
          axis += rank;
        if (axis != rank - 1)
          return s.emitOpError("softmax over axis ")
                 << axis << " is not supported by code generation (only the "
                 << "last axis, " << rank - 1 << ")";
        KernelSpec spec;
        spec.kind = KernelKind::Softmax;
        spec.elementType = elementType(s.getResult());
        return addCall(op, spec,
                       {flattenLeading(s.getInput(), 1),
                        flattenLeading(s.getResult(), 1)});
      })
      .Case<AddOp, SubOp, MulOp, DivOp, MinimumOp, MaximumOp>([&](auto b) {
        KernelSpec spec;
        spec.kind = KernelKind::Binary;
        spec.elementType = elementType(b.getResult());
        spec.binary = isa<AddOp>(op)       ? BinaryKind::Add
                      : isa<SubOp>(op)     ? BinaryKind::Sub
                      : isa<MulOp>(op)     ? BinaryKind::Mul
                      : isa<MinimumOp>(op) ? BinaryKind::Minimum
                      : isa<MaximumOp>(op) ? BinaryKind::Maximum
                                           : BinaryKind::Div;
        ArrayRef<Monomial> target = dims(b.getResult());
        SmallVector<BufferView, 6> args = {broadcastTo(b.getLhs(), target),
                                           broadcastTo(b.getRhs(), target),
                                           broadcastTo(b.getResult(), target)};
        collapseDims(args);
        spec.rank = args.back().extents.size();
        return addCall(op, spec, std::move(args));
      })
      .Case<CompareOp>([&](CompareOp c) {
        KernelSpec spec;
        spec.kind = KernelKind::Compare;
        spec.elementType = elementType(c.getLhs());
        spec.predicate = comparePredicate(c.getPredicate());
        ArrayRef<Monomial> target = dims(c.getResult());
        SmallVector<BufferView, 6> args = {broadcastTo(c.getLhs(), target),
                                           broadcastTo(c.getRhs(), target),
                                           broadcastTo(c.getResult(), target)};
        collapseDims(args);
        spec.rank = args.back().extents.size();
        return addCall(op, spec, std::move(args));
      })
      .Case<CastOp>([&](CastOp c) {
        KernelSpec spec;
        spec.kind = KernelKind::Cast;
        spec.elementType = elementType(c.getResult());
        spec.sourceType = elementType(c.getInput());
        return addCall(op, spec, {flat1d(c.getInput()), flat1d(c.getResult())});
      })
      .Case<WhereOp>([&](WhereOp w) {
        KernelSpec spec;
        spec.kind = KernelKind::Where;
        spec.elementType = elementType(w.getResult());
        spec.condType = elementType(w.getCondition());
        ArrayRef<Monomial> target = dims(w.getResult());
        SmallVector<BufferView, 6> args = {
            broadcastTo(w.getCondition(), target),
            broadcastTo(w.getOnTrue(), target),
            broadcastTo(w.getOnFalse(), target),
            broadcastTo(w.getResult(), target)};
        collapseDims(args);
        spec.rank = args.back().extents.size();
        return addCall(op, spec, std::move(args));
      })
      .Case<ReluOp, SiluOp, GeluOp, NegOp, AbsOp, CosOp, SinOp, TanhOp, LogOp,
            SignOp, CeilOp>([&](auto u) {
        KernelSpec spec;
        spec.kind = KernelKind::Unary;
        spec.elementType = elementType(u.getResult());
        spec.unary = isa<SiluOp>(op)  ? UnaryKind::Silu
                     : isa<NegOp>(op) ? UnaryKind::Neg
                     : isa<AbsOp>(op) ? UnaryKind::Abs
                     : isa<CosOp>(op) ? UnaryKind::Cos
                     : isa<SinOp>(op) ? UnaryKind::Sin
                     : isa<TanhOp>(op) ? UnaryKind::Tanh
                     : isa<LogOp>(op) ? UnaryKind::Log
                     : isa<SignOp>(op) ? UnaryKind::Sign
                     : isa<CeilOp>(op) ? UnaryKind::Ceil
                                      : UnaryKind::Relu;
        if (auto gelu = dyn_cast<GeluOp>(op))
          spec.unary = gelu.getApproximate() == GeluApproxKind::tanh
                           ? UnaryKind::GeluTanh
                           : UnaryKind::GeluErf;
        return addCall(op, spec, {flat1d(u.getInput()), flat1d(u.getResult())});
      })
      .Case<CausalMaskOp>([&](CausalMaskOp c) -> LogicalResult {
        // CausalMaskOp::verify demands scores [..., Sq, Sk].
        assert(c.getInput().getType().getRank() >= 2 &&
               "verifier guarantees rank >= 2");
        KernelSpec spec;
        spec.kind = KernelKind::CausalMask;
        spec.elementType = elementType(c.getResult());
        spec.value = c.getValue().convertToDouble();
        return addCall(op, spec,
                       {flattenLeading(c.getInput(), 2),
                        flattenLeading(c.getResult(), 2)});
      })
      .Case<RopeOp>([&](RopeOp r) -> LogicalResult {
        ArrayRef<Monomial> x = dims(r.getInput());
        if (!x[3].isConstant())
          return r.emitOpError("expected a static head dimension, got ")
                 << x[3].str(shapes.symbolNames());
        KernelSpec spec;
        spec.kind = KernelKind::Rope;
        spec.elementType = elementType(r.getResult());
        spec.headDim = x[3].factor;
        spec.rope = ropeOf(r);
        SmallVector<BufferView, 6> args = {dense(r.getInput())};
        if (Value align = r.getAlign()) {
          spec.ropeAligned = true;
          args.push_back(dense(align));
        }
        args.push_back(dense(r.getResult()));
        return addCall(op, spec, std::move(args));
      })
      .Case<ScoreBiasOp>([&](ScoreBiasOp sb) -> LogicalResult {
        KernelSpec spec;
        spec.kind = KernelKind::ScoreBias;
        spec.elementType = elementType(sb.getResult());
        SmallVector<BufferView, 6> args = {dense(sb.getInput())};
        if (sb.getQuery()) {
          spec.hasContent = true;
          spec.scale = sb.getScale() ? sb.getScale()->convertToDouble() : 1.0;
          args.push_back(dense(sb.getQuery()));
          args.push_back(dense(sb.getKey()));
        }
        if (failed(addModifier(op, sb.getModifier(), sb.getModifierOperands(), spec, args)))
          return failure();
        args.push_back(dense(sb.getResult()));
        return addCall(op, spec, std::move(args));
      })
      .Case<ScoreValuesOp>([&](ScoreValuesOp sv) -> LogicalResult {
        KernelSpec spec;
        spec.kind = KernelKind::ScoreValues;
        spec.elementType = elementType(sv.getResult());
        SmallVector<BufferView, 6> args = {dense(sv.getInput())};
        if (failed(addModifier(op, sv.getModifier(), sv.getModifierOperands(), spec, args)))
          return failure();
        args.push_back(dense(sv.getResult()));
        return addCall(op, spec, std::move(args));
      })
      .Case<TransposeOp>([&](TransposeOp t) {
        // A copy whose input is read through permuted strides.
        ArrayRef<int64_t> perm = t.getPermutation();
        ArrayRef<Monomial> outDims = dims(t.getResult());
        SmallVector<Monomial, 4> inStrides = denseStrides(dims(t.getInput()));
        BufferView in;
        in.tensor = root(t.getInput());
        in.type = elementType(t.getInput());
        for (int64_t k = static_cast<int64_t>(perm.size()) - 1; k >= 0; --k) {
          in.extents.push_back(outDims[k]);
          in.strides.push_back(inStrides[perm[k]]);
        }
        SmallVector<BufferView, 6> args = {in, dense(t.getResult())};
        if (in.extents.empty())
          args = {dense(t.getInput()), dense(t.getResult())};
        collapseDims(args);
        KernelSpec spec;
        spec.kind = KernelKind::Copy;
        spec.elementType = elementType(t.getResult());
        spec.rank = args.back().extents.size();
        return addCall(op, spec, std::move(args));
      })
      .Case<ExpandOp>([&](ExpandOp e) {
        // A copy that reads the input with stride 0 where it stretches:
        // the broadcast operands of element-wise kernels, written out.
        SmallVector<BufferView, 6> args = {broadcastTo(e.getInput(), dims(e.getResult())),
                                           broadcastTo(e.getResult(), dims(e.getResult()))};
        collapseDims(args);
        KernelSpec spec;
        spec.kind = KernelKind::Copy;
        spec.elementType = elementType(e.getResult());
        spec.rank = args.back().extents.size();
        return addCall(op, spec, std::move(args));
      })
      .Case<SliceOp>([&](SliceOp sl) {
        // q, k or v of a packed projection: attention reads it in place.
        if (isPackedHeadsSlice(sl)) {
          aliasOf[sl.getResult()] = root(sl.getInput());
          return success();
        }
        // A copy whose input view starts at `start` along the axis and
        // steps `step` rows of it at a time.
        int64_t axis = sl.getAxisAttr().getInt();
        ArrayRef<Monomial> outDims = dims(sl.getResult());
        SmallVector<Monomial, 4> inStrides = denseStrides(dims(sl.getInput()));
        BufferView in;
        in.tensor = root(sl.getInput());
        in.type = elementType(sl.getInput());
        in.offset = Monomial::constant(sl.getStartAttr().getInt()) * inStrides[axis];
        for (int64_t d = static_cast<int64_t>(outDims.size()) - 1; d >= 0; --d) {
          in.extents.push_back(outDims[d]);
          in.strides.push_back(d == axis ? Monomial::constant(static_cast<int64_t>(sl.getStep())) *
                                               inStrides[d]
                                         : inStrides[d]);
        }
        SmallVector<BufferView, 6> args = {in, dense(sl.getResult())};
        collapseDims(args);
        KernelSpec spec;
        spec.kind = KernelKind::Copy;
        spec.elementType = elementType(sl.getResult());
        spec.rank = args.back().extents.size();
        return addCall(op, spec, std::move(args));
      })
      .Case<ConcatOp>([&](ConcatOp c) -> LogicalResult {
        // One copy per operand into the rows of the result it fills: the
        // result's strides, the operand's extents, starting at the sum of
        // the extents before it along the axis. An offset is one monomial:
        // static sums, or one dynamic operand alone before it (a cache of
        // past keys, then the new ones).
        int64_t axis = c.getAxisAttr().getInt();
        Value result = c.getResult();
        SmallVector<Monomial, 4> outStrides = denseStrides(dims(result));
        std::optional<Monomial> position = Monomial::constant(0);
        for (auto [i, input] : llvm::enumerate(c.getInputs())) {
          ArrayRef<Monomial> inDims = dims(input);
          if (!position)
            return c.emitOpError("expected the operands before 'inputs #")
                   << i << "' to have static joined dims " << axis
                   << ", or to be one operand: its offset is a sum of "
                   << "dynamic sizes, which code generation does not support";
          BufferView out;
          out.tensor = root(result);
          out.type = elementType(result);
          out.offset = *position * outStrides[axis];
          for (int64_t d = static_cast<int64_t>(inDims.size()) - 1; d >= 0; --d) {
            out.extents.push_back(inDims[d]);
            out.strides.push_back(outStrides[d]);
          }
          // The next offset: this one plus this operand's extent.
          if (inDims[axis].isConstant() && position->isConstant())
            position = Monomial::constant(position->factor + inDims[axis].factor);
          else if (position->isConstant() && position->factor == 0)
            position = inDims[axis];
          else
            position.reset();
          SmallVector<BufferView, 6> args = {dense(input), out};
          collapseDims(args);
          // An output must have stride 1 in dimension 0; collapseDims drops
          // a dimension 0 of extent 1 (an operand one element wide along
          // the innermost axis), which would leave the result's row stride
          // there. A unit dimension in front restores it.
          if (!isOne(args.back().strides.front()))
            for (BufferView &view : args) {
              view.extents.insert(view.extents.begin(), Monomial::constant(1));
              view.strides.insert(view.strides.begin(), Monomial::constant(1));
            }
          KernelSpec spec;
          spec.kind = KernelKind::Copy;
          spec.elementType = elementType(result);
          spec.rank = args.back().extents.size();
          if (failed(addCall(op, spec, std::move(args))))
            return failure();
        }
        return success();
      })
      .Case<ArangeOp>([&](ArangeOp a) -> LogicalResult {
        // Only the result: the length is its buffer's extent, and `like`'s
        // values are never read (nor kept alive for this op).
        KernelSpec spec;
        spec.kind = KernelKind::Arange;
        spec.elementType = elementType(a.getResult());
        spec.start = static_cast<int64_t>(a.getStart());
        // A start the kernel refuses (one an i32 result cannot hold) is
        // the op's error (addCall), not a kernel compile failure later.
        return addCall(op, spec, {dense(a.getResult())});
      })
      .Case<RepeatInterleaveOp>([&](RepeatInterleaveOp r) {
        int64_t axis = static_cast<int64_t>(r.getAxis());
        // inferRepeatInterleave (the op's verifier) demands axis in
        // [0, rank): negative axes never reach here.
        assert(axis >= 0 && axis < r.getInput().getType().getRank() &&
               "verifier guarantees the axis");
        ArrayRef<Monomial> in = dims(r.getInput()), out = dims(r.getResult());
        Monomial outer = product(in.take_front(axis));
        Monomial inner = product(in.drop_front(axis + 1));
        KernelSpec spec;
        spec.kind = KernelKind::RepeatInterleave;
        spec.elementType = elementType(r.getResult());
        spec.repeats = r.getRepeats();
        return addCall(op, spec,
                       {viewAs(r.getInput(), {outer, in[axis], inner}),
                        viewAs(r.getResult(), {outer, out[axis], inner})});
      })
      .Case<GatherElementsOp>([&](GatherElementsOp g) {
        // Any rank as [before the axis, the axis, after it]: the kernel
        // gathers along its dimension 1 (KernelCatalog.h). Off the axis
        // input and indices agree (analyzeShapes), so outer and inner are
        // the same products in all three views.
        int64_t axis = g.getAxisAttr().getInt();
        ArrayRef<Monomial> in = dims(g.getInput()), idx = dims(g.getIndices());
        Monomial outer = product(idx.take_front(axis));
        Monomial inner = product(idx.drop_front(axis + 1));
        KernelSpec spec;
        spec.kind = KernelKind::GatherElements;
        spec.elementType = elementType(g.getResult());
        spec.indexType = elementType(g.getIndices());
        return addCall(op, spec,
                       {viewAs(g.getInput(), {outer, in[axis], inner}),
                        viewAs(g.getIndices(), {outer, idx[axis], inner}),
                        viewAs(g.getResult(), {outer, idx[axis], inner})});
      })
      .Case<AttentionOp>([&](AttentionOp a) -> LogicalResult {
        ArrayRef<Monomial> q = dims(a.getQuery()), k = dims(a.getKey()),
                           v = dims(a.getValue());
        const int64_t hd = a.getHeadAxis(), sd = a.getSeqAxis();
        if (!q[3].isConstant() || !v[3].isConstant())
          return a.emitOpError("expected static head dimensions of 'query' and "
                               "'value', got ")
                 << q[3].str(shapes.symbolNames()) << " and "
                 << v[3].str(shapes.symbolNames());
        KernelSpec spec;
        spec.kind = KernelKind::Attention;
        spec.elementType = elementType(a.getResult());
        spec.scale = a.getScale().convertToDouble();
        spec.causal = a.getCausal();
        spec.bf16Products = a.getProductType() && a.getProductType()->isBF16();
        spec.f16Products = a.getProductType() && a.getProductType()->isF16();
        if (FloatAttr softcap = a.getSoftcapAttr())
          spec.softcap = softcap.getValueAsDouble();
        spec.headDim = q[3].factor;
        if (v[3].factor != q[3].factor)
          spec.valueDim = v[3].factor;
        // The most keys and queries a call can have, when the model bounds
        // them.
        auto bound = [&](const Monomial &m) -> int64_t {
          if (m.isConstant())
            return m.factor;
          if (m.factor == 1 && m.symbols.size() == 1)
            return std::max<int64_t>(shapes.symbols[m.symbols[0]].max, 0);
          return 0;
        };
        spec.keyBound = bound(k[sd]);
        spec.queryBound = bound(q[sd]);
        // The kernel indexes [B, H, S, D]; a bshd tensor is that view of
        // its storage with the head and sequence strides swapped (Halide
        // orders dims innermost first: D, S, H, B).
        auto headsView = [&](Value x) {
          BufferView view = dense(x);
          // [B, S, H, D] reshaped from a slice of packed rows [B, S, N]:
          // rows N apart, starting at the slice's column.
          if (auto reshape = x.getDefiningOp<ReshapeOp>())
            if (auto slice = reshape.getInput().getDefiningOp<SliceOp>();
                slice && isPackedHeadsSlice(slice)) {
              ArrayRef<Monomial> packed = dims(slice.getInput());
              view.tensor = root(slice.getInput());
              view.offset = Monomial::constant(slice.getStartAttr().getInt());
              view.strides[2] = packed[2];            // S
              view.strides[3] = packed[1] * packed[2]; // B
            }
          if (hd == 2) {
            std::swap(view.extents[1], view.extents[2]);
            std::swap(view.strides[1], view.strides[2]);
          }
          return view;
        };
        SmallVector<BufferView, 6> args = {headsView(a.getQuery()),
                                           headsView(a.getKey()),
                                           headsView(a.getValue())};
        if (Value mask = a.getMask()) {
          spec.hasMask = true;
          Monomial target[4] = {q[0], q[hd], q[sd], k[sd]};
          args.push_back(broadcastTo(mask, target));
        }
        if (Value pad = a.getKeyPaddingMask()) {
          spec.hasKeyPadding = true;
          spec.keyPaddingType = elementType(pad);
          args.push_back(dense(pad));
        }
        if (DictionaryAttr rope = a.getRopeAttr())
          if (std::string problem = readRope(rope, spec.headDim, spec.rope);
              !problem.empty())
            return a.emitOpError(problem);
        if (ArrayAttr list = a.getModifiersAttr())
          for (auto [attr, group] :
               llvm::zip_equal(list, a.getModifierOperandGroups()))
            if (failed(addModifier(op, cast<DictionaryAttr>(attr), group, spec, args)))
              return failure();
        args.push_back(headsView(a.getResult()));
        return addCall(op, spec, std::move(args));
      })
      .Default([](Operation *op) {
        return op->emitOpError("has no kernel in host code generation");
      });
}

LogicalResult KernelMapper::bindOutputs(func::ReturnOp ret) {
  for (auto [j, result] : llvm::enumerate(ret.getOperands())) {
    Value r = root(result);
    // A kernel's result not yet claimed is written straight into the
    // caller's buffer; anything else (an input, a weight, a constant, a
    // second return of the same tensor) is copied there.
    bool computed = r.getDefiningOp() && !program.storage.count(r);
    if (computed) {
      Storage storage;
      storage.kind = Storage::Output;
      storage.index = j;
      program.storage[r] = storage;
      continue;
    }
    if (failed(checkTypes(ret)))
      return failure();
    KernelSpec spec;
    spec.kind = KernelKind::Copy;
    spec.elementType = typeOf(result);
    spec.rank = 1;
    BufferView out = flat1d(result);
    out.tensor = nullptr;
    out.outputIndex = j;
    if (failed(addCall(ret, spec, {flat1d(result), out})))
      return failure();
  }
  return success();
}

LogicalResult KernelMapper::run() {
  Block &body = func.getBody().front();
  program.indexBounds.assign(func.getNumArguments(), 0);
  for (BlockArgument arg : body.getArguments()) {
    auto type = cast<RankedTensorType>(arg.getType());
    if (!scalarTypeOf(type.getElementType()))
      return func.emitOpError("expected inputs of f32, f16, bf16, i1, i8, i32 "
                              "or i64, got ")
             << type << " for argument " << arg.getArgNumber();
    Storage storage;
    storage.kind = Storage::Input;
    storage.index = arg.getArgNumber();
    program.storage[arg] = storage;
  }
  for (Operation &op : body.without_terminator())
    if (failed(mapOp(&op)))
      return failure();
  auto ret = dyn_cast<func::ReturnOp>(body.getTerminator());
  if (!ret)
    return func.emitOpError("expected a func.return terminator");
  if (failed(bindOutputs(ret)))
    return failure();

  // Every other tensor a kernel writes lives in the workspace.
  for (Operation &op : body.without_terminator())
    for (Value result : op.getResults()) {
      if (aliasOf.count(result) || program.storage.count(result))
        continue;
      Storage storage;
      storage.kind = Storage::Workspace;
      storage.index = program.intermediates.size();
      program.storage[result] = storage;
      program.intermediates.push_back(result);
    }
  return success();
}

} // namespace

LogicalResult mapKernels(func::FuncOp func, const ShapeInfo &shapes,
                         const KernelMappingOptions &options,
                         KernelProgram &program) {
  return KernelMapper(func, shapes, options, program).run();
}

} // namespace attune::codegen::host
