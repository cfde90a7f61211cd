/**
 * The service's lower-casing of keywords (readmodels/search/fields.ts `lowerKeyword`): the simple
 * Unicode case mapping, code point by code point, as Elasticsearch's `lowercase` normalizer and
 * PostgreSQL's `pg_c_utf8` collation apply it. Checked against known mappings, and, on a server
 * that has `pg_c_utf8` (PostgreSQL 17 or newer), against PostgreSQL's own lower() for every
 * assigned code point of the Basic Multilingual Plane and the scripts' supplementary letters.
 */
import { expect } from 'chai';
import { lowerKeyword } from '../../readmodels/search/fields.js';
import { testDb } from '../support/db.js';

describe('search keywords lower-cased by the service', function () {
  this.timeout(60_000);

  it('maps each code point to one (simple mapping): Turkish, German, Greek, Arabic, accented Latin', () => {
    expect(lowerKeyword('İSTANBUL')).to.equal('istanbul'); // U+0130 → i (the full mapping gives i + U+0307)
    expect(lowerKeyword('IĞDIR ı')).to.equal('iğdir ı');
    expect(lowerKeyword('STRAẞE Straße')).to.equal('straße straße'); // capital sharp s → ß; ß stays
    expect(lowerKeyword('ΟΔΟΣ')).to.equal('οδοσ'); // no final-sigma rule
    expect(lowerKeyword('شركة الإمارات')).to.equal('شركة الإمارات'); // Arabic has no case
    expect(lowerKeyword('ÉCOLE Ǆ Ａ')).to.equal('école ǆ ａ');
    expect(lowerKeyword('𐐀')).to.equal('𐐨'); // outside the BMP
    expect(lowerKeyword('Plain ASCII 123')).to.equal('plain ascii 123');
    for (const s of ['İ', 'ẞ', 'Σ', 'ǅ', 'Å']) expect([...lowerKeyword(s)]).to.have.length(1);
  });

  it('agrees with PostgreSQL lower() under pg_c_utf8 wherever the server has it', async function () {
    const knex = testDb().knex;
    const { rows } = await knex.raw(`select 1 from pg_collation where collname = 'pg_c_utf8'`);
    if (rows.length === 0) {
      console.log('      skipped: this server has no pg_c_utf8 (PostgreSQL 16 or older)');
      this.skip();
    }
    const points: string[] = [];
    for (let cp = 0x20; cp <= 0x1ffff; cp++) {
      if (cp >= 0xd800 && cp <= 0xdfff) continue;
      const ch = String.fromCodePoint(cp);
      // Letters of Unicode 16 or older: Node's tables may be newer than the server's (Unicode 17
      // added cased letters at U+A7CE…U+A7D4 and the Beria Erfe script, U+16EA0…U+16EDF).
      if ((cp >= 0xa7ce && cp <= 0xa7d4) || (cp >= 0x16ea0 && cp <= 0x16edf)) continue;
      if (/\p{L}/u.test(ch)) points.push(ch);
    }
    const { rows: lowered } = await knex.raw(`select array_agg(lower(v collate "pg_c_utf8") order by n) as l from unnest(?::text[]) with ordinality as u(v, n)`, [points]);
    const theirs = lowered[0].l as string[];
    const differ = points.filter((p, i) => lowerKeyword(p) !== theirs[i]).map((p) => `U+${p.codePointAt(0)!.toString(16).toUpperCase()}`);
    expect(differ, differ.join(' ')).to.have.length(0);
  });
});
