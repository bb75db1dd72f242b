//===- ScoreModifier.h - position and mask terms of attention scores -*- C++ -*-===//
//
// A score modifier is one way the literature puts position (or a mask) into
// attention scores as a function of the head and the key-query distance:
//
//   s[b, h, i, j] = scale * q_i . k_j + bias_h(delta),
//   delta = j - (i + Sk - Sq)       (the query block sits at the end of the
//                                     keys, as when decoding with a cache)
//
// ALiBi, T5's relative buckets and a sliding window are such terms (a mask
// is a bias of -inf). Relative encodings that read the content of a query or
// key row (Shaw et al., Transformer-XL, DeBERTa) add content terms inside the
// scale, and Shaw's adds a value term to the output:
//
//   s[b, h, i, j] += scale * (q_i + offset_h) . table[row(delta)]   (query side)
//   s[b, h, i, j] += scale * k_j . table[row(delta)]                (key side)
//   o[b, h, i]    += sum_j p_ij * values[clip(delta, -K, K) + K]
//
// where row() maps a distance to a row of a small table (clipped or
// bucketed), so the kernel computes q_i . table[r] once per row r of a query
// tile and looks it up per score: still never Sq x Sk values in memory.
//
// Everything the compiler needs to know about one lives
// in one file in this folder, a subclass of ScoreModifier (the build finds
// the file and registers it by name):
//
//   - its parameters and operands, and the checks the tfm verifier runs;
//   - reference semantics, in double, for the evaluator;
//   - a Halide expression of (h, delta), which the fused attention kernel
//     evaluates once per head and distance for a tile and adds to each score
//     as it computes it (the Sq x Sk bias is never stored), and which the
//     unfused build's tfm.score_bias kernel adds to stored scores.
//
// The generic parts (the attribute form `{kind = "alibi", ...}` on
// tfm.attention and tfm.score_bias, their verification, the decomposition
// into tfm.score_bias and the fusion back) read only this interface, so a
// new modifier is one file plus its tests.
//
// This header names no MLIR or Halide type beyond a forward declaration, so
// the dialect, the evaluator and the code generator can all include it.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_COMPILER_MODIFIERS_SCOREMODIFIER_H
#define ATTUNE_COMPILER_MODIFIERS_SCOREMODIFIER_H

#include <climits>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace Halide {
struct Expr;
class Func;
} // namespace Halide

namespace attune::modifiers {

/// A modifier's parameters by name. Integers and booleans (0/1) are exact.
using ModifierParams = std::map<std::string, double>;

/// One parameter a modifier takes.
struct ParamSpec {
  enum Kind { Integer, Real, Bool };
  std::string name;
  Kind kind = Real;
  /// The value when the attribute leaves it out; none: required.
  std::optional<double> defaultValue;
  double min = -1e300, max = 1e300;
  std::string description;
};

/// One tensor operand a modifier takes (a bias table, ...), with its rank
/// and what its dimensions mean, e.g. {"table", 2, "[num_buckets, H]"}.
struct OperandSpec {
  std::string name;
  int rank = 0;
  std::string shape;
};

/// The attention a modifier is applied to; -1 marks a dynamic dimension.
struct AttentionDims {
  int64_t heads = -1, querySeq = -1, keySeq = -1;
  int64_t headDim = -1, valueDim = -1;
};

/// A term of the score that reads a query or a key row, added inside the
/// attention's scale (see the top of this file). `table` and `offset` are
/// operand indices.
struct ContentTerm {
  enum Side { Query, Key };
  enum Form {
    PerHead,    // table [rows, H, D]
    Shared,     // table [rows, D], the same for every head
    HeadVector, // table [H, D]: one row, row() is not called
  };
  Side side = Query;
  int table = -1;
  Form form = PerHead;
  /// A [H, D] operand added to q before the product (Transformer-XL's v),
  /// or -1. Query side only.
  int offset = -1;
};

/// Shaw et al.'s term on the output: o_i += sum_j p_ij * table[clip(delta,
/// -K, K) + K], with `table` [2K + 1, Dv] (an operand index).
struct ValueTerm {
  int table = -1;
  int64_t maxDistance = 0;
};

/// A bias read from a table by bucket: bias_h(delta) = operand
/// `table`[row(delta), h] (the operand [rows, H], row-major), where
/// row(delta) = rows[clamp(delta, low, low + rows.size() - 1) - low]: the
/// bucket of each distance in [low, low + rows.size()), and the edge
/// buckets beyond (T5's, which stop changing at max_distance).
struct TableBias {
  int table = -1;
  int64_t low = 0;
  std::vector<int32_t> rows;
};

/// A row-major operand for the reference evaluator.
struct ReferenceOperand {
  const double *data = nullptr;
  std::vector<int64_t> shape;
};

class ScoreModifier {
public:
  virtual ~ScoreModifier();

  /// The `kind` that names it in the IR, e.g. "alibi".
  virtual std::string name() const = 0;
  /// Where it comes from and its formula, one paragraph.
  virtual std::string description() const = 0;
  virtual std::vector<ParamSpec> params() const { return {}; }
  virtual std::vector<OperandSpec> operands() const { return {}; }

  /// What the generic checks of the parameters (presence, kind, range) and
  /// operand ranks cannot see: relations between them and the attention's
  /// dimensions. Returns "" or a message naming the problem.
  virtual std::string verify(const ModifierParams &params, const AttentionDims &dims,
                             const std::vector<std::vector<int64_t>> &operandShapes) const {
    return "";
  }

  /// Narrows [lo, hi] to the distances this modifier can leave unmasked:
  /// outside it kernelBias is -inf for every head, so the fused kernel skips
  /// key blocks that lie wholly outside (a sliding window's keys before the
  /// window). The default leaves both as they are.
  virtual void visibleDeltas(const ModifierParams &params, int64_t &lo,
                             int64_t &hi) const {}

  /// False when the modifier adds no bias_h(delta), only content or value
  /// terms: kernels then build no bias table for it.
  virtual bool hasBias() const { return true; }

  /// The term added to the scaled score of head `h` (of `heads`) at
  /// distance `delta`; -inf masks the key out. In double, written from the
  /// source's definition, independently of kernelBias. Default: 0.
  virtual double referenceBias(const ModifierParams &params,
                               const std::vector<ReferenceOperand> &operands,
                               int64_t heads, int64_t h, int64_t delta) const {
    return 0.0;
  }

  /// The same term as a Halide expression in f32 of the int32 expressions
  /// `heads`, `h` and `delta`; `operands` are the operand tensors as f32
  /// Funcs in Halide order (innermost dimension first). May return -inf.
  /// Default: 0.
  virtual Halide::Expr kernelBias(const ModifierParams &params,
                                  const std::vector<Halide::Func> &operands,
                                  const Halide::Expr &heads, const Halide::Expr &h,
                                  const Halide::Expr &delta) const;

  /// The bias as a TableBias, if it has that form (T5's). Kernels that
  /// cannot evaluate kernelBias per score read the table through the rows
  /// instead (the GPU attention kernel). Must agree with referenceBias at
  /// every distance. Default: none.
  virtual std::optional<TableBias> tableBias(const ModifierParams &params) const {
    return std::nullopt;
  }

  /// The content terms (see ContentTerm); none by default.
  virtual std::vector<ContentTerm> contentTerms(const ModifierParams &params) const {
    return {};
  }

  /// The row of content term `term`'s table at distance `delta`, in double
  /// from the source's definition. Callers clamp it to the table's rows.
  virtual int64_t referenceRow(const ModifierParams &params, size_t term,
                               int64_t delta) const {
    return 0;
  }

  /// The same row as an int32 Halide expression of the int32 `delta`.
  virtual Halide::Expr kernelRow(const ModifierParams &params, size_t term,
                                 const Halide::Expr &delta) const;

  /// A distance D_s from which the row stops changing (row(delta) =
  /// row(D_s) for delta >= D_s, row(-D_s) for delta <= -D_s), if there is
  /// one. A hint for the kernel's strategy: a short one (Shaw's clip) makes
  /// per-score lookups cheap; without one (Transformer-XL) the kernel
  /// computes the term as a product over distances instead.
  virtual std::optional<int64_t> saturationDistance(const ModifierParams &params,
                                                    size_t term) const {
    return std::nullopt;
  }

  /// The most keys the modifier defines scores for, if it limits them
  /// (Transformer-XL's r has rows for distances up to max_distance). A
  /// compiled library refuses longer key sequences, as it refuses a sequence
  /// longer than a learned position table.
  virtual std::optional<int64_t> maxKeys(const ModifierParams &params) const {
    return std::nullopt;
  }

  /// The value term, if the modifier has one.
  virtual std::optional<ValueTerm> valueTerm(const ModifierParams &params) const {
    return std::nullopt;
  }
};

/// The content terms of `modifier` for the score of query row `q` and key
/// row `k` (each `dims.headDim` values) of head `h` at distance `delta`, in
/// double and before the scale: sum over terms of x . table[row(delta)].
double referenceContent(const ScoreModifier &modifier, const ModifierParams &params,
                        const std::vector<ReferenceOperand> &operands, int64_t h,
                        int64_t delta, const double *q, const double *k, int64_t headDim);

/// Adds the value term of `modifier` for probability `p` at distance
/// `delta` to the output row `out` (`valueDim` values).
void addReferenceValue(const ScoreModifier &modifier, const ModifierParams &params,
                       const std::vector<ReferenceOperand> &operands, double p,
                       int64_t delta, double *out, int64_t valueDim);

/// The modifier registered under `name`, or null.
const ScoreModifier *lookupModifier(const std::string &name);

/// Every registered modifier, by name.
std::vector<const ScoreModifier *> allModifiers();

/// Names of every registered modifier, comma-separated, for messages.
std::string modifierNames();

/// Fills in defaults and checks `given` against `modifier`'s parameter list
/// (unknown names, missing required ones, kinds, ranges), then its operand
/// ranks, the shapes of its content and value tables against `dims`, and its
/// own verify(). Returns "" or a message naming the problem.
std::string checkModifier(const ScoreModifier &modifier, ModifierParams &given,
                          const AttentionDims &dims,
                          const std::vector<std::vector<int64_t>> &operandShapes);

/// A sum of score modifiers in the form the GPU attention kernel evaluates
/// without a table: head h adds slopes[h] * delta (slopes[h] * |delta| when
/// `absolute`) to the scores whose distance lies in [low, high], and the
/// others are masked. ALiBi and a sliding window have it; no slopes (all
/// zero) is a window alone.
struct LinearBias {
  std::vector<double> slopes;
  bool absolute = false;
  int64_t low = INT64_MIN, high = INT64_MAX;
};

/// Whether `modifiers` (each with its parameters, defaults filled in) sum
/// to a LinearBias for `heads` heads, found from their referenceBias at a
/// few distances in the visible range and checked at the others. Returns ""
/// with `out` filled, or why not (a table, content terms, another shape).
std::string linearBiasOf(
    const std::vector<std::pair<const ScoreModifier *, ModifierParams>> &modifiers,
    int64_t heads, LinearBias &out);

/// The score modifiers of one attention in the forms the GPU attention
/// kernel evaluates: a LinearBias (`linear`: slopes, or none, and the
/// visible distances), to which at most one modifier adds a TableBias
/// (`table`, read from operand `table->table` of modifier `tableModifier`).
struct DeviceBias {
  LinearBias linear;
  std::optional<TableBias> table;
  size_t tableModifier = 0;
};

/// Whether `modifiers` (as linearBiasOf takes them) have those forms for
/// `heads` heads: returns "" with `out` filled, or why not.
std::string deviceBiasOf(
    const std::vector<std::pair<const ScoreModifier *, ModifierParams>> &modifiers,
    int64_t heads, DeviceBias &out);

/// Each file `<Stem>.cpp` of this folder defines
///   std::unique_ptr<ScoreModifier> create<Stem>();
/// and the build lists every file, so the registry needs no edit.

} // namespace attune::modifiers

#endif // ATTUNE_COMPILER_MODIFIERS_SCOREMODIFIER_H
