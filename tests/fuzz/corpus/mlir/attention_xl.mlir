module {
  func.func @attention_xl(%q: tensor<1x12x?x64xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
                          %k: tensor<1x12x?x64xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "seq", "d"]},
                          %v: tensor<1x12x?x64xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "seq", "d"]},
                          %u: tensor<12x64xf32> {tfm.name = "r_w_bias"},
                          %w: tensor<12x64xf32> {tfm.name = "r_r_bias"},
                          %r: tensor<4096x12x64xf32> {tfm.name = "r_head_k"})
      -> (tensor<1x12x?x64xf32> {tfm.name = "out"}) {
    %o = tfm.attention %q, %k, %v modifier_operands(%u, %w, %r : tensor<12x64xf32>, tensor<12x64xf32>, tensor<4096x12x64xf32>)
        {scale = 0.125 : f64, causal = true, modifiers = [{kind = "xl", max_distance = 4095 : i64}]}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    return %o : tensor<1x12x?x64xf32>
  }
}
