//===- Bf16Attention.cpp - attention products in bf16 ---------------------===//
//
// --precision=bf16 for attention: marks every tfm.attention on f32 operands
// with `product_type = bf16` (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "dialects/tfm/TfmOps.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace attune {
#define GEN_PASS_DEF_BF16ATTENTION
#include "passes/Passes.h.inc"
} // namespace attune

using namespace mlir;
namespace tfm = attune::tfm;

namespace {

struct Bf16Attention final : attune::impl::Bf16AttentionBase<Bf16Attention> {
  void runOnOperation() override {
    Type bf16 = BFloat16Type::get(&getContext());
    getOperation()->walk([&](tfm::AttentionOp op) {
      auto query = cast<RankedTensorType>(op.getQuery().getType());
      if (!query.getElementType().isF32() || op.getProductTypeAttr())
        return;
      op.setProductTypeAttr(TypeAttr::get(bf16));
    });
  }
};

} // namespace
