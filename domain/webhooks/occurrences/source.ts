/**
 * An occurrence source turns events of the log into the webhook events they cause (docs/api/webhooks.md,
 * 6.1). Each source is one small module (credits.ts, purchases.ts) listed
 * in index.ts. Pure: the same log event always gives the same occurrences with the same ids.
 */
import type { Occurrence } from '../delivery.js';

/** The part of a recorded event a source reads. */
export interface SourceEvent {
  readonly id: string;
  readonly type: string;
  readonly streamId: string;
  readonly schemaVersion: number;
  readonly data: unknown;
  readonly metadata: { readonly occurredAt: string; readonly environment?: string | null; readonly workspaceId?: string | null };
}

export interface OccurrenceSource {
  readonly name: string;
  /** The log event types the source reads. */
  readonly eventTypes: ReadonlySet<string>;
  occurrencesOf(event: SourceEvent): Occurrence[];
  /**
   * The workspace of every occurrence the event causes, read without decoding its data or
   * computing an occurrence: null when it causes none. Optional; undefined: only occurrencesOf tells.
   * The webhooks projection skips the occurrences of a workspace known to have no active subscription.
   */
  workspaceOf?(event: SourceEvent): string | null | undefined;
}

/** sandbox|test|development → sandbox, production|prod → production (as credit writes label their events). */
export function dataEnvironment(label: string | null | undefined): 'sandbox' | 'production' | null {
  const v = (label ?? '').trim().toLowerCase();
  if (v === 'sandbox' || v === 'test' || v === 'development') return 'sandbox';
  if (v === 'production' || v === 'prod') return 'production';
  return null;
}
