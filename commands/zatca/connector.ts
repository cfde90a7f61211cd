/**
 * The ZATCA production connector behind the connector port: standard (B2B) Saudi documents are
 * cleared (POST /invoices/clearance/single), simplified (B2C) ones reported
 * (POST /invoices/reporting/single), each under the production CSID of the EGS unit that stamped
 * it. The authority's answers map onto the delivery states:
 *
 * - CLEARED / REPORTED (200, or 202 with warnings) → delivered, final valid; the warnings stay in
 *   the government record. A cleared document's XML becomes the one ZATCA returned.
 * - 208 (clearance) / 409 (reporting) for an invoice hash ZATCA already has → delivered, marked
 *   `alreadyReceived`, with the earlier result (`CLEARED` with its cleared invoice, or
 *   `REPORTED_SUCCESSFULLY_EARLIER`).
 * - NOT_CLEARED / NOT_REPORTED (400 with validation results) → refused, final invalid, one error
 *   per error message (source `government`).
 * - 303 (clearance switched off by ZATCA) → the standard document is reported instead.
 * - 429, 5xx, network failures, time-outs → failed, retried on the delivery schedule; a time-out
 *   or a 500 may have been processed (outcome unknown), and the retry gets the earlier result.
 * - 401/403 (CSID rejected or expired) → failed, retried, so that renewing the CSID lets the
 *   document through; 413 and other refusals of the request itself → refused (source `delivery`).
 *
 * Reporting window: simplified documents are to be reported within 24 hours of issue. One reported
 * later is still reported (ZATCA accepts it; the lateness is the taxpayer's to answer for), and
 * the government record says `reportedLate: true`.
 */
import { DOMParser } from '@xmldom/xmldom';
import type { DocumentErrorItem, FinalResult } from '../../domain/document/document.js';
import type { Clock } from '../../platform/clock.js';
import type { Connector, DeliveryAnswer, DeliveryRequest } from '../delivery/connector.js';
import type { ZatcaApiClient, ZatcaResult } from './api/client.js';
import {
  CLEARED,
  DUPLICATE_INVOICE_CATEGORY,
  REPORTED,
  REPORTED_SUCCESSFULLY_EARLIER,
  type InvoiceAnswer,
  type ValidationMessage,
  type ZatcaCsid,
} from './api/contract.js';

/** Simplified documents are reported within this long of their issue. */
export const ZATCA_REPORTING_WINDOW_MS = 24 * 60 * 60 * 1000;

/** The production CSID to send a document under (the EGS unit that stamped it), or null when its seller has none. */
export type ZatcaCredentialSource = (request: DeliveryRequest) => Promise<ZatcaCsid | null>;

export interface ZatcaConnectorDeps {
  client: ZatcaApiClient;
  credentials: ZatcaCredentialSource;
  clock: Clock;
  /** ZATCA's environment (sandbox, simulation, production): recorded with each answer. */
  zatcaEnvironment: string;
}

const deliveryError = (code: string, message: string): DocumentErrorItem => ({ code, message, path: [], source: 'delivery' });
const governmentError = (m: ValidationMessage): DocumentErrorItem => ({
  code: m.code,
  message: m.category && m.category !== m.code ? `${m.category}: ${m.message}` : m.message,
  path: [],
  source: 'government',
});

function issuedAt(request: DeliveryRequest): number | null {
  const header = (request.coreDocument as { header?: { issueDate?: unknown; issueTime?: unknown } } | null)?.header;
  if (typeof header?.issueDate !== 'string') return null;
  const time = typeof header.issueTime === 'string' ? header.issueTime : '00:00:00';
  // Saudi Arabia is UTC+3 all year.
  const t = Date.parse(`${header.issueDate}T${time}+03:00`);
  return Number.isNaN(t) ? null : t;
}

/** Why a cleared invoice cannot be the document's XML (not a UBL Invoice, or another invoice's UUID), or null. */
export function clearedInvoiceProblem(base64: string, uuid: string): string | null {
  const text = Buffer.from(base64, 'base64').toString('utf8');
  let root;
  try {
    const doc = new DOMParser({
      onError: (level: string, message: string) => {
        if (level !== 'warning') throw new Error(message);
      },
    }).parseFromString(text, 'text/xml');
    root = doc.documentElement;
  } catch (err) {
    return `the cleared invoice is not well-formed XML: ${(err as Error).message}`;
  }
  if (!root || root.namespaceURI !== UBL_INVOICE_NS || root.localName !== 'Invoice') return 'the cleared invoice is not a UBL Invoice';
  let found: string | null = null;
  for (let c = root.firstChild; c; c = c.nextSibling) {
    if (c.nodeType === 1 && (c as unknown as { localName: string }).localName === 'UUID') found = (c.textContent ?? '').trim();
  }
  return found === uuid ? null : `the cleared invoice's UUID is ${found ?? 'missing'}, not ${uuid}`;
}

const UBL_INVOICE_NS = 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2';

export class ZatcaConnector implements Connector {
  readonly name = 'zatca-api';
  readonly destination = 'ZATCA' as const;

  constructor(private readonly deps: ZatcaConnectorDeps) {}

  async deliver(request: DeliveryRequest): Promise<DeliveryAnswer> {
    if (!request.xml || !request.invoiceHash) {
      return { kind: 'refused', government: null, errors: [deliveryError('ZATCA_DOCUMENT_MISSING', 'the document has no stamped XML and invoice hash to send')] };
    }
    const csid = await this.deps.credentials(request);
    if (!csid) {
      // Not the document's fault: once the seller's EGS unit is onboarded, a retry sends it.
      return {
        kind: 'failed',
        outcomeUnknown: false,
        error: deliveryError('ZATCA_EGS_UNIT_NOT_ONBOARDED', 'the seller has no EGS unit with a production CSID in this environment: onboard one (see the admin CLI\'s zatca commands)'),
      };
    }
    const simplified = request.documentType.variant === 'simplified';
    const body = { invoiceHash: request.invoiceHash, uuid: request.uuid, invoice: request.xml.toString('base64') };
    const now = this.deps.clock.now();
    const record: Record<string, unknown> = {
      authority: 'ZATCA',
      zatcaEnvironment: this.deps.zatcaEnvironment,
      environment: request.environment,
      uuid: request.uuid,
      invoiceHash: request.invoiceHash,
      submittedAt: now.toISOString(),
    };
    let endpoint: 'clearance' | 'reporting' = simplified ? 'reporting' : 'clearance';
    let result: ZatcaResult<InvoiceAnswer> = simplified ? await this.deps.client.reporting(csid, body) : await this.deps.client.clearance(csid, body);
    if (result.kind === 'clearance_off') {
      // ZATCA switched clearance off: standard documents are reported meanwhile.
      record.clearanceSwitchedOff = true;
      endpoint = 'reporting';
      result = await this.deps.client.reporting(csid, body);
    }
    record.endpoint = endpoint;
    if (endpoint === 'reporting') {
      const issued = issuedAt(request);
      if (issued !== null && now.getTime() - issued > ZATCA_REPORTING_WINDOW_MS) record.reportedLate = true;
    }
    switch (result.kind) {
      case 'clearance_off':
        return { kind: 'failed', outcomeUnknown: false, error: deliveryError('ZATCA_PROTOCOL_ERROR', 'the reporting endpoint answered 303') };
      case 'unavailable':
        return { kind: 'failed', outcomeUnknown: result.outcomeUnknown, error: deliveryError(result.code, result.message) };
      case 'refused':
        if (result.status === 401 || result.status === 403) {
          return {
            kind: 'failed',
            outcomeUnknown: false,
            error: deliveryError('ZATCA_UNAUTHORIZED', `ZATCA refused the EGS unit's production CSID (${result.status}): renew it if it expired or was revoked`),
          };
        }
        if (result.status === 413) return { kind: 'refused', government: { ...record, httpStatus: 413 }, errors: [deliveryError('ZATCA_DOCUMENT_TOO_LARGE', result.message)] };
        if (result.status === 400) return { kind: 'refused', government: { ...record, httpStatus: 400 }, errors: [deliveryError(`ZATCA_${result.code}`, result.message)] };
        // 404, 406 and the like: a configuration problem on this side; retried once it is fixed.
        return { kind: 'failed', outcomeUnknown: false, error: deliveryError('ZATCA_REQUEST_REFUSED', `ZATCA answered ${result.status}: ${result.code}: ${result.message}`) };
      case 'answer':
        return this.mapAnswer(request, record, endpoint, result.status, result.body);
    }
  }

  private mapAnswer(request: DeliveryRequest, record: Record<string, unknown>, endpoint: 'clearance' | 'reporting', status: number, a: InvoiceAnswer): DeliveryAnswer {
    const vr = a.validationResults;
    const errors = vr.errorMessages ?? [];
    const statusText = endpoint === 'clearance' ? (a.clearanceStatus ?? null) : (a.reportingStatus ?? null);
    // ZATCA's answer to an invoice hash it already has: the earlier submission succeeded.
    const duplicate =
      (status === 208 || status === 409) && (statusText === REPORTED_SUCCESSFULLY_EARLIER || errors.some((m) => m.category === DUPLICATE_INVOICE_CATEGORY));
    const government: Record<string, unknown> = {
      ...record,
      httpStatus: status,
      [endpoint === 'clearance' ? 'clearanceStatus' : 'reportingStatus']: statusText,
      validationResults: {
        status: vr.status,
        infoMessages: vr.infoMessages ?? [],
        warningMessages: vr.warningMessages ?? [],
        errorMessages: errors,
      },
    };
    if (duplicate || (status < 300 && (statusText === CLEARED || statusText === REPORTED))) {
      government.result = duplicate ? (endpoint === 'clearance' ? 'CLEARED_SUCCESSFULLY_EARLIER' : REPORTED_SUCCESSFULLY_EARLIER) : statusText;
      government.status = 'VALID';
      let xml: Buffer | null = null;
      if (endpoint === 'clearance' && a.clearedInvoice) {
        // Stored as the document's XML only when it is this invoice; else the XML sent stays, and the record says why.
        const problem = clearedInvoiceProblem(a.clearedInvoice, request.uuid);
        if (problem) government.clearedInvoiceProblem = problem;
        else xml = Buffer.from(a.clearedInvoice, 'base64');
      }
      const final: FinalResult = { outcome: 'valid', government, errors: [] };
      return { kind: 'delivered', government, final, finalResultDueAt: null, alreadyReceived: duplicate, xml };
    }
    if (status === 400 || (status < 300 && statusText !== null)) {
      government.result = statusText;
      government.status = 'INVALID';
      const mapped = errors.map(governmentError);
      return {
        kind: 'refused',
        government,
        errors: mapped.length > 0 ? mapped : [{ code: `ZATCA_${statusText ?? 'REJECTED'}`, message: `ZATCA answered ${statusText ?? status} without an error message`, path: [], source: 'government' }],
      };
    }
    return {
      kind: 'failed',
      outcomeUnknown: true,
      error: deliveryError('ZATCA_PROTOCOL_ERROR', `ZATCA answered ${status} with ${endpoint} status ${String(statusText)}, which the published contract does not define`),
    };
  }

  async finalResult(): Promise<null> {
    // Clearance and reporting answer at once: there is no later result to ask for.
    return null;
  }
}
