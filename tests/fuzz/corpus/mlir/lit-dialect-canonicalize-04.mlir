func.func @repeat_once(%k: tensor<1x2x?x64xf32>) -> tensor<1x2x?x64xf32> {
  %0 = tfm.repeat_interleave %k {axis = 1 : i64, repeats = 1 : i64} : tensor<1x2x?x64xf32> -> tensor<1x2x?x64xf32>
  return %0 : tensor<1x2x?x64xf32>
}
