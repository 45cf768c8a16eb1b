/* The bench's slower disk: an LD_PRELOAD shim that makes every fsync and fdatasync take
 * BENCH_FLUSH_DELAY_US microseconds longer than the real one (the real call runs first,
 * then the calling thread sleeps), so scripts/bench --ledger --flush-delay-us N can show
 * the group commit on a disk whose flush costs what most disks' does (a millisecond or more
 * without a battery-backed cache), where this VM's costs about 150 us. The bench loads it
 * into keel and into the raw peer alike (and the PostgreSQL server), so the ratio compares
 * like with like.
 *
 * Without BENCH_FLUSH_DELAY_US (or with 0) the shim only forwards. Each call forwards to the
 * next definition (glibc's), looked up with dlsym when the shim is loaded.
 *
 * Built by scripts/bench: cc -O2 -shared -fPIC -o build/bench-slow-flush.so slow_flush.c
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

typedef int (*flush_fn)(int);

static long delay_us;        /* set once, before main and before any thread */
static flush_fn real_fsync;  /* the next definitions (glibc's), looked up then too */
static flush_fn real_fdatasync;

__attribute__((constructor)) static void slow_flush_init(void) {
  const char *s = getenv("BENCH_FLUSH_DELAY_US");
  delay_us = s ? atol(s) : 0;
  if (delay_us < 0) delay_us = 0;
  real_fsync = (flush_fn)dlsym(RTLD_NEXT, "fsync");
  real_fdatasync = (flush_fn)dlsym(RTLD_NEXT, "fdatasync");
}

/* The real flush, then the delay; errno as the real call left it. */
static int slowed(flush_fn real, int fd) {
  int r = real(fd);
  int saved = errno;
  if (delay_us > 0) {
    struct timespec left = {delay_us / 1000000, (delay_us % 1000000) * 1000};
    while (nanosleep(&left, &left) != 0 && errno == EINTR) {
    }
  }
  errno = saved;
  return r;
}

int fsync(int fd) { return slowed(real_fsync, fd); }

int fdatasync(int fd) { return slowed(real_fdatasync, fd); }
