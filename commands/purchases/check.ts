/**
 * The content checks of a received document, before anything is stored (the first half of
 * `receivePurchaseDocument` in ./import.ts): size, UTF-8, well-formedness and the prolog, the UBL
 * root, the UBL 2.1 schemas and a document number. No I/O beyond the schema files, so that the
 * AS4 endpoint can run it off the main thread (commands/peppol/as4/receive-worker.ts). The UBL
 * is parsed once for the root check and the reading (`parseUbl`), and once by the schema check.
 */
import type { UblRoutingValues } from '../../domain/peppol/identifiers.js';
import { parseUbl, readUbl, screenXml, UblRefusal, ublRoutingValuesOf, type ReadUbl, type UblRoot } from '../../domain/purchases/ubl-reader.js';
import { loadUblSchemaChecker, ublSchemaErrorsNow } from './xsd.js';

/** Why a document is refused (one line; nothing was stored). */
export class ImportRefused extends Error {
  override readonly name = 'ImportRefused';
  constructor(readonly code: string, message: string) {
    super(message);
  }
}

/** A document that passed every check of its content (the first half of `receivePurchaseDocument`). */
export interface CheckedDocument {
  readonly bytes: Uint8Array;
  readonly root: UblRoot;
  readonly parsed: ReadUbl;
  /**
   * What an access point routes it by, read from the same parse (valid against the UBL 2.1
   * schemas, so the same values as `peppolIdentifiersOf`'s reading; ubl-reader.ts
   * `ublRoutingValuesOf`); null when they cannot be taken from it.
   */
  readonly routing: UblRoutingValues | null;
}

/**
 * Checks a received document's bytes: at most `maxXmlBytes`, UTF-8, well-formed, no DOCTYPE, a
 * UBL 2.1 Invoice or CreditNote valid against the UBL 2.1 schemas, with a number. Throws
 * ImportRefused.
 */
export async function checkReceivedDocument(bytes: Uint8Array, maxXmlBytes: number): Promise<CheckedDocument> {
  await loadUblSchemaChecker();
  return checkReceivedDocumentNow(bytes, maxXmlBytes);
}

/** `checkReceivedDocument` on the calling turn: the schema checker must be loaded (`loadUblSchemaChecker`). */
export function checkReceivedDocumentNow(bytes: Uint8Array, maxXmlBytes: number): CheckedDocument {
  try {
    const xml = screenXml(bytes, maxXmlBytes);
    const ubl = parseUbl(xml);
    // libxml2 reads the UTF-8 bytes as they are (screenXml proved them UTF-8 and declared so).
    const errors = ublSchemaErrorsNow(bytes, ubl.root);
    if (errors.length > 0) {
      const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
      throw new UblRefusal('XML_SCHEMA_INVALID', `the ${ubl.root} fails the UBL 2.1 schema: ${errors[0]}${more}`);
    }
    // peppolIdentifiersOf refuses any text with `<!DOCTYPE` in it, even in a comment: no values then.
    return { bytes, root: ubl.root, parsed: readUbl(ubl), routing: /<!DOCTYPE/i.test(xml) ? null : ublRoutingValuesOf(ubl) };
  } catch (err) {
    if (err instanceof UblRefusal) throw new ImportRefused(err.code, err.message);
    throw err;
  }
}
