//===- DimProvenance.cpp - which dimensions are provably equal ------------===//

#include "passes/DimProvenance.h"

#include "dialects/tfm/TfmOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
namespace tfm = attune::tfm;

namespace {

int64_t rankOf(Value v) { return cast<RankedTensorType>(v.getType()).getRank(); }
int64_t dimOf(Value v, int64_t d) {
  return cast<RankedTensorType>(v.getType()).getDimSize(d);
}

/// The operand dimension that result dimension `dim` of a numpy broadcast
/// comes from: the operand whose aligned dimension is dynamic while the
/// other's is absent or a static 1. When both are dynamic either may be the
/// 1 that stretches, and nothing is traced.
std::optional<std::pair<Value, int64_t>> broadcastSource(Value lhs, Value rhs,
                                                         int64_t resultRank,
                                                         int64_t dim) {
  auto aligned = [&](Value v) -> std::optional<int64_t> {
    int64_t d = dim - (resultRank - rankOf(v));
    if (d < 0)
      return std::nullopt;
    return d;
  };
  std::optional<int64_t> l = aligned(lhs), r = aligned(rhs);
  auto stretches = [](Value v, std::optional<int64_t> d) {
    return !d || dimOf(v, *d) == 1;
  };
  if (l && ShapedType::isDynamic(dimOf(lhs, *l)) && stretches(rhs, r))
    return std::make_pair(lhs, *l);
  if (r && ShapedType::isDynamic(dimOf(rhs, *r)) && stretches(lhs, l))
    return std::make_pair(rhs, *r);
  return std::nullopt;
}

/// One step up: the operand dimension that `dim` of `value` equals, when its
/// defining op says so.
std::optional<std::pair<Value, int64_t>> step(Value value, int64_t dim) {
  Operation *def = value.getDefiningOp();
  if (!def)
    return std::nullopt;
  using Step = std::optional<std::pair<Value, int64_t>>;
  // Ops whose result has their first operand's shape.
  if (def->hasTrait<OpTrait::SameOperandsAndResultType>() ||
      isa<tfm::LayerNormOp, tfm::RmsNormOp, tfm::RopeOp, tfm::ScoreBiasOp,
          tfm::SinusoidalPositionOp, tfm::LearnedPositionOp>(def))
    return std::make_pair(def->getOperand(0), dim);
  return llvm::TypeSwitch<Operation *, Step>(def)
      .Case([&](tfm::ReshapeOp r) -> Step {
        // The k-th dynamic dim of the result is the k-th of the input.
        auto in = cast<RankedTensorType>(r.getInput().getType());
        auto out = cast<RankedTensorType>(r.getType());
        if (!out.isDynamicDim(dim))
          return std::nullopt;
        int64_t k = 0;
        for (int64_t d = 0; d < dim; ++d)
          k += out.isDynamicDim(d);
        for (int64_t d = 0; d < in.getRank(); ++d)
          if (in.isDynamicDim(d) && k-- == 0)
            return std::make_pair(r.getInput(), d);
        return std::nullopt;
      })
      .Case([&](tfm::TransposeOp t) -> Step {
        return std::make_pair(t.getInput(), t.getPermutation()[dim]);
      })
      .Case([&](tfm::LinearOp l) -> Step {
        if (dim + 1 >= rankOf(l.getResult()))
          return std::nullopt;
        return std::make_pair(l.getInput(), dim);
      })
      .Case([&](tfm::EmbeddingOp e) -> Step {
        if (dim + 1 >= rankOf(e.getResult()))
          return std::nullopt;
        return std::make_pair(e.getIds(), dim);
      })
      .Case([&](tfm::MatmulOp m) -> Step {
        // [..., M, K] x [..., K, N]: the batch dims and M from the left
        // operand, N from the right (the verifier makes batch dims agree).
        int64_t r = rankOf(m.getResult());
        if (dim < r - 2)
          return std::make_pair(m.getLhs(), dim);
        if (dim == r - 2)
          return std::make_pair(m.getLhs(), m.getTransposeA() ? r - 1 : r - 2);
        return std::make_pair(m.getRhs(), m.getTransposeB() ? r - 2 : r - 1);
      })
      .Case([&](tfm::AttentionOp a) -> Step {
        if (dim >= 3)
          return std::nullopt;
        return std::make_pair(a.getQuery(), dim);
      })
      .Case([&](tfm::ArangeOp a) -> Step {
        return std::make_pair(a.getLike(), static_cast<int64_t>(a.getAxisAttr().getInt()));
      })
      .Case([&](tfm::ExpandOp e) -> Step {
        // A `?` of the result is the input's aligned `?` (the verifier
        // demands it static wherever the input stretches).
        int64_t d = dim - (rankOf(e.getResult()) - rankOf(e.getInput()));
        if (d < 0)
          return std::nullopt;
        return std::make_pair(e.getInput(), d);
      })
      .Case([&](tfm::SliceOp s) -> Step {
        if (dim == s.getAxisAttr().getInt())
          return std::nullopt;
        return std::make_pair(s.getInput(), dim);
      })
      .Case<tfm::AddOp, tfm::SubOp, tfm::MulOp, tfm::DivOp>([&](auto b) -> Step {
        return broadcastSource(b.getLhs(), b.getRhs(), rankOf(b.getResult()), dim);
      })
      .Default([](Operation *) -> Step { return std::nullopt; });
}

} // namespace

std::pair<Value, int64_t> attune::dimSource(Value value, int64_t dim) {
  // Each step moves to an operand, so the walk ends; the bound only guards
  // against pathological chains.
  for (int steps = 0; steps < 256 && ShapedType::isDynamic(dimOf(value, dim)); ++steps) {
    std::optional<std::pair<Value, int64_t>> up = step(value, dim);
    if (!up || !ShapedType::isDynamic(dimOf(up->first, up->second)))
      break;
    std::tie(value, dim) = *up;
  }
  return {value, dim};
}

namespace {
/// The name `tfm.dim_names` gives dimension `dim` of a function argument,
/// or "" (the runtime requires dimensions of one name to be equal).
StringRef argumentDimName(Value value, int64_t dim) {
  auto arg = dyn_cast<BlockArgument>(value);
  auto func = arg ? dyn_cast_or_null<FunctionOpInterface>(arg.getOwner()->getParentOp())
                  : FunctionOpInterface();
  if (!func || arg.getOwner() != &func.getFunctionBody().front())
    return "";
  auto names = func.getArgAttrOfType<ArrayAttr>(arg.getArgNumber(), "tfm.dim_names");
  if (!names || dim >= static_cast<int64_t>(names.size()))
    return "";
  auto name = dyn_cast<StringAttr>(names[dim]);
  return name ? name.getValue() : "";
}
} // namespace

bool attune::provablySameDim(Value x, int64_t a, Value y, int64_t b) {
  int64_t dx = dimOf(x, a), dy = dimOf(y, b);
  if (!ShapedType::isDynamic(dx) || !ShapedType::isDynamic(dy))
    return dx == dy;
  auto sx = dimSource(x, a), sy = dimSource(y, b);
  if (sx == sy)
    return true;
  // Two inputs' dimensions of one name are one size: the runtime checks it.
  StringRef nx = argumentDimName(sx.first, sx.second);
  return !nx.empty() && nx == argumentDimName(sy.first, sy.second);
}
