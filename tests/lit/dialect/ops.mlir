// RUN: attune-opt %s | attune-opt | FileCheck %s

/// Round trip of every tfm op: each one parses, verifies, prints, and the
/// printed form parses again to the same thing. Shapes mix static and dynamic
/// dims; optional operands and attributes appear both present and absent.

// CHECK-LABEL: func.func @weight
func.func @weight() -> (tensor<768x2304xf32>, tensor<768xf32>, tensor<4xbf16>) {
  // CHECK: tfm.weight "h0.attn.c_attn.weight" : tensor<768x2304xf32>
  %0 = tfm.weight "h0.attn.c_attn.weight" : tensor<768x2304xf32>
  // CHECK: tfm.weight "q.weight|k.weight|v.weight" {part_sizes = array<i64: 768, 768, 768>, transpose} : tensor<768x2304xf32>
  %qkv = tfm.weight "q.weight|k.weight|v.weight" {part_sizes = array<i64: 768, 768, 768>, transpose} : tensor<768x2304xf32>
  // CHECK: tfm.weight "h0.ln_1.weight" {init = #tfm.init<ones>} : tensor<768xf32>
  %1 = tfm.weight "h0.ln_1.weight" {init = #tfm.init<ones>} : tensor<768xf32>
  // CHECK: tfm.weight "b" {init = #tfm.init<zeros>, std = 5.000000e-01 : f64} : tensor<4xbf16>
  %2 = tfm.weight "b" {init = #tfm.init<zeros>, std = 0.5 : f64} : tensor<4xbf16>
  return %0, %1, %2 : tensor<768x2304xf32>, tensor<768xf32>, tensor<4xbf16>
}

// CHECK-LABEL: func.func @weight_transpose
func.func @weight_transpose() -> tensor<384x1536xf32> {
  // CHECK: tfm.weight "encoder.layer.0.intermediate.dense.weight" {transpose} : tensor<384x1536xf32>
  %0 = tfm.weight "encoder.layer.0.intermediate.dense.weight" {transpose} : tensor<384x1536xf32>
  return %0 : tensor<384x1536xf32>
}

// CHECK-LABEL: func.func @embedding
// CHECK-SAME: (%[[T:.+]]: tensor<50257x768xf32>, %[[IDS:.+]]: tensor<?x?xi32>, %[[IDS64:.+]]: tensor<8xi64>)
func.func @embedding(%table: tensor<50257x768xf32>, %ids: tensor<?x?xi32>,
                     %ids64: tensor<8xi64>) -> (tensor<?x?x768xf32>, tensor<8x768xf32>) {
  // CHECK: tfm.embedding %[[T]], %[[IDS]] : tensor<50257x768xf32>, tensor<?x?xi32> -> tensor<?x?x768xf32>
  %0 = tfm.embedding %table, %ids : tensor<50257x768xf32>, tensor<?x?xi32> -> tensor<?x?x768xf32>
  // CHECK: tfm.embedding %[[T]], %[[IDS64]] : tensor<50257x768xf32>, tensor<8xi64> -> tensor<8x768xf32>
  %1 = tfm.embedding %table, %ids64 : tensor<50257x768xf32>, tensor<8xi64> -> tensor<8x768xf32>
  return %0, %1 : tensor<?x?x768xf32>, tensor<8x768xf32>
}

// CHECK-LABEL: func.func @positions
func.func @positions(%x: tensor<?x?x768xf32>, %wpe: tensor<1024x768xf32>,
                     %s: tensor<2x16x512xf16>) -> (tensor<?x?x768xf32>, tensor<2x16x512xf16>, tensor<2x16x512xf16>) {
  // CHECK: tfm.learned_position %{{.+}}, %{{.+}} : tensor<?x?x768xf32>, tensor<1024x768xf32> -> tensor<?x?x768xf32>
  %0 = tfm.learned_position %x, %wpe : tensor<?x?x768xf32>, tensor<1024x768xf32> -> tensor<?x?x768xf32>
  // CHECK: tfm.sinusoidal_position %{{.+}} : tensor<2x16x512xf16> -> tensor<2x16x512xf16>
  %1 = tfm.sinusoidal_position %s : tensor<2x16x512xf16> -> tensor<2x16x512xf16>
  // CHECK: tfm.sinusoidal_position %{{.+}} {form = #tfm.sinusoidal_form<concat>, max_timescale = 1.000000e+05 : f64, min_timescale = 2.000000e+00 : f64} : tensor<2x16x512xf16> -> tensor<2x16x512xf16>
  %2 = tfm.sinusoidal_position %s {form = #tfm.sinusoidal_form<concat>, min_timescale = 2.0 : f64, max_timescale = 1.0e5 : f64} : tensor<2x16x512xf16> -> tensor<2x16x512xf16>
  return %0, %1, %2 : tensor<?x?x768xf32>, tensor<2x16x512xf16>, tensor<2x16x512xf16>
}

// CHECK-LABEL: func.func @multiplicative_position
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x768xf32>, %[[P:.+]]: tensor<1024x768xf32>, %[[S:.+]]: tensor<2x16x512xf16>)
func.func @multiplicative_position(%x: tensor<?x?x768xf32>, %p: tensor<1024x768xf32>,
                                   %s: tensor<2x16x512xf16>) -> (tensor<?x?x768xf32>, tensor<2x16x512xf16>, tensor<2x16x512xf16>) {
  // CHECK: tfm.multiplicative_position %[[X]], %[[P]] : tensor<?x?x768xf32>, tensor<1024x768xf32> -> tensor<?x?x768xf32>
  %0 = tfm.multiplicative_position %x, %p : tensor<?x?x768xf32>, tensor<1024x768xf32> -> tensor<?x?x768xf32>
  /// Without a table the sinusoid's attributes are optional and print only when given.
  // CHECK: tfm.multiplicative_position %[[S]] : tensor<2x16x512xf16> -> tensor<2x16x512xf16>
  %1 = tfm.multiplicative_position %s : tensor<2x16x512xf16> -> tensor<2x16x512xf16>
  // CHECK: tfm.multiplicative_position %[[S]] {form = #tfm.sinusoidal_form<concat>, max_timescale = 1.000000e+05 : f64, min_timescale = 2.000000e+00 : f64} : tensor<2x16x512xf16> -> tensor<2x16x512xf16>
  %2 = tfm.multiplicative_position %s {form = #tfm.sinusoidal_form<concat>, min_timescale = 2.0 : f64, max_timescale = 1.0e5 : f64} : tensor<2x16x512xf16> -> tensor<2x16x512xf16>
  return %0, %1, %2 : tensor<?x?x768xf32>, tensor<2x16x512xf16>, tensor<2x16x512xf16>
}

// CHECK-LABEL: func.func @recursive_position
// CHECK-SAME: (%[[X:.+]]: tensor<?x?x768xf32>, %[[P0:.+]]: tensor<768xf32>, %[[W1:.+]]: tensor<769x64xf32>, %[[B1:.+]]: tensor<64xf32>, %[[W2:.+]]: tensor<65x768xf32>, %[[B2:.+]]: tensor<768xf32>, %[[Y:.+]]: tensor<2x?x?xbf16>, %[[Q0:.+]]: tensor<?xbf16>, %[[V1:.+]]: tensor<?x?xbf16>, %[[C1:.+]]: tensor<?xbf16>, %[[V2:.+]]: tensor<?x?xbf16>)
func.func @recursive_position(%x: tensor<?x?x768xf32>, %p0: tensor<768xf32>, %w1: tensor<769x64xf32>,
                              %b1: tensor<64xf32>, %w2: tensor<65x768xf32>, %b2: tensor<768xf32>,
                              %y: tensor<2x?x?xbf16>, %q0: tensor<?xbf16>, %v1: tensor<?x?xbf16>,
                              %c1: tensor<?xbf16>, %v2: tensor<?x?xbf16>) -> (tensor<?x?x768xf32>, tensor<2x?x?xbf16>) {
  // CHECK: tfm.recursive_position %[[X]], %[[P0]], %[[W1]], %[[B1]], %[[W2]], %[[B2]] {time_step = 1.000000e-02 : f64} : tensor<?x?x768xf32>, tensor<768xf32>, tensor<769x64xf32>, tensor<64xf32>, tensor<65x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  %0 = tfm.recursive_position %x, %p0, %w1, %b1, %w2, %b2 {time_step = 0.01 : f64} : tensor<?x?x768xf32>, tensor<768xf32>, tensor<769x64xf32>, tensor<64xf32>, tensor<65x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  /// Dynamic model and hidden dims are checked at run time; time_step 1 is the default.
  // CHECK: tfm.recursive_position %[[Y]], %[[Q0]], %[[V1]], %[[C1]], %[[V2]], %[[Q0]] : tensor<2x?x?xbf16>, tensor<?xbf16>, tensor<?x?xbf16>, tensor<?xbf16>, tensor<?x?xbf16>, tensor<?xbf16> -> tensor<2x?x?xbf16>
  %1 = tfm.recursive_position %y, %q0, %v1, %c1, %v2, %q0 {time_step = 1.0 : f64} : tensor<2x?x?xbf16>, tensor<?xbf16>, tensor<?x?xbf16>, tensor<?xbf16>, tensor<?x?xbf16>, tensor<?xbf16> -> tensor<2x?x?xbf16>
  return %0, %1 : tensor<?x?x768xf32>, tensor<2x?x?xbf16>
}

// CHECK-LABEL: func.func @complex_order
// CHECK-SAME: (%[[IDS:.+]]: tensor<?x?xi32>, %[[R:.+]]: tensor<100x256xf32>, %[[W:.+]]: tensor<100x256xf32>, %[[T:.+]]: tensor<100x256xf32>, %[[IDS64:.+]]: tensor<2x9xi64>, %[[WR:.+]]: tensor<256x128xf32>, %[[WI:.+]]: tensor<256x128xf32>, %[[BR:.+]]: tensor<128xf32>, %[[BI:.+]]: tensor<128xf32>)
func.func @complex_order(%ids: tensor<?x?xi32>, %r: tensor<100x256xf32>, %w: tensor<100x256xf32>,
                         %t: tensor<100x256xf32>, %ids64: tensor<2x9xi64>, %wr: tensor<256x128xf32>,
                         %wi: tensor<256x128xf32>, %br: tensor<128xf32>, %bi: tensor<128xf32>)
    -> (tensor<2x9x512xf32>, tensor<?x?x256xf32>, tensor<?x?x256xf32>) {
  // CHECK: %[[Z:.+]] = tfm.complex_embedding %[[IDS]], %[[R]], %[[W]], %[[T]] : tensor<?x?xi32>, tensor<100x256xf32>, tensor<100x256xf32>, tensor<100x256xf32> -> tensor<?x?x512xf32>
  %z = tfm.complex_embedding %ids, %r, %w, %t : tensor<?x?xi32>, tensor<100x256xf32>, tensor<100x256xf32>, tensor<100x256xf32> -> tensor<?x?x512xf32>
  // CHECK: tfm.complex_embedding %[[IDS64]], %[[R]], %[[W]], %[[T]] {first_position = 0 : i64} : tensor<2x9xi64>, tensor<100x256xf32>, tensor<100x256xf32>, tensor<100x256xf32> -> tensor<2x9x512xf32>
  %z0 = tfm.complex_embedding %ids64, %r, %w, %t {first_position = 0 : i64} : tensor<2x9xi64>, tensor<100x256xf32>, tensor<100x256xf32>, tensor<100x256xf32> -> tensor<2x9x512xf32>
  // CHECK: tfm.complex_linear %[[Z]], %[[WR]], %[[WI]] : tensor<?x?x512xf32>, tensor<256x128xf32>, tensor<256x128xf32> -> tensor<?x?x256xf32>
  %0 = tfm.complex_linear %z, %wr, %wi : tensor<?x?x512xf32>, tensor<256x128xf32>, tensor<256x128xf32> -> tensor<?x?x256xf32>
  // CHECK: tfm.complex_linear %[[Z]], %[[WR]], %[[WI]] bias(%[[BR]], %[[BI]] : tensor<128xf32>, tensor<128xf32>) : tensor<?x?x512xf32>, tensor<256x128xf32>, tensor<256x128xf32> -> tensor<?x?x256xf32>
  %1 = tfm.complex_linear %z, %wr, %wi bias(%br, %bi : tensor<128xf32>, tensor<128xf32>) : tensor<?x?x512xf32>, tensor<256x128xf32>, tensor<256x128xf32> -> tensor<?x?x256xf32>
  return %z0, %0, %1 : tensor<2x9x512xf32>, tensor<?x?x256xf32>, tensor<?x?x256xf32>
}

// CHECK-LABEL: func.func @norms
func.func @norms(%x: tensor<?x?x768xf32>, %g: tensor<768xf32>, %b: tensor<768xf32>,
                 %v: tensor<4x?xbf16>, %gv: tensor<?xbf16>) -> (tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<4x?xbf16>) {
  // CHECK: tfm.layer_norm %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  %0 = tfm.layer_norm %x, %g, %b : tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  // CHECK: tfm.rms_norm %{{.+}}, %{{.+}} {epsilon = 1.000000e-05 : f64} : tensor<?x?x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  %1 = tfm.rms_norm %x, %g {epsilon = 1.0e-05 : f64} : tensor<?x?x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  /// An attribute spelled with its default value (1e-6) prints elided.
  // CHECK: tfm.rms_norm %{{.+}}, %{{.+}} : tensor<?x?x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  %unused = tfm.rms_norm %x, %g {epsilon = 1.0e-06 : f64} : tensor<?x?x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  /// With a residual (tfm-fuse-residual-norm): the norm of %x + %r.
  // CHECK: tfm.layer_norm %{{.+}}, %{{.+}}, %{{.+}} residual(%{{.+}} : tensor<?x?x768xf32>) : tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  %r0 = tfm.layer_norm %x, %g, %b residual(%x : tensor<?x?x768xf32>) : tensor<?x?x768xf32>, tensor<768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  // CHECK: tfm.rms_norm %{{.+}}, %{{.+}} residual(%{{.+}} : tensor<?x?x768xf32>) {epsilon = 1.000000e-05 : f64} : tensor<?x?x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  %r1 = tfm.rms_norm %x, %g residual(%x : tensor<?x?x768xf32>) {epsilon = 1.0e-05 : f64} : tensor<?x?x768xf32>, tensor<768xf32> -> tensor<?x?x768xf32>
  /// A dynamic feature dim is checked at run time.
  // CHECK: tfm.layer_norm %{{.+}}, %{{.+}}, %{{.+}} {epsilon = 1.000000e-03 : f64} : tensor<4x?xbf16>, tensor<?xbf16>, tensor<?xbf16> -> tensor<4x?xbf16>
  %2 = tfm.layer_norm %v, %gv, %gv {epsilon = 1.0e-3 : f64} : tensor<4x?xbf16>, tensor<?xbf16>, tensor<?xbf16> -> tensor<4x?xbf16>
  return %0, %1, %2 : tensor<?x?x768xf32>, tensor<?x?x768xf32>, tensor<4x?xbf16>
}

// CHECK-LABEL: func.func @linear
func.func @linear(%x: tensor<?x?x768xf32>, %w: tensor<768x3072xf32>, %b: tensor<3072xf32>,
                  %x2: tensor<8x?xf32>, %w2: tensor<?x16xf32>) -> (tensor<?x?x3072xf32>, tensor<?x?x3072xf32>, tensor<8x16xf32>) {
  // CHECK: tfm.linear %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x?x768xf32>, tensor<768x3072xf32>, tensor<3072xf32> -> tensor<?x?x3072xf32>
  %0 = tfm.linear %x, %w, %b : tensor<?x?x768xf32>, tensor<768x3072xf32>, tensor<3072xf32> -> tensor<?x?x3072xf32>
  // CHECK: tfm.linear %{{.+}}, %{{.+}} : tensor<?x?x768xf32>, tensor<768x3072xf32> -> tensor<?x?x3072xf32>
  %1 = tfm.linear %x, %w : tensor<?x?x768xf32>, tensor<768x3072xf32> -> tensor<?x?x3072xf32>
  // CHECK: tfm.linear %{{.+}}, %{{.+}} : tensor<8x?xf32>, tensor<?x16xf32> -> tensor<8x16xf32>
  %2 = tfm.linear %x2, %w2 : tensor<8x?xf32>, tensor<?x16xf32> -> tensor<8x16xf32>
  return %0, %1, %2 : tensor<?x?x3072xf32>, tensor<?x?x3072xf32>, tensor<8x16xf32>
}

/// The default activation (none) is not printed; the others are.
// CHECK-LABEL: func.func @linear_activation
func.func @linear_activation(%x: tensor<2x8xf32>, %w: tensor<8x4xf32>, %b: tensor<4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  // CHECK: tfm.linear %{{.+}}, %{{.+}}, %{{.+}} {activation = #tfm.activation<gelu_tanh>} : tensor<2x8xf32>
  %0 = tfm.linear %x, %w, %b {activation = #tfm.activation<gelu_tanh>} : tensor<2x8xf32>, tensor<8x4xf32>, tensor<4xf32> -> tensor<2x4xf32>
  // CHECK: tfm.linear %{{.+}}, %{{.+}} {activation = #tfm.activation<silu>} : tensor<2x8xf32>
  %1 = tfm.linear %x, %w {activation = #tfm.activation<silu>} : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  // CHECK: tfm.linear %{{.+}}, %{{.+}} : tensor<2x8xf32>
  %2 = tfm.linear %x, %w {activation = #tfm.activation<none>} : tensor<2x8xf32>, tensor<8x4xf32> -> tensor<2x4xf32>
  return %0, %1, %2 : tensor<2x4xf32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// CHECK-LABEL: func.func @matmul
func.func @matmul(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %p: tensor<1x12x?x?xf32>,
                  %a: tensor<?x32x8xf16>, %b: tensor<4x32x16xf16>)
    -> (tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32>, tensor<4x8x16xf16>) {
  // CHECK: tfm.matmul %{{.+}}, %{{.+}} {transpose_b = true} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x?xf32>
  %0 = tfm.matmul %q, %k {transpose_b = true} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x?xf32>
  // CHECK: tfm.matmul %{{.+}}, %{{.+}} : tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  %1 = tfm.matmul %p, %k : tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  /// A dynamic batch dim takes the static size of the other operand.
  // CHECK: tfm.matmul %{{.+}}, %{{.+}} {transpose_a = true} : tensor<?x32x8xf16>, tensor<4x32x16xf16> -> tensor<4x8x16xf16>
  %2 = tfm.matmul %a, %b {transpose_a = true} : tensor<?x32x8xf16>, tensor<4x32x16xf16> -> tensor<4x8x16xf16>
  return %0, %1, %2 : tensor<1x12x?x?xf32>, tensor<1x12x?x64xf32>, tensor<4x8x16xf16>
}

// CHECK-LABEL: func.func @elementwise
func.func @elementwise(%s: tensor<?x12x?x?xf32>, %c: tensor<f32>, %r: tensor<?x1x?xf32>,
                       %t: tensor<4x1x8xf32>, %u: tensor<4x?x8xf32>)
    -> (tensor<?x12x?x?xf32>, tensor<?x12x?x?xf32>, tensor<4x1x8xf32>, tensor<4x?x8xf32>) {
  // CHECK: tfm.add %{{.+}}, %{{.+}} : tensor<?x12x?x?xf32>, tensor<f32> -> tensor<?x12x?x?xf32>
  %0 = tfm.add %s, %c : tensor<?x12x?x?xf32>, tensor<f32> -> tensor<?x12x?x?xf32>
  // CHECK: tfm.sub %{{.+}}, %{{.+}} : tensor<f32>, tensor<?x12x?x?xf32> -> tensor<?x12x?x?xf32>
  %1 = tfm.sub %c, %0 : tensor<f32>, tensor<?x12x?x?xf32> -> tensor<?x12x?x?xf32>
  // CHECK: tfm.mul %{{.+}}, %{{.+}} : tensor<4x1x8xf32>, tensor<8xf32> -> tensor<4x1x8xf32>
  %w = tfm.weight "w" : tensor<8xf32>
  %2 = tfm.mul %t, %w : tensor<4x1x8xf32>, tensor<8xf32> -> tensor<4x1x8xf32>
  /// `?` against 4 gives 4, 1 against `?` gives `?`, `?` against 8 gives 8.
  // CHECK: tfm.div %{{.+}}, %{{.+}} : tensor<?x1x?xf32>, tensor<4x?x8xf32> -> tensor<4x?x8xf32>
  %3 = tfm.div %r, %u : tensor<?x1x?xf32>, tensor<4x?x8xf32> -> tensor<4x?x8xf32>
  return %0, %1, %2, %3 : tensor<?x12x?x?xf32>, tensor<?x12x?x?xf32>, tensor<4x1x8xf32>, tensor<4x?x8xf32>
}

// CHECK-LABEL: func.func @where
func.func @where(%mask: tensor<1x1x?x?xi1>, %ninf: tensor<f32>, %s: tensor<1x12x?x?xf32>,
                 %pad: tensor<?x1x1x?xi64>) -> (tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>) {
  // CHECK: tfm.where %{{.+}}, %{{.+}}, %{{.+}} : tensor<1x1x?x?xi1>, tensor<f32>, tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %0 = tfm.where %mask, %ninf, %s : tensor<1x1x?x?xi1>, tensor<f32>, tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  /// The condition may contribute dims too: its leading `?` meets 1.
  // CHECK: tfm.where %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x1x1x?xi64>, tensor<1x12x?x?xf32>, tensor<f32> -> tensor<?x12x?x?xf32>
  %1 = tfm.where %pad, %0, %ninf : tensor<?x1x1x?xi64>, tensor<1x12x?x?xf32>, tensor<f32> -> tensor<?x12x?x?xf32>
  %2 = tfm.where %mask, %s, %ninf : tensor<1x1x?x?xi1>, tensor<1x12x?x?xf32>, tensor<f32> -> tensor<1x12x?x?xf32>
  return %0, %2 : tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>
}

// CHECK-LABEL: func.func @unary
func.func @unary(%x: tensor<?x?x3072xf32>, %h: tensor<2x8xf16>)
    -> (tensor<?x?x3072xf32>, tensor<?x?x3072xf32>, tensor<?x?x3072xf32>, tensor<2x8xf16>) {
  // CHECK: tfm.relu %{{.+}} : tensor<?x?x3072xf32> -> tensor<?x?x3072xf32>
  %0 = tfm.relu %x : tensor<?x?x3072xf32> -> tensor<?x?x3072xf32>
  // CHECK: tfm.silu %{{.+}} : tensor<?x?x3072xf32> -> tensor<?x?x3072xf32>
  %1 = tfm.silu %0 : tensor<?x?x3072xf32> -> tensor<?x?x3072xf32>
  // CHECK: tfm.gelu %{{.+}} : tensor<?x?x3072xf32> -> tensor<?x?x3072xf32>
  %2 = tfm.gelu %1 : tensor<?x?x3072xf32> -> tensor<?x?x3072xf32>
  // CHECK: tfm.gelu %{{.+}} {approximate = #tfm.gelu_approx<tanh>} : tensor<2x8xf16> -> tensor<2x8xf16>
  %3 = tfm.gelu %h {approximate = #tfm.gelu_approx<tanh>} : tensor<2x8xf16> -> tensor<2x8xf16>
  return %0, %1, %2, %3 : tensor<?x?x3072xf32>, tensor<?x?x3072xf32>, tensor<?x?x3072xf32>, tensor<2x8xf16>
}

// CHECK-LABEL: func.func @neg_abs_cos_sin
func.func @neg_abs_cos_sin(%x: tensor<1x12x?x32xf32>, %t: tensor<?x64xbf16>)
    -> (tensor<1x12x?x32xf32>, tensor<1x12x?x32xf32>, tensor<?x64xbf16>, tensor<?x64xbf16>) {
  // CHECK: tfm.neg %{{.+}} : tensor<1x12x?x32xf32> -> tensor<1x12x?x32xf32>
  %0 = tfm.neg %x : tensor<1x12x?x32xf32> -> tensor<1x12x?x32xf32>
  // CHECK: tfm.abs %{{.+}} : tensor<1x12x?x32xf32> -> tensor<1x12x?x32xf32>
  %1 = tfm.abs %0 : tensor<1x12x?x32xf32> -> tensor<1x12x?x32xf32>
  // CHECK: tfm.cos %{{.+}} : tensor<?x64xbf16> -> tensor<?x64xbf16>
  %2 = tfm.cos %t : tensor<?x64xbf16> -> tensor<?x64xbf16>
  // CHECK: tfm.sin %{{.+}} : tensor<?x64xbf16> -> tensor<?x64xbf16>
  %3 = tfm.sin %t : tensor<?x64xbf16> -> tensor<?x64xbf16>
  return %0, %1, %2, %3 : tensor<1x12x?x32xf32>, tensor<1x12x?x32xf32>, tensor<?x64xbf16>, tensor<?x64xbf16>
}

// CHECK-LABEL: func.func @integer_arithmetic
func.func @integer_arithmetic(%i: tensor<?x1xi64>, %j: tensor<1x?xi64>, %k: tensor<i64>, %n: tensor<4xi32>)
    -> (tensor<?x?xi64>, tensor<?x?xi64>, tensor<?x?xi64>, tensor<4xi32>, tensor<4xi32>) {
  // CHECK: tfm.sub %{{.+}}, %{{.+}} : tensor<1x?xi64>, tensor<?x1xi64> -> tensor<?x?xi64>
  %0 = tfm.sub %j, %i : tensor<1x?xi64>, tensor<?x1xi64> -> tensor<?x?xi64>
  // CHECK: tfm.add %{{.+}}, %{{.+}} : tensor<i64>, tensor<?x?xi64> -> tensor<?x?xi64>
  %1 = tfm.add %k, %0 : tensor<i64>, tensor<?x?xi64> -> tensor<?x?xi64>
  // CHECK: tfm.mul %{{.+}}, %{{.+}} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
  %2 = tfm.mul %1, %k : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi64>
  // CHECK: tfm.neg %{{.+}} : tensor<4xi32> -> tensor<4xi32>
  %3 = tfm.neg %n : tensor<4xi32> -> tensor<4xi32>
  // CHECK: tfm.abs %{{.+}} : tensor<4xi32> -> tensor<4xi32>
  %4 = tfm.abs %3 : tensor<4xi32> -> tensor<4xi32>
  return %0, %1, %2, %3, %4 : tensor<?x?xi64>, tensor<?x?xi64>, tensor<?x?xi64>, tensor<4xi32>, tensor<4xi32>
}

// CHECK-LABEL: func.func @minimum_maximum_log
func.func @minimum_maximum_log(%x: tensor<?x8xf32>, %c: tensor<f32>, %n: tensor<?x?xi64>, %m: tensor<i64>, %h: tensor<8xbf16>)
    -> (tensor<?x8xf32>, tensor<?x?xi64>, tensor<?x8xf32>, tensor<8xbf16>) {
  // CHECK: tfm.minimum %{{.+}}, %{{.+}} : tensor<?x8xf32>, tensor<f32> -> tensor<?x8xf32>
  %0 = tfm.minimum %x, %c : tensor<?x8xf32>, tensor<f32> -> tensor<?x8xf32>
  // CHECK: tfm.maximum %{{.+}}, %{{.+}} : tensor<i64>, tensor<?x?xi64> -> tensor<?x?xi64>
  %1 = tfm.maximum %m, %n : tensor<i64>, tensor<?x?xi64> -> tensor<?x?xi64>
  // CHECK: tfm.log %{{.+}} : tensor<?x8xf32> -> tensor<?x8xf32>
  %2 = tfm.log %0 : tensor<?x8xf32> -> tensor<?x8xf32>
  // CHECK: tfm.log %{{.+}} : tensor<8xbf16> -> tensor<8xbf16>
  %3 = tfm.log %h : tensor<8xbf16> -> tensor<8xbf16>
  return %0, %1, %2, %3 : tensor<?x8xf32>, tensor<?x?xi64>, tensor<?x8xf32>, tensor<8xbf16>
}

// CHECK-LABEL: func.func @sign_ceil
func.func @sign_ceil(%n: tensor<?x?xi64>, %x: tensor<?x8xf32>, %h: tensor<8xf16>)
    -> (tensor<?x?xi64>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf16>) {
  // CHECK: tfm.sign %{{.+}} : tensor<?x?xi64> -> tensor<?x?xi64>
  %0 = tfm.sign %n : tensor<?x?xi64> -> tensor<?x?xi64>
  // CHECK: tfm.sign %{{.+}} : tensor<?x8xf32> -> tensor<?x8xf32>
  %1 = tfm.sign %x : tensor<?x8xf32> -> tensor<?x8xf32>
  // CHECK: tfm.ceil %{{.+}} : tensor<?x8xf32> -> tensor<?x8xf32>
  %2 = tfm.ceil %x : tensor<?x8xf32> -> tensor<?x8xf32>
  // CHECK: tfm.ceil %{{.+}} : tensor<8xf16> -> tensor<8xf16>
  %3 = tfm.ceil %h : tensor<8xf16> -> tensor<8xf16>
  return %0, %1, %2, %3 : tensor<?x?xi64>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<8xf16>
}

// CHECK-LABEL: func.func @compare
func.func @compare(%n: tensor<?x?xi64>, %c: tensor<i64>, %x: tensor<2x1xf16>, %y: tensor<3xf16>)
    -> (tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>) {
  // CHECK: tfm.compare %{{.+}}, %{{.+}} {predicate = #tfm.compare<lt>} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  %0 = tfm.compare %n, %c {predicate = #tfm.compare<lt>} : tensor<?x?xi64>, tensor<i64> -> tensor<?x?xi1>
  // CHECK: tfm.compare %{{.+}}, %{{.+}} {predicate = #tfm.compare<le>} : tensor<i64>, tensor<?x?xi64> -> tensor<?x?xi1>
  %1 = tfm.compare %c, %n {predicate = #tfm.compare<le>} : tensor<i64>, tensor<?x?xi64> -> tensor<?x?xi1>
  // CHECK: tfm.compare %{{.+}}, %{{.+}} {predicate = #tfm.compare<gt>} : tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi1>
  %2 = tfm.compare %n, %n {predicate = #tfm.compare<gt>} : tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi1>
  /// [2, 1] against [3] broadcasts to [2, 3].
  // CHECK: tfm.compare %{{.+}}, %{{.+}} {predicate = #tfm.compare<ge>} : tensor<2x1xf16>, tensor<3xf16> -> tensor<2x3xi1>
  %3 = tfm.compare %x, %y {predicate = #tfm.compare<ge>} : tensor<2x1xf16>, tensor<3xf16> -> tensor<2x3xi1>
  // CHECK: tfm.compare %{{.+}}, %{{.+}} {predicate = #tfm.compare<eq>} : tensor<2x1xf16>, tensor<3xf16> -> tensor<2x3xi1>
  %4 = tfm.compare %x, %y {predicate = #tfm.compare<eq>} : tensor<2x1xf16>, tensor<3xf16> -> tensor<2x3xi1>
  // CHECK: tfm.compare %{{.+}}, %{{.+}} {predicate = #tfm.compare<ne>} : tensor<2x1xf16>, tensor<3xf16> -> tensor<2x3xi1>
  %5 = tfm.compare %x, %y {predicate = #tfm.compare<ne>} : tensor<2x1xf16>, tensor<3xf16> -> tensor<2x3xi1>
  return %0, %1, %2, %3, %4, %5 : tensor<?x?xi1>, tensor<?x?xi1>, tensor<?x?xi1>, tensor<2x3xi1>, tensor<2x3xi1>, tensor<2x3xi1>
}

// CHECK-LABEL: func.func @cast_and_integer_where
func.func @cast_and_integer_where(%b: tensor<?x?xi1>, %n: tensor<?x?xi64>, %f: tensor<4xf32>, %h: tensor<4xf16>)
    -> (tensor<?x?xi64>, tensor<?x?xf32>, tensor<4xi32>, tensor<4xbf16>, tensor<4xi1>, tensor<?x?xi64>) {
  // CHECK: tfm.cast %{{.+}} : tensor<?x?xi1> -> tensor<?x?xi64>
  %0 = tfm.cast %b : tensor<?x?xi1> -> tensor<?x?xi64>
  // CHECK: tfm.cast %{{.+}} : tensor<?x?xi64> -> tensor<?x?xf32>
  %1 = tfm.cast %n : tensor<?x?xi64> -> tensor<?x?xf32>
  // CHECK: tfm.cast %{{.+}} : tensor<4xf32> -> tensor<4xi32>
  %2 = tfm.cast %f : tensor<4xf32> -> tensor<4xi32>
  // CHECK: tfm.cast %{{.+}} : tensor<4xf16> -> tensor<4xbf16>
  %3 = tfm.cast %h : tensor<4xf16> -> tensor<4xbf16>
  // CHECK: tfm.cast %{{.+}} : tensor<4xf32> -> tensor<4xi1>
  %4 = tfm.cast %f : tensor<4xf32> -> tensor<4xi1>
  // CHECK: tfm.where %{{.+}}, %{{.+}}, %{{.+}} : tensor<?x?xi1>, tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi64>
  %5 = tfm.where %b, %n, %0 : tensor<?x?xi1>, tensor<?x?xi64>, tensor<?x?xi64> -> tensor<?x?xi64>
  return %0, %1, %2, %3, %4, %5 : tensor<?x?xi64>, tensor<?x?xf32>, tensor<4xi32>, tensor<4xbf16>, tensor<4xi1>, tensor<?x?xi64>
}

// CHECK-LABEL: func.func @softmax_and_causal_mask
func.func @softmax_and_causal_mask(%s: tensor<1x12x?x?xf32>)
    -> (tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>) {
  // CHECK: tfm.causal_mask %{{.+}} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %0 = tfm.causal_mask %s : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  // CHECK: tfm.causal_mask %{{.+}} {value = -1.000000e+09 : f64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %1 = tfm.causal_mask %s {value = -1.0e9 : f64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  // CHECK: tfm.softmax %{{.+}} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %2 = tfm.softmax %0 : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  // CHECK: tfm.softmax %{{.+}} {axis = 1 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  %3 = tfm.softmax %1 {axis = 1 : i64} : tensor<1x12x?x?xf32> -> tensor<1x12x?x?xf32>
  return %2, %3, %0 : tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>, tensor<1x12x?x?xf32>
}

// CHECK-LABEL: func.func @data_movement
func.func @data_movement(%x: tensor<?x?x768xf32>, %k: tensor<1x2x?x64xf32>, %ids: tensor<2x3x4xi32>)
    -> (tensor<?x12x?x64xf32>, tensor<1x8x?x64xf32>, tensor<24xi32>, tensor<?x?x768xf32>) {
  // CHECK: tfm.reshape %{{.+}} : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
  %0 = tfm.reshape %x : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
  // CHECK: tfm.transpose %{{.+}} {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
  %1 = tfm.transpose %0 {permutation = array<i64: 0, 2, 1, 3>} : tensor<?x?x12x64xf32> -> tensor<?x12x?x64xf32>
  // CHECK: tfm.repeat_interleave %{{.+}} {axis = 1 : i64, repeats = 4 : i64} : tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  %2 = tfm.repeat_interleave %k {axis = 1 : i64, repeats = 4 : i64} : tensor<1x2x?x64xf32> -> tensor<1x8x?x64xf32>
  /// Reshape takes any element type, integers included.
  // CHECK: tfm.reshape %{{.+}} : tensor<2x3x4xi32> -> tensor<24xi32>
  %3 = tfm.reshape %ids : tensor<2x3x4xi32> -> tensor<24xi32>
  /// Dynamic dims carried through in order, merged heads.
  // CHECK: tfm.reshape %{{.+}} : tensor<?x?x12x64xf32> -> tensor<?x?x768xf32>
  %4 = tfm.reshape %0 : tensor<?x?x12x64xf32> -> tensor<?x?x768xf32>
  return %1, %2, %3, %4 : tensor<?x12x?x64xf32>, tensor<1x8x?x64xf32>, tensor<24xi32>, tensor<?x?x768xf32>
}

/// rotate_half as exporters write it, a GPT-J every-other-element split and
/// the positions RoPE and ALiBi are computed from.
// CHECK-LABEL: func.func @slice_concat_arange
// CHECK-SAME: (%[[Q:.+]]: tensor<1x12x?x64xf32>, %[[IDS:.+]]: tensor<2x?xi64>)
func.func @slice_concat_arange(%q: tensor<1x12x?x64xf32>, %ids: tensor<2x?xi64>)
    -> (tensor<1x12x?x64xf32>, tensor<1x12x?x32xf32>, tensor<2x?xi64>, tensor<?xf32>, tensor<?xi32>, tensor<2xbf16>) {
  // CHECK: %[[X1:.+]] = tfm.slice %[[Q]] {axis = 3 : i64, end = 32 : i64, start = 0 : i64} : tensor<1x12x?x64xf32> -> tensor<1x12x?x32xf32>
  %x1 = tfm.slice %q {axis = 3 : i64, start = 0 : i64, end = 32 : i64} : tensor<1x12x?x64xf32> -> tensor<1x12x?x32xf32>
  %x2 = tfm.slice %q {axis = 3 : i64, start = 32 : i64, end = 64 : i64} : tensor<1x12x?x64xf32> -> tensor<1x12x?x32xf32>
  /// The default step is not printed; another is.
  // CHECK: tfm.slice %[[Q]] {axis = 3 : i64, end = 64 : i64, start = 1 : i64, step = 2 : i64} : tensor<1x12x?x64xf32> -> tensor<1x12x?x32xf32>
  %odd = tfm.slice %q {axis = 3 : i64, start = 1 : i64, end = 64 : i64, step = 2 : i64} : tensor<1x12x?x64xf32> -> tensor<1x12x?x32xf32>
  %n = tfm.neg %x2 : tensor<1x12x?x32xf32> -> tensor<1x12x?x32xf32>
  // CHECK: %[[ROT:.+]] = tfm.concat %{{.+}}, %[[X1]] {axis = 3 : i64} : tensor<1x12x?x32xf32>, tensor<1x12x?x32xf32> -> tensor<1x12x?x64xf32>
  %rot = tfm.concat %n, %x1 {axis = 3 : i64} : tensor<1x12x?x32xf32>, tensor<1x12x?x32xf32> -> tensor<1x12x?x64xf32>
  /// Integers join too; a `?` in the joined dim makes the result's `?`.
  // CHECK: tfm.concat %[[IDS]], %[[IDS]], %[[IDS]] {axis = 1 : i64} : tensor<2x?xi64>, tensor<2x?xi64>, tensor<2x?xi64> -> tensor<2x?xi64>
  %ids3 = tfm.concat %ids, %ids, %ids {axis = 1 : i64} : tensor<2x?xi64>, tensor<2x?xi64>, tensor<2x?xi64> -> tensor<2x?xi64>
  /// The default start is not printed; a negative one is.
  // CHECK: tfm.arange %[[Q]] {axis = 2 : i64} : tensor<1x12x?x64xf32> -> tensor<?xf32>
  %pos = tfm.arange %q {axis = 2 : i64} : tensor<1x12x?x64xf32> -> tensor<?xf32>
  // CHECK: tfm.arange %[[ROT]] {axis = 2 : i64, start = -3 : i64} : tensor<1x12x?x64xf32> -> tensor<?xi32>
  %rel = tfm.arange %rot {axis = 2 : i64, start = -3 : i64} : tensor<1x12x?x64xf32> -> tensor<?xi32>
  /// `like` may be any ranked tensor; its values are not read.
  // CHECK: tfm.arange %[[IDS]] {axis = 0 : i64, start = 1 : i64} : tensor<2x?xi64> -> tensor<2xbf16>
  %b = tfm.arange %ids {axis = 0 : i64, start = 1 : i64} : tensor<2x?xi64> -> tensor<2xbf16>
  return %rot, %odd, %ids3, %pos, %rel, %b : tensor<1x12x?x64xf32>, tensor<1x12x?x32xf32>, tensor<2x?xi64>, tensor<?xf32>, tensor<?xi32>, tensor<2xbf16>
}

/// DeBERTa's c2p gather along the last axis (more indices than rows is
/// fine: they pick), one along the first axis with i32 indices, and a
/// static index dim that fixes a `?` of the input off the axis.
// CHECK-LABEL: func.func @gather_elements
// CHECK-SAME: (%[[C2P:.+]]: tensor<1x12x?x8xf32>, %[[IDX:.+]]: tensor<1x12x?x?xi64>, %[[X:.+]]: tensor<?x4xi64>, %[[I:.+]]: tensor<3x4xi32>, %[[Y:.+]]: tensor<2x?xbf16>, %[[J:.+]]: tensor<2x5xi64>)
func.func @gather_elements(%c2p: tensor<1x12x?x8xf32>, %idx: tensor<1x12x?x?xi64>, %x: tensor<?x4xi64>,
                           %i: tensor<3x4xi32>, %y: tensor<2x?xbf16>, %j: tensor<2x5xi64>)
    -> (tensor<1x12x?x?xf32>, tensor<3x4xi64>, tensor<2x5xbf16>) {
  // CHECK: tfm.gather_elements %[[C2P]], %[[IDX]] {axis = 3 : i64} : tensor<1x12x?x8xf32>, tensor<1x12x?x?xi64> -> tensor<1x12x?x?xf32>
  %0 = tfm.gather_elements %c2p, %idx {axis = 3 : i64} : tensor<1x12x?x8xf32>, tensor<1x12x?x?xi64> -> tensor<1x12x?x?xf32>
  // CHECK: tfm.gather_elements %[[X]], %[[I]] {axis = 0 : i64} : tensor<?x4xi64>, tensor<3x4xi32> -> tensor<3x4xi64>
  %1 = tfm.gather_elements %x, %i {axis = 0 : i64} : tensor<?x4xi64>, tensor<3x4xi32> -> tensor<3x4xi64>
  // CHECK: tfm.gather_elements %[[Y]], %[[J]] {axis = 0 : i64} : tensor<2x?xbf16>, tensor<2x5xi64> -> tensor<2x5xbf16>
  %2 = tfm.gather_elements %y, %j {axis = 0 : i64} : tensor<2x?xbf16>, tensor<2x5xi64> -> tensor<2x5xbf16>
  return %0, %1, %2 : tensor<1x12x?x?xf32>, tensor<3x4xi64>, tensor<2x5xbf16>
}

/// DeBERTa's relative positions [1, Sq, Sk] to the [B*H, Sq, Sk] it
/// gathers with; a new leading dim and a stretched middle one; i1 masks
/// expand too.
// CHECK-LABEL: func.func @expand
// CHECK-SAME: (%[[P:.+]]: tensor<1x?x?xi64>, %[[X:.+]]: tensor<3x1x?xf32>, %[[M:.+]]: tensor<?xi1>)
func.func @expand(%p: tensor<1x?x?xi64>, %x: tensor<3x1x?xf32>, %m: tensor<?xi1>)
    -> (tensor<12x?x?xi64>, tensor<2x3x5x?xf32>, tensor<4x?xi1>) {
  // CHECK: tfm.expand %[[P]] : tensor<1x?x?xi64> -> tensor<12x?x?xi64>
  %0 = tfm.expand %p : tensor<1x?x?xi64> -> tensor<12x?x?xi64>
  // CHECK: tfm.expand %[[X]] : tensor<3x1x?xf32> -> tensor<2x3x5x?xf32>
  %1 = tfm.expand %x : tensor<3x1x?xf32> -> tensor<2x3x5x?xf32>
  // CHECK: tfm.expand %[[M]] : tensor<?xi1> -> tensor<4x?xi1>
  %2 = tfm.expand %m : tensor<?xi1> -> tensor<4x?xi1>
  return %0, %1, %2 : tensor<12x?x?xi64>, tensor<2x3x5x?xf32>, tensor<4x?xi1>
}

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:[^:]+]]: tensor<1x12x?x64xf32>, %[[K:[^:]+]]: tensor<1x12x?x64xf32>, %[[V:[^:]+]]: tensor<1x12x?x64xf32>
func.func @attention(%q: tensor<1x12x?x64xf32>, %k: tensor<1x12x?x64xf32>, %v: tensor<1x12x?x64xf32>,
                     %mask: tensor<1x1x?x?xf32>, %pad: tensor<1x?xi64>) -> (tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>) {
  // CHECK: tfm.attention %[[Q]], %[[K]], %[[V]] {causal = true, scale = 1.250000e-01 : f64} : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64, causal = true}
      : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  // CHECK: tfm.attention %[[Q]], %[[K]], %[[V]] mask(%{{.+}} : tensor<1x1x?x?xf32>) {scale = 1.250000e-01 : f64}
  %1 = tfm.attention %q, %k, %v mask(%mask : tensor<1x1x?x?xf32>) {scale = 0.125 : f64}
      : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  // CHECK: tfm.attention %[[Q]], %[[K]], %[[V]] key_padding_mask(%{{.+}} : tensor<1x?xi64>) {scale = 1.250000e-01 : f64}
  %2 = tfm.attention %q, %k, %v key_padding_mask(%pad : tensor<1x?xi64>) {scale = 0.125 : f64}
      : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  // CHECK: tfm.attention %[[Q]], %[[K]], %[[V]] mask(%{{.+}} : tensor<1x1x?x?xf32>) key_padding_mask(%{{.+}} : tensor<1x?xi64>) {causal = true, scale = 1.000000e+00 : f64}
  %3 = tfm.attention %q, %k, %v mask(%mask : tensor<1x1x?x?xf32>) key_padding_mask(%pad : tensor<1x?xi64>) {scale = 1.0 : f64, causal = true}
      : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32> -> tensor<1x12x?x64xf32>
  return %0, %1, %2, %3 : tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>, tensor<1x12x?x64xf32>
}

/// Grouped-query (8 query heads over 2 key/value heads) and multi-query
/// attention, cross attention (Sq != Sk), a value head dim that differs from
/// the query/key one, a dynamic batch, half precision, and a 2-D mask that
/// broadcasts over batch and heads.
// CHECK-LABEL: func.func @attention_variants
func.func @attention_variants(%q: tensor<?x8x16x64xf16>, %k: tensor<?x2x32x64xf16>, %v: tensor<2x2x32x128xf16>,
                              %k1: tensor<?x1x?x64xbf16>, %q1: tensor<3x4x?x64xbf16>, %m: tensor<?x?xbf16>)
    -> (tensor<2x8x16x128xf16>, tensor<3x4x?x64xbf16>) {
  // CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} {scale = 1.250000e-01 : f64} : tensor<?x8x16x64xf16>, tensor<?x2x32x64xf16>, tensor<2x2x32x128xf16> -> tensor<2x8x16x128xf16>
  %0 = tfm.attention %q, %k, %v {scale = 0.125 : f64}
      : tensor<?x8x16x64xf16>, tensor<?x2x32x64xf16>, tensor<2x2x32x128xf16> -> tensor<2x8x16x128xf16>
  // CHECK: tfm.attention %{{.+}}, %{{.+}}, %{{.+}} mask(%{{.+}} : tensor<?x?xbf16>) {scale = 1.250000e-01 : f64} : tensor<3x4x?x64xbf16>, tensor<?x1x?x64xbf16>, tensor<?x1x?x64xbf16> -> tensor<3x4x?x64xbf16>
  %1 = tfm.attention %q1, %k1, %k1 mask(%m : tensor<?x?xbf16>) {scale = 0.125 : f64}
      : tensor<3x4x?x64xbf16>, tensor<?x1x?x64xbf16>, tensor<?x1x?x64xbf16> -> tensor<3x4x?x64xbf16>
  return %0, %1 : tensor<2x8x16x128xf16>, tensor<3x4x?x64xbf16>
}
