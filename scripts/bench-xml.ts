/**
 * Artifact generation throughput, in process: PINT AE XML documents per second for a realistic
 * 20-line UAE invoice (one thread, the serialization step alone, then one worker thread per core),
 * and invoice PDFs per second.
 *
 *   node --import tsx scripts/bench-xml.ts [--seconds 5]
 *
 * Prints figures only.
 */
import { availableParallelism } from 'node:os';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';
import { generateInvoiceXml, renderInvoicePdf, type CoreDocument, type CoreLineItem } from '../domain/artifacts/index.js';
import { resolveDocumentType } from '../domain/artifacts/normalize.js';
import { pintAeContext, writePintAeDocument } from '../domain/artifacts/pint-ae.js';
import { newXmlDocument, serialize } from '../domain/artifacts/xml.js';

const DOCUMENT_TYPE = { base: 'tax_invoice', modifiers: ['summary', 'continuous_supply'] };

/** A 20-line UAE tax invoice in USD (so the AED tax currency parts are written too). */
function uaeInvoice(lines = 20): CoreDocument {
  const r2 = (n: number) => Math.round(n * 100) / 100;
  const lineItems: CoreLineItem[] = Array.from({ length: lines }, (_, i) => {
    const quantity = (i % 5) + 1;
    const price = r2(49.9 + i * 7.35);
    const net = r2(quantity * price);
    const exempt = i % 7 === 6;
    return {
      id: String(i + 1),
      name: `Professional service package ${i + 1}`,
      description: `Monthly retainer, work package ${i + 1}`,
      quantity,
      unitCode: i % 2 ? 'HUR' : 'C62',
      lineTaxableValue: net,
      taxAmount: exempt ? 0 : r2(net * 0.05),
      taxCategory: exempt ? 'E' : 'S',
      taxRate: exempt ? 0 : 5,
      ...(exempt ? { taxExemptionReasonCode: 'VATEX-AE-FIN', taxExemptionReason: 'Financial services' } : {}),
      commodityClassification: { code: `8523.${49 + (i % 10)}`, scheme: 'HS' },
      price: { amount: price, grossPrice: price },
      extensions: { ae_itemType: 'S', ae_serviceAccountingCode: '998311', ae_sacScheme: 'SAC' },
    };
  });
  const net = r2(lineItems.reduce((s, l) => s + Number(l.lineTaxableValue), 0));
  const tax = r2(lineItems.reduce((s, l) => s + Number(l.taxAmount), 0));
  return {
    header: {
      documentNumber: 'INV-2025-000123',
      issueDate: '2025-07-01',
      dueDate: '2025-07-31',
      currency: 'USD',
      taxCurrency: 'AED',
      exchangeRate: { rate: 3.6725 },
      invoicePeriod: { startDate: '2025-06-01', endDate: '2025-06-30', frequency: 'MONTHLY' },
      buyerReference: 'PO-88231',
    },
    parties: {
      seller: {
        name: 'Gulf Advisory Services LLC',
        address: { addressLine1: 'Office 1204, Emirates Towers', city: 'Dubai', stateOrProvince: 'DXB', country: 'AE' },
        taxIds: [{ type: 'TRN', value: '100234567800003' }],
        registrationNumbers: [{ type: 'TL', value: 'TL-776655' }],
        peppolId: '1002345678',
      },
      buyer: {
        name: 'Al Noor Holding PJSC',
        address: { addressLine1: 'Al Maryah Island, Tower B', city: 'Abu Dhabi', stateOrProvince: 'AUH', country: 'AE' },
        taxIds: [{ type: 'TRN', value: '100876543200003' }],
        registrationNumbers: [{ type: 'TL', value: 'CN-1100223' }],
        peppolId: '1008765432',
      },
    },
    lineItems,
    payment: { paymentMeans: [{ paymentMeansCode: '30', creditTransferInfo: { payeeFinancialAccountId: 'AE070331234567890123456' } }] },
    totals: { totalLineTaxableAmount: net, totalAmountExcludingTax: net, totalTaxAmount: tax, totalAmountIncludingTax: r2(net + tax), amountDue: r2(net + tax) },
    extensions: {
      peppol_seller_peppolIdScheme: '0235',
      peppol_buyer_peppolIdScheme: '0235',
      ae_seller_authorityName: 'Dubai Economy and Tourism',
      ae_buyer_authorityName: 'Abu Dhabi Department of Economic Development',
      peppol_totalTaxAmountInTaxCurrency: r2(tax * 3.6725),
      ae_totalAmountIncludingTaxInAED: r2((net + tax) * 3.6725),
    },
  };
}

function xmlLoop(seconds: number): { count: number; ms: number; bytes: number } {
  const document = uaeInvoice();
  let bytes = 0;
  for (let i = 0; i < 50; i++) bytes = generateInvoiceXml({ country: 'AE', documentType: DOCUMENT_TYPE, document, uuid: `warm-${i}` }).xml.length;
  const start = performance.now();
  const deadline = start + seconds * 1000;
  let count = 0;
  while (performance.now() < deadline) {
    generateInvoiceXml({ country: 'AE', documentType: DOCUMENT_TYPE, document, uuid: `uuid-${count}` });
    count++;
  }
  return { count, ms: performance.now() - start, bytes };
}

/** The serialization step alone (the XML library's share): the same document's tree, serialized again and again. */
function serializeLoop(seconds: number): { count: number; ms: number } {
  const tree = newXmlDocument();
  writePintAeDocument(tree, pintAeContext(uaeInvoice(), resolveDocumentType(DOCUMENT_TYPE), 'uuid'));
  for (let i = 0; i < 50; i++) serialize(tree);
  const start = performance.now();
  const deadline = start + seconds * 1000;
  let count = 0;
  while (performance.now() < deadline) {
    serialize(tree);
    count++;
  }
  return { count, ms: performance.now() - start };
}

async function pdfLoop(seconds: number): Promise<{ count: number; ms: number; bytes: number }> {
  const document = uaeInvoice();
  const input = { country: 'AE', documentType: DOCUMENT_TYPE, document, uuid: '5f0c7d2e-8a1b-4c3d-9e8f-0a1b2c3d4e5f', state: 'final_valid' };
  let bytes = 0;
  for (let i = 0; i < 10; i++) bytes = (await renderInvoicePdf(input)).length;
  const start = performance.now();
  const deadline = start + seconds * 1000;
  let count = 0;
  while (performance.now() < deadline) {
    await renderInvoicePdf(input);
    count++;
  }
  return { count, ms: performance.now() - start, bytes };
}

function parallelXml(workers: number, seconds: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let done = 0;
    let rate = 0;
    for (let i = 0; i < workers; i++) {
      // Node 20 does not apply `--import tsx` inside workers: the worker loads this file through
      // tsx's programmatic API instead.
      const api = JSON.stringify(import.meta.resolve('tsx/esm/api'));
      const self = JSON.stringify(import.meta.url);
      const worker = new Worker(`import(${api}).then((tsx) => tsx.tsImport(${self}, ${self}))`, { eval: true, workerData: { seconds } });
      worker.once('message', (r: { count: number; ms: number }) => {
        rate += (r.count / r.ms) * 1000;
        if (++done === workers) resolve(rate);
      });
      worker.once('error', reject);
    }
  });
}

if (!isMainThread) {
  parentPort!.postMessage(xmlLoop((workerData as { seconds: number }).seconds));
} else {
  const arg = process.argv.indexOf('--seconds');
  const seconds = arg > 0 ? Number(process.argv[arg + 1]) : 5;
  const xml = xmlLoop(seconds);
  const perSecond = (r: { count: number; ms: number }) => (r.count / r.ms) * 1000;
  console.log(`xml  UAE PINT AE, 20 lines, 1 thread:         ${perSecond(xml).toFixed(0)} documents/s (${(xml.ms / xml.count).toFixed(2)} ms/document, ${(xml.bytes / 1024).toFixed(1)} KiB)`);
  const ser = serializeLoop(seconds);
  console.log(`xml  UAE PINT AE, 20 lines, serialization only: ${perSecond(ser).toFixed(0)} documents/s (${(ser.ms / ser.count).toFixed(2)} ms/document)`);
  const threads = availableParallelism();
  const parallel = await parallelXml(threads, seconds);
  console.log(`xml  UAE PINT AE, 20 lines, ${threads} worker threads: ${parallel.toFixed(0)} documents/s`);
  const pdf = await pdfLoop(seconds);
  console.log(`pdf  UAE invoice, 20 lines, 1 thread:          ${perSecond(pdf).toFixed(0)} documents/s (${(pdf.ms / pdf.count).toFixed(2)} ms/document, ${(pdf.bytes / 1024).toFixed(1)} KiB)`);
}
