// RUN: attune-compile %s --emit=llvm -o /dev/null --tuning=%S/Inputs/tuning-good.json --verbose 2>&1 | FileCheck %s --check-prefix=GOOD
// RUN: attune-compile %s --emit=llvm -o /dev/null --tuning=none --verbose 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: attune-compile %s --emit=llvm -o /dev/null --verbose 2>&1 | FileCheck %s --check-prefix=DEFAULT
// RUN: rm -rf %t && attune-compile %s --emit=llvm -o /dev/null --tuning=%S/Inputs/tuning-good.json --dump-phases-to=%t && FileCheck %s --check-prefix=DUMP --input-file=%t/11-tuning.txt
// RUN: not attune-compile %s --emit=mlir --tuning=%t.does-not-exist.json 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not attune-compile %s --emit=mlir --tuning=%S/Inputs/tuning-version2.json 2>&1 | FileCheck %s --check-prefix=VERSION
// RUN: not attune-compile %s --emit=mlir --tuning=%S/Inputs/tuning-bad-isa.json 2>&1 | FileCheck %s --check-prefix=ISA
// RUN: not attune-compile %s --emit=mlir --tuning=%S/Inputs/tuning-bad-param.json 2>&1 | FileCheck %s --check-prefix=PARAM

/// --tuning picks each kernel's schedule parameters from a database by ISA
/// level and kernel signature; a kernel or level without an entry keeps the
/// builder's formula. --verbose and the phase dump say which it got, and a
/// database that cannot be read is one clear error, before any compile.

// GOOD-DAG: attune-compile: tuning attune_linear_f32_bias linear_f32_bias: avx2 {panel_vectors=2, rows=4}, avx512 formula, avx512_spr formula
// GOOD-DAG: attune-compile: tuning attune_softmax_f32 softmax_f32: avx2 formula, avx512 {rows=8}, avx512_spr {rows=8} from avx512
// GOOD-DAG: attune-compile: tuning attune_linear_f32_nobias linear_f32_nobias: avx2 formula, avx512 formula, avx512_spr formula

// NONE-DAG: attune-compile: tuning attune_linear_f32_bias linear_f32_bias: formula
// NONE-DAG: attune-compile: tuning attune_softmax_f32 softmax_f32: formula

/// The shipped database is read by default (it must exist in every build).
// DEFAULT: attune-compile: tuning attune_linear_f32_bias linear_f32_bias:

// DUMP-DAG: attune_linear_f32_bias linear_f32_bias: avx2 {panel_vectors=2, rows=4}, avx512 formula, avx512_spr formula
// DUMP-DAG: attune_softmax_f32 softmax_f32: avx2 formula, avx512 {rows=8}, avx512_spr {rows=8} from avx512

// MISSING: attune-compile: error: --tuning: '{{.*}}does-not-exist.json': cannot read the tuning database: {{[Nn]}}o such file or directory
// VERSION: attune-compile: error: --tuning: '{{.*}}tuning-version2.json': unsupported version 2 (this compiler reads version 1)
// ISA: attune-compile: error: --tuning: '{{.*}}tuning-bad-isa.json': entries[0] has unknown isa 'avx1024'
// PARAM: attune-compile: error: --tuning: '{{.*}}tuning-bad-param.json': entries[0] ('linear_f32_bias') param 'rows' is "four", expected an integer

func.func @model(%x: tensor<?x8xf32>, %w: tensor<8x16xf32>, %b: tensor<16xf32>, %w2: tensor<16x4xf32>) -> tensor<?x4xf32> {
  %h = tfm.linear %x, %w, %b : tensor<?x8xf32>, tensor<8x16xf32>, tensor<16xf32> -> tensor<?x16xf32>
  %s = tfm.softmax %h {axis = -1 : i64} : tensor<?x16xf32> -> tensor<?x16xf32>
  %y = tfm.linear %s, %w2 : tensor<?x16xf32>, tensor<16x4xf32> -> tensor<?x4xf32>
  return %y : tensor<?x4xf32>
}
