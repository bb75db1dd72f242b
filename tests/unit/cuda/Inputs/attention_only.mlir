// One attention with what the GPU attention kernel compiles in: GQA (4
// query heads on 2 key/value heads), causal with the queries at the end of
// the keys, an additive mask broadcast over heads, key padding, RoPE on
// half of the 32 dimensions, ALiBi and a window of 100 keys.
// cuda_attention_fake_test builds it with --target=cuda --precision=bf16
// (one fused attention kernel) and for the CPU, and runs both.
module {
  func.func @attention_only(
      %q: tensor<2x4x?x32xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
      %k: tensor<2x2x?x32xf32> {tfm.name = "k", tfm.dim_names = ["b", "hkv", "keys", "d"]},
      %v: tensor<2x2x?x32xf32> {tfm.name = "v", tfm.dim_names = ["b", "hkv", "keys", "d"]},
      %mask: tensor<2x1x?x?xf32> {tfm.name = "mask", tfm.dim_names = ["b", "one", "seq", "keys"]},
      %pad: tensor<2x?xi1> {tfm.name = "attention_mask", tfm.dim_names = ["b", "keys"]})
      -> (tensor<2x4x?x32xf32> {tfm.name = "out"}) {
    %o = tfm.attention %q, %k, %v mask(%mask : tensor<2x1x?x?xf32>)
        key_padding_mask(%pad : tensor<2x?xi1>)
        {scale = 0.17677669529663687 : f64, causal = true,
         modifiers = [{kind = "alibi"}, {kind = "sliding_window", window = 100 : i64}],
         rope = {base = 10000.0 : f64, rotary_dims = 16 : i64, position_offset = 3 : i64}}
        : tensor<2x4x?x32xf32>, tensor<2x2x?x32xf32>, tensor<2x2x?x32xf32> -> tensor<2x4x?x32xf32>
    return %o : tensor<2x4x?x32xf32>
  }
}
