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

#include <algorithm>
#include <cmath>
#include <optional>

namespace attune {

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

} // namespace attune

#endif // ATTUNE_PASSES_PASSUTILS_H
