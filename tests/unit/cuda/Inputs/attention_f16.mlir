// attention_only.mlir in f16: q, k, v, the mask and the result f16, which
// the GPU kernel multiplies in f16 (no --precision needed).
// cuda_attention_fake_test builds it with --target=cuda (one fused
// attention kernel, f16 products) and for the CPU, and runs both.
module {
  func.func @attention_f16(
      %q: tensor<2x4x?x32xf16> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
      %k: tensor<2x2x?x32xf16> {tfm.name = "k", tfm.dim_names = ["b", "hkv", "keys", "d"]},
      %v: tensor<2x2x?x32xf16> {tfm.name = "v", tfm.dim_names = ["b", "hkv", "keys", "d"]},
      %mask: tensor<2x1x?x?xf16> {tfm.name = "mask", tfm.dim_names = ["b", "one", "seq", "keys"]},
      %pad: tensor<2x?xi1> {tfm.name = "attention_mask", tfm.dim_names = ["b", "keys"]})
      -> (tensor<2x4x?x32xf16> {tfm.name = "out"}) {
    %o = tfm.attention %q, %k, %v mask(%mask : tensor<2x1x?x?xf16>)
        key_padding_mask(%pad : tensor<2x?xi1>)
        {scale = 0.17677669529663687 : f64, causal = true,
         modifiers = [{kind = "alibi"}, {kind = "sliding_window", window = 100 : i64}],
         rope = {base = 10000.0 : f64, rotary_dims = 16 : i64, position_offset = 3 : i64}}
        : tensor<2x4x?x32xf16>, tensor<2x2x?x32xf16>, tensor<2x2x?x32xf16> -> tensor<2x4x?x32xf16>
    return %o : tensor<2x4x?x32xf16>
  }
}
