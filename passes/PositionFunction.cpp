//===- PositionFunction.cpp - index graphs read as functions of (i, j) ----===//

#include "passes/PositionFunction.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>

using namespace mlir;
namespace tfm = attune::tfm;
using attune::PositionFunction;

namespace {
RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

double roundTo(Type type, double x) {
  if (type.isF32())
    return static_cast<double>(static_cast<float>(x));
  return x;
}
} // namespace

std::optional<double> PositionFunction::at(Value v, Coord i, Coord j) {
  RankedTensorType type = typeOf(v);
  int64_t rank = type.getRank();
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (type.getDimSize(d) != 1)
      return fail(v, "has a third non-unit axis");
  if (rank < 1 || type.getDimSize(rank - 1) == 1)
    j = Coord();
  if (rank < 2 || type.getDimSize(rank - 2) == 1)
    i = Coord();
  Key key{v.getAsOpaquePointer(), i.value, i.query, j.value, j.query};
  if (auto it = memo.find(key); it != memo.end())
    return it->second;
  std::optional<double> result = compute(v, i, j);
  if (result)
    memo[key] = *result;
  return result;
}

std::optional<double> PositionFunction::fail(Value v, StringRef what) {
  if (why.empty()) {
    std::string name = v.getDefiningOp() ? v.getDefiningOp()->getName().getStringRef().str()
                                         : std::string("a function argument");
    why = subject + " depend on " + name + ", which " + what.str();
  }
  return std::nullopt;
}

std::optional<double> PositionFunction::compute(Value v, Coord i, Coord j) {
  Type type = typeOf(v).getElementType();
  if (!type.isF32() && !type.isInteger())
    return fail(v, "computes in " + llvm::formatv("{0}", type).str() +
                       " (f32 and integers are read)");
  Operation *def = v.getDefiningOp();
  if (!def)
    return fail(v, "is not computed from positions");
  if (auto arange = dyn_cast<tfm::ArangeOp>(def)) {
    if (!llvm::any_of(aranges, [&](const Arange &a) {
          return a.op == arange && a.query == j.query;
        }))
      aranges.push_back({arange, j.query});
    return double(arange.getStartAttr().getInt() + j.value);
  }
  if (auto constant = dyn_cast<arith::ConstantOp>(def)) {
    auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!dense || !dense.isSplat())
      return fail(v, "is a constant that is not a splat");
    if (auto fp = dyn_cast<DenseFPElementsAttr>(dense))
      return fp.getSplatValue<APFloat>().convertToDouble();
    return double(dense.getSplatValue<APInt>().getSExtValue());
  }
  if (auto reshape = dyn_cast<tfm::ReshapeOp>(def))
    return throughReshape(reshape, i, j);
  auto operand = [&](Value x) { return at(x, i, j); };
  auto unary = [&](Value x, auto f) -> std::optional<double> {
    std::optional<double> a = operand(x);
    if (!a)
      return std::nullopt;
    return roundTo(type, f(*a));
  };
  auto binary = [&](Value l, Value r, auto f) -> std::optional<double> {
    std::optional<double> a = operand(l), b = operand(r);
    if (!a || !b)
      return std::nullopt;
    return roundTo(type, f(*a, *b));
  };
  if (auto op = dyn_cast<tfm::AddOp>(def))
    return binary(op.getLhs(), op.getRhs(), [](double a, double b) { return a + b; });
  if (auto op = dyn_cast<tfm::SubOp>(def))
    return binary(op.getLhs(), op.getRhs(), [](double a, double b) { return a - b; });
  if (auto op = dyn_cast<tfm::MulOp>(def))
    return binary(op.getLhs(), op.getRhs(), [](double a, double b) { return a * b; });
  if (auto op = dyn_cast<tfm::DivOp>(def))
    return binary(op.getLhs(), op.getRhs(), [](double a, double b) { return a / b; });
  if (auto op = dyn_cast<tfm::MinimumOp>(def))
    return binary(op.getLhs(), op.getRhs(), [](double a, double b) {
      return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
    });
  if (auto op = dyn_cast<tfm::MaximumOp>(def))
    return binary(op.getLhs(), op.getRhs(), [](double a, double b) {
      return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
    });
  if (auto op = dyn_cast<tfm::NegOp>(def))
    return unary(op.getInput(), [](double a) { return -a; });
  if (auto op = dyn_cast<tfm::AbsOp>(def))
    return unary(op.getInput(), [](double a) { return std::fabs(a); });
  if (auto op = dyn_cast<tfm::SignOp>(def))
    return unary(op.getInput(), [](double a) { return a > 0 ? 1.0 : a < 0 ? -1.0 : a; });
  if (auto op = dyn_cast<tfm::CeilOp>(def))
    return unary(op.getInput(), [](double a) { return std::ceil(a); });
  if (auto op = dyn_cast<tfm::LogOp>(def))
    return unary(op.getInput(), [](double a) {
      return double(std::log(static_cast<float>(a)));
    });
  if (auto op = dyn_cast<tfm::CompareOp>(def)) {
    std::optional<double> a = operand(op.getLhs()), b = operand(op.getRhs());
    if (!a || !b)
      return std::nullopt;
    switch (op.getPredicate()) {
    case tfm::ComparePredicateKind::lt: return double(*a < *b);
    case tfm::ComparePredicateKind::le: return double(*a <= *b);
    case tfm::ComparePredicateKind::gt: return double(*a > *b);
    case tfm::ComparePredicateKind::ge: return double(*a >= *b);
    case tfm::ComparePredicateKind::eq: return double(*a == *b);
    case tfm::ComparePredicateKind::ne: return double(*a != *b);
    }
    return std::nullopt;
  }
  if (auto op = dyn_cast<tfm::CastOp>(def)) {
    std::optional<double> a = operand(op.getInput());
    if (!a)
      return std::nullopt;
    if (type.isInteger(1))
      return double(*a != 0);
    if (type.isInteger()) {
      // Toward zero, saturating, NaN to 0 (tfm.cast's definition).
      if (std::isnan(*a))
        return 0.0;
      double limit = std::ldexp(1.0, type.getIntOrFloatBitWidth() - 1);
      return std::clamp(std::trunc(*a), -limit, limit - 1);
    }
    return roundTo(type, *a);
  }
  if (auto op = dyn_cast<tfm::WhereOp>(def)) {
    std::optional<double> c = operand(op.getCondition());
    if (!c)
      return std::nullopt;
    return operand(*c != 0 ? op.getOnTrue() : op.getOnFalse());
  }
  return fail(v, "is not an element-wise op of positions and constants");
}

/// A reshape that keeps the non-unit axes in order (an arange [S] made a
/// column [S, 1] or a row [1, S], ids [S, S] given a leading 1): each keeps
/// its coordinate.
std::optional<double> PositionFunction::throughReshape(tfm::ReshapeOp reshape, Coord i,
                                                       Coord j) {
  RankedTensorType in = typeOf(reshape.getInput()), out = reshape.getType();
  auto nonUnit = [](RankedTensorType t) {
    SmallVector<int64_t> axes;
    for (int64_t d = 0; d < t.getRank(); ++d)
      if (t.getDimSize(d) != 1)
        axes.push_back(d);
    return axes;
  };
  SmallVector<int64_t> inAxes = nonUnit(in), outAxes = nonUnit(out);
  if (inAxes.size() != outAxes.size())
    return fail(reshape.getResult(), "merges or splits axes");
  // The coordinate each non-unit output axis carries, moved to the input's
  // axis in the same place.
  Coord inI, inJ;
  for (auto [inAxis, outAxis] : llvm::zip(inAxes, outAxes)) {
    if (in.getDimSize(inAxis) != out.getDimSize(outAxis))
      return fail(reshape.getResult(), "merges or splits axes");
    Coord c = outAxis == out.getRank() - 1 ? j : i;
    if (inAxis == in.getRank() - 1)
      inJ = c;
    else if (inAxis == in.getRank() - 2)
      inI = c;
    else
      return fail(reshape.getResult(), "moves positions off the last two axes");
  }
  return at(reshape.getInput(), inI, inJ);
}
