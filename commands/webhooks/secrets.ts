/**
 * Webhook signing secrets at rest. A delivery must be signed with the secret itself (an HMAC),
 * so a hash cannot replace it; it is sealed with AES-256-GCM under the key of
 * WEBHOOK_SECRET_ENCRYPTION_KEY before it enters the log (and so the read model and the audit
 * output), and opened only to sign a delivery. A sealed secret reads
 * `enc:v1:<iv>.<tag>.<ciphertext>` (base64url), bound to its subscription id as additional
 * data, so a sealed value copied onto another subscription does not open. Secrets written
 * before sealing existed are plain strings in the log and are used as they are.
 */
import { LRUCache } from 'lru-cache';
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';

const PREFIX = 'enc:v1:';

/**
 * The key used when WEBHOOK_SECRET_ENCRYPTION_KEY is unset: for development and sandbox
 * deployments only (it is public, being in the source).
 */
export const DEVELOPMENT_SECRET_KEY = createHash('sha256').update('einvoicing development webhook secret key').digest();

export class SecretOpenError extends Error {
  override readonly name = 'SecretOpenError';
}

export interface SecretBox {
  /** Whether this box uses the public development key. */
  readonly development: boolean;
  seal(subscriptionId: string, secret: string): string;
  /** The secret of a sealed (or, written before sealing, plain) value. */
  open(subscriptionId: string, stored: string): string;
}

/** Secrets opened lately, so that a busy subscription's deliveries do not each decrypt it again. */
const OPENED_KEPT = 1000;

export function secretBox(key: Buffer | null): SecretBox {
  const k = key ?? DEVELOPMENT_SECRET_KEY;
  if (k.length !== 32) throw new RangeError('a webhook secret key is 32 bytes');
  const opened = new LRUCache<string, string>({ max: OPENED_KEPT }); // subscription id and sealed value → secret
  return {
    development: key === null,
    seal(subscriptionId, secret) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', k, iv);
      cipher.setAAD(Buffer.from(subscriptionId, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
      return `${PREFIX}${iv.toString('base64url')}.${cipher.getAuthTag().toString('base64url')}.${ciphertext.toString('base64url')}`;
    },
    open(subscriptionId, stored) {
      if (!stored.startsWith(PREFIX)) return stored;
      const cacheKey = `${subscriptionId}\n${stored}`;
      const known = opened.get(cacheKey);
      if (known !== undefined) return known;
      const [iv, tag, ciphertext] = stored.slice(PREFIX.length).split('.');
      try {
        const decipher = createDecipheriv('aes-256-gcm', k, Buffer.from(iv ?? '', 'base64url'));
        decipher.setAAD(Buffer.from(subscriptionId, 'utf8'));
        decipher.setAuthTag(Buffer.from(tag ?? '', 'base64url'));
        const secret = Buffer.concat([decipher.update(Buffer.from(ciphertext ?? '', 'base64url')), decipher.final()]).toString('utf8');
        opened.set(cacheKey, secret);
        return secret;
      } catch {
        throw new SecretOpenError(`the signing secret of ${subscriptionId} does not open with this key (WEBHOOK_SECRET_ENCRYPTION_KEY changed?)`);
      }
    },
  };
}
