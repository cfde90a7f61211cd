/**
 * `npm start` under a process manager: SIGTERM (or SIGINT) to the pid the manager holds — npm's —
 * stops the service (the script execs node, so npm's forwarded signal reaches it), the port stops
 * answering, and the embedded PostgreSQL it started follows it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { expect } from 'chai';
import { runningPostmaster } from '../../platform/database.js';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(check: () => Promise<boolean> | boolean, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 200));
  }
  return check();
}

describe('npm start under a process manager', function () {
  this.timeout(180_000);

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    it(`stops the service and its embedded PostgreSQL on ${signal} to npm's pid`, async () => {
      const dataDir = mkdtempSync(path.join(tmpdir(), 'npm-start-signal-'));
      const env: NodeJS.ProcessEnv = {
        ...process.env,
        PORT: '0',
        HOST: '127.0.0.1',
        EMBEDDED_PG_DIR: dataDir,
        EMBEDDED_PG_PORT: String(Number(process.env.TEST_EMBEDDED_PG_PORT ?? 55432) + 100),
        LOG_LEVEL: 'info',
      };
      delete env.DATABASE_URL;
      const npm = spawn('npm', ['start', '--silent'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stderr = '';
      npm.stderr!.on('data', (d) => (stderr += String(d)));
      const exited = new Promise<number | null>((r) => npm.once('exit', (code) => r(code)));
      try {
        const url = await new Promise<string>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`npm start did not start: ${stderr}`)), 120_000);
          createInterface({ input: npm.stdout! }).on('line', (line) => {
            try {
              const entry = JSON.parse(line) as { msg?: string; url?: string };
              if (entry.msg === 'service listening' && entry.url) {
                clearTimeout(timer);
                resolve(entry.url);
              }
            } catch {
              // not a log line
            }
          });
          npm.once('exit', (code) => reject(new Error(`npm start exited with ${code}: ${stderr}`)));
        });
        expect((await fetch(`${url}/healthz`)).status).to.equal(200);
        const postmaster = await runningPostmaster(dataDir);
        expect(postmaster, 'the embedded PostgreSQL runs').to.be.a('number');

        npm.kill(signal);
        const code = await Promise.race([exited, new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), 60_000))]);
        expect(code, `npm start did not exit on ${signal}: ${stderr}`).to.not.equal('timeout');
        const refused = await fetch(`${url}/healthz`).then(
          () => false,
          () => true,
        );
        expect(refused, 'the port no longer answers').to.equal(true);
        expect(await until(() => !alive(postmaster!), 30_000), 'the postmaster is gone').to.equal(true);
      } finally {
        if (npm.exitCode === null && npm.pid) npm.kill('SIGKILL');
        const left = await runningPostmaster(dataDir).catch(() => null);
        if (left !== null) process.kill(left, 'SIGINT');
        await until(async () => (await runningPostmaster(dataDir).catch(() => null)) === null, 30_000);
        rmSync(dataDir, { recursive: true, force: true });
      }
    });
  }
});
