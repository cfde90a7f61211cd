/**
 * Reading generated XML back in tests: regular expressions over the compact serialization for the
 * well-known leaf elements, and fast-xml-parser's XMLParser for structural paths.
 */
import { XMLParser } from 'fast-xml-parser';

function unescape(text: string): string {
  return text.replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&apos;/g, "'").replace(/&amp;/g, '&');
}

/** The text of every `<qname ...>text</qname>` leaf, in document order. */
export function texts(xml: string, qname: string): string[] {
  const re = new RegExp(`<${qname}(?:\\s[^>]*)?>([^<]*)</${qname}>`, 'g');
  return [...xml.matchAll(re)].map((m) => unescape(m[1] ?? ''));
}

export function text(xml: string, qname: string): string | undefined {
  return texts(xml, qname)[0];
}

/** Whether an element named `qname` occurs. */
export function has(xml: string, qname: string): boolean {
  return new RegExp(`<${qname}[\\s>/]`).test(xml);
}

/** The value of `attribute` on every `qname` element. */
export function attrs(xml: string, qname: string, attribute: string): string[] {
  const re = new RegExp(`<${qname}\\s[^>]*\\b${attribute}="([^"]*)"`, 'g');
  return [...xml.matchAll(re)].map((m) => unescape(m[1] ?? ''));
}

/** The inner XML of the first `<qname>...</qname>` (non-nested element names only). */
export function inner(xml: string, qname: string): string | undefined {
  const m = new RegExp(`<${qname}(?:\\s[^>]*)?>(.*?)</${qname}>`).exec(xml);
  return m?.[1];
}

type Obj = Record<string, unknown>;

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  textNodeName: '#',
  ignoreDeclaration: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
});

/**
 * Parses XML into an object (attributes as "@name", text as "#", repeated elements as arrays, a
 * leaf without attributes as its text); entity and character references are decoded.
 */
export function parseXml(xml: string): Obj {
  return parser.parse(xml) as Obj;
}

/** Follows a path of element names (and "@attr") through the parsed object; arrays take the first item. */
export function at(obj: unknown, ...path: string[]): unknown {
  let cur: unknown = obj;
  for (const key of path) {
    if (Array.isArray(cur)) cur = cur[0];
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Obj)[key];
  }
  if (Array.isArray(cur)) cur = cur[0];
  if (cur !== null && typeof cur === 'object' && '#' in (cur as Obj)) return (cur as Obj)['#'];
  return cur;
}
