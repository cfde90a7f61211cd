/**
 * The admin CLI's MyInvois commands, run as an operator would (a child process against the test
 * database): onboarding a taxpayer with its secrets read from files and never echoed, listing,
 * removing, and the precise refusals.
 */
import { expect } from 'chai';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { admin } from '../support/cli.js';
import { testDb } from '../support/db.js';
import { taxpayerPki, type TaxpayerPki } from './support.js';

describe('admin CLI: myinvois commands', function () {
  this.timeout(180000);
  let pki: TaxpayerPki;
  const env = { MYINVOIS_SYSTEM: 'preprod', MYINVOIS_CREDENTIALS_KEY: randomBytes(32).toString('base64'), MYINVOIS_CLIENT_ID: 'intermediary-client', MYINVOIS_CLIENT_SECRET: 'int-secret' };
  const TIN = 'C50000000050';

  before(async () => {
    pki = await taxpayerPki(TIN);
    await writeFile(join(pki.dir, 'secret.txt'), 'the-client-secret\n');
  });

  it('onboards a taxpayer from files, prints no secret, lists and removes it', async () => {
    const set = await admin(
      ['myinvois', 'taxpayer', 'set', '--tin', TIN, '--mode', 'taxpayer', '--client-id', 'erp-1', '--client-secret-file', join(pki.dir, 'secret.txt'), '--key-file', join(pki.dir, 'taxpayer.key'), '--certificate-file', join(pki.dir, 'taxpayer.pem')],
      env,
    );
    expect(set.code, set.stderr).to.equal(0);
    const printed = JSON.parse(set.stdout);
    expect(printed).to.include({ environment: 'production', tin: TIN, mode: 'taxpayer', clientId: 'erp-1' });
    expect(printed.certificate.issuer).to.contain('CN=Test MyInvois Issuing CA');
    expect(set.stdout + set.stderr).to.not.contain('the-client-secret').and.not.contain('PRIVATE KEY');
    const row = await testDb().knex('myinvois_taxpayers').where({ environment: 'production', tin: TIN }).first();
    expect(row.client_secret_sealed).to.match(/^enc:v1:/);
    const list = await admin(['myinvois', 'taxpayer', 'list'], env);
    expect(list.code, list.stderr).to.equal(0);
    expect((JSON.parse(list.stdout) as { tin: string }[]).map((t) => t.tin)).to.include(TIN);
    expect(list.stdout).to.not.contain('the-client-secret');
    const removed = await admin(['myinvois', 'taxpayer', 'remove', '--tin', TIN], env);
    expect(removed.code, removed.stderr).to.equal(0);
    const again = await admin(['myinvois', 'taxpayer', 'remove', '--tin', TIN], env);
    expect(again.code).to.equal(2);
    expect(again.stderr).to.contain(`no taxpayer ${TIN}`);
  });

  it('refuses precisely: not configured, missing client credentials, a key of another certificate, an unknown document', async () => {
    const files = ['--key-file', join(pki.dir, 'taxpayer.key'), '--certificate-file', join(pki.dir, 'taxpayer.pem')];
    const unconfigured = await admin(['myinvois', 'taxpayer', 'list'], {});
    expect(unconfigured.code).to.equal(2);
    expect(unconfigured.stderr).to.contain('MYINVOIS_SYSTEM');
    const noClient = await admin(['myinvois', 'taxpayer', 'set', '--tin', TIN, '--mode', 'taxpayer', ...files], env);
    expect(noClient.code).to.equal(2);
    expect(noClient.stderr).to.contain('--client-id and --client-secret-file');
    const other = await taxpayerPki('C60000000060');
    const mismatch = await admin(['myinvois', 'taxpayer', 'set', '--tin', TIN, '--mode', 'intermediary', '--key-file', join(other.dir, 'taxpayer.key'), '--certificate-file', join(pki.dir, 'taxpayer.pem')], env);
    expect(mismatch.code).to.equal(2);
    expect(mismatch.stderr).to.contain('does not belong to the certificate');
    const badTin = await admin(['myinvois', 'taxpayer', 'set', '--tin', 'not-a-tin', '--mode', 'intermediary', ...files], env);
    expect(badTin.code).to.equal(2);
    expect(badTin.stderr).to.contain('is not a TIN');
    const unknown = await admin(['myinvois', 'cancel', '--workspace', 'ws_nope', '--document', 'doc_nope', '--reason', 'x'], env);
    expect(unknown.code).to.equal(2);
    expect(unknown.stderr).to.contain('DOCUMENT_NOT_FOUND');
  });
});
