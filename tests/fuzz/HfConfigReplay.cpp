//===- HfConfigReplay.cpp - the config.json target without libFuzzer -----===//
//
// Replay.h's driver with mutants of config.json files. Text mutations alone
// mostly break the JSON, and the importer's interesting part starts after
// it parses, so four mutants in five are edited as JSON instead: one to
// three of the keys the importer reads set to an awkward value (zero,
// negative, 2^31 and other integers at the edges, huge and fractional
// numbers, the wrong type, another architecture's strings), removed, or
// copied from another seed, RoPE scaling dictionaries made up, and the
// object printed again; a quarter of those then get a text mutation too.
// The fifth gets one to four of Replay's text mutations.
//
// Usage: hf_config_fuzz_replay [--mutations=N] [--seed=S] PATH...
//
//===----------------------------------------------------------------------===//

#include "tests/fuzz/Replay.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <iterator>
#include <string>
#include <vector>

using attune::fuzz::Random;

namespace attune::fuzz {
extern bool lastConfigImported; // HfConfigFuzzer.cpp
} // namespace attune::fuzz

namespace {

/// Every config.json key HuggingFace.cpp reads, for any architecture.
const char *const kKeys[] = {"model_type",
                             "hidden_size",
                             "num_hidden_layers",
                             "num_attention_heads",
                             "num_key_value_heads",
                             "head_dim",
                             "intermediate_size",
                             "vocab_size",
                             "max_position_embeddings",
                             "layer_norm_eps",
                             "hidden_act",
                             "n_embd",
                             "n_layer",
                             "n_head",
                             "n_inner",
                             "n_positions",
                             "layer_norm_epsilon",
                             "activation_function",
                             "rms_norm_eps",
                             "d_model",
                             "num_layers",
                             "num_heads",
                             "d_kv",
                             "d_ff",
                             "tie_word_embeddings",
                             "type_vocab_size",
                             "position_embedding_type",
                             "rope_theta",
                             "rope_scaling",
                             "rope_parameters",
                             "sliding_window",
                             "partial_rotary_factor",
                             "attention_bias",
                             "mlp_bias",
                             "relative_attention_num_buckets",
                             "relative_attention_max_distance",
                             "feed_forward_proj",
                             "is_encoder_decoder",
                             "is_decoder"};

/// Strings the importer tells apart, and a few it does not know.
const char *const kStrings[] = {
    "bert",         "gpt2",       "llama",  "mistral",  "t5",
    "bart",         "",           "gelu",   "gelu_new", "gelu_pytorch_tanh",
    "gelu_fast",    "relu",       "silu",   "swish",    "tanh",
    "gated-gelu",   "gated-silu", "gated-", "gated",    "absolute",
    "relative_key", "default",    "linear", "llama3",   "dynamic",
    "yarn"};

llvm::json::Value awkwardValue(Random &rng) {
  switch (rng.below(6)) {
  case 0: { // integers at the edges of what the importer accepts
    static const int64_t kInts[] = {0,
                                    -1,
                                    1,
                                    2,
                                    3,
                                    7,
                                    (int64_t(1) << 31) - 1,
                                    int64_t(1) << 31,
                                    (int64_t(1) << 31) + 1,
                                    int64_t(1) << 32,
                                    int64_t(1) << 62,
                                    INT64_MAX,
                                    INT64_MIN};
    return kInts[rng.below(std::size(kInts))];
  }
  case 1: // small integers: which divide which is what matters
    return int64_t(rng.below(130));
  case 2: { // numbers that are not integers, or too big for int64
    static const double kDoubles[] = {0.5,  1.5, -0.0,  1e-300,  1e308, -1e308,
                                      1e19, 4.0, 1e-12, 10000.0, -2.5};
    if (rng.oneIn(4))
      return uint64_t(UINT64_MAX - rng.below(4));
    return kDoubles[rng.below(std::size(kDoubles))];
  }
  case 3:
    return kStrings[rng.below(std::size(kStrings))];
  case 4: { // the wrong kind of JSON value
    switch (rng.below(5)) {
    case 0:
      return nullptr;
    case 1:
      return true;
    case 2:
      return false;
    case 3:
      return llvm::json::Array{int64_t(1), "x"};
    default:
      return llvm::json::Object{};
    }
  }
  default: { // a RoPE scaling dictionary, made up
    llvm::json::Object rope;
    static const char *const kRopeKeys[] = {
        "rope_type",        "type",
        "factor",           "low_freq_factor",
        "high_freq_factor", "original_max_position_embeddings",
        "rope_theta"};
    for (size_t i = 0, n = rng.below(6); i < n; ++i) {
      const char *key = kRopeKeys[rng.below(std::size(kRopeKeys))];
      if (rng.oneIn(2) && llvm::StringRef(key).contains("type"))
        rope[key] = rng.oneIn(2) ? "llama3" : "linear";
      else
        rope[key] = rng.oneIn(3) ? llvm::json::Value(int64_t(rng.below(20)))
                                 : awkwardValue(rng);
    }
    return std::move(rope);
  }
  }
}

/// One to three edits of the seed's keys; the seed must be a JSON object.
std::string editObject(llvm::json::Object object, Random &rng,
                       const std::vector<llvm::json::Value> &parsed) {
  for (size_t i = 0, n = 1 + rng.below(3); i < n; ++i) {
    const char *key = kKeys[rng.below(std::size(kKeys))];
    switch (rng.below(4)) {
    case 0:
    case 1:
      object[key] = awkwardValue(rng);
      break;
    case 2:
      object.erase(key);
      break;
    case 3: { // another seed's value for the key: architectures mixed
      const llvm::json::Object *other =
          parsed[rng.below(parsed.size())].getAsObject();
      if (const llvm::json::Value *v = other ? other->get(key) : nullptr)
        object[key] = *v;
      break;
    }
    }
  }
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::json::Value(std::move(object));
  return text;
}

} // namespace

int main(int argc, char **argv) {
  std::vector<std::string> seeds;
  std::vector<llvm::json::Value> parsed;
  attune::fuzz::ReplayTarget target;
  target.name = "hf_config";
  target.acceptedWhat = "imported";
  target.prepare = [&](const std::vector<std::string> &files) {
    seeds = files;
    for (const std::string &file : files) {
      llvm::Expected<llvm::json::Value> json = llvm::json::parse(file);
      if (json) {
        parsed.push_back(std::move(*json));
      } else {
        llvm::consumeError(json.takeError());
        parsed.push_back(nullptr);
      }
    }
  };
  target.mutate = [&](Random &rng) {
    size_t pick = rng.below(seeds.size());
    const llvm::json::Object *object = parsed[pick].getAsObject();
    std::string text;
    if (object && !rng.oneIn(5)) {
      text = editObject(*object, rng, parsed);
      if (rng.oneIn(4))
        attune::fuzz::mutateJsonText(text, rng, seeds);
    } else {
      text = seeds[pick];
      for (size_t i = 0, n = 1 + rng.below(4); i < n; ++i)
        attune::fuzz::mutateJsonText(text, rng, seeds);
    }
    return text;
  };
  target.accepted = [](const std::string &) {
    return attune::fuzz::lastConfigImported;
  };
  return attune::fuzz::replayMain(argc, argv, target);
}
