// Preloaded (node --import) into every Herald process a test starts (herald-process.ts): file descriptor 3 is the test
// runner's end of a socket pair. When it closes, the runner is gone, however it ended (a time-out, Ctrl-C, SIGKILL), and
// this process stops too (as after SIGTERM; killed outright if that takes more than a few seconds), instead of running on,
// adopted by init. The embedded Postgres watchdog (src/db/embedded.ts) does the same for Postgres.
import net from 'node:net';

const parent = new net.Socket({ fd: 3, readable: true, writable: false });
parent.on('error', () => undefined);
parent.on('close', () => {
  process.kill(process.pid, 'SIGTERM');
  setTimeout(() => process.kill(process.pid, 'SIGKILL'), 5000).unref();
});
parent.resume();
// Never what keeps the process alive.
parent.unref();
