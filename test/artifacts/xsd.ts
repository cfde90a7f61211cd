/**
 * XSD validation with xmllint-wasm (libxml2 compiled to WebAssembly): the OASIS UBL 2.1 schemas
 * (the runtime copy the UBL import checks against, commands/purchases/ubl-2.1-xsd), loaded as the main schema plus every
 * common/*.xsd as preloaded files under
 * the same relative paths, so the `../common/...` imports resolve in xmllint's in-memory file system.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { validateXML, memoryPages, type XMLFileInfo } from 'xmllint-wasm';
import { XSD_DIR } from '../../commands/purchases/xsd.js';

export const UBL_XSD_DIR = XSD_DIR;

let common: XMLFileInfo[] | undefined;

/** Every schema of common/ as a preload entry. */
export function commonSchemas(): XMLFileInfo[] {
  common ??= readdirSync(`${UBL_XSD_DIR}common`)
    .filter((f) => f.endsWith('.xsd'))
    .map((f) => ({ fileName: `common/${f}`, contents: readFileSync(`${UBL_XSD_DIR}common/${f}`, 'utf8') }));
  return common;
}

export function mainSchema(name: 'Invoice' | 'CreditNote'): XMLFileInfo {
  const fileName = `maindoc/UBL-${name}-2.1.xsd`;
  return { fileName, contents: readFileSync(`${UBL_XSD_DIR}${fileName}`, 'utf8') };
}

export interface XsdResult {
  valid: boolean;
  errors: string[];
}

/**
 * Validates many documents against one schema in a single xmllint run (the per-run start-up is
 * the dominant cost). Returns the errors per document name.
 */
export async function validateAgainst(
  schema: XMLFileInfo,
  docs: ReadonlyArray<{ name: string; xml: string }>,
  extraPreload: XMLFileInfo[] = [],
): Promise<Map<string, XsdResult>> {
  const out = new Map<string, XsdResult>();
  const batchSize = 400;
  for (let i = 0; i < docs.length; i += batchSize) {
    const batch = docs.slice(i, i + batchSize);
    const result = await validateXML({
      xml: batch.map((d) => ({ fileName: `${d.name}.xml`, contents: d.xml })),
      schema: [schema],
      preload: [...commonSchemas(), ...extraPreload],
      initialMemoryPages: 64 * memoryPages.MiB,
      maxMemoryPages: 512 * memoryPages.MiB,
    });
    for (const d of batch) out.set(d.name, { valid: true, errors: [] });
    for (const e of result.errors) {
      const name = (e.loc?.fileName ?? /^(\S+?\.xml) fails to validate/.exec(e.rawMessage.trim())?.[1])?.replace(/\.xml$/, '');
      const entry = name ? out.get(name) : undefined;
      if (entry) {
        entry.valid = false;
        entry.errors.push(e.message);
      } else if (!/validates$/.test(e.rawMessage.trim()) && e.rawMessage.trim() !== '') {
        // An error not tied to one document (schema problem): fail every document of the batch.
        for (const d of batch) {
          const r = out.get(d.name)!;
          r.valid = false;
          r.errors.push(e.rawMessage);
        }
      }
    }
    if (!result.valid && result.errors.length === 0) {
      for (const d of batch) {
        const r = out.get(d.name)!;
        r.valid = false;
        r.errors.push(result.rawOutput);
      }
    }
  }
  return out;
}

/** libxml2's canonical XML (C14N 1.0) of a document. */
export async function canonicalize(xml: string): Promise<string> {
  const result = await validateXML({ xml: [{ fileName: 'c14n.xml', contents: xml }], normalization: 'c14n' });
  return result.normalized;
}
