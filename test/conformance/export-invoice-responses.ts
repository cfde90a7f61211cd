/**
 * Writes one Invoice Response per response code, as the service builds them, into <dir>
 * (test/conformance/check-invoice-response.sh checks them with the official Peppol rules).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildInvoiceResponseXml, type InvoiceResponseFacts } from '../../domain/peppol/invoice-response.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: export-invoice-responses.ts <dir>');
mkdirSync(dir, { recursive: true });
// GLNs with valid check digits (scheme 0088 is in every release of the EAS list).
const base = { message: null, note: null, issueDate: '2026-11-28', invoice: { id: 'INV-7', typeCode: '380', issueDate: '2026-11-20' }, senderParticipantId: '0088:5790000435951', receiverParticipantId: '0088:7300010000001' };
const cases: InvoiceResponseFacts[] = [
  { ...base, responseId: 'r-RE', code: 'RE', message: 'No order', clarifications: [{ list: 'OPStatusReason', code: 'REF', text: null }, { list: 'OPStatusAction', code: 'NIN', text: 'Send a new invoice' }] },
  // A message beside reasons that have texts of their own: a status of its own.
  { ...base, responseId: 'r-RE2', code: 'RE', message: 'Goods not received', clarifications: [{ list: 'OPStatusReason', code: 'DEL', text: 'Nothing delivered' }] },
  { ...base, responseId: 'r-UQ', code: 'UQ', clarifications: [{ list: 'OPStatusReason', code: 'PRI', text: 'Price differs' }] },
  { ...base, responseId: 'r-CA', code: 'CA', clarifications: [{ list: 'OPStatusAction', code: 'CNP', text: null }] },
  { ...base, responseId: 'r-AP', code: 'AP', clarifications: [] },
  { ...base, responseId: 'r-PD', code: 'PD', clarifications: [], note: 'Paid on 2026-11-28' },
  { ...base, responseId: 'r-AB', code: 'AB', clarifications: [] },
  { ...base, responseId: 'r-IP', code: 'IP', clarifications: [{ list: 'OPStatusReason', code: 'NON', text: null }] },
];
for (const facts of cases) writeFileSync(join(dir, `${facts.responseId}.xml`), buildInvoiceResponseXml(facts, { buyer: 'Buyer AB', seller: 'Seller AB' }));
console.log(`${cases.length} Invoice Responses written to ${dir}`);
