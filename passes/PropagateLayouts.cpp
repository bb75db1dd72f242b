//===- PropagateLayouts.cpp - fold head transposes into tfm.attention -----===//
//
// A model splits heads as reshape [B, S, H*D] -> [B, S, H, D] then transpose
// to [B, H, S, D], and merges them back the same way. The reshapes are views;
// the transposes are copies. tfm.attention reads and writes [B, S, H, D]
// itself with `layout = #tfm.head_layout<bshd>`, so the transposes into it
// become the layout, and the transpose back out of it meets the merge's
// transpose and folds away (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "dialects/tfm/TfmOps.h"
#include "passes/Passes.h"

#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace attune {
#define GEN_PASS_DEF_PROPAGATELAYOUTS
#include "passes/Passes.h.inc"
} // namespace attune

using namespace mlir;
namespace tfm = attune::tfm;

namespace {

/// The permutation that swaps the head and sequence axes of a rank-4 tensor
/// (its own inverse).
constexpr int64_t kSwapHeads[4] = {0, 2, 1, 3};

/// x when `value` is tfm.transpose(x) swapping heads and sequence.
Value headSwapSource(Value value) {
  auto transpose = value.getDefiningOp<tfm::TransposeOp>();
  if (!transpose || transpose.getPermutation() != ArrayRef<int64_t>(kSwapHeads))
    return Value();
  return transpose.getInput();
}

/// Rewrites a bhsd attention whose query, key and value are all head swaps
/// to a bshd attention of the unswapped tensors, followed by one head swap
/// of its result (which folds into a following merge). Returns whether it
/// rewrote.
bool readHeadsInPlace(tfm::AttentionOp op) {
  if (op.getLayout() != tfm::HeadLayoutKind::bhsd)
    return false;
  Value query = headSwapSource(op.getQuery());
  Value key = headSwapSource(op.getKey());
  Value value = headSwapSource(op.getValue());
  if (!query || !key || !value)
    return false;

  OpBuilder builder(op);
  Operation *swapped = builder.clone(*op);
  auto attention = cast<tfm::AttentionOp>(swapped);
  attention.getQueryMutable().assign(query);
  attention.getKeyMutable().assign(key);
  attention.getValueMutable().assign(value);
  attention.setLayout(tfm::HeadLayoutKind::bshd);
  auto type = cast<RankedTensorType>(op.getType());
  SmallVector<int64_t, 4> shape(type.getShape());
  std::swap(shape[1], shape[2]);
  attention.getResult().setType(type.clone(shape));
  // The swapped result has the original result's type: the pass manager's
  // verifier checks the rewritten attention against its inferred type.
  Value back = tfm::TransposeOp::create(builder, op.getLoc(), op.getType(),
                                        attention.getResult(),
                                        builder.getDenseI64ArrayAttr(kSwapHeads));
  op.getResult().replaceAllUsesWith(back);
  op.erase();
  return true;
}

struct PropagateLayouts final
    : attune::impl::PropagateLayoutsBase<PropagateLayouts> {
  using PropagateLayoutsBase::PropagateLayoutsBase;

  void runOnOperation() override {
    SmallVector<tfm::AttentionOp> ops;
    getOperation()->walk([&](tfm::AttentionOp op) { ops.push_back(op); });
    for (tfm::AttentionOp op : ops)
      if (readHeadsInPlace(op))
        ++numAttentionRelaid;
    // Cancel the swaps back out of attention against the merges after them
    // (transpose of transpose), and drop the transposes nothing reads now.
    if (failed(applyPatternsGreedily(getOperation(), RewritePatternSet(&getContext()))))
      return signalPassFailure();
  }
};

} // namespace
