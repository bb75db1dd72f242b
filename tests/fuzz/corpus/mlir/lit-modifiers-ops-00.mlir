func.func @alibi(%q: tensor<1x6x?x64xf32>, %k: tensor<1x6x?x64xf32>, %v: tensor<1x6x?x64xf32>) -> tensor<1x6x?x64xf32> {
  %o = tfm.attention %q, %k, %v {scale = 0.125 : f64, causal = true, modifiers = [{kind = "alibi"}]}
      : tensor<1x6x?x64xf32>, tensor<1x6x?x64xf32>, tensor<1x6x?x64xf32> -> tensor<1x6x?x64xf32>
  return %o : tensor<1x6x?x64xf32>
}
