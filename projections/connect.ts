/**
 * Projects Connect streams into read models: ASP authorizations, and companies with their
 * sources/branches (denormalized for listing: companies and source rows carry the lower-cased
 * text that "search" looks in). Each projection writes a batch of events with one statement per
 * table (see readmodels/batch-rows.ts).
 */
import type { Knex } from 'knex';
import type { RecordedEvent } from '../platform/eventstore/port.js';
import { AspAuthorizationCreated } from '../domain/connect/asp-authorization.js';
import { CompanyBranchAdded, CompanyOnboarded, CompanySourceArchived, CompanySourceUpdated, type CompanyEvent } from '../domain/connect/company.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { BatchRows, insertRows, type Row } from '../readmodels/batch-rows.js';
import { CONNECT_COMPANIES_SHAPE, CONNECT_SOURCES_SHAPE, refreshSearchText } from '../readmodels/connect.js';
import { defineProjection } from './projection.js';

async function applyAuthorizations(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<void> {
  // The first creation of an id wins, as one insert … on conflict do nothing per event did.
  const rows = new Map<string, Row>();
  for (const event of events) {
    const d = decodeEventData(AspAuthorizationCreated, event.schemaVersion, event.data);
    if (rows.has(d.authorizationId)) continue;
    rows.set(d.authorizationId, {
      authorization_id: d.authorizationId,
      workspace_id: d.workspaceId,
      environment: d.environment,
      tin: d.tin,
      email: d.email,
      legal_name: d.legalName,
      legal_name_arabic: d.legalNameArabic,
      vat_trn: d.vatTrn,
      created_at: d.at,
    });
  }
  await insertRows(trx, 'asp_authorizations', [...rows.values()], { key: ['authorization_id'], merge: false });
}

export const aspAuthorizationsProjection = defineProjection({
  name: 'asp_authorizations',
  version: 1,
  tables: ['asp_authorizations'],
  eventTypes: new Set([AspAuthorizationCreated.type]),
  apply: (trx, event) => applyAuthorizations(trx, [event]),
  applyMany: applyAuthorizations,
});

function decodeCompanyEvent(event: RecordedEvent): CompanyEvent {
  switch (event.type) {
    case CompanyOnboarded.type:
      return { type: 'CompanyOnboarded', data: decodeEventData(CompanyOnboarded, event.schemaVersion, event.data) };
    case CompanyBranchAdded.type:
      return { type: 'CompanyBranchAdded', data: decodeEventData(CompanyBranchAdded, event.schemaVersion, event.data) };
    case CompanySourceUpdated.type:
      return { type: 'CompanySourceUpdated', data: decodeEventData(CompanySourceUpdated, event.schemaVersion, event.data) };
    case CompanySourceArchived.type:
      return { type: 'CompanySourceArchived', data: decodeEventData(CompanySourceArchived, event.schemaVersion, event.data) };
    default:
      throw new Error(`connect_companies does not read ${event.type}`);
  }
}

/** What one event does to the companies and sources, in log order (see applyCompanies). */
function applyCompanyEvent(event: CompanyEvent, companies: BatchRows, sources: BatchRows, refresh: Set<string>): void {
  switch (event.type) {
    case 'CompanyOnboarded': {
      const d = event.data;
      if (companies.get([d.companyId])) throw new Error(`company ${d.companyId} is already projected`);
      companies.put({
        company_id: d.companyId,
        workspace_id: d.workspaceId,
        country_code: d.countryCode,
        tin: d.tin,
        legal_name: d.legalName,
        legal_name_arabic: d.legalNameArabic,
        legal_identifier: null,
        vat_trn: d.vatTrn,
        peppol_participant_id: d.peppolParticipantId,
        platform_environment: d.platformEnvironment,
        contact_person_name: d.contactPersonName,
        contact_person_email: d.contactPersonEmail,
        contact_person_mobile: d.contactPersonMobile,
        onboarding_status: 'onboarded',
        search_text: '', // computed by refreshSearchText at the end of the batch
        created_at: d.at,
        updated_at: d.at,
      });
      refresh.add(d.companyId);
      return;
    }
    case 'CompanyBranchAdded': {
      const d = event.data;
      const company = companies.get([d.companyId]);
      if (!company) throw new Error(`CompanyBranchAdded for unknown company ${d.companyId}`);
      if (sources.get([d.sourceId])) throw new Error(`source ${d.sourceId} is already projected`);
      sources.put({
        source_id: d.sourceId,
        branch_id: d.branchId,
        company_id: d.companyId,
        workspace_id: company.workspace_id,
        source_name: d.sourceName,
        source_version: d.sourceVersion,
        branch_name: d.branchName,
        user_given_branch_id: d.userGivenBranchId,
        status: 'active',
        metadata: '{}',
        mapping_readiness: JSON.stringify(d.mappingReadiness),
        platform_environment: d.platformEnvironment,
        search_text: '',
        created_at: d.at,
        updated_at: d.at,
      });
      companies.update([d.companyId], () => ({ updated_at: d.at }));
      refresh.add(d.companyId);
      return;
    }
    case 'CompanySourceUpdated': {
      const d = event.data;
      const c = d.changes;
      const companyChanges: Row = { updated_at: d.at };
      if (c.legalName !== undefined) companyChanges.legal_name = c.legalName;
      if (c.legalIdentifier !== undefined) companyChanges.legal_identifier = c.legalIdentifier;
      if (c.countryCode !== undefined) companyChanges.country_code = c.countryCode;
      companies.update([d.companyId], () => companyChanges);
      const sourceChanges: Row = { updated_at: d.at };
      if (c.sourceVersion !== undefined) sourceChanges.source_version = c.sourceVersion;
      if (c.status !== undefined) sourceChanges.status = c.status;
      if (c.metadata !== undefined) sourceChanges.metadata = JSON.stringify(c.metadata);
      sources.update([d.sourceId], () => sourceChanges);
      if (c.legalName !== undefined) refresh.add(d.companyId);
      return;
    }
    case 'CompanySourceArchived': {
      const d = event.data;
      sources.update([d.sourceId], () => ({ status: 'inactive', updated_at: d.at }));
      companies.update([d.companyId], () => ({ updated_at: d.at }));
      return;
    }
  }
}

/**
 * A batch of company events: the companies and sources it names are read at once, changed in
 * memory in log order and written back with one upsert per table; then what "search" looks in is
 * recomputed once for every company whose names changed (a function of the rows' final values,
 * so once at the end equals once per event).
 */
async function applyCompanies(trx: Knex.Transaction, events: readonly RecordedEvent[]): Promise<void> {
  const companies = new BatchRows(CONNECT_COMPANIES_SHAPE);
  const sources = new BatchRows(CONNECT_SOURCES_SHAPE);
  const decoded = events.map(decodeCompanyEvent);
  await companies.load(trx, decoded.map((d) => [d.data.companyId]));
  await sources.load(trx, decoded.flatMap((d) => ('sourceId' in d.data ? [[d.data.sourceId]] : [])));
  const refresh = new Set<string>();
  for (const d of decoded) applyCompanyEvent(d, companies, sources, refresh);
  await companies.flush(trx);
  await sources.flush(trx);
  await refreshSearchText(trx, [...refresh]);
}

export const companiesProjection = defineProjection({
  name: 'connect_companies',
  version: 1,
  tables: ['connect_companies', 'connect_sources'],
  eventTypes: new Set([CompanyOnboarded.type, CompanyBranchAdded.type, CompanySourceUpdated.type, CompanySourceArchived.type]),
  apply: (trx, event) => applyCompanies(trx, [event]),
  applyMany: applyCompanies,
});
