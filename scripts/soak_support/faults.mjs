// Fault injection: the faults each keel's simulated deployment backend runs with (--fault),
// and the kill switch for writes, flipped from a shell (keel admin block-writes) for 1.5 s
// now and then: writes in the window are refused with kill_switch and run nothing.
//
// backendFaults(opts) -> {faultsA, faultsB}: A loses every restart's answer after the
//   backend did it (and 503s its first reads and restarts); B answers restarts 150 ms late
//   and has one 8 s outage of get_deployment_job, after a seeded number of reads.
// killSwitch(opts, db) -> {admin(state), run(deadline), windows()}: run() opens windows
//   until the mix's deadline is near; windows() is how many it opened.
import { spawn } from 'node:child_process';

import { now, sleep } from './clock.mjs';
import { violation } from './findings.mjs';
import { Rng } from './rng.mjs';

export function backendFaults(opts) {
  const setupRng = new Rng(opts.seed);
  // B's outage starts after this many get_deployment_job calls on B (about 1.3 a second).
  const outageAfter = setupRng.int(Math.round(opts.seconds * 0.25), Math.round(opts.seconds * 0.6));
  const faultsA = [
    'get_deployment_job:fail_503=3',               // the first reads meet a 503 keel retries
    'restart_deployment_job:fail_503=2',           // the first restarts too (surely not done: retried)
    'restart_deployment_job:lose_response=1000000',// then every restart here is done and its answer lost
    'lookup_deployment_operation:latency=20',
  ];
  const faultsB = [
    'restart_deployment_job:fail_503=4',
    'restart_deployment_job:latency=150',          // a window for cancels to land in
    `get_deployment_job:start_after=${outageAfter}`,
    'get_deployment_job:sustained_503=8000',       // one 8 s outage: the breaker opens, reads come cached
  ];
  return { faultsA, faultsB };
}

export function killSwitch(opts, db) {
  let killWindows = 0;
  function admin(state) {
    return new Promise((res) => {
      const p = spawn(opts.keel, ['admin', 'block-writes', state, '--db', db], { stdio: ['ignore', 'ignore', 'pipe'] });
      let err = '';
      p.stderr.on('data', (d) => { err += d; });
      p.on('exit', (code) => {
        if (code !== 0) violation('admin_block_writes', `exit ${code}: ${err}`);
        res();
      });
    });
  }
  async function run(deadline) {
    const rng = new Rng(opts.seed ^ 0x5eed);
    const span = opts.seconds * 1000;
    while (now() + 8000 < deadline) {
      await sleep(rng.int(Math.min(15000, span * 0.25), Math.min(40000, span * 0.5)));
      if (now() + 3000 > deadline) break;
      await admin('on');
      killWindows++;
      await sleep(1500);
      await admin('off');
    }
  }
  return { admin, run, windows: () => killWindows };
}
