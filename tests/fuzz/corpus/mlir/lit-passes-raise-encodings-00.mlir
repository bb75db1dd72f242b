func.func @rotate_half(%q: tensor<1x2x?x8xf32>) -> tensor<1x2x?x8xf32> {
  %inv = arith.constant dense<[1.0, 0.1, 0.01, 0.001]> : tensor<4xf32>
  %pos = tfm.arange %q {axis = 2 : i64} : tensor<1x2x?x8xf32> -> tensor<?xf32>
  %col = tfm.reshape %pos : tensor<?xf32> -> tensor<?x1xf32>
  %f = tfm.mul %col, %inv : tensor<?x1xf32>, tensor<4xf32> -> tensor<?x4xf32>
  %a = tfm.concat %f, %f {axis = 1 : i64} : tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x8xf32>
  %cos = tfm.cos %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %sin = tfm.sin %a : tensor<?x8xf32> -> tensor<?x8xf32>
  %x1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 4 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %x2 = tfm.slice %q {axis = 3 : i64, start = 4 : i64, end = 8 : i64} : tensor<1x2x?x8xf32> -> tensor<1x2x?x4xf32>
  %n = tfm.neg %x2 : tensor<1x2x?x4xf32> -> tensor<1x2x?x4xf32>
  %h = tfm.concat %n, %x1 {axis = 3 : i64} : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32> -> tensor<1x2x?x8xf32>
  %qc = tfm.mul %cos, %q : tensor<?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  %hs = tfm.mul %h, %sin : tensor<1x2x?x8xf32>, tensor<?x8xf32> -> tensor<1x2x?x8xf32>
  %r = tfm.add %hs, %qc : tensor<1x2x?x8xf32>, tensor<1x2x?x8xf32> -> tensor<1x2x?x8xf32>
  return %r : tensor<1x2x?x8xf32>
}
