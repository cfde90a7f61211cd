/**
 * Checking a received UBL document against the OASIS UBL 2.1 schemas shipped beside this file,
 * with xmllint-wasm (libxml2 compiled to WebAssembly: no network access, `--nonet` besides).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import pLimit from 'p-limit';
import { memoryPages, validateXML, type XMLFileInfo } from 'xmllint-wasm';
import type { UblRoot } from '../../domain/purchases/ubl-reader.js';

/** The one copy of the schemas in the project (the tests validate generated XML against it too). */
export const XSD_DIR = fileURLToPath(new URL('./ubl-2.1-xsd/', import.meta.url));

let common: XMLFileInfo[] | undefined;
/** The main documents checked here: the received Invoice and CreditNote, the Invoice Response sent. */
export type SchemaRoot = UblRoot | 'ApplicationResponse';
const mains = new Map<SchemaRoot, XMLFileInfo>();

function schemasFor(root: SchemaRoot): { main: XMLFileInfo; common: XMLFileInfo[] } {
  common ??= readdirSync(`${XSD_DIR}common`)
    .filter((f) => f.endsWith('.xsd'))
    .map((f) => ({ fileName: `common/${f}`, contents: readFileSync(`${XSD_DIR}common/${f}`, 'utf8') }));
  let main = mains.get(root);
  if (!main) {
    const fileName = `maindoc/UBL-${root}-2.1.xsd`;
    main = { fileName, contents: readFileSync(`${XSD_DIR}${fileName}`, 'utf8') };
    mains.set(root, main);
  }
  return { main, common };
}

/**
 * Validations run at once in this process. Each runs in a worker thread of its own with its own
 * WebAssembly memory (about 25 MB for a small invoice, 75-90 MB at the peak for a 10 MB one:
 * docs/purchases.md), so more receivers at once wait here rather than multiply that memory.
 */
export const XSD_CONCURRENCY = 2;
const limit = pLimit(XSD_CONCURRENCY);

/** The schema errors of `xml` (empty when valid), each as one line. */
export async function ublSchemaErrors(xml: string, root: SchemaRoot): Promise<string[]> {
  return limit(() => validate(xml, root));
}

async function validate(xml: string, root: SchemaRoot): Promise<string[]> {
  const { main, common: preload } = schemasFor(root);
  const result = await validateXML({
    xml: [{ fileName: 'received.xml', contents: xml }],
    schema: [main],
    preload,
    initialMemoryPages: 64 * memoryPages.MiB,
    maxMemoryPages: 1024 * memoryPages.MiB,
    // --huge (XML_PARSE_HUGE): libxml2 otherwise refuses a text node or a comment over 10,000,000
    // bytes, such as an embedded PDF in cac:AdditionalDocumentReference. The document was
    // already held to the byte limit, and the WebAssembly memory is capped (maxMemoryPages), so
    // lifting the parser's own limit bounds nothing less.
    modifyArguments: (args) => ['--nonet', '--huge', ...args],
  });
  if (result.valid) return [];
  const errors = result.errors.map((e) => e.message.replace(/\s+/g, ' ').trim()).filter((m) => m !== '');
  return errors.length ? errors : [result.rawOutput.replace(/\s+/g, ' ').trim() || 'the document fails the UBL 2.1 schema'];
}
