/**
 * Every source of webhook occurrences. A new source (e.g. purchases: `purchase.invoice.stored`)
 * is one module implementing OccurrenceSource, added to this list.
 */
import { creditOccurrences } from './credits.js';
import type { OccurrenceSource } from './source.js';

export const OCCURRENCE_SOURCES: readonly OccurrenceSource[] = [creditOccurrences];

export type { OccurrenceSource, SourceEvent } from './source.js';
export { dataEnvironment } from './source.js';
