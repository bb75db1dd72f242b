// RUN: not attune-tune -o %t.json --isa=avx9 2>&1 | FileCheck %s --check-prefix=ISA
// RUN: not attune-tune -o %t.json --kernels=no_such_kernel 2>&1 | FileCheck %s --check-prefix=FILTER
// RUN: not attune-tune -o %t.json --runs=0 2>&1 | FileCheck %s --check-prefix=RUNS
// RUN: env ATTUNE_CPU=bogus not attune-tune -o %t.json 2>&1 | FileCheck %s --check-prefix=CAP
// RUN: rm -f %t.json && attune-tune -o %t.json --isa=avx2 --kernels=linear_f32_nobias --budget-seconds=0 --runs=1 | FileCheck %s --check-prefix=TUNE
// RUN: FileCheck %s --check-prefix=DB --input-file=%t.json
// RUN: attune-compile %s --emit=llvm -o /dev/null --tuning=%t.json --verbose 2>&1 | FileCheck %s --check-prefix=READ

/// attune-tune writes a database attune-compile reads back. With no budget
/// it still times the formula, so the entry it writes is the formula's
/// parameters, pinned, with what they measured.

// ISA: attune-tune: error: unknown --isa level 'avx9', expected baseline, avx2, avx512, avx512_zen4 or avx512_spr
// CAP: attune-tune: error: ATTUNE_CPU='bogus' is not a CPU level
// FILTER: attune-tune: error: no kernel's tuning key contains 'no_such_kernel'
// RUNS: attune-tune: error: --runs must be at least 1

// TUNE: avx2 linear_f32_nobias {{{.*}}} {{[0-9.]+}} GFLOP/s, formula {{[0-9.]+}} (1.00x); 1/{{[0-9]+}} timed
// TUNE: attune-tune: wrote {{.*}}.json (1 entries)

/// Keys are written sorted, so a re-run diffs cleanly.
// DB: "entries": [
// DB: "isa": "avx2"
// DB: "kernel": "linear_f32_nobias"
// DB: "measured": {
// DB: "params": {
// DB: "format": "attune-tuning"
// DB: "version": 1

// READ: attune-compile: tuning attune_linear_f32_nobias linear_f32_nobias: avx2 {panel_vectors={{[0-9]+}}, rows={{[0-9]+}}}

func.func @model(%x: tensor<?x8xf32>, %w: tensor<8x16xf32>) -> tensor<?x16xf32> {
  %y = tfm.linear %x, %w : tensor<?x8xf32>, tensor<8x16xf32> -> tensor<?x16xf32>
  return %y : tensor<?x16xf32>
}
