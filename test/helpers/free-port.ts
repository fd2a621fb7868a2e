import { createServer } from 'node:net';

/**
 * A TCP port on loopback that nothing listens on now (bound on port 0, then closed): for tools
 * that cannot take port 0 themselves (etcd, pebble, moto, Prometheus) and for moving a listener.
 */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
