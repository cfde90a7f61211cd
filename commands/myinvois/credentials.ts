/**
 * The MyInvois taxpayers' credentials at rest. A client secret and a signing key must be used as
 * they are (to log in, to sign), so a hash cannot replace them: each is sealed with AES-256-GCM
 * under MYINVOIS_CREDENTIALS_KEY (the same sealing as webhook secrets, commands/webhooks/secrets.ts),
 * bound to its environment, TIN and field as additional data, so a sealed value copied onto
 * another taxpayer or field does not open. The certificate is public and kept as it is.
 */
import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { Knex } from 'knex';
import { certificateFacts } from '../../domain/myinvois/signature.js';
import { deleteMyInvoisTaxpayer, getMyInvoisTaxpayer, listMyInvoisTaxpayers, upsertMyInvoisTaxpayer } from '../../readmodels/myinvois.js';
import { secretBox, SecretOpenError, type SecretBox } from '../webhooks/secrets.js';

export type LoginMode = 'taxpayer' | 'intermediary';

/** A taxpayer's credentials, opened: what the connector logs in and signs with. */
export interface Taxpayer {
  environment: string;
  tin: string;
  mode: LoginMode;
  /** Taxpayer mode: the taxpayer's own client credentials; intermediary mode: null (the service's are used). */
  client: { clientId: string; clientSecret: string } | null;
  signingKeyPem: string;
  certificatePem: string;
}

export class MyInvoisCredentialsError extends Error {
  override readonly name = 'MyInvoisCredentialsError';
}

/** What the admin lists of a taxpayer: never a secret. */
export interface TaxpayerSummary {
  environment: string;
  tin: string;
  mode: LoginMode;
  clientId: string | null;
  certificate: { subject: string; issuer: string; serialNumber: string; validTo: string };
  updatedAt: string;
}

const aad = (environment: string, tin: string, field: string) => `myinvois:${environment}:${tin}:${field}`;

export class MyInvoisCredentials {
  private readonly box: SecretBox;
  private readonly opened = new Map<string, { at: number; taxpayer: Taxpayer | null }>();

  constructor(
    private readonly knex: Knex,
    key: Buffer,
    /** How long an opened record is reused before it is read again (an admin change takes effect after it). */
    private readonly cacheMs = 30_000,
  ) {
    this.box = secretBox(key);
  }

  /** Stores (or replaces) a taxpayer; refuses a key and certificate that do not belong together. */
  async set(input: { environment: string; tin: string; mode: LoginMode; clientId?: string | null; clientSecret?: string | null; signingKeyPem: string; certificatePem: string }, now: Date): Promise<TaxpayerSummary> {
    if (!/^[A-Z]{1,2}\d{6,13}$/.test(input.tin)) throw new MyInvoisCredentialsError(`"${input.tin}" is not a TIN (a prefix such as C or IG and digits)`);
    if (input.mode === 'taxpayer' && (!input.clientId || !input.clientSecret)) throw new MyInvoisCredentialsError('a taxpayer system logs in with its own client id and client secret: give both');
    if (input.mode === 'intermediary' && (input.clientId || input.clientSecret)) throw new MyInvoisCredentialsError('in intermediary mode the service logs in with MYINVOIS_CLIENT_ID/MYINVOIS_CLIENT_SECRET on behalf of the TIN: give no client credentials');
    let cert: X509Certificate;
    try {
      cert = new X509Certificate(input.certificatePem);
    } catch (err) {
      throw new MyInvoisCredentialsError(`the certificate cannot be read: ${(err as Error).message}`);
    }
    let matches = false;
    try {
      const key = createPrivateKey(input.signingKeyPem);
      if (key.asymmetricKeyType !== 'rsa') throw new MyInvoisCredentialsError(`the signing key is ${String(key.asymmetricKeyType)}; MyInvois signatures are RSA-SHA256`);
      matches = cert.checkPrivateKey(key);
    } catch (err) {
      if (err instanceof MyInvoisCredentialsError) throw err;
      throw new MyInvoisCredentialsError(`the signing key cannot be read: ${(err as Error).message}`);
    }
    if (!matches) throw new MyInvoisCredentialsError('the signing key does not belong to the certificate');
    await upsertMyInvoisTaxpayer(this.knex, {
      environment: input.environment,
      tin: input.tin,
      mode: input.mode,
      clientId: input.mode === 'taxpayer' ? input.clientId! : null,
      clientSecretSealed: input.mode === 'taxpayer' ? this.box.seal(aad(input.environment, input.tin, 'client_secret'), input.clientSecret!) : null,
      signingKeySealed: this.box.seal(aad(input.environment, input.tin, 'signing_key'), input.signingKeyPem),
      certificatePem: input.certificatePem,
      updatedAt: now,
    });
    this.opened.delete(`${input.environment}\n${input.tin}`);
    return (await this.list(input.environment)).find((t) => t.tin === input.tin)!;
  }

  async list(environment?: string): Promise<TaxpayerSummary[]> {
    return (await listMyInvoisTaxpayers(this.knex, environment)).map((r) => {
      const facts = certificateFacts(r.certificatePem);
      const cert = new X509Certificate(r.certificatePem);
      return {
        environment: r.environment,
        tin: r.tin,
        mode: r.mode,
        clientId: r.clientId,
        certificate: { subject: cert.subject.split('\n').reverse().join(', '), issuer: facts.issuerName, serialNumber: facts.serialNumber, validTo: new Date(cert.validTo).toISOString() },
        updatedAt: r.updatedAt.toISOString(),
      };
    });
  }

  async remove(environment: string, tin: string): Promise<boolean> {
    this.opened.delete(`${environment}\n${tin}`);
    return deleteMyInvoisTaxpayer(this.knex, environment, tin);
  }

  /** The taxpayer's opened credentials, or null when the TIN is not onboarded in this environment. */
  async get(environment: string, tin: string): Promise<Taxpayer | null> {
    const cacheKey = `${environment}\n${tin}`;
    const cached = this.opened.get(cacheKey);
    if (cached && Date.now() - cached.at < this.cacheMs) return cached.taxpayer;
    const row = await getMyInvoisTaxpayer(this.knex, environment, tin);
    let taxpayer: Taxpayer | null = null;
    if (row) {
      try {
        taxpayer = {
          environment,
          tin,
          mode: row.mode,
          client: row.mode === 'taxpayer' ? { clientId: row.clientId!, clientSecret: this.box.open(aad(environment, tin, 'client_secret'), row.clientSecretSealed!) } : null,
          signingKeyPem: this.box.open(aad(environment, tin, 'signing_key'), row.signingKeySealed),
          certificatePem: row.certificatePem,
        };
      } catch (err) {
        if (err instanceof SecretOpenError) throw new MyInvoisCredentialsError(`the credentials of ${tin} (${environment}) do not open with MYINVOIS_CREDENTIALS_KEY (the key changed?)`);
        throw err;
      }
    }
    this.opened.set(cacheKey, { at: Date.now(), taxpayer });
    return taxpayer;
  }
}
