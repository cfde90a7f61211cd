/**
 * Queries of the purchases read model, and the company look-ups that route a received document
 * to its receiving company. Every purchase query is scoped by workspace and environment in SQL.
 */
import type { Knex } from 'knex';
import type { PurchaseListPosition } from '../domain/purchases/list-query.js';
import { prepared } from './prepared.js';
import { RecentLookups } from './recent-lookups.js';

export interface ReceivingCompany {
  companyId: string;
  workspaceId: string;
  countryCode: string;
  peppolParticipantId: string;
  sources: { sourceName: string; sourceVersion: string; branchId: string; userGivenBranchId: string; status: string }[];
}

/** The company's sources as one JSON array column (so the companies and their sources are one statement). */
const sourcesColumn = (knex: Knex) =>
  knex.raw(`(select coalesce(json_agg(json_build_object('sourceName', s.source_name, 'sourceVersion', s.source_version, 'branchId', s.branch_id,
      'userGivenBranchId', s.user_given_branch_id, 'status', s.status) order by s.created_at, s.source_id), '[]'::json)
    from connect_sources s where s.company_id = connect_companies.company_id) as sources`);

interface CompanyRow {
  company_id: string;
  workspace_id: string;
  country_code: string;
  peppol_participant_id: string;
  sources: ReceivingCompany['sources'];
}

const receivingCompany = (c: CompanyRow): ReceivingCompany => ({
  companyId: c.company_id,
  workspaceId: c.workspace_id,
  countryCode: c.country_code,
  peppolParticipantId: c.peppol_participant_id,
  sources: c.sources,
});

const activeCompany = (knex: Knex) =>
  knex.raw(`exists (select 1 from connect_sources s where s.company_id = connect_companies.company_id and s.status = 'active')`);

/**
 * For each look-up, the active companies, in any workspace, onboarded in `environment` that hold
 * the Peppol participant id `scheme:value` (the sandbox Peppol network's directory): several
 * look-ups in one statement (with each company's sources), one result per look-up, in their order.
 */
export async function companiesHoldingParticipants(knex: Knex, lookups: readonly { participantId: string; environment: string }[]): Promise<ReceivingCompany[][]> {
  if (lookups.length === 0) return [];
  const rows = (await companiesHoldingParticipantsQuery(knex, lookups)) as ParticipantRow[];
  const byId = new Map(rows.map((r) => [r.company_id, receivingCompany(r)]));
  const results: ReceivingCompany[][] = lookups.map(() => []);
  for (const r of rows) results[Number(r.lookup) - 1]!.push(byId.get(r.company_id)!);
  return results;
}

/**
 * The receiving companies of one participant id, as `companiesHoldingParticipants` finds them,
 * for a receiver that looks them up for every message (the AS4 endpoint): answers kept per
 * instance for at most a second (readmodels/recent-lookups.ts); a miss (no active company) is not
 * kept, so a company onboarded a moment ago receives at once. A company deactivated or a source
 * added through any instance shows within a second, as a read model that is behind would show it
 * a moment late.
 */
export class ReceivingCompanyLookups {
  private readonly recent: RecentLookups<ReceivingCompany[]>;
  constructor(
    private readonly knex: Knex,
    options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
  ) {
    this.recent = new RecentLookups({ ...options, keep: (companies) => companies.length > 0 });
  }

  find(participantId: string, environment: string): Promise<ReceivingCompany[]> {
    return this.recent.get(JSON.stringify([environment, participantId]), async () => (await companiesHoldingParticipants(this.knex, [{ participantId, environment }]))[0] ?? []);
  }
}

/** A row of `companiesHoldingParticipantsQuery`: `lookup` is the look-up's place, from 1. */
interface ParticipantRow extends CompanyRow {
  lookup: string;
}

/** The query of `companiesHoldingParticipants` (its plan is tested). */
export function companiesHoldingParticipantsQuery(knex: Knex, lookups: readonly { participantId: string; environment: string }[]) {
  // Once per delivery batch: prepared (readmodels/prepared.ts); the look-ups go as two arrays.
  return prepared(
    knex
      .select(
        'k.lookup',
        'connect_companies.company_id',
        'connect_companies.workspace_id',
        'connect_companies.country_code',
        'connect_companies.peppol_participant_id',
        sourcesColumn(knex),
      )
      .from(
        knex.raw('unnest(?::text[], ?::text[]) with ordinality as k(participant_id, environment, lookup)', [
          lookups.map((l) => l.participantId),
          lookups.map((l) => l.environment),
        ]),
      )
      .join('connect_companies', function () {
        this.on('connect_companies.peppol_participant_id', '=', 'k.participant_id').andOn('connect_companies.platform_environment', '=', 'k.environment');
      })
      .whereRaw(activeCompany(knex))
      .orderBy([{ column: 'k.lookup' }, { column: 'connect_companies.created_at' }, { column: 'connect_companies.company_id' }]),
  );
}

/**
 * The workspace's active companies onboarded in `environment` whose participant id is the buyer
 * endpoint (`scheme:value`, or any scheme when the endpoint has none), or the one named `companyId`.
 */
export async function workspaceCompaniesForEndpoint(
  knex: Knex,
  workspaceId: string,
  environment: string,
  endpoint: { scheme: string | null; value: string } | null,
  companyId: string | null,
): Promise<ReceivingCompany[]> {
  const q = knex('connect_companies').where({ workspace_id: workspaceId, platform_environment: environment }).whereRaw(activeCompany(knex));
  if (companyId !== null) q.where('company_id', companyId);
  else if (!endpoint) return [];
  else if (endpoint.scheme) q.where('peppol_participant_id', `${endpoint.scheme}:${endpoint.value}`);
  else q.where((w) => w.where('peppol_participant_id', endpoint.value).orWhereRaw(`split_part(peppol_participant_id, ':', 2) = ?`, [endpoint.value]));
  const companies: CompanyRow[] = await q.orderBy([{ column: 'created_at' }, { column: 'company_id' }]).select('company_id', 'workspace_id', 'country_code', 'peppol_participant_id', sourcesColumn(knex));
  return companies.map(receivingCompany);
}

/**
 * The country of each company (companies without a row are absent): what a purchase stored
 * before its event recorded the receiving company's country is filed under (no command changes
 * a company's country after onboarding).
 */
export async function companyCountries(knex: Knex, companyIds: readonly string[]): Promise<Map<string, string>> {
  if (companyIds.length === 0) return new Map();
  const rows: { company_id: string; country_code: string }[] = await knex('connect_companies').whereIn('company_id', [...new Set(companyIds)]).select('company_id', 'country_code');
  return new Map(rows.map((r) => [r.company_id, r.country_code]));
}

/** The receiving company's country of each stored purchase: recorded in the event, else the company's (older events). */
export async function receiverCountries(knex: Knex, stored: readonly { receiverCountry: string | null; country: string; attribution: { companyId: string } }[]): Promise<string[]> {
  const missing = stored.filter((d) => d.receiverCountry === null).map((d) => d.attribution.companyId);
  const known = await companyCountries(knex, missing);
  return stored.map((d) => d.receiverCountry ?? known.get(d.attribution.companyId) ?? d.country);
}

export interface PurchaseRow {
  documentId: string;
  workspaceId: string;
  environment: string;
  /** The receiving company's country (the purchase is filed under it). */
  country: string;
  supplierCountry: string | null;
  probableResendOf: string[];
  companyId: string | null;
  documentBase: string;
  status: string;
  invoiceNumber: string | null;
  supplierName: string | null;
  issueDate: string | null;
  uuid: string | null;
  senderParticipantId: string | null;
  receiverParticipantId: string | null;
  attribution: Record<string, unknown>;
  receivedAt: string;
  storedAtMicros: bigint;
}

const COLUMNS = [
  'document_id',
  'workspace_id',
  'environment',
  'country',
  'supplier_country',
  'probable_resend_of',
  'company_id',
  'document_base',
  'status',
  'invoice_number',
  'supplier_name',
  'issue_date',
  'uuid',
  'sender_participant_id',
  'receiver_participant_id',
  'attribution',
  'received_at',
];

function toRow(r: any): PurchaseRow {
  return {
    documentId: r.document_id,
    workspaceId: r.workspace_id,
    environment: r.environment,
    country: r.country,
    supplierCountry: r.supplier_country,
    probableResendOf: r.probable_resend_of ?? [],
    companyId: r.company_id,
    documentBase: r.document_base,
    status: r.status,
    invoiceNumber: r.invoice_number,
    supplierName: r.supplier_name,
    issueDate: r.issue_date,
    uuid: r.uuid,
    senderParticipantId: r.sender_participant_id,
    receiverParticipantId: r.receiver_participant_id,
    attribution: r.attribution,
    receivedAt: new Date(r.received_at).toISOString(),
    storedAtMicros: BigInt(r.stored_us),
  };
}

const storedMicros = (knex: Knex) => knex.raw(`(extract(epoch from stored_at) * 1000000)::bigint::text as stored_us`);

/**
 * One page of the workspace's purchases stored in [startsAt, endsBefore), in (storedAt,
 * documentId) order after `after`: `limit + 1` rows are read to know whether more follow.
 */
export async function listPurchases(
  knex: Knex,
  workspaceId: string,
  environment: string,
  query: { startsAt: string; endsBefore: string; limit: number; after: PurchaseListPosition | null; afterIso: string | null },
): Promise<{ rows: PurchaseRow[]; hasMore: boolean }> {
  const q = knex('purchase_invoices')
    .where({ workspace_id: workspaceId, environment })
    .where('stored_at', '>=', query.startsAt)
    .where('stored_at', '<', query.endsBefore)
    .select([...COLUMNS, storedMicros(knex)])
    .orderBy([{ column: 'stored_at' }, { column: 'document_id' }])
    .limit(query.limit + 1);
  if (query.after && query.afterIso) q.whereRaw('(stored_at, document_id) > (?::timestamptz, ?)', [query.afterIso, query.after.documentId]);
  const rows = (await q).map(toRow);
  const hasMore = rows.length > query.limit;
  return { rows: hasMore ? rows.slice(0, query.limit) : rows, hasMore };
}

export async function findPurchase(knex: Knex, workspaceId: string, environment: string, documentId: string): Promise<PurchaseRow | null> {
  const row = await knex('purchase_invoices').where({ workspace_id: workspaceId, environment, document_id: documentId }).first([...COLUMNS, storedMicros(knex)]);
  return row ? toRow(row) : null;
}

export async function countPurchases(knex: Knex, workspaceId: string): Promise<number> {
  const [row] = await knex('purchase_invoices').where({ workspace_id: workspaceId }).count({ n: '*' });
  return Number(row?.n ?? 0);
}

/** The key that signs purchase-list cursors (created with the table; one per database). */
export async function purchaseCursorKey(knex: Knex): Promise<string> {
  const row = await knex('purchase_cursor_keys').where({ id: 1 }).first('secret');
  if (!row) throw new Error('purchase_cursor_keys has no key: run the migrations');
  return row.secret as string;
}

/** The purchases projection's storage clock of each list (workspace and environment) asked for, in microseconds. */
export async function readStoreClocks(
  trx: Knex.Transaction,
  scopes: readonly (readonly [workspaceId: string, environment: string])[],
): Promise<{ workspaceId: string; environment: string; lastStoredMicros: bigint }[]> {
  const rows: { workspace_id: string; environment: string; us: string }[] = await trx('purchase_store_clock')
    .whereIn(['workspace_id', 'environment'], scopes as unknown as string[][])
    .select('workspace_id', 'environment', trx.raw(`(extract(epoch from last_stored_at) * 1000000)::bigint::text as us`));
  return rows.map((r) => ({ workspaceId: r.workspace_id, environment: r.environment, lastStoredMicros: BigInt(r.us) }));
}

/** One batch of the purchases projection: its new purchase rows, then the lists' storage clocks. */
export async function writeStoredPurchases(
  trx: Knex.Transaction,
  rows: readonly Record<string, unknown>[],
  clocks: readonly { workspaceId: string; environment: string; lastStoredAt: string }[],
): Promise<void> {
  await trx('purchase_invoices').insert(rows).onConflict('document_id').ignore();
  await trx('purchase_store_clock')
    .insert(clocks.map((c) => ({ workspace_id: c.workspaceId, environment: c.environment, last_stored_at: c.lastStoredAt })))
    .onConflict(['workspace_id', 'environment'])
    .merge();
}
