// What the soak found: violations by kind (each with its first examples) and, per scenario
// kind, how often each outcome happened. The report prints both; any violation fails the run.
// short(x) is x as JSON, cut to n characters, for an example.

export const violations = new Map();  // kind -> {count, examples[]}
export function violation(kind, detail) {
  let v = violations.get(kind);
  if (!v) violations.set(kind, v = { count: 0, examples: [] });
  v.count++;
  if (v.examples.length < 5) v.examples.push(typeof detail === 'string' ? detail : JSON.stringify(detail));
}
export const kinds = new Map();  // scenario kind -> Map(outcome -> count)
export function tally(kind, outcome) {
  let m = kinds.get(kind);
  if (!m) kinds.set(kind, m = new Map());
  m.set(outcome, (m.get(outcome) ?? 0) + 1);
}
export const short = (x, n = 300) => { const s = JSON.stringify(x); return s && s.length > n ? s.slice(0, n) + '…' : s; };
