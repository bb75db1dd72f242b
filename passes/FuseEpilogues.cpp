//===- FuseEpilogues.cpp - fold activations into tfm.linear ---------------===//
//
// relu / silu / gelu of a linear's only use becomes the linear's
// `activation`, which the Linear kernel applies to its accumulators as they
// are stored (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "dialects/tfm/TfmOps.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Location.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <optional>

namespace attune {
#define GEN_PASS_DEF_FUSEEPILOGUES
#include "passes/Passes.h.inc"
} // namespace attune

using namespace mlir;
namespace tfm = attune::tfm;

namespace {

/// The activation `op` computes, if it is one tfm.linear can apply.
std::optional<tfm::ActivationKind> activationOf(Operation *op) {
  if (isa<tfm::ReluOp>(op))
    return tfm::ActivationKind::relu;
  if (isa<tfm::SiluOp>(op))
    return tfm::ActivationKind::silu;
  if (auto gelu = dyn_cast<tfm::GeluOp>(op))
    return gelu.getApproximate() == tfm::GeluApproxKind::tanh
               ? tfm::ActivationKind::gelu_tanh
               : tfm::ActivationKind::gelu;
  return std::nullopt;
}

struct FuseEpilogues final : attune::impl::FuseEpiloguesBase<FuseEpilogues> {
  using FuseEpiloguesBase::FuseEpiloguesBase;

  void runOnOperation() override {
    SmallVector<std::pair<Operation *, tfm::ActivationKind>> sites;
    getOperation()->walk([&](Operation *op) {
      if (std::optional<tfm::ActivationKind> kind = activationOf(op))
        sites.push_back({op, *kind});
    });
    for (auto [op, kind] : sites) {
      auto linear = op->getOperand(0).getDefiningOp<tfm::LinearOp>();
      if (!linear || linear.getActivation() != tfm::ActivationKind::none ||
          !linear.getResult().hasOneUse())
        continue;
      StringRef name = tfm::stringifyActivationKind(kind);
      if (!activations.empty() && !llvm::is_contained(activations, name.str())) {
        std::string why = "the target's matmul has no " + name.str() +
                          " epilogue (it has " + llvm::join(activations, ", ") + ")";
        op->setAttr("tfm.unfused_epilogue", StringAttr::get(op->getContext(), why));
        op->emitRemark("activation left unfused: ") << why;
        continue;
      }
      // Unary ops keep their operand's type, so the linear's result type is
      // the activation's: users see the same value.
      linear.setActivation(kind);
      linear->setLoc(FusedLoc::get(op->getContext(),
                                   {linear.getLoc(), op->getLoc()}));
      op->getResult(0).replaceAllUsesWith(linear.getResult());
      op->erase();
      ++numFused;
    }
  }
};

} // namespace
