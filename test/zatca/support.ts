/** Saudi invoices for the ZATCA API tests: the service's own XML, chained as delivery chains it. */
import { generateInvoiceXml, ZATCA_INITIAL_PREVIOUS_INVOICE_HASH } from '../../domain/artifacts/index.js';
import { saudiDocument } from '../artifacts/fixtures.js';
import type { ZatcaInvoiceRequest } from '../../commands/zatca/api/contract.js';

export type Kind = 'standard' | 'simplified';
export type Base = 'tax_invoice' | 'credit_note' | 'debit_note';

export function saudiInvoice(options: { kind?: Kind; base?: Base; number: string; counter?: number; previousInvoiceHash?: string }): { body: ZatcaInvoiceRequest; xml: string; hash: string } {
  const simplified = options.kind === 'simplified';
  const base = options.base ?? 'tax_invoice';
  const uuid = `6f4d20e0-6bfe-4a80-9389-${createSuffix(options.number)}`;
  const out = generateInvoiceXml({
    country: 'SA',
    documentType: { base, modifiers: [], ...(simplified ? { variant: 'simplified' } : {}) },
    document: saudiDocument({ simplified, number: options.number, base }),
    uuid,
    issueTimestamp: '2025-07-01T09:00:00Z',
    invoiceCounter: options.counter ?? 1,
    previousInvoiceHash: options.previousInvoiceHash ?? ZATCA_INITIAL_PREVIOUS_INVOICE_HASH,
  });
  return { body: { invoiceHash: out.hash!, uuid, invoice: Buffer.from(out.xml, 'utf8').toString('base64') }, xml: out.xml, hash: out.hash! };
}

function createSuffix(number: string): string {
  let h = 0;
  for (const c of number) h = (h * 31 + c.charCodeAt(0)) >>> 0;
  return h.toString(16).padStart(12, '0').slice(-12);
}
