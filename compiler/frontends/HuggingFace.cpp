//===- HuggingFace.cpp - Hugging Face checkpoint folders as tfm IR --------===//
//
// Each supported architecture is a Recipe: a table of the config.json keys it
// reads its sizes from, the checkpoint tensor names of each part of a layer
// ("{i}" is the layer index), and the structural choices that differ between
// architectures (norm kind and placement, positions, MLP form, the layout of
// linear weights). One ModelBuilder walks any recipe and emits the model:
//
//   embeddings -> layers (attention + MLP, pre- or post-norm) -> head
//
// Attention is emitted as one tfm.attention with the architecture's
// semantics spelled out in its attributes (causal, key padding, GQA, RoPE,
// a sliding window, T5's bucketed bias), not as the eager code's matmuls:
// the importer knows what the model computes, and the fusion report then
// shows every site fused. Weights stay in the checkpoint: each tfm.weight
// names its tensor, with {transpose} where the file holds nn.Linear's
// [out, in] and tfm.linear reads [in, out]. Every tensor is checked against
// the checkpoint's headers while the IR is built, so a config that does not
// fit its weights is an error naming both.
//
//===----------------------------------------------------------------------===//

#include "compiler/frontends/HuggingFace.h"
#include "compiler/frontends/ImportContext.h"
#include "compiler/frontends/SafeTensors.h"
#include "compiler/frontends/Support.h"
#include "compiler/frontends/WeightFiles.h"
#include "compiler/support/KernelCatalog.h"
#include "dialects/tfm/TfmBuilders.h"
#include "dialects/tfm/TfmDialect.h"
#include "dialects/tfm/TfmOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace attune;
using namespace attune::frontends;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace {

//===----------------------------------------------------------------------===//
// Recipes
//===----------------------------------------------------------------------===//

enum class NormKind { LayerNorm, RmsNorm };
enum class Placement { PreNorm, PostNorm };
enum class Positions { None, Learned, Rope };
/// nn.Linear stores [out, in]; GPT-2's Conv1D stores [in, out], which is
/// tfm.linear's layout.
enum class LinearLayout { OutIn, InOut };
enum class Head { Hidden, Logits };

/// The config.json keys an architecture keeps its sizes under ("" when it
/// has no such key and the size follows from the others).
struct ConfigKeys {
  const char *hidden, *layers, *heads, *kvHeads, *headDim, *ffn, *vocab,
      *maxPositions, *normEps, *activation;
};

/// Checkpoint tensor names without their ".weight"/".bias" suffix; "{i}" is
/// the layer index and "" means the architecture has no such tensor.
struct TensorNames {
  const char *tokens, *positions, *tokenTypes, *embedNorm;
  const char *attnNorm, *q, *k, *v, *qkv, *o, *relativeBias;
  const char *mlpNorm, *gate, *up, *down;
  const char *finalNorm, *lmHead;
};

struct Recipe {
  const char *modelType;
  /// Prefixes the checkpoint's names may carry (BertModel saves none,
  /// BertForMaskedLM "bert."), tried in order; lmHead never has one.
  std::vector<const char *> prefixes;
  ConfigKeys keys;
  TensorNames names;
  NormKind norm;
  Placement placement;
  Positions positions;
  LinearLayout layout;
  bool linearBias; ///< q/k/v/o and MLP linears have biases
  bool causal;
  Head head;
  /// The default of config.json's hidden_act (or activation_function).
  const char *defaultActivation;
};

const Recipe kBert = {
    "bert",
    {"", "bert."},
    {"hidden_size", "num_hidden_layers", "num_attention_heads", "", "",
     "intermediate_size", "vocab_size", "max_position_embeddings",
     "layer_norm_eps", "hidden_act"},
    {"embeddings.word_embeddings", "embeddings.position_embeddings",
     "embeddings.token_type_embeddings", "embeddings.LayerNorm",
     "encoder.layer.{i}.attention.output.LayerNorm",
     "encoder.layer.{i}.attention.self.query",
     "encoder.layer.{i}.attention.self.key",
     "encoder.layer.{i}.attention.self.value", "",
     "encoder.layer.{i}.attention.output.dense", "",
     "encoder.layer.{i}.output.LayerNorm", "",
     "encoder.layer.{i}.intermediate.dense", "encoder.layer.{i}.output.dense",
     "", ""},
    NormKind::LayerNorm,
    Placement::PostNorm,
    Positions::Learned,
    LinearLayout::OutIn,
    /*linearBias=*/true,
    /*causal=*/false,
    Head::Hidden,
    "gelu"};

const Recipe kGpt2 = {
    "gpt2",
    {"", "transformer."},
    {"n_embd", "n_layer", "n_head", "", "", "n_inner", "vocab_size",
     "n_positions", "layer_norm_epsilon", "activation_function"},
    {"wte", "wpe", "", "", "h.{i}.ln_1", "", "", "", "h.{i}.attn.c_attn",
     "h.{i}.attn.c_proj", "", "h.{i}.ln_2", "", "h.{i}.mlp.c_fc",
     "h.{i}.mlp.c_proj", "ln_f", "lm_head"},
    NormKind::LayerNorm,
    Placement::PreNorm,
    Positions::Learned,
    LinearLayout::InOut,
    /*linearBias=*/true,
    /*causal=*/true,
    Head::Logits,
    "gelu_new"};

/// LLaMA and Mistral share names and structure; Mistral adds a window.
const Recipe kLlama = {
    "llama",
    {"model.", ""},
    {"hidden_size", "num_hidden_layers", "num_attention_heads",
     "num_key_value_heads", "head_dim", "intermediate_size", "vocab_size",
     "max_position_embeddings", "rms_norm_eps", "hidden_act"},
    {"embed_tokens", "", "", "", "layers.{i}.input_layernorm",
     "layers.{i}.self_attn.q_proj", "layers.{i}.self_attn.k_proj",
     "layers.{i}.self_attn.v_proj", "", "layers.{i}.self_attn.o_proj", "",
     "layers.{i}.post_attention_layernorm", "layers.{i}.mlp.gate_proj",
     "layers.{i}.mlp.up_proj", "layers.{i}.mlp.down_proj", "norm", "lm_head"},
    NormKind::RmsNorm,
    Placement::PreNorm,
    Positions::Rope,
    LinearLayout::OutIn,
    /*linearBias=*/false,
    /*causal=*/true,
    Head::Logits,
    "silu"};

/// The T5 encoder (T5EncoderModel, or the encoder half of a T5 checkpoint).
/// With feed_forward_proj "relu" the MLP is `wi`/`wo`, with "gated-gelu"
/// `wi_0` (gate) / `wi_1` (up) / `wo`; tensorNames() picks.
const Recipe kT5 = {
    "t5",
    {""},
    {"d_model", "num_layers", "num_heads", "", "d_kv", "d_ff", "vocab_size",
     "", "layer_norm_epsilon", ""},
    {"shared", "", "", "", "encoder.block.{i}.layer.0.layer_norm",
     "encoder.block.{i}.layer.0.SelfAttention.q",
     "encoder.block.{i}.layer.0.SelfAttention.k",
     "encoder.block.{i}.layer.0.SelfAttention.v", "",
     "encoder.block.{i}.layer.0.SelfAttention.o",
     "encoder.block.0.layer.0.SelfAttention.relative_attention_bias",
     "encoder.block.{i}.layer.1.layer_norm",
     "encoder.block.{i}.layer.1.DenseReluDense.wi_0",
     "encoder.block.{i}.layer.1.DenseReluDense.wi_1",
     "encoder.block.{i}.layer.1.DenseReluDense.wo", "encoder.final_layer_norm",
     ""},
    NormKind::RmsNorm,
    Placement::PreNorm,
    Positions::None,
    LinearLayout::OutIn,
    /*linearBias=*/false,
    /*causal=*/false,
    Head::Hidden,
    "relu"};

const Recipe *findRecipe(llvm::StringRef modelType) {
  if (modelType == "bert")
    return &kBert;
  if (modelType == "gpt2")
    return &kGpt2;
  if (modelType == "llama" || modelType == "mistral")
    return &kLlama;
  if (modelType == "t5")
    return &kT5;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// config.json
//===----------------------------------------------------------------------===//

/// Typed reads of config.json. The first problem is kept and later reads
/// return defaults, so a builder reads every field it needs and checks once.
class Config {
public:
  Config(const llvm::json::Object &object, std::string file)
      : object(object), file(std::move(file)) {}

  bool has(llvm::StringRef key) const {
    const llvm::json::Value *v = object.get(key);
    return v && v->kind() != llvm::json::Value::Null;
  }
  /// A required positive integer.
  int64_t positive(llvm::StringRef key) {
    if (!has(key)) {
      fail(key, "missing (this architecture needs it)");
      return 1;
    }
    return positiveOr(key, 1);
  }
  int64_t positiveOr(llvm::StringRef key, int64_t fallback) {
    if (!has(key))
      return fallback;
    std::optional<int64_t> v = object.get(key)->getAsInteger();
    if (!v || *v <= 0 || *v >= (int64_t(1) << 31)) {
      fail(key, "expected a positive integer below 2^31, got " + show(key));
      return fallback;
    }
    return *v;
  }
  double numberOr(llvm::StringRef key, double fallback) {
    if (!has(key))
      return fallback;
    std::optional<double> v = object.get(key)->getAsNumber();
    if (!v || !std::isfinite(*v)) {
      fail(key, "expected a number, got " + show(key));
      return fallback;
    }
    return *v;
  }
  std::string stringOr(llvm::StringRef key, llvm::StringRef fallback) {
    if (!has(key))
      return fallback.str();
    std::optional<llvm::StringRef> v = object.get(key)->getAsString();
    if (!v) {
      fail(key, "expected a string, got " + show(key));
      return fallback.str();
    }
    return v->str();
  }
  bool boolOr(llvm::StringRef key, bool fallback) {
    if (!has(key))
      return fallback;
    std::optional<bool> v = object.get(key)->getAsBoolean();
    if (!v) {
      fail(key, "expected true or false, got " + show(key));
      return fallback;
    }
    return *v;
  }
  const llvm::json::Object *objectOrNull(llvm::StringRef key) {
    if (!has(key))
      return nullptr;
    const llvm::json::Object *v = object.get(key)->getAsObject();
    if (!v)
      fail(key, "expected an object, got " + show(key));
    return v;
  }
  /// Records a problem with `key` found by the caller.
  void fail(llvm::StringRef key, const llvm::Twine &what) {
    if (!error)
      error = file + ": '" + key.str() + "': " + what.str();
  }
  /// Keeps the first problem of a nested object's reader as this one's.
  void absorb(Config &nested) {
    if (!error && nested.error)
      error = nested.error;
  }
  const std::string &fileName() const { return file; }
  llvm::Error takeError() {
    if (!error)
      return llvm::Error::success();
    return makeError(*error);
  }

private:
  std::string show(llvm::StringRef key) const {
    std::string s;
    llvm::raw_string_ostream os(s);
    os << *object.get(key);
    return s;
  }
  const llvm::json::Object &object;
  std::string file;
  std::optional<std::string> error;
};

/// The sizes and choices read from config.json for one recipe.
struct Hyper {
  int64_t hidden = 0, layers = 0, heads = 0, kvHeads = 0, headDim = 0,
          ffn = 0, vocab = 0, maxPositions = 0, typeVocab = 0;
  double eps = 1e-5;
  std::string activation;
  bool gatedMlp = false;
  bool tiedHead = true;
  // RoPE (Positions::Rope): base, and scaling from rope_scaling or
  // rope_parameters.
  codegen::RopeSpec rope;
  // Mistral's sliding window (0: none).
  int64_t slidingWindow = 0;
  // T5's relative attention bias.
  int64_t numBuckets = 32, maxDistance = 128;
  // GPT-2's scale_attn_weights (1/sqrt(d), on by default) and
  // scale_attn_by_inverse_layer_idx (a further 1/(layer + 1)).
  bool scaleScores = true, scaleByLayer = false;
};

/// RoPE's base and frequency scaling. transformers 4 writes `rope_theta`
/// and a `rope_scaling` dictionary; transformers 5 writes both into
/// `rope_parameters`. Either spelling, with `type` or `rope_type`.
void readRope(Config &config, Hyper &h) {
  using Scaling = codegen::RopeSpec::Scaling;
  codegen::RopeSpec &rope = h.rope;
  rope.enabled = true;
  rope.base = config.numberOr("rope_theta", 10000.0);
  rope.rotaryDims = h.headDim;
  const char *key = config.has("rope_parameters") ? "rope_parameters" : "rope_scaling";
  const llvm::json::Object *params = config.objectOrNull(key);
  if (!params)
    return;
  Config sub(*params, config.fileName() + ": '" + key + "'");
  if (sub.has("rope_theta"))
    rope.base = sub.numberOr("rope_theta", rope.base);
  std::string type = sub.stringOr("rope_type", sub.stringOr("type", "default"));
  if (type == "linear") {
    rope.scaling = Scaling::Linear;
    rope.factor = sub.numberOr("factor", 1.0);
  } else if (type == "llama3") {
    rope.scaling = Scaling::Llama3;
    rope.factor = sub.numberOr("factor", 8.0);
    rope.lowFreqFactor = sub.numberOr("low_freq_factor", 1.0);
    rope.highFreqFactor = sub.numberOr("high_freq_factor", 4.0);
    rope.originalMaxPositions = sub.positiveOr("original_max_position_embeddings", 8192);
  } else if (type != "default") {
    // dynamic NTK changes the base with the run-time length; yarn and
    // longrope add attention factors and per-dimension tables.
    config.fail(key, "rope type '" + type +
                         "' is not supported (default, linear, llama3)");
  }
  config.absorb(sub);
  if (std::string problem = codegen::checkRopeScaling(rope); !problem.empty())
    config.fail(key, problem);
}

llvm::Expected<Hyper> readHyper(const Recipe &recipe, Config &config,
                                llvm::StringRef modelType) {
  const ConfigKeys &k = recipe.keys;
  Hyper h;
  h.hidden = config.positive(k.hidden);
  h.layers = config.positive(k.layers);
  h.heads = config.positive(k.heads);
  h.vocab = config.positive(k.vocab);
  h.kvHeads = *k.kvHeads ? config.positiveOr(k.kvHeads, h.heads) : h.heads;
  h.headDim = *k.headDim ? config.positiveOr(k.headDim, h.hidden / h.heads)
                         : h.hidden / h.heads;
  // GPT-2's n_inner is null for the default 4 * n_embd.
  h.ffn = config.positiveOr(k.ffn, 4 * h.hidden);
  if (*k.maxPositions)
    h.maxPositions = recipe.positions == Positions::Learned
                         ? config.positive(k.maxPositions)
                         : config.positiveOr(k.maxPositions, 0);
  h.eps = config.numberOr(k.normEps, recipe.norm == NormKind::RmsNorm ? 1e-6 : 1e-5);
  if (*k.activation)
    h.activation = config.stringOr(k.activation, recipe.defaultActivation);
  h.tiedHead = config.boolOr("tie_word_embeddings",
                             recipe.modelType == llvm::StringRef("gpt2"));

  if (recipe.modelType == llvm::StringRef("bert")) {
    h.typeVocab = config.positiveOr("type_vocab_size", 2);
    std::string pet = config.stringOr("position_embedding_type", "absolute");
    if (pet != "absolute")
      config.fail("position_embedding_type",
                  "'" + pet + "' is not supported (only 'absolute')");
  }
  if (recipe.modelType == llvm::StringRef("gpt2")) {
    h.scaleScores = config.boolOr("scale_attn_weights", true);
    h.scaleByLayer = config.boolOr("scale_attn_by_inverse_layer_idx", false);
  }
  if (recipe.positions == Positions::Rope) {
    readRope(config, h);
    h.gatedMlp = true;
    if (modelType == "mistral")
      h.slidingWindow = config.positiveOr("sliding_window", 0);
    if (config.numberOr("partial_rotary_factor", 1.0) != 1.0)
      config.fail("partial_rotary_factor", "only 1.0 is supported");
    if (config.boolOr("attention_bias", false))
      config.fail("attention_bias", "q/k/v/o biases are not supported");
    if (config.boolOr("mlp_bias", false))
      config.fail("mlp_bias", "MLP biases are not supported");
  }
  if (recipe.modelType == llvm::StringRef("t5")) {
    h.numBuckets = config.positiveOr("relative_attention_num_buckets", 32);
    h.maxDistance = config.positiveOr("relative_attention_max_distance", 128);
    // T5Config: "gated-gelu" is gelu_new on wi_0, times wi_1.
    std::string ff = config.stringOr("feed_forward_proj", "relu");
    bool gated = llvm::StringRef(ff).consume_front("gated-");
    std::string act = gated ? ff.substr(6) : ff;
    h.gatedMlp = gated;
    // T5Config maps only "gated-gelu" to gelu_new; a plain "gelu" is erf.
    h.activation = gated && act == "gelu" ? "gelu_new" : act;
    if (!config.boolOr("is_encoder_decoder", true) &&
        config.boolOr("is_decoder", false))
      config.fail("is_decoder", "only the T5 encoder is supported");
  }
  if (llvm::Error e = config.takeError())
    return std::move(e);
  // The layers are built one by one as IR, so the count bounds the import's
  // time and memory. The deepest published Transformers have about a
  // thousand layers; a count past this bound is a corrupt config, and is
  // refused here rather than found by a checkpoint lookup deep in the build.
  constexpr int64_t kMaxLayers = 4096;
  if (h.layers > kMaxLayers)
    return makeError(llvm::formatv("config.json: '{0}' is {1}; attune imports "
                                   "at most {2} layers",
                                   k.layers, h.layers, kMaxLayers));
  if (h.headDim < 1)
    return makeError(llvm::formatv("config.json: {0} attention heads do not "
                                   "fit in hidden size {1}",
                                   h.heads, h.hidden));
  if (recipe.positions != Positions::Rope && h.headDim * h.heads != h.hidden &&
      recipe.modelType != llvm::StringRef("t5"))
    return makeError(llvm::formatv("config.json: hidden size {0} is not "
                                   "{1} heads of {2}",
                                   h.hidden, h.heads, h.headDim));
  if (h.heads % h.kvHeads != 0)
    return makeError(llvm::formatv("config.json: {0} attention heads do not "
                                   "divide into {1} key/value heads",
                                   h.heads, h.kvHeads));
  if (recipe.positions == Positions::Rope && h.headDim % 2 != 0)
    return makeError(llvm::formatv("config.json: RoPE needs an even head "
                                   "dim, got {0}",
                                   h.headDim));
  return h;
}

//===----------------------------------------------------------------------===//
// The builder
//===----------------------------------------------------------------------===//

std::string layerName(llvm::StringRef pattern, int64_t layer) {
  std::string out = pattern.str();
  size_t at = out.find("{i}");
  if (at != std::string::npos)
    out.replace(at, 3, std::to_string(layer));
  return out;
}

/// Emits one model for a recipe. Values are f32 [batch, seq, ...] tensors;
/// dims the config fixes are static, batch and seq dynamic.
class ModelBuilder {
public:
  ModelBuilder(MLIRContext &context, const Recipe &recipe, const Hyper &hyper,
               const WeightFiles &checkpoint, std::string prefix)
      : b(&context), recipe(recipe), h(hyper), checkpoint(checkpoint),
        prefix(std::move(prefix)), f32(b.getF32Type()) {}

  llvm::Expected<OwningOpRef<ModuleOp>> build(llvm::StringRef functionName,
                                              bool meanPool, bool normalize);

private:
  // Weights --------------------------------------------------------------

  /// A tfm.weight for checkpoint tensor `name` (already prefixed) seen by the
  /// IR with `shape`; with `transposed` the file holds the reverse shape.
  Value weight(const std::string &name, llvm::ArrayRef<int64_t> shape,
               bool transposed = false) {
    if (failed)
      return placeholder(shape);
    std::optional<WeightFileTensor> found = checkpoint.lookup(name);
    llvm::SmallVector<int64_t> fileShape(shape);
    if (transposed)
      std::reverse(fileShape.begin(), fileShape.end());
    if (!found) {
      fail("the checkpoint has no tensor '" + name + "' (expected " +
           shapeString(fileShape) + ")");
      return placeholder(shape);
    }
    const SafeTensorEntry *entry = found->entry;
    std::string file = path::filename(found->file).str();
    if (llvm::ArrayRef<int64_t>(entry->shape) != llvm::ArrayRef<int64_t>(fileShape)) {
      fail("'" + file + "': tensor '" + name + "' has shape " +
           shapeString(entry->shape) + ", but config.json implies " +
           shapeString(fileShape));
      return placeholder(shape);
    }
    if (entry->dtype != ScalarType::F32 && entry->dtype != ScalarType::F16 &&
        entry->dtype != ScalarType::BF16) {
      fail("'" + file + "': tensor '" + name + "' has dtype " +
           safeTensorsDTypeName(entry->dtype) + "; expected F32, F16 or BF16");
      return placeholder(shape);
    }
    auto op = b.create<tfm::WeightOp>(loc(name), RankedTensorType::get(shape, f32),
                                      b.getStringAttr(name),
                                      tfm::InitKindAttr(), FloatAttr(),
                                      transposed ? b.getUnitAttr() : UnitAttr(),
                                      /*part_sizes=*/DenseI64ArrayAttr());
    return op;
  }
  std::string named(llvm::StringRef pattern, int64_t layer) const {
    return prefix + layerName(pattern, layer);
  }
  /// A value standing in after a failure, so building can unwind simply.
  Value placeholder(llvm::ArrayRef<int64_t> shape) {
    failed = true;
    return b.create<arith::ConstantOp>(
        b.getUnknownLoc(),
        DenseElementsAttr::get(RankedTensorType::get({}, f32), 0.0f));
  }
  Location loc(llvm::StringRef what) {
    return NameLoc::get(b.getStringAttr(what));
  }
  void fail(const llvm::Twine &message) {
    if (!error)
      error = message.str();
    failed = true;
  }

  /// Creates `OpTy`, turning a verifier complaint into the builder's error.
  template <typename OpTy, typename... Args>
  Value create(llvm::StringRef where, Args &&...args) {
    if (failed)
      return placeholder({});
    llvm::FailureOr<OpTy> op =
        tfm::createChecked<OpTy>(b, loc(where), std::forward<Args>(args)...);
    if (llvm::failed(op)) {
      // The verifier's message is appended by importHuggingFace.
      fail("building " + where + " failed");
      return placeholder({});
    }
    return op->getResult();
  }

  // Model parts ------------------------------------------------------------

  Value linear(Value x, llvm::StringRef pattern, int64_t layer, int64_t in,
               int64_t out, bool bias) {
    std::string name = named(pattern, layer);
    bool transposed = recipe.layout == LinearLayout::OutIn;
    Value w = weight(name + ".weight", {in, out}, transposed);
    Value bv = bias ? weight(name + ".bias", {out}) : Value();
    return create<tfm::LinearOp>(name, x, w, bv);
  }
  Value norm(Value x, llvm::StringRef pattern, int64_t layer) {
    std::string name = named(pattern, layer);
    Value g = weight(name + ".weight", {h.hidden});
    if (recipe.norm == NormKind::RmsNorm)
      return create<tfm::RmsNormOp>(name, x, g, Value(), llvm::APFloat(h.eps));
    Value beta = weight(name + ".bias", {h.hidden});
    return create<tfm::LayerNormOp>(name, x, g, beta, Value(), llvm::APFloat(h.eps));
  }
  Value activation(Value x, llvm::StringRef where) {
    llvm::StringRef act = h.activation;
    if (act == "gelu")
      return create<tfm::GeluOp>(where, x, tfm::GeluApproxKind::none);
    if (act == "gelu_new" || act == "gelu_pytorch_tanh" || act == "gelu_fast")
      return create<tfm::GeluOp>(where, x, tfm::GeluApproxKind::tanh);
    if (act == "relu")
      return create<tfm::ReluOp>(where, x);
    if (act == "silu" || act == "swish")
      return create<tfm::SiluOp>(where, x);
    fail("config.json: activation '" + act +
         "' is not supported (expected gelu, gelu_new, gelu_pytorch_tanh, "
         "relu or silu)");
    return placeholder({});
  }
  /// [B, S, heads * d] -> [B, heads, S, d].
  Value splitHeads(Value x, int64_t heads, llvm::StringRef where) {
    if (failed)
      return x;
    int64_t dyn = ShapedType::kDynamic;
    Value r = b.create<tfm::ReshapeOp>(
        loc(where), RankedTensorType::get({dyn, dyn, heads, h.headDim}, f32), x);
    return create<tfm::TransposeOp>(where, r, llvm::ArrayRef<int64_t>{0, 2, 1, 3});
  }
  Value mergeHeads(Value x, llvm::StringRef where) {
    if (failed)
      return x;
    int64_t dyn = ShapedType::kDynamic;
    Value t = create<tfm::TransposeOp>(where, x, llvm::ArrayRef<int64_t>{0, 2, 1, 3});
    return b.create<tfm::ReshapeOp>(
        loc(where), RankedTensorType::get({dyn, dyn, h.heads * h.headDim}, f32), t);
  }
  Value scalar(float value) {
    return b.create<arith::ConstantOp>(
        b.getUnknownLoc(),
        DenseElementsAttr::get(RankedTensorType::get({}, f32), value));
  }

  Value embeddings(Value ids, Value typeIds);
  Value attention(Value x, int64_t layer, Value keyPadding, Value relativeTable);
  Value mlp(Value x, int64_t layer);
  Value meanPool(Value hidden, Value mask, bool normalize);

  OpBuilder b;
  const Recipe &recipe;
  const Hyper &h;
  const WeightFiles &checkpoint;
  std::string prefix;
  Type f32;
  bool failed = false;
  std::optional<std::string> error;
};

Value ModelBuilder::embeddings(Value ids, Value typeIds) {
  const TensorNames &n = recipe.names;
  std::string tokens = named(n.tokens, 0);
  Value x = create<tfm::EmbeddingOp>(tokens, weight(tokens + ".weight", {h.vocab, h.hidden}), ids);
  if (*n.positions) {
    std::string positions = named(n.positions, 0);
    Value table = weight(positions + ".weight", {h.maxPositions, h.hidden});
    x = create<tfm::LearnedPositionOp>(positions, x, table);
  }
  if (*n.tokenTypes && typeIds) {
    std::string types = named(n.tokenTypes, 0);
    Value t = create<tfm::EmbeddingOp>(
        types, weight(types + ".weight", {h.typeVocab, h.hidden}), typeIds);
    x = create<tfm::AddOp>(types, x, t);
  }
  if (*n.embedNorm)
    x = norm(x, n.embedNorm, 0);
  return x;
}

Value ModelBuilder::attention(Value x, int64_t layer, Value keyPadding,
                              Value relativeTable) {
  const TensorNames &n = recipe.names;
  int64_t qWidth = h.heads * h.headDim, kvWidth = h.kvHeads * h.headDim;
  Value q, k, v;
  if (*n.qkv) {
    // GPT-2's c_attn: one [D, 3D] projection, q | k | v along the last axis.
    Value qkv = linear(x, n.qkv, layer, h.hidden, qWidth + 2 * kvWidth, recipe.linearBias);
    std::string where = named(n.qkv, layer);
    q = create<tfm::SliceOp>(where, qkv, uint64_t(2), uint64_t(0), uint64_t(qWidth));
    k = create<tfm::SliceOp>(where, qkv, uint64_t(2), uint64_t(qWidth),
                             uint64_t(qWidth + kvWidth));
    v = create<tfm::SliceOp>(where, qkv, uint64_t(2), uint64_t(qWidth + kvWidth),
                             uint64_t(qWidth + 2 * kvWidth));
  } else {
    q = linear(x, n.q, layer, h.hidden, qWidth, recipe.linearBias);
    k = linear(x, n.k, layer, h.hidden, kvWidth, recipe.linearBias);
    v = linear(x, n.v, layer, h.hidden, kvWidth, recipe.linearBias);
  }
  std::string where = named(n.o, layer);
  q = splitHeads(q, h.heads, where);
  k = splitHeads(k, h.kvHeads, where);
  v = splitHeads(v, h.kvHeads, where);

  llvm::SmallVector<Attribute> modifiers;
  llvm::SmallVector<Value> modifierOperands;
  if (relativeTable) {
    modifiers.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("kind", b.getStringAttr("t5")),
         b.getNamedAttr("num_buckets", b.getI64IntegerAttr(h.numBuckets)),
         b.getNamedAttr("max_distance", b.getI64IntegerAttr(h.maxDistance))}));
    modifierOperands.push_back(relativeTable);
  }
  if (h.slidingWindow > 0)
    modifiers.push_back(b.getDictionaryAttr(
        {b.getNamedAttr("kind", b.getStringAttr("sliding_window")),
         b.getNamedAttr("window", b.getI64IntegerAttr(h.slidingWindow))}));
  DictionaryAttr rope;
  if (recipe.positions == Positions::Rope)
    rope = tfm::ropeDictionary(b.getContext(), h.rope);
  // T5 folds 1/sqrt(d) into its initialisation and scales by nothing.
  double scale = relativeTable || !h.scaleScores ? 1.0 : 1.0 / std::sqrt(double(h.headDim));
  if (h.scaleByLayer)
    scale /= double(layer + 1);
  Value context = create<tfm::AttentionOp>(
      where, q, k, v, /*mask=*/Value(), keyPadding, ValueRange(modifierOperands),
      b.getF64FloatAttr(scale), b.getBoolAttr(recipe.causal),
      modifiers.empty() ? ArrayAttr() : b.getArrayAttr(modifiers), rope,
      /*layout=*/tfm::HeadLayoutKindAttr(), /*product_type=*/TypeAttr(), /*softcap=*/FloatAttr());
  Value merged = mergeHeads(context, where);
  return linear(merged, n.o, layer, qWidth, h.hidden, recipe.linearBias);
}

Value ModelBuilder::mlp(Value x, int64_t layer) {
  const TensorNames &n = recipe.names;
  // T5's ungated MLP is wi/wo; its gated one and LLaMA's are gate/up/down.
  std::string up = n.up;
  if (recipe.modelType == llvm::StringRef("t5") && !h.gatedMlp)
    up = "encoder.block.{i}.layer.1.DenseReluDense.wi";
  Value hidden = linear(x, up, layer, h.hidden, h.ffn, recipe.linearBias);
  if (h.gatedMlp) {
    Value gate = linear(x, n.gate, layer, h.hidden, h.ffn, recipe.linearBias);
    hidden = create<tfm::MulOp>(named(n.gate, layer),
                                activation(gate, named(n.gate, layer)), hidden);
  } else {
    hidden = activation(hidden, named(up, layer));
  }
  return linear(hidden, n.down, layer, h.ffn, h.hidden, recipe.linearBias);
}

/// sentence-transformers' Pooling (mean over the tokens the mask keeps:
/// sum / clamp(count, 1e-9)) and Normalize (x / max(|x|, 1e-12)), written
/// with matmuls over the mask: [B, 1, S] x [B, S, D] sums the kept rows.
Value ModelBuilder::meanPool(Value hidden, Value mask, bool normalize) {
  if (failed)
    return hidden;
  int64_t dyn = ShapedType::kDynamic;
  Location l = loc("pooling");
  Value m = b.create<tfm::CastOp>(l, RankedTensorType::get({dyn, dyn}, f32), mask);
  Value row = b.create<tfm::ReshapeOp>(l, RankedTensorType::get({dyn, 1, dyn}, f32), m);
  Value column = b.create<tfm::ReshapeOp>(l, RankedTensorType::get({dyn, dyn, 1}, f32), m);
  Value sum = create<tfm::MatmulOp>("pooling", row, hidden, false, false);
  Value count = create<tfm::MatmulOp>("pooling", row, column, false, false);
  count = create<tfm::MaximumOp>("pooling", count, scalar(1e-9f));
  Value mean = create<tfm::DivOp>("pooling", sum, count);
  Value pooled = b.create<tfm::ReshapeOp>(l, RankedTensorType::get({dyn, h.hidden}, f32), mean);
  if (!normalize)
    return pooled;
  // rms_norm(x, 1/sqrt(D), eps) = x / sqrt(sum(x^2) + D * eps): with
  // D * eps = 1e-24 it is x / max(|x|, 1e-12) wherever |x| >> 1e-12.
  Location nl = loc("normalize");
  Value gamma = b.create<arith::ConstantOp>(
      nl, DenseElementsAttr::get(RankedTensorType::get({h.hidden}, f32),
                                 float(1.0 / std::sqrt(double(h.hidden)))));
  return create<tfm::RmsNormOp>("normalize", pooled, gamma, Value(),
                                llvm::APFloat(1e-24 / double(h.hidden)));
}

llvm::Expected<OwningOpRef<ModuleOp>>
ModelBuilder::build(llvm::StringRef functionName, bool pool, bool normalize) {
  OwningOpRef<ModuleOp> module = ModuleOp::create(b.getUnknownLoc());
  b.setInsertionPointToEnd(module->getBody());

  int64_t dyn = ShapedType::kDynamic;
  auto ids = RankedTensorType::get({dyn, dyn}, b.getI64Type());
  bool encoder = !recipe.causal;
  bool hasTypes = *recipe.names.tokenTypes != 0;
  llvm::SmallVector<Type> inputs = {ids};
  llvm::SmallVector<std::string> inputNames = {"input_ids"};
  if (hasTypes) {
    inputs.push_back(ids);
    inputNames.push_back("token_type_ids");
  }
  if (encoder) {
    inputs.push_back(ids);
    inputNames.push_back("attention_mask");
  }
  Type hiddenType = RankedTensorType::get({dyn, dyn, h.hidden}, f32);
  llvm::SmallVector<Type> outputs;
  llvm::SmallVector<std::string> outputNames;
  if (recipe.head == Head::Logits) {
    outputs.push_back(RankedTensorType::get({dyn, dyn, h.vocab}, f32));
    outputNames.push_back("logits");
  } else {
    outputs.push_back(hiddenType);
    outputNames.push_back("last_hidden_state");
    if (pool) {
      outputs.push_back(RankedTensorType::get({dyn, h.hidden}, f32));
      outputNames.push_back("sentence_embedding");
    }
  }
  auto func = b.create<func::FuncOp>(loc(functionName), functionName,
                                     b.getFunctionType(inputs, outputs));
  auto dimNames = b.getStrArrayAttr({"batch", "seq"});
  for (auto [i, name] : llvm::enumerate(inputNames)) {
    func.setArgAttr(i, "tfm.name", b.getStringAttr(name));
    func.setArgAttr(i, "tfm.dim_names", dimNames);
  }
  for (auto [i, name] : llvm::enumerate(outputNames))
    func.setResultAttr(i, "tfm.name", b.getStringAttr(name));
  Block *body = func.addEntryBlock();
  b.setInsertionPointToStart(body);

  Value idArg = body->getArgument(0);
  Value typeArg = hasTypes ? body->getArgument(1) : Value();
  Value maskArg = encoder ? body->getArgument(inputs.size() - 1) : Value();

  const TensorNames &n = recipe.names;
  Value x = embeddings(idArg, typeArg);
  Value relativeTable;
  if (*n.relativeBias)
    relativeTable = weight(named(n.relativeBias, 0) + ".weight", {h.numBuckets, h.heads});
  for (int64_t layer = 0; layer < h.layers && !failed; ++layer) {
    if (recipe.placement == Placement::PreNorm) {
      Value a = attention(norm(x, n.attnNorm, layer), layer, maskArg, relativeTable);
      x = create<tfm::AddOp>(named(n.o, layer), x, a);
      Value m = mlp(norm(x, n.mlpNorm, layer), layer);
      x = create<tfm::AddOp>(named(n.down, layer), x, m);
    } else {
      Value a = attention(x, layer, maskArg, relativeTable);
      x = norm(create<tfm::AddOp>(named(n.o, layer), a, x), n.attnNorm, layer);
      Value m = mlp(x, layer);
      x = norm(create<tfm::AddOp>(named(n.down, layer), m, x), n.mlpNorm, layer);
    }
  }
  if (*n.finalNorm)
    x = norm(x, n.finalNorm, 0);

  llvm::SmallVector<Value> results;
  if (recipe.head == Head::Logits) {
    // The token embeddings when tied (as transformers ties them, even if
    // the file also holds an lm_head copy), else lm_head.
    std::string head = std::string(n.lmHead) + ".weight";
    std::string tokens = named(n.tokens, 0) + ".weight";
    bool own = !h.tiedHead;
    if (own && !checkpoint.lookup(head))
      fail("the checkpoint has no tensor '" + head +
           "' and config.json's tie_word_embeddings is false");
    Value w = weight(own ? head : tokens, {h.hidden, h.vocab}, /*transposed=*/true);
    results.push_back(create<tfm::LinearOp>(own ? head : tokens, x, w, Value()));
  } else {
    results.push_back(x);
    if (pool)
      results.push_back(meanPool(x, maskArg, normalize));
  }
  if (failed)
    return makeError(error.value_or("the model could not be built"));
  b.create<func::ReturnOp>(loc("return"), results);
  if (mlir::failed(verify(*module)))
    return makeError("the imported model does not verify");
  return module;
}

/// Reads sentence-transformers' modules.json: whether the folder's model is
/// followed by mean pooling and by normalisation.
llvm::Error readSentenceModules(llvm::StringRef dir, bool &pool, bool &normalize) {
  pool = normalize = false;
  llvm::SmallString<256> modules(dir);
  path::append(modules, "modules.json");
  if (!fs::exists(modules))
    return llvm::Error::success();
  auto text = llvm::MemoryBuffer::getFile(modules);
  if (!text)
    return makeError("cannot read '" + modules + "': " + text.getError().message());
  auto json = llvm::json::parse((*text)->getBuffer());
  if (!json)
    return makeError("'" + modules + "' is not valid JSON: " +
                     llvm::toString(json.takeError()));
  const llvm::json::Array *list = json->getAsArray();
  if (!list)
    return makeError("'" + modules + "': expected a list of modules");
  for (const llvm::json::Value &entry : *list) {
    const llvm::json::Object *object = entry.getAsObject();
    std::optional<llvm::StringRef> type = object ? object->getString("type") : std::nullopt;
    if (!type)
      return makeError("'" + modules + "': a module without a 'type'");
    if (*type == "sentence_transformers.models.Transformer")
      continue;
    if (*type == "sentence_transformers.models.Normalize") {
      normalize = true;
      continue;
    }
    if (*type != "sentence_transformers.models.Pooling")
      return makeError("'" + modules + "': module type '" + *type +
                       "' is not supported (Transformer, Pooling, Normalize)");
    std::optional<llvm::StringRef> sub = object->getString("path");
    llvm::SmallString<256> config(dir);
    path::append(config, sub.value_or("1_Pooling"), "config.json");
    auto poolText = llvm::MemoryBuffer::getFile(config);
    if (!poolText)
      return makeError("cannot read '" + config + "': " + poolText.getError().message());
    auto poolJson = llvm::json::parse((*poolText)->getBuffer());
    if (!poolJson || !poolJson->getAsObject())
      return makeError("'" + config + "' is not a JSON object");
    const llvm::json::Object &p = *poolJson->getAsObject();
    for (const auto &[key, value] : p) {
      llvm::StringRef k = key;
      if (!k.starts_with("pooling_mode_") || value.getAsBoolean() != true)
        continue;
      if (k != "pooling_mode_mean_tokens")
        return makeError("'" + config + "': '" + k +
                         "' is not supported (only pooling_mode_mean_tokens)");
      pool = true;
    }
    if (!pool)
      return makeError("'" + config + "': no pooling mode is enabled");
  }
  if (normalize && !pool)
    return makeError("'" + modules + "': Normalize without Pooling is not supported");
  return llvm::Error::success();
}

} // namespace

bool attune::frontends::isHuggingFaceFolder(llvm::StringRef dir) {
  llvm::SmallString<256> config(dir);
  path::append(config, "config.json");
  return fs::is_directory(dir) && fs::exists(config);
}

llvm::Expected<HuggingFaceModel>
attune::frontends::importHuggingFace(llvm::StringRef dir) {
  llvm::SmallString<256> configPath(dir);
  path::append(configPath, "config.json");
  auto text = llvm::MemoryBuffer::getFile(configPath);
  if (!text)
    return makeError("cannot read '" + configPath + "': " + text.getError().message());
  auto json = llvm::json::parse((*text)->getBuffer());
  if (!json)
    return makeError("'" + configPath + "' is not valid JSON: " +
                     llvm::toString(json.takeError()));
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return makeError("'" + configPath + "': expected a JSON object");
  Config config(*object, configPath.str().str());
  std::string modelType = config.stringOr("model_type", "");
  if (llvm::Error e = config.takeError())
    return std::move(e);
  if (modelType.empty())
    return makeError("'" + configPath + "' has no 'model_type'");
  const Recipe *recipe = findRecipe(modelType);
  if (!recipe)
    return makeError("'" + configPath + "': model_type '" + modelType +
                     "' is not supported (bert, gpt2, llama, mistral, t5)");
  llvm::Expected<Hyper> hyper = readHyper(*recipe, config, modelType);
  if (!hyper)
    return hyper.takeError();

  llvm::Expected<WeightFiles> checkpoint = WeightFiles::open(dir);
  if (!checkpoint)
    return checkpoint.takeError();
  // The prefix is the one under which the token embeddings are found.
  std::optional<std::string> prefix;
  for (const char *candidate : recipe->prefixes)
    if (checkpoint->lookup(std::string(candidate) + recipe->names.tokens + ".weight")) {
      prefix = candidate;
      break;
    }
  if (!prefix)
    return makeError("the checkpoint in '" + dir + "' has no '" +
                     recipe->names.tokens + ".weight' (the " + modelType +
                     " token embeddings), with or without a prefix");

  // A config counting more layers than the checkpoint holds is named as
  // such, before any IR is built, when the checkpoint has the first layer
  // (without it, the tensor names are what is wrong, and the builder says
  // which one it missed).
  if (hyper->layers > 1) {
    std::string first = *prefix + layerName(recipe->names.o, 0) + ".weight";
    std::string last =
        *prefix + layerName(recipe->names.o, hyper->layers - 1) + ".weight";
    if (checkpoint->lookup(first) && !checkpoint->lookup(last))
      return makeError(llvm::formatv(
          "config.json: '{0}' is {1}, but the checkpoint has no '{2}' for "
          "layer {3}",
          recipe->keys.layers, hyper->layers, last, hyper->layers - 1));
  }

  bool pool = false, normalize = false;
  if (recipe->head == Head::Hidden && modelType == "bert")
    if (llvm::Error e = readSentenceModules(dir, pool, normalize))
      return std::move(e);

  ImportContext context;
  ModelBuilder builder(context.get(), *recipe, *hyper, *checkpoint, *prefix);
  std::string functionName = modelType;
  std::replace(functionName.begin(), functionName.end(), '-', '_');
  auto module = builder.build(functionName, pool, normalize);
  if (!module)
    return makeError(llvm::toString(module.takeError()) +
                     (context.diagnostics().empty()
                          ? ""
                          : ": " + llvm::StringRef(context.diagnostics()).rtrim()));

  HuggingFaceModel out;
  out.modelType = modelType;
  llvm::raw_string_ostream os(out.ir);
  os << "// Imported by attune-compile from " << dir << " (" << modelType
     << ").\n";
  (*module)->print(os);
  const Hyper &h = *hyper;
  out.summary = llvm::formatv(
      "{0}: {1} layers, hidden {2}, {3} heads of {4} ({5} key/value), ffn {6}, "
      "vocabulary {7}{8}",
      modelType, h.layers, h.hidden, h.heads, h.headDim, h.kvHeads, h.ffn,
      h.vocab, pool ? (normalize ? ", mean pooling + normalize" : ", mean pooling") : "");
  return out;
}
