module {
  func.func @attention_deberta(%q: tensor<1x12x?x64xf32> {tfm.name = "q", tfm.dim_names = ["b", "h", "seq", "d"]},
                               %k: tensor<1x12x?x64xf32> {tfm.name = "k", tfm.dim_names = ["b", "h", "seq", "d"]},
                               %v: tensor<1x12x?x64xf32> {tfm.name = "v", tfm.dim_names = ["b", "h", "seq", "d"]},
                               %kp: tensor<512x12x64xf32> {tfm.name = "pos_key"},
                               %qp: tensor<512x12x64xf32> {tfm.name = "pos_query"})
      -> (tensor<1x12x?x64xf32> {tfm.name = "out"}) {
    %o = tfm.attention %q, %k, %v modifier_operands(%kp, %qp : tensor<512x12x64xf32>, tensor<512x12x64xf32>)
        {scale = 0.07216878364870322 : f64, modifiers = [{kind = "deberta", span = 256 : i64, max_position = 512 : i64}]}
        : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
    return %o : tensor<1x12x?x64xf32>
  }
}
