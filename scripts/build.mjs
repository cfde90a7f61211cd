/**
 * `npm run build` (and the first step of `npm start` and `npm run rebuild`): the service's
 * TypeScript compiled to JavaScript in dist/, one file per source file, with esbuild (the
 * transpiler tsx itself runs on, a dependency of its own here). Plain JavaScript, so that it runs
 * before anything is compiled.
 *
 * Why: run through tsx at run time, the server keeps every module's TypeScript source, its
 * transpiled text and its source map as strings in V8's heap for the life of the process (a heap
 * snapshot under load: 27.7 MB of strings, most of them those), and every full collection marks
 * them (docs/benchmarks.md, "The server's heap and V8's full collections"). Compiled, V8 holds
 * one JavaScript source per module. Types are not checked here (`npm run typecheck` does that).
 *
 * The tree is mirrored: dist/<folder>/<file>.js for every source file of the service's folders,
 * and the files the code reads next to itself (the OpenAPI examples, the UBL schemas, examples/)
 * are copied to the same place, so that `new URL('./x', import.meta.url)` finds them. The output
 * is written afresh (about a second) unless it is up to date: dist/.build-stamp records the files
 * built and their newest modification time, and a start whose sources match it builds nothing
 * (so that a second instance started from one checkout does not replace the tree the first runs
 * from). BUILD_OUTDIR writes elsewhere (the tests); --force builds whatever the stamp says.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SOURCE_FOLDERS = ['domain', 'commands', 'projections', 'readmodels', 'http', 'platform', 'scripts'];
/** Folders read at run time relative to the code, copied whole. */
const DATA_FOLDERS = ['examples'];
const outdir = path.resolve(root, process.env.BUILD_OUTDIR || 'dist');
const quiet = process.env.BUILD_QUIET === '1';

const started = performance.now();
const entryPoints = [];
const copies = [];
for (const folder of SOURCE_FOLDERS) {
  for (const entry of fs.readdirSync(path.join(root, folder), { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if (entry.name.endsWith('.d.ts')) continue;
    if (entry.name.endsWith('.ts')) entryPoints.push(file);
    else copies.push(file);
  }
}
for (const folder of DATA_FOLDERS) {
  for (const entry of fs.readdirSync(path.join(root, folder), { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) copies.push(path.join(entry.parentPath, entry.name));
  }
}

// Up to date: the same files, none modified since, and the same esbuild and build script.
const { version: esbuildVersion } = JSON.parse(fs.readFileSync(path.join(root, 'node_modules', 'esbuild', 'package.json'), 'utf8'));
const inputs = [...entryPoints, ...copies, fileURLToPath(import.meta.url)].sort();
let newest = 0;
for (const file of inputs) newest = Math.max(newest, fs.statSync(file).mtimeMs);
const stamp = JSON.stringify({ esbuild: esbuildVersion, newest, files: inputs.map((f) => path.relative(root, f)) });
const stampFile = path.join(outdir, '.build-stamp');
if (!process.argv.includes('--force') && fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === stamp) {
  if (!quiet) console.error(`build: dist/ is up to date (${entryPoints.length} modules)`);
  process.exit(0);
}

// Written beside the old output, then swapped in, so that a process still running from dist/
// (another instance) never sees a half-written tree.
const next = `${outdir}.next-${process.pid}`;
fs.rmSync(next, { recursive: true, force: true });
await build({
  entryPoints,
  outdir: next,
  outbase: root,
  bundle: false,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  // Keep the names functions and classes have in the source (stack traces, error names, logs).
  keepNames: true,
  logLevel: 'warning',
});
for (const file of copies) {
  const to = path.join(next, path.relative(root, file));
  fs.mkdirSync(path.dirname(to), { recursive: true });
  fs.copyFileSync(file, to);
}
fs.writeFileSync(path.join(next, '.build-stamp'), stamp);
const old = `${outdir}.old-${process.pid}`;
if (fs.existsSync(outdir)) fs.renameSync(outdir, old);
fs.renameSync(next, outdir);
fs.rmSync(old, { recursive: true, force: true });
if (!quiet) {
  console.error(`build: ${entryPoints.length} modules and ${copies.length} files to ${path.relative(root, outdir) || '.'}/ in ${Math.round(performance.now() - started)} ms`);
}
