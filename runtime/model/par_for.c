/* Part of every model library attune-compile links (see scratch_cache.c for
 * how these files get there): the thread pool that runs the kernels'
 * parallel loops, in place of the Halide runtime's.
 *
 * Why. Every parallel loop of a Halide kernel goes through
 * halide_do_par_for. Halide's default puts the loop on its work queue under
 * a mutex, wakes its sleeping workers through a condition variable and,
 * when the caller runs out of tasks before a worker is done, puts the
 * caller to sleep until that worker wakes it. Each sleep and wake-up is a
 * futex system call, and on the 2-vCPU virtual machines this project runs
 * on a woken thread can take tens of microseconds to run. A model of width
 * 64 at 64 tokens (tests/models/gpt2-tiny) has seven parallel loops of
 * 8-16 us a run; on 2 threads they took 17-37 us each, and the run was 1.7
 * times slower than on one thread (Intel Xeon, avx512_spr: 0.264 against
 * 0.155 ms).
 *
 * How. The pool keeps n - 1 workers for n threads (halide_get_num_threads,
 * which attune_model_set_num_threads sets). A worker waits for work by
 * spinning for kSpinNs after its last loop, then sleeps on a condition
 * variable; between the loops of a model run it is therefore awake, and a
 * loop reaches it through one cache line. The caller of a loop offers it to
 * each worker through the worker's mailbox, runs tasks itself, and once no
 * task is left takes back every offer not yet accepted: it waits only for
 * workers that are running a task of this loop, never for one to wake up.
 * Each thread starts on its own share of the tasks (see runLoopTasks).
 * Loops that are faster on the caller alone run there (see chooseAlone).
 *
 * One loop runs on the pool at a time. A loop started while another is
 * running (a second model handle run concurrently, or a loop nested in a
 * task) goes to Halide's own pool instead, which handles both.
 *
 * A mailbox holds NULL (nothing offered), the loop offered, or TAKEN (the
 * worker is running its tasks). The caller offers with a store and takes
 * back with a compare-and-swap from the loop to NULL; a worker accepts with
 * a compare-and-swap from the loop to TAKEN and, once no task is left,
 * stores NULL and does not touch the loop again. So the loop, which lives on
 * the caller's stack, is never read after the caller returns.
 * tests/unit/runtime/ParForTest.cpp tests all this, also under
 * ThreadSanitizer.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int (*halide_task_t)(void *user_context, int task_number, uint8_t *closure);
typedef int (*halide_do_par_for_t)(void *, halide_task_t, int, int, uint8_t *);
/* From the Halide runtime linked into the same library. */
extern halide_do_par_for_t halide_set_custom_do_par_for(halide_do_par_for_t do_par_for);
extern int halide_default_do_par_for(void *user_context, halide_task_t f, int min, int size,
                                     uint8_t *closure);
extern int halide_get_num_threads(void);

/* How long an idle worker spins before it sleeps: longer than the gaps
 * between the parallel loops of a model run (serial kernels of a few to a
 * few hundred microseconds), short enough that an idle library gives its
 * cores back at once. */
static const uint64_t kSpinNs = 200000;

enum { kMaxWorkers = 63 };

/* A counter of claimed tasks, alone on its cache line. */
struct counter {
  int claimed;
} __attribute__((aligned(64)));

struct loop {
  halide_task_t f;
  void *user_context;
  uint8_t *closure;
  int min, size;
  int parts;             /* the caller and the workers offered the loop */
  int rc;                /* the first failure (atomic) */
  struct counter *chunk; /* [parts]: tasks claimed from each part's range */
};

#define TAKEN ((struct loop *)1)

struct worker {
  struct loop *mailbox; /* atomic */
  int sleeping;         /* atomic */
  pthread_t thread;
  pthread_cond_t wake;
} __attribute__((aligned(64)));

static struct worker workers[kMaxWorkers];
static int numWorkers;              /* started; changed only while `busy` is held */
static int stopping;                /* atomic: tells the workers to leave */
static int busy;                    /* atomic: a loop is on the pool */
static pthread_mutex_t sleepLock = PTHREAD_MUTEX_INITIALIZER;
static __thread int onWorker;       /* this thread is one of the pool's */

static uint64_t nowNs(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void cpuRelax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

/* Part p's tasks are [p * size / parts, (p + 1) * size / parts): the
 * same tasks go to the same thread from one call of a loop to the next, so
 * the weights and rows a task reads stay in that core's cache. A part
 * whose own tasks are done takes what is left of the others', so a slow or
 * absent worker delays nobody. */
static void runLoopTasks(struct loop *l, int part) {
  for (int k = 0; k < l->parts; ++k) {
    int c = (part + k) % l->parts;
    int begin = (int)((int64_t)c * l->size / l->parts);
    int end = (int)((int64_t)(c + 1) * l->size / l->parts);
    for (;;) {
      if (__atomic_load_n(&l->rc, __ATOMIC_RELAXED) != 0)
        return;
      int i = begin + __atomic_fetch_add(&l->chunk[c].claimed, 1, __ATOMIC_RELAXED);
      if (i >= end)
        break;
      int rc = l->f(l->user_context, l->min + i, l->closure);
      if (rc != 0) {
        int none = 0;
        __atomic_compare_exchange_n(&l->rc, &none, rc, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
      }
    }
  }
}

static void *workerMain(void *arg) {
  struct worker *w = (struct worker *)arg;
  onWorker = 1;
#ifdef ATTUNE_SCRATCH_CACHE
  /* Its scratch blocks are freed as it stops (below), not by a thread-exit
   * destructor, which would keep the library loaded, and only unloading it
   * stops the pool (scratch_cache.c's localSlots). */
  scratchWorkerStarts();
#endif
  uint64_t idleSince = nowNs();
  for (unsigned spins = 0;; ++spins) {
    struct loop *l = __atomic_load_n(&w->mailbox, __ATOMIC_ACQUIRE);
    if (l && l != TAKEN) {
      if (__atomic_compare_exchange_n(&w->mailbox, &l, TAKEN, 0, __ATOMIC_ACQUIRE,
                                      __ATOMIC_RELAXED)) {
        runLoopTasks(l, (int)(w - workers) + 1);
        /* Releases the caller, whose loop `l` may be gone after this. */
        __atomic_store_n(&w->mailbox, NULL, __ATOMIC_RELEASE);
      }
      idleSince = nowNs();
      continue;
    }
    if (__atomic_load_n(&stopping, __ATOMIC_ACQUIRE)) {
#ifdef ATTUNE_SCRATCH_CACHE
      scratchWorkerStops();
#endif
      return NULL;
    }
    cpuRelax();
    if (spins % 64 != 0 || nowNs() - idleSince < kSpinNs)
      continue;
    /* Sleep until offered a loop or told to stop. The caller stores the
     * offer before it reads `sleeping`, and this thread sets `sleeping`
     * before it reads the mailbox (both sequentially consistent), so one of
     * the two sees the other; the caller signals under sleepLock, which
     * this thread holds from its check until it waits. */
    pthread_mutex_lock(&sleepLock);
    __atomic_store_n(&w->sleeping, 1, __ATOMIC_SEQ_CST);
    while (!__atomic_load_n(&w->mailbox, __ATOMIC_SEQ_CST) &&
           !__atomic_load_n(&stopping, __ATOMIC_SEQ_CST))
      pthread_cond_wait(&w->wake, &sleepLock);
    __atomic_store_n(&w->sleeping, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&sleepLock);
    idleSince = nowNs();
  }
}

/* Stops and joins every worker. Called with `busy` held (or at unload). */
static void stopWorkers(void) {
  if (numWorkers == 0)
    return;
  __atomic_store_n(&stopping, 1, __ATOMIC_SEQ_CST);
  pthread_mutex_lock(&sleepLock);
  for (int i = 0; i < numWorkers; ++i)
    pthread_cond_signal(&workers[i].wake);
  pthread_mutex_unlock(&sleepLock);
  for (int i = 0; i < numWorkers; ++i) {
    pthread_join(workers[i].thread, NULL);
    pthread_cond_destroy(&workers[i].wake);
  }
  numWorkers = 0;
  __atomic_store_n(&stopping, 0, __ATOMIC_SEQ_CST);
}

/* The workers n threads want, as Halide counts threads (before the first
 * halide_set_num_threads it reports 0: HL_NUM_THREADS or every CPU). */
static int wantedWorkers(void) {
  int n = halide_get_num_threads();
  if (n <= 0) {
    const char *env = getenv("HL_NUM_THREADS");
    n = env ? atoi(env) : (int)sysconf(_SC_NPROCESSORS_ONLN);
  }
  if (n < 1)
    n = 1;
  return n - 1 > kMaxWorkers ? kMaxWorkers : n - 1;
}

/* Makes the pool `wanted` workers large. Called with `busy` held. Returns
 * how many there are (fewer if a thread could not be started: then until
 * the thread count changes again). */
static int resizePool(int wanted) {
  static int requested; /* what the pool was last sized for */
  if (wanted == requested)
    return numWorkers;
  requested = wanted;
  stopWorkers();
  while (numWorkers < wanted) {
    struct worker *w = &workers[numWorkers];
    w->mailbox = NULL;
    w->sleeping = 0;
    pthread_cond_init(&w->wake, NULL);
    if (pthread_create(&w->thread, NULL, workerMain, w) != 0) {
      pthread_cond_destroy(&w->wake);
      break;
    }
    ++numWorkers;
  }
  return numWorkers;
}

/* chooseAlone. Whether a loop gains from the pool at all depends on its shape: a
 * linear of 99 outputs in panels of 96 is two tasks, 96 columns and 3, and
 * the second thread only contends for the first's cache lines. So each
 * loop, known by its task function and task count, keeps how long it took
 * on the pool and alone (the caller running every task), and takes the
 * faster way: measured, not predicted. Its first call goes to the pool; a
 * loop that took less than kTryAloneNs there runs alone on its second;
 * after that every kReexplore-th call takes the other way, so a change of
 * load or shape is seen. A loop slower than kTryAloneNs on the pool never
 * runs alone, so no large loop is serialised to find out. The table is
 * read and written without a lock: a torn or stale entry only makes a
 * worse choice, never a wrong result. */
static const uint64_t kTryAloneNs = 50000;
static const uint64_t kReexplore = 64;

enum { kLoopSlots = 1024 };

struct loop_entry {
  uint64_t key;   /* task function ^ task count << 40; 0: empty */
  uint64_t times; /* ns on the pool (low 32 bits) and alone (high); 0: not yet */
  uint64_t calls;
};

static struct loop_entry loopTable[kLoopSlots];

static struct loop_entry *loopEntry(halide_task_t f, int size) {
  uint64_t key = (uint64_t)(uintptr_t)f ^ ((uint64_t)(uint32_t)size << 40);
  key = key ? key : 1;
  struct loop_entry *e = &loopTable[(key * 0x9E3779B97F4A7C15ull) >> 54];
  if (__atomic_load_n(&e->key, __ATOMIC_RELAXED) != key) {
    __atomic_store_n(&e->key, key, __ATOMIC_RELAXED);
    __atomic_store_n(&e->times, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&e->calls, 0, __ATOMIC_RELAXED);
  }
  return e;
}

static int chooseAlone(struct loop_entry *e) {
  uint64_t times = __atomic_load_n(&e->times, __ATOMIC_RELAXED);
  uint64_t pool = (uint32_t)times, alone = times >> 32;
  if (pool == 0 || pool >= kTryAloneNs)
    return 0;
  if (alone == 0)
    return 1;
  uint64_t calls = __atomic_load_n(&e->calls, __ATOMIC_RELAXED);
  return (alone <= pool) != (calls % kReexplore == kReexplore - 1);
}

/* Keeps the mean of the last estimate and the new time, so that one call
 * the hypervisor preempted does not decide alone. */
static void recordTime(struct loop_entry *e, int alone, uint64_t ns) {
  uint64_t times = __atomic_load_n(&e->times, __ATOMIC_RELAXED);
  uint64_t old = alone ? times >> 32 : (uint32_t)times;
  uint64_t v = old ? (old + ns) / 2 : ns;
  v = v > UINT32_MAX ? UINT32_MAX : v ? v : 1;
  times = alone ? (times & UINT32_MAX) | v << 32 : (times & ~(uint64_t)UINT32_MAX) | v;
  __atomic_store_n(&e->times, times, __ATOMIC_RELAXED);
  __atomic_store_n(&e->calls, __atomic_load_n(&e->calls, __ATOMIC_RELAXED) + 1,
                   __ATOMIC_RELAXED);
}

/* Runs the loop on the caller and `helpers` workers. Called with `busy`
 * held. */
static int runOnPool(void *user_context, halide_task_t f, int min, int size, uint8_t *closure,
                     int helpers) {
  struct counter chunk[kMaxWorkers + 1];
  for (int p = 0; p <= helpers; ++p)
    chunk[p].claimed = 0;
  struct loop l = {f, user_context, closure, min, size, helpers + 1, 0, chunk};
  for (int i = 0; i < helpers; ++i) {
    __atomic_store_n(&workers[i].mailbox, &l, __ATOMIC_SEQ_CST);
    if (__atomic_load_n(&workers[i].sleeping, __ATOMIC_SEQ_CST)) {
      pthread_mutex_lock(&sleepLock);
      pthread_cond_signal(&workers[i].wake);
      pthread_mutex_unlock(&sleepLock);
    }
  }
  runLoopTasks(&l, 0);
  for (int i = 0; i < helpers; ++i) {
    struct loop *offered = &l;
    if (__atomic_compare_exchange_n(&workers[i].mailbox, &offered, NULL, 0, __ATOMIC_ACQ_REL,
                                    __ATOMIC_ACQUIRE))
      continue; /* never accepted */
    while (__atomic_load_n(&workers[i].mailbox, __ATOMIC_ACQUIRE) != NULL)
      cpuRelax();
  }
  return __atomic_load_n(&l.rc, __ATOMIC_RELAXED);
}

static int runAlone(void *user_context, halide_task_t f, int min, int size, uint8_t *closure) {
  for (int i = 0; i < size; ++i) {
    int rc = f(user_context, min + i, closure);
    if (rc != 0)
      return rc;
  }
  return 0;
}

static int poolParFor(void *user_context, halide_task_t f, int min, int size,
                      uint8_t *closure) {
  if (size <= 1)
    return size == 1 ? f(user_context, min, closure) : 0;
  int idle = 0;
  if (onWorker || !__atomic_compare_exchange_n(&busy, &idle, 1, 0, __ATOMIC_ACQUIRE,
                                               __ATOMIC_RELAXED))
    return halide_default_do_par_for(user_context, f, min, size, closure);
  int helpers = resizePool(wantedWorkers());
  if (helpers > size - 1)
    helpers = size - 1;
  int rc;
  if (helpers == 0) {
    rc = runAlone(user_context, f, min, size, closure);
  } else {
    struct loop_entry *entry = loopEntry(f, size);
    int alone = chooseAlone(entry);
    uint64_t start = nowNs();
    rc = alone ? runAlone(user_context, f, min, size, closure)
               : runOnPool(user_context, f, min, size, closure, helpers);
    recordTime(entry, alone, nowNs() - start);
  }
  __atomic_store_n(&busy, 0, __ATOMIC_RELEASE);
  return rc;
}

__attribute__((constructor)) static void installPool(void) {
  halide_set_custom_do_par_for(poolParFor);
}

__attribute__((destructor)) static void stopPool(void) { stopWorkers(); }
