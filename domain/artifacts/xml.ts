/**
 * The small XML writer the UBL generators share: namespaces, "write this element only when it has
 * a value", amounts with their currency, and serialization.
 *
 * The generators build the document as a tree of aggregates, so elements and attributes are
 * written in the order they are appended (the UBL XSD sequences depend on it) and an aggregate can
 * still get children after it was created, or a sibling inserted after it (ZATCA's QR reference,
 * added after the hash was taken over a first serialization). A leaf (an element with only text)
 * never changes once written, so it is kept as its finished markup: most of a document is leaves,
 * and serializing then only joins strings. (This replaced a general element tree, ltx, whose
 * serializer walked and escaped every node on every serialization: about half of the generation
 * time of a 20-line invoice; the output is byte for byte the same.)
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
import { formatAmount } from './normalize.js';

interface Aggregate {
  /** The start tag without its closing `>`: `<name attr="value"`. */
  readonly open: string;
  readonly name: string;
  /** Aggregates, and leaves as their finished markup. */
  readonly children: (Aggregate | string)[];
}

/**
 * An aggregate element (or the document, see `newXmlDocument`): what the generators append to.
 * Opaque to them: only this module's helpers read or write it.
 */
export type XmlNode = Aggregate & { readonly __xmlNode?: never };

export const UBL_NS = {
  invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  creditNote: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
  ext: 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2',
} as const;

export type UblRoot = 'Invoice' | 'CreditNote';

export const DECLARATION = '<?xml version="1.0" encoding="UTF-8"?>';

/** A new XML document (serialized with the UTF-8 declaration, see `serialize`): its top-level elements. */
export function newXmlDocument(): XmlNode {
  return { open: '', name: '', children: [] };
}

function element(parent: XmlNode, name: string, attrs: Attrs | undefined): XmlNode {
  const el: XmlNode = { open: attrs ? `<${name}${attributes(attrs)}` : `<${name}`, name, children: [] };
  parent.children.push(el);
  return el;
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
const TEXT_ESCAPES = /[&<>]/g;
const ATTR_ESCAPES = /[&<"]/g;
const ESCAPED: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const escapeChar = (c: string): string => ESCAPED[c]!;

/**
 * An attribute value (a code, scheme, currency) as written inside double quotes. It is written as an
 * XML parser will read it back: tabs and line breaks become spaces (attribute-value normalization)
 * and ">" is dropped (it never belongs in a code, and canonical XML would write it literally where
 * other serializers escape it); then `&`, `<` and `"` are escaped, and `'` is written as it is. The
 * serialized form is then also the canonical one, which the ZATCA invoice hash relies on.
 */
function attrValue(v: string): string {
  if (!attrNeedsWork(v)) return v;
  return v.replace(INVALID_XML_CHARS, '').replace(ATTR_WHITESPACE, ' ').replace(GREATER_THAN, '').replace(ATTR_ESCAPES, escapeChar);
}

/** Text as an XML parser reads it back: invalid characters dropped, line breaks normalized to LF (not yet escaped). */
function textValue(v: string): string {
  if (!textNeedsCleaning(v)) return v;
  return v.replace(INVALID_XML_CHARS, '').replace(CR_LINE_BREAK, '\n');
}

/** Cleaned text (see `textValue`) as written between tags: `&`, `<` and `>` escaped, quotes literal. */
function escapeText(text: string): string {
  return textNeedsEscaping(text) ? text.replace(TEXT_ESCAPES, escapeChar) : text;
}

// The checks below run on every value written. A loop over the (short) values is several times
// cheaper than a regular expression test here.

/** Whether `attrValue` changes `v`: a C0 control (tab and line breaks included), `>`, U+FFFE or U+FFFF, or `&`, `<`, `"`. */
function attrNeedsWork(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c < 0x20 || c === 0x3e || c >= 0xfffe || c === 0x26 || c === 0x3c || c === 0x22) return true;
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

/** Whether `escapeText` changes `v`: a `&`, `<` or `>`. */
function textNeedsEscaping(v: string): boolean {
  for (let i = 0; i < v.length; i++) {
    const c = v.charCodeAt(i);
    if (c === 0x26 || c === 0x3c || c === 0x3e) return true;
  }
  return false;
}

/** The attributes that have a value (a non-empty string), cleaned and escaped, in the order given: ` a="x" b="y"`. */
function attributes(attrs: Attrs): string {
  let out = '';
  for (const key in attrs) {
    const v = attrs[key];
    if (v !== undefined && v !== '') out += ` ${key}="${attrValue(v)}"`;
  }
  return out;
}

/** Appends `<name attrs>value</name>` when `value` is a non-empty string or a number; otherwise nothing. */
export function leaf(parent: XmlNode, name: string, value: string | number | undefined | null, attrs?: Attrs): void {
  if (value === undefined || value === null) return;
  const text = textValue(typeof value === 'number' ? String(value) : value.trim());
  if (text === '') return;
  parent.children.push(`<${name}${attrs ? attributes(attrs) : ''}>${escapeText(text)}</${name}>`);
}

/**
 * Inserts finished markup (well-formed, canonical, written as given) as the `index`-th child of
 * `parent`: the ZATCA stamp, whose signed properties are hashed as written.
 */
export function insertMarkup(parent: XmlNode, index: number, markup: string): void {
  parent.children.splice(index, 0, markup);
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

/**
 * Appends an amount with 2 decimals and its `currencyID` when `value` is defined (the attribute is
 * written even when the currency is empty). A formatted amount is digits, a sign and a point:
 * nothing to escape.
 */
export function amount(parent: XmlNode, name: string, value: number | undefined, currency: string): void {
  if (value === undefined || !Number.isFinite(value)) return;
  parent.children.push(`<${name} currencyID="${attrValue(currency)}">${formatAmount(value)}</${name}>`);
}

/** An aggregate's markup; one without children is written as a start-end tag pair, as canonical XML writes it. */
function write(el: Aggregate): string {
  let xml = `${el.open}>`;
  const children = el.children;
  for (let i = 0; i < children.length; i++) {
    const child = children[i]!;
    xml += typeof child === 'string' ? child : write(child);
  }
  return `${xml}</${el.name}>`;
}

function build(doc: XmlNode, declaration: string): string {
  let xml = declaration;
  for (const node of doc.children) xml += typeof node === 'string' ? node : write(node);
  return xml;
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

/**
 * A generated document: its text, its UTF-8 bytes (what is stored, hashed and sent), and their
 * base64 only when asked (the Unify answer's Base64XML): a document stored or sent as bytes is
 * never encoded to base64 and decoded back.
 */
export interface XmlOutput {
  readonly xml: string;
  readonly bytes: Buffer;
  readonly base64: string;
}

/** A generated document made as bytes: its text only when asked. */
export function xmlOutputOfBytes(bytes: Buffer): XmlOutput {
  let xml: string | undefined;
  let base64: string | undefined;
  return {
    get xml() {
      return (xml ??= bytes.toString('utf8'));
    },
    bytes,
    get base64() {
      return (base64 ??= bytes.toString('base64'));
    },
  };
}

export function xmlOutput(xml: string): XmlOutput {
  const bytes = Buffer.from(xml, 'utf8');
  let base64: string | undefined;
  return {
    xml,
    bytes,
    get base64() {
      return (base64 ??= bytes.toString('base64'));
    },
  };
}
