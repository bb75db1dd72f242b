func.func @t5_encoder(%q: tensor<1x4x?x8xf32>, %table: tensor<32x4xf32>) -> tensor<1x4x?x?xf32> {
  %s = tfm.matmul %q, %q {transpose_b = true} : tensor<1x4x?x8xf32>, tensor<1x4x?x8xf32> -> tensor<1x4x?x?xf32>
  %p = tfm.arange %q {axis = 2 : i64} : tensor<1x4x?x8xf32> -> tensor<?xi64>
  %i = tfm.reshape %p : tensor<?xi64> -> tensor<?x1xi64>
  %j = tfm.reshape %p : tensor<?xi64> -> tensor<1x?xi64>
  %rp = tfm.sub %j, %i : tensor<1x?xi64>, tensor<?x1xi64> -> tensor<?x?xi64>
  %zero = arith.constant dense<0> : tensor<i64>
  %after = tfm.compare %rp, %zero {predicate = #tfm.compare<gt>} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %afteri = tfm.cast %after : tensor<?x?xi1> -> tensor<?x?xi64>
  %cside = arith.constant dense<16> : tensor<i64>
  %off = tfm.mul %afteri, %cside : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
  %n = tfm.abs %rp : tensor<?x?xi64> -> tensor<?x?xi64>
  %cex = arith.constant dense<8> : tensor<i64>
  %small = tfm.compare %n, %cex {predicate = #tfm.compare<lt>} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %nf = tfm.cast %n : tensor<?x?xi64> -> tensor<?x?xf32>
  %cexf = arith.constant dense<8.0> : tensor<f32>
  %ratio = tfm.div %nf, %cexf : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
  %lg = tfm.log %ratio : tensor<?x?xf32> -> tensor<?x?xf32>
  %clog = arith.constant dense<2.772588722239781> : tensor<f32>
  %q1 = tfm.div %lg, %clog : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
  %cspan = arith.constant dense<8.0> : tensor<f32>
  %q2 = tfm.mul %q1, %cspan : tensor<?x?xf32>, tensor<f32> -> tensor<?x?xf32>
  %q3 = tfm.cast %q2 : tensor<?x?xf32> -> tensor<?x?xi64>
  %large = tfm.add %cex, %q3 : tensor<i64>, tensor<?x?xi64> -> tensor<?x?xi64>
  %clast = arith.constant dense<15> : tensor<i64>
  %large2 = tfm.minimum %large, %clast : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
  %within = tfm.where %small, %n, %large2 : tensor<?x?xi1>, tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi64>
  %ids = tfm.add %off, %within : tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi64>
  %vals = tfm.embedding %table, %ids : tensor<32x4xf32>, tensor<?x?xi64> -> tensor<?x?x4xf32>
  %vt = tfm.transpose %vals {permutation = array<i64: 2, 0, 1>} : tensor<?x?x4xf32> -> tensor<4x?x?xf32>
  %bias = tfm.reshape %vt : tensor<4x?x?xf32> -> tensor<1x4x?x?xf32>
  %y = tfm.add %s, %bias : tensor<1x4x?x?xf32>, tensor<1x4x?x?xf32> -> tensor<1x4x?x?xf32>
  return %y : tensor<1x4x?x?xf32>
}
