// The bench's small C helpers, compiled on demand into build/: the "floor" server (floor.c),
// shared by scripts/bench (throughput) and scripts/bench --startup, the allocation
// counter (alloc_count.c) of scripts/bench --allocs, and the slower disk (slow_flush.c) of
// scripts/bench --ledger --flush-delay-us.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');

// Path of the floor binary, (re)built with cc when missing or older than floor.c. Throws an
// Error saying why when cc fails; `log` gets one line when it compiles.
export function ensureFloor(log = () => {}) {
  return ensureBuilt('floor.c', 'bench-floor', [], log);
}

// Path of the allocation counter, an LD_PRELOAD shared object, built the same way.
export function ensureAllocCounter(log = () => {}) {
  return ensureBuilt('alloc_count.c', 'bench-alloc-count.so', ['-shared', '-fPIC'], log);
}

// Path of the slower disk, an LD_PRELOAD shared object, built the same way.
export function ensureSlowFlush(log = () => {}) {
  return ensureBuilt('slow_flush.c', 'bench-slow-flush.so', ['-shared', '-fPIC'], log);
}

function ensureBuilt(source, output, flags, log) {
  const src = join(here, source);
  const bin = join(repo, 'build', output);
  if (!existsSync(bin) || statSync(bin).mtimeMs < statSync(src).mtimeMs) {
    mkdirSync(dirname(bin), { recursive: true });
    log(`compiling ${src} -> ${bin}`);
    try {
      execFileSync('cc', ['-O2', ...flags, '-o', bin, src], { stdio: ['ignore', 'inherit', 'inherit'] });
    } catch (e) {
      throw new Error(`${source}: cc failed (${e.message})`);
    }
  }
  return bin;
}
