/**
 * `npm run bench:http`: requests/s and p50/p99 latency of an authenticated no-op read
 * (GET /readyz with a key) and the same read without a key, at 1, 16 and 64 concurrent
 * connections, against the real service started as a separate process on the embedded
 * PostgreSQL; then the server's peak RSS. Prints figures; asserts nothing.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import autocannon from 'autocannon';
import { Command } from 'commander';
import { SERVICE_NODE_FLAGS, fmtInt, fmtMs, renderTable } from './bench-support.js';

const program = new Command('bench-http')
  .option('--seconds <n>', 'duration of each run', (v) => Number(v), 5)
  .option('--port <n>', 'server port', (v) => Number(v), 3917)
  .parse();
const { seconds, port } = program.opts<{ seconds: number; port: number }>();

const env = {
  ...process.env,
  EMBEDDED_PG_DIR: 'var/pg-bench-http',
  EMBEDDED_PG_PORT: '54379',
  PORT: String(port),
  LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
};

function run(args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], { env, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.on('exit', (code) => (code === 0 ? resolve(out) : reject(new Error(`${args.join(' ')} exited ${code}`))));
  });
}

async function waitReady(url: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      if ((await fetch(url)).status === 200) return;
    } catch {
      /* not up yet */
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('server did not become ready');
}

function peakRssMb(child: ChildProcess): number {
  const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const kb = Number(/VmHWM:\s+(\d+)/.exec(status)?.[1] ?? 'NaN');
  return kb / 1024;
}

const { workspaceId } = JSON.parse(await run(['scripts/admin.ts', 'workspace', 'create', '--name', 'bench']));
const { apiKey } = JSON.parse(
  await run(['scripts/admin.ts', 'key', 'create', '--workspace', workspaceId, '--environment', 'sandbox', '--permission', 'read', '--role', 'member']),
);

const server = spawn(process.execPath, [...SERVICE_NODE_FLAGS, '--import', 'tsx', 'scripts/start.ts'], { env, stdio: ['ignore', 'ignore', 'inherit'] });
const base = `http://127.0.0.1:${port}`;
try {
  await waitReady(`${base}/readyz`);
  // Warm up the JIT and the pools on both paths before measuring.
  for (const headers of [{ authorization: `Bearer ${apiKey}` }, {}]) {
    await autocannon({ url: `${base}/readyz`, connections: 16, duration: 2, headers });
  }
  const rows: string[][] = [];
  const results: Record<string, { rps: number; mean: number }> = {};
  for (const connections of [1, 16, 64]) {
    for (const authed of [true, false]) {
      const result = await autocannon({
        url: `${base}/readyz`,
        connections,
        duration: seconds,
        headers: authed ? { authorization: `Bearer ${apiKey}` } : {},
      });
      const label = `${authed ? 'with key' : 'no key'}, ${connections} conn`;
      results[label] = { rps: result.requests.average, mean: result.latency.mean };
      rows.push([
        authed ? 'GET /readyz + key' : 'GET /readyz',
        String(connections),
        fmtInt(result.requests.average),
        fmtMs(result.latency.p50),
        fmtMs(result.latency.p99),
        String(result.non2xx),
      ]);
    }
  }
  console.log(renderTable(['request', 'connections', 'requests/s', 'p50', 'p99', 'non-2xx'], rows));
  // At one connection requests are sequential, so the time per request is 1000 / (requests/s) ms.
  const authCost = 1000 / results['with key, 1 conn']!.rps - 1000 / results['no key, 1 conn']!.rps;
  const rss = peakRssMb(server);
  console.log(`authentication cost per request (time per request with key minus without, at 1 connection): ${authCost.toFixed(3)} ms`);
  console.log(`server peak RSS: ${rss.toFixed(0)} MB`);
  const rps64 = results['with key, 64 conn']!.rps;
  console.log(
    `targets: auth < 0.2 ms per request: ${authCost < 0.2 ? 'met' : 'NOT met'}; >= 5,000 requests/s at 64 connections: ${rps64 >= 5000 ? 'met' : 'NOT met'} (${fmtInt(rps64)})`,
  );
} finally {
  server.kill('SIGTERM');
  await new Promise((r) => server.once('exit', r));
}
