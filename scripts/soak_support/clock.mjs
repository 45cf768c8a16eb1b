// The soak's clock: now() is milliseconds since the soak started (this module's load);
// sleep(ms) waits that long (the mix's pacing and its random delays, never a condition).

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const t0 = performance.now();
export const now = () => performance.now() - t0;  // ms since the soak started
