//===- FuseResidualNorm.cpp - a norm's residual add in the norm's kernel --===//
//
// tfm.add whose only user is a layer or RMS norm, as its input, becomes the
// norm's `residual` (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "dialects/tfm/TfmOps.h"
#include "passes/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

namespace attune {
#define GEN_PASS_DEF_FUSERESIDUALNORM
#include "passes/Passes.h.inc"
} // namespace attune

using namespace mlir;
namespace tfm = attune::tfm;

namespace {

/// The add a norm can take as input + residual: `input`'s only use is the
/// norm, and both operands have the sum's type (no broadcast: a residual
/// is a stream of the same shape; a bias add stays an op).
tfm::AddOp residualAdd(Value input) {
  auto add = input.getDefiningOp<tfm::AddOp>();
  if (!add || !add.getResult().hasOneUse())
    return nullptr;
  Type type = add.getResult().getType();
  if (add.getLhs().getType() != type || add.getRhs().getType() != type)
    return nullptr;
  return add;
}

struct FuseResidualNorm final
    : attune::impl::FuseResidualNormBase<FuseResidualNorm> {
  using FuseResidualNormBase::FuseResidualNormBase;

  void runOnOperation() override {
    SmallVector<Operation *> norms;
    getOperation()->walk([&](Operation *op) {
      if (isa<tfm::LayerNormOp, tfm::RmsNormOp>(op))
        norms.push_back(op);
    });
    for (Operation *op : norms) {
      if (auto norm = dyn_cast<tfm::LayerNormOp>(op)) {
        if (norm.getResidual())
          continue;
        if (tfm::AddOp add = residualAdd(norm.getInput()))
          fold(norm, add, norm.getInputMutable(), norm.getResidualMutable());
      } else if (auto norm = dyn_cast<tfm::RmsNormOp>(op)) {
        if (norm.getResidual())
          continue;
        if (tfm::AddOp add = residualAdd(norm.getInput()))
          fold(norm, add, norm.getInputMutable(), norm.getResidualMutable());
      }
    }
  }

  void fold(Operation *norm, tfm::AddOp add, OpOperand &input,
            MutableOperandRange residual) {
    input.set(add.getLhs());
    residual.assign(add.getRhs());
    norm->setLoc(FusedLoc::get(&getContext(), {add.getLoc(), norm->getLoc()}));
    add->erase();
    ++numFused;
  }
};

} // namespace
