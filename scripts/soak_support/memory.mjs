// Memory: VmRSS each second. After the warm-up, the median of the first window and of the
// last window of the mix (a minute each, less on short runs) may differ by at most
// max(--rss-pct % of the first, --rss-mb MB).
//
// checkMemory(w, mixStart, mixEnd) -> the report's lines, per keel: the windows, growth per
// request, the slope after warm-up, the peak, a coarse curve.
import { violation } from './findings.mjs';

const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : NaN; };
function slopeKbPerMin(samples) {
  if (samples.length < 3) return NaN;
  const n = samples.length;
  const mx = samples.reduce((s, [x]) => s + x, 0) / n;
  const my = samples.reduce((s, [, y]) => s + y, 0) / n;
  let num = 0, den = 0;
  for (const [x, y] of samples) { num += (x - mx) * (y - my); den += (x - mx) ** 2; }
  return den ? (num / den) * 60000 : NaN;
}

// One keel's lines (the check is made here too).
function keelMemory(k, opts, mixStart, mixEnd, warmEnd, windowMs) {
  const rssReport = [];
  const steady = k.rss.filter(([t]) => t >= warmEnd && t <= mixEnd);
  const first = steady.filter(([t]) => t < warmEnd + windowMs).map(([, v]) => v);
  const last = steady.filter(([t]) => t > mixEnd - windowMs).map(([, v]) => v);
  const m1 = median(first), m2 = median(last);
  const allowed = Math.max(m1 * opts.rssPct / 100, opts.rssMb * 1024);
  const grew = m2 - m1;
  const ok = Number.isFinite(grew) && grew <= allowed;
  if (!ok) violation('rss_growth', `${k.name}: first-window median ${(m1 / 1024).toFixed(1)} MB, last ${(m2 / 1024).toFixed(1)} MB (+${(grew / 1024).toFixed(1)} MB > allowed ${(allowed / 1024).toFixed(1)} MB)`);
  const peak = Math.max(...k.rss.filter(([t]) => t <= mixEnd).map(([, v]) => v));
  const peakAll = Math.max(...k.rss.map(([, v]) => v));
  // Growth per request between the windows' midpoints: the leak a request would have to
  // cause for the growth seen (an upper bound: bounded caches fill meanwhile too).
  const mid1 = warmEnd + windowMs / 2, mid2 = mixEnd - windowMs / 2;
  let between = 0;
  for (const rec of k.recs.values()) if (rec.sentAt >= mid1 && rec.sentAt < mid2) between++;
  rssReport.push(`  ${k.name}: start ${(k.rss[0][1] / 1024).toFixed(1)} MB, after warm-up ${((steady[0]?.[1] ?? NaN) / 1024).toFixed(1)} MB, ` +
    `first ${Math.round(windowMs / 1000)} s median ${(m1 / 1024).toFixed(1)} MB, last ${Math.round(windowMs / 1000)} s median ${(m2 / 1024).toFixed(1)} MB ` +
    `(${grew >= 0 ? '+' : ''}${(grew / 1024).toFixed(2)} MB, allowed +${(allowed / 1024).toFixed(1)}: ${ok ? 'ok' : 'FAIL'})`);
  rssReport.push(`     ${between} requests between the windows' midpoints: ${Math.round(grew * 1024 / Math.max(1, between))} bytes/request; ` +
    `slope after warm-up ${(slopeKbPerMin(steady) / 1024).toFixed(2)} MB/min; peak ${(peak / 1024).toFixed(1)} MB in the mix, ` +
    `${(peakAll / 1024).toFixed(1)} MB with the final verification; ${k.rss.length} samples`);
  // A coarse curve: the median of each tenth of the run.
  const tenth = (mixEnd - mixStart) / 10;
  const curve = [];
  for (let i = 0; i < 10; i++) {
    const part = k.rss.filter(([t]) => t >= mixStart + i * tenth && t < mixStart + (i + 1) * tenth).map(([, v]) => v);
    curve.push((median(part) / 1024).toFixed(1));
  }
  rssReport.push(`     curve (MB, each tenth of the mix): ${curve.join(' ')}`);
  return rssReport;
}

export function checkMemory(w, mixStart, mixEnd) {
  const { opts, keels } = w;
  const warmEnd = mixStart + opts.warmup * 1000;
  const windowMs = Math.min(60000, (mixEnd - warmEnd) / 3);
  return keels.flatMap((k) => keelMemory(k, opts, mixStart, mixEnd, warmEnd, windowMs));
}
