// Whether a TCP port can be bound: a listener opened and closed at once.
import net from 'node:net';

/** Resolves once `port` on `host` could be bound (and released again); rejects with the listen error otherwise. */
export function probeListen(port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const probe = net.createServer();
    probe.once('error', reject);
    probe.listen(port, host, () => probe.close(() => resolve()));
  });
}
