// Hugging Face checkpoint folders imported as tfm IR (attune-compile DIR
// --emit=input): one tfm.attention per layer carrying the architecture's
// semantics, HF's tensor names on tfm.weight, {transpose} where the file holds
// nn.Linear's [out, in]. The folders are tests/models (see its README).

// RUN: attune-compile %attune_src_root/tests/models/bert-tiny --emit=input | FileCheck %s --check-prefix=BERT
// BERT: func.func @bert(%{{.*}}: tensor<?x?xi64> {{{.*}}tfm.name = "input_ids"}, %{{.*}}: tensor<?x?xi64> {{{.*}}tfm.name = "token_type_ids"}, %[[MASK:.*]]: tensor<?x?xi64> {{{.*}}tfm.name = "attention_mask"})
// BERT-SAME: -> (tensor<?x?x64xf32> {tfm.name = "last_hidden_state"}, tensor<?x64xf32> {tfm.name = "sentence_embedding"})
// BERT: tfm.learned_position
// BERT: tfm.weight "encoder.layer.0.attention.self.query.weight" {transpose} : tensor<64x64xf32>
// BERT: tfm.attention %{{.*}}, %{{.*}}, %{{.*}} key_padding_mask(%[[MASK]] : tensor<?x?xi64>) {scale = 2.500000e-01 : f64}
// BERT: tfm.weight "encoder.layer.1.output.LayerNorm.bias"
// BERT-NOT: tfm.attention
// BERT: tfm.matmul
// BERT: tfm.rms_norm

// RUN: attune-compile %attune_src_root/tests/models/gpt2-tiny --emit=input | FileCheck %s --check-prefix=GPT2
// GPT2: tfm.weight "h.0.attn.c_attn.weight" : tensor<64x192xf32>
// GPT2-COUNT-3: tfm.slice
// GPT2: tfm.attention {{.*}} {causal = true, scale = 2.500000e-01 : f64}
// GPT2: tfm.gelu {{.*}} {approximate = #tfm.gelu_approx<tanh>}
// GPT2: %[[WTE:.*]] = tfm.weight "wte.weight" {transpose} : tensor<64x99xf32>
// GPT2: tfm.linear %{{.*}}, %[[WTE]] : {{.*}} -> tensor<?x?x99xf32>

// RUN: attune-compile %attune_src_root/tests/models/llama-tiny --emit=input | FileCheck %s --check-prefix=LLAMA
// LLAMA: tfm.weight "model.layers.0.self_attn.k_proj.weight" {transpose} : tensor<64x32xf32>
// LLAMA: tfm.attention {{.*}} {causal = true, rope = {base = 1.000000e+04 : f64, rotary_dims = 16 : i64}, scale = 2.500000e-01 : f64} : tensor<?x4x?x16xf32>, tensor<?x2x?x16xf32>, tensor<?x2x?x16xf32> -> tensor<?x4x?x16xf32>
// LLAMA: tfm.silu
// LLAMA: tfm.weight "lm_head.weight" {transpose} : tensor<64x99xf32>

// RUN: attune-compile %attune_src_root/tests/models/mistral-tiny --emit=input | FileCheck %s --check-prefix=MISTRAL
// MISTRAL: modifiers = [{kind = "sliding_window", window = 4 : i64}]
// MISTRAL: tfm.weight "model.embed_tokens.weight" {transpose} : tensor<64x99xf32>

// RUN: attune-compile %attune_src_root/tests/models/llama3-scaled-tiny --emit=input | FileCheck %s --check-prefix=LLAMA3
// LLAMA3: rope = {base = 5.000000e+05 : f64, rotary_dims = 16 : i64, scaling = {factor = 8.000000e+00 : f64, high_freq_factor = 4.000000e+00 : f64, kind = "llama3", low_freq_factor = 1.000000e+00 : f64, original_max_positions = 64 : i64}}

// RUN: attune-compile %attune_src_root/tests/models/t5-encoder-tiny --emit=input | FileCheck %s --check-prefix=T5
// T5: %[[REL:.*]] = tfm.weight "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight" : tensor<8x4xf32>
// T5: tfm.attention {{.*}} modifier_operands(%[[REL]] : tensor<8x4xf32>) {modifiers = [{kind = "t5", max_distance = 16 : i64, num_buckets = 8 : i64}], scale = 1.000000e+00 : f64}
// T5: tfm.weight "encoder.block.0.layer.1.DenseReluDense.wi_0.weight" {transpose}
// T5: tfm.gelu {{.*}}tanh
// T5: tfm.attention {{.*}} modifier_operands(%[[REL]] : tensor<8x4xf32>)
// T5: tfm.weight "encoder.final_layer_norm.weight"

// Bad folders: each error names the file and the field or tensor.
// RUN: rm -rf %t && mkdir -p %t/shape %t/type %t/noweights %t/rope %t/json %t/missing %t/layers %t/deep %t/heads %t/ungated
// RUN: cp %attune_src_root/tests/models/bert-tiny/model.safetensors %t/shape/
// RUN: echo '{"model_type": "bert", "hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 99, "max_position_embeddings": 64}' > %t/shape/config.json
// RUN: not attune-compile %t/shape --emit=input 2>&1 | FileCheck %s --check-prefix=SHAPE
// SHAPE: attune-compile: error: cannot import '{{.*}}shape': 'model.safetensors': tensor 'embeddings.word_embeddings.weight' has shape [99, 64], but config.json implies [99, 32]
// RUN: echo '{"model_type": "gptj"}' > %t/type/config.json
// RUN: not attune-compile %t/type --emit=input 2>&1 | FileCheck %s --check-prefix=TYPE
// TYPE: error: cannot import '{{.*}}type': '{{.*}}config.json': model_type 'gptj' is not supported (bert, gpt2, llama, mistral, t5)
// RUN: cp %attune_src_root/tests/models/llama-tiny/config.json %t/noweights/
// RUN: not attune-compile %t/noweights --emit=input 2>&1 | FileCheck %s --check-prefix=NOWEIGHTS
// NOWEIGHTS: error: cannot import '{{.*}}noweights': weights folder '{{.*}}noweights' holds neither 'model.safetensors' nor 'model.safetensors.index.json'
// RUN: cp %attune_src_root/tests/models/llama-tiny/model.safetensors %t/rope/
// RUN: echo '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 99, "rope_scaling": {"rope_type": "dynamic", "factor": 2.0}}' > %t/rope/config.json
// RUN: not attune-compile %t/rope --emit=input 2>&1 | FileCheck %s --check-prefix=ROPE
// ROPE: error: cannot import '{{.*}}rope': {{.*}}config.json: 'rope_scaling': rope type 'dynamic' is not supported (default, linear, llama3)
// RUN: echo '{"model_type": "bert", "hidden_size": "64"' > %t/json/config.json
// RUN: not attune-compile %t/json --emit=input 2>&1 | FileCheck %s --check-prefix=JSON
// JSON: error: cannot import '{{.*}}json': '{{.*}}config.json' is not valid JSON
// RUN: cp %attune_src_root/tests/models/bert-tiny/model.safetensors %t/missing/
// RUN: echo '{"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 3, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 99, "max_position_embeddings": 64}' > %t/missing/config.json
// RUN: not attune-compile %t/missing --emit=input 2>&1 | FileCheck %s --check-prefix=MISSING
// MISSING: error: cannot import '{{.*}}missing': config.json: 'num_hidden_layers' is 3, but the checkpoint has no 'encoder.layer.2.attention.output.dense.weight' for layer 2

/// Layer counts and head counts found by the hf_config fuzz target
/// (tests/fuzz): 2^31 is past the integer bound, a huge count is refused
/// before any IR is built, and heads that leave no head dim are named.
// RUN: cp %attune_src_root/tests/models/bert-tiny/model.safetensors %t/layers/
// RUN: echo '{"model_type": "bert", "hidden_size": 64, "num_hidden_layers": 2147483648, "num_attention_heads": 4, "intermediate_size": 128, "vocab_size": 99, "max_position_embeddings": 64}' > %t/layers/config.json
// RUN: not attune-compile %t/layers --emit=input 2>&1 | FileCheck %s --check-prefix=LAYERS
// LAYERS: error: cannot import '{{.*}}layers': {{.*}}config.json: 'num_hidden_layers': expected a positive integer below 2^31, got 2147483648
// RUN: cp %attune_src_root/tests/models/llama-tiny/model.safetensors %t/deep/
// RUN: echo '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2147483647, "num_attention_heads": 4, "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 99}' > %t/deep/config.json
// RUN: not attune-compile %t/deep --emit=input 2>&1 | FileCheck %s --check-prefix=DEEP
// DEEP: error: cannot import '{{.*}}deep': config.json: 'num_hidden_layers' is 2147483647; attune imports at most 4096 layers
// RUN: cp %attune_src_root/tests/models/llama-tiny/model.safetensors %t/heads/
// RUN: echo '{"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 2, "num_attention_heads": 128, "num_key_value_heads": 2, "intermediate_size": 96, "vocab_size": 99}' > %t/heads/config.json
// RUN: not attune-compile %t/heads --emit=input 2>&1 | FileCheck %s --check-prefix=HEADS
// HEADS: error: cannot import '{{.*}}heads': config.json: 128 attention heads do not fit in hidden size 64
/// A tensor the architecture needs and the checkpoint lacks is named.
// RUN: cp %attune_src_root/tests/models/t5-encoder-tiny/model.safetensors %t/ungated/
// RUN: sed 's/gated-gelu/relu/' %attune_src_root/tests/models/t5-encoder-tiny/config.json > %t/ungated/config.json
// RUN: not attune-compile %t/ungated --emit=input 2>&1 | FileCheck %s --check-prefix=UNGATED
// UNGATED: error: cannot import '{{.*}}ungated': the checkpoint has no tensor 'encoder.block.0.layer.1.DenseReluDense.wi.weight' (expected [96, 64])
