/* The bench's slower disk: an LD_PRELOAD shim that makes every fsync and fdatasync take
 * BENCH_FLUSH_DELAY_US microseconds longer than the real one (the real call runs first,
 * then the calling thread sleeps), so scripts/bench --ledger --flush-delay-us N can show
 * the group commit on a disk whose flush costs what most disks' does (a millisecond or more
 * without a battery-backed cache), where this VM's costs about 150 us. The bench loads it
 * into keel and into the raw peer alike (and the PostgreSQL server), so the ratio compares
 * like with like.
 *
 * Without BENCH_FLUSH_DELAY_US (or with 0) the shim only forwards. Each call forwards to the
 * next definition (glibc's), looked up with dlsym on first use.
 *
 * Built by scripts/bench: cc -O2 -shared -fPIC -o build/bench-slow-flush.so slow_flush.c
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <time.h>

typedef int (*flush_fn)(int);

static long delay_us; /* set once, before main and before any thread */

__attribute__((constructor)) static void slow_flush_init(void) {
  const char *s = getenv("BENCH_FLUSH_DELAY_US");
  delay_us = s ? atol(s) : 0;
  if (delay_us < 0) delay_us = 0;
}

static void after_flush(void) {
  if (delay_us == 0) return;
  struct timespec left = {delay_us / 1000000, (delay_us % 1000000) * 1000};
  while (nanosleep(&left, &left) != 0 && errno == EINTR) {
  }
}

int fsync(int fd) {
  static flush_fn real;
  if (!real) real = (flush_fn)dlsym(RTLD_NEXT, "fsync");
  int saved, r = real(fd);
  saved = errno;
  after_flush();
  errno = saved;
  return r;
}

int fdatasync(int fd) {
  static flush_fn real;
  if (!real) real = (flush_fn)dlsym(RTLD_NEXT, "fdatasync");
  int saved, r = real(fd);
  saved = errno;
  after_flush();
  errno = saved;
  return r;
}
