//===- Cpu.cpp - what the host CPU and OS let this process execute --------===//
//
// The one place attune decides which x86-64 instruction-set level may run.
// A feature counts only when CPUID reports it *and* the OS saves the register
// state it needs (XCR0, read with XGETBV): a hypervisor may hide AVX-512
// state from a guest whose CPU model has it, and code that trusts the model
// number (as Halide 21's host-target detection does) then dies with SIGILL.
//
//===----------------------------------------------------------------------===//

#pragma GCC visibility push(default)
#include "attune/runtime.h"
#pragma GCC visibility pop

#include "runtime/src/Status.h"

#include <cstdlib>
#include <cstring>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
#endif

namespace {

#if defined(__x86_64__) || defined(__i386__)
struct CpuidRegs {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
};

CpuidRegs cpuid(unsigned leaf, unsigned subleaf) {
  CpuidRegs r;
  if (!__get_cpuid_count(leaf, subleaf, &r.eax, &r.ebx, &r.ecx, &r.edx))
    r = CpuidRegs();
  return r;
}

bool bit(unsigned reg, int index) { return (reg >> index) & 1u; }

/// XCR0: which register state the OS saves on a context switch.
unsigned long long readXcr0() {
  unsigned eax, edx;
  __asm__ volatile("xgetbv" : "=a"(eax), "=d"(edx) : "c"(0));
  return (static_cast<unsigned long long>(edx) << 32) | eax;
}

/// Linux gives a process AMX's tile data state only when asked
/// (ARCH_REQ_XCOMP_PERM, kernel 5.16 on); before that a tile instruction
/// raises SIGILL even though XCR0 enables the state. Asked here, once, so
/// that avx512_spr is chosen only where its kernels may use the tiles
/// (runtime/model/amx_kernels.c asks too, for processes that JIT).
bool amxPermitted() {
#if defined(__linux__) && defined(SYS_arch_prctl)
  const long ARCH_REQ_XCOMP_PERM = 0x1023, XFEATURE_XTILEDATA = 18;
  return syscall(SYS_arch_prctl, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) == 0;
#else
  return false;
#endif
}

attune_isa_t detectHostIsa() {
  const unsigned maxLeaf = cpuid(0, 0).eax;
  const CpuidRegs l1 = cpuid(1, 0);
  // Without OSXSAVE there is no XGETBV and no AVX state: baseline.
  if (!bit(l1.ecx, 27))
    return ATTUNE_ISA_BASELINE;
  const unsigned long long xcr0 = readXcr0();
  const bool osYmm = (xcr0 & 0x6) == 0x6;            // SSE + AVX state
  const bool osZmm = osYmm && (xcr0 & 0xe0) == 0xe0; // opmask + ZMM0-31
  const bool osAmx = (xcr0 & 0x60000) == 0x60000;    // XTILECFG + XTILEDATA
  const CpuidRegs l7 = maxLeaf >= 7 ? cpuid(7, 0) : CpuidRegs();
  const CpuidRegs l7s1 = maxLeaf >= 7 ? cpuid(7, 1) : CpuidRegs();

  const bool avx2 = osYmm && bit(l1.ecx, 28) /*AVX*/ && bit(l1.ecx, 12) /*FMA*/ &&
                    bit(l1.ecx, 29) /*F16C*/ && bit(l7.ebx, 5) /*AVX2*/;
  if (!avx2)
    return ATTUNE_ISA_BASELINE;
  const bool avx512 = osZmm && bit(l7.ebx, 16) /*F*/ && bit(l7.ebx, 28) /*CD*/ &&
                      bit(l7.ebx, 30) /*BW*/ && bit(l7.ebx, 17) /*DQ*/ &&
                      bit(l7.ebx, 31) /*VL*/;
  if (!avx512)
    return ATTUNE_ISA_AVX2;
  // Halide's avx512_zen4 feature set, and what LLVM's znver4 model may use
  // of the AVX-512 family beside it.
  const bool zen4 = bit(l7.ebx, 21) /*IFMA*/ && bit(l7.ecx, 1) /*VBMI*/ &&
                    bit(l7.ecx, 6) /*VBMI2*/ && bit(l7.ecx, 11) /*VNNI*/ &&
                    bit(l7.ecx, 12) /*BITALG*/ && bit(l7.ecx, 14) /*VPOPCNTDQ*/ &&
                    bit(l7.ecx, 8) /*GFNI*/ && bit(l7.ecx, 9) /*VAES*/ &&
                    bit(l7.ecx, 10) /*VPCLMULQDQ*/ && bit(l7s1.eax, 5) /*AVX512-BF16*/;
  if (!zen4)
    return ATTUNE_ISA_AVX512;
  const bool spr = bit(l7.edx, 23) /*AVX512-FP16*/ && bit(l7s1.eax, 4) /*AVX-VNNI*/ &&
                   osAmx && bit(l7.edx, 24) /*AMX-TILE*/ && bit(l7.edx, 22) /*AMX-BF16*/ &&
                   amxPermitted();
  return spr ? ATTUNE_ISA_AVX512_SPR : ATTUNE_ISA_AVX512_ZEN4;
}
#else
attune_isa_t detectHostIsa() { return ATTUNE_ISA_BASELINE; }
#endif

constexpr const char *kIsaNames[] = {"baseline", "avx2", "avx512", "avx512_zen4",
                                     "avx512_spr"};
constexpr int kNumIsas = sizeof(kIsaNames) / sizeof(kIsaNames[0]);

} // namespace

attune_isa_t attune_host_isa(void) {
  // CPUID and XCR0 do not change while a process runs.
  static const attune_isa_t host = detectHostIsa();
  return host;
}

const char *attune_isa_name(attune_isa_t isa) {
  int index = static_cast<int>(isa);
  return index >= 0 && index < kNumIsas ? kIsaNames[index] : "unknown";
}

attune_status_t attune_isa_from_name(const char *name, attune_isa_t *out_isa) {
  if (!name || !out_isa)
    return attune::runtime::fail(ATTUNE_INVALID_ARGUMENT,
                                 "attune_isa_from_name: name and out_isa must not be NULL");
  for (int i = 0; i < kNumIsas; ++i) {
    if (std::strcmp(name, kIsaNames[i]) == 0) {
      *out_isa = static_cast<attune_isa_t>(i);
      return ATTUNE_OK;
    }
  }
  return attune::runtime::fail(
      ATTUNE_INVALID_ARGUMENT,
      "unknown CPU level '%s', expected baseline, avx2, avx512, avx512_zen4 or "
      "avx512_spr",
      name);
}

attune_status_t attune_cpu_isa(attune_isa_t *out_isa) {
  if (!out_isa)
    return attune::runtime::fail(ATTUNE_INVALID_ARGUMENT,
                                 "attune_cpu_isa: out_isa must not be NULL");
  const attune_isa_t host = attune_host_isa();
  const char *cap = std::getenv("ATTUNE_CPU");
  if (!cap || !*cap) {
    *out_isa = host;
    return ATTUNE_OK;
  }
  attune_isa_t requested = ATTUNE_ISA_BASELINE;
  if (attune_isa_from_name(cap, &requested) != ATTUNE_OK)
    return attune::runtime::fail(
        ATTUNE_INVALID_ARGUMENT,
        "ATTUNE_CPU='%s' is not a CPU level: expected baseline, avx2, avx512, "
        "avx512_zen4 or avx512_spr",
        cap);
  if (requested > host)
    return attune::runtime::fail(
        ATTUNE_INVALID_ARGUMENT,
        "ATTUNE_CPU='%s' asks for more than this machine can execute (its best "
        "level is %s)",
        cap, attune_isa_name(host));
  *out_isa = requested;
  return ATTUNE_OK;
}
