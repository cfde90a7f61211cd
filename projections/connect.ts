/**
 * Projects Connect streams into read models: ASP authorizations, and companies with their
 * sources/branches (denormalized for listing: companies and source rows carry the lower-cased
 * text that "search" looks in).
 */
import type { Knex } from 'knex';
import { AspAuthorizationCreated } from '../domain/connect/asp-authorization.js';
import { CompanyBranchAdded, CompanyOnboarded, CompanySourceArchived, CompanySourceUpdated } from '../domain/connect/company.js';
import { decodeEventData } from '../domain/events/envelope.js';
import { defineProjection } from './projection.js';

export const aspAuthorizationsProjection = defineProjection({
  name: 'asp_authorizations',
  version: 1,
  tables: ['asp_authorizations'],
  eventTypes: new Set([AspAuthorizationCreated.type]),
  async apply(trx, event) {
    const d = decodeEventData(AspAuthorizationCreated, event.schemaVersion, event.data);
    await trx('asp_authorizations')
      .insert({
        authorization_id: d.authorizationId,
        workspace_id: d.workspaceId,
        environment: d.environment,
        tin: d.tin,
        email: d.email,
        legal_name: d.legalName,
        legal_name_arabic: d.legalNameArabic,
        vat_trn: d.vatTrn,
        created_at: d.at,
      })
      .onConflict('authorization_id')
      .ignore();
  },
});

/**
 * Recomputes what "search" looks in, lower-cased and separated by a unit separator: per source
 * row its legal name, source name, tin and branch name (one row, or all rows of the company when
 * `sourceId` is null); per company its legal name, tin and every source and branch name.
 */
async function refreshSearchText(trx: Knex.Transaction, companyId: string, sourceId: string | null): Promise<void> {
  await trx.raw(
    `update connect_sources s
        set search_text = lower(concat_ws(chr(31), c.legal_name, s.source_name, c.tin, s.branch_name))
       from connect_companies c
      where c.company_id = s.company_id and s.company_id = ? ${sourceId === null ? '' : 'and s.source_id = ?'}`,
    sourceId === null ? [companyId] : [companyId, sourceId],
  );
  await trx.raw(
    `update connect_companies c
        set search_text = lower(concat_ws(chr(31), c.legal_name, c.tin, (
              select string_agg(s.source_name || chr(31) || s.branch_name, chr(31) order by s.created_at, s.source_id)
                from connect_sources s where s.company_id = c.company_id)))
      where c.company_id = ?`,
    [companyId],
  );
}

async function touchCompany(trx: Knex.Transaction, companyId: string, at: string): Promise<void> {
  await trx('connect_companies').where({ company_id: companyId }).update({ updated_at: at });
}

export const companiesProjection = defineProjection({
  name: 'connect_companies',
  version: 1,
  tables: ['connect_companies', 'connect_sources'],
  eventTypes: new Set([CompanyOnboarded.type, CompanyBranchAdded.type, CompanySourceUpdated.type, CompanySourceArchived.type]),
  async apply(trx, event) {
    switch (event.type) {
      case CompanyOnboarded.type: {
        const d = decodeEventData(CompanyOnboarded, event.schemaVersion, event.data);
        await trx('connect_companies').insert({
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
          search_text: trx.raw(`lower(concat_ws(chr(31), ?::text, ?::text))`, [d.legalName, d.tin]),
          created_at: d.at,
          updated_at: d.at,
        });
        return;
      }
      case CompanyBranchAdded.type: {
        const d = decodeEventData(CompanyBranchAdded, event.schemaVersion, event.data);
        const company = await trx('connect_companies').where({ company_id: d.companyId }).first('workspace_id', 'legal_name', 'tin');
        if (!company) throw new Error(`CompanyBranchAdded for unknown company ${d.companyId}`);
        await trx('connect_sources').insert({
          source_id: d.sourceId,
          branch_id: d.branchId,
          company_id: d.companyId,
          workspace_id: company.workspace_id,
          source_name: d.sourceName,
          source_version: d.sourceVersion,
          branch_name: d.branchName,
          user_given_branch_id: d.userGivenBranchId,
          status: 'active',
          metadata: {},
          mapping_readiness: JSON.stringify(d.mappingReadiness),
          platform_environment: d.platformEnvironment,
          search_text: '',
          created_at: d.at,
          updated_at: d.at,
        });
        await refreshSearchText(trx, d.companyId, d.sourceId);
        await touchCompany(trx, d.companyId, d.at);
        return;
      }
      case CompanySourceUpdated.type: {
        const d = decodeEventData(CompanySourceUpdated, event.schemaVersion, event.data);
        const c = d.changes;
        const companyChanges: Record<string, unknown> = { updated_at: d.at };
        if (c.legalName !== undefined) companyChanges.legal_name = c.legalName;
        if (c.legalIdentifier !== undefined) companyChanges.legal_identifier = c.legalIdentifier;
        if (c.countryCode !== undefined) companyChanges.country_code = c.countryCode;
        await trx('connect_companies').where({ company_id: d.companyId }).update(companyChanges);
        const sourceChanges: Record<string, unknown> = { updated_at: d.at };
        if (c.sourceVersion !== undefined) sourceChanges.source_version = c.sourceVersion;
        if (c.status !== undefined) sourceChanges.status = c.status;
        if (c.metadata !== undefined) sourceChanges.metadata = JSON.stringify(c.metadata);
        await trx('connect_sources').where({ source_id: d.sourceId }).update(sourceChanges);
        if (c.legalName !== undefined) {
          await refreshSearchText(trx, d.companyId, null);
        }
        return;
      }
      case CompanySourceArchived.type: {
        const d = decodeEventData(CompanySourceArchived, event.schemaVersion, event.data);
        await trx('connect_sources').where({ source_id: d.sourceId }).update({ status: 'inactive', updated_at: d.at });
        await touchCompany(trx, d.companyId, d.at);
        return;
      }
    }
  },
});
