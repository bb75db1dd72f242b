//===- KernelCatalog.cpp - names, signatures and checks of kernel specs ---===//
//
// What every consumer of a KernelSpec agrees on: the C symbol that names it,
// its argument list, its schedule key, and what makes it unbuildable.
//
//===----------------------------------------------------------------------===//

#include "compiler/support/KernelCatalog.h"

#include <algorithm>
#include <cctype>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <cstring>

namespace attune {

const char *scalarTypeName(ScalarType type) {
  switch (type) {
  case ScalarType::F32:
    return "f32";
  case ScalarType::F16:
    return "f16";
  case ScalarType::BF16:
    return "bf16";
  case ScalarType::I32:
    return "i32";
  case ScalarType::I64:
    return "i64";
  case ScalarType::I8:
    return "i8";
  case ScalarType::Bool:
    return "bool";
  }
  return "unknown";
}

} // namespace attune

namespace attune::codegen {

namespace {

/// A double, exactly: its IEEE-754 bits in hex. Printing "%g" would make two
/// nearby epsilons share a kernel; this never does.
std::string exactDouble(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  char buffer[17];
  std::snprintf(buffer, sizeof(buffer), "%016" PRIx64, bits);
  return buffer;
}

const char *binaryName(BinaryKind kind) {
  switch (kind) {
  case BinaryKind::Add:
    return "add";
  case BinaryKind::Sub:
    return "sub";
  case BinaryKind::Mul:
    return "mul";
  case BinaryKind::Div:
    return "div";
  case BinaryKind::Minimum:
    return "minimum";
  case BinaryKind::Maximum:
    return "maximum";
  }
  return "binary_unknown";
}

const char *predicateName(ComparePredicate predicate) {
  switch (predicate) {
  case ComparePredicate::Lt:
    return "lt";
  case ComparePredicate::Le:
    return "le";
  case ComparePredicate::Gt:
    return "gt";
  case ComparePredicate::Ge:
    return "ge";
  case ComparePredicate::Eq:
    return "eq";
  case ComparePredicate::Ne:
    return "ne";
  }
  return "predicate_unknown";
}

const char *unaryName(UnaryKind kind) {
  switch (kind) {
  case UnaryKind::Relu:
    return "relu";
  case UnaryKind::GeluErf:
    return "gelu_erf";
  case UnaryKind::GeluTanh:
    return "gelu_tanh";
  case UnaryKind::Silu:
    return "silu";
  case UnaryKind::Neg:
    return "neg";
  case UnaryKind::Abs:
    return "abs";
  case UnaryKind::Cos:
    return "cos";
  case UnaryKind::Sin:
    return "sin";
  case UnaryKind::Tanh:
    return "tanh";
  case UnaryKind::Log:
    return "log";
  case UnaryKind::Sign:
    return "sign";
  case UnaryKind::Ceil:
    return "ceil";
  }
  return "unary_unknown";
}

const char *kindName(KernelKind kind) {
  switch (kind) {
  case KernelKind::Embedding:
    return "embedding";
  case KernelKind::LearnedPosition:
    return "learned_position";
  case KernelKind::Sinusoidal:
    return "sinusoidal";
  case KernelKind::LayerNorm:
    return "layer_norm";
  case KernelKind::RmsNorm:
    return "rms_norm";
  case KernelKind::Linear:
    return "linear";
  case KernelKind::Matmul:
    return "matmul";
  case KernelKind::Softmax:
    return "softmax";
  case KernelKind::Binary:
    return "binary";
  case KernelKind::Where:
    return "where";
  case KernelKind::Unary:
    return "unary";
  case KernelKind::CausalMask:
    return "causal_mask";
  case KernelKind::Copy:
    return "copy";
  case KernelKind::RepeatInterleave:
    return "repeat_interleave";
  case KernelKind::Attention:
    return "attention";
  case KernelKind::ScoreBias:
    return "score_bias";
  case KernelKind::ScoreValues:
    return "score_values";
  case KernelKind::Rope:
    return "rope";
  case KernelKind::MultiplicativePosition:
    return "multiplicative_position";
  case KernelKind::RecursivePosition:
    return "recursive_position";
  case KernelKind::ComplexEmbedding:
    return "complex_embedding";
  case KernelKind::ComplexLinear:
    return "complex_linear";
  case KernelKind::Arange:
    return "arange";
  case KernelKind::Compare:
    return "compare";
  case KernelKind::Cast:
    return "cast";
  case KernelKind::GatherElements:
    return "gather_elements";
  }
  return nullptr;
}

/// The sinusoid's form and the timescales it reads (the interleaved form
/// has no minimum).
std::string sinusoidSuffix(const KernelSpec &spec) {
  if (spec.form == SinusoidalForm::Interleaved)
    return "_interleaved_max" + exactDouble(spec.maxTimescale);
  return "_concat_min" + exactDouble(spec.minTimescale) + "_max" +
         exactDouble(spec.maxTimescale);
}

} // namespace

std::string checkRopeScaling(const RopeSpec &rope) {
  if (rope.scaling == RopeSpec::Scaling::None)
    return "";
  if (!(rope.factor >= 1.0) || !std::isfinite(rope.factor))
    return "expected a rope scaling factor >= 1, got " + std::to_string(rope.factor);
  if (rope.scaling == RopeSpec::Scaling::Llama3) {
    if (!(rope.lowFreqFactor > 0) || !(rope.highFreqFactor > rope.lowFreqFactor) ||
        !std::isfinite(rope.highFreqFactor))
      return "expected llama3 rope scaling with 0 < low_freq_factor < "
             "high_freq_factor, got " +
             std::to_string(rope.lowFreqFactor) + " and " +
             std::to_string(rope.highFreqFactor);
    if (rope.originalMaxPositions <= 0)
      return "expected llama3 rope scaling's original_max_positions > 0, got " +
             std::to_string(rope.originalMaxPositions);
  }
  return "";
}

double ropeInverseFrequency(const RopeSpec &rope, int64_t i) {
  double theta = std::pow(rope.base, -2.0 * double(i) / double(rope.rotaryDims));
  switch (rope.scaling) {
  case RopeSpec::Scaling::None:
    return theta;
  case RopeSpec::Scaling::Linear:
    return theta / rope.factor;
  case RopeSpec::Scaling::Llama3: {
    double context = double(rope.originalMaxPositions);
    double lowWavelength = context / rope.lowFreqFactor;
    double highWavelength = context / rope.highFreqFactor;
    double wavelength = 2.0 * M_PI / theta;
    if (wavelength < highWavelength)
      return theta;
    if (wavelength > lowWavelength)
      return theta / rope.factor;
    double smooth = (context / wavelength - rope.lowFreqFactor) /
                    (rope.highFreqFactor - rope.lowFreqFactor);
    return (1.0 - smooth) * theta / rope.factor + smooth * theta;
  }
  }
  return theta;
}

namespace {

std::string ropeSuffix(const RopeSpec &rope) {
  if (!rope.enabled)
    return "";
  std::string scaling;
  if (rope.scaling == RopeSpec::Scaling::Linear)
    scaling = "_linear" + exactDouble(rope.factor);
  else if (rope.scaling == RopeSpec::Scaling::Llama3)
    scaling = "_llama3_f" + exactDouble(rope.factor) + "_lo" +
              exactDouble(rope.lowFreqFactor) + "_hi" +
              exactDouble(rope.highFreqFactor) + "_n" +
              std::to_string(rope.originalMaxPositions);
  return "_rope_base" + exactDouble(rope.base) + "_r" + std::to_string(rope.rotaryDims) +
         (rope.interleaved ? "_interleaved" : "_halves") + "_o" +
         std::to_string(rope.positionOffset) + scaling;
}

/// "_<name>_<param><exact value>..." for each modifier, in order.
std::string modifierSuffix(const std::vector<ModifierSpec> &modifiers) {
  std::string suffix;
  for (const ModifierSpec &modifier : modifiers) {
    suffix += "_" + modifier.name;
    for (const auto &[param, value] : modifier.params)
      suffix += "_" + param + exactDouble(value);
  }
  return suffix;
}

} // namespace

std::string KernelSpec::symbolName() const {
  const char *kindStr = kindName(kind);
  std::string name = "attune_";
  if (!kindStr) // Not a kind: still a valid, distinct identifier.
    return name + "invalid_kind" + std::to_string(static_cast<int>(kind));
  name += kindStr;
  name += "_";
  name += scalarTypeName(elementType);
  // Only the fields a kind is specialised on: two specs that differ in a
  // field their kind ignores are the same kernel and must share a name.
  switch (kind) {
  case KernelKind::Embedding:
    name += std::string("_ids_") + scalarTypeName(indexType);
    break;
  case KernelKind::LearnedPosition:
  case KernelKind::Softmax:
    break;
  case KernelKind::Sinusoidal:
    name += sinusoidSuffix(*this);
    break;
  case KernelKind::MultiplicativePosition:
    name += hasTable ? "_table" : sinusoidSuffix(*this);
    break;
  case KernelKind::RecursivePosition:
    name += "_dt" + exactDouble(timeStep);
    break;
  case KernelKind::ComplexEmbedding:
    name += std::string("_ids_") + scalarTypeName(indexType) + "_k" +
            std::to_string(firstPosition);
    break;
  case KernelKind::ComplexLinear:
    name += hasBias ? "_bias" : "_nobias";
    break;
  case KernelKind::LayerNorm:
  case KernelKind::RmsNorm:
    name += "_eps" + exactDouble(epsilon);
    if (hasResidual)
      name += "_residual";
    break;
  case KernelKind::Linear:
    name += hasBias ? "_bias" : "_nobias";
    if (activation)
      name += std::string("_") + unaryName(*activation);
    if (weightPanel > 0)
      name += "_p" + std::to_string(weightPanel);
    if (weightType != ScalarType::F32)
      name += std::string("_w") + scalarTypeName(weightType);
    break;
  case KernelKind::Matmul:
    name += transposeA ? "_ta" : "_na";
    name += transposeB ? "_tb" : "_nb";
    break;
  case KernelKind::Binary:
    name += std::string("_") + binaryName(binary) + "_r" + std::to_string(rank);
    break;
  case KernelKind::Where:
    name += std::string("_cond_") + scalarTypeName(condType) + "_r" +
            std::to_string(rank);
    break;
  case KernelKind::Unary:
    name += std::string("_") + unaryName(unary);
    break;
  case KernelKind::CausalMask:
    name += "_fill" + exactDouble(value);
    break;
  case KernelKind::Copy:
    name += "_r" + std::to_string(rank);
    break;
  case KernelKind::RepeatInterleave:
    name += "_x" + std::to_string(repeats);
    break;
  case KernelKind::Attention:
    name += "_d" + std::to_string(headDim) + "_scale" + exactDouble(scale);
    if (valueDim > 0 && valueDim != headDim)
      name += "_dv" + std::to_string(valueDim);
    if (causal)
      name += "_causal";
    if (hasMask)
      name += "_mask";
    if (hasKeyPadding)
      name += std::string("_kpm_") + scalarTypeName(keyPaddingType);
    name += modifierSuffix(modifiers);
    name += ropeSuffix(rope);
    if (bf16Products)
      name += "_bf16products";
    if (f16Products)
      name += "_f16products";
    if (softcap > 0)
      name += "_softcap" + exactDouble(softcap);
    break;
  case KernelKind::ScoreBias:
    name += modifierSuffix(modifiers);
    if (hasContent)
      name += "_content_scale" + exactDouble(scale);
    break;
  case KernelKind::ScoreValues:
    name += modifierSuffix(modifiers);
    break;
  case KernelKind::Rope:
    name += "_d" + std::to_string(headDim) + ropeSuffix(rope) +
            (ropeAligned ? "_aligned" : "");
    break;
  case KernelKind::Arange:
    name += "_start" + std::to_string(start);
    break;
  case KernelKind::Compare:
    name += std::string("_") + predicateName(predicate) + "_r" + std::to_string(rank);
    break;
  case KernelKind::Cast:
    name += std::string("_from_") + scalarTypeName(sourceType);
    break;
  case KernelKind::GatherElements:
    name += std::string("_idx_") + scalarTypeName(indexType);
    break;
  }
  // A negative rank or repeat count prints a '-': keep the identifier valid.
  std::replace(name.begin(), name.end(), '-', 'm');
  return name;
}

std::string KernelSpec::scheduleKey() const {
  // std::map iterates in key order, so equal schedules print equally.
  std::string key;
  for (const auto &[isa, params] : schedules) {
    key += isa + "{";
    for (const auto &[name, value] : params)
      key += name + "=" + std::to_string(value) + ";";
    key += "}";
  }
  if (keyBound > 0)
    key += "key_bound=" + std::to_string(keyBound) + ";";
  if (queryBound > 0)
    key += "query_bound=" + std::to_string(queryBound) + ";";
  return key;
}

namespace {

/// The operands of spec.modifiers, named "<modifier><m>_<k>" (m the
/// modifier's index, k the operand's), of the element type.
void appendModifierArgs(const KernelSpec &spec, std::vector<KernelArg> &args) {
  for (size_t m = 0; m < spec.modifiers.size(); ++m)
    for (size_t k = 0; k < spec.modifiers[m].operandRanks.size(); ++k)
      args.push_back({spec.modifiers[m].name + std::to_string(m) + "_" + std::to_string(k),
                      spec.elementType, spec.modifiers[m].operandRanks[k]});
}

} // namespace

std::vector<KernelArg> kernelSignature(const KernelSpec &spec) {
  const ScalarType e = spec.elementType;
  switch (spec.kind) {
  case KernelKind::Embedding:
    return {{"table", e, 2}, {"ids", spec.indexType, 1}, {"out", e, 2}};
  case KernelKind::LearnedPosition:
    return {{"x", e, 3}, {"table", e, 2}, {"out", e, 3}};
  case KernelKind::Sinusoidal:
    return {{"x", e, 3}, {"out", e, 3}};
  case KernelKind::LayerNorm:
    if (spec.hasResidual)
      return {{"x", e, 2}, {"residual", e, 2}, {"gamma", e, 1}, {"beta", e, 1}, {"out", e, 2}};
    return {{"x", e, 2}, {"gamma", e, 1}, {"beta", e, 1}, {"out", e, 2}};
  case KernelKind::RmsNorm:
    if (spec.hasResidual)
      return {{"x", e, 2}, {"residual", e, 2}, {"gamma", e, 1}, {"out", e, 2}};
    return {{"x", e, 2}, {"gamma", e, 1}, {"out", e, 2}};
  case KernelKind::Linear: {
    // Pair panels of bf16 have a fourth dim: the two rows of a pair.
    const int wRank = spec.weightType == ScalarType::BF16 ? 4
                      : spec.weightPanel > 0              ? 3
                                                          : 2;
    // weightType F32 means "as the elements": an f16 linear reads f16 w.
    const ScalarType w = spec.weightType == ScalarType::BF16 ? ScalarType::BF16 : e;
    std::vector<KernelArg> args = {{"x", e, 2}, {"w", w, wRank}};
    if (spec.hasBias)
      args.push_back({"bias", e, 1});
    args.push_back({"out", e, 2});
    return args;
  }
  case KernelKind::Matmul:
    return {{"a", e, 3}, {"b", e, 3}, {"out", e, 3}};
  case KernelKind::Softmax:
    return {{"x", e, 2}, {"out", e, 2}};
  case KernelKind::Binary:
    return {{"lhs", e, spec.rank}, {"rhs", e, spec.rank}, {"out", e, spec.rank}};
  case KernelKind::Where:
    return {{"cond", spec.condType, spec.rank},
            {"onTrue", e, spec.rank},
            {"onFalse", e, spec.rank},
            {"out", e, spec.rank}};
  case KernelKind::Unary:
    return {{"x", e, 1}, {"out", e, 1}};
  case KernelKind::CausalMask:
    return {{"x", e, 3}, {"out", e, 3}};
  case KernelKind::Copy:
    return {{"x", e, spec.rank}, {"out", e, spec.rank}};
  case KernelKind::RepeatInterleave:
    return {{"x", e, 3}, {"out", e, 3}};
  case KernelKind::Attention: {
    std::vector<KernelArg> args = {{"q", e, 4}, {"k", e, 4}, {"v", e, 4}};
    if (spec.hasMask)
      args.push_back({"mask", e, 4});
    if (spec.hasKeyPadding)
      args.push_back({"keyPadding", spec.keyPaddingType, 2});
    appendModifierArgs(spec, args);
    args.push_back({"out", e, 4});
    return args;
  }
  case KernelKind::ScoreBias: {
    std::vector<KernelArg> args = {{"x", e, 4}};
    if (spec.hasContent) {
      args.push_back({"q", e, 4});
      args.push_back({"k", e, 4});
    }
    appendModifierArgs(spec, args);
    args.push_back({"out", e, 4});
    return args;
  }
  case KernelKind::ScoreValues: {
    std::vector<KernelArg> args = {{"p", e, 4}};
    appendModifierArgs(spec, args);
    args.push_back({"out", e, 4});
    return args;
  }
  case KernelKind::Rope:
    if (spec.ropeAligned)
      return {{"x", e, 4}, {"align", e, 4}, {"out", e, 4}};
    return {{"x", e, 4}, {"out", e, 4}};
  case KernelKind::MultiplicativePosition:
    if (spec.hasTable)
      return {{"x", e, 3}, {"table", e, 2}, {"out", e, 3}};
    return {{"x", e, 3}, {"out", e, 3}};
  case KernelKind::RecursivePosition:
    return {{"x", e, 3},  {"p0", e, 1}, {"w1", e, 2}, {"b1", e, 1},
            {"w2", e, 2}, {"b2", e, 1}, {"out", e, 3}};
  case KernelKind::ComplexEmbedding:
    return {{"ids", spec.indexType, 2},
            {"amplitude", e, 2},
            {"frequency", e, 2},
            {"phase", e, 2},
            {"out", e, 3}};
  case KernelKind::ComplexLinear: {
    std::vector<KernelArg> args = {{"x", e, 2}, {"wr", e, 2}, {"wi", e, 2}};
    if (spec.hasBias) {
      args.push_back({"br", e, 1});
      args.push_back({"bi", e, 1});
    }
    args.push_back({"out", e, 2});
    return args;
  }
  case KernelKind::Arange:
    return {{"out", e, 1}};
  case KernelKind::Compare:
    return {{"lhs", e, spec.rank}, {"rhs", e, spec.rank}, {"out", ScalarType::Bool, spec.rank}};
  case KernelKind::Cast:
    return {{"x", spec.sourceType, 1}, {"out", e, 1}};
  case KernelKind::GatherElements:
    return {{"x", e, 3}, {"indices", spec.indexType, 3}, {"out", e, 3}};
  }
  return {};
}

namespace {

/// Highest rank a strided elementwise kernel takes: the tfm dialect's models
/// never go past 5-d, and Halide's buffers carry at most 16 dimensions.
constexpr int kMaxRank = 8;

bool isFloat(ScalarType type) {
  return type == ScalarType::F32 || type == ScalarType::F16 || type == ScalarType::BF16;
}

/// The element types of tfm's arithmetic (Tfm_NumericTensor).
bool isNumeric(ScalarType type) {
  return isFloat(type) || type == ScalarType::I32 || type == ScalarType::I64;
}

/// tfm.cast's element types.
bool isCastable(ScalarType type) { return isNumeric(type) || type == ScalarType::Bool; }

const char *const kFloatTypes = "an f32, f16 or bf16";
const char *const kNumericTypes = "an f32, f16, bf16, i32 or i64";

} // namespace

std::string validateKernelSpec(const KernelSpec &spec) {
  const char *kind = kindName(spec.kind);
  if (!kind)
    return "unknown kernel kind " + std::to_string(static_cast<int>(spec.kind));
  auto bad = [&](const std::string &what) { return std::string(kind) + ": " + what; };
  auto validType = isValidScalarType;
  if (!validType(spec.elementType))
    return bad("expected a known element type, got " +
               std::to_string(static_cast<int>(spec.elementType)));
  switch (spec.kind) {
  case KernelKind::Binary:
  case KernelKind::Where:
  case KernelKind::Compare:
  case KernelKind::Copy:
    if (spec.rank < 1 || spec.rank > kMaxRank)
      return bad("expected rank in [1, " + std::to_string(kMaxRank) + "], got " +
                 std::to_string(spec.rank));
    break;
  default:
    break;
  }
  for (const ModifierSpec &modifier : spec.modifiers) {
    bool identifier = !modifier.name.empty();
    for (char c : modifier.name)
      identifier &= std::isalnum(static_cast<unsigned char>(c)) || c == '_';
    for (const auto &[param, value] : modifier.params)
      identifier &= !param.empty() &&
                    std::all_of(param.begin(), param.end(), [](char c) {
                      return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
                    });
    if (!identifier)
      return bad("expected modifier and parameter names of letters, digits "
                 "and '_', got '" + modifier.name + "'");
    for (int rank : modifier.operandRanks)
      if (rank < 1 || rank > kMaxRank)
        return bad("modifier '" + modifier.name + "': expected operand ranks in [1, " +
                   std::to_string(kMaxRank) + "], got " + std::to_string(rank));
  }
  if (spec.weightPanel != 0 &&
      (spec.kind != KernelKind::Linear || spec.weightPanel < 1 ||
       spec.weightPanel > 1024))
    return bad("expected a weight panel width in [1, 1024] on linear only, got " +
               std::to_string(spec.weightPanel));
  if (spec.weightType != ScalarType::F32 &&
      (spec.kind != KernelKind::Linear || spec.weightType != ScalarType::BF16 ||
       spec.weightPanel < 1 || spec.elementType != ScalarType::F32))
    return bad(std::string("expected weights of f32, or of bf16 in panels on an "
                           "f32 linear, got ") +
               scalarTypeName(spec.weightType));
  if (spec.hasResidual && spec.kind != KernelKind::LayerNorm &&
      spec.kind != KernelKind::RmsNorm)
    return bad("a residual is only added by layer_norm and rms_norm");
  if (spec.activation) {
    UnaryKind a = *spec.activation;
    if (spec.kind != KernelKind::Linear)
      return bad("an activation is only applied by linear");
    if (a != UnaryKind::Relu && a != UnaryKind::GeluErf &&
        a != UnaryKind::GeluTanh && a != UnaryKind::Silu)
      return bad(std::string("expected activation relu, gelu_erf, gelu_tanh "
                             "or silu, got ") + unaryName(a));
  }
  switch (spec.kind) {
  case KernelKind::Embedding:
  case KernelKind::ComplexEmbedding:
  case KernelKind::GatherElements:
    if (spec.indexType != ScalarType::I32 && spec.indexType != ScalarType::I64)
      return bad(std::string("expected index type i32 or i64, got ") +
                 scalarTypeName(spec.indexType));
    // k = s + firstPosition is formed in 32 bits.
    if (spec.kind == KernelKind::ComplexEmbedding &&
        (spec.firstPosition < 0 || spec.firstPosition >= (int64_t(1) << 30)))
      return bad("expected a first position in [0, 2^30), got " +
                 std::to_string(spec.firstPosition));
    break;
  case KernelKind::RecursivePosition:
    if (!std::isfinite(spec.timeStep))
      return bad("expected a finite time step, got " + std::to_string(spec.timeStep));
    break;
  case KernelKind::Where:
    if (!validType(spec.condType))
      return bad("expected a known condition type");
    if (!isNumeric(spec.elementType))
      return bad(std::string("expected ") + kNumericTypes + " element type, got " +
                 scalarTypeName(spec.elementType));
    break;
  case KernelKind::Binary: {
    // Integer division rounds differently in PyTorch and ONNX; tfm.div is
    // float-only, and so is its kernel.
    bool integerOk = spec.binary != BinaryKind::Div;
    if (!(integerOk ? isNumeric(spec.elementType) : isFloat(spec.elementType)))
      return bad(std::string("expected ") + (integerOk ? kNumericTypes : kFloatTypes) +
                 " element type for " + binaryName(spec.binary) + ", got " +
                 scalarTypeName(spec.elementType));
    break;
  }
  case KernelKind::Unary: {
    // neg and abs wrap on integers, sign is exact; the rest are real
    // functions.
    bool integerOk = spec.unary == UnaryKind::Neg || spec.unary == UnaryKind::Abs ||
                     spec.unary == UnaryKind::Sign;
    if (!(integerOk ? isNumeric(spec.elementType) : isFloat(spec.elementType)))
      return bad(std::string("expected ") + (integerOk ? kNumericTypes : kFloatTypes) +
                 " element type for " + unaryName(spec.unary) + ", got " +
                 scalarTypeName(spec.elementType));
    break;
  }
  case KernelKind::Compare:
    if (!isNumeric(spec.elementType))
      return bad(std::string("expected ") + kNumericTypes + " element type, got " +
                 scalarTypeName(spec.elementType));
    if (static_cast<int>(spec.predicate) < 0 ||
        static_cast<int>(spec.predicate) > static_cast<int>(ComparePredicate::Ne))
      return bad("unknown predicate " + std::to_string(static_cast<int>(spec.predicate)));
    break;
  case KernelKind::Cast:
    if (!isCastable(spec.sourceType) || !isCastable(spec.elementType))
      return bad(std::string("expected f32, f16, bf16, bool, i32 or i64 on both sides, got ") +
                 scalarTypeName(spec.sourceType) + " to " + scalarTypeName(spec.elementType));
    break;
  case KernelKind::LayerNorm:
  case KernelKind::RmsNorm:
    if (!(spec.epsilon >= 0) || !std::isfinite(spec.epsilon))
      return bad("expected a finite epsilon >= 0, got " + std::to_string(spec.epsilon));
    break;
  case KernelKind::MultiplicativePosition:
    if (spec.hasTable)
      break;
    [[fallthrough]]; // without a table: the sinusoid's parameters
  case KernelKind::Sinusoidal:
    if (!(spec.maxTimescale > 0) || !std::isfinite(spec.maxTimescale))
      return bad("expected max timescale > 0, got " + std::to_string(spec.maxTimescale));
    if (spec.form == SinusoidalForm::Concat &&
        (!(spec.minTimescale > 0) || !std::isfinite(spec.minTimescale)))
      return bad("expected min timescale > 0, got " + std::to_string(spec.minTimescale));
    if (spec.form != SinusoidalForm::Interleaved && spec.form != SinusoidalForm::Concat)
      return bad("unknown sinusoidal form");
    break;
  case KernelKind::RepeatInterleave:
    if (spec.repeats < 1 || spec.repeats > INT32_MAX)
      return bad("expected repeats in [1, 2^31), got " + std::to_string(spec.repeats));
    break;
  case KernelKind::CausalMask:
    if (std::isnan(spec.value))
      return bad("expected a fill value that is not NaN");
    break;
  case KernelKind::ScoreBias:
    if (spec.modifiers.empty())
      return bad("expected at least one modifier");
    break;
  case KernelKind::ScoreValues:
    if (spec.modifiers.size() != 1)
      return bad("expected exactly one modifier");
    break;
  case KernelKind::Rope:
    if (!spec.rope.enabled)
      return bad("expected rope parameters");
    break;
  case KernelKind::Arange:
    if (spec.elementType == ScalarType::I8 || spec.elementType == ScalarType::Bool)
      return bad(std::string("expected an f32, f16, bf16, i32 or i64 element type, got ") +
                 scalarTypeName(spec.elementType));
    // start + n is formed in 64 bits (n < 2^31), so it cannot overflow
    // there; an i32 result wraps past 2^31 - 1, as int32 arithmetic does,
    // but a start it cannot even hold is a mistake.
    if (spec.start <= INT64_MIN / 2 || spec.start >= INT64_MAX / 2)
      return bad("expected a start in (-2^62, 2^62), got " + std::to_string(spec.start));
    if (spec.elementType == ScalarType::I32 &&
        (spec.start < INT32_MIN || spec.start > INT32_MAX))
      return bad("expected a start that fits i32, got " + std::to_string(spec.start));
    break;
  default:
    break;
  }
  if (spec.rope.enabled) {
    const RopeSpec &r = spec.rope;
    if (!(r.base > 0) || !std::isfinite(r.base))
      return bad("expected a finite rope base > 0, got " + std::to_string(r.base));
    if (r.rotaryDims < 2 || r.rotaryDims % 2 != 0 ||
        (spec.headDim > 0 && r.rotaryDims > spec.headDim))
      return bad("expected even rotary dims in [2, " + std::to_string(spec.headDim) +
                 "], got " + std::to_string(r.rotaryDims));
    if (r.positionOffset < 0 || r.positionOffset > INT32_MAX / 2)
      return bad("expected a rope position offset in [0, 2^30), got " +
                 std::to_string(r.positionOffset));
    if (std::string problem = checkRopeScaling(r); !problem.empty())
      return bad(problem);
  }
  return "";
}


} // namespace attune::codegen
