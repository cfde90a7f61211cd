/**
 * The server the service refuses, in one line: an unsupported PostgreSQL version (the version
 * found and the versions supported) and a missing extension the user may not create (the
 * statement to run). The decision from made-up server answers, then the real check on the test
 * server: a user without the right to create the extensions in a fresh database, and `npm start`
 * against it (one line on stderr, exit code 1, no stack trace).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import pg from 'pg';
import { UnsupportedDatabaseError } from '../../platform/database.js';
import { checkServerRequirements } from '../../readmodels/server-requirements.js';
import { majorOf, SUPPORTED_MAJORS, unmetRequirement, type ServerFacts } from '../../platform/postgres-requirements.js';
import { testDb } from '../support/db.js';

const facts = (over: Partial<ServerFacts> = {}): ServerFacts => ({
  versionNum: 150018,
  version: '15.18 (Debian 15.18-0+deb12u1)',
  database: 'einvoicing',
  user: 'app',
  superuser: false,
  canCreateInDatabase: true,
  extensions: [
    { name: 'pg_trgm', available: true, installed: false, trusted: true },
    { name: 'btree_gin', available: true, installed: false, trusted: true },
  ],
  ...over,
});

describe('PostgreSQL requirements (version, extensions) checked at start', function () {
  this.timeout(120_000);

  it('accepts 15, 16, 17 and 18 with the extensions installed or creatable', () => {
    for (const major of [15, 16, 17, 18]) expect(unmetRequirement(facts({ versionNum: major * 10000 + 3, version: `${major}.3` })), String(major)).to.equal(null);
    expect(SUPPORTED_MAJORS).to.deep.equal([15, 16, 17, 18]);
    // Installed already: no privilege needed.
    const installed = facts({ canCreateInDatabase: false, extensions: facts().extensions.map((e) => ({ ...e, installed: true })) });
    expect(unmetRequirement(installed)).to.equal(null);
    // A superuser may create an untrusted one.
    expect(unmetRequirement(facts({ superuser: true, canCreateInDatabase: false, extensions: facts().extensions.map((e) => ({ ...e, trusted: false })) }))).to.equal(null);
  });

  it('refuses another version naming the version found and the versions supported', () => {
    expect(majorOf(140011)).to.equal(14);
    expect(unmetRequirement(facts({ versionNum: 140011, version: '14.11 (Ubuntu 14.11-0ubuntu0.22.04.1)' }))).to.equal(
      'PostgreSQL 14.11 is not supported: the service runs on PostgreSQL 15, 16, 17 or 18',
    );
    expect(unmetRequirement(facts({ versionNum: 130000, version: '13.0' }))).to.match(/^PostgreSQL 13\.0 is not supported/);
    expect(unmetRequirement(facts({ versionNum: 190000, version: '19devel' }))).to.equal('PostgreSQL 19devel is not supported: the service runs on PostgreSQL 15, 16, 17 or 18');
  });

  it('names the statement to run for an extension the user may not create, or the package for one the server lacks', () => {
    const noCreate = unmetRequirement(facts({ canCreateInDatabase: false }));
    expect(noCreate).to.equal(
      'the PostgreSQL extension pg_trgm is missing in database "einvoicing" and user "app" may not create it: run as a superuser in database "einvoicing": CREATE EXTENSION IF NOT EXISTS pg_trgm;',
    );
    const untrusted = unmetRequirement(facts({ extensions: [facts().extensions[0]!, { name: 'btree_gin', available: true, installed: false, trusted: false }] }));
    expect(untrusted).to.match(/btree_gin is missing .* CREATE EXTENSION IF NOT EXISTS btree_gin;$/);
    const absent = unmetRequirement(facts({ extensions: [{ name: 'pg_trgm', available: false, installed: false, trusted: false }, facts().extensions[1]!] }));
    expect(absent).to.equal(
      'the PostgreSQL extension pg_trgm is not available on the server (PostgreSQL 15): install the server\'s contrib package (Debian/Ubuntu: postgresql-contrib; RHEL: postgresql15-contrib), then run as a superuser in database "einvoicing": CREATE EXTENSION IF NOT EXISTS pg_trgm;',
    );
    for (const line of [noCreate, untrusted, absent]) expect(line).not.to.include('\n');
  });

  describe('on the test server', () => {
    const suffix = randomUUID().slice(0, 8);
    const role = `einv_noext_${suffix}`;
    const database = `einvoicing_test_${process.pid}_noext`;
    let url = '';

    before(async () => {
      const knex = testDb().knex;
      await knex.raw(`drop database if exists "${database}" with (force)`);
      await knex.raw(`create role ${role} login password 'noext'`);
      // Owned by the test's superuser: the role may connect, not create (no extension in it yet).
      await knex.raw(`create database "${database}"`);
      // The role logs in over TCP with its password (the test server may be reached over a socket).
      const server = new URL(testDb().url);
      const host = decodeURIComponent(server.hostname);
      url = `postgres://${role}:noext@${host && !host.startsWith('/') ? host : '127.0.0.1'}:${server.port || '5432'}/${database}`;
    });
    after(async () => {
      await testDb().knex.raw(`drop database if exists "${database}" with (force)`);
      await testDb().knex.raw(`drop role if exists ${role}`);
    });

    it('passes for the test database (its user created the extensions)', async () => {
      await checkServerRequirements(testDb().url);
    });

    it('refuses a database where the user may not create the extensions, with the statement to run', async () => {
      const err = await checkServerRequirements(url).then(() => null, (e: unknown) => e);
      expect(err).to.be.instanceOf(UnsupportedDatabaseError);
      expect((err as Error).message).to.equal(
        `the PostgreSQL extension pg_trgm is missing in database "${database}" and user "${role}" may not create it: run as a superuser in database "${database}": CREATE EXTENSION IF NOT EXISTS pg_trgm;`,
      );
      // The answer is the server's own: a superuser creating them makes the check pass.
      const admin = new pg.Client({ connectionString: testDb().url.replace(/\/[^/]*$/, `/${database}`) });
      await admin.connect();
      try {
        await admin.query('create extension if not exists pg_trgm; create extension if not exists btree_gin');
      } finally {
        await admin.end();
      }
      await checkServerRequirements(url);
      await testDb().knex.raw(`drop database "${database}" with (force)`);
      await testDb().knex.raw(`create database "${database}"`);
    });

    it('npm start prints that one line and exits 1, without a stack trace', async () => {
      const child = spawn(process.execPath, ['--import', 'tsx', 'scripts/start.ts'], {
        env: { ...process.env, DATABASE_URL: url, PORT: '0', LOG_LEVEL: 'silent' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      const code = await new Promise<number | null>((resolve) => child.on('exit', resolve));
      expect(code).to.equal(1);
      expect(stderr).to.equal(
        `einvoicing: the PostgreSQL extension pg_trgm is missing in database "${database}" and user "${role}" may not create it: run as a superuser in database "${database}": CREATE EXTENSION IF NOT EXISTS pg_trgm;\n`,
      );
    });
  });
});
