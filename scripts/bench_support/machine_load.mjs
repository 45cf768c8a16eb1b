// How busy the machine is, for the benches' "background load" line (Linux /proc/stat).
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

// Busy jiffies (all CPUs) and total jiffies from the first line of /proc/stat.
export function systemJiffies() {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
  const total = f.reduce((a, b) => a + b, 0);
  const idle = f[3] + (f[4] || 0); // idle + iowait
  return { busy: total - idle, total };
}

// How busy the machine is without the bench: CPU use over `ms` while the driver sleeps,
// in cores (0 = idle, 2 = both cores of a 2-core machine busy).
export async function backgroundLoad(ms = 500) {
  const a = systemJiffies();
  await new Promise((r) => setTimeout(r, ms));
  const b = systemJiffies();
  const total = b.total - a.total;
  return total > 0 ? ((b.busy - a.busy) / total) * cpus().length : NaN;
}
