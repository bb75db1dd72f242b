func.func @rotate_every_two(%q: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %pos = tfm.arange %q {axis = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<?xf32>
  %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %s0 = tfm.sin %f : tensor<?x4xf32> -> tensor<?x4xf32>
  %c0 = tfm.cos %f : tensor<?x4xf32> -> tensor<?x4xf32>
  %sin = tfm.repeat_interleave %s0 {axis = 1 : i64, repeats = 2 : i64} : tensor<?x4xf32> -> tensor<?x8xf32>
  %cos = tfm.repeat_interleave %c0 {axis = 1 : i64, repeats = 2 : i64} : tensor<?x4xf32> -> tensor<?x8xf32>
  %even = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 8 : i64, step = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %odd = tfm.slice %q {axis = 3 : i64, start = 1 : i64, end = 8 : i64, step = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %n = tfm.neg %odd : tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  %n1 = tfm.reshape %n : tensor<1x2x?x4xf32> -> tensor<1x2x?x4x1xf32>
  %e1 = tfm.reshape %even : tensor<1x2x?x4xf32> -> tensor<1x2x?x4x1xf32>
  %st = tfm.concat %n1, %e1 {axis = 4 : i64} : tensor<1x2x?x4x1xf32>, tensor<1x2x?x4x1xf32> -> tensor<1x2x?x4x2xf32>
  %rot = tfm.reshape %st : tensor<1x2x?x4x2xf32> -> tensor<1x2x?x8xf32>
  %qc = tfm.mul %q, %cos : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %rs = tfm.mul %rot, %sin : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %r = tfm.add %qc, %rs : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}
