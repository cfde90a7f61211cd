/**
 * Queries of the Connect read models. Every query is scoped by workspace in SQL.
 */
import type { Knex } from 'knex';
import type { TableShape } from './batch-rows.js';
import { prepared } from './prepared.js';
import { RecentLookups } from './recent-lookups.js';
import type { CompanyListQuery, CountsQuery } from '../domain/connect/input.js';
import type { CompanyRecord } from '../domain/connect/company.js';
import type { MappingReadiness } from '../domain/connect/values.js';

/** A source with its company, as the read model holds them (the company's fields as the aggregate records them). */
export interface CompanySourceRow extends Omit<CompanyRecord, 'createdAt' | 'updatedAt'> {
  onboardingStatus: string;
  companyCreatedAt: Date;
  companyUpdatedAt: Date;
  sourceId: string;
  sourceName: string;
  sourceVersion: string;
  status: 'active' | 'inactive';
  metadata: Record<string, unknown>;
  branchId: string;
  branchName: string;
  userGivenBranchId: string;
  mappingReadiness: MappingReadiness;
  sourceCreatedAt: Date;
  sourceUpdatedAt: Date;
}

const SOURCE_COLUMNS = [
  'c.company_id',
  'c.workspace_id',
  'c.country_code',
  'c.tin',
  'c.legal_name',
  'c.legal_name_arabic',
  'c.legal_identifier',
  'c.vat_trn',
  'c.peppol_participant_id',
  'c.platform_environment',
  'c.contact_person_name',
  'c.contact_person_email',
  'c.contact_person_mobile',
  'c.onboarding_status',
  'c.created_at as company_created_at',
  'c.updated_at as company_updated_at',
  's.source_id',
  's.source_name',
  's.source_version',
  's.status',
  's.metadata',
  's.branch_id',
  's.branch_name',
  's.user_given_branch_id',
  's.mapping_readiness',
  's.created_at as source_created_at',
  's.updated_at as source_updated_at',
];

function toRow(r: any): CompanySourceRow {
  return {
    companyId: r.company_id,
    workspaceId: r.workspace_id,
    countryCode: r.country_code,
    tin: r.tin,
    legalName: r.legal_name,
    legalNameArabic: r.legal_name_arabic,
    legalIdentifier: r.legal_identifier,
    vatTrn: r.vat_trn,
    peppolParticipantId: r.peppol_participant_id,
    platformEnvironment: r.platform_environment,
    contactPersonName: r.contact_person_name,
    contactPersonEmail: r.contact_person_email,
    contactPersonMobile: r.contact_person_mobile,
    onboardingStatus: r.onboarding_status,
    companyCreatedAt: r.company_created_at,
    companyUpdatedAt: r.company_updated_at,
    sourceId: r.source_id,
    sourceName: r.source_name,
    sourceVersion: r.source_version,
    status: r.status,
    metadata: r.metadata,
    branchId: r.branch_id,
    branchName: r.branch_name,
    userGivenBranchId: r.user_given_branch_id,
    mappingReadiness: r.mapping_readiness,
    sourceCreatedAt: r.source_created_at,
    sourceUpdatedAt: r.source_updated_at,
  };
}

const likePattern = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The source-level conditions of a list query, on connect_sources aliased `s`. */
function sourceFilters(q: Knex.QueryBuilder, query: CompanyListQuery): Knex.QueryBuilder {
  if (query.sourceVersion !== null) q.where('s.source_version', query.sourceVersion);
  if (query.status !== null) q.where('s.status', query.status);
  if (query.search !== null) q.whereRaw(`s.search_text like lower(?)`, [likePattern(query.search)]);
  return q;
}

/**
 * One page of companies (most recently updated first), each with its sources that match the
 * filters; `total` counts companies. A company matches when one of its source rows meets every
 * condition. With only a search, the company's own search text (legal name, tin, all source and
 * branch names) decides in one pass over the companies; with source-level filters the
 * conditions are checked together on each source row.
 */
export async function listCompanySources(
  knex: Knex,
  workspaceId: string,
  query: CompanyListQuery,
): Promise<{ total: number; rows: CompanySourceRow[] }> {
  const companies = () => {
    const q = knex('connect_companies as c').where('c.workspace_id', workspaceId);
    if (query.countryCode !== null) q.where('c.country_code', query.countryCode);
    if (query.sourceVersion !== null || query.status !== null) {
      q.whereExists(function () {
        sourceFilters(this.select(knex.raw('1')).from('connect_sources as s').whereRaw('s.company_id = c.company_id').where('s.workspace_id', workspaceId), query);
      });
    } else if (query.search !== null) {
      q.whereRaw(`c.search_text like lower(?)`, [likePattern(query.search)]);
    }
    return q;
  };
  const page = await companies()
    .select('c.company_id', knex.raw('count(*) over () as total'))
    .orderBy([
      { column: 'c.updated_at', order: 'desc' },
      { column: 'c.company_id', order: 'desc' },
    ])
    .limit(query.limit)
    .offset((query.page - 1) * query.limit);
  let total: number;
  if (page.length > 0) total = Number(page[0].total);
  else total = query.page === 1 ? 0 : Number((await companies().count<{ n: string }[]>({ n: '*' }))[0]!.n);
  if (page.length === 0) return { total, rows: [] };

  const ids: string[] = page.map((r: any) => r.company_id);
  const rows = await sourceFilters(
    knex('connect_sources as s')
      .join('connect_companies as c', 'c.company_id', 's.company_id')
      .where('s.workspace_id', workspaceId)
      .whereIn('s.company_id', ids)
      .select(SOURCE_COLUMNS),
    query,
  ).orderBy([
    { column: 's.created_at', order: 'asc' },
    { column: 's.source_id', order: 'asc' },
  ]);
  const order = new Map(ids.map((id, i) => [id, i]));
  return {
    total,
    rows: rows.map(toRow).sort((a: CompanySourceRow, b: CompanySourceRow) => order.get(a.companyId)! - order.get(b.companyId)!),
  };
}

/** One source of the workspace by name and version, or null. */
export async function findCompanySource(
  knex: Knex,
  workspaceId: string,
  sourceName: string,
  sourceVersion: string,
): Promise<CompanySourceRow | null> {
  // Once per submission: prepared (readmodels/prepared.ts).
  const row = await prepared(
    knex('connect_sources as s')
      .join('connect_companies as c', 'c.company_id', 's.company_id')
      .where({ 's.workspace_id': workspaceId, 's.source_name': sourceName, 's.source_version': sourceVersion })
      .select(SOURCE_COLUMNS)
      .orderBy('s.updated_at', 'desc')
      .first(),
  );
  return row ? toRow(row) : null;
}

/**
 * The source lookup of every submission (`findCompanySource`), its answers kept per instance for
 * at most a second (readmodels/recent-lookups.ts); misses are not kept. This instance's Connect
 * writes drop their workspace's answers once the read model holds them (`forgetWorkspace`), so a
 * change answered by this instance applies to its next submission; one made through another
 * instance applies within a second.
 */
export class CompanySourceLookups {
  private readonly recent: RecentLookups<CompanySourceRow | null>;
  constructor(
    private readonly knex: Knex,
    options: { ttlMs?: number; maxEntries?: number; now?: () => number } = {},
  ) {
    this.recent = new RecentLookups({ ...options, keep: (row) => row !== null });
  }

  find(workspaceId: string, sourceName: string, sourceVersion: string): Promise<CompanySourceRow | null> {
    // A JSON array: names may hold any character, and a workspace's keys share a prefix.
    const key = JSON.stringify([workspaceId, sourceName, sourceVersion]);
    return this.recent.get(key, () => findCompanySource(this.knex, workspaceId, sourceName, sourceVersion));
  }

  forgetWorkspace(workspaceId: string): void {
    this.recent.forget(`${JSON.stringify([workspaceId]).slice(0, -1)},`);
  }
}

export async function companyExistsInWorkspace(knex: Knex, workspaceId: string, companyId: string): Promise<boolean> {
  return !!(await knex('connect_companies').where({ workspace_id: workspaceId, company_id: companyId }).first('company_id'));
}

export interface DocumentCounts {
  totalCount: number;
  salesCount: number;
  purchaseCount: number;
  companies: { companyId: string; totalCount: number; salesCount: number; purchaseCount: number }[];
}

const DAY_MS = 86_400_000;

/**
 * Document counts of the workspace in one environment: sales from the documents read model,
 * received purchases from the purchases read model. Dates are inclusive UTC days on the sales
 * document's creation time and the purchase's storage time. The breakdown
 * lists the workspace's companies of that environment (zeros included) and any other company
 * that has matching documents.
 */
export async function countDocuments(knex: Knex, workspaceId: string, query: CountsQuery): Promise<DocumentCounts> {
  // Sales from the documents read model (on creation time), received purchases from
  // purchase_invoices (on storage time); the same filters on each.
  const filtered = (table: string, timeColumn: string, direction: string | null) => {
    const q = knex(table).where({ workspace_id: workspaceId, environment: query.environment });
    if (direction !== null) q.where('direction', direction);
    if (query.countryCode !== null) q.where('country', query.countryCode);
    if (query.companyId !== null) q.where('company_id', query.companyId);
    if (query.documentFilter && 'base' in query.documentFilter) q.where('document_base', query.documentFilter.base);
    if (query.from !== null) q.where(timeColumn, '>=', `${query.from}T00:00:00Z`);
    if (query.to !== null) q.where(timeColumn, '<', new Date(Date.parse(`${query.to}T00:00:00Z`) + DAY_MS).toISOString());
    return q;
  };
  const wanted = query.documentFilter && 'direction' in query.documentFilter ? query.documentFilter.direction : null;
  const parts: Knex.QueryBuilder[] = [];
  if (wanted === null || wanted === 'sales' || wanted === 'purchase') {
    parts.push(filtered('documents', 'created_at', wanted).select('company_id', 'direction'));
  }
  if (wanted === null || wanted === 'purchase') {
    parts.push(filtered('purchase_invoices', 'stored_at', null).select('company_id', knex.raw(`'purchase' as direction`)));
  }
  const docs = knex
    .from(knex.unionAll(parts, true).as('d'))
    .select('company_id')
    .select(knex.raw(`count(*) filter (where direction = 'sales')::int as sales`))
    .select(knex.raw(`count(*) filter (where direction = 'purchase')::int as purchase`))
    .groupBy('company_id');

  const companies = knex('connect_companies')
    .where({ workspace_id: workspaceId, platform_environment: query.environment })
    .select('company_id')
    .orderBy([{ column: 'created_at' }, { column: 'company_id' }]);
  if (query.countryCode !== null) companies.where('country_code', query.countryCode);
  if (query.companyId !== null) companies.where('company_id', query.companyId);

  const [counted, known] = await Promise.all([docs, companies]);
  const byCompany = new Map<string, { sales: number; purchase: number }>();
  let sales = 0;
  let purchase = 0;
  for (const r of counted as { company_id: string | null; sales: number; purchase: number }[]) {
    sales += r.sales;
    purchase += r.purchase;
    if (r.company_id !== null) byCompany.set(r.company_id, { sales: r.sales, purchase: r.purchase });
  }
  const ids = new Set((known as { company_id: string }[]).map((r) => r.company_id));
  if (query.companyId !== null) ids.add(query.companyId);
  for (const id of byCompany.keys()) ids.add(id);
  return {
    totalCount: sales + purchase,
    salesCount: sales,
    purchaseCount: purchase,
    companies: [...ids].map((companyId) => {
      const c = byCompany.get(companyId) ?? { sales: 0, purchase: 0 };
      return { companyId, totalCount: c.sales + c.purchase, salesCount: c.sales, purchaseCount: c.purchase };
    }),
  };
}

export interface AspAuthorizationRow {
  authorizationId: string;
  workspaceId: string;
  environment: string;
  tin: string;
  email: string;
  legalName: string | null;
  legalNameArabic: string | null;
  vatTrn: string | null;
  createdAt: string;
}

export async function listAspAuthorizations(knex: Knex, workspaceId: string): Promise<AspAuthorizationRow[]> {
  const rows = await knex('asp_authorizations').where({ workspace_id: workspaceId }).orderBy(['created_at', 'authorization_id']);
  return rows.map((r: any) => ({
    authorizationId: r.authorization_id,
    workspaceId: r.workspace_id,
    environment: r.environment,
    tin: r.tin,
    email: r.email,
    legalName: r.legal_name,
    legalNameArabic: r.legal_name_arabic,
    vatTrn: r.vat_trn,
    createdAt: new Date(r.created_at).toISOString(),
  }));
}

/** The columns of the companies read model (written by the connect_companies projection). */
export const CONNECT_COMPANIES_SHAPE: TableShape = {
  table: 'connect_companies',
  key: ['company_id'],
  columns: {
    company_id: 'text',
    workspace_id: 'text',
    country_code: 'text',
    tin: 'text',
    legal_name: 'text',
    legal_name_arabic: 'text',
    legal_identifier: 'text',
    vat_trn: 'text',
    peppol_participant_id: 'text',
    platform_environment: 'text',
    contact_person_name: 'text',
    contact_person_email: 'text',
    contact_person_mobile: 'text',
    onboarding_status: 'text',
    search_text: 'text',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
};

export const CONNECT_SOURCES_SHAPE: TableShape = {
  table: 'connect_sources',
  key: ['source_id'],
  columns: {
    source_id: 'text',
    branch_id: 'text',
    company_id: 'text',
    workspace_id: 'text',
    source_name: 'text',
    source_version: 'text',
    branch_name: 'text',
    user_given_branch_id: 'text',
    status: 'text',
    metadata: 'jsonb',
    mapping_readiness: 'jsonb',
    platform_environment: 'text',
    search_text: 'text',
    created_at: 'timestamptz',
    updated_at: 'timestamptz',
  },
};

/**
 * Recomputes what "search" looks in for these companies, lower-cased and separated by a unit
 * separator: per source row its legal name, source name, tin and branch name; per company its
 * legal name, tin and every source and branch name. One statement per table for any number of companies.
 */
export async function refreshSearchText(trx: Knex.Transaction, companyIds: readonly string[]): Promise<void> {
  if (companyIds.length === 0) return;
  await trx.raw(
    `update connect_sources s
        set search_text = lower(concat_ws(chr(31), c.legal_name, s.source_name, c.tin, s.branch_name))
       from connect_companies c
      where c.company_id = s.company_id and s.company_id = any(?::text[])`,
    [[...companyIds]],
  );
  await trx.raw(
    `update connect_companies c
        set search_text = lower(concat_ws(chr(31), c.legal_name, c.tin, (
              select string_agg(s.source_name || chr(31) || s.branch_name, chr(31) order by s.created_at, s.source_id)
                from connect_sources s where s.company_id = c.company_id)))
      where c.company_id = any(?::text[])`,
    [[...companyIds]],
  );
}
