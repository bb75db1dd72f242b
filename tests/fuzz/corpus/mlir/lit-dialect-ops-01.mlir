func.func @complex_order(%ids: tensor<?x?xi32>, %r: tensor<100x256xf32>, %w: tensor<100x256xf32>,
                         %t: tensor<100x256xf32>, %ids64: tensor<2x9xi64>, %wr: tensor<256x128xf32>,
                         %wi: tensor<256x128xf32>, %br: tensor<128xf32>, %bi: tensor<128xf32>)
    -> (tensor<2x9x512xf32>, tensor<?x?x256xf32>, tensor<?x?x256xf32>) {
  %z = tfm.complex_embedding %ids, %r, %w, %t : tensor<?x?xi32>, tensor<100x256xf32>, tensor<100x256xf32>, tensor<100x256xf32> -> tensor<?x?x512xf32>
  %z0 = tfm.complex_embedding %ids64, %r, %w, %t {first_position = 0 : i64} : tensor<2x9xi64>, tensor<100x256xf32>, tensor<100x256xf32>, tensor<100x256xf32> -> tensor<2x9x512xf32>
  %0 = tfm.complex_linear %z, %wr, %wi : tensor<?x?x512xf32>, tensor<256x128xf32>, tensor<256x128xf32> -> tensor<?x?x256xf32>
  %1 = tfm.complex_linear %z, %wr, %wi bias(%br, %bi : tensor<128xf32>, tensor<128xf32>) : tensor<?x?x512xf32>, tensor<256x128xf32>, tensor<256x128xf32> -> tensor<?x?x256xf32>
  return %z0, %0, %1 : tensor<2x9x512xf32>, tensor<?x?x256xf32>, tensor<?x?x256xf32>
}

func.func @norms(%x: tensor<?x?x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>,
                 %v: tensor<4x?xbf16>, %gv: tensor<?xbf16>) -> (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<4x?xbf16>) {
  %0 = tfm.layer_norm %x, %g, %b : tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  %1 = tfm.rms_norm %x, %g {epsilon = 1.0e-05 : f64} : tensor<?x?x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  %unused = tfm.rms_norm %x, %g {epsilon = 1.0e-06 : f64} : tensor<?x?x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  %2 = tfm.layer_norm %v, %gv, %gv {epsilon = 1.0e-3 : f64} : tensor<4x?xbf16>, tensor<?xbf16>, tensor<?xbf16> -> tensor<4x?xbf16>
  return %0, %1, %2 : tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<4x?xbf16>
}

func.func @linear(%x: tensor<?x?x768xf32>, %w: tensor<768x3072xf32>, %b: tensor<3072xf32>,
                  %x2: tensor<8x?xf32>, %w2: tensor<?x16xf32>) -> (tensor<?x?x3072xf32>, tensor<?x?x3072xf32>, tensor<8x16xf32>) {
  %0 = tfm.linear %x, %w, %b : tensor<?x?x768xf32>, tensor<768x3072xf32>, tensor<3072xf32> -> tensor<?x?x3072xf32>
  %1 = tfm.linear %x, %w : tensor<?x?x768xf32>, tensor<768x3072xf32> -> tensor<?x?x3072xf32>
  %2 = tfm.linear %x2, %w2 : tensor<8x?xf32>, tensor<?x16xf32> -> tensor<8x16xf32>
  return %0, %1, %2 : tensor<?x?x3072xf32>, tensor<?x?x3072xf32>, tensor<8x16xf32>
}

func.func @linear_activation(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = tfm.linear %x, %w, %b {activation = #tfm.activation<gelu_tanh>} : tensor<2x8xf32>, tensor<8x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  %1 = tfm.linear %x, %w {activation = #tfm.activation<silu>} : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  %2 = tfm.linear %x, %w {activation = #tfm.activation<none>} : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  return %0, %1, %2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

func.func @matmul(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %p: tensor<1x12x?x?xf32>,
                  %a: tensor<?x32x8xf16>, %b: tensor<4x32x16xf16>)
    -> (tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32>, tensor<4x8x16xf16>) {
  %0 = tfm.matmul %q, %k {transpose_b = true} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x?xf32>
  %1 = tfm.matmul %p, %k : tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  %2 = tfm.matmul %a, %b {transpose_a = true} : tensor<?x32x8xf16>, tensor<4x32x16xf16> -> tensor<4x8x16xf16>
  return %0, %1, %2 : tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32>, tensor<4x8x16xf16>
}

func.func @elementwise(%s: tensor<?x12x?x?xf32>, %c: tensor<f32>, %r: tensor<?x1x?xf32>,
                       %t: tensor<4x1x8xf32>, %u: tensor<4x?x8xf32>)
    -> (tensor<?x12x?x?xf32>, tensor<?x12x?x?xf32>, tensor<4x1x8xf32>, tensor<4x?x8xf32>) {
  %0 = tfm.add %s, %c : tensor<?x12x?x?xf32>, tensor<f32> -> tensor<?x12x?x?xf32>
  %1 = tfm.sub %c, %0 : tensor<f32>, tensor<?x12x?x?xf32> -> tensor<?x12x?x?xf32>
  %w = tfm.weight "w" : tensor<8xf32>
  %2 = tfm.mul %t, %w : tensor<4x1x8xf32>, tensor<8xf32> -> tensor<4x1x8xf32>
  %3 = tfm.div %r, %u : tensor<?x1x?xf32>, tensor<4x?x8xf32> -> tensor<4x?x8xf32>
  return %0, %1, %2, %3 : tensor<?x12x?x?xf32>, tensor<?x12x?x?xf32>, tensor<4x1x8xf32>, tensor<4x?x8xf32>
}
