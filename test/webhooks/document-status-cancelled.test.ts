/** The `document.status.changed` occurrence of the seller's cancellation at the authority (pure: the occurrence source alone). */
import { expect } from 'chai';
import { Cancelled } from '../../domain/document/document.js';
import { DOCUMENT_STATUS_EVENT, documentStatusOccurrences } from '../../domain/webhooks/occurrences/documents.js';

describe('webhooks: document.status.changed for a cancelled document', () => {
  const error = { code: 'DOCUMENT_CANCELLED', message: 'cancelled by the seller at MyInvois on 2026-01-02T03:04:05.000Z: wrong buyer', path: [], source: 'government' as const };
  const event = {
    id: '00000000-0000-4000-8000-000000000001',
    type: Cancelled.type,
    streamId: 'document-doc_1',
    schemaVersion: Cancelled.version,
    data: { reason: 'wrong buyer', cancelledAt: '2026-01-02T03:04:05.000Z', by: 'seller', authority: 'MyInvois', authorityUuid: 'MY-1', error, government: { authority: 'MyInvois' } },
    metadata: { occurredAt: '2026-01-02T03:04:06.000Z', environment: 'production', workspaceId: 'ws_1' },
  };

  it('is subscribed to, and announces final_invalid, terminal, with the DOCUMENT_CANCELLED error item', () => {
    expect(documentStatusOccurrences.eventTypes.has(Cancelled.type)).to.equal(true);
    const [occurrence, ...more] = documentStatusOccurrences.occurrencesOf(event);
    expect(more).to.have.length(0);
    expect(occurrence).to.include({ type: DOCUMENT_STATUS_EVENT, workspaceId: 'ws_1', environment: 'production' });
    const payload = occurrence!.payload as Record<string, any>;
    expect(payload).to.include({ documentId: 'doc_1', state: 'final_invalid', isTerminal: true, environment: 'production' });
    expect(payload.errors).to.deep.equal([error]);
    expect(payload.step).to.deep.equal({ name: 'Final Invalid', status: 'Invalid', error: { code: 'DOCUMENT_CANCELLED', message: error.message } });
  });
});
