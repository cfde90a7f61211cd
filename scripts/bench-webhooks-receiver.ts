/**
 * The webhook receivers of `bench:webhooks`, in a process of their own (as a subscriber's
 * endpoint is on another machine), so that answering the deliveries does not take the event loop
 * of the service being measured. Started by the benchmark with an IPC channel:
 *
 * - in:  `{ type: 'start', routes: [{ path, name, kind }], slowMs }` → out `{ type: 'ready', url }`;
 * - out: every 100 ms `{ type: 'progress', routes: [{ name, received, unique, duplicates, first, last }] }`;
 * - in:  `{ type: 'report' }` → out `{ type: 'report', routes: [… with latencies] }` (occurrence
 *   timestamp → arrival, ms, one per first delivery of an event);
 * - in:  `{ type: 'close' }` → the server closes and the process exits.
 *
 * A healthy route answers 200 at once, `slow` after slowMs, `failing` always 500.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type RouteKind = 'healthy' | 'slow' | 'failing';

export interface RouteCounts {
  name: string;
  kind: RouteKind;
  received: number;
  unique: number;
  duplicates: number;
  first: number;
  last: number;
}

export type ReceiverIn = { type: 'start'; routes: { path: string; name: string; kind: RouteKind }[]; slowMs: number } | { type: 'report' } | { type: 'close' };
export type ReceiverOut = { type: 'ready'; url: string } | { type: 'progress'; routes: RouteCounts[] } | { type: 'report'; routes: (RouteCounts & { latencies: number[] })[] };

interface Route extends RouteCounts {
  ids: Set<string>;
  latencies: number[];
}

const send = (message: ReceiverOut) => process.send!(message);
const counts = (r: Route): RouteCounts => ({ name: r.name, kind: r.kind, received: r.received, unique: r.ids.size, duplicates: r.duplicates, first: r.first, last: r.last });

function start(config: Extract<ReceiverIn, { type: 'start' }>): http.Server {
  const routes = new Map<string, Route>(config.routes.map((r) => [r.path, { ...r, received: 0, unique: 0, duplicates: 0, first: 0, last: 0, ids: new Set(), latencies: [] }]));
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const now = Date.now();
      const route = routes.get(req.url ?? '');
      if (!route) {
        res.statusCode = 404;
        res.end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { eventId: string; data: { timestamp: string } };
      route.received++;
      if (route.kind === 'failing') {
        res.statusCode = 500;
        res.end();
        return;
      }
      if (route.ids.has(body.eventId)) route.duplicates++;
      else {
        route.ids.add(body.eventId);
        route.latencies.push(now - Date.parse(body.data.timestamp));
      }
      if (route.first === 0) route.first = now;
      route.last = now;
      const answer = () => {
        res.statusCode = 200;
        res.end();
      };
      if (route.kind === 'slow') setTimeout(answer, config.slowMs);
      else answer();
    });
  });
  server.keepAliveTimeout = 30_000;
  server.listen(0, '127.0.0.1', () => send({ type: 'ready', url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` }));
  const progress = setInterval(() => send({ type: 'progress', routes: [...routes.values()].map(counts) }), 100);
  process.on('message', (m: ReceiverIn) => {
    if (m.type === 'report') send({ type: 'report', routes: [...routes.values()].map((r) => ({ ...counts(r), latencies: r.latencies })) });
    if (m.type === 'close') {
      clearInterval(progress);
      server.closeAllConnections();
      server.close(() => process.exit(0));
    }
  });
  return server;
}

process.once('message', (m: ReceiverIn) => {
  if (m.type === 'start') start(m);
});
process.on('disconnect', () => process.exit(0));
