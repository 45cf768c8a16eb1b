// Preloaded (`node --import`) into a server that listens with `listen(PORT)` and no host, as
// server-everything's streamableHttp mode does: every TCP listen without a host is bound to
// 127.0.0.1 instead of every interface, and the port actually taken (PORT=0 lets the kernel
// choose) is said on stderr as
//   loopback_listen: listening on 127.0.0.1:PORT
// so scripts/conformance_suite --everything-alone stays on loopback and never races for a port.
import net from 'node:net';

const listen = net.Server.prototype.listen;
net.Server.prototype.listen = function (...args) {
  const first = args[0];
  if (typeof first === 'number' || (typeof first === 'string' && /^\d+$/.test(first))) {
    // listen(port[, host][, backlog][, cb]): put the host in when there is none.
    if (typeof args[1] !== 'string') args.splice(1, 0, '127.0.0.1');
  } else if (first && typeof first === 'object' && first.path === undefined && first.host === undefined) {
    args[0] = { ...first, host: '127.0.0.1' };
  }
  this.once('listening', () => {
    const address = this.address();
    if (address && typeof address === 'object') {
      process.stderr.write(`loopback_listen: listening on ${address.address}:${address.port}\n`);
    }
  });
  return listen.apply(this, args);
};
