/* The bench's allocation counter: an LD_PRELOAD shim that counts the heap allocations
 * a process makes (malloc, calloc, realloc of a new block, the aligned forms; operator new
 * goes through malloc) and the bytes they asked for, so scripts/bench --allocs can report
 * allocations per call, a figure that does not move with the machine's noise as timings do.
 *
 * The counts live in a file named by KEEL_ALLOC_COUNT_FILE (two little-endian uint64:
 * allocations, bytes), mapped shared, so the bench reads them at any moment with a plain
 * read while the process runs. Without that variable the shim only forwards.
 * Each call forwards to the next definition (glibc's, or jemalloc's in a keel linked with it),
 * looked up with dlsym on first use.
 *
 * Built by scripts/bench: cc -O2 -shared -fPIC -o build/bench-alloc-count.so alloc_count.c
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

typedef void *(*malloc_fn)(size_t);
typedef void *(*calloc_fn)(size_t, size_t);
typedef void *(*realloc_fn)(void *, size_t);
typedef void (*free_fn)(void *);
typedef void *(*memalign_fn)(size_t, size_t);
typedef int (*posix_memalign_fn)(void **, size_t, size_t);

static malloc_fn real_malloc;
static calloc_fn real_calloc;
static realloc_fn real_realloc;
static free_fn real_free;
static memalign_fn real_memalign;
static posix_memalign_fn real_posix_memalign;

/* dlsym may allocate (calloc) while the real functions are looked up: those few blocks
 * come from here and are never freed. */
static char bootstrap[4096] __attribute__((aligned(16)));
static size_t bootstrap_used;
static int resolving;

static void *bootstrap_alloc(size_t n) {
  n = (n + 15) & ~(size_t)15;
  if (bootstrap_used + n > sizeof bootstrap) return NULL;
  void *p = bootstrap + bootstrap_used;
  bootstrap_used += n;
  return p;
}

static int in_bootstrap(void *p) {
  return (char *)p >= bootstrap && (char *)p < bootstrap + sizeof bootstrap;
}

static void resolve(void) {
  if (real_malloc || resolving) return;
  resolving = 1;
  real_calloc = (calloc_fn)dlsym(RTLD_NEXT, "calloc");
  real_realloc = (realloc_fn)dlsym(RTLD_NEXT, "realloc");
  real_free = (free_fn)dlsym(RTLD_NEXT, "free");
  real_memalign = (memalign_fn)dlsym(RTLD_NEXT, "memalign");
  real_posix_memalign = (posix_memalign_fn)dlsym(RTLD_NEXT, "posix_memalign");
  real_malloc = (malloc_fn)dlsym(RTLD_NEXT, "malloc");
  resolving = 0;
}

static uint64_t scratch[2];
static uint64_t *counts = scratch;

__attribute__((constructor)) static void alloc_count_init(void) {
  const char *path = getenv("KEEL_ALLOC_COUNT_FILE");
  if (path == NULL) return;
  int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  if (fd < 0) return;
  if (ftruncate(fd, sizeof scratch) == 0) {
    void *p = mmap(NULL, sizeof scratch, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p != MAP_FAILED) counts = p;
  }
  close(fd);
}

static void note(size_t bytes) {
  __atomic_fetch_add(&counts[0], 1, __ATOMIC_RELAXED);
  __atomic_fetch_add(&counts[1], bytes, __ATOMIC_RELAXED);
}

void *malloc(size_t n) {
  resolve();
  if (!real_malloc) return bootstrap_alloc(n);
  note(n);
  return real_malloc(n);
}

void *calloc(size_t k, size_t n) {
  resolve();
  if (!real_calloc) return bootstrap_alloc(k * n); /* static memory is zeroed */
  note(k * n);
  return real_calloc(k, n);
}

void *realloc(void *p, size_t n) {
  resolve();
  if (in_bootstrap(p)) {
    void *q = malloc(n);
    if (q) memcpy(q, p, n); /* the old block may be shorter: bootstrap memory is readable */
    return q;
  }
  if (p == NULL || n != 0) note(n);
  return real_realloc(p, n);
}

void free(void *p) {
  if (p == NULL || in_bootstrap(p)) return;
  resolve();
  real_free(p);
}

void *memalign(size_t align, size_t n) {
  resolve();
  note(n);
  return real_memalign(align, n);
}

void *aligned_alloc(size_t align, size_t n) {
  resolve();
  note(n);
  return real_memalign(align, n);
}

int posix_memalign(void **out, size_t align, size_t n) {
  resolve();
  note(n);
  return real_posix_memalign(out, align, n);
}

/* C++ operator new, by its mangled names, forwarded to the next definition. jemalloc defines
 * its own, which does not go through malloc, so it is counted here; libstdc++'s calls malloc,
 * which counts it already, so it is not (uses_stdcxx_new): each allocation counts once. */
#define COUNTED_NEW(name, params, args, bytes)                  \
  void *name params {                                           \
    static void *(*next) params;                                \
    if (!next) next = (void *(*)params)dlsym(RTLD_NEXT, #name); \
    if (!uses_stdcxx_new) note(bytes);                          \
    return next args;                                           \
  }

static int uses_stdcxx_new = -1; /* set by the constructor below */

__attribute__((constructor)) static void alloc_count_new_kind(void) {
  Dl_info info;
  void *next = dlsym(RTLD_NEXT, "_Znwm");
  uses_stdcxx_new = next && dladdr(next, &info) && info.dli_fname &&
                    strstr(info.dli_fname, "libstdc++") != NULL;
}

COUNTED_NEW(_Znwm, (size_t n), (n), n)
COUNTED_NEW(_Znam, (size_t n), (n), n)
COUNTED_NEW(_ZnwmRKSt9nothrow_t, (size_t n, const void *t), (n, t), n)
COUNTED_NEW(_ZnamRKSt9nothrow_t, (size_t n, const void *t), (n, t), n)
COUNTED_NEW(_ZnwmSt11align_val_t, (size_t n, size_t a), (n, a), n)
COUNTED_NEW(_ZnamSt11align_val_t, (size_t n, size_t a), (n, a), n)
