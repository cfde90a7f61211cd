/**
 * Every source of webhook occurrences: credits (`isv.credits.*`), purchases
 * (`purchase.invoice.stored`) and sales documents (`document.status.changed`). A new source is one module implementing OccurrenceSource, added
 * to this list.
 */
import { creditOccurrences } from './credits.js';
import { documentStatusOccurrences } from './documents.js';
import { purchaseOccurrences } from './purchases.js';
import type { OccurrenceSource } from './source.js';

export const OCCURRENCE_SOURCES: readonly OccurrenceSource[] = [creditOccurrences, purchaseOccurrences, documentStatusOccurrences];

export type { OccurrenceSource, SourceEvent } from './source.js';
export { dataEnvironment } from './source.js';
