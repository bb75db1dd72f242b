//===- MergeProjections.cpp - one tfm.linear for the q, k, v of an input --===//
//
// Linears that read one input and feed attention heads become one linear
// over their concatenated weights, sliced per original result (see the
// pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "compiler/support/MergedWeights.h"
#include "dialects/tfm/TfmOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringExtras.h"

namespace attune {
#define GEN_PASS_DEF_MERGEPROJECTIONS
#include "passes/Passes.h.inc"
} // namespace attune

using namespace mlir;
namespace tfm = attune::tfm;

namespace {

/// A plain tfm.weight a merged one can take as a part: no panels, not
/// merged already, static, and a name the merged key can list.
tfm::WeightOp partWeight(Value value, int64_t rank) {
  auto weight = value.getDefiningOp<tfm::WeightOp>();
  if (!weight || weight.getPanels() || weight.getPartSizes())
    return nullptr;
  auto type = cast<RankedTensorType>(weight.getType());
  if (type.getRank() != rank || type.getEncoding() ||
      weight.getName().contains(attune::kWeightPartSeparator) ||
      weight.getName().contains(attune::kWeightPartExtent))
    return nullptr;
  return weight;
}

/// What must agree between linears merged into one.
struct MergeKey {
  Type element;
  int64_t inFeatures = 0;
  bool transpose = false;
  tfm::InitKind init = tfm::InitKind::normal;
  double std = 0.0;
  bool hasBias = false;
  tfm::InitKind biasInit = tfm::InitKind::normal;
  double biasStd = 0.0;
  tfm::ActivationKind activation = tfm::ActivationKind::none;
  Block *block = nullptr;

  bool operator==(const MergeKey &o) const {
    return element == o.element && inFeatures == o.inFeatures &&
           transpose == o.transpose && init == o.init && std == o.std &&
           hasBias == o.hasBias && biasInit == o.biasInit &&
           biasStd == o.biasStd && activation == o.activation && block == o.block;
  }
};

/// The key of `linear` if it can be merged with others, else nothing.
std::optional<MergeKey> mergeKeyOf(tfm::LinearOp linear) {
  auto resultType = cast<RankedTensorType>(linear.getType());
  if (resultType.getRank() != 3 ||
      !tfm::isReadOnlyAsAttentionHeads(linear.getResult()))
    return std::nullopt;
  tfm::WeightOp weight = partWeight(linear.getWeight(), 2);
  if (!weight)
    return std::nullopt;
  MergeKey key;
  auto weightType = cast<RankedTensorType>(weight.getType());
  key.element = weightType.getElementType();
  key.inFeatures = weightType.getDimSize(0);
  key.transpose = weight.getTranspose();
  key.init = weight.getInit();
  key.std = weight.getStd().convertToDouble();
  key.activation = linear.getActivation();
  key.block = linear->getBlock();
  if (Value bias = linear.getBias()) {
    tfm::WeightOp b = partWeight(bias, 1);
    if (!b || b.getTranspose() ||
        cast<RankedTensorType>(b.getType()).getElementType() != key.element)
      return std::nullopt;
    key.hasBias = true;
    key.biasInit = b.getInit();
    key.biasStd = b.getStd().convertToDouble();
  }
  return key;
}

/// A tfm.weight concatenating `parts` (plain weights of one kind, as
/// partWeight and MergeKey check) along their last axis.
tfm::WeightOp mergeWeights(OpBuilder &b, Location loc,
                           ArrayRef<tfm::WeightOp> parts) {
  SmallVector<std::string> names;
  SmallVector<int64_t> sizes;
  SmallVector<Location> locs;
  tfm::WeightOp front = parts.front();
  auto first = cast<RankedTensorType>(front.getType());
  SmallVector<int64_t> shape(first.getShape());
  shape.back() = 0;
  for (tfm::WeightOp part : parts) {
    names.push_back(part.getName().str());
    sizes.push_back(cast<RankedTensorType>(part.getType()).getShape().back());
    shape.back() += sizes.back();
    locs.push_back(part.getLoc());
  }
  return tfm::WeightOp::create(
      b, FusedLoc::get(b.getContext(), locs),
      RankedTensorType::get(shape, first.getElementType()),
      b.getStringAttr(llvm::join(names, std::string(1, attune::kWeightPartSeparator))),
      front.getInitAttr(), front.getStdAttr(), front.getTransposeAttr(),
      b.getDenseI64ArrayAttr(sizes));
}

struct MergeProjections final
    : attune::impl::MergeProjectionsBase<MergeProjections> {
  using MergeProjectionsBase::MergeProjectionsBase;

  void runOnOperation() override {
    // Linears by input, in program order; each input's linears in classes
    // that can merge.
    llvm::MapVector<Value, SmallVector<std::pair<MergeKey, SmallVector<tfm::LinearOp>>>>
        byInput;
    getOperation()->walk([&](tfm::LinearOp linear) {
      std::optional<MergeKey> key = mergeKeyOf(linear);
      if (!key)
        return;
      auto &classes = byInput[linear.getInput()];
      auto it = llvm::find_if(classes, [&](auto &c) { return c.first == *key; });
      if (it == classes.end())
        classes.push_back({*key, {linear}});
      else
        it->second.push_back(linear);
    });
    for (auto &[input, classes] : byInput)
      for (auto &[key, linears] : classes)
        if (linears.size() >= 2)
          merge(linears);
  }

  void merge(ArrayRef<tfm::LinearOp> linears) {
    // The first linear in its block dominates the others' uses: the merged
    // one takes its place.
    tfm::LinearOp first = *llvm::min_element(linears, [](tfm::LinearOp a, tfm::LinearOp b) {
      return a->isBeforeInBlock(b);
    });
    OpBuilder b(first);
    SmallVector<tfm::WeightOp> weights, biases;
    SmallVector<Location> locs;
    for (tfm::LinearOp linear : linears) {
      weights.push_back(linear.getWeight().getDefiningOp<tfm::WeightOp>());
      if (Value bias = linear.getBias())
        biases.push_back(bias.getDefiningOp<tfm::WeightOp>());
      locs.push_back(linear.getLoc());
    }
    Location loc = FusedLoc::get(&getContext(), locs);
    tfm::WeightOp weight = mergeWeights(b, loc, weights);
    tfm::WeightOp bias = biases.empty() ? nullptr : mergeWeights(b, loc, biases);
    auto firstType = cast<RankedTensorType>(first.getType());
    SmallVector<int64_t> shape(firstType.getShape());
    shape.back() = cast<RankedTensorType>(weight.getType()).getShape().back();
    auto merged = tfm::LinearOp::create(
        b, loc, RankedTensorType::get(shape, firstType.getElementType()),
        first.getInput(), weight.getResult(), bias ? bias.getResult() : Value(),
        first.getActivationAttr());
    int64_t offset = 0;
    const int64_t axis = firstType.getRank() - 1;
    for (tfm::LinearOp linear : linears) {
      const int64_t size = cast<RankedTensorType>(linear.getType()).getShape().back();
      auto slice = tfm::SliceOp::create(b, linear.getLoc(), linear.getType(),
                                        merged.getResult(), axis, offset,
                                        offset + size, /*step=*/1);
      linear.getResult().replaceAllUsesWith(slice.getResult());
      offset += size;
    }
    for (tfm::LinearOp linear : linears)
      linear->erase();
    // The parts no linear reads any more (a part two linears shared is
    // listed twice).
    llvm::SetVector<Operation *> parts;
    for (tfm::WeightOp part : llvm::concat<tfm::WeightOp>(weights, biases))
      parts.insert(part);
    for (Operation *part : parts)
      if (part->use_empty())
        part->erase();
    numMerged += linears.size() - 1;
  }
};

} // namespace
