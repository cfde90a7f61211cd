/**
 * Thin helpers over fast-xml-parser's XMLBuilder shared by the UBL generators: namespaces, "write
 * this element only when it has a value", amounts with their currency, and serialization.
 *
 * The generators build the document as XMLBuilder's ordered tree (`preserveOrder: true`): a list of
 * nodes, each `{ [qname]: children, ':@'?: attributes }`, so elements and attributes are written in
 * the order they are appended (the UBL XSD sequences depend on it). A leaf's content is its text as
 * a string, `{ [qname]: 'text' }`, which XMLBuilder writes as the element's (escaped) text, like a
 * `[{ '#text': 'text' }]` child but without a text node to walk. The markup and all escaping are
 * produced by XMLBuilder; this module only prepares the values.
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
import { XMLBuilder, type XmlBuilderOptions } from 'fast-xml-parser';
import { formatAmount } from './normalize.js';

/** Attributes of an element, in the order they are written. */
type XmlAttributes = Record<string, string>;
/** A node of XMLBuilder's ordered tree: an element (children, or text for a leaf) or the XML declaration. */
type OrderedNode = { [name: string]: OrderedNode[] | XmlAttributes | string };

/**
 * An element's children (or the document's top-level nodes): what the generators append to. Opaque
 * to them: only this module's helpers read or write it.
 */
export type XmlNode = OrderedNode[] & { readonly __xmlNode?: never };

export const UBL_NS = {
  invoice: 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
  creditNote: 'urn:oasis:names:specification:ubl:schema:xsd:CreditNote-2',
  cac: 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
  cbc: 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
  ext: 'urn:oasis:names:specification:ubl:schema:xsd:CommonExtensionComponents-2',
} as const;

export type UblRoot = 'Invoice' | 'CreditNote';

const ATTRIBUTES = ':@';
const TEXT = '#text';
const DECLARATION = '?xml';

/**
 * XMLBuilder's entity escaping (`processEntities`), applied by the builder to every text and
 * attribute value. Its default entity list also turns `'` and `"` into `&apos;` and `&quot;` in
 * text, which canonical XML writes literally, so the list is narrowed to `&`, `<` and `>`, as one
 * entry (one pass over each value instead of one per character). The builder still escapes `"`
 * (and `'`, see `build`) in attribute values on its own. `entities` is an option of XMLBuilder
 * (fast-xml-builder's Builder, whose default is the five-entity list) that the typings omit.
 */
const ENTITY: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;' };
const CANONICAL_ENTITIES = [{ regex: /[&<>]/g, val: (c: string) => ENTITY[c]! }];

const BUILDER_OPTIONS: XmlBuilderOptions & { entities: typeof CANONICAL_ENTITIES } = {
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  textNodeName: TEXT,
  format: false,
  suppressEmptyNode: false,
  suppressBooleanAttributes: false,
  processEntities: true,
  entities: CANONICAL_ENTITIES,
};

const builder = new XMLBuilder(BUILDER_OPTIONS);

/** A new XML document with the UTF-8 declaration. */
export function newXmlDocument(): XmlNode {
  return [{ [DECLARATION]: [], [ATTRIBUTES]: { version: '1.0', encoding: 'UTF-8' } }];
}

/** A new element node. (Assigned, not a computed-key literal: several times faster in V8.) */
function elementNode(name: string, content: XmlNode | string, attrs: XmlAttributes | undefined): OrderedNode {
  const node: OrderedNode = {};
  node[name] = content;
  if (attrs) node[ATTRIBUTES] = attrs;
  return node;
}

function element(parent: XmlNode, name: string, attrs: XmlAttributes | undefined): XmlNode {
  const children: XmlNode = [];
  parent.push(elementNode(name, children, attrs));
  return children;
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
/** Anything `attrValue` changes (non-global: used with `test`). */
// eslint-disable-next-line no-control-regex
const ATTR_NEEDS_CLEANING = /[\u0000-\u001F>\uFFFE\uFFFF]/;
/** Anything `textValue` changes (non-global: used with `test`). */
// eslint-disable-next-line no-control-regex
const TEXT_NEEDS_CLEANING = /[\u0000-\u0008\u000B\u000C\r\u000E-\u001F\uFFFE\uFFFF]/;
const ATTR_WHITESPACE = /[\t\n\r]/g;
const GREATER_THAN = />/g;
const CR_LINE_BREAK = /\r\n?/g;
const APOSTROPHE = "'";

/**
 * Attribute values (codes, schemes, currencies) are written as an XML parser will read them back:
 * tabs and line breaks become spaces (attribute-value normalization) and ">" is dropped (it never
 * belongs in a code, and the builder would escape it where canonical XML does not). The serialized
 * form is then also the canonical one, which the ZATCA invoice hash relies on.
 */
function attrValue(v: string): string {
  if (!ATTR_NEEDS_CLEANING.test(v)) return v;
  return v.replace(INVALID_XML_CHARS, '').replace(ATTR_WHITESPACE, ' ').replace(GREATER_THAN, '');
}

/** Text is written with its line breaks normalized to LF, as an XML parser reads them back. */
function textValue(v: string): string {
  if (!TEXT_NEEDS_CLEANING.test(v)) return v;
  return v.replace(INVALID_XML_CHARS, '').replace(CR_LINE_BREAK, '\n');
}

function cleanAttrs(attrs: Attrs): XmlAttributes | undefined {
  let out: XmlAttributes | undefined;
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
  parent.push(elementNode(name, text, attrs ? cleanAttrs(attrs) : undefined));
}

/** Appends an aggregate element and returns it. */
export function branch(parent: XmlNode, name: string, attrs?: Attrs): XmlNode {
  return element(parent, name, attrs ? cleanAttrs(attrs) : undefined);
}

/**
 * Inserts an aggregate element right after `sibling` (an element `branch` appended to `parent`)
 * and returns it.
 */
export function branchAfter(parent: XmlNode, sibling: XmlNode, name: string, attrs?: Attrs): XmlNode {
  const index = parent.findIndex((node) => Object.values(node).includes(sibling));
  if (index < 0) throw new Error(`branchAfter: the sibling of ${name} is not a child of the parent`);
  const children: XmlNode = [];
  parent.splice(index + 1, 0, elementNode(name, children, attrs ? cleanAttrs(attrs) : undefined));
  return children;
}

/** Appends an amount with 2 decimals and its `currencyID` when `value` is defined. */
export function amount(parent: XmlNode, name: string, value: number | undefined, currency: string): void {
  if (value === undefined || !Number.isFinite(value)) return;
  parent.push(elementNode(name, formatAmount(value), { currencyID: attrValue(currency) }));
}

/**
 * XMLBuilder writes every `'` of an attribute value as `&apos;` whatever its options (its
 * escapeAttribute runs after the configurable entities); canonical XML writes it literally, and the
 * ZATCA hash is taken over this serialization. Undone on the serialized string: with the entity
 * list above every `&` of content is written `&amp;`, so each `&apos;` in the output is one the
 * builder wrote for an apostrophe in an attribute value, inside double quotes, where a literal `'`
 * is well-formed. (Text never gets `&apos;`: its apostrophes are written as they are.)
 */
function build(nodes: XmlNode): string {
  const xml: string = builder.build(nodes);
  return xml.includes('&apos;') ? xml.replaceAll('&apos;', APOSTROPHE) : xml;
}

/**
 * The serialized document: compact (no pretty-printing), with the XML declaration. Empty elements
 * are written as start-end tag pairs, as canonical XML writes them.
 */
export function serialize(doc: XmlNode): string {
  return build(doc);
}

/** The serialized document without the XML declaration: its canonical (C14N) form here. */
export function serializeHeadless(doc: XmlNode): string {
  return build(doc.filter((node) => !(DECLARATION in node)) as XmlNode);
}

export function toBase64(xml: string): string {
  return Buffer.from(xml, 'utf8').toString('base64');
}
