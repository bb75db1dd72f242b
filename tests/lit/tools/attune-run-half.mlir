// RUN: attune-compile %s -o %t.so
// Compiled afresh, without Halide's "(b)float16 type operation is emulated"
// warning: one line per variant of b_relu's kernel before, none now.
// RUN: attune-compile %s -o %t.fresh.so --no-kernel-cache 2>&1 | FileCheck %s --check-prefix=QUIET --allow-empty
// RUN: attune-run %t.so --random-inputs --dim n=5 --check-reference | FileCheck %s
// RUN: rm -rf %t.d && mkdir -p %t.d
// RUN: python3 -c "import numpy as np, sys; d = sys.argv[1] + '/'; \
// RUN:   np.save(d + 'h.npy', np.array([[-1.5, 0.25, 65504, -0.0], [2.0 ** -24, 2, -3, 0.1]], np.float16)); \
// RUN:   np.save(d + 'b.npy', np.array([[1.00390625, 1.01171875, -2, 3.14159], [0.5, -0.25, 96, 0]], np.float32))" %t.d
// RUN: attune-run %t.so --input h=@%t.d/h.npy --input b=@%t.d/b.npy --output %t.d/out --check-reference | FileCheck %s --check-prefix=NPY
// RUN: python3 -c "import numpy as np, sys; d = sys.argv[1] + '/'; h = np.load(d + 'out/h_relu.npy'); b = np.load(d + 'out/b_relu.npy'); \
// RUN:   assert h.dtype == np.float16 and (h == np.maximum(np.load(d + 'h.npy'), 0)).all(), h; \
// RUN:   assert b.dtype == np.float32 and (b == np.array([[1, 1.015625, 0, 3.140625], [0.5, 0, 96, 0]], np.float32)).all(), b; print('outputs match numpy')" %t.d | FileCheck %s --check-prefix=NUMPY
// RUN: not attune-run %t.so --input b=@%t.d/h.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=DTYPE

/// attune-run makes, prints and checks f16 and bf16 tensors: random inputs
/// rounded to the type, outputs read exactly.

// QUIET-NOT: emulated

// CHECK: input 'h' f16[2x5]
// CHECK: input 'b' bf16[2x5]
// CHECK: output 'h_relu' f16[2x5]: mean
// CHECK: output 'b_relu' bf16[2x5]: mean
// CHECK: reference 'h_relu': {{.*}}: ok)
// CHECK: reference 'b_relu': {{.*}}: ok)

/// In .npy files f16 travels as <f2 (the extremes 65504 and 2^-24 too) and
/// bf16, which NumPy lacks, as f32: read rounded to nearest even (1 + 2^-8
/// is a tie that rounds down to 1, 1 + 3 * 2^-8 one that rounds up to
/// 1 + 2^-6, and 3.14159 becomes 3.140625), written widened, which is exact.

// NPY: input 'h' f16[2x4]
// NPY: input 'b' bf16[2x4]
// NPY: reference 'h_relu': {{.*}}: ok)
// NPY: reference 'b_relu': {{.*}}: ok)
// NUMPY: outputs match numpy
// DTYPE: attune-run: error: input 'b' is bf16, read from f32 since NumPy has no bf16; '{{.*}}h.npy' holds f16 (<f2): save arr.astype(np.float32)

func.func @half(%h: tensor<2x?xf16> {tfm.name = "h", tfm.dim_names = ["two", "n"]},
                %b: tensor<2x?xbf16> {tfm.name = "b", tfm.dim_names = ["two", "n"]})
    -> (tensor<2x?xf16> {tfm.name = "h_relu"}, tensor<2x?xbf16> {tfm.name = "b_relu"}) {
  %hr = tfm.relu %h : tensor<2x?xf16> -> tensor<2x?xf16>
  %br = tfm.relu %b : tensor<2x?xbf16> -> tensor<2x?xbf16>
  return %hr, %br : tensor<2x?xf16>, tensor<2x?xbf16>
}
