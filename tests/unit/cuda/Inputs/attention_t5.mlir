// One encoder attention with T5's bucketed bias (bidirectional, 32 buckets,
// max_distance 128, its [32, 4] table a weight), GQA (4 query heads on 2
// key/value heads), an additive mask broadcast over heads and key padding
// as Hugging Face passes it (attention_mask, i64).
// cuda_attention_fake_test builds it with --target=cuda --precision=bf16
// (one fused attention kernel reading the table by bucket) and for the
// CPU, and runs both.
module {
  func.func @attention_t5(
      %q: tensor<2x4x?x32xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
      %k: tensor<2x2x?x32xf32> {tfm.name = "k", tfm.dim_names = ["b", "hkv", "keys", "d"]},
      %v: tensor<2x2x?x32xf32> {tfm.name = "v", tfm.dim_names = ["b", "hkv", "keys", "d"]},
      %mask: tensor<2x1x?x?xf32> {tfm.name = "mask", tfm.dim_names = ["b", "one", "seq", "keys"]},
      %pad: tensor<2x?xi64> {tfm.name = "attention_mask", tfm.dim_names = ["b", "keys"]})
      -> (tensor<2x4x?x32xf32> {tfm.name = "out"}) {
    %table = tfm.weight "relative_attention_bias" {std = 1.0 : f64} : tensor<32x4xf32>
    %o = tfm.attention %q, %k, %v mask(%mask : tensor<2x1x?x?xf32>)
        key_padding_mask(%pad : tensor<2x?xi64>)
        modifier_operands(%table : tensor<32x4xf32>)
        {scale = 0.17677669529663687 : f64,
         modifiers = [{kind = "t5", num_buckets = 32 : i64, max_distance = 128 : i64}]}
        : tensor<2x4x?x32xf32>, tensor<2x2x?x32xf32>, tensor<2x2x?x32xf32> -> tensor<2x4x?x32xf32>
    return %o : tensor<2x4x?x32xf32>
  }
}
