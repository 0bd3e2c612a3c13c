/**
 * The eval's client of the Worker (scripts/eval-http.ts), against a loopback stand-in: traffic a
 * review will read reaches the Worker one request at a time, in the seeded order, so the same seed
 * stores the same log.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import type { BenchWorker } from '../../scripts/bench/worker.ts';
import { routeAll, TRAFFIC_CONCURRENCY } from '../../scripts/eval-http.ts';

let server: Server | undefined;

afterEach(() => {
  server?.close();
  server = undefined;
});

/** A stand-in for `/route` that answers after a delay that shrinks with each request, noting the order it began them in. */
async function standIn(): Promise<{ w: BenchWorker; begun: string[]; overlapped: () => boolean }> {
  const begun: string[] = [];
  let inFlight = 0;
  let overlapped = false;
  let delay = 40;
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => {
      body += chunk.toString();
    });
    req.on('end', () => {
      inFlight++;
      if (inFlight > 1) overlapped = true;
      begun.push((JSON.parse(body) as { request: string }).request);
      delay = Math.max(0, delay - 5);
      setTimeout(() => {
        inFlight--;
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ turn_id: `t${begun.length}`, tools: [] }));
      }, delay);
    });
  });
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const w: BenchWorker = {
    url: `http://127.0.0.1:${port}`,
    token: 'test',
    log: () => '',
    pgid: 0,
    stop: () => undefined,
    halt: async () => undefined,
  };
  return { w, begun, overlapped: () => overlapped };
}

describe('the eval traffic', () => {
  it('reaches the Worker one request at a time, in the order of the seeded traffic', async () => {
    const { w, begun, overlapped } = await standIn();
    const queries = Array.from({ length: 12 }, (_, i) => ({ text: `request ${i}`, tool: 't', index: i }));
    await routeAll(w, 'a', queries, 'test', (i) => `c${i % 3}`, TRAFFIC_CONCURRENCY);
    expect(begun).toEqual(queries.map((q) => q.text));
    expect(overlapped()).toBe(false);
  });
});
