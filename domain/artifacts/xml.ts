/**
 * Thin helpers over ltx's element tree shared by the UBL generators: namespaces, "write this
 * element only when it has a value", amounts with their currency, and serialization.
 *
 * The generators build the document as a tree of ltx `Element`s (name, attributes, children: other
 * elements or text), so elements and attributes are written in the order they are appended (the UBL
 * XSD sequences depend on it); a leaf is an element with one text child. ltx writes the markup and
 * does all the escaping (`Element#toString`; not ltx's pretty-printing `stringify`, which writes an
 * element's only text child unescaped); this module only prepares the values, closes empty
 * elements (see `closeEmptyElements`), restores the literal apostrophes of attribute values (see
 * `build`) and writes the fixed XML declaration before the root, as ltx has no declaration node.
 * (ltx replaced fast-xml-parser's XMLBuilder, whose ordered-tree walk with its per-node path
 * tracking cost several times as much for the same output.)
 *
 * The serialization is also the canonical (C14N 1.0) form of the document without its XML
 * declaration, which the ZATCA invoice hash relies on (see `serializeHeadless`):
 * - namespace declarations in canonical order (default namespace, then prefixes alphabetically);
 *   other attributes in the order written (the ZATCA elements carry at most one each);
 * - empty elements as start-end tag pairs, no pretty-printing;
 * - text: `&`, `<`, `>` escaped, quotes literal, line breaks normalized to LF;
 * - attributes: `&`, `<`, `"` escaped, `'` literal, tabs and line breaks normalized to spaces and
 *   `>` dropped (see `attrValue`).
 */
import { Element } from 'ltx';
import { formatAmount } from './normalize.js';

/**
 * An element (or the document, see `newXmlDocument`): what the generators append to. Opaque to
 * them: only this module's helpers read or write it.
 */
export type XmlNode = Element & { readonly __xmlNode?: never };

export const UBL_NS = {
  invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  creditNote: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
  ext: 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2',
} as const;

export type UblRoot = 'Invoice' | 'CreditNote';

const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';
/** The name of the element that holds a document's top-level nodes; never serialized itself. */
const DOCUMENT = '#document';

/** A new XML document (serialized with the UTF-8 declaration, see `serialize`). */
export function newXmlDocument(): XmlNode {
  return new Element(DOCUMENT);
}

function element(parent: XmlNode, name: string, attrs: Attrs | undefined): XmlNode {
  const el = new Element(name);
  if (attrs) setAttrs(el, attrs);
  return parent.cnode(el);
}

/**
 * Appends a UBL root element. The namespace declarations are written in canonical (C14N) order:
 * the default namespace first, then the prefixes alphabetically, which the ZATCA hash relies on.
 * Inside an envelope that already declares the cac and cbc prefixes (`prefixesInScope`), only the
 * default namespace is declared: a redundant declaration is not repeated.
 */
export function ublRoot(parent: XmlNode, root: UblRoot, prefixesInScope = false): XmlNode {
  const xmlns = root === 'Invoice' ? UBL_NS.invoice : UBL_NS.creditNote;
  return element(parent, root, prefixesInScope ? { xmlns } : { xmlns, 'xmlns:cac': UBL_NS.cac, 'xmlns:cbc': UBL_NS.cbc });
}

export type Attrs = Record<string, string | undefined>;

// XML 1.0 forbids most C0 controls and U+FFFE/U+FFFF; payload text is cleaned before it is written.
// eslint-disable-next-line no-control-regex
const INVALID_XML_CHARS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;
const ATTR_WHITESPACE = /[\t\n\r]/g;
const GREATER_THAN = />/g;
const CR_LINE_BREAK = /\r\n?/g;
const APOSTROPHE = "'";
const EMPTY_TEXT = '';

/**
 * Attribute values (codes, schemes, currencies) are written as an XML parser will read them back:
 * tabs and line breaks become spaces (attribute-value normalization) and ">" is dropped (it never
 * belongs in a code, and ltx would escape it as `&gt;` where canonical XML does not). The serialized
 * form is then also the canonical one, which the ZATCA invoice hash relies on.
 */
function attrValue(v: string): string {
  if (!attrNeedsCleaning(v)) return v;
  return v.replace(INVALID_XML_CHARS, '').replace(ATTR_WHITESPACE, ' ').replace(GREATER_THAN, '');
}

/** Text is written with its line breaks normalized to LF, as an XML parser reads them back. */
function textValue(v: string): string {
  if (!textNeedsCleaning(v)) return v;
  return v.replace(INVALID_XML_CHARS, '').replace(CR_LINE_BREAK, '\n');
}

// The checks below run on every value written. A loop over the (short) values is several times
// cheaper than a regular expression test here.

/** Whether `attrValue` changes `v`: a C0 control (tab and line breaks included), `>`, U+FFFE or U+FFFF. */
function attrNeedsCleaning(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c === 0x3e || c >= 0xfffe) return true;
  }
  return false;
}

/** Whether `textValue` changes `v`: a C0 control other than tab and LF (so CR too), U+FFFE or U+FFFF. */
function textNeedsCleaning(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 ? c !== 0x09 && c !== 0x0a : c >= 0xfffe) return true;
  }
  return false;
}

/** Sets the attributes that have a value (a non-empty string), cleaned, in the order given. */
function setAttrs(el: Element, attrs: Attrs): void {
  const out = el.attrs;
  for (const key in attrs) {
    const v = attrs[key];
    if (v !== undefined && v !== '') out[key] = attrValue(v);
  }
}

/** Appends `<name attrs>value</name>` when `value` is a non-empty string or a number; otherwise nothing. */
export function leaf(parent: XmlNode, name: string, value: string | number | undefined | null, attrs?: Attrs): void {
  if (value === undefined || value === null) return;
  const text = textValue(typeof value === 'number' ? String(value) : value.trim());
  if (text === '') return;
  const el = new Element(name);
  if (attrs) setAttrs(el, attrs);
  el.children = [text];
  parent.cnode(el);
}

/** Appends an aggregate element and returns it. */
export function branch(parent: XmlNode, name: string, attrs?: Attrs): XmlNode {
  return element(parent, name, attrs);
}

/**
 * Inserts an aggregate element right after `sibling` (an element `branch` appended to `parent`)
 * and returns it.
 */
export function branchAfter(parent: XmlNode, sibling: XmlNode, name: string, attrs?: Attrs): XmlNode {
  const siblings = parent.children;
  const index = siblings.indexOf(sibling);
  if (index < 0) throw new Error(`branchAfter: the sibling of ${name} is not a child of the parent`);
  const el = element(parent, name, attrs);
  siblings.pop();
  siblings.splice(index + 1, 0, el);
  return el;
}

/** Appends an amount with 2 decimals and its `currencyID` when `value` is defined. */
export function amount(parent: XmlNode, name: string, value: number | undefined, currency: string): void {
  if (value === undefined || !Number.isFinite(value)) return;
  const el = new Element(name);
  el.attrs['currencyID'] = attrValue(currency);
  el.children = [formatAmount(value)];
  parent.cnode(el);
}

/**
 * ltx writes an element without children as an empty-element tag (`<a/>`); canonical XML writes a
 * start-end tag pair, which an empty text child gives (`<a></a>`). Added before serializing, to the
 * (few) aggregates that stayed empty; it writes nothing, so children appended after a first
 * serialization (ZATCA's QR reference) change nothing else.
 */
function closeEmptyElements(el: Element): void {
  const children = el.children;
  if (children.length === 0) {
    children.push(EMPTY_TEXT);
    return;
  }
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!;
    if (typeof child !== 'string') closeEmptyElements(child);
  }
}

/**
 * ltx writes every `'` of an attribute value as `&apos;` (and `"` as `&quot;`); canonical XML
 * writes the apostrophe literally, and the ZATCA hash is taken over this serialization. Undone on
 * the serialized string: ltx writes every `&` of content as `&amp;`, so each `&apos;` in the output
 * is one it wrote for an apostrophe in an attribute value, inside double quotes, where a literal
 * `'` is well-formed. (Text never gets `&apos;`: its apostrophes are written as they are.)
 */
function build(doc: XmlNode, declaration: string): string {
  // The declaration starts the string, so the one flattening of the result (by the check below)
  // copies it once.
  let xml = declaration;
  for (const node of doc.children) {
    if (typeof node === 'string') continue;
    closeEmptyElements(node);
    xml += node.toString();
  }
  return xml.includes('&apos;') ? xml.replaceAll('&apos;', APOSTROPHE) : xml;
}

/**
 * The serialized document: compact (no pretty-printing), with the XML declaration. Empty elements
 * are written as start-end tag pairs, as canonical XML writes them.
 */
export function serialize(doc: XmlNode): string {
  return build(doc, DECLARATION);
}

/** The serialized document without the XML declaration: its canonical (C14N) form here. */
export function serializeHeadless(doc: XmlNode): string {
  return build(doc, '');
}

export function toBase64(xml: string): string {
  return Buffer.from(xml, 'utf8').toString('base64');
}
