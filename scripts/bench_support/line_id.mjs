// The bench drivers' one look at a response line: its numeric JSON-RPC id, read without
// parsing the line (the drivers read tens of thousands of lines a second, and JSON.parse of
// each would cost the driver more than it measures). -1 if the line has none (a
// notification) or its id is not a non-negative integer.
export function lineId(line) {
  let i = line.indexOf('"id":');
  if (i < 0) return -1;
  i += 5;
  while (line.charCodeAt(i) === 32) i++;
  let n = 0, any = false;
  for (let c = line.charCodeAt(i); c >= 48 && c <= 57; c = line.charCodeAt(++i)) { n = n * 10 + (c - 48); any = true; }
  return any ? n : -1;
}
