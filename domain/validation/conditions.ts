/**
 * Conditions: when a rule (or a rule set) applies, written as data so that the same value
 * drives the validator (compiled to a predicate per document-type key), the requirements
 * catalogue (rendered as text) and the rule listing.
 *
 * Document-type conditions (base, modifier, variant) are decided once per key; field
 * conditions (a value in the document) are left to evaluate per document.
 */
import type { DocumentBase, DocumentModifier, DocumentVariant, ResolvedDocumentType } from './document-types.js';
import { BROKEN, EACH, isPresent, parsePath, valueAt, type PathSegment } from './paths.js';

export type Condition =
  | { readonly op: 'base'; readonly bases: readonly DocumentBase[] }
  | { readonly op: 'modifier'; readonly modifier: DocumentModifier }
  | { readonly op: 'variant'; readonly variants: readonly DocumentVariant[] }
  | { readonly op: 'equals'; readonly path: string; readonly value: string }
  | { readonly op: 'present'; readonly path: string }
  | { readonly op: 'not'; readonly condition: Condition }
  | { readonly op: 'all'; readonly conditions: readonly Condition[] }
  | { readonly op: 'any'; readonly conditions: readonly Condition[] };

// Builders ------------------------------------------------------------------------------------

export const baseIs = (...bases: DocumentBase[]): Condition => ({ op: 'base', bases });
export const hasModifier = (modifier: DocumentModifier): Condition => ({ op: 'modifier', modifier });
export const hasAnyModifier = (...modifiers: DocumentModifier[]): Condition =>
  modifiers.length === 1 ? hasModifier(modifiers[0]!) : { op: 'any', conditions: modifiers.map(hasModifier) };
export const variantIs = (...variants: DocumentVariant[]): Condition => ({ op: 'variant', variants });
export const fieldEquals = (path: string, value: string): Condition => ({ op: 'equals', path, value });
export const fieldPresent = (path: string): Condition => ({ op: 'present', path });
export const not = (condition: Condition): Condition => ({ op: 'not', condition });
export const all = (...conditions: Condition[]): Condition => ({ op: 'all', conditions });
export const any = (...conditions: Condition[]): Condition => ({ op: 'any', conditions });
/** The field is present and differs from `value`. */
export const fieldPresentAndNot = (path: string, value: string): Condition => all(fieldPresent(path), not(fieldEquals(path, value)));

// Text ----------------------------------------------------------------------------------------

/** The condition in words, e.g. `modifier export is present and header.currency is not AED`. */
export function describeCondition(c: Condition): string {
  switch (c.op) {
    case 'base':
      return c.bases.length === 1 ? `documentType.base is ${c.bases[0]}` : `documentType.base is one of ${c.bases.join(', ')}`;
    case 'modifier':
      return `modifier ${c.modifier} is present`;
    case 'variant':
      return c.variants.length === 1 ? `variant is ${c.variants[0]}` : `variant is one of ${c.variants.join(', ')}`;
    case 'equals':
      return `${c.path} is ${c.value}`;
    case 'present':
      return `${c.path} is given`;
    case 'not': {
      const inner = c.condition;
      if (inner.op === 'modifier') return `modifier ${inner.modifier} is absent`;
      if (inner.op === 'equals') return `${inner.path} is not ${inner.value}`;
      if (inner.op === 'present') return `${inner.path} is absent`;
      if (inner.op === 'base') return inner.bases.length === 1 ? `documentType.base is not ${inner.bases[0]}` : `documentType.base is none of ${inner.bases.join(', ')}`;
      if (inner.op === 'variant') return inner.variants.length === 1 ? `variant is not ${inner.variants[0]}` : `variant is none of ${inner.variants.join(', ')}`;
      return `not (${describeCondition(inner)})`;
    }
    case 'all':
      return c.conditions.map((x) => (x.op === 'any' ? `(${describeCondition(x)})` : describeCondition(x))).join(' and ');
    case 'any':
      if (c.conditions.every((x) => x.op === 'modifier')) {
        return `any of the modifiers ${c.conditions.map((x) => (x as { modifier: string }).modifier).join(', ')} is present`;
      }
      return c.conditions.map((x) => (x.op === 'all' ? `(${describeCondition(x)})` : describeCondition(x))).join(' or ');
  }
}

// Specialisation per document type -------------------------------------------------------------

/** A condition on document values only, ready to evaluate. */
export type DataCondition =
  | { readonly op: 'equals'; readonly segments: readonly PathSegment[]; readonly value: string }
  | { readonly op: 'present'; readonly segments: readonly PathSegment[] }
  | { readonly op: 'not'; readonly condition: DataCondition }
  | { readonly op: 'all'; readonly conditions: readonly DataCondition[] }
  | { readonly op: 'any'; readonly conditions: readonly DataCondition[] };

/** The document-type-independent remainder of a condition, as data (for text). */
export interface Specialised {
  /** `true`/`false` when the document type alone decides; otherwise the remaining data condition. */
  readonly decided: boolean | null;
  readonly data: DataCondition | null;
  readonly remainder: Condition | null;
}

const TRUE: Specialised = { decided: true, data: null, remainder: null };
const FALSE: Specialised = { decided: false, data: null, remainder: null };

const segmentCache = new Map<string, readonly PathSegment[]>();
function segmentsOf(path: string): readonly PathSegment[] {
  let s = segmentCache.get(path);
  if (!s) {
    s = parsePath(path);
    if (s.includes(EACH)) throw new Error(`a condition path cannot contain []: ${path}`);
    segmentCache.set(path, s);
  }
  return s;
}

/** Decides the document-type parts of `c` for `dt`, leaving the field parts. */
export function specialise(c: Condition | undefined, dt: ResolvedDocumentType): Specialised {
  if (c === undefined) return TRUE;
  switch (c.op) {
    case 'base':
      return c.bases.includes(dt.base) ? TRUE : FALSE;
    case 'modifier':
      return dt.modifiers.includes(c.modifier) ? TRUE : FALSE;
    case 'variant':
      return c.variants.includes(dt.variant ?? 'standard') ? TRUE : FALSE;
    case 'equals':
      return { decided: null, data: { op: 'equals', segments: segmentsOf(c.path), value: c.value }, remainder: c };
    case 'present':
      return { decided: null, data: { op: 'present', segments: segmentsOf(c.path) }, remainder: c };
    case 'not': {
      const inner = specialise(c.condition, dt);
      if (inner.decided !== null) return inner.decided ? FALSE : TRUE;
      return { decided: null, data: { op: 'not', condition: inner.data! }, remainder: not(inner.remainder!) };
    }
    case 'all':
    case 'any': {
      const isAll = c.op === 'all';
      const data: DataCondition[] = [];
      const remainder: Condition[] = [];
      for (const part of c.conditions) {
        const s = specialise(part, dt);
        if (s.decided === !isAll) return isAll ? FALSE : TRUE; // all(...false...) / any(...true...)
        if (s.decided === null) {
          data.push(s.data!);
          remainder.push(s.remainder!);
        }
      }
      if (data.length === 0) return isAll ? TRUE : FALSE;
      if (data.length === 1) return { decided: null, data: data[0]!, remainder: remainder[0]! };
      return {
        decided: null,
        data: { op: c.op, conditions: data },
        remainder: { op: c.op, conditions: remainder },
      };
    }
  }
}

/** Evaluates a data condition on a document. A wrongly typed container counts as absent. */
export function holds(c: DataCondition, doc: unknown): boolean {
  switch (c.op) {
    case 'equals': {
      const v = valueAt(doc, c.segments);
      return v === c.value;
    }
    case 'present': {
      const v = valueAt(doc, c.segments);
      return v !== BROKEN && isPresent(v);
    }
    case 'not':
      return !holds(c.condition, doc);
    case 'all':
      for (const x of c.conditions) if (!holds(x, doc)) return false;
      return true;
    case 'any':
      for (const x of c.conditions) if (holds(x, doc)) return true;
      return false;
  }
}

/** True when a condition mentions only the document type (rule-set selectors must). */
export function isStatic(c: Condition | undefined): boolean {
  if (c === undefined) return true;
  switch (c.op) {
    case 'equals':
    case 'present':
      return false;
    case 'not':
      return isStatic(c.condition);
    case 'all':
    case 'any':
      return c.conditions.every(isStatic);
    default:
      return true;
  }
}
