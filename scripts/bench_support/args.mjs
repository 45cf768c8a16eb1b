// Command-line reading shared by the bench scripts: calls visit(arg, val, int) for each
// argument, where val() takes the next argument as this one's value and int(s, min) parses an
// integer >= min; both report a bad command line through die (exit 2, with the usage).
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
