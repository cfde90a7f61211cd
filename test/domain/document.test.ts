import { expect } from 'chai';
import { DomainError } from '../../domain/errors.js';
import {
  documentDecider,
  isTerminal,
  TRANSITIONS,
  type DocumentCommand,
  type DocumentEvent,
  type DocumentStateView,
} from '../../domain/document/document.js';
import { ABANDONED_CLAIM_MS, numberClaimDecider } from '../../domain/document/number-claim.js';

const received = (type: 'DocumentSubmitted' | 'DocumentRejected'): DocumentEvent => {
  const base = {
    documentId: 'doc_1',
    uuid: 'u-1',
    documentNumber: 'INV-1',
    country: 'AE',
    environment: 'sandbox',
    documentType: { base: 'tax_invoice', modifiers: [] },
    source: { name: 's', version: '1', companyId: null },
    format: 'new' as const,
    externalId: null,
    destinations: ['TAX_AUTHORITY'],
    coreDocument: {},
    validation: {},
  };
  return type === 'DocumentSubmitted'
    ? { type, data: { ...base, xml: null } }
    : { type, data: { ...base, errors: [] } };
};
const err = { code: 'X', message: 'x', path: [], source: 'delivery' as const };

function run(commands: DocumentCommand[]): DocumentStateView {
  let state = documentDecider.initialState;
  for (const c of commands) state = documentDecider.decide(c, state).reduce((s, e) => documentDecider.evolve(s, e), state);
  return state;
}

describe('sales document state machine (docs/api/unify.md)', () => {
  const submit: DocumentCommand = { type: 'Receive', event: received('DocumentSubmitted') as any };
  const reject: DocumentCommand = { type: 'Receive', event: received('DocumentRejected') as any };
  const start: DocumentCommand = { type: 'StartDelivery', destination: 'PEPPOL' };
  const delivered: DocumentCommand = { type: 'RecordDelivered', government: { status: 'DELIVERED' } };
  const failed: DocumentCommand = { type: 'RecordDeliveryFailed', error: err, retryable: true, government: null };
  const valid: DocumentCommand = { type: 'Finalize', outcome: 'valid', government: { status: 'VALID' }, errors: [] };
  const invalid: DocumentCommand = { type: 'Finalize', outcome: 'invalid', government: { status: 'INVALID' }, errors: [err] };

  it('follows every named path to its terminal state', () => {
    expect(run([reject]).state).to.equal('rejected');
    expect(run([submit]).state).to.equal('submitted');
    expect(run([submit, start]).state).to.equal('processing');
    expect(run([submit, start, delivered, valid]).state).to.equal('final_valid');
    expect(run([submit, start, delivered, invalid]).state).to.equal('final_invalid');
    expect(run([submit, start, failed, start, delivered, valid]).state).to.equal('final_valid');
    expect(run([submit, start, failed, invalid]).state).to.equal('final_invalid');
    expect(run([submit, start, failed, start]).attempts).to.equal(2);
  });

  it('derives isTerminal: rejected, final_valid and final_invalid only', () => {
    expect(['rejected', 'final_valid', 'final_invalid'].every((s) => isTerminal(s as any))).to.equal(true);
    expect(['submitted', 'processing', 'delivery_success', 'delivery_failed'].some((s) => isTerminal(s as any))).to.equal(false);
  });

  it('refuses every transition the table does not list', () => {
    const paths: [string, DocumentCommand[], DocumentCommand][] = [
      ['submit twice', [submit], submit],
      ['deliver before start', [submit], delivered],
      ['finalize a submitted document', [submit], valid],
      ['start a rejected document', [reject], start],
      ['anything after final_valid', [submit, start, delivered, valid], start],
      ['valid after a failed delivery', [submit, start, failed], valid],
      ['fail twice without a new attempt', [submit, start, failed], failed],
    ];
    for (const [label, before, next] of paths) {
      const state = run(before);
      expect(() => documentDecider.decide(next, state), label).to.throw(DomainError, /cannot take|only end final_invalid/);
    }
    expect(Object.keys(TRANSITIONS.final_invalid)).to.deep.equal([]);
  });
});

describe('document number claims (CORE-HEAD-010)', () => {
  const now = '2026-03-01T10:00:00.000Z';
  const claim = (documentId: string, holderStatus: any, at = now, holderId: string | null = 'doc_a') =>
    ({ type: 'Claim', documentNumber: 'INV-9', documentId, holderId, holderStatus, now: at }) as const;
  const held = numberClaimDecider
    .decide(claim('doc_a', 'none', now, null), numberClaimDecider.initialState)
    .reduce(numberClaimDecider.evolve, numberClaimDecider.initialState);

  it('claims a free number and refuses it while the holder is live or final', () => {
    expect(held.holder).to.equal('doc_a');
    expect(() => numberClaimDecider.decide(claim('doc_b', 'live'), held)).to.throw(DomainError).with.property('code', 'CORE-HEAD-010');
  });
  it('frees the number when the holder was rejected', () => {
    expect(numberClaimDecider.decide(claim('doc_b', 'rejected'), held)).to.have.length(1);
  });
  it('frees an abandoned claim only after the grace period', () => {
    expect(() => numberClaimDecider.decide(claim('doc_b', 'never_submitted'), held)).to.throw(DomainError);
    const later = new Date(Date.parse(now) + ABANDONED_CLAIM_MS).toISOString();
    expect(numberClaimDecider.decide(claim('doc_b', 'never_submitted', later), held)).to.have.length(1);
  });
  it('refuses facts gathered about another holder (the claim changed hands meanwhile)', () => {
    expect(() => numberClaimDecider.decide(claim('doc_b', 'none', now, null), held)).to.throw(DomainError).with.property('code', 'STALE_CLAIM_FACTS');
  });
  it('is idempotent for the holder itself', () => {
    expect(numberClaimDecider.decide(claim('doc_a', 'live'), held)).to.deep.equal([]);
  });
});
