/** An ordinary Peppol user message header (PINT AE invoice, two test participants) for tests that build messages; `overrides` replace its values. */
import type { UserMessageHeader } from '../../../domain/peppol/ebms.js';
import { PARTICIPANT_SCHEME } from '../../../domain/peppol/identifiers.js';

export type TestHeader = Omit<UserMessageHeader, 'payloadContentId'>;

export const userMessageHeader = (overrides: Partial<TestHeader> = {}): TestHeader => ({
  messageId: 'msg-1@ledger',
  timestamp: '2026-12-07T13:14:15.123Z',
  conversationId: 'INV-2026-0001',
  fromParty: 'POP000001',
  toParty: 'POP000002',
  processId: 'urn:peppol:bis:billing',
  documentTypeId: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2::Invoice##urn:peppol:pint:billing-1@ae-1::2.1',
  originalSender: { scheme: PARTICIPANT_SCHEME, value: '0235:1000000002' },
  finalRecipient: { scheme: PARTICIPANT_SCHEME, value: '0235:1000000001' },
  ...overrides,
});
