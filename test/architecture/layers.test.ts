/**
 * The house's import rules, read from the source: no import cycle, and imports run one way,
 * scripts/ → http/ → projections/reactors/ → projections/ → commands/ → readmodels/ → platform/ → domain/.
 * A file may import its own layer or any layer below it, never one above. Pure: no database.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** Lowest first; a file's layer is the first prefix it matches, most specific first. */
const LAYERS = ['domain/', 'platform/', 'readmodels/', 'commands/', 'projections/', 'projections/reactors/', 'http/', 'scripts/'] as const;

function layerOf(file: string): number {
  let best = -1;
  let bestLength = -1;
  LAYERS.forEach((prefix, index) => {
    if (file.startsWith(prefix) && prefix.length > bestLength) {
      best = index;
      bestLength = prefix.length;
    }
  });
  return best;
}

function sourceFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) walk(rel);
      else if (entry.name.endsWith('.ts')) out.push(rel);
    }
  };
  for (const top of ['domain', 'platform', 'readmodels', 'commands', 'projections', 'http', 'scripts']) walk(top);
  return out;
}

const IMPORT = /(?:^|[\s;])(?:import|export)\b[^'"`;]*?from\s*['"](\.{1,2}\/[^'"]+)['"]|\bimport\s*\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)|^\s*import\s+['"](\.{1,2}\/[^'"]+)['"]/gm;

/** The project files a file imports (static, type-only and dynamic imports alike). */
function importsOf(file: string): string[] {
  const text = fs.readFileSync(path.join(ROOT, file), 'utf8');
  const found = new Set<string>();
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[1] ?? match[2] ?? match[3];
    if (!spec) continue;
    const target = path.posix.normalize(path.posix.join(path.posix.dirname(file), spec.replace(/\.js$/, '.ts')));
    found.add(target);
  }
  return [...found];
}

/** Every cycle met by a depth-first walk of the graph, each as `a → b → … → a`. */
function cyclesOf(graph: Map<string, string[]>): string[] {
  const state = new Map<string, 'open' | 'done'>();
  const cycles: string[] = [];
  const visit = (file: string, trail: string[]): void => {
    const seen = state.get(file);
    if (seen === 'done') return;
    if (seen === 'open') {
      cycles.push([...trail.slice(trail.indexOf(file)), file].join(' → '));
      return;
    }
    state.set(file, 'open');
    for (const target of graph.get(file) ?? []) if (graph.has(target)) visit(target, [...trail, file]);
    state.set(file, 'done');
  };
  for (const file of graph.keys()) visit(file, []);
  return cycles;
}

describe('architecture: the layer order of imports', () => {
  const files = sourceFiles();
  const graph = new Map(files.map((file) => [file, importsOf(file)]));

  it('reads the whole tree and finds the imports', () => {
    expect(files.length).to.be.greaterThan(200);
    expect(graph.get('http/service.ts')).to.include('projections/reactors/processes.ts');
  });

  it('every imported project file exists', () => {
    const missing = [...graph].flatMap(([file, targets]) => targets.filter((t) => !fs.existsSync(path.join(ROOT, t))).map((t) => `${file} → ${t}`));
    expect(missing).to.deep.equal([]);
  });

  it('no import runs from a lower layer to a higher one', () => {
    const upward: string[] = [];
    for (const [file, targets] of graph) {
      for (const target of targets) {
        if (layerOf(target) > layerOf(file)) upward.push(`${file} (${LAYERS[layerOf(file)]}) → ${target} (${LAYERS[layerOf(target)]})`);
      }
    }
    expect(upward).to.deep.equal([]);
  });

  it('domain/ imports nothing outside domain/ but libraries', () => {
    const outside = [...graph].filter(([file]) => file.startsWith('domain/')).flatMap(([file, targets]) => targets.filter((t) => !t.startsWith('domain/')).map((t) => `${file} → ${t}`));
    expect(outside).to.deep.equal([]);
  });

  it('has no import cycle', () => {
    expect(cyclesOf(graph)).to.deep.equal([]);
  });

  it('the checker ranks layers as documented and finds a cycle when there is one', () => {
    expect(layerOf('readmodels/x.ts')).to.be.lessThan(layerOf('commands/x.ts'));
    expect(layerOf('projections/reactors/delivery.ts')).to.be.greaterThan(layerOf('projections/documents.ts'));
    expect(layerOf('platform/eventstore/port.ts')).to.be.lessThan(layerOf('readmodels/checkpoints.ts'));
    expect(importsOf('platform/eventstore/index.ts')).to.include('platform/config.ts');
    const looped = new Map([['a.ts', ['b.ts']], ['b.ts', ['c.ts']], ['c.ts', ['a.ts']], ['d.ts', ['a.ts']]]);
    expect(cyclesOf(looped)).to.deep.equal(['a.ts → b.ts → c.ts → a.ts']);
    expect(cyclesOf(new Map([['a.ts', ['b.ts']], ['b.ts', []]]))).to.deep.equal([]);
  });
});
