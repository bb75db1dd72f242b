func.func @cast_and_integer_where(%b: tensor<?x?xi1>, %n: tensor<?x?xi64>, %f: tensor<4xf32>, %h: tensor<4xf16>)
    -> (tensor<?x?xi64>, tensor<?x?xf32>, tensor<4xi32>, tensor<4xbf16>, tensor<4xi1>, tensor<?x?xi64>) {
  %0 = tfm.cast %b : tensor<?x?xi1> -> tensor<?x?xi64>
  %1 = tfm.cast %n : tensor<?x?xi64> -> tensor<?x?xf32>
  %2 = tfm.cast %f : tensor<4xf32> -> tensor<4xi32>
  %3 = tfm.cast %h : tensor<4xf16> -> tensor<4xbf16>
  %4 = tfm.cast %f : tensor<4xf32> -> tensor<4xi1>
  %5 = tfm.where %b, %n, %0 : tensor<?x?xi1>, tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi64>
  return %0, %1, %2, %3, %4, %5 : tensor<?x?xi64>, tensor<?x?xf32>, tensor<4xi32>, tensor<4xbf16>, tensor<4xi1>, tensor<?x?xi64>
}

func.func @softmax_and_causal_mask(%s: tensor<1x12x?x?xf32>)
    -> (tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>) {
  %0 = tfm.causal_mask %s : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %1 = tfm.causal_mask %s {value = -1.0e9 : f64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %2 = tfm.softmax %0 : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %3 = tfm.softmax %1 {axis = 1 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  return %2, %3, %0 : tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>
}

func.func @data_movement(%x: tensor<?x?x768xf32>, %k: tensor<1x2x?x64xf32>, %ids: tensor<2x3x4xi32>)
    -> (tensor<?x12x?x64xf32>, tensor<1x8x?x64xf32>, tensor<24xi32>, tensor<?x?x768xf32>) {
  %0 = tfm.reshape %x : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
  %1 = tfm.transpose %0 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
  %2 = tfm.repeat_interleave %k {axis = 1 : i64, repeats = 4 : i64} : tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  %3 = tfm.reshape %ids : tensor<2x3x4xi32> -> tensor<24xi32>
  %4 = tfm.reshape %0 : tensor<?x?x12x64xf32> -> tensor<?x?x768xf32>
  return %1, %2, %3, %4 : tensor<?x12x?x64xf32>, tensor<1x8x?x64xf32>, tensor<24xi32>, tensor<?x?x768xf32>
}

func.func @slice_concat_arange(%q: tensor<1x12x?x64xf32>, %ids: tensor<2x?xi64>)
    -> (tensor<1x12x?x64xf32>, tensor<1x12x?x32xf32>, tensor<2x?xi64>, tensor<?xf32>, tensor<?xi32>, tensor<2xbf16>) {
  %x1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 32 : i64} : tensor<1x12x?x64xf32> -> tensor<1x12x?x32xf32>
  %x2 = tfm.slice %q {axis = 3 : i64, start = 32 : i64, end = 64 : i64} : tensor<1x12x?x64xf32> -> tensor<1x12x?x32xf32>
  %odd = tfm.slice %q {axis = 3 : i64, start = 1 : i64, end = 64 : i64, step = 2 : i64} : tensor<1x12x?x64xf32> -> tensor<1x12x?x32xf32>
  %n = tfm.neg %x2 : tensor<1x12x?x32xf32> -> tensor<1x12x?x32xf32>
  %rot = tfm.concat %n, %x1 {axis = 3 : i64} : tensor<1x12x?x32xf32>, tensor<1x12x?x32xf32> -> tensor<1x12x?x64xf32>
  %ids3 = tfm.concat %ids, %ids, %ids {axis = 1 : i64} : tensor<2x?xi64>, tensor<2x?xi64>, tensor<2x?xi64> -> tensor<2x?xi64>
  %pos = tfm.arange %q {axis = 2 : i64} : tensor<1x12x?x64xf32> -> tensor<?xf32>
  %rel = tfm.arange %rot {axis = 2 : i64, start = -3 : i64} : tensor<1x12x?x64xf32> -> tensor<?xi32>
  %b = tfm.arange %ids {axis = 0 : i64, start = 1 : i64} : tensor<2x?xi64> -> tensor<2xbf16>
  return %rot, %odd, %ids3, %pos, %rel, %b : tensor<1x12x?x64xf32>, tensor<1x12x?x32xf32>, tensor<2x?xi64>, tensor<?xf32>, tensor<?xi32>, tensor<2xbf16>
}

func.func @gather_elements(%c2p: tensor<1x12x?x8xf32>, %idx: tensor<1x12x?x?xi64>, %x: tensor<?x4xi64>,
                           %i: tensor<3x4xi32>, %y: tensor<2x?xbf16>, %j: tensor<2x5xi64>)
    -> (tensor<1x12x?x?xf32>, tensor<3x4xi64>, tensor<2x5xbf16>) {
  %0 = tfm.gather_elements %c2p, %idx {axis = 3 : i64} : tensor<1x12x?x8xf32>, tensor<1x12x?x?xi64> -> tensor<1x12x?x?xf32>
  %1 = tfm.gather_elements %x, %i {axis = 0 : i64} : tensor<?x4xi64>, tensor<3x4xi32> -> tensor<3x4xi64>
  %2 = tfm.gather_elements %y, %j {axis = 0 : i64} : tensor<2x?xbf16>, tensor<2x5xi64> -> tensor<2x5xbf16>
  return %0, %1, %2 : tensor<1x12x?x?xf32>, tensor<3x4xi64>, tensor<2x5xbf16>
}
