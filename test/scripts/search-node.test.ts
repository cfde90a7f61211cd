import { expect } from 'chai';
import { execFile } from 'node:child_process';
import { findJavaHome, nodeStatus } from '../../scripts/search-node.js';

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, ['--import', 'tsx', 'scripts/search-node.ts', ...args], { timeout: 60000 }, (err, stdout, stderr) =>
      resolve({ code: err ? (typeof err.code === 'number' ? err.code : -1) : 0, stdout, stderr }),
    );
  });
}

describe('npm run search:node', () => {
  it('reports a node that does not run: status exits 1 with running false', async () => {
    expect(await nodeStatus(1)).to.deep.equal({ running: false, pid: null, url: 'http://127.0.0.1:1', health: null });
    const result = await run(['status', '--port', '1']);
    expect(result.code).to.equal(1);
    expect(JSON.parse(result.stdout)).to.deep.include({ running: false, url: 'http://127.0.0.1:1' });
  });

  it('exits 2 on bad arguments', async () => {
    expect((await run(['restart'])).code).to.equal(2);
    expect((await run(['start', '--port', 'abc'])).code).to.equal(2);
  });

  it('stops nothing when no node of its own runs on the port', async () => {
    const result = await run(['stop', '--port', '1']);
    expect(result.code).to.equal(0);
    expect(result.stderr).to.match(/no node of this script runs on port 1/);
  });

  it('runs Elasticsearch on ES_JAVA_HOME, else on the newest JDK 21 or newer', () => {
    expect(findJavaHome({ ES_JAVA_HOME: '/opt/jdk' })).to.equal('/opt/jdk');
    let found: string | null = null;
    try {
      found = findJavaHome({});
    } catch (err) {
      expect((err as Error).message).to.match(/no JDK 21 or newer/);
    }
    if (found) expect(found).to.match(/^\/usr\/lib\/jvm\//);
  });
});
