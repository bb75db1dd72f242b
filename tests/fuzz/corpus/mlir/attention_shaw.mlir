module {
  func.func @attention_shaw(%q: tensor<1x12x?x64xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
                            %k: tensor<1x12x?x64xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "seq", "d"]},
                            %v: tensor<1x12x?x64xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "seq", "d"]},
                            %rk: tensor<33x64xf32> {tfm.name = "relative_keys"},
                            %rv: tensor<33x64xf32> {tfm.name = "relative_values"})
      -> (tensor<1x12x?x64xf32> {tfm.name = "out"}) {
    %o = tfm.attention %q, %k, %v modifier_operands(%rk, %rv : tensor<33x64xf32>, tensor<33x64xf32>)
        {scale = 0.125 : f64, modifiers = [{kind = "shaw", max_distance = 16 : i64}]}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    return %o : tensor<1x12x?x64xf32>
  }
}
