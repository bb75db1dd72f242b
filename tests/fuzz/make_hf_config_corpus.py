#!/usr/bin/env python3
"""Writes the seed corpus of the Hugging Face config fuzz target.

    python3 tests/fuzz/make_hf_config_corpus.py tests/fuzz/corpus/hf_config

Valid seeds are tests/models/*/config.json, copied byte for byte, plus two
spellings the importer also accepts (transformers 5's rope_parameters, a
Mistral without a window). Invalid seeds each break one rule the importer
checks, starting from one of those configs, so that a mutant is often a
small step from either side of a check. The target picks the checkpoint by
model_type (HfConfigFuzzer.cpp), so every seed is imported against the tiny
checkpoint of its architecture. The output is fixed by this script and the
model configs: running it again must leave `git status` clean.
"""

import json
import os
import sys

MODELS = ["bert-tiny", "gpt2-tiny", "llama-tiny", "llama3-scaled-tiny",
          "mistral-tiny", "t5-encoder-tiny"]


def main(out):
    models = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                          os.pardir, "models")
    os.makedirs(out, exist_ok=True)
    configs = {}
    for model in MODELS:
        with open(os.path.join(models, model, "config.json"), "rb") as f:
            text = f.read()
        with open(os.path.join(out, "valid_%s.json" % model), "wb") as f:
            f.write(text)
        configs[model] = json.loads(text)

    def variant(name, model, **changes):
        """`model`'s config with `changes` (None deletes a key)."""
        config = dict(configs[model])
        for key, value in changes.items():
            if value is None:
                config.pop(key, None)
            else:
                config[key] = value
        write(name, json.dumps(config, indent=2, sort_keys=True) + "\n")

    def write(name, text):
        with open(os.path.join(out, name + ".json"), "w") as f:
            f.write(text)

    llama3 = configs["llama3-scaled-tiny"]
    variant("valid_llama3_rope_parameters", "llama3-scaled-tiny",
            rope_scaling=None,
            rope_parameters=dict(llama3["rope_scaling"],
                                 rope_theta=llama3["rope_theta"]))
    variant("valid_mistral_no_window", "mistral-tiny", sliding_window=None)

    # Sizes: out of range, the wrong type, not fitting together.
    variant("invalid_layers_2_31", "bert-tiny", num_hidden_layers=2**31)
    variant("invalid_layers_too_many", "llama-tiny", num_hidden_layers=100000)
    variant("invalid_layers_zero", "gpt2-tiny", n_layer=0)
    variant("invalid_hidden_negative", "gpt2-tiny", n_embd=-64)
    variant("invalid_vocab_2_64", "t5-encoder-tiny", vocab_size=2**64)
    variant("invalid_heads_float", "t5-encoder-tiny", num_heads=4.5)
    variant("invalid_heads_string", "gpt2-tiny", n_head="4")
    variant("invalid_hidden_not_heads", "bert-tiny", num_attention_heads=5)
    variant("invalid_kv_heads_not_dividing", "llama-tiny",
            num_key_value_heads=3)
    variant("invalid_head_dim_odd", "mistral-tiny", head_dim=15)
    variant("invalid_heads_above_hidden", "llama-tiny", head_dim=None,
            num_attention_heads=128)
    variant("invalid_ffn_mismatch", "bert-tiny", intermediate_size=129)
    variant("invalid_eps_string", "bert-tiny", layer_norm_eps="1e-12")
    # Choices the importer does not support.
    variant("invalid_model_type", "bert-tiny", model_type="bart")
    variant("invalid_no_model_type", "gpt2-tiny", model_type=None)
    variant("invalid_activation", "bert-tiny", hidden_act="tanh")
    variant("invalid_rope_type", "llama-tiny",
            rope_scaling={"rope_type": "yarn", "factor": 4.0})
    variant("invalid_rope_factor", "llama3-scaled-tiny",
            rope_scaling=dict(llama3["rope_scaling"], factor=0.5))
    variant("invalid_t5_ungated", "t5-encoder-tiny", feed_forward_proj="relu")
    variant("invalid_t5_decoder", "t5-encoder-tiny", is_encoder_decoder=False,
            is_decoder=True)
    variant("invalid_position_type", "bert-tiny",
            position_embedding_type="relative_key")
    variant("invalid_untied_head", "gpt2-tiny", tie_word_embeddings=False)
    # Not a config at all.
    write("invalid_not_object", "[1, 2, 3]\n")
    write("invalid_truncated", '{"model_type": "bert", "hidden_size": 6')


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: make_hf_config_corpus.py OUT_DIR")
    main(sys.argv[1])
