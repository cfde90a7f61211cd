/**
 * A buyer's answer (Peppol Invoice Response) that names no sales document this service delivered
 * (stream `peppolresponse-<sha256 of its bytes>`): kept with its bytes and the reason it matched
 * nothing, for operators (`admin peppol unmatched-responses`), never dropped and never a refusal
 * of the carrying message. The same bytes received again are kept once.
 */
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { defineEvent } from '../events/envelope.js';
import { ArtifactRef } from '../document/document.js';

export const UnmatchedResponseKept = defineEvent({
  type: 'PeppolResponseUnmatched',
  version: 1,
  codec: t.type({
    environment: t.string,
    channel: t.string,
    messageId: t.union([t.string, t.null]),
    /** What could be read of it (null when it could not be read at all). */
    responseId: t.union([t.string, t.null]),
    code: t.union([t.string, t.null]),
    invoiceNumber: t.union([t.string, t.null]),
    senderParticipantId: t.union([t.string, t.null]),
    receiverParticipantId: t.union([t.string, t.null]),
    reason: t.string,
    xml: ArtifactRef,
    receivedAt: t.string,
  }),
});
export type UnmatchedResponseData = t.TypeOf<typeof UnmatchedResponseKept.codec>;
type UnmatchedEvent = DomainEvent<'PeppolResponseUnmatched', UnmatchedResponseData>;

export const unmatchedResponseDecider: Decider<{ type: 'Keep'; data: UnmatchedResponseData }, { kept: boolean }, UnmatchedEvent> = {
  category: 'peppolresponse',
  initialState: { kept: false },
  events: { PeppolResponseUnmatched: UnmatchedResponseKept },
  decide: (command, s) => (s.kept ? [] : [{ type: 'PeppolResponseUnmatched', data: command.data }]),
  evolve: () => ({ kept: true }),
};

registerDecider(unmatchedResponseDecider);

export const unmatchedResponseStream = (sha256: string) => `peppolresponse-${sha256}`;
