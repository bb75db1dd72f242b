/* Part of every model library attune-compile links, and of every kernel
 * library attune-tune times (embedded in the compiler and compiled with the
 * system C compiler, see compiler/codegen/halide/ScratchCache.h): a cache of
 * freed scratch blocks behind Halide's halide_malloc / halide_free.
 *
 * Why. Halide allocates a kernel's intermediates on every call: the fused
 * attention kernel, for instance, allocates a tile's scores and
 * probabilities (tens of KB) once per key block of every query tile. glibc
 * serves such blocks from the top of its heap, and free() gives the top
 * back to the operating system whenever it grows past M_TRIM_THRESHOLD
 * (128 KiB, until the process has freed a block larger than that which was
 * mmap'd); the next call then faults every page in again. In a process
 * that had not freed such a large block, the fused attention library ran
 * at half speed (S=512, D=64, one thread, AMD EPYC Zen 5: 7.6 ms and about
 * 2,700 page faults a call, against 3.7 ms once the thresholds had moved):
 * speed depended on what the process had done before. Kept blocks make it
 * not depend on glibc's heuristics.
 *
 * How. Blocks are 64-byte aligned (Halide's x86 alignment) with a 64-byte
 * header holding their size, which is rounded up to a power of two (at
 * least 4 KiB): a kernel's requests vary from call to call and tile to tile
 * (a causal attention tile's partial results grow with its row, 12 KB to
 * 400 KB at S=2048), and classes let a growing request reuse the block its
 * predecessor freed; untouched pages of a rounded block cost no memory. A
 * freed block goes into a small cache shared by the library's threads (a
 * spin lock guards it: see lockCache); halide_malloc reuses the smallest cached block
 * that fits and is not more than twice the request's class. The cache holds
 * at most kSlots blocks and kMaxBytes bytes; a block that does not fit is
 * freed at once. Everything cached is freed when the library is unloaded.
 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef void *(*halide_malloc_t)(void *, size_t);
typedef void (*halide_free_t)(void *, void *);
/* From the Halide runtime linked into the same library. */
extern halide_malloc_t halide_set_custom_malloc(halide_malloc_t user_malloc);
extern halide_free_t halide_set_custom_free(halide_free_t user_free);

enum { kAlign = 64, kHeader = 64, kSlots = 16 };
static const size_t kMaxBytes = (size_t)64 << 20; /* 64 MiB cached at most */

struct slot {
  unsigned char *base; /* what posix_memalign returned; NULL when empty */
  size_t size;         /* usable bytes after the header */
};

static int locked; /* atomic: the cache is held */
static struct slot slots[kSlots];
static size_t cachedBytes;

/* A spin lock rather than a mutex: the cache is held for a scan of kSlots
 * entries (tens of nanoseconds), and a contended pthread mutex puts the
 * waiter to sleep in the kernel and wakes it with another system call. The
 * tasks of a fused attention loop allocate and free a few blocks each, so
 * on 2 threads they met at the lock often: llama-tiny at 64 tokens spent
 * about a tenth of its 2-thread run in futex calls (Intel Xeon). A holder
 * preempted by the hypervisor is waited out with sched_yield. */
static void lockCache(void) {
  while (__atomic_exchange_n(&locked, 1, __ATOMIC_ACQUIRE))
    for (unsigned spins = 0; __atomic_load_n(&locked, __ATOMIC_RELAXED); ++spins) {
      if (spins < 1000) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
      } else {
        sched_yield();
      }
    }
}

static void unlockCache(void) { __atomic_store_n(&locked, 0, __ATOMIC_RELEASE); }

/* The size class of a request of n usable bytes: a power of two, at least
 * 4 KiB; 0 when it would overflow. */
static size_t sizeClass(size_t n) {
  size_t c = 4096;
  while (c < n) {
    if (c > SIZE_MAX / 2)
      return 0;
    c *= 2;
  }
  return c;
}

static void *scratchMalloc(void *user_context, size_t bytes) {
  (void)user_context;
  /* Halide may read 8 bytes past the end: one more alignment unit. */
  if (bytes > SIZE_MAX - kAlign)
    return NULL;
  size_t want = sizeClass(bytes + kAlign);
  if (want == 0)
    return NULL;
  unsigned char *base = NULL;
  lockCache();
  int best = -1;
  for (int i = 0; i < kSlots; ++i)
    if (slots[i].base && slots[i].size >= want && slots[i].size / 2 <= want &&
        (best < 0 || slots[i].size < slots[best].size))
      best = i;
  if (best >= 0) {
    base = slots[best].base;
    cachedBytes -= slots[best].size;
    slots[best].base = NULL;
  }
  unlockCache();
  if (!base) {
    if (want > SIZE_MAX - kHeader)
      return NULL;
    void *p = NULL;
    if (posix_memalign(&p, kAlign, kHeader + want) != 0)
      return NULL;
    base = (unsigned char *)p;
    *(size_t *)base = want;
  }
  return base + kHeader;
}

static void scratchFree(void *user_context, void *ptr) {
  (void)user_context;
  if (!ptr)
    return;
  unsigned char *base = (unsigned char *)ptr - kHeader;
  size_t size = *(size_t *)base;
  int kept = 0;
  lockCache();
  if (size <= kMaxBytes - cachedBytes)
    for (int i = 0; i < kSlots; ++i)
      if (!slots[i].base) {
        slots[i].base = base;
        slots[i].size = size;
        cachedBytes += size;
        kept = 1;
        break;
      }
  unlockCache();
  if (!kept)
    free(base);
}

__attribute__((constructor)) static void installScratchCache(void) {
  halide_set_custom_malloc(scratchMalloc);
  halide_set_custom_free(scratchFree);
}

__attribute__((destructor)) static void releaseScratchCache(void) {
  lockCache();
  for (int i = 0; i < kSlots; ++i) {
    free(slots[i].base);
    slots[i].base = NULL;
  }
  cachedBytes = 0;
  unlockCache();
}
