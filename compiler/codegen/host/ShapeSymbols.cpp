//===- ShapeSymbols.cpp - dynamic dimensions as named symbols -------------===//
//
// Step 1 of host code generation. Every dimension of every tensor in the
// model function is a node of a union-find; each op's shape rule unifies the
// dimensions it says are equal. A class that holds a static size is that
// size; a class that holds a dimension of a function argument becomes a shape
// symbol, whose value the runtime reads off the input shapes; anything else
// is a dynamic size the host code could not know, which is an error.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/host/HostPlan.h"
#include "dialects/tfm/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

#include <cassert>

using namespace mlir;

namespace attune::codegen::host {

//===----------------------------------------------------------------------===//
// Monomial
//===----------------------------------------------------------------------===//

Monomial Monomial::operator*(const Monomial &other) const {
  Monomial result;
  result.overflow = overflow || other.overflow ||
                    llvm::MulOverflow(factor, other.factor, result.factor);
  // 0 * seq is 0: keeping the symbols would make a broadcast's stride 0
  // compare unequal to 0 * extent, and collapseDims would never merge
  // stride-0 dimensions whose extents are dynamic.
  if (!result.overflow && result.factor == 0)
    return result;
  result.symbols = symbols;
  result.symbols.append(other.symbols.begin(), other.symbols.end());
  llvm::sort(result.symbols);
  return result;
}

std::string Monomial::str(ArrayRef<std::string> names) const {
  std::string text;
  llvm::raw_string_ostream os(text);
  if (overflow) {
    os << "<overflow>";
    return text;
  }
  bool first = true;
  if (factor != 1 || symbols.empty()) {
    os << factor;
    first = false;
  }
  for (unsigned symbol : symbols) {
    if (!first)
      os << "*";
    os << (symbol < names.size() ? names[symbol] : "s" + std::to_string(symbol));
    first = false;
  }
  return text;
}

Monomial product(ArrayRef<Monomial> dims) {
  Monomial result = Monomial::constant(1);
  for (const Monomial &dim : dims)
    result = result * dim;
  return result;
}

std::vector<std::string> ShapeInfo::symbolNames() const {
  std::vector<std::string> names;
  for (const ShapeSymbol &symbol : symbols)
    names.push_back(symbol.name);
  return names;
}

std::vector<int64_t> ShapeInfo::abiDims(Value value) const {
  std::vector<int64_t> result;
  for (const Monomial &dim : dimsOf(value))
    result.push_back(dim.isConstant() ? dim.factor
                                      : -1 - static_cast<int64_t>(dim.symbols[0]));
  return result;
}

//===----------------------------------------------------------------------===//
// Union-find over dimensions
//===----------------------------------------------------------------------===//

namespace {

/// The union-find. Static sizes live on the class root; merging two classes
/// with different static sizes is a shape error the verifiers should have
/// caught, reported on the op whose rule demanded it.
class DimClasses {
public:
  /// Adds one node per dimension of `value`'s type, static sizes set.
  void addValue(Value value) {
    auto type = cast<RankedTensorType>(value.getType());
    first[value] = parent.size();
    for (int64_t size : type.getShape()) {
      parent.push_back(parent.size());
      staticSize.push_back(ShapedType::isDynamic(size) ? -1 : size);
    }
  }
  unsigned node(Value value, int64_t dim) const {
    return first.lookup(value) + static_cast<unsigned>(dim);
  }
  unsigned find(unsigned n) {
    while (parent[n] != n) {
      parent[n] = parent[parent[n]];
      n = parent[n];
    }
    return n;
  }
  /// Merges two classes; fails on conflicting static sizes.
  LogicalResult unite(unsigned a, unsigned b, Operation *op) {
    a = find(a);
    b = find(b);
    if (a == b)
      return success();
    int64_t sa = staticSize[a], sb = staticSize[b];
    if (sa >= 0 && sb >= 0 && sa != sb)
      return op->emitOpError("expected equal dimensions by the op's shape "
                             "rule, got ")
             << sa << " and " << sb;
    // Keep the smaller index as the root so results do not depend on the
    // order in which rules are applied.
    if (b < a)
      std::swap(a, b);
    parent[b] = a;
    if (staticSize[a] < 0)
      staticSize[a] = staticSize[b];
    return success();
  }
  int64_t staticOf(unsigned n) { return staticSize[find(n)]; }
  /// Gives `n`'s class the static size `size`; fails on a different one.
  LogicalResult setStatic(unsigned n, int64_t size, Operation *op) {
    int64_t &known = staticSize[find(n)];
    if (known >= 0 && known != size)
      return op->emitOpError("expected equal dimensions by the op's shape "
                             "rule, got ")
             << known << " and " << size;
    known = size;
    return success();
  }

private:
  llvm::DenseMap<Value, unsigned> first;
  std::vector<unsigned> parent;
  std::vector<int64_t> staticSize;
};

/// Applies each op's shape rule to the classes.
class ShapeRules {
public:
  explicit ShapeRules(DimClasses &classes) : classes(classes) {}

  LogicalResult apply(Operation *op);
  /// Once every rule is applied: a concat's joined dim is the sum of its
  /// operands', a size when each of them is static. The others are left in
  /// `dynamicConcats`, for symbols that are sums (see analyzeShapes).
  void resolveConcats();
  SmallVector<tfm::ConcatOp> dynamicConcats;
  /// Position tables (learned, multiplicative) bound the symbol of their S
  /// dimension, as score modifiers that limit the keys bound Sk.
  SmallVector<std::pair<unsigned, int64_t>> positionBounds;

private:
  /// Dimension `dim` of `keys` (the key length) is bounded by the score
  /// modifier `dict` when it limits the keys (ScoreModifier::maxKeys).
  void boundKeysByModifier(DictionaryAttr dict, Value keys, int64_t dim) {
    tfm::ResolvedModifier modifier;
    if (!tfm::parseModifier(dict, modifier).empty())
      return; // the verifier reports it
    if (std::optional<int64_t> bound = modifier.definition->maxKeys(modifier.params))
      positionBounds.push_back({classes.node(keys, dim), *bound});
  }
  static int64_t rank(Value v) {
    return cast<RankedTensorType>(v.getType()).getRank();
  }
  LogicalResult same(Operation *op, Value a, int64_t da, Value b, int64_t db) {
    return classes.unite(classes.node(a, da), classes.node(b, db), op);
  }
  /// Every dimension of `a` equals the same dimension of `b`.
  LogicalResult sameShape(Operation *op, Value a, Value b) {
    if (rank(a) != rank(b))
      return op->emitOpError("expected operands of equal rank, got ")
             << rank(a) << " and " << rank(b);
    for (int64_t d = 0; d < rank(a); ++d)
      if (failed(same(op, a, d, b, d)))
        return failure();
    return success();
  }
  /// Numpy broadcasting of `operand` to `result` (aligned from the right):
  /// a dimension that is a static 1 stretches; any other is equal.
  LogicalResult broadcast(Operation *op, Value operand, Value result) {
    int64_t r = rank(result), o = rank(operand);
    if (o > r)
      return op->emitOpError("expected an operand of rank <= ")
             << r << ", got rank " << o;
    auto type = cast<RankedTensorType>(operand.getType());
    auto resultType = cast<RankedTensorType>(result.getType());
    for (int64_t d = 0; d < o; ++d) {
      int64_t rd = d + (r - o);
      if (type.getDimSize(d) == 1 && resultType.getDimSize(rd) != 1)
        continue;
      if (failed(same(op, operand, d, result, rd)))
        return failure();
    }
    return success();
  }
  /// The leading dimensions of `a` and `b` (all but their last `skipA` /
  /// `skipB`) are equal.
  LogicalResult sameLeading(Operation *op, Value a, int64_t skipA, Value b,
                            int64_t skipB) {
    int64_t la = rank(a) - skipA, lb = rank(b) - skipB;
    if (la != lb)
      return op->emitOpError("expected ") << la << " leading dimensions, got "
                                          << lb;
    for (int64_t d = 0; d < la; ++d)
      if (failed(same(op, a, d, b, d)))
        return failure();
    return success();
  }

  DimClasses &classes;
  SmallVector<tfm::ConcatOp> concats;
};

LogicalResult ShapeRules::apply(Operation *op) {
  using namespace attune::tfm;
  auto last = [](Value v) { return rank(v) - 1; };
  return llvm::TypeSwitch<Operation *, LogicalResult>(op)
      .Case<WeightOp, arith::ConstantOp>([](auto) { return success(); })
      .Case<EmbeddingOp>([&](EmbeddingOp e) -> LogicalResult {
        Value ids = e.getIds(), table = e.getTable(), result = e.getResult();
        if (rank(table) != 2 || rank(result) != rank(ids) + 1)
          return e.emitOpError("expected a rank-2 'table' and a result of "
                               "rank ")
                 << rank(ids) + 1 << ", got " << rank(table) << " and "
                 << rank(result);
        if (failed(sameLeading(op, ids, 0, result, 1)))
          return failure();
        return same(op, table, 1, result, last(result));
      })
      .Case<LearnedPositionOp>([&](LearnedPositionOp p) -> LogicalResult {
        Value x = p.getInput(), table = p.getTable(), result = p.getResult();
        if (rank(x) != 3 || rank(table) != 2)
          return p.emitOpError("expected input [B, S, D] and table [P, D], "
                               "got ranks ")
                 << rank(x) << " and " << rank(table);
        if (failed(sameShape(op, x, result)) || failed(same(op, x, 2, table, 1)))
          return failure();
        int64_t rows = cast<RankedTensorType>(table.getType()).getDimSize(0);
        if (!ShapedType::isDynamic(rows))
          positionBounds.push_back({classes.node(x, 1), rows});
        return success();
      })
      .Case<MultiplicativePositionOp>([&](MultiplicativePositionOp p) -> LogicalResult {
        Value x = p.getInput(), table = p.getTable(), result = p.getResult();
        if (rank(x) != 3 || (table && rank(table) != 2))
          return p.emitOpError("expected input [B, S, D] and table [P, D]");
        if (failed(sameShape(op, x, result)))
          return failure();
        if (!table)
          return success();
        if (failed(same(op, x, 2, table, 1)))
          return failure();
        // As learned_position's table: the runtime refuses S > P.
        int64_t rows = cast<RankedTensorType>(table.getType()).getDimSize(0);
        if (!ShapedType::isDynamic(rows))
          positionBounds.push_back({classes.node(x, 1), rows});
        return success();
      })
      .Case<RecursivePositionOp>([&](RecursivePositionOp p) -> LogicalResult {
        // p0 [D], w1 [D + 1, H], b1 [H], w2 [H + 1, D], b2 [D]; the +1s are
        // not equalities, and the kernel checks them on its buffers.
        Value x = p.getInput();
        if (rank(x) != 3 || rank(p.getP0()) != 1 || rank(p.getW1()) != 2 ||
            rank(p.getB1()) != 1 || rank(p.getW2()) != 2 || rank(p.getB2()) != 1)
          return p.emitOpError("expected input [B, S, D], p0 [D], w1 [D + 1, H], "
                               "b1 [H], w2 [H + 1, D] and b2 [D]");
        if (failed(sameShape(op, x, p.getResult())) ||
            failed(same(op, x, 2, p.getP0(), 0)) ||
            failed(same(op, x, 2, p.getB2(), 0)) ||
            failed(same(op, x, 2, p.getW2(), 1)))
          return failure();
        return same(op, p.getW1(), 1, p.getB1(), 0);
      })
      .Case<ComplexEmbeddingOp>([&](ComplexEmbeddingOp e) -> LogicalResult {
        // ids [B, S] -> [B, S, 2D]; 2D is static with the tables' D.
        Value ids = e.getIds(), amplitude = e.getAmplitude(), result = e.getResult();
        if (rank(ids) != 2 || rank(amplitude) != 2 || rank(result) != 3)
          return e.emitOpError("expected ids [B, S], tables [V, D] and a result "
                               "[B, S, 2D]");
        if (failed(same(op, ids, 0, result, 0)) || failed(same(op, ids, 1, result, 1)) ||
            failed(sameShape(op, amplitude, e.getFrequency())))
          return failure();
        return sameShape(op, amplitude, e.getPhase());
      })
      .Case<ComplexLinearOp>([&](ComplexLinearOp l) -> LogicalResult {
        // [..., 2K] -> [..., 2N]; the factors 2 are static with the weights.
        Value x = l.getInput(), wr = l.getWeightReal(), y = l.getResult();
        if (rank(wr) != 2)
          return l.emitOpError("expected rank-2 weights, got rank ") << rank(wr);
        if (failed(sameLeading(op, x, 1, y, 1)) ||
            failed(sameShape(op, wr, l.getWeightImag())))
          return failure();
        for (Value bias : {l.getBiasReal(), l.getBiasImag()})
          if (bias && failed(same(op, bias, 0, wr, 1)))
            return failure();
        return success();
      })
      .Case<SinusoidalPositionOp, SoftmaxOp, CausalMaskOp, RopeOp, ReluOp, SiluOp,
            GeluOp, NegOp, AbsOp, CosOp, SinOp, TanhOp, LogOp, SignOp, CeilOp,
            CastOp>(
          [&](auto u) { return sameShape(op, u.getInput(), u.getResult()); })
      .Case<SliceOp>([&](SliceOp sl) -> LogicalResult {
        // Every dim but the sliced one, which is static on both sides
        // (inferSlice, the op's verifier).
        int64_t axis = sl.getAxisAttr().getInt();
        for (int64_t d = 0; d < rank(sl.getInput()); ++d)
          if (d != axis && failed(same(op, sl.getInput(), d, sl.getResult(), d)))
            return failure();
        return success();
      })
      .Case<ConcatOp>([&](ConcatOp c) -> LogicalResult {
        // Every dim but the joined one; that one once all rules have run.
        int64_t axis = c.getAxisAttr().getInt();
        for (Value input : c.getInputs())
          for (int64_t d = 0; d < rank(input); ++d)
            if (d != axis && failed(same(op, input, d, c.getResult(), d)))
              return failure();
        concats.push_back(c);
        return success();
      })
      .Case<ArangeOp>([&](ArangeOp a) {
        return same(op, a.getLike(), a.getAxisAttr().getInt(), a.getResult(), 0);
      })
      .Case<ScoreBiasOp>([&](ScoreBiasOp sb) -> LogicalResult {
        Value s = sb.getInput();
        boundKeysByModifier(sb.getModifier(), s, 3);
        if (failed(sameShape(op, s, sb.getResult())))
          return failure();
        Value q = sb.getQuery(), k = sb.getKey();
        if (!q)
          return success();
        // Scores [B, H, Sq, Sk] from q [B, H, Sq, D] and k [B, H, Sk, D].
        if (failed(same(op, q, 0, s, 0)) || failed(same(op, q, 1, s, 1)) ||
            failed(same(op, q, 2, s, 2)) || failed(same(op, k, 0, s, 0)) ||
            failed(same(op, k, 1, s, 1)) || failed(same(op, k, 2, s, 3)))
          return failure();
        return same(op, q, 3, k, 3);
      })
      .Case<ScoreValuesOp>([&](ScoreValuesOp sv) -> LogicalResult {
        // [B, H, Sq, Sk] -> [B, H, Sq, Dv]
        Value p = sv.getInput(), y = sv.getResult();
        for (int64_t d = 0; d < 3; ++d)
          if (failed(same(op, p, d, y, d)))
            return failure();
        return success();
      })
      .Case<LayerNormOp>([&](LayerNormOp n) -> LogicalResult {
        Value x = n.getInput();
        if (failed(sameShape(op, x, n.getResult())) ||
            (n.getResidual() && failed(sameShape(op, x, n.getResidual()))) ||
            failed(same(op, n.getGamma(), 0, x, last(x))))
          return failure();
        return same(op, n.getBeta(), 0, x, last(x));
      })
      .Case<RmsNormOp>([&](RmsNormOp n) -> LogicalResult {
        Value x = n.getInput();
        if (failed(sameShape(op, x, n.getResult())) ||
            (n.getResidual() && failed(sameShape(op, x, n.getResidual()))))
          return failure();
        return same(op, n.getGamma(), 0, x, last(x));
      })
      .Case<LinearOp>([&](LinearOp l) -> LogicalResult {
        Value x = l.getInput(), w = l.getWeight(), y = l.getResult();
        if (failed(sameLeading(op, x, 1, y, 1)) ||
            failed(same(op, x, last(x), w, 0)) ||
            failed(same(op, w, 1, y, last(y))))
          return failure();
        if (Value b = l.getBias())
          return same(op, b, 0, y, last(y));
        return success();
      })
      .Case<MatmulOp>([&](MatmulOp m) -> LogicalResult {
        Value a = m.getLhs(), b = m.getRhs(), y = m.getResult();
        int64_t r = rank(y);
        if (failed(sameLeading(op, a, 2, y, 2)) ||
            failed(sameLeading(op, b, 2, y, 2)))
          return failure();
        int64_t aM = m.getTransposeA() ? r - 1 : r - 2;
        int64_t aK = m.getTransposeA() ? r - 2 : r - 1;
        int64_t bK = m.getTransposeB() ? r - 1 : r - 2;
        int64_t bN = m.getTransposeB() ? r - 2 : r - 1;
        if (failed(same(op, a, aM, y, r - 2)) || failed(same(op, a, aK, b, bK)))
          return failure();
        return same(op, b, bN, y, r - 1);
      })
      .Case<AddOp, SubOp, MulOp, DivOp, MinimumOp, MaximumOp, CompareOp>(
          [&](auto b) -> LogicalResult {
        if (failed(broadcast(op, b.getLhs(), b.getResult())))
          return failure();
        return broadcast(op, b.getRhs(), b.getResult());
      })
      .Case<ExpandOp>([&](ExpandOp e) {
        return broadcast(op, e.getInput(), e.getResult());
      })
      .Case<WhereOp>([&](WhereOp w) -> LogicalResult {
        if (failed(broadcast(op, w.getCondition(), w.getResult())) ||
            failed(broadcast(op, w.getOnTrue(), w.getResult())))
          return failure();
        return broadcast(op, w.getOnFalse(), w.getResult());
      })
      .Case<ReshapeOp>([&](ReshapeOp r) -> LogicalResult {
        // The k-th dynamic dimension of the input is the k-th of the result
        // (the op's contract); static dimensions carry their sizes.
        auto in = cast<RankedTensorType>(r.getInput().getType());
        auto out = cast<RankedTensorType>(r.getResult().getType());
        SmallVector<int64_t> inDyn, outDyn;
        for (int64_t d = 0; d < in.getRank(); ++d)
          if (in.isDynamicDim(d))
            inDyn.push_back(d);
        for (int64_t d = 0; d < out.getRank(); ++d)
          if (out.isDynamicDim(d))
            outDyn.push_back(d);
        if (inDyn.size() != outDyn.size())
          return r.emitOpError("expected as many dynamic dimensions in the "
                               "result as in the input, got ")
                 << outDyn.size() << " and " << inDyn.size();
        for (auto [i, o] : llvm::zip(inDyn, outDyn))
          if (failed(same(op, r.getInput(), i, r.getResult(), o)))
            return failure();
        return success();
      })
      .Case<TransposeOp>([&](TransposeOp t) -> LogicalResult {
        ArrayRef<int64_t> perm = t.getPermutation();
        // inferTranspose (the op's verifier) demands a permutation of the
        // input's rank and a result of that rank.
        assert(static_cast<int64_t>(perm.size()) == rank(t.getResult()) &&
               "verifier guarantees the permutation's size");
        for (auto [k, p] : llvm::enumerate(perm))
          if (failed(same(op, t.getInput(), p, t.getResult(), k)))
            return failure();
        return success();
      })
      .Case<RepeatInterleaveOp>([&](RepeatInterleaveOp r) -> LogicalResult {
        int64_t axis = r.getAxis(), n = rank(r.getInput());
        // inferRepeatInterleave (the op's verifier) demands axis in [0, n).
        assert(axis >= 0 && axis < n && "verifier guarantees the axis");
        for (int64_t d = 0; d < n; ++d)
          if (d != axis && failed(same(op, r.getInput(), d, r.getResult(), d)))
            return failure();
        return success();
      })
      .Case<GatherElementsOp>([&](GatherElementsOp g) -> LogicalResult {
        // The result has the indices' shape; off the axis, the input's
        // dims are the same (inferGatherElements, the op's verifier). The
        // axis's length in the input is free: it bounds the index values.
        int64_t axis = g.getAxisAttr().getInt(), n = rank(g.getInput());
        assert(axis >= 0 && axis < n && "verifier guarantees the axis");
        if (failed(sameShape(op, g.getIndices(), g.getResult())))
          return failure();
        for (int64_t d = 0; d < n; ++d)
          if (d != axis && failed(same(op, g.getInput(), d, g.getIndices(), d)))
            return failure();
        return success();
      })
      .Case<AttentionOp>([&](AttentionOp a) -> LogicalResult {
        Value q = a.getQuery(), k = a.getKey(), v = a.getValue(),
              y = a.getResult();
        const int64_t hd = a.getHeadAxis(), sd = a.getSeqAxis();
        if (ArrayAttr list = a.getModifiersAttr())
          for (Attribute modifier : list)
            boundKeysByModifier(cast<DictionaryAttr>(modifier), k, sd);
        if (rank(q) != 4 || rank(k) != 4 || rank(v) != 4 || rank(y) != 4)
          return a.emitOpError("expected rank-4 query, key, value and result");
        // B everywhere; H of q and result; Hkv, Sk of k and v; Sq; D; Dv.
        if (failed(same(op, q, 0, k, 0)) || failed(same(op, q, 0, v, 0)) ||
            failed(same(op, q, 0, y, 0)) || failed(same(op, q, hd, y, hd)) ||
            failed(same(op, k, hd, v, hd)) || failed(same(op, k, sd, v, sd)) ||
            failed(same(op, q, sd, y, sd)) || failed(same(op, q, 3, k, 3)) ||
            failed(same(op, v, 3, y, 3)))
          return failure();
        if (Value mask = a.getMask()) {
          // The mask broadcasts to [B, H, Sq, Sk]; Sk is the key's.
          int64_t m = rank(mask);
          auto type = cast<RankedTensorType>(mask.getType());
          if (m > 4)
            return a.emitOpError("expected 'mask' rank <= 4, got ") << m;
          std::pair<Value, int64_t> targets[4] = {{q, 0}, {q, hd}, {q, sd}, {k, sd}};
          for (int64_t d = 0; d < m; ++d) {
            auto [target, td] = targets[d + 4 - m];
            if (type.getDimSize(d) == 1 &&
                cast<RankedTensorType>(target.getType()).getDimSize(td) != 1)
              continue;
            if (failed(same(op, mask, d, target, td)))
              return failure();
          }
        }
        if (Value pad = a.getKeyPaddingMask()) {
          if (rank(pad) != 2)
            return a.emitOpError("expected 'key_padding_mask' rank 2, got ")
                   << rank(pad);
          if (failed(same(op, pad, 0, q, 0)) || failed(same(op, pad, 1, k, sd)))
            return failure();
        }
        return success();
      })
      .Default([](Operation *op) {
        return op->emitOpError("has no kernel in host code generation");
      });
}

void ShapeRules::resolveConcats() {
  // A joined dim can make another concat's operand static (through the
  // classes it shares), so go round until nothing changes.
  SmallVector<tfm::ConcatOp> pending = concats;
  while (!pending.empty()) {
    SmallVector<tfm::ConcatOp> left;
    for (tfm::ConcatOp c : pending) {
      int64_t axis = c.getAxisAttr().getInt();
      int64_t sum = 0;
      bool known = true;
      for (Value input : c.getInputs()) {
        int64_t size = classes.staticOf(classes.node(input, axis));
        // The verifier bounds the static sum to int64; a `?` that shape
        // analysis resolved is not bounded by it.
        known &= size >= 0 && !llvm::AddOverflow(sum, size, sum);
      }
      // setStatic cannot fail on a class the rules left dynamic.
      if (known && succeeded(classes.setStatic(classes.node(c.getResult(), axis), sum, c)))
        continue;
      left.push_back(c);
    }
    if (left.size() == pending.size())
      break;
    pending = std::move(left);
  }
  dynamicConcats = std::move(pending);
}

} // namespace

LogicalResult analyzeShapes(func::FuncOp func, ShapeInfo &info) {
  if (!func.getBody().hasOneBlock())
    return func.emitOpError("expected a single-block model function");
  Block &body = func.getBody().front();
  DimClasses classes;

  for (BlockArgument arg : body.getArguments()) {
    if (!isa<RankedTensorType>(arg.getType()))
      return func.emitOpError("expected ranked tensor arguments, got ")
             << arg.getType() << " for argument " << arg.getArgNumber();
    classes.addValue(arg);
  }
  for (Operation &op : body.without_terminator()) {
    if (op.getNumRegions() != 0)
      return op.emitOpError("has regions, which host code generation does "
                            "not support");
    for (Value result : op.getResults()) {
      if (!isa<RankedTensorType>(result.getType()))
        return op.emitOpError("expected ranked tensor results, got ")
               << result.getType();
      classes.addValue(result);
    }
  }

  // Dimensions that share a name in `tfm.dim_names` are one symbol: the
  // runtime requires them to be equal, so the code may rely on it.
  std::vector<std::vector<std::string>> argNames(func.getNumArguments());
  llvm::StringMap<unsigned> nodeOfName;
  for (BlockArgument arg : body.getArguments()) {
    unsigned i = arg.getArgNumber();
    auto type = cast<RankedTensorType>(arg.getType());
    argNames[i].assign(type.getRank(), "");
    auto names = func.getArgAttrOfType<ArrayAttr>(i, "tfm.dim_names");
    if (!names)
      continue;
    if (static_cast<int64_t>(names.size()) != type.getRank())
      return func.emitOpError("expected 'tfm.dim_names' of argument ")
             << i << " to name " << type.getRank() << " dimensions, got "
             << names.size();
    for (auto [d, name] : llvm::enumerate(names)) {
      auto str = dyn_cast<StringAttr>(name);
      if (!str)
        return func.emitOpError("expected strings in 'tfm.dim_names' of "
                                "argument ")
               << i << ", got " << name;
      if (!type.isDynamicDim(d) || str.getValue().empty())
        continue;
      argNames[i][d] = str.getValue().str();
      unsigned node = classes.node(arg, d);
      auto [it, inserted] = nodeOfName.try_emplace(str.getValue(), node);
      if (!inserted && failed(classes.unite(it->second, node, func)))
        return failure();
    }
  }

  ShapeRules rules(classes);
  for (Operation &op : body.without_terminator())
    if (failed(rules.apply(&op)))
      return failure();
  rules.resolveConcats();

  // Symbols in order of first appearance over the arguments; a class's name
  // is the first name any of its argument dimensions carries.
  llvm::DenseMap<unsigned, unsigned> symbolOfRoot;
  for (BlockArgument arg : body.getArguments()) {
    auto type = cast<RankedTensorType>(arg.getType());
    for (int64_t d = 0; d < type.getRank(); ++d) {
      unsigned root = classes.find(classes.node(arg, d));
      if (classes.staticOf(root) >= 0 || symbolOfRoot.count(root))
        continue;
      symbolOfRoot[root] = info.symbols.size();
      info.symbols.push_back({"", -1});
    }
  }
  for (BlockArgument arg : body.getArguments())
    for (auto [d, name] : llvm::enumerate(argNames[arg.getArgNumber()])) {
      if (name.empty())
        continue;
      auto it = symbolOfRoot.find(classes.find(classes.node(arg, d)));
      if (it != symbolOfRoot.end() && info.symbols[it->second].name.empty())
        info.symbols[it->second].name = name;
    }
  llvm::StringMap<unsigned> taken;
  for (auto [i, symbol] : llvm::enumerate(info.symbols))
    if (!symbol.name.empty())
      taken[symbol.name] = i;
  for (auto [i, symbol] : llvm::enumerate(info.symbols)) {
    if (!symbol.name.empty())
      continue;
    // "d<N>", unless a user already named another symbol that.
    std::string name = "d" + std::to_string(i);
    while (taken.count(name))
      name += "_";
    taken[name] = i;
    symbol.name = name;
  }

  // Dynamic concats: the joined dim is the sum of the operands' symbols and
  // static sizes. A new symbol when no argument gives it, named after its
  // terms ("(past+seq)"); a check of the argument's symbol otherwise. Sums of
  // sums are resolved in order, so go round until nothing changes.
  SmallVector<tfm::ConcatOp> pending = rules.dynamicConcats;
  while (!pending.empty()) {
    SmallVector<tfm::ConcatOp> left;
    for (tfm::ConcatOp c : pending) {
      int64_t axis = c.getAxisAttr().getInt();
      SymbolSum sum;
      bool resolved = true, overflow = false;
      std::string name;
      for (Value input : c.getInputs()) {
        unsigned root = classes.find(classes.node(input, axis));
        int64_t size = classes.staticOf(root);
        if (size >= 0) {
          overflow |= llvm::AddOverflow(sum.constant, size, sum.constant);
          continue;
        }
        auto it = symbolOfRoot.find(root);
        if (it == symbolOfRoot.end()) {
          resolved = false;
          break;
        }
        sum.terms.push_back(it->second);
        name += (name.empty() ? "(" : "+") + info.symbols[it->second].name;
      }
      if (!resolved) {
        left.push_back(c);
        continue;
      }
      if (overflow)
        return c.emitOpError("expected the joined dim ")
               << axis << " to fit in int64";
      if (sum.constant)
        name += "+" + std::to_string(sum.constant);
      name += ")";
      unsigned root = classes.find(classes.node(c.getResult(), axis));
      auto [it, inserted] = symbolOfRoot.try_emplace(root, info.symbols.size());
      if (inserted) {
        while (taken.count(name))
          name += "_";
        taken[name] = info.symbols.size();
        info.symbols.push_back({name, -1});
      }
      sum.symbol = it->second;
      info.sums.push_back(std::move(sum));
    }
    if (left.size() == pending.size()) {
      // Code generation needs each joined operand's size: static or a
      // symbol an input gives (or a sum of such).
      tfm::ConcatOp c = left.front();
      int64_t axis = c.getAxisAttr().getInt();
      for (auto [i, input] : llvm::enumerate(c.getInputs())) {
        unsigned root = classes.find(classes.node(input, axis));
        if (classes.staticOf(root) < 0 && !symbolOfRoot.count(root))
          return c.emitOpError("expected the joined dim ")
                 << axis << " of 'inputs #" << i
                 << "' to be static or given by an input dimension";
      }
      return c.emitOpError("expected its joined dim to be resolvable");
    }
    pending = std::move(left);
  }

  auto resolve = [&](Value value, Operation *owner) -> LogicalResult {
    auto type = cast<RankedTensorType>(value.getType());
    SmallVector<Monomial, 4> dims;
    for (int64_t d = 0; d < type.getRank(); ++d) {
      unsigned root = classes.find(classes.node(value, d));
      int64_t size = classes.staticOf(root);
      if (size >= 0) {
        dims.push_back(Monomial::constant(size));
        continue;
      }
      auto it = symbolOfRoot.find(root);
      if (it == symbolOfRoot.end())
        return owner->emitOpError("result dimension ")
               << d << " is dynamic but not determined by any input "
               << "dimension";
      dims.push_back(Monomial::symbol(it->second));
    }
    info.dims[value] = std::move(dims);
    return success();
  };
  for (BlockArgument arg : body.getArguments())
    if (failed(resolve(arg, func)))
      return failure();
  for (Operation &op : body.without_terminator())
    for (Value result : op.getResults())
      if (failed(resolve(result, &op)))
        return failure();

  for (auto [node, rows] : rules.positionBounds) {
    auto it = symbolOfRoot.find(classes.find(node));
    if (it == symbolOfRoot.end())
      continue;
    int64_t &max = info.symbols[it->second].max;
    max = max < 0 ? rows : std::min(max, rows);
  }
  return success();
}

} // namespace attune::codegen::host
