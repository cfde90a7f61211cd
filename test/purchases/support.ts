/** Helpers of the purchase tests: a receiving tenant, UBL documents addressed to it, list calls. */
import { generateInvoiceXml, type CoreDocument } from '../../domain/artifacts/index.js';
import { readUbl, screenXml } from '../../domain/purchases/ubl-reader.js';
import { storeReceivedPurchase } from '../../commands/purchases/receive.js';
import { workspaceCompaniesForEndpoint } from '../../readmodels/purchases.js';
import { sampleDocument } from '../../domain/validation/index.js';
import { clientFor, freshTin, type Client } from '../connect/support.js';
import { call, type KeyOptions, type TestService } from '../support/http.js';

export interface Receiver {
  client: Client;
  workspaceId: string;
  apiKey: string;
  company: Record<string, any>;
  tin: string;
  list(query: string, apiKey?: string): ReturnType<typeof call>;
  read(documentId: string, type?: string, apiKey?: string): ReturnType<typeof call>;
}

export async function receiver(t: TestService, key: KeyOptions = {}, environment: 'sandbox' | 'production' = 'sandbox'): Promise<Receiver> {
  const tenant = await t.tenant(key);
  const client = clientFor(t, tenant);
  const tin = freshTin();
  const company = await client.onboard({ tin, platformEnvironment: environment });
  const auth = (apiKey: string) => ({ authorization: `Bearer ${apiKey}` });
  return {
    client,
    workspaceId: tenant.workspaceId,
    apiKey: tenant.apiKey,
    company,
    tin,
    list: (query, apiKey = tenant.apiKey) => call(`${t.url}/api/v3/documents${query}`, { headers: auth(apiKey) }),
    read: (documentId, type = 'purchases', apiKey = tenant.apiKey) =>
      call(`${t.url}/api/v3/documents/${encodeURIComponent(documentId)}${type === '' ? '' : `?type=${type}`}`, { headers: auth(apiKey) }),
  };
}

/** A PINT AE invoice from `sellerTin` addressed to the buyer Peppol id `buyerTin` (scheme 0235). */
export function invoiceXml(options: { number: string; buyerTin: string; sellerTin?: string; lines?: number; buyerReference?: string; country?: 'AE' | 'BE' | 'DE'; base?: 'tax_invoice' | 'credit_note' }): string {
  const country = options.country ?? 'AE';
  const doc = sampleDocument(country, { lines: options.lines ?? 2, documentNumber: options.number }) as CoreDocument;
  doc.parties!.buyer!.peppolId = options.buyerTin;
  doc.parties!.seller!.peppolId = options.sellerTin ?? '1002345678';
  doc.extensions = { ...(doc.extensions ?? {}), peppol_buyer_peppolIdScheme: '0235', peppol_seller_peppolIdScheme: '0235' };
  if (options.buyerReference) doc.header!.buyerReference = options.buyerReference;
  if (options.base === 'credit_note') doc.header!.precedingInvoiceReference = { id: 'INV-ORIGINAL', issueDate: '2026-01-01' };
  return generateInvoiceXml({ country, documentType: { base: options.base ?? 'tax_invoice', modifiers: [] }, document: doc, uuid: `uuid-${options.number}` }).xml;
}

/** Stores a received purchase directly (as the network or the import would), at the given times. */
export async function storePurchase(t: TestService, r: Receiver, options: { number: string; storedAt: Date; environment?: string; sellerTin?: string }) {
  const xml = Buffer.from(invoiceXml({ number: options.number, buyerTin: r.tin, sellerTin: options.sellerTin }));
  const environment = options.environment ?? 'sandbox';
  const [company] = await workspaceCompaniesForEndpoint(t.service.runtime.db.knex, r.workspaceId, environment, null, r.company.companyId);
  if (!company) throw new Error('no receiving company');
  const stored = await storeReceivedPurchase(
    t.service.runtime.store,
    {
      channel: 'ubl_import',
      environment,
      bytes: xml,
      parsed: readUbl(screenXml(xml, 1e7)),
      company,
      fallbackCountry: 'AE',
      transmission: null,
      receivedAt: options.storedAt,
      storedAt: options.storedAt,
    },
    { now: options.storedAt, actor: 'test' },
  );
  if (stored.position) await t.settle(stored.position);
  return stored;
}
