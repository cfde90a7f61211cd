/**
 * The identity of a received document, decided from the log. Pure.
 *
 * A received document is ONE purchase under each of its identity keys, per receiving workspace
 * and environment:
 * - `sha256:<hash>`: the exact bytes (every channel);
 * - `as4:<message id>`: the AS4 message that carried it (Peppol);
 * - `sbdh:<sender>:<instance id>`: the SBDH instance identifier, unique per sender (Peppol).
 * Each key is a stream (`purchaseid-…`) whose first and only event claims it for one purchase;
 * the claims are appended with the purchase's own stream, all expecting `no_stream`, in one
 * atomic multi-stream append. Of concurrent receivers of one document exactly one append
 * succeeds; the others find a claim and answer the purchase that holds it (a duplicate).
 * Anything else, even with the same document number, is a new purchase.
 *
 * The supplier's identity, the document type and the document number together only flag a
 * probable re-send: a stream per such triple (`purchasenumber-…`) lists the purchases stored
 * under it, appended with the expected revision that was read, so two different documents
 * arriving at once are both stored and the later one is flagged.
 */
import * as t from 'io-ts';
import { parse as uuidParse, v5 as uuidv5 } from 'uuid';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { defineEvent } from '../events/envelope.js';
import type { CoreParty } from '../artifacts/core-document.js';

const KEY_NAMESPACE = '8b0e4f7a-2d63-5c19-9e84-6a3f1d2c7b50';

export interface IdentityScope {
  workspaceId: string;
  environment: string;
}

/** What identifies a received transmission besides its bytes (optional; Peppol sets them). */
export interface TransmissionIdentity {
  /** The AS4 message id (eb:MessageInfo/eb:MessageId) of the message that carried the document. */
  as4MessageId?: string | null;
  /** The SBDH instance identifier (DocumentIdentification/InstanceIdentifier). */
  sbdhInstanceId?: string | null;
  /** The SBDH sender participant (`scheme::value` or `scheme:value`); default: the supplier's endpoint. */
  sbdhSender?: string | null;
}

const clean = (v: string | null | undefined): string | null => {
  const s = v?.trim();
  return s ? s : null;
};

/** The identity keys of a received document (the bytes' key first). */
export function identityKeys(input: { xmlSha256: string; senderParticipantId: string | null; transmission?: TransmissionIdentity | null }): string[] {
  if (!/^[0-9a-f]{64}$/.test(input.xmlSha256)) throw new Error('xmlSha256 is a SHA-256 in lowercase hex');
  const keys = [`sha256:${input.xmlSha256}`];
  const as4 = clean(input.transmission?.as4MessageId);
  if (as4) keys.push(`as4:${as4}`);
  const sbdh = clean(input.transmission?.sbdhInstanceId);
  if (sbdh) {
    // Participant ids compare case-insensitively (Peppol policy); `iso6523-actorid-upis::0088:1` and `0088:1` are one sender.
    const sender = (clean(input.transmission?.sbdhSender) ?? input.senderParticipantId ?? '').toLowerCase().replace(/^iso6523-actorid-upis::/, '');
    keys.push(`sbdh:${sender}:${sbdh}`);
  }
  return keys;
}

/** The namespace as bytes, parsed once (uuid's v5 parses a namespace given as text on every call). */
const KEY_NAMESPACE_BYTES = uuidParse(KEY_NAMESPACE);

/**
 * A v5 UUID of the scoped text as 32 hex digits. The name goes to v5 as its UTF-8 bytes (how v5
 * encodes a name given as text) and the id comes back as bytes: the same hex as the UUID's text
 * without its hyphens, for about half the CPU.
 */
const scoped = (scope: IdentityScope, text: string) =>
  (uuidv5(Buffer.from(`${scope.workspaceId}\n${scope.environment}\n${text}`, 'utf8'), KEY_NAMESPACE_BYTES, Buffer.alloc(16)) as Buffer).toString('hex');

/** The stream claiming one identity key. */
export const identityStream = (scope: IdentityScope, key: string) => `purchaseid-${scoped(scope, key)}`;

/** The purchase's document id: from its bytes' key, so one document is one id in a workspace and environment. */
export const purchaseDocumentIdFor = (scope: IdentityScope, xmlSha256: string) => `pur_${scoped(scope, `sha256:${xmlSha256}`)}`;

const norm = (v: string | undefined | null) => (v ?? '').normalize('NFC').replace(/\s+/g, ' ').trim().toLowerCase();
const compactId = (v: string | undefined | null) => (v ?? '').replace(/[\s.\-/]/g, '').toUpperCase();

/**
 * The supplier's identity: its endpoint (participant id), else its first VAT / tax id, else its
 * first legal registration, else its name and postal address; null when the document names none.
 */
export function supplierIdentity(senderParticipantId: string | null, seller: CoreParty | undefined): string | null {
  if (senderParticipantId && senderParticipantId.trim()) return `endpoint:${senderParticipantId.trim().toLowerCase()}`;
  const tax = seller?.taxIds?.find((x) => x.value && x.value.trim());
  if (tax) return `tax:${compactId(tax.value)}`;
  const reg = seller?.registrationNumbers?.find((x) => x.value && x.value.trim());
  if (reg) return `registration:${norm(reg.scheme ?? reg.type)}:${compactId(reg.value)}`;
  const a = seller?.address;
  const name = norm(seller?.name ?? seller?.tradeName);
  const address = [a?.addressLine1, a?.addressLine2, a?.addressLine3, a?.postalCode, a?.city, a?.country].map(norm).join('|');
  if (!name && address.replace(/\|/g, '') === '') return null;
  return `name:${name}|${address}`;
}

/** The stream of the purchases sharing a supplier, a document type and a number. */
export const documentNumberStream = (scope: IdentityScope, supplier: string | null, documentBase: string, documentNumber: string) =>
  `purchasenumber-${scoped(scope, `${supplier ?? '(unknown supplier)'}\n${documentBase}\n${documentNumber.trim()}`)}`;

export const PurchaseIdentityClaimed = defineEvent({
  type: 'PurchaseIdentityClaimed',
  version: 1,
  codec: t.type({ documentId: t.string, key: t.string }),
});

export const PurchaseNumberUsed = defineEvent({
  type: 'PurchaseNumberUsed',
  version: 1,
  codec: t.type({ documentId: t.string, supplier: t.union([t.string, t.null]), documentBase: t.string, documentNumber: t.string }),
});

type ClaimEvent = DomainEvent<'PurchaseIdentityClaimed', t.TypeOf<typeof PurchaseIdentityClaimed.codec>>;
type NumberEvent = DomainEvent<'PurchaseNumberUsed', t.TypeOf<typeof PurchaseNumberUsed.codec>>;

/** An identity key's stream: the purchase holding the key, or null while it is free. */
export const purchaseIdentityDecider: Decider<{ type: 'Claim'; documentId: string; key: string }, { documentId: string | null }, ClaimEvent> = {
  category: 'purchaseid',
  initialState: { documentId: null },
  events: { PurchaseIdentityClaimed },
  decide(command, s) {
    if (s.documentId !== null) return [];
    return [{ type: 'PurchaseIdentityClaimed', data: { documentId: command.documentId, key: command.key } }];
  },
  evolve(s, e) {
    return s.documentId === null ? { documentId: e.data.documentId } : s;
  },
};
registerDecider(purchaseIdentityDecider);

/** A (supplier, type, number) stream: the purchases stored under it, oldest first. */
export const purchaseNumberDecider: Decider<
  { type: 'Use'; documentId: string; supplier: string | null; documentBase: string; documentNumber: string },
  { documentIds: string[] },
  NumberEvent
> = {
  category: 'purchasenumber',
  initialState: { documentIds: [] },
  events: { PurchaseNumberUsed },
  decide(c, s) {
    if (s.documentIds.includes(c.documentId)) return [];
    return [{ type: 'PurchaseNumberUsed', data: { documentId: c.documentId, supplier: c.supplier, documentBase: c.documentBase, documentNumber: c.documentNumber } }];
  },
  evolve(s, e) {
    return { documentIds: [...s.documentIds, e.data.documentId] };
  },
};
registerDecider(purchaseNumberDecider);

/** What the log says about a document about to be stored. */
export interface ReceiptFacts {
  /** For each identity key, the purchase already holding it, or null. */
  claims: readonly { key: string; documentId: string | null }[];
  /** The purchases already stored under the same supplier, type and number, oldest first. */
  sameNumber: readonly string[];
}

export type ReceiptDecision = { kind: 'duplicate'; documentId: string; key: string } | { kind: 'store'; probableResendOf: string[] };

/**
 * A document whose identity key is already held is that purchase (a duplicate, nothing is
 * written); otherwise it is a new purchase, flagged as a probable re-send of the purchases that
 * share its supplier, type and number.
 */
export function decideReceipt(documentId: string, facts: ReceiptFacts): ReceiptDecision {
  const held = facts.claims.find((c) => c.documentId !== null);
  if (held) return { kind: 'duplicate', documentId: held.documentId!, key: held.key };
  return { kind: 'store', probableResendOf: facts.sameNumber.filter((id) => id !== documentId) };
}
