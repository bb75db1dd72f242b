func.func @weight() -> (tensor<768x2304xf32>, tensor<768xf32>, tensor<4xbf16>) {
  %0 = tfm.weight "h0.attn.c_attn.weight" : tensor<768x2304xf32>
  %1 = tfm.weight "h0.ln_1.weight" {init = #tfm.init<ones>} : tensor<768xf32>
  %2 = tfm.weight "b" {init = #tfm.init<zeros>, std = 0.5 : f64} : tensor<4xbf16>
  return %0, %1, %2 : tensor<768x2304xf32>, tensor<768xf32>, tensor<4xbf16>
}

func.func @weight_transpose() -> tensor<384x1536xf32> {
  %0 = tfm.weight "encoder.layer.0.intermediate.dense.weight" {transpose} : tensor<384x1536xf32>
  return %0 : tensor<384x1536xf32>
}

func.func @embedding(%table: tensor<50257x768xf32>, %ids: tensor<?x?xi32>,
                     %ids64: tensor<8xi64>) -> (tensor<?x?x768xf32>, tensor<8x768xf32>) {
  %0 = tfm.embedding %table, %ids : tensor<50257x768xf32>, tensor<?x?xi32> -> tensor<?x?x768xf32>
  %1 = tfm.embedding %table, %ids64 : tensor<50257x768xf32>, tensor<8xi64> -> tensor<8x768xf32>
  return %0, %1 : tensor<?x?x768xf32>, tensor<8x768xf32>
}

func.func @positions(%x: tensor<?x?x768xf32>, %wpe: tensor<1024x768xf32>,
                     %s: tensor<2x16x512xf16>) -> (tensor<?x?x768xf32>, tensor<2x16x512xf16>, tensor<2x16x512xf16>) {
  %0 = tfm.learned_position %x, %wpe : tensor<?x?x768xf32>, tensor<1024x768xf32> -> tensor<?x?x768xf32>
  %1 = tfm.sinusoidal_position %s : tensor<2x16x512xf16> -> tensor<2x16x512xf16>
  %2 = tfm.sinusoidal_position %s {form = #tfm.sinusoidal_form<concat>, min_timescale = 2.0 : f64, max_timescale = 1.0e5 : f64} : tensor<2x16x512xf16> -> tensor<2x16x512xf16>
  return %0, %1, %2 : tensor<?x?x768xf32>, tensor<2x16x512xf16>, tensor<2x16x512xf16>
}

func.func @multiplicative_position(%x: tensor<?x?x768xf32>, %p: tensor<1024x768xf32>,
                                   %s: tensor<2x16x512xf16>) -> (tensor<?x?x768xf32>, tensor<2x16x512xf16>, tensor<2x16x512xf16>) {
  %0 = tfm.multiplicative_position %x, %p : tensor<?x?x768xf32>, tensor<1024x768xf32> -> tensor<?x?x768xf32>
  %1 = tfm.multiplicative_position %s : tensor<2x16x512xf16> -> tensor<2x16x512xf16>
  %2 = tfm.multiplicative_position %s {form = #tfm.sinusoidal_form<concat>, min_timescale = 2.0 : f64, max_timescale = 1.0e5 : f64} : tensor<2x16x512xf16> -> tensor<2x16x512xf16>
  return %0, %1, %2 : tensor<?x?x768xf32>, tensor<2x16x512xf16>, tensor<2x16x512xf16>
}

func.func @recursive_position(%x: tensor<?x?x768xf32>, %p0: tensor<768xf32>, %w1: tensor<769x64xf32>,
                              %b1: tensor<64xf32>, %w2: tensor<65x768xf32>, %b2: tensor<768xf32>,
                              %y: tensor<2x?x?xbf16>, %q0: tensor<?xbf16>, %v1: tensor<?x?xbf16>,
                              %c1: tensor<?xbf16>, %v2: tensor<?x?xbf16>) -> (tensor<?x?x768xf32>, tensor<2x?x?xbf16>) {
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 {time_step = 0.01 : f64} : tensor<?x?x768xf32>, tensor<768xf32>, tensor<769x64xf32>, tensor<64xf32>, tensor<65x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  %1 = tfm.recursive_position %y, %q0, %v1, %c1, %v2, %q0 {time_step = 1.0 : f64} : tensor<2x?x?xbf16>, tensor<?xbf16>, tensor<?x?xbf16>, tensor<?xbf16>, tensor<?x?xbf16>, tensor<?xbf16> -> tensor<2x?x?xbf16>
  return %0, %1 : tensor<?x?x768xf32>, tensor<2x?x?xbf16>
}
