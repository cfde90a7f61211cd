/**
 * The MyInvois taxpayers the service submits for (migration 0130): per environment and TIN, how it
 * logs in (as the taxpayer's own system, or as the service's intermediary system on behalf of the
 * TIN), the sealed client secret and signing key, and the certificate. Written by the admin CLI,
 * read by the MyInvois connector. Sealing and opening are the caller's (commands/myinvois/credentials.ts).
 */
import type { Knex } from 'knex';

export interface MyInvoisTaxpayerRow {
  environment: string;
  tin: string;
  mode: 'taxpayer' | 'intermediary';
  clientId: string | null;
  clientSecretSealed: string | null;
  signingKeySealed: string;
  certificatePem: string;
  updatedAt: Date;
}

const toRow = (r: Record<string, unknown>): MyInvoisTaxpayerRow => ({
  environment: String(r.environment),
  tin: String(r.tin),
  mode: r.mode as MyInvoisTaxpayerRow['mode'],
  clientId: (r.client_id as string | null) ?? null,
  clientSecretSealed: (r.client_secret_sealed as string | null) ?? null,
  signingKeySealed: String(r.signing_key_sealed),
  certificatePem: String(r.certificate_pem),
  updatedAt: r.updated_at as Date,
});

export async function upsertMyInvoisTaxpayer(knex: Knex, row: MyInvoisTaxpayerRow): Promise<void> {
  await knex('myinvois_taxpayers')
    .insert({
      environment: row.environment,
      tin: row.tin,
      mode: row.mode,
      client_id: row.clientId,
      client_secret_sealed: row.clientSecretSealed,
      signing_key_sealed: row.signingKeySealed,
      certificate_pem: row.certificatePem,
      updated_at: row.updatedAt.toISOString(),
    })
    .onConflict(['environment', 'tin'])
    .merge();
}

export async function getMyInvoisTaxpayer(knex: Knex, environment: string, tin: string): Promise<MyInvoisTaxpayerRow | null> {
  const r = await knex('myinvois_taxpayers').where({ environment, tin }).first();
  return r ? toRow(r) : null;
}

export async function listMyInvoisTaxpayers(knex: Knex, environment?: string): Promise<MyInvoisTaxpayerRow[]> {
  const q = knex('myinvois_taxpayers').orderBy(['environment', 'tin']);
  if (environment) q.where({ environment });
  return (await q).map(toRow);
}

export async function deleteMyInvoisTaxpayer(knex: Knex, environment: string, tin: string): Promise<boolean> {
  return (await knex('myinvois_taxpayers').where({ environment, tin }).delete()) > 0;
}
