/**
 * A round-robin HTTP load balancer for the deployment tests (http-proxy, the library most Node
 * proxies are built on), standing where haproxy stands in deploy/compose.yaml: each request goes
 * to the next target in turn; a target that cannot be reached answers 502. It records which
 * target took each request, and (when asked) the request bodies it passed on, so a test can
 * count what arrived where. It can also lose answers: the target gets the request and answers,
 * the client gets a 504 instead (as from a balancer whose upstream timed out).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import httpProxy from 'http-proxy';

export interface ProxiedRequest {
  target: string;
  method: string;
  path: string;
  /** The request body as forwarded (only with `keepBodies`). */
  body: Buffer | null;
  /** The status the target answered (502: the target could not be reached). */
  status: number | null;
  /** The target's answer was replaced by a 504. */
  lost: boolean;
  /** The body of the answer that was lost (decompressed). */
  lostAnswer: Buffer | null;
}

export interface Balancer {
  url: string;
  /** Every request, in arrival order. */
  requests: ProxiedRequest[];
  /** Replaces the targets (base URLs); the rotation starts again with the first. */
  setTargets(targets: readonly string[]): void;
  close(): Promise<void>;
}

export interface BalancerOptions {
  targets?: readonly string[];
  /** Keep each request's body in its record. */
  keepBodies?: boolean;
  /**
   * Whether to lose the target's answer to a request (asked when the answer arrives; `n` counts the
   * requests from 0): the request was passed on, the client gets a 504.
   */
  loseAnswer?: (request: ProxiedRequest, n: number) => boolean;
}

export async function startBalancer(options: BalancerOptions = {}): Promise<Balancer> {
  let targets = [...(options.targets ?? [])];
  let next = 0;
  const requests: ProxiedRequest[] = [];
  const proxy = httpProxy.createProxyServer({ xfwd: true, proxyTimeout: 120_000, selfHandleResponse: true });
  proxy.on('proxyRes', (proxyRes, req, res) => {
    const record = (req as http.IncomingMessage & { record?: ProxiedRequest }).record!;
    record.status = proxyRes.statusCode ?? null;
    record.lost = options.loseAnswer?.(record, requests.indexOf(record)) ?? false;
    if (record.lost) {
      const chunks: Buffer[] = [];
      proxyRes.on('data', (c: Buffer) => chunks.push(c));
      proxyRes.on('end', () => {
        const bytes = Buffer.concat(chunks);
        record.lostAnswer = proxyRes.headers['content-encoding'] === 'gzip' ? gunzipSync(bytes) : bytes;
        res.writeHead(504, { 'content-type': 'text/plain' }).end('gateway timeout');
      });
      return;
    }
    res.writeHead(proxyRes.statusCode ?? 502, proxyRes.statusMessage, proxyRes.headers);
    proxyRes.pipe(res);
  });
  const server = http.createServer((req, res) => {
    if (targets.length === 0) {
      res.writeHead(503, { 'content-type': 'text/plain' }).end('no targets');
      return;
    }
    const target = targets[next++ % targets.length]!;
    const record: ProxiedRequest = { target, method: req.method ?? 'GET', path: req.url ?? '/', body: null, status: null, lost: false, lostAnswer: null };
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
