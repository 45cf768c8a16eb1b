// Seeded randomness: one generator per runner, derived from --seed, so each runner's
// sequence of choices is reproducible (the interleaving of runners is up to the scheduler).
//
// Rng: int(lo, hi) inclusive, chance(p), pick(items), weighted({name: weight}).

function mulberry32(a) {
  return () => {
    a = (a + 0x6D2B79F5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export class Rng {
  constructor(seed) { this.next = mulberry32(seed >>> 0); }
  int(lo, hi) { return lo + Math.floor(this.next() * (hi - lo + 1)); }  // inclusive
  chance(p) { return this.next() < p; }
  pick(items) { return items[Math.floor(this.next() * items.length)]; }
  weighted(table) {  // {name: weight}
    const entries = Object.entries(table);
    let x = this.next() * entries.reduce((s, [, w]) => s + w, 0);
    for (const [name, w] of entries) { if ((x -= w) < 0) return name; }
    return entries[entries.length - 1][0];
  }
}
