//===- RaiseDeberta.cpp - DeBERTa's attention as exporters write it -------===//
//
// See RaiseDeberta.h. The match reads the sum's terms (q k^T and the two
// gathered relative scores, each with the splat scales on it peeled off),
// checks that the relative scores multiply the same q and k as q k^T, that
// all three are scaled alike, and that the two tables are per-head tables
// of one even number of rows 2 span. The gather indices are then read as
// functions of the query and key positions (PositionFunction, as T5's bucket
// ids are) and compared, distance by distance, with the deberta modifier's
// rows for span and a max_position fitted to them; the lengths the
// positions count must provably be the scores' one sequence length.
//
//===----------------------------------------------------------------------===//

#include "passes/RaiseDeberta.h"

#include "compiler/modifiers/ScoreModifier.h"
#include "dialects/tfm/TfmShapes.h"
#include "passes/DimProvenance.h"
#include "passes/PassUtils.h"
#include "passes/PositionFunction.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Matchers.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

using namespace mlir;
namespace tfm = attune::tfm;
namespace modifiers = attune::modifiers;
using attune::PositionFunction;
using attune::closeConstants;
using attune::splatValue;
using attune::raise::DebertaMatch;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

/// `%g`: short, and exact for the constants people write.
std::string g(double value) {
  char text[32];
  std::snprintf(text, sizeof(text), "%g", value);
  return text;
}


/// `v` without the tfm.mul and tfm.div by splat float constants on it (that
/// keep its type); `factor` is multiplied by what they scale it by. Values
/// with other users are peeled too: the raise reads the unscaled value,
/// which exists, and leaves the scaled one to them.
Value peelScales(Value v, double &factor) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto mul = dyn_cast<tfm::MulOp>(def)) {
      std::optional<double> c = splatValue(mul.getRhs());
      Value x = mul.getLhs();
      if (!c) {
        c = splatValue(mul.getLhs());
        x = mul.getRhs();
      }
      if (!c || x.getType() != mul.getType())
        break;
      factor *= *c;
      v = x;
      continue;
    }
    if (auto div = dyn_cast<tfm::DivOp>(def)) {
      std::optional<double> c = splatValue(div.getRhs());
      if (!c || *c == 0 || div.getLhs().getType() != div.getType())
        break;
      factor /= *c;
      v = div.getLhs();
      continue;
    }
    break;
  }
  return v;
}

/// A transpose of the last two axes only (PyTorch's transpose(-1, -2)).
bool swapsLastTwo(tfm::TransposeOp t) {
  ArrayRef<int64_t> p = t.getPermutation();
  int64_t r = static_cast<int64_t>(p.size());
  if (r < 2 || p[r - 1] != r - 2 || p[r - 2] != r - 1)
    return false;
  for (int64_t d = 0; d + 2 < r; ++d)
    if (p[d] != d)
      return false;
  return true;
}

/// x y^T, however an exporter spells it: matmul(x, y) {transpose_b}, or
/// matmul(x, transpose(y)) with y's last two axes swapped, splat scales on
/// x, y and the transpose peeled into `factor`.
struct Product {
  Value lhs, rhs;
  double factor = 1.0;
};

std::optional<Product> matchProduct(Value v) {
  Product p;
  auto matmul = peelScales(v, p.factor).getDefiningOp<tfm::MatmulOp>();
  if (!matmul || matmul.getTransposeA())
    return std::nullopt;
  p.lhs = peelScales(matmul.getLhs(), p.factor);
  Value rhs = peelScales(matmul.getRhs(), p.factor);
  if (!matmul.getTransposeB()) {
    auto transpose = rhs.getDefiningOp<tfm::TransposeOp>();
    if (!transpose || !swapsLastTwo(transpose))
      return std::nullopt;
    rhs = peelScales(transpose.getInput(), p.factor);
  }
  p.rhs = rhs;
  return p;
}

/// One term of the sum.
struct Term {
  enum Kind { Content, C2P, P2C, Other } kind = Other;
  Value value;
  /// The splat scales on the gather (c2p, p2c); matchProduct reads the
  /// content term's.
  double factor = 1.0;
  tfm::GatherElementsOp gather;
};

Term classify(Value v) {
  Term term;
  term.value = v;
  Value u = peelScales(v, term.factor);
  if (auto transpose = u.getDefiningOp<tfm::TransposeOp>(); transpose && swapsLastTwo(transpose)) {
    // p2c is gathered [.., key, query] and transposed to the scores' layout.
    if ((term.gather = peelScales(transpose.getInput(), term.factor)
                           .getDefiningOp<tfm::GatherElementsOp>()))
      term.kind = Term::P2C;
    return term;
  }
  if ((term.gather = u.getDefiningOp<tfm::GatherElementsOp>()))
    term.kind = Term::C2P;
  else if (matchProduct(v))
    term.kind = Term::Content;
  return term;
}

/// The terms of the sum of tfm.adds at `root` (operands of its type used
/// only there), without additions of a splat 0 (`score = 0; score += ...`).
void collectTerms(Value v, Value root, SmallVectorImpl<Value> &terms) {
  auto add = v.getDefiningOp<tfm::AddOp>();
  if (add && add.getType() == root.getType() && (v == root || v.hasOneUse())) {
    collectTerms(add.getLhs(), root, terms);
    collectTerms(add.getRhs(), root, terms);
    return;
  }
  if (splatValue(v) == 0.0)
    return;
  terms.push_back(v);
}

/// The positions under a gather's index: without the expand that broadcasts
/// them over batch and heads, and the reshapes that only add or drop unit
/// axes around it, as long as an axis before the last two is not 1 (those
/// PositionFunction reads itself).
Value positionsOf(Value index) {
  auto nonUnit = [](RankedTensorType t) {
    SmallVector<int64_t> sizes;
    for (int64_t size : t.getShape())
      if (size != 1)
        sizes.push_back(size);
    return sizes;
  };
  auto leadingNonUnit = [](RankedTensorType t) {
    for (int64_t d = 0; d + 2 < t.getRank(); ++d)
      if (t.getDimSize(d) != 1)
        return true;
    return false;
  };
  while (true) {
    if (auto expand = index.getDefiningOp<tfm::ExpandOp>()) {
      index = expand.getInput();
      continue;
    }
    auto reshape = index.getDefiningOp<tfm::ReshapeOp>();
    if (reshape && leadingNonUnit(typeOf(index)) &&
        nonUnit(typeOf(reshape.getInput())) == nonUnit(typeOf(index))) {
      index = reshape.getInput();
      continue;
    }
    return index;
  }
}

/// The positions an index was computed from count the scores' one length:
/// the graph's i - j is then the distance tfm's modifiers use, (i + Sk - Sq)
/// - j.
LogicalResult checkAligned(const PositionFunction &ids, Value scores, std::string &why) {
  int64_t r = typeOf(scores).getRank();
  for (PositionFunction::Arange a : ids.aranges)
    if (!attune::provablySameDim(a.op.getLike(), a.op.getAxisAttr().getInt(), scores, r - 2)) {
      why = "the positions count other lengths than the scores' query and key axes";
      return failure();
    }
  if (!attune::provablySameDim(scores, r - 2, scores, r - 1)) {
    why = "the query and key lengths may differ, and the graph's i - j is not "
          "aligned to the end of the keys as tfm's modifiers are";
    return failure();
  }
  return success();
}

/// The deberta modifier's row of `term` (0: c2p, 1: p2c) for the index at
/// (a, b) = (a query, a key) for c2p and (a key, a query) for p2c, given
/// b - a: the graph gathers p2c along the keys, so its a - b is j - i.
int64_t deberta(int64_t span, int64_t maxPosition, int term, int64_t bMinusA) {
  const modifiers::ScoreModifier *m = modifiers::lookupModifier("deberta");
  modifiers::ModifierParams params = {{"span", double(span)},
                                      {"max_position", double(maxPosition)}};
  return m->referenceRow(params, term, term == 0 ? bMinusA : -bMinusA);
}

/// Reads the index of one relative term at query/key (or key/query)
/// positions L + delta apart, delta in [-L, L]: observed[L + delta]. Also at
/// the first positions 0, 3 and 1021, where they must agree (a function of
/// the distance alone).
LogicalResult observe(tfm::GatherElementsOp gather, Value scores, StringRef name, int64_t L,
                      SmallVectorImpl<int64_t> &observed, std::string &why) {
  PositionFunction ids(("the " + name + " indices").str());
  Value positions = positionsOf(gather.getIndices());
  observed.assign(2 * L + 1, 0);
  for (int64_t a : {L, int64_t(0), int64_t(3), int64_t(1021)})
    for (int64_t delta = -std::min(L, a); delta <= L; ++delta) {
      std::optional<double> id =
          ids.evaluate(positions, {a, /*query=*/true}, {a + delta, /*query=*/false});
      if (!id) {
        why = ids.why;
        return failure();
      }
      int64_t row = static_cast<int64_t>(*id);
      if (a != L && row != observed[L + delta]) {
        why = ("the " + name + " indices are not a function of the distance i - j").str();
        return failure();
      }
      observed[L + delta] = row;
    }
  return checkAligned(ids, scores, why);
}

/// The distance nearest 0 (b - a, the smaller first) where `observed`
/// differs from the modifier's rows for (span, maxPosition), or none.
std::optional<int64_t> firstMismatch(ArrayRef<int64_t> observed, int term, int64_t L,
                                     int64_t span, int64_t maxPosition) {
  for (int64_t n = 0; n <= L; ++n)
    for (int64_t delta : {-n, n})
      if (observed[L + delta] != deberta(span, maxPosition, term, delta))
        return delta;
  return std::nullopt;
}

/// The max_position of DeBERTa-v2's log buckets (0: none) whose c2p rows
/// are `c2p`, or none. A row falls as max_position grows, at every distance
/// (the log of the ratio divides by a larger log): the max_positions giving
/// each observed row form an interval, and the answer is in all of them.
std::optional<int64_t> fitMaxPosition(ArrayRef<int64_t> c2p, int64_t L, int64_t span) {
  if (!firstMismatch(c2p, 0, L, span, 0))
    return 0;
  const int64_t mid = span / 2;
  // The modifier's limits for log buckets (Deberta::verify).
  if (span < 4)
    return std::nullopt;
  int64_t lo = mid + 2, hi = int64_t(1) << 30;
  for (int64_t x = mid + 1; x <= L && lo <= hi; ++x) {
    // c2p at i - j = x, i.e. b - a = -x.
    attune::narrowToValue(lo, hi, c2p[L - x],
                          [&](int64_t m) { return deberta(span, m, 0, -x); });
  }
  if (lo > hi)
    return std::nullopt;
  // Every max_position left gives these rows up to L.
  return attune::roundestIn(lo, hi);
}

std::string describe(int64_t maxPosition) {
  return maxPosition > 0
             ? llvm::formatv("log buckets up to max_position {0}", maxPosition).str()
             : std::string("rel(x) = x");
}

} // namespace

FailureOr<DebertaMatch> attune::raise::matchDeberta(tfm::AddOp root, std::string &why) {
  RankedTensorType type = root.getType();
  if (type.getRank() < 3)
    return failure();
  SmallVector<Value> values;
  collectTerms(root.getResult(), root.getResult(), values);
  SmallVector<Term> terms = llvm::map_to_vector(values, classify);
  if (!llvm::any_of(terms, [](const Term &t) { return t.gather; }))
    return failure();
  // From here on it has DeBERTa's structure: say why when it is not
  // DeBERTa's attention.
  Term *content = nullptr, *c2p = nullptr, *p2c = nullptr;
  for (Term &t : terms) {
    if (t.value.getType() != type) {
      why = "a term of the sum broadcasts to the scores' shape; DeBERTa's terms "
            "are one score per batch, head, query and key";
      return failure();
    }
    Term **slot = t.kind == Term::Content ? &content
                        : t.kind == Term::C2P   ? &c2p
                        : t.kind == Term::P2C   ? &p2c
                                                : nullptr;
    if (!slot) {
      Operation *def = t.value.getDefiningOp();
      why = llvm::formatv("the sum also adds {0}, which is neither q k^T nor a "
                          "gathered relative term",
                          def ? def->getName().getStringRef() : "a function argument")
                .str();
      return failure();
    }
    if (*slot) {
      why = t.kind == Term::Content ? "the sum has two products q k^T"
            : t.kind == Term::C2P   ? "the sum has two content-to-position terms"
                                    : "the sum has two position-to-content terms";
      return failure();
    }
    *slot = &t;
  }
  if (!content) {
    why = "the sum has gathered relative terms but no content term q k^T";
    return failure();
  }
  if (!c2p || !p2c) {
    why = llvm::formatv("the sum has a {0} term but no {1} term; the deberta "
                        "modifier has both (pos_att_type c2p and p2c)",
                        c2p ? "content-to-position" : "position-to-content",
                        c2p ? "position-to-content" : "content-to-position")
              .str();
    return failure();
  }
  Product qk = *matchProduct(content->value);
  const int64_t rank = type.getRank();
  for (auto [term, name] : {std::pair(c2p, "content-to-position"),
                            std::pair(p2c, "position-to-content")}) {
    int64_t axis = term->gather.getAxisAttr().getInt();
    if (axis != rank - 1) {
      why = llvm::formatv("the {0} scores are gathered along axis {1}, not the "
                          "last (the relative positions)",
                          name, axis)
                .str();
      return failure();
    }
  }
  std::optional<Product> keyPos = matchProduct(c2p->gather.getInput());
  std::optional<Product> queryPos = matchProduct(p2c->gather.getInput());
  if (!keyPos || !queryPos) {
    why = llvm::formatv("the {0} scores gathered are not a product of {1}",
                        keyPos ? "position-to-content" : "content-to-position",
                        keyPos ? "k and relative queries (k Qr^T)"
                               : "q and relative keys (q Kr^T)")
              .str();
    return failure();
  }
  if (keyPos->lhs != qk.lhs) {
    why = "the content-to-position term multiplies other rows than the q of q k^T";
    return failure();
  }
  if (queryPos->lhs != qk.rhs) {
    why = "the position-to-content term multiplies other rows than the k of q k^T";
    return failure();
  }
  // matchProduct read the content term's scales with the product's.
  const double scale = qk.factor;
  for (auto [name, factor] :
       {std::pair("content-to-position", c2p->factor * keyPos->factor),
        std::pair("position-to-content", p2c->factor * queryPos->factor)})
    if (!closeConstants(factor, scale)) {
      why = llvm::formatv("the {0} term is scaled by {1} and q k^T by {2}; "
                          "tfm.attention scales every term alike (DeBERTa: "
                          "1/sqrt(3 d))",
                          name, g(factor), g(scale))
                .str();
      return failure();
    }
  // One table of 2 span rows per (batch, head) row of q: the leading dims
  // of q, static, since the raised form views them as heads.
  RankedTensorType q = typeOf(qk.lhs), kr = typeOf(keyPos->rhs), qr = typeOf(queryPos->rhs);
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (ShapedType::isDynamic(q.getDimSize(d))) {
      why = "the batch and head dims of q are not static; the raised form views "
            "them as the heads of one batch";
      return failure();
    }
  for (RankedTensorType table : {kr, qr})
    if (table.getRank() != rank || table.getShape().drop_back(2) != q.getShape().drop_back(2) ||
        table.getDimSize(rank - 1) != q.getDimSize(rank - 1) ||
        table.getElementType() != type.getElementType()) {
      why = "the relative tables are not one [2 att_span, d] table of the "
            "scores' type per batch and head row of q";
      return failure();
    }
  int64_t rows = kr.getDimSize(rank - 2);
  if (rows != qr.getDimSize(rank - 2)) {
    why = llvm::formatv("the relative key and query tables have {0} and {1} rows; "
                        "DeBERTa's have 2 att_span each",
                        tfm::formatDim(rows), tfm::formatDim(qr.getDimSize(rank - 2)))
              .str();
    return failure();
  }
  if (ShapedType::isDynamic(rows) || rows % 2 != 0 || rows == 0) {
    why = llvm::formatv("the relative tables have {0} rows, not a static even "
                        "2 att_span",
                        tfm::formatDim(rows))
              .str();
    return failure();
  }
  const int64_t span = rows / 2;
  if (span > (int64_t(1) << 14)) {
    why = llvm::formatv("att_span {0} is past what the pass reads the indices "
                        "for (2^14)",
                        span)
              .str();
    return failure();
  }

  // The indices, as functions of the positions, at distances well past
  // where they saturate; the positions must count the lengths of q k^T.
  const int64_t L = std::max<int64_t>(4096, 4 * span);
  SmallVector<int64_t> c2pRows, p2cRows;
  if (failed(observe(c2p->gather, content->value, "content-to-position", L, c2pRows, why)) ||
      failed(observe(p2c->gather, content->value, "position-to-content", L, p2cRows, why)))
    return failure();
  std::optional<int64_t> maxPosition = fitMaxPosition(c2pRows, L, span);
  if (!maxPosition) {
    int64_t at = *firstMismatch(c2pRows, 0, L, span, 0);
    why = llvm::formatv("the content-to-position indices are a function of i - j "
                        "but not DeBERTa's clamp(rel(i - j) + {0}, 0, {1}) for "
                        "att_span {0} (half the tables' rows), with rel(x) = x "
                        "(at i - j = {2}: {3}, not {4}) or log buckets of any "
                        "max_position",
                        span, 2 * span - 1, -at, c2pRows[L + at], deberta(span, 0, 0, at))
              .str();
    return failure();
  }
  // The fit read the far distances on one side (i > j); every row of both
  // indices must be the modifier's.
  if (std::optional<int64_t> at = firstMismatch(c2pRows, 0, L, span, *maxPosition)) {
    why = llvm::formatv("the content-to-position index at i - j = {0} is {1}, "
                        "not DeBERTa's clamp(rel(i - j) + {2}, 0, {3}) = {4} with "
                        "the {5} that the distances i - j > 0 give",
                        -*at, c2pRows[L + *at], span, 2 * span - 1,
                        deberta(span, *maxPosition, 0, *at), describe(*maxPosition))
              .str();
    return failure();
  }
  if (std::optional<int64_t> at = firstMismatch(p2cRows, 1, L, span, *maxPosition)) {
    why = llvm::formatv("the position-to-content index at key - query = {0} is "
                        "{1}, not DeBERTa's clamp({2} - rel(key - query), 0, {3}) = "
                        "{4} with the content-to-position term's {5}",
                        -*at, p2cRows[L + *at], span, 2 * span - 1,
                        deberta(span, *maxPosition, 1, *at), describe(*maxPosition))
              .str();
    return failure();
  }
  // Rows are monotone in the distance: at a table edge by L in both
  // directions, they stay there, and what was read holds at every distance.
  for (int term : {0, 1})
    for (int64_t delta : {-L, L})
      if (int64_t row = deberta(span, *maxPosition, term, delta); row != 0 && row != rows - 1) {
        why = llvm::formatv("the log buckets of max_position {0} do not reach the "
                            "tables' edges by distance {1}, as far as the pass "
                            "reads the indices",
                            *maxPosition, L)
                  .str();
        return failure();
      }
  DebertaMatch match;
  match.query = qk.lhs;
  match.key = qk.rhs;
  match.keyTable = keyPos->rhs;
  match.queryTable = queryPos->rhs;
  match.scale = scale;
  match.span = span;
  match.maxPosition = *maxPosition;
  return match;
}

tfm::ScoreBiasOp attune::raise::raiseDeberta(tfm::AddOp root, const DebertaMatch &match) {
  OpBuilder builder(root);
  Builder &b = builder;
  Location loc = root.getLoc();
  RankedTensorType q = typeOf(match.query), k = typeOf(match.key), type = root.getType();
  const int64_t rank = q.getRank(), rows = 2 * match.span, depth = q.getDimSize(rank - 1);
  int64_t heads = 1;
  for (int64_t d = 0; d + 2 < rank; ++d)
    heads *= q.getDimSize(d);
  Type element = type.getElementType();
  auto tensor = [&](ArrayRef<int64_t> shape) { return RankedTensorType::get(shape, element); };
  // Batch and heads as the heads of one batch: each (batch, head) row has
  // its own tables, which is what the modifier's per-head tables are.
  const int64_t Sq = q.getDimSize(rank - 2), Sk = k.getDimSize(rank - 2);
  Value q4 = attune::reshapeTo(builder, loc, match.query, tensor({1, heads, Sq, depth}));
  Value k4 = attune::reshapeTo(builder, loc, match.key, tensor({1, heads, Sk, depth}));
  // [.., 2 span, d] per row -> [2 span, heads, d], the modifier's layout; a
  // table that is that layout transposed (the graph made [heads, 2 span, d]
  // of it) is taken as it is.
  auto table = [&](Value t) -> Value {
    Value perRow = attune::reshapeTo(builder, loc, t, tensor({heads, rows, depth}));
    RankedTensorType layout = tensor({rows, heads, depth});
    if (auto back = perRow.getDefiningOp<tfm::TransposeOp>();
        back && back.getPermutation() == ArrayRef<int64_t>{1, 0, 2} &&
        back.getInput().getType() == layout)
      return back.getInput();
    return tfm::TransposeOp::create(builder, loc, layout, perRow,
                                    b.getDenseI64ArrayAttr({1, 0, 2}));
  };
  SmallVector<Value> tables = {table(match.keyTable), table(match.queryTable)};
  SmallVector<NamedAttribute> entries = {b.getNamedAttr("kind", b.getStringAttr("deberta")),
                                         b.getNamedAttr("span", b.getI64IntegerAttr(match.span))};
  if (match.maxPosition > 0)
    entries.push_back(b.getNamedAttr("max_position", b.getI64IntegerAttr(match.maxPosition)));
  RankedTensorType scoresType = tensor({1, heads, Sq, Sk});
  Value scores = tfm::MatmulOp::create(builder, loc, scoresType, q4, k4, b.getBoolAttr(false),
                                       b.getBoolAttr(true));
  // Scaled by 1 inside, by the graph's scale after: content terms are
  // scaled along with q k^T, as -tfm-fuse-attention reads them.
  auto bias = tfm::ScoreBiasOp::create(builder, loc, scoresType, scores, q4, k4, tables,
                                       b.getDictionaryAttr(entries), b.getF64FloatAttr(1.0));
  Value scaled = tfm::DivOp::create(builder, loc, scoresType, bias,
                                    attune::createSplat(builder, loc, element, 1.0 / match.scale));
  // Views of the sum ([B*H, Sq, Sk] -> [B, H, Sq, Sk]) view the raised form.
  for (Operation *user : llvm::make_early_inc_range(root->getUsers()))
    if (auto view = dyn_cast<tfm::ReshapeOp>(user)) {
      OpBuilder at(view);
      view.getResult().replaceAllUsesWith(attune::reshapeTo(at, loc, scaled, view.getType()));
    }
  root.getResult().replaceAllUsesWith(attune::reshapeTo(builder, loc, scaled, type));
  return bias;
}
