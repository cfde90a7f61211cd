/**
 * The documents and the query mix of bench:query: realistic indexed documents (a seeded
 * generator, so every engine gets the same sequence) and the five kinds of query of the issue.
 */
import type { QueryType } from '../domain/query/fields.js';
import type { IndexedDocument, SearchQuery } from '../readmodels/search/port.js';

// ---------------------------------------------------------------------------------------------
// Realistic documents, the same sequence for every engine (a seeded generator).

export function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = ['Al Noor', 'Emirates', 'Gulf', 'Desert Rose', 'Falcon', 'Oasis', 'Pearl', 'Sahara', 'Marina', 'Crescent', 'Golden Sands', 'Blue Wave', 'Palm', 'Horizon', 'Summit', 'Zenith', 'Atlas', 'Meridian', 'Nomad', 'Sapphire'];
const SECOND = ['Trading', 'General Trading', 'Steel Works', 'Logistics', 'Foods', 'Technologies', 'Contracting', 'Medical Supplies', 'Textiles', 'Electronics'];
const SUFFIX = ['LLC', 'FZE', 'FZCO', 'L.L.C', 'Est.', 'Sdn Bhd'];
const CITIES = ['Dubai', 'Abu Dhabi', 'Sharjah', 'Ajman', 'Kuala Lumpur', 'Penang'];
const ITEMS = ['Steel rebar 12mm', 'Office chairs', 'Laptop 14"', 'Consulting hours', 'Cement bags 50kg', 'Printer paper A4', 'Diesel (litres)', 'Safety helmets'];
const STATUS = [
  { document: 'COMPLIANT', delivery: 'DELIVERED', business: 'ACCEPTED', userfacing: 'Compliant', w: 0.7 },
  { document: 'PROCESSING', delivery: 'NOT_STARTED', business: 'NOT_STARTED', userfacing: 'Processing', w: 0.1 },
  { document: 'NON_COMPLIANT', delivery: 'FAILED', business: 'NOT_STARTED', userfacing: 'Non-Compliant', w: 0.1 },
  { document: 'NEEDS_CORRECTION', delivery: 'NOT_STARTED', business: 'NOT_STARTED', userfacing: 'Needs Correction', w: 0.1 },
];
const companyName = (r: () => number) =>
  `${FIRST[Math.floor(r() * FIRST.length)]} ${SECOND[Math.floor(r() * SECOND.length)]} ${SUFFIX[Math.floor(r() * SUFFIX.length)]}`;
const pick = <T>(r: () => number, xs: readonly T[]) => xs[Math.floor(r() * xs.length)]!;
const workspaceId = (w: number) => `ws_bench_${String(w).padStart(4, '0')}`;
const ISSUE_DAYS = 730;
const dayString = (day: number) => new Date(Date.UTC(2024, 0, 1) + day * 86_400_000).toISOString().slice(0, 10);

export function makeDocument(i: number, workspaces: number): IndexedDocument {
  const r = rng(i * 2654435761);
  const w = i % workspaces;
  const roll = r();
  const type: QueryType = roll < 0.55 ? 'sales' : roll < 0.85 ? 'purchases' : 'receipts';
  const environment = r() < 0.9 ? 'production' : 'sandbox';
  const issueDate = dayString(Math.floor(r() * ISSUE_DAYS));
  const lines = 1 + Math.floor(r() * 4);
  const lineItems = Array.from({ length: lines }, (_, n) => {
    const quantity = 1 + Math.floor(r() * 50);
    const price = Math.round(r() * 50000) / 100;
    const lineTaxableValue = Math.round(quantity * price * 100) / 100;
    return {
      id: String(n + 1),
      name: pick(r, ITEMS),
      quantity,
      unitCode: 'EA',
      price: { amount: price },
      lineTaxableValue,
      taxCategory: 'S',
      taxRate: 5,
      taxAmount: Math.round(lineTaxableValue * 5) / 100,
    };
  });
  const net = Math.round(lineItems.reduce((s, l) => s + l.lineTaxableValue, 0) * 100) / 100;
  const tax = Math.round(lineItems.reduce((s, l) => s + l.taxAmount, 0) * 100) / 100;
  const seq = String(Math.floor(i / workspaces)).padStart(7, '0');
  const numberPrefix = type === 'sales' ? 'INV' : type === 'purchases' ? 'PINV' : 'RCPT';
  const party = () => ({
    name: companyName(r),
    address: { addressLine1: `${1 + Math.floor(r() * 999)} Sheikh Zayed Road`, city: pick(r, CITIES), country: type === 'receipts' ? 'MY' : 'AE' },
    taxIds: [{ type: 'TRN', value: String(100000000000000 + Math.floor(r() * 899999999999999)) }],
  });
  let sr = r();
  const status = STATUS.find((s) => (sr -= s.w) < 0) ?? STATUS[0]!;
  const documentId = `doc_${String(i).padStart(9, '0')}`;
  const core = {
    header: { documentNumber: `${numberPrefix}-${issueDate.slice(0, 4)}-${seq}`, issueDate, dueDate: issueDate, currency: r() < 0.8 ? 'AED' : 'USD' },
    parties: { seller: party(), buyer: party() },
    lineItems,
    payment: { paymentMeans: [{ paymentMeansCode: '30' }] },
    taxTotals: [{ taxCategory: 'S', taxRate: 5, taxableAmount: net, taxAmount: tax }],
    totals: { totalAmountExcludingTax: net, totalTaxAmount: tax, totalAmountIncludingTax: Math.round((net + tax) * 100) / 100, amountDue: Math.round((net + tax) * 100) / 100 },
    extensions: {},
  };
  const meta = {
    source: { name: 'Bench ERP', version: 'v1' },
    coreValidation: { valid: status.document !== 'NEEDS_CORRECTION', errors: status.document === 'NEEDS_CORRECTION' ? [{ code: 'AE-BR-01', message: 'Seller TRN is required' }] : [], warnings: [] },
    statuses: {
      document: { current: status.document, history: [{ status: status.document, at: `${issueDate}T10:00:00Z` }] },
      delivery: { current: status.delivery, history: [] },
      business: { current: status.business, history: [] },
      userfacing: status.userfacing,
      internal: { state: status.document.toLowerCase() },
    },
  };
  const documentType = { base: r() < 0.9 ? 'tax_invoice' : 'credit_note', modifiers: r() < 0.1 ? ['export'] : [], variants: type === 'receipts' ? ['receipt'] : [] };
  const document =
    type === 'receipts'
      ? { documentId, documentType, ...core, meta, statusHistory: [], countryDocumentStatus: 'ISSUED' }
      : { documentId, documentType, coreDocument: { ...core, meta }, statusHistory: [] };
  return { workspaceId: workspaceId(w), environment, type, documentId, version: 1n, document };
}

// ---------------------------------------------------------------------------------------------
// The query mix.

export const KINDS = ['date range + status', 'seller-name search', 'document-number search', 'amount range sorted', 'page 50'] as const;
export type Kind = (typeof KINDS)[number];

export function mixQuery(kind: Kind, r: () => number, workspaces: number, documents: number): SearchQuery {
  const ws = workspaceId(Math.floor(r() * workspaces));
  const base = { workspaceId: ws, environment: 'production', filters: [], searches: [], sort: null, offset: 0, limit: 20 };
  const p = (type: QueryType, path: string) => (type === 'receipts' ? path : `coreDocument.${path}`);
  switch (kind) {
    case 'date range + status': {
      const start = Math.floor(r() * (ISSUE_DAYS - 31));
      return {
        ...base,
        type: 'sales',
        filters: [
          { field: p('sales', 'header.issueDate'), range: { gte: dayString(start), lte: dayString(start + 30) } },
          { field: p('sales', 'meta.statuses.userfacing'), values: ['Compliant', 'Processing'] },
        ],
      };
    }
    case 'seller-name search':
      return { ...base, type: 'purchases', searches: [{ field: p('purchases', 'parties.seller.name'), term: pick(r, FIRST).split(' ')[0]!.toLowerCase().slice(0, 5) }] };
    case 'document-number search': {
      const seq = String(Math.floor(r() * Math.max(1, documents / workspaces))).padStart(7, '0');
      return { ...base, type: 'sales', searches: [{ field: p('sales', 'header.documentNumber'), term: seq.slice(2) }] };
    }
    case 'amount range sorted': {
      const low = Math.floor(r() * 20000);
      return {
        ...base,
        type: 'sales',
        filters: [{ field: p('sales', 'totals.totalAmountIncludingTax'), range: { gte: low, lte: low + 5000 } }],
        sort: { field: p('sales', 'totals.totalAmountIncludingTax'), order: 'desc' },
      };
    }
    case 'page 50':
      return { ...base, type: pick(r, ['sales', 'purchases'] as const), offset: 49 * 20 };
  }
}

