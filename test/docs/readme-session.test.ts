/**
 * The README's first session, run as a new user pastes it: the shell block under "A first session"
 * runs in bash against the real server (BASE pointed at it) and the admin CLI on the same database.
 */
import { expect } from 'chai';
import { execFile, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { testDb } from '../support/db.js';
import { startTestService, type TestService } from '../support/http.js';

/** The first ```sh block after the heading "## A first session". */
export function firstSessionScript(readme: string): string {
  const section = readme.slice(readme.indexOf('## A first session'));
  const match = /```sh\n([\s\S]*?)```/.exec(section);
  if (!match?.[1]) throw new Error('README: no shell block under "A first session"');
  return match[1];
}

function hasJq(): boolean {
  try {
    execFileSync('jq', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe("README: the first session runs as pasted", function () {
  this.timeout(120_000);
  let t: TestService;

  before(async function () {
    if (!hasJq()) {
      if (process.env.CI === 'true') throw new Error('jq is missing (.ci/run installs it)');
      this.skip();
    }
    t = await startTestService();
  });
  after(async () => t?.close());

  it('onboards a company, submits the example invoice and reads it final_valid', async () => {
    const script = firstSessionScript(fs.readFileSync('README.md', 'utf8'));
    expect(script).to.match(/^BASE=http:\/\/127\.0\.0\.1:3000$/m);
    const pointed = script.replace(/^BASE=.*$/m, `BASE=${t.url}`);
    const { code, stdout, stderr } = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
      execFile('bash', ['-euo', 'pipefail', '-c', pointed], { env: { ...process.env, DATABASE_URL: testDb().url, EVENTSTORE_URL: '', LOG_LEVEL: 'silent' }, timeout: 100_000 }, (err, out, errOut) =>
        resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout: out, stderr: errOut }),
      );
    });
    expect(code, stderr + stdout).to.equal(0);
    const lines = stdout.trim();
    expect(lines).to.match(/"authorizationId":"asp_/);
    expect(lines).to.match(/"readyForInvoicing":true/);
    // The last value printed is the status summary the README shows.
    const status = JSON.parse(lines.slice(lines.lastIndexOf('{\n')));
    expect(status).to.deep.equal({ state: 'final_valid', isTerminal: true, errors: [], network: 'PEPPOL' });
    // Nothing long (an XML in base64) reaches the terminal.
    expect(stdout.length).to.be.lessThan(1000);
  });
});
