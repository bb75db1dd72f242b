// REQUIRES: large-tests
// RUN: rm -rf %t && mkdir -p %t
// RUN: attune-compile %s -o %t/big.so
// RUN: readelf -SW %t/big.so | FileCheck %s
// RUN: python3 -c "import struct, sys; open(sys.argv[1], 'wb').write(struct.pack('<3i', 0, 524288, 599999))" %t/ids.bin
// RUN: attune-run %t/big.so --input=ids=%t/ids.bin --dim=seq=3 --check-reference | FileCheck %s --check-prefix=EXEC
// RUN: rm -rf %t

/// A model whose embedded weights pass 2 GiB (600000 x 1024 f32, 2457600000
/// bytes) links, and its rows below and beyond the 2 GiB mark (524288 x 4096
/// bytes) read what the reference evaluator computes. It used to fail at the linker after ~66 s and
/// ~9.4 GB with relocation overflows, the weights in .rodata having pushed
/// the GOT and .data out of the code's ±2 GiB reach. Needs ~10 GB of disk
/// and a few minutes: run with ATTUNE_LARGE_TESTS=1 (lit -Dlarge or the
/// environment variable), not in CI.

// 2457600000 = 0x927c0000
// CHECK: .lrodata PROGBITS {{[0-9a-f]+}} {{[0-9a-f]+}} 927c{{[0-9a-f][0-9a-f][0-9a-f][0-9a-f]}} 00 Al
// EXEC: reference 'rows': max abs err 0,{{.*}}: ok)
module {
  func.func @big(%ids: tensor<?xi32> {tfm.name = "ids", tfm.dim_names = ["seq"]})
      -> (tensor<?x1024xf32> {tfm.name = "rows"}) {
    %t = tfm.weight "table" : tensor<600000x1024xf32>
    %e = tfm.embedding %t, %ids : tensor<600000x1024xf32>, tensor<?xi32> -> tensor<?x1024xf32>
    return %e : tensor<?x1024xf32>
  }
}
