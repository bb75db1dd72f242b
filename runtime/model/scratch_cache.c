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
 * freed block goes into a few slots of the thread's own (see localSlots),
 * else into a small cache shared by the library's threads (a spin lock
 * guards it: see lockCache); halide_malloc reuses the smallest cached block
 * that fits and is not more than twice the request's class. The cache holds
 * at most kSlots blocks and kMaxBytes bytes; a block that does not fit is
 * freed at once. The shared cache is freed when the library is unloaded.
 */
#define _POSIX_C_SOURCE 200112L /* posix_memalign */
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

typedef void *(*halide_malloc_t)(void *, size_t);
typedef void (*halide_free_t)(void *, void *);
/* From the Halide runtime linked into the same library. */
extern halide_malloc_t halide_set_custom_malloc(halide_malloc_t user_malloc);
extern halide_free_t halide_set_custom_free(halide_free_t user_free);
/* glibc's registration of a destructor run when the calling thread exits,
 * on behalf of the shared object `dso` (what C++ thread_local uses). While
 * a living thread has one pending, dlclose keeps that object loaded
 * (l_tls_dtor_count), so the destructor never runs in an unmapped library. */
extern int __cxa_thread_atexit_impl(void (*func)(void *), void *obj, void *dso);
extern void *__dso_handle; /* this shared object (crtbeginS.o) */

enum { kAlign = 64, kHeader = 64, kSlots = 16, kLocalSlots = 4 };
static const size_t kMaxBytes = (size_t)64 << 20; /* 64 MiB cached at most */
/* Blocks up to this size are kept per thread first (see localSlots). */
static const size_t kLocalMaxBytes = (size_t)1 << 20;

struct slot {
  unsigned char *base; /* what posix_memalign returned; NULL when empty */
  size_t size;         /* usable bytes after the header */
};

static int locked; /* atomic: the cache is held */
static struct slot slots[kSlots];

/* Each thread's own few blocks, used before the shared cache. Even an
 * uncontended lock is a locked instruction, which waits for the thread's
 * pending stores; the fused attention allocates and frees a few blocks per
 * key block of every tile, and the lock took 1.9% of its time on one thread
 * and 5.5% on two (S=2048, Intel Xeon). A thread's blocks are freed when it
 * exits, by a thread-exit destructor registered with glibc on behalf of
 * this library (registerThread), which keeps the library loaded until it
 * has run. A pthread key's destructor, used before, gave no such guarantee:
 * a thread exiting while another thread's dlclose unloaded the library could
 * call it after its code was unmapped (tests/tsan's OpenAndCloseConcurrently
 * crashed so about one run in five). The pool's workers, which only the
 * library's unloading stops, free their blocks as they stop instead
 * (par_for.c's workerMain). */
static __thread struct slot localSlots[kLocalSlots];
static __thread int localRegistered; /* this thread's blocks will be freed */
static int unloading; /* atomic: the library's destructor ran; no caching */
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

/* Takes the smallest block of slots[0, n) that fits `want` and is not
 * more than twice its class; NULL if none. */
static unsigned char *takeFit(struct slot *s, int n, size_t want) {
  int best = -1;
  for (int i = 0; i < n; ++i)
    if (s[i].base && s[i].size >= want && s[i].size / 2 <= want &&
        (best < 0 || s[i].size < s[best].size))
      best = i;
  if (best < 0)
    return NULL;
  unsigned char *base = s[best].base;
  s[best].base = NULL;
  return base;
}

/* Puts a block into an empty slot of slots[0, n); 0 if none. */
static int putBlock(struct slot *s, int n, unsigned char *base, size_t size) {
  for (int i = 0; i < n; ++i)
    if (!s[i].base) {
      s[i].base = base;
      s[i].size = size;
      return 1;
    }
  return 0;
}

static void freeLocal(void *unused) {
  (void)unused;
  for (int i = 0; i < kLocalSlots; ++i) {
    free(localSlots[i].base);
    localSlots[i].base = NULL;
  }
}

/* For par_for.c's workers, in the same translation unit (model_support.c):
 * a worker frees its blocks as it stops, not with a thread-exit destructor
 * (see localSlots). */
#define ATTUNE_SCRATCH_CACHE 1
static void scratchWorkerStarts(void) { localRegistered = 1; }
static void scratchWorkerStops(void) { freeLocal(NULL); }

/* Arranges for this thread's blocks to be freed when it exits. 0 when it
 * cannot: the thread then keeps no blocks of its own. */
static int registerThread(void) {
  if (localRegistered)
    return 1;
  if (__cxa_thread_atexit_impl(freeLocal, NULL, &__dso_handle) != 0)
    return 0;
  localRegistered = 1;
  return 1;
}

static void *scratchMalloc(void *user_context, size_t bytes) {
  (void)user_context;
  /* Halide may read 8 bytes past the end: one more alignment unit. */
  if (bytes > SIZE_MAX - kAlign)
    return NULL;
  size_t want = sizeClass(bytes + kAlign);
  if (want == 0)
    return NULL;
  const int caching = !__atomic_load_n(&unloading, __ATOMIC_RELAXED);
  unsigned char *base =
      caching && want <= kLocalMaxBytes ? takeFit(localSlots, kLocalSlots, want) : NULL;
  if (!base && caching) {
    lockCache();
    base = takeFit(slots, kSlots, want);
    if (base)
      cachedBytes -= *(size_t *)base;
    unlockCache();
  }
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
  if (__atomic_load_n(&unloading, __ATOMIC_RELAXED)) {
    free(base);
    return;
  }
  if (size <= kLocalMaxBytes && registerThread() &&
      putBlock(localSlots, kLocalSlots, base, size))
    return;
  int kept = 0;
  lockCache();
  if (size <= kMaxBytes - cachedBytes && putBlock(slots, kSlots, base, size)) {
    cachedBytes += size;
    kept = 1;
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
  /* From here on blocks are freed, not kept (Halide's own destructors may
   * still free some). No living thread has a destructor of this library
   * pending (glibc would not unload it), so none holds blocks of its own. */
  __atomic_store_n(&unloading, 1, __ATOMIC_RELAXED);
  lockCache();
  for (int i = 0; i < kSlots; ++i) {
    free(slots[i].base);
    slots[i].base = NULL;
  }
  cachedBytes = 0;
  unlockCache();
}
