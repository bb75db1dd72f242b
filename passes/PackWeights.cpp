//===- PackWeights.cpp - linear weights in the GEMM's panel layout --------===//
//
// Gives the tfm.weight a tfm.linear reads the #tfm.panels encoding; the
// driver then stores those weights packed (packWeightBlob) and the Linear
// kernel reads the panels directly (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "compiler/support/PanelLayout.h"
#include "dialects/tfm/TfmOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace attune {
#define GEN_PASS_DEF_PACKWEIGHTS
#include "passes/Passes.h.inc"
} // namespace attune

using namespace mlir;
namespace tfm = attune::tfm;

namespace {

struct PackWeights final : attune::impl::PackWeightsBase<PackWeights> {
  using PackWeightsBase::PackWeightsBase;

  void runOnOperation() override {
    if (panelWidth < 0 || panelWidth > 1024) {
      getOperation()->emitError("tfm-pack-weights: panel-width must be in "
                                "[1, 1024] (0: the CPU's), got ")
          << static_cast<int64_t>(panelWidth);
      return signalPassFailure();
    }
    const int64_t width =
        panelWidth > 0 ? static_cast<int64_t>(panelWidth)
                       : (bf16 ? attune::kBf16PanelWidth : attune::kF32PanelWidth);
    SmallVector<tfm::LinearOp> linears;
    getOperation()->walk([&](tfm::LinearOp op) { linears.push_back(op); });
    // One packed twin per weight op, shared by all its linears.
    llvm::DenseMap<Operation *, Value> packed;
    for (tfm::LinearOp linear : linears) {
      auto weight = linear.getWeight().getDefiningOp<tfm::WeightOp>();
      if (!weight || weight.getPanels())
        continue;
      auto type = cast<RankedTensorType>(weight.getType());
      if (!type.hasStaticShape() || type.getRank() != 2 ||
          !type.getElementType().isF32() || type.getEncoding())
        continue;
      Value &twin = packed[weight];
      if (!twin) {
        OpBuilder builder(weight);
        builder.setInsertionPointAfter(weight);
        auto packedType = RankedTensorType::get(
            type.getShape(), type.getElementType(),
            tfm::PanelsAttr::get(&getContext(), width,
                                 bf16 ? Type(BFloat16Type::get(&getContext()))
                                      : Type()));
        auto clone = cast<tfm::WeightOp>(builder.clone(*weight));
        clone.getResult().setType(packedType);
        twin = clone.getResult();
        ++numPacked;
      }
      linear.getWeightMutable().assign(twin);
    }
    // The originals no linear reads any more (erased after the walk, so no
    // map key dangles while it is used).
    for (auto [weight, twin] : packed)
      if (weight->use_empty())
        weight->erase();
  }
};

} // namespace
