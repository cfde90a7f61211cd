/** Parses CSV (the ledger exports) in tests. */
import { parse } from 'csv-parse/sync';

export function parseCsv(text: string): string[][] {
  return parse(text, { relax_column_count: true }) as string[][];
}
