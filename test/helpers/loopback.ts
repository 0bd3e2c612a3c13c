/** The test servers' common plumbing: Node's http on a free loopback port. No Workers module. */
import type { Server } from 'node:http';

/** Starts `server` on a free loopback port: its URL, and a close that waits for it and fails as closing does. */
export async function listenLoopback(server: Server, what: string): Promise<{ url: string; close(): Promise<void> }> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error(`${what} has no port`);
  return {
    url: `http://127.0.0.1:${address.port}`,
    close: () => new Promise<void>((resolve, reject) => server.close((err) => (err ? reject(err) : resolve()))),
  };
}
