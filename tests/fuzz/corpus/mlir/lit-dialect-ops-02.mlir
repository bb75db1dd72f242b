func.func @where(%mask: tensor<1x1x?x?xi1>, %ninf: tensor<f32>, %s: tensor<1x12x?x?xf32>,
                 %pad: tensor<?x1x1x?xi64>) -> (tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>) {
  %0 = tfm.where %mask, %ninf, %s : tensor<1x1x?x?xi1>, tensor<f32>, tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %1 = tfm.where %pad, %0, %ninf : tensor<?x1x1x?xi64>, tensor<1x12x?x?xf32>, tensor<f32> -> tensor<?x12x?x?xf32>
  %2 = tfm.where %mask, %s, %ninf : tensor<1x1x?x?xi1>, tensor<1x12x?x?xf32>, tensor<f32> -> tensor<1x12x?x?xf32>
  return %0, %2 : tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>
}

func.func @unary(%x: tensor<?x?x3072xf32>, %h: tensor<2x8xf16>)
    -> (tensor<?x?x3072xf32>, tensor<?x?x3072xf32>, tensor<?x?x3072xf32>, tensor<2x8xf16>) {
  %0 = tfm.relu %x : tensor<?x?x3072xf32> -> tensor<?x?x3072xf32>
  %1 = tfm.silu %0 : tensor<?x?x3072xf32> -> tensor<?x?x3072xf32>
  %2 = tfm.gelu %1 : tensor<?x?x3072xf32> -> tensor<?x?x3072xf32>
  %3 = tfm.gelu %h {approximate = #tfm.gelu_approx<tanh>} : tensor<2x8xf16> -> tensor<2x8xf16>
  return %0, %1, %2, %3 : tensor<?x?x3072xf32>, tensor<?x?x3072xf32>, tensor<?x?x3072xf32>, tensor<2x8xf16>
}

func.func @neg_abs_cos_sin(%x: tensor<1x12x?x32xf32>, %t: tensor<?x64xbf16>)
    -> (tensor<1x12x?x32xf32>, tensor<1x12x?x32xf32>, tensor<?x64xbf16>, tensor<?x64xbf16>) {
  %0 = tfm.neg %x : tensor<1x12x?x32xf32> -> tensor<1x12x?x32xf32>
  %1 = tfm.abs %0 : tensor<1x12x?x32xf32> -> tensor<1x12x?x32xf32>
  %2 = tfm.cos %t : tensor<?x64xbf16> -> tensor<?x64xbf16>
  %3 = tfm.sin %t : tensor<?x64xbf16> -> tensor<?x64xbf16>
  return %0, %1, %2, %3 : tensor<1x12x?x32xf32>, tensor<1x12x?x32xf32>, tensor<?x64xbf16>, tensor<?x64xbf16>
}

func.func @integer_arithmetic(%i: tensor<?x1xi64>, %j: tensor<1x?xi64>, %k: tensor<i64>, %n: tensor<4xi32>)
    -> (tensor<?x?xi64>, tensor<?x?xi64>, tensor<?x?xi64>, tensor<4xi32>, tensor<4xi32>) {
  %0 = tfm.sub %j, %i : tensor<1x?xi64>, tensor<?x1xi64> -> tensor<?x?xi64>
  %1 = tfm.add %k, %0 : tensor<i64>, tensor<?x?xi64> -> tensor<?x?xi64>
  %2 = tfm.mul %1, %k : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
  %3 = tfm.neg %n : tensor<4xi32> -> tensor<4xi32>
  %4 = tfm.abs %3 : tensor<4xi32> -> tensor<4xi32>
  return %0, %1, %2, %3, %4 : tensor<?x?xi64>, tensor<?x?xi64>, tensor<?x?xi64>, tensor<4xi32>, tensor<4xi32>
}

func.func @minimum_maximum_log(%x: tensor<?x8xf32>, %c: tensor<f32>, %n: tensor<?x?xi64>, %m: tensor<i64>, %h: tensor<8xbf16>)
    -> (tensor<?x8xf32>, tensor<?x?xi64>, tensor<?x8xf32>, tensor<8xbf16>) {
  %0 = tfm.minimum %x, %c : tensor<?x8xf32>, tensor<f32> -> tensor<?x8xf32>
  %1 = tfm.maximum %m, %n : tensor<i64>, tensor<?x?xi64> -> tensor<?x?xi64>
  %2 = tfm.log %0 : tensor<?x8xf32> -> tensor<?x8xf32>
  %3 = tfm.log %h : tensor<8xbf16> -> tensor<8xbf16>
  return %0, %1, %2, %3 : tensor<?x8xf32>, tensor<?x?xi64>, tensor<?x8xf32>, tensor<8xbf16>
}

func.func @sign_ceil(%n: tensor<?x?xi64>, %x: tensor<?x8xf32>, %h: tensor<8xf16>)
    -> (tensor<?x?xi64>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf16>) {
  %0 = tfm.sign %n : tensor<?x?xi64> -> tensor<?x?xi64>
  %1 = tfm.sign %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %2 = tfm.ceil %x : tensor<?x8xf32> -> tensor<?x8xf32>
  %3 = tfm.ceil %h : tensor<8xf16> -> tensor<8xf16>
  return %0, %1, %2, %3 : tensor<?x?xi64>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf16>
}

func.func @compare(%n: tensor<?x?xi64>, %c: tensor<i64>, %x: tensor<2x1xf16>, %y: tensor<3xf16>)
    -> (tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>) {
  %0 = tfm.compare %n, %c {predicate = #tfm.compare<lt>} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %1 = tfm.compare %c, %n {predicate = #tfm.compare<le>} : tensor<i64>, tensor<?x?xi64> -> tensor<?x?xi1>
  %2 = tfm.compare %n, %n {predicate = #tfm.compare<gt>} : tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi1>
  %3 = tfm.compare %x, %y {predicate = #tfm.compare<ge>} : tensor<2x1xf16>, tensor<3xf16> -> tensor<2x3xi1>
  %4 = tfm.compare %x, %y {predicate = #tfm.compare<eq>} : tensor<2x1xf16>, tensor<3xf16> -> tensor<2x3xi1>
  %5 = tfm.compare %x, %y {predicate = #tfm.compare<ne>} : tensor<2x1xf16>, tensor<3xf16> -> tensor<2x3xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>
}
