// The soak's command line (scripts/soak --help): parseOptions(argv) returns the options, or
// prints the usage and exits 2.
import { randomInt } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

import { REPO } from '../../tests/support/keel_process.mjs';

function usage(message) {
  if (message) console.error(`soak: ${message}`);
  console.error('usage: scripts/soak [--seconds N] [--seed N] [--keel PATH] [--runners N] [--single]\n' +
    '                   [--postgres] [--warmup S] [--rss-pct P] [--rss-mb M] [--keep]\n' +
    '  --postgres: three keels on a throwaway PostgreSQL (scripts/pg_test_server) instead of two on a SQLite file');
  process.exit(2);
}


export function parseOptions(argv) {
  const o = {
    seconds: 180, seed: null, keel: process.env.KEEL_BINARY || join(REPO, 'build', 'keel'),
    runners: 12, single: false, postgres: false, warmup: null, rssPct: 20, rssMb: 5, keep: false,
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const num = () => {
      const v = Number(argv[++i]);
      if (!Number.isFinite(v) || v < 0) usage(`${a} needs a non-negative number`);
      return v;
    };
    if (a === '--seconds') o.seconds = num();
    else if (a === '--seed') o.seed = Math.floor(num()) >>> 0;
    else if (a === '--keel') o.keel = resolve(argv[++i] ?? usage('--keel needs a path'));
    else if (a === '--runners') o.runners = Math.max(1, Math.floor(num()));
    else if (a === '--single') o.single = true;
    else if (a === '--postgres') o.postgres = true;
    else if (a === '--warmup') o.warmup = num();
    else if (a === '--rss-pct') o.rssPct = num();
    else if (a === '--rss-mb') o.rssMb = num();
    else if (a === '--keep') o.keep = true;
    else if (a === '-h' || a === '--help') usage();
    else usage(`unknown argument ${a}`);
  }
  if (o.seconds < 10) usage('--seconds must be at least 10');
  if (o.seed === null) o.seed = randomInt(1, 2 ** 31);
  // Warm-up: SQLite page caches, worker and replacement threads, the allocator's arenas
  // and the breakers' windows fill during the first part of the run.
  if (o.warmup === null) o.warmup = Math.min(30, Math.round(o.seconds * 0.2));
  if (o.postgres && o.single) usage('--postgres runs three keels; --single one on SQLite');
  if (!existsSync(o.keel)) usage(`no keel binary at ${o.keel} (run scripts/build, or pass --keel)`);
  return o;
}
