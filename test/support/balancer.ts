/**
 * A round-robin HTTP load balancer for the deployment tests (http-proxy, the library most Node
 * proxies are built on), standing where haproxy stands in deploy/compose.yaml: each request goes
 * to the next target in turn; a target that cannot be reached answers 502. It records which
 * target took each request, and (when asked) the request bodies it passed on, so a test can
 * count what arrived where.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import httpProxy from 'http-proxy';

export interface ProxiedRequest {
  target: string;
  method: string;
  path: string;
  /** The request body as forwarded (only with `keepBodies`). */
  body: Buffer | null;
  /** The status the target answered (502: the target could not be reached). */
  status: number | null;
}

export interface Balancer {
  url: string;
  /** Every request, in arrival order. */
  requests: ProxiedRequest[];
  /** Replaces the targets (base URLs); the rotation starts again with the first. */
  setTargets(targets: readonly string[]): void;
  close(): Promise<void>;
}

export async function startBalancer(options: { targets?: readonly string[]; keepBodies?: boolean } = {}): Promise<Balancer> {
  let targets = [...(options.targets ?? [])];
  let next = 0;
  const requests: ProxiedRequest[] = [];
  const proxy = httpProxy.createProxyServer({ xfwd: true, proxyTimeout: 120_000 });
  proxy.on('proxyRes', (proxyRes, req) => {
    const record = (req as http.IncomingMessage & { record?: ProxiedRequest }).record;
    if (record) record.status = proxyRes.statusCode ?? null;
  });
  const server = http.createServer((req, res) => {
    if (targets.length === 0) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('no targets');
      return;
    }
    const target = targets[next++ % targets.length]!;
    const record: ProxiedRequest = { target, method: req.method ?? 'GET', path: req.url ?? '/', body: null, status: null };
    requests.push(record);
    (req as http.IncomingMessage & { record?: ProxiedRequest }).record = record;
    if (options.keepBodies) {
      // A second reader of the stream the proxy pipes on: it sees the same chunks.
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => (record.body = Buffer.concat(chunks)));
    }
    proxy.web(req, res, { target }, (err) => {
      record.status = 502;
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' });
      res.end(`bad gateway: ${err.message}`);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    setTargets(list) {
      targets = [...list];
      next = 0;
    },
    async close() {
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      proxy.close();
    },
  };
}
