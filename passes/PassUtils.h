//===- PassUtils.h - helpers shared by the attune passes --------*- C++ -*-===//
//
// Internal to passes/: small builders that more than one pass needs, kept in
// one place so that the forms they write stay the forms the matchers expect.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_PASSES_PASSUTILS_H
#define ATTUNE_PASSES_PASSUTILS_H

#include "dialects/tfm/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/bit.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

namespace attune {

/// How the fusion report (--fusion-report) names an op's place: the first
/// file:line:col in its location, else the location as MLIR prints it.
inline std::string reportLocation(mlir::Location loc) {
  if (auto fileLoc = loc->findInstanceOf<mlir::FileLineColLoc>())
    return (fileLoc.getFilename().getValue() + ":" + llvm::Twine(fileLoc.getLine()) + ":" +
            llvm::Twine(fileLoc.getColumn()))
        .str();
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

/// Discardable attributes -tfm-raise-encodings leaves for the fusion
/// report (and anyone reading the IR): on an op it raised, the spelling it
/// came from; on an op that had an encoding's structure but was not raised,
/// the encoding and the reason.
inline constexpr llvm::StringLiteral kRaisedFromAttr = "tfm.raised_from";
inline constexpr llvm::StringLiteral kNotRaisedAttr = "tfm.not_raised";

/// `arith.constant dense<value> : tensor<elementType>`: the scalar splat that
/// DecomposeAttention writes for scales and fills, and that FuseAttention
/// folds back into an attribute (it matches splat constants only).
inline mlir::Value createSplat(mlir::OpBuilder &builder, mlir::Location loc,
                               mlir::Type elementType, double value) {
  auto type = mlir::RankedTensorType::get({}, elementType);
  llvm::APFloat splat = mlir::FloatAttr::get(elementType, value).getValue();
  return mlir::arith::ConstantOp::create(
      builder, loc, mlir::DenseElementsAttr::get(type, splat));
}

/// `v` viewed as `type` (the same elements in row-major order). Reshapes
/// compose, so the view starts from the value under the reshapes in front of
/// `v`, and is that value itself when it has the type: a view of a view of
/// q is one reshape of q, or q. Matchers then see the tensor a graph viewed
/// twice (Hugging Face's [B, H, S, D] -> [B*H, S, D] and back) as itself.
inline mlir::Value reshapeTo(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value v,
                             mlir::RankedTensorType type) {
  while (auto reshape = v.getDefiningOp<tfm::ReshapeOp>())
    v = reshape.getInput();
  if (v.getType() == type)
    return v;
  return tfm::ReshapeOp::create(builder, loc, type, v);
}

/// A splat float constant's value.
inline std::optional<double> splatValue(mlir::Value v) {
  mlir::DenseFPElementsAttr attr;
  if (!mlir::matchPattern(v, mlir::m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  return attr.getSplatValue<llvm::APFloat>().convertToDouble();
}

/// True when x and y agree to the rounding of the element type the graph
/// computed them in (f32 at best; relative 1e-5 leaves room for the powers
/// and divisions exporters compute constants with).
inline bool closeConstants(double x, double y) {
  return std::fabs(x - y) <= 1e-5 * std::max(std::fabs(x), std::fabs(y));
}

/// Narrows [lo, hi] to the parameters p with f(p) == want, for an f that
/// never increases as p grows (a log bucket at a fixed distance falls as the
/// bucketing's maximum distance grows): binary searches for the first p with
/// f(p) <= want and the first with f(p) < want. Leaves lo > hi when no p in
/// the range gives `want`. Fitting T5's max_distance and DeBERTa's
/// max_position from observed bucket ids intersects one such interval per
/// distance.
inline void narrowToValue(int64_t &lo, int64_t &hi, int64_t want,
                          llvm::function_ref<int64_t(int64_t)> f) {
  auto first = [&](bool strict) {
    int64_t a = lo, b = hi + 1;
    while (a < b) {
      int64_t m = a + (b - a) / 2;
      int64_t got = f(m);
      if (strict ? got < want : got <= want)
        b = m;
      else
        a = m + 1;
    }
    return a;
  };
  int64_t from = first(false), to = first(true) - 1;
  lo = std::max(lo, from);
  hi = std::min(hi, to);
}

/// The roundest value in [lo, hi] (most trailing zero bits, the first of
/// them; only the 4096 values from lo are looked at): of parameters that
/// all fit, the one a model's config says (512, not 509).
inline int64_t roundestIn(int64_t lo, int64_t hi) {
  int64_t best = lo;
  for (int64_t m = lo; m <= hi && m < lo + 4096; ++m)
    if (llvm::countr_zero(uint64_t(m)) > llvm::countr_zero(uint64_t(best)))
      best = m;
  return best;
}

} // namespace attune

#endif // ATTUNE_PASSES_PASSUTILS_H
