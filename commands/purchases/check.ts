/**
 * The content checks of a received document, before anything is stored (the first half of
 * `receivePurchaseDocument` in ./import.ts): size, UTF-8, well-formedness and the prolog, the UBL
 * root, the UBL 2.1 schemas and a document number. No I/O beyond the schema files, so that the
 * AS4 endpoint can run it off the main thread (commands/peppol/as4/receive-worker.ts). The UBL
 * is parsed once for the root check and the reading (`parseUbl`), and once by the schema check.
 */
import { parseUbl, readUbl, screenXml, UblRefusal, type ReadUbl, type UblRoot } from '../../domain/purchases/ubl-reader.js';
import { ublSchemaErrors } from './xsd.js';

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
}

/**
 * Checks a received document's bytes: at most `maxXmlBytes`, UTF-8, well-formed, no DOCTYPE, a
 * UBL 2.1 Invoice or CreditNote valid against the UBL 2.1 schemas, with a number. Throws
 * ImportRefused.
 */
export async function checkReceivedDocument(bytes: Uint8Array, maxXmlBytes: number): Promise<CheckedDocument> {
  try {
    const xml = screenXml(bytes, maxXmlBytes);
    const ubl = parseUbl(xml);
    const errors = await ublSchemaErrors(xml, ubl.root);
    if (errors.length > 0) {
      const more = errors.length > 1 ? ` (and ${errors.length - 1} more)` : '';
      throw new UblRefusal('XML_SCHEMA_INVALID', `the ${ubl.root} fails the UBL 2.1 schema: ${errors[0]}${more}`);
    }
    return { bytes, root: ubl.root, parsed: readUbl(ubl) };
  } catch (err) {
    if (err instanceof UblRefusal) throw new ImportRefused(err.code, err.message);
    throw err;
  }
}
