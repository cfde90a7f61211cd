/**
 * `npm run test:unit` (.mocharc.unit.json) runs without a database: no root hook, and no file it
 * runs reaches, through its relative imports, the test support or the code that opens PostgreSQL.
 */
import { expect } from 'chai';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '../..');
const DATABASE_MODULES = ['test/support/db.ts', 'test/support/hooks.ts', 'test/support/http.ts', 'platform/database.ts'];

function specFiles(patterns: string[]): string[] {
  return patterns.flatMap((p) => {
    if (!p.includes('*')) return [p];
    const dir = path.dirname(p);
    const suffix = path.basename(p).replace(/^\*/, '');
    return readdirSync(path.join(root, dir)).filter((f) => f.endsWith(suffix)).map((f) => `${dir}/${f}`);
  });
}

function imports(file: string): string[] {
  const text = readFileSync(path.join(root, file), 'utf8');
  const found = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.[^']+)'/g)].map((m) => m[1]!);
  return found
    .map((spec) => path.relative(root, path.resolve(path.join(root, path.dirname(file)), spec)).replace(/\.js$/, '.ts'))
    .filter((f) => existsSync(path.join(root, f)));
}

describe('the unit suite (npm run test:unit) needs no database', () => {
  const config = JSON.parse(readFileSync(path.join(root, '.mocharc.unit.json'), 'utf8')) as { spec: string[]; require?: string[] };

  it('has no root hook', () => {
    expect(config.require ?? []).to.deep.equal([]);
  });

  it('runs no file that imports the database support or the database bootstrap', () => {
    const seen = new Set<string>();
    const reached: string[] = [];
    const walk = (file: string, from: string) => {
      if (seen.has(file)) return;
      seen.add(file);
      if (DATABASE_MODULES.includes(file)) reached.push(`${from} -> ${file}`);
      for (const next of imports(file)) walk(next, file);
    };
    const files = specFiles(config.spec);
    expect(files.length).to.be.greaterThan(10);
    for (const f of files) walk(f, f);
    expect(reached).to.deep.equal([]);
  });
});
