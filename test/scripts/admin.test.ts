/**
 * The admin CLI finds the server's database the way the server does, and lists workspaces and
 * keys without a workspace filter (to find a lost ws_… id).
 */
import { expect } from 'chai';
import { cliConfig, runningEmbeddedPort } from '../../scripts/cli-support.js';
import { testConfig } from '../support/db.js';
import { startTestService, type TestService } from '../support/http.js';
import { admin } from '../support/cli.js';


describe('admin CLI: configuration and list commands', function () {
  this.timeout(120000);
  let t: TestService;

  before(async () => {
    t = await startTestService();
  });
  after(async () => t.close());

  it('workspace list and key list without --workspace show every workspace and key (no secrets)', async () => {
    const a = await t.tenant();
    const b = await t.tenant({ environment: 'production' });
    const workspaces = await admin(['workspace', 'list']);
    expect(workspaces.code, workspaces.stderr).to.equal(0);
    const ws = JSON.parse(workspaces.stdout) as { workspaceId: string; name: string; deletedAt: string | null }[];
    expect(ws.map((w) => w.workspaceId)).to.include.members([a.workspaceId, b.workspaceId]);
    expect(ws.find((w) => w.workspaceId === a.workspaceId)).to.include({ name: 'Test workspace', deletedAt: null });

    const all = await admin(['key', 'list']);
    expect(all.code, all.stderr).to.equal(0);
    const keys = JSON.parse(all.stdout) as { keyId: string; workspaceId: string }[];
    expect(keys.map((k) => k.keyId)).to.include.members([a.keyId, b.keyId]);
    expect(keys.find((k) => k.keyId === b.keyId)).to.include({ workspaceId: b.workspaceId, environment: 'production' });
    expect(all.stdout).to.not.contain(a.apiKey);

    const one = await admin(['key', 'list', '--workspace', a.workspaceId]);
    expect((JSON.parse(one.stdout) as { keyId: string }[]).map((k) => k.keyId)).to.deep.equal([a.keyId]);
    const unknown = await admin(['key', 'list', '--workspace', 'ws_nope']);
    expect(unknown.code).to.equal(2);
  });

  it('joins the embedded PostgreSQL running on the data directory, whatever EMBEDDED_PG_PORT says', async function () {
    const config = testConfig();
    if (config.databaseUrl) this.skip(); // an external database: nothing embedded to find
    const port = await runningEmbeddedPort(config.embeddedPg.dataDir);
    expect(port).to.be.a('number');
    const said: string[] = [];
    const joined = await cliConfig({ ...process.env, DATABASE_URL: '', EMBEDDED_PG_DIR: config.embeddedPg.dataDir, EMBEDDED_PG_PORT: '1' }, (m) => said.push(m));
    expect(joined.embeddedPg.port).to.equal(port);
    expect(said).to.deep.equal([`joining the embedded PostgreSQL running in ${config.embeddedPg.dataDir} on port ${port}`]);
    expect(await runningEmbeddedPort('var/no-such-dir')).to.equal(null);
    const untouched = await cliConfig({ ...process.env, DATABASE_URL: 'postgres://x@127.0.0.1:1/db' });
    expect(untouched.databaseUrl).to.equal('postgres://x@127.0.0.1:1/db');
  });
});
