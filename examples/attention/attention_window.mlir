// Causal self-attention with a sliding window (Mistral 7B, Jiang et al.
// 2023): each query sees its own position and the 511 keys before it. B=1,
// H=12, D=64, dynamic sequence. attention_benchmark compiles it fused and
// with --no-fuse-attention.
module {
  func.func @attention_window(%q: tensor<1x12x?x64xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
                              %k: tensor<1x12x?x64xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "seq", "d"]},
                              %v: tensor<1x12x?x64xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "seq", "d"]})
      -> (tensor<1x12x?x64xf32> {tfm.name = "out"}) {
    %o = tfm.attention %q, %k, %v {scale = 0.125 : f64, causal = true, modifiers = [{kind = "sliding_window", window = 512 : i64}]}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    return %o : tensor<1x12x?x64xf32>
  }
}
