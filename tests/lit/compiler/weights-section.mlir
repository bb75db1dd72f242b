// RUN: rm -rf %t && mkdir -p %t
// RUN: attune-compile %s -o %t/lib.so
// RUN: readelf -SW %t/lib.so | FileCheck %s
// RUN: readelf -SW %t/lib.a | FileCheck %s --check-prefix=ARCHIVE
// RUN: attune-run %t/lib.so --dim=seq=3 --random-inputs --check-reference | FileCheck %s --check-prefix=EXEC

/// Embedded weights live in .lrodata, an x86-64 large section (flag l), which
/// the linker places after .bss: code, the GOT and small data stay within the
/// ±2 GiB of a 32-bit PC-relative reference however large the weights are.
/// In .rodata, weights over ~2 GiB pushed them out of reach and the link
/// failed with relocation overflows (tests/lit/large/over-2gib.mlir compiles
/// such a model; it runs with ATTUNE_LARGE_TESTS=1).

// The table, 1000 x 64 f32 = 256000 bytes = 0x3e800, is in .lrodata (with
// a few bytes of the kernels' large constants), flags A (allocated) and l
// (large); .rodata keeps under 64 KiB.
// CHECK: .rodata PROGBITS {{[0-9a-f]+}} {{[0-9a-f]+}} 00{{[0-9a-f][0-9a-f][0-9a-f][0-9a-f]}} 00 A
// CHECK: .lrodata PROGBITS {{[0-9a-f]+}} {{[0-9a-f]+}} 03e{{[89a-f][0-9a-f][0-9a-f]}} 00 Al
// ARCHIVE: .lrodata PROGBITS {{[0-9a-f]+}} {{[0-9a-f]+}} 03e{{[89a-f][0-9a-f][0-9a-f]}} 00 Al

// EXEC: reference 'rows': max abs err 0,{{.*}}: ok)
module {
  func.func @lookup(%ids: tensor<?xi32> {tfm.name = "ids", tfm.dim_names = ["seq"]})
      -> (tensor<?x64xf32> {tfm.name = "rows"}) {
    %t = tfm.weight "table" : tensor<1000x64xf32>
    %e = tfm.embedding %t, %ids : tensor<1000x64xf32>, tensor<?xi32> -> tensor<?x64xf32>
    return %e : tensor<?x64xf32>
  }
}
