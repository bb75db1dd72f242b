//===- RecursivePositionFold.cpp - FLOATER tables at compile time ---------===//
//
// tfm.recursive_position computes its positions with a sequential scan on
// every run: each position is a step of the recursion from the last. When
// the sequence length is static and the parameters are constants, the table
// p_0 .. p_{S-1} is the same on every run, so canonicalization evaluates it
// once, in double, and leaves tfm.learned_position of that table (one add
// per element at run time).
//
// The recursion is written out again here rather than borrowed from the
// reference evaluator: the dialect does not depend on the compiler, and the
// evaluator stays an independent check of this fold (tests compare the two).
//
//===----------------------------------------------------------------------===//

#include "dialects/tfm/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#include <optional>
#include <vector>

using namespace mlir;
using namespace attune::tfm;

namespace {

/// Folds that would take more multiply-adds than this (S * 2 * H * D) are
/// left to the run-time scan: a compile should not stall on a long table
/// (2^26 is about a tenth of a second in double).
constexpr int64_t kMaxFoldWork = int64_t(1) << 26;

/// The values of a float constant, row-major, or nullopt when `value` is
/// not one.
std::optional<std::vector<double>> constantValues(Value value) {
  DenseElementsAttr attr;
  if (!matchPattern(value, m_Constant(&attr)) ||
      !isa<FloatType>(attr.getElementType()))
    return std::nullopt;
  std::vector<double> values;
  values.reserve(attr.getNumElements());
  for (const APFloat &x : attr.getValues<APFloat>())
    values.push_back(x.convertToDouble());
  return values;
}

/// recursive_position(x, constants) with static S -> learned_position(x,
/// constant table).
struct FoldConstantRecursivePosition final
    : OpRewritePattern<RecursivePositionOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(RecursivePositionOp op,
                                PatternRewriter &rewriter) const override {
    auto input = cast<RankedTensorType>(op.getInput().getType());
    const int64_t S = input.getDimSize(1), D = input.getDimSize(2);
    if (ShapedType::isDynamic(S) || ShapedType::isDynamic(D))
      return rewriter.notifyMatchFailure(
          op, "the sequence length or the model dim is dynamic: the "
              "positions are computed at run time");
    auto p0 = constantValues(op.getP0()), w1 = constantValues(op.getW1()),
         b1 = constantValues(op.getB1()), w2 = constantValues(op.getW2()),
         b2 = constantValues(op.getB2());
    if (!p0 || !w1 || !b1 || !w2 || !b2)
      return rewriter.notifyMatchFailure(
          op, "a parameter is not a constant: the positions are computed at "
              "run time");
    // Constants have static shapes, and the verifier made them agree.
    const int64_t H = static_cast<int64_t>(b1->size());
    int64_t work = 0;
    if (llvm::MulOverflow(S, 2 * H, work) || llvm::MulOverflow(work, D, work) ||
        work > kMaxFoldWork)
      return rewriter.notifyMatchFailure(
          op, "the table is too long to evaluate at compile time");

    // TfmOps.td: h(t, q) = [relu([q, t] w1 + b1), t] w2 + b2,
    // p_{k+1} = p_k + T * h(k T, p_k). w1 is [D + 1, H], w2 [H + 1, D].
    const double T = op.getTimeStep().convertToDouble();
    std::vector<double> p = *p0, hidden(H), table;
    table.reserve(S * D);
    for (int64_t k = 0; k < S; ++k) {
      table.insert(table.end(), p.begin(), p.end());
      if (k + 1 == S)
        break;
      const double t = static_cast<double>(k) * T;
      for (int64_t j = 0; j < H; ++j) {
        double a = (*b1)[j] + t * (*w1)[D * H + j];
        for (int64_t i = 0; i < D; ++i)
          a += p[i] * (*w1)[i * H + j];
        hidden[j] = a > 0 ? a : 0.0;
      }
      for (int64_t d = 0; d < D; ++d) {
        double h = (*b2)[d] + t * (*w2)[H * D + d];
        for (int64_t j = 0; j < H; ++j)
          h += hidden[j] * (*w2)[j * D + d];
        p[d] += T * h;
      }
    }

    auto elementType = cast<FloatType>(input.getElementType());
    std::vector<APFloat> rounded;
    rounded.reserve(table.size());
    for (double value : table) {
      APFloat x(value);
      bool losesInfo;
      x.convert(elementType.getFloatSemantics(), APFloat::rmNearestTiesToEven,
                &losesInfo);
      rounded.push_back(x);
    }
    auto tableType = RankedTensorType::get({S, D}, elementType);
    auto constant = arith::ConstantOp::create(
        rewriter, op.getLoc(), DenseElementsAttr::get(tableType, rounded));
    rewriter.replaceOpWithNewOp<LearnedPositionOp>(op, op.getType(),
                                                   op.getInput(), constant);
    return success();
  }
};

} // namespace

void RecursivePositionOp::getCanonicalizationPatterns(RewritePatternSet &results,
                                                      MLIRContext *context) {
  results.add<FoldConstantRecursivePosition>(context);
}
