/**
 * Thin helpers over xmlbuilder2 shared by the UBL generators: namespaces, "write this element only
 * when it has a value", amounts with their currency, and serialization. The XML itself is always
 * built and escaped by xmlbuilder2.
 */
import { create } from 'xmlbuilder2';
import { formatAmount } from './normalize.js';

export type XmlNode = ReturnType<typeof create>;

export const UBL_NS = {
  invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  creditNote: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
  ext: 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2',
} as const;

export type UblRoot = 'Invoice' | 'CreditNote';

/** A new XML document with the UTF-8 declaration. */
export function newXmlDocument(): XmlNode {
  return create({ version: '1.0', encoding: 'UTF-8' });
}

/**
 * Appends a UBL root element. The namespace declarations are written in canonical (C14N) order:
 * the default namespace first, then the prefixes alphabetically, which the ZATCA hash relies on.
 */
export function ublRoot(parent: XmlNode, root: UblRoot): XmlNode {
  return parent.ele(root, {
    xmlns: root === 'Invoice' ? UBL_NS.invoice : UBL_NS.creditNote,
    'xmlns:cac': UBL_NS.cac,
    'xmlns:cbc': UBL_NS.cbc,
  });
}

export type Attrs = Record<string, string | undefined>;

// XML 1.0 forbids most C0 controls and U+FFFE/U+FFFF; payload text is cleaned before it is written.
// eslint-disable-next-line no-control-regex
const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/**
 * Attribute values (codes, schemes, currencies) are written as an XML parser will read them back:
 * tabs and line breaks become spaces (attribute-value normalization) and ">" is dropped (it never
 * belongs in a code, and xmlbuilder2 would escape it where canonical XML does not). The serialized
 * form is then also the canonical one, which the ZATCA invoice hash relies on.
 */
function attrValue(v: string): string {
  return v.replace(INVALID_XML_CHARS, '').replace(/[\t\n\r]/g, ' ').replace(/>/g, '');
}

/** Text is written with its line breaks normalized to LF, as an XML parser reads them back. */
function textValue(v: string): string {
  return v.replace(INVALID_XML_CHARS, '').replace(/\r\n?/g, '\n');
}

function cleanAttrs(attrs: Attrs): Record<string, string> | undefined {
  let out: Record<string, string> | undefined;
  for (const key in attrs) {
    const v = attrs[key];
    if (v !== undefined && v !== '') (out ??= {})[key] = attrValue(v);
  }
  return out;
}

/** Appends `<name attrs>value</name>` when `value` is a non-empty string or a number; otherwise nothing. */
export function leaf(parent: XmlNode, name: string, value: string | number | undefined | null, attrs?: Attrs): void {
  if (value === undefined || value === null) return;
  const text = textValue(typeof value === 'number' ? String(value) : value.trim());
  if (text === '') return;
  const a = attrs ? cleanAttrs(attrs) : undefined;
  (a ? parent.ele(name, a) : parent.ele(name)).txt(text);
}

/** Appends an aggregate element and returns it. */
export function branch(parent: XmlNode, name: string, attrs?: Attrs): XmlNode {
  const a = attrs ? cleanAttrs(attrs) : undefined;
  return a ? parent.ele(name, a) : parent.ele(name);
}

/** Appends an amount with 2 decimals and its `currencyID` when `value` is defined. */
export function amount(parent: XmlNode, name: string, value: number | undefined, currency: string): void {
  if (value === undefined || !Number.isFinite(value)) return;
  parent.ele(name, { currencyID: attrValue(currency) }).txt(formatAmount(value));
}

/**
 * The serialized document: compact (no pretty-printing), with the XML declaration. Empty elements
 * are written as start-end tag pairs, as canonical XML writes them.
 */
export function serialize(doc: XmlNode): string {
  return doc.end({ prettyPrint: false, allowEmptyTags: true });
}

/** The serialized document without the XML declaration: its canonical (C14N) form here. */
export function serializeHeadless(doc: XmlNode): string {
  return doc.end({ prettyPrint: false, allowEmptyTags: true, headless: true });
}

export function toBase64(xml: string): string {
  return Buffer.from(xml, 'utf8').toString('base64');
}
