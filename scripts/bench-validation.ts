/**
 * Benchmark of the validation engine alone, in process (no HTTP, no database): how many
 * realistic UAE tax invoices (20 lines by default) `validateDocument` validates per second on
 * one core, with and without the identity mapping template in front of it, and on documents
 * full of errors. Each document is a separate JSON.parse of a sample, as a request body would
 * be. It prints documents/s and microseconds per document, in wall-clock time and in the
 * process's CPU time (the figure to compare on a machine other work shares); it asserts nothing.
 * Target (issue 5): at least 20,000 documents/s for the engine alone.
 *
 *   node --import tsx scripts/bench-validation.ts [--seconds 3] [--lines 20] [--documents 2000]
 */
import { Command, InvalidArgumentError } from 'commander';
import {
  applyTemplate,
  identityTemplate,
  sampleDocument,
  validateDocument,
  type ValidationReport,
} from '../domain/validation/index.js';

const positive = (v: string) => {
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) throw new InvalidArgumentError('must be a positive number');
  return n;
};

const program = new Command()
  .name('bench-validation')
  .description('Throughput of the validation engine on realistic UAE tax invoices')
  .option('--seconds <n>', 'measuring time per scenario', positive, 3)
  .option('--lines <n>', 'line items per invoice', positive, 20)
  .option('--documents <n>', 'distinct parsed documents to cycle through', positive, 2000)
  .parse();
const opts = program.opts<{ seconds: number; lines: number; documents: number }>();

const documentType = { base: 'tax_invoice', modifiers: [] as string[] };
const now = new Date('2026-01-15T10:00:00.000Z');

function validJson(i: number): string {
  return JSON.stringify(sampleDocument('AE', { lines: opts.lines, documentNumber: `INV-${String(i).padStart(8, '0')}` }));
}

function invalidJson(i: number): string {
  const doc = sampleDocument('AE', { lines: opts.lines, documentNumber: `BAD-${i}` }) as any;
  doc.header.currency = 'USD'; // AE-HEAD-012 / 013
  delete doc.header.dueDate; // AE-HEAD-005
  doc.parties.buyer.address.stateOrProvince = 'XYZ'; // AE-BUY-011
  doc.parties.seller.taxIds[0].value = '12345'; // AE-SELL-012
  doc.lineItems[3].taxAmount = '7'; // CORE-PRE-002
  doc.lineItems[5].taxAmount = 999; // CORE-CALC-002 (CORE-CALC-004 skips: line 3 has no numeric taxAmount)
  return JSON.stringify(doc);
}

interface Scenario {
  name: string;
  run: (payload: unknown) => ValidationReport;
  documents: unknown[];
}

function measure(s: Scenario): { perSecond: number; microsPerDoc: number; cpuMicrosPerDoc: number; p50: number; p99: number; ok: number } {
  const docs = s.documents;
  // Warm-up: let the JIT settle and compile the rule plan.
  for (let i = 0; i < 20_000; i++) s.run(docs[i % docs.length]);
  let count = 0;
  let ok = 0;
  const cpuStarted = process.cpuUsage();
  const started = performance.now();
  const deadline = started + opts.seconds * 1000;
  const samples: number[] = [];
  while (performance.now() < deadline) {
    for (let i = 0; i < 1000; i++) {
      const report = s.run(docs[count % docs.length]);
      if (report.success) ok++;
      count++;
    }
  }
  const elapsed = performance.now() - started;
  const cpu = process.cpuUsage(cpuStarted);
  // Per-call latency, sampled separately so the timer does not weigh on the throughput figure.
  for (let i = 0; i < 20_000; i++) {
    const t0 = performance.now();
    s.run(docs[i % docs.length]);
    samples.push(performance.now() - t0);
  }
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))]! * 1000;
  return {
    perSecond: (count / elapsed) * 1000,
    microsPerDoc: (elapsed * 1000) / count,
    cpuMicrosPerDoc: (cpu.user + cpu.system) / count,
    p50: at(0.5),
    p99: at(0.99),
    ok,
  };
}

const n = Math.floor(opts.documents);
const valid = Array.from({ length: n }, (_, i) => JSON.parse(validJson(i)) as unknown);
const invalid = Array.from({ length: n }, (_, i) => JSON.parse(invalidJson(i)) as unknown);
const durationMs = 0; // the benchmark measures time itself; pass a constant to keep timer calls out of the loop

const scenarios: Scenario[] = [
  {
    name: `valid ${opts.lines}-line AE tax invoice, validateDocument`,
    documents: valid,
    run: (document) => validateDocument({ country: 'AE', documentType, document, now, durationMs }),
  },
  {
    name: `valid ${opts.lines}-line AE tax invoice, validateDocument (measuring durationMs)`,
    documents: valid,
    run: (document) => validateDocument({ country: 'AE', documentType, document, now }),
  },
  {
    name: `valid ${opts.lines}-line AE tax invoice, identity template + validateDocument`,
    documents: valid,
    run: (payload) => {
      const { document, pathMap, problems } = applyTemplate(identityTemplate, payload);
      return validateDocument({ country: 'AE', documentType, document, now, pathMap, mappingProblems: problems });
    },
  },
  {
    name: `invalid ${opts.lines}-line AE tax invoice (6 errors, 1 warning), template + validateDocument`,
    documents: invalid,
    run: (payload) => {
      const { document, pathMap, problems } = applyTemplate(identityTemplate, payload);
      return validateDocument({ country: 'AE', documentType, document, now, pathMap, mappingProblems: problems });
    },
  },
];

const sample = validateDocument({ country: 'AE', documentType, document: invalid[0], now });
console.log(`validation engine benchmark: node ${process.version}, ${opts.seconds}s per scenario, ${n} distinct documents`);
console.log(`invalid sample findings: ${sample.errors.map((e) => e.code).join(', ')} | warnings ${sample.warnings.map((e) => e.code).join(', ')}`);
console.log('');
for (const s of scenarios) {
  const r = measure(s);
  console.log(s.name);
  console.log(
    `  ${Math.round(r.perSecond).toLocaleString('en-US')} documents/s   ${r.microsPerDoc.toFixed(1)} µs/document   p50 ${r.p50.toFixed(1)} µs   p99 ${r.p99.toFixed(1)} µs`,
  );
  console.log(
    `  CPU: ${r.cpuMicrosPerDoc.toFixed(1)} µs/document = ${Math.round(1e6 / r.cpuMicrosPerDoc).toLocaleString('en-US')} documents per CPU-second (the process's user + system time, garbage collection included)`,
  );
}
console.log('');
console.log('target: at least 20,000 documents/s for the engine alone (first scenario; per CPU-second on a shared machine)');
