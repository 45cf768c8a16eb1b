/* The bench's "floor" server: the cost of the pipe and the process alone.
 *
 * Reads newline-delimited JSON-RPC from stdin and, for every line that carries an id,
 * writes one canned response with that id. No JSON parsing: the id is found by a plain
 * scan for "id": (good enough for the bench's own requests, which never contain that
 * text elsewhere). Lines without an id (notifications) get no answer. An initialize
 * request gets a canned initialize result; anything else gets a canned echo result.
 *
 * I/O is batched the way a good server would do it: one read() takes whatever the pipe
 * holds, every complete line in it is answered into one output buffer, and that buffer
 * goes out in one write(). Exits 0 on EOF.
 *
 * Built by scripts/bench: cc -O2 -o build/bench-floor scripts/bench_support/floor.c
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char kInitResult[] =
    "\"result\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{\"tools\":{}},"
    "\"serverInfo\":{\"name\":\"floor\",\"version\":\"0\"}}}\n";
static const char kEchoResult[] =
    "\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"hello\"}]}}\n";
static const char kPrefix[] = "{\"jsonrpc\":\"2.0\",\"id\":";

static char *out;
static size_t out_len, out_cap;

static void out_put(const char *p, size_t n) {
  if (out_len + n > out_cap) {
    while (out_len + n > out_cap) out_cap = out_cap ? out_cap * 2 : 65536;
    out = realloc(out, out_cap);
    if (!out) _exit(3);
  }
  memcpy(out + out_len, p, n);
  out_len += n;
}

static int out_flush(void) {
  size_t off = 0;
  while (off < out_len) {
    ssize_t w = write(1, out + off, out_len - off);
    if (w < 0) {
      if (errno == EINTR) continue;
      return -1;
    }
    off += (size_t)w;
  }
  out_len = 0;
  return 0;
}

/* Answers one line [p, end) (without its newline). */
static void answer(const char *p, const char *end) {
  const char *id = memmem(p, (size_t)(end - p), "\"id\":", 5);
  if (!id) return; /* notification */
  id += 5;
  while (id < end && *id == ' ') id++;
  const char *id_end = id;
  if (id_end < end && *id_end == '"') { /* string id */
    id_end++;
    while (id_end < end && *id_end != '"') id_end++;
    if (id_end < end) id_end++;
  } else {
    while (id_end < end && *id_end != ',' && *id_end != '}' && *id_end != ' ') id_end++;
  }
  out_put(kPrefix, sizeof kPrefix - 1);
  out_put(id, (size_t)(id_end - id));
  out_put(",", 1);
  if (memmem(p, (size_t)(end - p), "\"initialize\"", 12))
    out_put(kInitResult, sizeof kInitResult - 1);
  else
    out_put(kEchoResult, sizeof kEchoResult - 1);
}

int main(void) {
  size_t cap = 1 << 16, len = 0;
  char *in = malloc(cap);
  if (!in) return 3;
  for (;;) {
    if (len == cap) {
      cap *= 2;
      in = realloc(in, cap);
      if (!in) return 3;
    }
    ssize_t r = read(0, in + len, cap - len);
    if (r < 0) {
      if (errno == EINTR) continue;
      return 1;
    }
    if (r == 0) break; /* EOF */
    len += (size_t)r;
    char *line = in, *end = in + len, *nl;
    while ((nl = memchr(line, '\n', (size_t)(end - line))) != NULL) {
      answer(line, nl);
      line = nl + 1;
    }
    len = (size_t)(end - line);
    memmove(in, line, len);
    if (out_len && out_flush() != 0) return 1;
  }
  return 0;
}
