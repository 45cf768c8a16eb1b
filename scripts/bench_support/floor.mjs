// The bench's "floor" server (floor.c): compiled on demand into build/bench-floor, shared by
// scripts/bench (throughput) and scripts/bench --startup.
import { execFileSync } from 'node:child_process';
import { existsSync, statSync, mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..', '..');

// Path of the floor binary, (re)built with cc when missing or older than floor.c. Throws an
// Error saying why when cc fails; `log` gets one line when it compiles.
export function ensureFloor(log = () => {}) {
  const src = join(here, 'floor.c');
  const bin = join(repo, 'build', 'bench-floor');
  if (!existsSync(bin) || statSync(bin).mtimeMs < statSync(src).mtimeMs) {
    mkdirSync(dirname(bin), { recursive: true });
    log(`compiling ${src} -> ${bin}`);
    try {
      execFileSync('cc', ['-O2', '-o', bin, src], { stdio: ['ignore', 'inherit', 'inherit'] });
    } catch (e) {
      throw new Error(`floor: cc failed (${e.message})`);
    }
  }
  return bin;
}
