// RUN: attune-compile %s -o %t.so
// RUN: rm -rf %t.d && mkdir -p %t.d
// RUN: python3 -c "import numpy as np, sys; d = sys.argv[1] + '/'; x = np.random.default_rng(0).standard_normal((1, 5, 16), dtype=np.float32); \
// RUN:   np.save(d + 'ids.npy', np.array([[3, 1, 4, 1, 5]], np.int64)); np.save(d + 'x.npy', x); np.save(d + 'keep.npy', np.array([1, 0, 1, 1, 0], bool).reshape(1, 5, 1)); \
// RUN:   np.save(d + 'x64.npy', x.astype(np.float64)); np.save(d + 'keep_u8.npy', np.ones((1, 5, 1), np.uint8)); np.save(d + 'ids6.npy', np.zeros((1, 6), np.int64)); \
// RUN:   np.save(d + 'x8.npy', x[:, :, :8]); np.save(d + 'ids_1d.npy', np.zeros(5, np.int64)); np.save(d + 'fortran.npy', np.asfortranarray(x)); \
// RUN:   open(d + 'truncated.npy', 'wb').write(open(d + 'x.npy', 'rb').read()[:-4])" %t.d

/// Every input from a .npy file: the files' shapes set seq = 5 (no --dim),
/// the outputs land in a new directory as .npy files NumPy reads back, and
/// agree with the reference evaluator and with NumPy's own arithmetic.
// RUN: attune-run %t.so --input ids=@%t.d/ids.npy --input x=@%t.d/x.npy --input keep=@%t.d/keep.npy --output %t.d/out --check-reference | FileCheck %s
// RUN: python3 -c "import numpy as np, sys; d = sys.argv[1] + '/'; x = np.load(d + 'x.npy'); y = np.load(d + 'out/y.npy'); m = np.load(d + 'out/masked.npy'); \
// RUN:   assert y.dtype == m.dtype == np.float32 and y.shape == m.shape == (1, 5, 16), (y.dtype, y.shape, m.dtype, m.shape); \
// RUN:   assert (m == np.where(np.load(d + 'keep.npy'), x, 0)).all(), m; \
// RUN:   assert np.allclose((y - x)[0, 1], (y - x)[0, 3], atol=1e-6), 'ids 1 and 1 gave different rows'; print('outputs match numpy')" %t.d | FileCheck %s --check-prefix=NUMPY

// CHECK: input 'ids' i64[1x5]
// CHECK: input 'x' f32[1x5x16]
// CHECK: input 'keep' bool[1x5x1]
// CHECK: wrote '{{.*}}out/y.npy'
// CHECK: wrote '{{.*}}out/masked.npy'
// CHECK: reference 'y': {{.*}}: ok)
// CHECK: reference 'masked': {{.*}}: ok)
// NUMPY: outputs match numpy

/// Each file that does not fit its input is refused before anything runs,
/// naming the input, the file and both sides of the mismatch.
// RUN: not attune-run %t.so --input ids=@%t.d/ids.npy --input x=@%t.d/x64.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=DTYPE
// RUN: not attune-run %t.so --input keep=@%t.d/keep_u8.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=DTYPE-BOOL
// RUN: not attune-run %t.so --input ids=@%t.d/ids6.npy --input x=@%t.d/x.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=DIM-CONFLICT
// RUN: not attune-run %t.so --input ids=@%t.d/ids.npy --dim seq=4 --random-inputs 2>&1 | FileCheck %s --check-prefix=DIM-FLAG
// RUN: not attune-run %t.so --input x=@%t.d/x8.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=STATIC
// RUN: not attune-run %t.so --input ids=@%t.d/ids_1d.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=RANK
// RUN: not attune-run %t.so --input x=@%t.d/truncated.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// RUN: not attune-run %t.so --input x=@%t.d/fortran.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=FORTRAN
// RUN: not attune-run %t.so --input x=@%t.d/missing.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not attune-run %t.so --input ids=@%t.d/ids.npy --input x=%t.d/x.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=RAW-NPY
// RUN: not attune-run %t.so --input x=@%t.d/x.npy --input x=@%t.d/x.npy --random-inputs 2>&1 | FileCheck %s --check-prefix=TWICE
// RUN: not attune-run %t.so --input x=@ --random-inputs 2>&1 | FileCheck %s --check-prefix=NO-PATH

// DTYPE: attune-run: error: input 'x' is f32 but '{{.*}}x64.npy' holds f64 (<f8): save arr.astype(np.float32)
// DTYPE-BOOL: attune-run: error: input 'keep' is bool but '{{.*}}keep_u8.npy' holds u8 (|u1): save arr.astype(bool)
// DIM-CONFLICT: attune-run: error: dimension 'seq' is 6 in '{{.*}}ids6.npy' (input 'ids' dimension 1) but 5 in '{{.*}}x.npy' (input 'x' dimension 1)
// DIM-FLAG: attune-run: error: dimension 'seq' is 4 in --dim seq=4 but 5 in '{{.*}}ids.npy' (input 'ids' dimension 1)
// STATIC: attune-run: error: input 'x' has shape [1, seq, 16], '{{.*}}x8.npy' has shape (1, 5, 8): dimension 2 must be 16
// RANK: attune-run: error: input 'ids' has shape [1, seq] (rank 2), '{{.*}}ids_1d.npy' has shape (5,) (rank 1)
// TRUNCATED: attune-run: error: input 'x': '{{.*}}truncated.npy' is truncated: it has 444 bytes, expected 448 (a 128-byte header and 320 bytes of <f4 data of shape (1, 5, 16))
// FORTRAN: attune-run: error: input 'x': '{{.*}}fortran.npy': Fortran-order arrays are not supported
// MISSING: attune-run: error: input 'x': cannot open '{{.*}}missing.npy': {{[Nn]}}o such file or directory
// RAW-NPY: attune-run: error: input 'x' file '{{.*}}x.npy' has 448 bytes, expected 320 for shape [1x5x16] f32 (a .npy file is given as --input x=@FILE)
// TWICE: attune-run: error: input 'x' is given by --input twice
// NO-PATH: attune-run: error: --input expects name=@FILE.npy or name=FILE, got 'x=@'

func.func @npy(%ids: tensor<1x?xi64> {tfm.name = "ids", tfm.dim_names = ["batch", "seq"]},
               %x: tensor<1x?x16xf32> {tfm.name = "x", tfm.dim_names = ["batch", "seq", "d"]},
               %keep: tensor<1x?x1xi1> {tfm.name = "keep", tfm.dim_names = ["batch", "seq", "one"]})
    -> (tensor<1x?x16xf32> {tfm.name = "y"}, tensor<1x?x16xf32> {tfm.name = "masked"}) {
  %table = tfm.weight "wte" : tensor<10x16xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %e = tfm.embedding %table, %ids : tensor<10x16xf32>, tensor<1x?xi64> -> tensor<1x?x16xf32>
  %y = tfm.add %e, %x : tensor<1x?x16xf32>, tensor<1x?x16xf32> -> tensor<1x?x16xf32>
  %masked = tfm.where %keep, %x, %zero : tensor<1x?x1xi1>, tensor<1x?x16xf32>, tensor<f32> -> tensor<1x?x16xf32>
  return %y, %masked : tensor<1x?x16xf32>, tensor<1x?x16xf32>
}
