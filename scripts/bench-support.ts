/**
 * Small helpers for the benchmark scripts: percentiles, number formatting and a plain
 * (colourless) table, so that output piped to a file or CI log stays readable.
 */
import Table from 'cli-table3';

/** The p-th percentile (0..100) of an ascending array, nearest-rank; NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))]!;
}

export interface Distribution {
  readonly count: number;
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
}

/** p50/p99/max of a list of samples (the list is sorted in place). */
export function distribution(samples: number[]): Distribution {
  samples.sort((a, b) => a - b);
  return {
    count: samples.length,
    p50: percentile(samples, 50),
    p99: percentile(samples, 99),
    max: samples.length > 0 ? samples[samples.length - 1]! : Number.NaN,
  };
}

const intFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

export function fmtInt(n: number): string {
  return Number.isFinite(n) ? intFormat.format(Math.round(n)) : '–';
}

export function fmtMs(ms: number): string {
  if (!Number.isFinite(ms)) return '–';
  if (ms < 10) return `${ms.toFixed(2)} ms`;
  if (ms < 100) return `${ms.toFixed(1)} ms`;
  return `${fmtInt(ms)} ms`;
}

export function fmtDist(d: Distribution): string {
  return `${fmtMs(d.p50)} / ${fmtMs(d.p99)} / ${fmtMs(d.max)}`;
}

export function fmtBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  if (bytes < 1024 * 1024 * 1024) return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
  return `${(bytes / 1024 / 1024 / 1024).toFixed(2)} GiB`;
}

/** Renders rows under a header as a bordered text table without ANSI colours. */
export function renderTable(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const table = new Table({
    head: [...head],
    style: { head: [], border: [], compact: false },
    colAligns: head.map((_, i) => (i === 0 ? 'left' : 'right')),
  });
  for (const row of rows) table.push([...row]);
  return table.toString();
}
