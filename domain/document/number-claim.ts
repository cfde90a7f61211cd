/**
 * Document number reuse (rule CORE-HEAD-010), enforced through the event store: one stream per
 * (workspace, environment, company, document number) records which document holds the number.
 * A number is free when never claimed, or when its holder was rejected (needs correction). It
 * stays taken while its holder is live and after final_invalid ("fix and send as a new document
 * with a new number"). Appends with an expected revision make concurrent claims race-free; the
 * claim is appended together with its document's first event (commands/submissions.ts).
 */
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { defineEvent } from '../events/envelope.js';

export const DOCUMENT_NUMBER_REUSED = 'CORE-HEAD-010';
/** The claim changed hands since the command layer looked at its holder: look again. */
export const STALE_CLAIM_FACTS = 'STALE_CLAIM_FACTS';

export const DocumentNumberClaimed = defineEvent({
  type: 'DocumentNumberClaimed',
  version: 1,
  codec: t.type({ documentNumber: t.string, documentId: t.string, claimedAt: t.string }),
});

export type NumberClaimEvent = DomainEvent<'DocumentNumberClaimed', t.TypeOf<typeof DocumentNumberClaimed.codec>>;

export type NumberClaimCommand = {
  type: 'Claim';
  documentNumber: string;
  documentId: string;
  /** The holder the facts below describe (null: the number was free when looked at). */
  holderId: string | null;
  /** What the holder's own stream says now (gathered by the command layer). */
  holderStatus: 'none' | 'rejected' | 'never_submitted' | 'live';
  now: string;
  /**
   * How old a claim whose document does not exist must be to count as orphaned (default
   * ABANDONED_CLAIM_MS). 0 where the claim and its document are written in one transaction: a
   * claim seen without its document then can only be one whose document never came (written
   * before claims and documents were appended together), so it is released at once.
   */
  orphanedAfterMs?: number;
};

/** Where a claim and its document are separate appends: a claim whose document never appeared within this long is considered abandoned. */
export const ABANDONED_CLAIM_MS = 60_000;

export interface NumberClaimState {
  holder: string | null;
  claimedAt: string | null;
}

export const numberClaimDecider: Decider<NumberClaimCommand, NumberClaimState, NumberClaimEvent> = {
  category: 'docnumber',
  initialState: { holder: null, claimedAt: null },
  events: { DocumentNumberClaimed },
  decide(command, state) {
    if (state.holder === command.documentId) return [];
    if (state.holder !== command.holderId) {
      throw new DomainError('conflict', STALE_CLAIM_FACTS, 'the document number was claimed meanwhile; gather the facts again');
    }
    // A number held by a rejected document is free again; so is one whose document was never
    // written (the request died between claim and submission) once the claim is old enough.
    const abandoned =
      command.holderStatus === 'never_submitted' &&
      Date.parse(state.claimedAt ?? command.now) + (command.orphanedAfterMs ?? ABANDONED_CLAIM_MS) <= Date.parse(command.now);
    if (state.holder && command.holderStatus !== 'rejected' && command.holderStatus !== 'none' && !abandoned) {
      throw new DomainError(
        'conflict',
        DOCUMENT_NUMBER_REUSED,
        `document number ${command.documentNumber} is already used by a document that is in progress or final; send a new number`,
        ['header', 'documentNumber'],
      );
    }
    return [{ type: 'DocumentNumberClaimed', data: { documentNumber: command.documentNumber, documentId: command.documentId, claimedAt: command.now } }];
  },
  evolve(_state, event) {
    return { holder: event.data.documentId, claimedAt: event.data.claimedAt };
  },
};

registerDecider(numberClaimDecider);
