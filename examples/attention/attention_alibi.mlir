// Causal multi-head self-attention with ALiBi (Press et al. 2022; BLOOM,
// MPT): no position embedding, head h adds m_h * (j - i) to its scores. B=1,
// H=12 (not a power of two: the second slope sequence), D=64, dynamic
// sequence. attention_benchmark compiles it fused (the bias evaluated in the
// kernel from indices) and with --no-fuse-attention (tfm.score_bias adds it
// to the stored S x S scores).
module {
  func.func @attention_alibi(%q: tensor<1x12x?x64xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
                             %k: tensor<1x12x?x64xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "seq", "d"]},
                             %v: tensor<1x12x?x64xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "seq", "d"]})
      -> (tensor<1x12x?x64xf32> {tfm.name = "out"}) {
    %o = tfm.attention %q, %k, %v {scale = 0.125 : f64, causal = true, modifiers = [{kind = "alibi"}]}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    return %o : tensor<1x12x?x64xf32>
  }
}
