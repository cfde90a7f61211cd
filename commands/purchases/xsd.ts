/**
 * Checking a received UBL document against the OASIS UBL 2.1 schemas shipped beside this file,
 * with libxml2-wasm (libxml2 compiled to WebAssembly). Each root's schema (the main document
 * schema and the common schemas it imports) is compiled once per process, on first use, and kept:
 * a check is then a parse and a validation of the received document alone, a few milliseconds for
 * an ordinary invoice. Only the schema files of this folder can be read while compiling (no
 * network, no other file); the received document is parsed without network access, and without
 * DTD or entity loading (a DOCTYPE was refused before, see ubl-reader.ts).
 */
import { openSync, readSync, closeSync } from 'node:fs';
import { resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { XmlDocument, XsdValidator } from 'libxml2-wasm';
import type { UblRoot } from '../../domain/purchases/ubl-reader.js';

/**
 * libxml2-wasm instantiates its WebAssembly module with a top-level await: it is imported on the
 * first check, so that modules loaded through require() (the test hooks, the CLI) can still load
 * this one.
 */
type Libxml2 = typeof import('libxml2-wasm');
let libxml2: Promise<Libxml2> | undefined;
const loadLibxml2 = (): Promise<Libxml2> => (libxml2 ??= import('libxml2-wasm'));

/** The one copy of the schemas in the project (the tests validate generated XML against it too). */
export const XSD_DIR = fileURLToPath(new URL('./ubl-2.1-xsd/', import.meta.url));

/** A path inside XSD_DIR for a file name or file: URL libxml2 asks for, else null. */
function schemaFile(name: string): string | null {
  let path: string;
  try {
    const url = new URL(name);
    if (url.protocol !== 'file:') return null;
    path = fileURLToPath(url);
  } catch {
    path = name;
  }
  const full = resolve(path);
  return full.startsWith(resolve(XSD_DIR) + sep) ? full : null;
}

let providerRegistered = false;
/** libxml2 reads the schema files (xsd:import) through this provider: XSD_DIR only. */
function registerSchemaProvider(lib: Libxml2): void {
  if (providerRegistered) return;
  providerRegistered = lib.xmlRegisterInputProvider({
    match: (name) => schemaFile(name) !== null,
    open: (name) => {
      const file = schemaFile(name);
      try {
        return file ? openSync(file, 'r') : undefined;
      } catch {
        return undefined;
      }
    },
    read: (fd, buf) => readSync(fd, buf, 0, buf.byteLength, null),
    close: (fd) => {
      closeSync(fd);
      return true;
    },
  });
}

/** The main documents checked here: the received Invoice and CreditNote, the Invoice Response sent. */
export type SchemaRoot = UblRoot | 'ApplicationResponse';
const validators = new Map<SchemaRoot, XsdValidator>();

function validatorFor(lib: Libxml2, root: SchemaRoot): XsdValidator {
  let validator = validators.get(root);
  if (!validator) {
    registerSchemaProvider(lib);
    const path = `${XSD_DIR}maindoc/UBL-${root}-2.1.xsd`;
    const schema = lib.XmlDocument.fromBuffer(readFile(path), { url: path, option: lib.ParseOption.XML_PARSE_NONET });
    try {
      validator = lib.XsdValidator.fromDoc(schema);
    } finally {
      schema.dispose();
    }
    validators.set(root, validator);
  }
  return validator;
}

function readFile(path: string): Uint8Array {
  const fd = openSync(path, 'r');
  try {
    const chunks: Buffer[] = [];
    const buf = Buffer.alloc(1 << 16);
    for (let n = readSync(fd, buf); n > 0; n = readSync(fd, buf)) chunks.push(Buffer.from(buf.subarray(0, n)));
    return Buffer.concat(chunks);
  } finally {
    closeSync(fd);
  }
}

/**
 * The received document is parsed without network access and with libxml2's "huge" option: its
 * default caps a single text node or comment at 10,000,000 bytes, such as an embedded PDF in
 * cac:AdditionalDocumentReference. The document was already held to the byte limit, which is
 * what bounds the input.
 */
const documentOptions = (lib: Libxml2) => lib.ParseOption.XML_PARSE_NONET | lib.ParseOption.XML_PARSE_HUGE;

const oneLine = (s: string) => s.replace(/\s+/g, ' ').trim();

/** The schema errors of `xml` (empty when valid), each as one line. */
export async function ublSchemaErrors(xml: string | Uint8Array, root: SchemaRoot): Promise<string[]> {
  return schemaErrorsWith(await loadLibxml2(), xml, root);
}

let loaded: Libxml2 | null = null;
/** Loads the schema checker (once per process); `ublSchemaErrorsNow` needs it loaded. */
export async function loadUblSchemaChecker(): Promise<void> {
  loaded ??= await loadLibxml2();
}

/**
 * `ublSchemaErrors` on the calling turn, for a caller that cannot wait (the checker loaded by
 * `loadUblSchemaChecker` before). UTF-8 bytes are handed to libxml2 as they are; a string is
 * encoded into its memory first (libxml2-wasm's own JavaScript loop).
 */
export function ublSchemaErrorsNow(xml: string | Uint8Array, root: SchemaRoot): string[] {
  if (!loaded) throw new Error('the UBL schema checker is not loaded (loadUblSchemaChecker)');
  return schemaErrorsWith(loaded, xml, root);
}

function schemaErrorsWith(lib: Libxml2, xml: string | Uint8Array, root: SchemaRoot): string[] {
  const validator = validatorFor(lib, root);
  let doc: XmlDocument;
  try {
    doc = typeof xml === 'string' ? lib.XmlDocument.fromString(xml, { option: documentOptions(lib) }) : lib.XmlDocument.fromBuffer(xml, { option: documentOptions(lib) });
  } catch (err) {
    if (err instanceof lib.XmlError) return [oneLine(err.message) || 'the document is not well-formed XML'];
    throw err;
  }
  try {
    validator.validate(doc);
    return [];
  } catch (err) {
    if (!(err instanceof lib.XmlValidateError)) throw err;
    const errors = err.details.map((d) => oneLine(d.line ? `line ${d.line}: ${d.message}` : d.message)).filter((m) => m !== '');
    return errors.length ? errors : [oneLine(err.message) || 'the document fails the UBL 2.1 schema'];
  } finally {
    doc.dispose();
  }
}
