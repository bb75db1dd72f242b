// RUN: cp %S/Inputs/tuning-attention-pipeline.json %t.json
// RUN: attune-tune -o %t.json --update --isa=avx2 --kernels=attention_f32_d32_causal --budget-seconds=0 --runs=1 | FileCheck %s --check-prefix=TUNE
// RUN: FileCheck %s --check-prefix=DB --input-file=%t.json
// RUN: attune-compile %s --emit=llvm -o /dev/null --tuning=%t.json --verbose 2>&1 | FileCheck %s --check-prefix=READ

/// An attention's tuning entry serves two kernels: on the avx2 and avx512
/// levels a plain f32 attention runs the extern stage of
/// runtime/model/attention_f32.c (one parameter, flash_key_block), one with
/// an additive mask the Halide pipeline (six). Tuning the extern replaces
/// the entry but keeps the pipeline's parameters and says so.

// TUNE: avx2 attention_f32_d32_causal {flash_key_block=128} {{[0-9.]+}} GFLOP/s, formula {{[0-9.]+}} (1.00x); 1/{{[0-9]+}} timed
// TUNE: attune-tune: wrote {{.*}}.json (1 entries)

// DB: "kernel": "attention_f32_d32_causal"
// DB: "kept_measured": {
// DB-NEXT: "gflops": {{77.1|77.09+[0-9]*}},
// DB-NEXT: "machine": "AMD EPYC"
// DB: "kept_params": [
// DB-NEXT: "key_block",
// DB-NEXT: "key_unroll",
// DB-NEXT: "query_tile",
// DB-NEXT: "score_vectors",
// DB-NEXT: "value_cols",
// DB-NEXT: "value_rows"
// DB: "params": {
// DB-NEXT: "flash_key_block": 128,
// DB-NEXT: "key_block": 64,
// DB-NEXT: "key_unroll": 2,

/// Both attentions compile with the entry: the masked one (its own key
/// has no entry) borrows the unmasked key's.
// READ-DAG: tuning attune_attention_f32_d32{{[^ ]*}}_causal attention_f32_d32_causal: avx2 {flash_key_block=128, key_block=64, key_unroll=2, query_tile=32, score_vectors=4, value_cols=32, value_rows=2}
// READ-DAG: tuning attune_attention_f32_d32{{[^ ]*}}_causal_mask attention_f32_d32_causal_mask: avx2 {flash_key_block=128, key_block=64, {{.*}}} from attention_f32_d32_causal

func.func @model(%q: tensor<1x2x?x32xf32>, %k: tensor<1x2x?x32xf32>, %v: tensor<1x2x?x32xf32>,
                 %m: tensor<1x1x?x?xf32>) -> (tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>) {
  %a = tfm.attention %q, %k, %v {scale = 0.17677669529 : f64, causal = true}
      : tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32> -> tensor<1x2x?x32xf32>
  %b = tfm.attention %q, %k, %v mask(%m : tensor<1x1x?x?xf32>) {scale = 0.17677669529 : f64, causal = true}
      : tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32> -> tensor<1x2x?x32xf32>
  return %a, %b : tensor<1x2x?x32xf32>, tensor<1x2x?x32xf32>
}
