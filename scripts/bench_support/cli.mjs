// The bench scripts' command line: reading their arguments, and printing their results as
// plain-text tables.

// Calls visit(arg, val, int) for each argument, where val() takes the next argument as this
// one's value and int(s, min) parses an integer >= min; both report a bad command line
// through die (exit 2, with the usage).
export function forEachArg(argv, usage, die, visit) {
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const val = () => {
      if (i + 1 >= argv.length) die(`${a} needs a value\n${usage}`);
      return argv[++i];
    };
    const int = (s, min = 0) => {
      const n = Number(s);
      if (!Number.isInteger(n) || n < min) die(`${a}: not an integer >= ${min}: ${s}`);
      return n;
    };
    visit(a, val, int);
  }
}

// The lines of a text table: the first column left-aligned, the others right-aligned, a
// dashed rule under the head. Cells are strings.
export function table(head, rows) {
  const w = head.map((h, i) => Math.max(h.length, ...rows.map((x) => x[i].length)));
  const line = (cells) => cells.map((x, i) => (i === 0 ? x.padEnd(w[i]) : x.padStart(w[i]))).join('  ');
  return [line(head), w.map((n) => '-'.repeat(n)).join('  '), ...rows.map(line)];
}
