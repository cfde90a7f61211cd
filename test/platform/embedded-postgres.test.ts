/**
 * Ownership of the embedded PostgreSQL (issue 13): a postmaster left running by a process killed
 * with SIGKILL is adopted by the next process and stopped when its last user closes; a start that
 * fails reports PostgreSQL's own message; `admin db stop` stops it. Uses its own data directory
 * and a port free when the suite starts, never the test database's server.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import { loadConfig, type Config } from '../../platform/config.js';
import { DatabaseUnavailableError, openDatabase, runningPostmaster } from '../../platform/database.js';

const dataDir = path.resolve('var/pg-test-ownership');
let port = 0;
const config = (): Config => loadConfig({ ...process.env, DATABASE_URL: '', EMBEDDED_PG_DIR: dataDir, EMBEDDED_PG_PORT: String(port), EMBEDDED_PG_DATABASE: 'ownership' });

/** A child process that opens the database, says so, and waits to be killed. */
function openerChild(): Promise<{ kill(): Promise<void> }> {
  const script = `
    import { loadConfig } from './platform/config.ts';
    import { openDatabase } from './platform/database.ts';
    const db = await openDatabase(loadConfig());
    await db.knex.raw('select 1');
    process.stdout.write('open\\n');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    env: { ...process.env, DATABASE_URL: '', EMBEDDED_PG_DIR: dataDir, EMBEDDED_PG_PORT: String(port), EMBEDDED_PG_DATABASE: 'ownership' },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (d.toString().includes('open')) resolve({ kill: async () => (child.kill('SIGKILL'), exited) });
    });
    child.once('exit', (code) => reject(new Error(`the opener exited with ${code}`)));
  });
}

function adminDbStop(): Promise<{ stopped: boolean; pid: number | null }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/admin.ts', 'db', 'stop'], {
      env: { ...process.env, DATABASE_URL: '', EMBEDDED_PG_DIR: dataDir, EMBEDDED_PG_PORT: String(port) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d));
    child.once('exit', (code) => (code === 0 ? resolve(JSON.parse(out)) : reject(new Error(`admin db stop exited ${code}`))));
  });
}

describe('embedded PostgreSQL ownership', function () {
  this.timeout(180_000);

  before(async () => {
    // A fixed port could be taken by any program (test servers listen on ephemeral ports): ask for a free one.
    const probe = net.createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', () => r()));
    port = (probe.address() as net.AddressInfo).port;
    await new Promise<void>((r) => probe.close(() => r()));
  });

  after(async () => {
    const pid = await runningPostmaster(dataDir);
    if (pid !== null) process.kill(pid, 'SIGINT');
  });

  it('adopts a postmaster whose starter was killed with SIGKILL, and stops it when its last user closes', async () => {
    const opener = await openerChild();
    const pid = await runningPostmaster(dataDir);
    expect(pid, 'a postmaster runs').to.be.a('number');
    await opener.kill();
    // The postmaster outlived its starter.
    expect(await runningPostmaster(dataDir)).to.equal(pid);

    const logs: string[] = [];
    const db = await openDatabase(config(), { log: (m) => logs.push(m) });
    expect(db.ownsServer).to.equal(true);
    expect(logs.join('\n')).to.contain(`pid ${pid}`);
    await db.knex.raw('select 1');
    await db.close();
    expect(await runningPostmaster(dataDir)).to.equal(null);
  });

  it('leaves the server running while another process still uses it; `admin db stop` stops it', async () => {
    const opener = await openerChild();
    const db = await openDatabase(config());
    await db.close();
    const pid = await runningPostmaster(dataDir);
    expect(pid, 'still running for the other process').to.be.a('number');
    await opener.kill();
    expect(await adminDbStop()).to.deep.include({ stopped: true, pid });
    expect(await runningPostmaster(dataDir)).to.equal(null);
    expect(await adminDbStop()).to.deep.include({ stopped: false, pid: null });
  });

  it('waits for a postmaster that is still shutting down, then starts a new one', async () => {
    const opener = await openerChild();
    const old = await runningPostmaster(dataDir);
    await opener.kill();
    process.kill(old!, 'SIGINT'); // it is shutting down as the next process opens the database
    const logs: string[] = [];
    const db = await openDatabase(config(), { log: (m) => logs.push(m) });
    try {
      await db.knex.raw('select 1');
      const now = await runningPostmaster(dataDir);
      expect(now).to.be.a('number');
      expect(now).not.to.equal(old);
    } finally {
      await db.close();
    }
    expect(await runningPostmaster(dataDir)).to.equal(null);
  });

  it("reports PostgreSQL's own error when the server cannot start", async () => {
    // Another program holds the port: PostgreSQL cannot bind it.
    const blocker = net.createServer((socket) => socket.destroy());
    await new Promise<void>((r) => blocker.listen(port, '127.0.0.1', () => r()));
    try {
      const err = await openDatabase(config()).catch((e: unknown) => e);
      expect(err, (err as Error).stack).to.be.instanceOf(DatabaseUnavailableError);
      expect((err as Error).message).to.match(/FATAL|could not (bind|create)/);
      expect((err as Error).message).not.to.contain('is the port taken');
      expect(await runningPostmaster(dataDir)).to.equal(null);
    } finally {
      await new Promise<void>((r) => blocker.close(() => r()));
    }
  });
});
