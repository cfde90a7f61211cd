/**
 * A local Elasticsearch node for the tests and benchmarks: the integration-test distribution
 * of Elasticsearch (core modules only), fetched from Maven Central, unpacked under
 * var/elasticsearch, run as an unprivileged user.
 *
 *   npm run search:node -- start [--port 9200]   fetch, unpack, start, wait for cluster health
 *   npm run search:node -- status [--port 9200]  prints {"running", "pid", "url", "health"}
 *   npm run search:node -- stop [--port 9200]
 *
 * The port defaults to ELASTICSEARCH_NODE_PORT, else 9200 (transport: port + 100). `start`
 * prints the node's URL on stdout. Java: ES_JAVA_HOME, else the newest JDK 21 or newer under
 * /usr/lib/jvm. Exit codes: 0 ok; 1 the node failed (its log tail on stderr) or is not
 * running (status); 2 bad arguments; 3 no Java or Maven (nothing to run it with).
 */
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { isMainModule } from './cli-support.js';

export const ES_VERSION = '9.1.0';
const ARTIFACT = `org.elasticsearch.distribution.integ-test-zip:elasticsearch:${ES_VERSION}:zip`;
const RUN_AS = 'elasticsearch';
const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const base = path.join(root, 'var', 'elasticsearch');
const home = path.join(base, `elasticsearch-${ES_VERSION}`);

export class MissingToolError extends Error {
  override readonly name = 'MissingToolError';
}

function log(msg: string) {
  process.stderr.write(`search-node: ${msg}\n`);
}

function javaMajor(javaHome: string): number | null {
  try {
    const release = fs.readFileSync(path.join(javaHome, 'release'), 'utf8');
    const m = /^JAVA_VERSION="(\d+)/m.exec(release);
    return m && fs.existsSync(path.join(javaHome, 'bin', 'java')) ? Number(m[1]) : null;
  } catch {
    return null;
  }
}

/** ES_JAVA_HOME when set, else the newest JDK ≥ 21 under /usr/lib/jvm. */
export function findJavaHome(env: NodeJS.ProcessEnv = process.env): string {
  if (env.ES_JAVA_HOME) return env.ES_JAVA_HOME;
  const dir = '/usr/lib/jvm';
  const candidates = (fs.existsSync(dir) ? fs.readdirSync(dir) : [])
    .map((name) => path.join(dir, name))
    .filter((p) => !fs.lstatSync(p).isSymbolicLink())
    .map((p) => ({ p, major: javaMajor(p) }))
    .filter((c): c is { p: string; major: number } => c.major !== null && c.major >= 21)
    .sort((a, b) => b.major - a.major);
  if (candidates.length === 0) throw new MissingToolError('no JDK 21 or newer under /usr/lib/jvm (set ES_JAVA_HOME)');
  return candidates[0]!.p;
}

function distributionZip(): string {
  const repo = process.env.MAVEN_REPOSITORY || path.join(os.homedir(), '.m2', 'repository');
  const zip = path.join(repo, 'org', 'elasticsearch', 'distribution', 'integ-test-zip', 'elasticsearch', ES_VERSION, `elasticsearch-${ES_VERSION}.zip`);
  if (fs.existsSync(zip)) return zip;
  log(`fetching ${ARTIFACT} with Maven`);
  try {
    execFileSync('mvn', ['-q', 'dependency:get', `-Dartifact=${ARTIFACT}`, '-Dtransitive=false'], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new MissingToolError('Maven (mvn) is not installed');
    throw err;
  }
  if (!fs.existsSync(zip)) throw new Error(`Maven did not put ${zip} in place`);
  return zip;
}

function unpack(): void {
  if (fs.existsSync(path.join(home, 'bin', 'elasticsearch'))) return;
  const zip = distributionZip();
  fs.mkdirSync(base, { recursive: true });
  log(`unpacking ${path.basename(zip)} into ${path.relative(root, base)}`);
  const partial = path.join(base, `unpacking-${process.pid}`);
  fs.rmSync(partial, { recursive: true, force: true });
  try {
    execFileSync('unzip', ['-q', zip, '-d', partial], { stdio: ['ignore', 'inherit', 'inherit'] });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new MissingToolError('unzip is not installed');
    throw err;
  }
  fs.renameSync(path.join(partial, `elasticsearch-${ES_VERSION}`), home);
  fs.rmSync(partial, { recursive: true, force: true });
}

/** The uid/gid to run as: ours, or (as root, which Elasticsearch refuses) the elasticsearch user, created if missing. */
function runAs(): { uid: number; gid: number } | null {
  if (process.getuid?.() !== 0) return null;
  const lookup = () => {
    try {
      const id = (flag: string) => Number(execFileSync('id', [flag, RUN_AS], { stdio: ['ignore', 'pipe', 'ignore'] }).toString());
      return { uid: id('-u'), gid: id('-g') };
    } catch {
      return null;
    }
  };
  const found = lookup();
  if (found) return found;
  log(`creating the unprivileged user "${RUN_AS}"`);
  execFileSync('useradd', ['--system', '--no-create-home', '--shell', '/usr/sbin/nologin', RUN_AS], { stdio: 'inherit' });
  return lookup()!;
}

interface NodePaths {
  data: string;
  logs: string;
  pidFile: string;
  out: string;
}

function nodePaths(port: number): NodePaths {
  const dir = path.join(base, `node-${port}`);
  return { data: path.join(dir, 'data'), logs: path.join(dir, 'logs'), pidFile: path.join(dir, 'node.pid'), out: path.join(dir, 'console.log') };
}

function chownTree(dir: string, uid: number, gid: number): void {
  execFileSync('chown', ['-R', `${uid}:${gid}`, dir]);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function readPid(paths: NodePaths): number | null {
  try {
    const pid = Number(fs.readFileSync(paths.pidFile, 'utf8').trim());
    return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : null;
  } catch {
    return null;
  }
}

export const nodeUrl = (port: number) => `http://127.0.0.1:${port}`;

/** The cluster health status, or null when the node does not answer. (`GET /` is not routed on this distribution.) */
export async function clusterHealth(url: string, timeoutMs = 2000): Promise<string | null> {
  try {
    const res = await fetch(`${url}/_cluster/health`, { signal: AbortSignal.timeout(timeoutMs) });
    if (!res.ok) return null;
    return ((await res.json()) as { status?: string }).status ?? null;
  } catch {
    return null;
  }
}

function tail(file: string, lines = 40): string {
  try {
    return fs.readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

export async function startNode(port: number, options: { timeoutMs?: number } = {}): Promise<string> {
  const url = nodeUrl(port);
  const paths = nodePaths(port);
  const running = readPid(paths);
  const health = await clusterHealth(url);
  if (running && health && health !== 'red') return url;
  if (!running && health) throw new Error(`port ${port} is taken by another Elasticsearch (not started by this script)`);
  const javaHome = findJavaHome();
  unpack();
  fs.mkdirSync(paths.data, { recursive: true });
  fs.mkdirSync(paths.logs, { recursive: true });
  const user = runAs();
  if (user) {
    chownTree(home, user.uid, user.gid);
    chownTree(path.dirname(paths.data), user.uid, user.gid);
  }
  if (!running) {
    log(`starting Elasticsearch ${ES_VERSION} on port ${port} (Java in ${javaHome}${user ? `, as ${RUN_AS}` : ''})`);
    const out = fs.openSync(paths.out, 'a');
    const child = spawn(
      path.join(home, 'bin', 'elasticsearch'),
      [
        '-E', 'discovery.type=single-node',
        '-E', 'xpack.security.enabled=false',
        '-E', `http.port=${port}`,
        '-E', `transport.port=${port + 100}`,
        '-E', 'network.host=127.0.0.1',
        '-E', `path.data=${paths.data}`,
        '-E', `path.logs=${paths.logs}`,
        '-E', `cluster.name=einvoicing-${port}`,
        '-E', 'cluster.routing.allocation.disk.threshold_enabled=false',
      ],
      {
        cwd: home,
        detached: true,
        stdio: ['ignore', out, out],
        env: { ...process.env, ES_JAVA_HOME: javaHome, ES_JAVA_OPTS: process.env.ES_JAVA_OPTS || '-Xms512m -Xmx512m', JAVA_HOME: javaHome },
        ...(user ?? {}),
      },
    );
    fs.closeSync(out);
    child.unref();
    fs.writeFileSync(paths.pidFile, `${child.pid}\n`);
  }
  const deadline = Date.now() + (options.timeoutMs ?? 180_000);
  for (;;) {
    const status = await clusterHealth(url);
    if (status === 'green' || status === 'yellow') return url;
    const pid = readPid(paths);
    if (!pid) throw new Error(`Elasticsearch exited while starting; the end of its output:\n${tail(paths.out)}`);
    if (Date.now() > deadline) throw new Error(`Elasticsearch did not become healthy on port ${port} in time; the end of its output:\n${tail(paths.out)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

export async function stopNode(port: number): Promise<boolean> {
  const paths = nodePaths(port);
  const pid = readPid(paths);
  if (!pid) return false;
  // The launcher runs the server JVM as its child in the same process group.
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(-pid, s);
    } catch {
      try {
        process.kill(pid, s);
      } catch {
        /* gone */
      }
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + 30_000;
  while (alive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  if (alive(pid)) signal('SIGKILL');
  fs.rmSync(paths.pidFile, { force: true });
  return true;
}

export async function nodeStatus(port: number) {
  const url = nodeUrl(port);
  const pid = readPid(nodePaths(port));
  const health = await clusterHealth(url);
  return { running: pid !== null && health !== null, pid, url, health };
}

function parsePort(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 65435) throw new InvalidArgumentError('must be a port number');
  return n;
}

async function main(argv: string[]): Promise<number> {
  const program = new Command()
    .name('search:node')
    .description('a local Elasticsearch node (integration-test distribution) for tests and benchmarks')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });
  const defaultPort = process.env.ELASTICSEARCH_NODE_PORT || '9200';
  let code = 0;
  const portOption = ['--port <port>', 'HTTP port (transport: port + 100)', parsePort, parsePort(defaultPort)] as const;
  program
    .command('start')
    .description('fetch, unpack and start the node; wait until the cluster is healthy; print its URL')
    .option(...portOption)
    .action(async (o: { port: number }) => {
      process.stdout.write(`${await startNode(o.port)}\n`);
    });
  program
    .command('stop')
    .description('stop the node')
    .option(...portOption)
    .action(async (o: { port: number }) => {
      log((await stopNode(o.port)) ? `stopped the node on port ${o.port}` : `no node of this script runs on port ${o.port}`);
    });
  program
    .command('status')
    .description('print whether the node runs and its health')
    .option(...portOption)
    .action(async (o: { port: number }) => {
      const status = await nodeStatus(o.port);
      process.stdout.write(`${JSON.stringify(status)}\n`);
      if (!status.running) code = 1;
    });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return code;
  } catch (err) {
    const e = err as { code?: string; exitCode?: number };
    if (typeof e.code === 'string' && e.code.startsWith('commander.')) return e.exitCode === 0 ? 0 : 2;
    if (err instanceof MissingToolError) {
      log(err.message);
      return 3;
    }
    log(err instanceof Error ? err.message : String(err));
    return 1;
  }
}

if (isMainModule(import.meta.url)) {
  main(process.argv.slice(2)).then((code) => process.exit(code));
}
