//===- AttentionProducts.cpp - attention products in bf16 or f16 ----------===//
//
// --precision=bf16 (and f16 on the CUDA target) for attention: marks every
// tfm.attention on f32 operands with `product_type = bf16` or `f16` (see
// the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "dialects/tfm/TfmOps.h"
#include "passes/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"

namespace attune {
#define GEN_PASS_DEF_ATTENTIONPRODUCTS
#include "passes/Passes.h.inc"
} // namespace attune

using namespace mlir;
namespace tfm = attune::tfm;

namespace {

struct AttentionProducts final : attune::impl::AttentionProductsBase<AttentionProducts> {
  using AttentionProductsBase::AttentionProductsBase;

  void runOnOperation() override {
    Type products;
    if (productType == "bf16")
      products = BFloat16Type::get(&getContext());
    else if (productType == "f16")
      products = Float16Type::get(&getContext());
    else {
      getOperation()->emitError() << "tfm-attention-products: type must be bf16 or f16, got '"
                                  << productType << "'";
      return signalPassFailure();
    }
    getOperation()->walk([&](tfm::AttentionOp op) {
      auto query = cast<RankedTensorType>(op.getQuery().getType());
      if (!query.getElementType().isF32() || op.getProductTypeAttr())
        return;
      op.setProductTypeAttr(TypeAttr::get(products));
    });
  }
};

} // namespace
