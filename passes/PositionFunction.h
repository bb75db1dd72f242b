//===- PositionFunction.h - index graphs read as functions of (i, j) -*- C++ -*-===//
//
// Internal to passes/. Exporters compute the indices of relative encodings
// (T5's bucket ids, Shaw's clipped distances, DeBERTa's log-bucketed
// positions) from aranges with a dozen element-wise ops, each spelling them
// its own way. -tfm-raise-encodings does not match those spellings: it
// evaluates the graph at a query i and a key j, as the model would, and
// compares the function it reads off with the encoding's definition.
//
//===----------------------------------------------------------------------===//

#ifndef ATTUNE_PASSES_POSITIONFUNCTION_H
#define ATTUNE_PASSES_POSITIONFUNCTION_H

#include "dialects/tfm/TfmOps.h"

#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <tuple>

namespace attune {

/// Evaluates a value computed from positions and constants only (no model
/// input, no weight) at one query i and key j, in the element types the
/// graph computes in: f32 values are rounded to f32 after every op, integers
/// are exact, float-to-integer casts round toward zero. An axis of size 1
/// broadcasts; of the last two axes, the one before last carries i and the
/// last j (numpy's alignment against scores [..., Sq, Sk]); every other
/// axis must be 1. This is how exporters write bucket ids, whatever ops
/// they spell the buckets with; the pass reads the function off the graph
/// instead of matching one spelling of it.
class PositionFunction {
public:
  /// `subject` names the values in reasons: "the bucket ids depend on ...".
  explicit PositionFunction(llvm::StringRef subject = "the bucket ids")
      : subject(subject.str()) {}

  /// A coordinate and whether it is the query's (i) or the key's (j).
  struct Coord {
    int64_t value = 0;
    bool query = false;
  };

  /// The value at query i, key j: one evaluation of the function. None when
  /// the graph is not such a function; `why` then says which op is not.
  std::optional<double> evaluate(mlir::Value v, Coord i, Coord j) {
    memo.clear();
    return at(v, i, j);
  }

  /// The aranges reached, with the coordinate that indexed each.
  struct Arange {
    tfm::ArangeOp op;
    bool query = false;
  };
  llvm::SmallVector<Arange> aranges;
  std::string why;

private:
  std::optional<double> at(mlir::Value v, Coord i, Coord j);
  std::optional<double> compute(mlir::Value v, Coord i, Coord j);
  std::optional<double> throughReshape(tfm::ReshapeOp reshape, Coord i, Coord j);
  std::optional<double> fail(mlir::Value v, llvm::StringRef what);

  std::string subject;
  /// Values shared within one evaluation (the ids are a DAG).
  using Key = std::tuple<const void *, int64_t, bool, int64_t, bool>;
  std::map<Key, double> memo;
};

} // namespace attune

#endif // ATTUNE_PASSES_POSITIONFUNCTION_H
