/**
 * Mapping templates: how a caller's payload becomes the core document. A template is data,
 * a list of `corePath <- payloadPath` entries; `[]` maps every element of an array
 * (`lineItems[].taxAmount <- items[].vat`). Applying a template also yields a path map, so a
 * finding on a core path can name the caller's payload path too.
 *
 * The built-in identity template `core-identity-ae-1` maps the docs/api/unify.md shape onto itself.
 */
import * as t from 'io-ts';
import { isLeft } from 'fp-ts/lib/Either.js';
import { PathReporter } from 'io-ts/lib/PathReporter.js';
import { EACH, formatPath, isRecord, parsePath, type PathSegment } from './paths.js';

export interface TemplateEntry {
  readonly corePath: string;
  readonly payloadPath: string;
}

export interface MappingTemplate {
  readonly id: string;
  readonly entries: readonly TemplateEntry[];
}

export const MappingTemplateCodec = t.type(
  {
    id: t.string,
    entries: t.array(t.type({ corePath: t.string, payloadPath: t.string }, 'TemplateEntry')),
  },
  'MappingTemplate',
);

/** The top-level sections of the core document (docs/api/unify.md). */
export const CORE_SECTIONS = ['header', 'parties', 'lineItems', 'payment', 'taxTotals', 'totals', 'extensions'] as const;

export const IDENTITY_TEMPLATE_ID = 'core-identity-ae-1';

/** The sandbox default: the docs/api/unify.md payload shape onto itself, section by section. */
export const identityTemplate: MappingTemplate = {
  id: IDENTITY_TEMPLATE_ID,
  entries: CORE_SECTIONS.map((s) => ({ corePath: s, payloadPath: s })),
};

export const builtInTemplates: ReadonlyMap<string, MappingTemplate> = new Map([[identityTemplate.id, identityTemplate]]);

/** What the caller's side of a finding is mapped from: the template and its entries. Plain data. */
export interface PathMap {
  readonly templateId: string;
  readonly entries: readonly TemplateEntry[];
}

/**
 * A payload value the template could not read because a container on its path has the wrong
 * type. `corePath` is the core field (or, for `[]` entries, the core array) left unfilled.
 */
export interface MappingProblem {
  readonly corePath: string;
  readonly payloadPath: string;
  readonly message: string;
}

export interface AppliedTemplate {
  /** The core document (the payload itself when the payload is not an object). */
  readonly document: unknown;
  readonly pathMap: PathMap;
  readonly problems: readonly MappingProblem[];
}

interface CompiledEntry {
  readonly entry: TemplateEntry;
  readonly core: readonly PathSegment[];
  readonly payload: readonly PathSegment[];
  /** The core path up to its first `[]`: the container a mapping problem leaves unfilled. */
  readonly coreContainer: string;
}

function compileEntry(entry: TemplateEntry): CompiledEntry {
  const core = parsePath(entry.corePath);
  const each = core.indexOf(EACH);
  return { entry, core, payload: parsePath(entry.payloadPath), coreContainer: formatPath(each < 0 ? core : core.slice(0, each)) };
}

const compiledTemplates = new WeakMap<object, readonly CompiledEntry[]>();
/** One path map per template object, so that its compiled form is cached too. */
const pathMaps = new WeakMap<object, PathMap>();

/** The problems of a template (empty when it can be applied): shape, path syntax, `[]` counts. */
export function templateProblems(template: unknown): string[] {
  const decoded = MappingTemplateCodec.decode(template);
  if (isLeft(decoded)) return PathReporter.report(decoded);
  const problems: string[] = [];
  const seen = new Set<string>();
  decoded.right.entries.forEach((entry, i) => {
    let core: PathSegment[];
    let payload: PathSegment[];
    try {
      core = parsePath(entry.corePath);
      payload = parsePath(entry.payloadPath);
    } catch (e) {
      problems.push(`entries[${i}]: ${(e as Error).message}`);
      return;
    }
    if (core.length === 0) problems.push(`entries[${i}]: corePath must not be empty`);
    const count = (s: PathSegment[]) => s.filter((x) => x === EACH).length;
    if (count(core) !== count(payload)) problems.push(`entries[${i}]: corePath and payloadPath must have the same number of []`);
    if (seen.has(entry.corePath)) problems.push(`entries[${i}]: corePath ${entry.corePath} is mapped twice`);
    seen.add(entry.corePath);
  });
  return problems;
}

function compile(template: MappingTemplate): readonly CompiledEntry[] {
  let compiled = compiledTemplates.get(template);
  if (!compiled) {
    const problems = templateProblems(template);
    if (problems.length > 0) throw new Error(`mapping template ${String(template.id)} is invalid: ${problems.join('; ')}`);
    compiled = template.entries.map(compileEntry);
    compiledTemplates.set(template, compiled);
  }
  return compiled;
}

/**
 * Applies a template to a payload. Entries apply in order; the caller's payload is never
 * modified (containers copied from it are copied again before anything is written into
 * them). Throws only for an invalid template (check stored templates with `templateProblems`).
 * A template's compiled form and path map are cached per template object: treat templates as
 * immutable values (load a new object when a source's mapping changes).
 */
export function applyTemplate(template: MappingTemplate, payload: unknown): AppliedTemplate {
  const entries = compile(template);
  let pathMap = pathMaps.get(template);
  if (!pathMap) {
    pathMap = Object.freeze({ templateId: template.id, entries: template.entries });
    pathMaps.set(template, pathMap);
  }
  if (!isRecord(payload)) return { document: payload, pathMap, problems: [] };
  const run = new TemplateRun();
  for (const c of entries) run.read(c, payload, 0);
  return { document: run.document, pathMap, problems: run.problems };
}

/** One application of a template: the document being built and what went wrong. */
class TemplateRun {
  readonly document: Record<string, unknown> = {};
  readonly problems: MappingProblem[] = [];
  /** Containers created here (or copied from the payload), safe to write into. */
  private readonly owned = new WeakSet<object>([this.document]);
  private readonly seen = new Set<string>();
  /** The payload path being read, and the indices `[]` segments matched on the way. */
  private readonly trail: PathSegment[] = [];
  private readonly captures: number[] = [];

  read(c: CompiledEntry, node: unknown, i: number): void {
    if (i === c.payload.length) {
      if (node !== undefined) this.write(c, node);
      return;
    }
    if (node === undefined || node === null) return;
    const seg = c.payload[i]!;
    if (typeof seg === 'string') {
      if (!isRecord(node)) {
        this.problem(c, `${formatPath(this.trail) || 'the payload'} must be an object`);
        return;
      }
      if (!Object.hasOwn(node, seg)) return;
      this.trail.push(seg);
      this.read(c, node[seg], i + 1);
      this.trail.pop();
      return;
    }
    if (!Array.isArray(node)) {
      this.problem(c, `${formatPath(this.trail) || 'the payload'} must be an array`);
      return;
    }
    if (seg === EACH) {
      for (let k = 0; k < node.length; k++) {
        this.trail.push(k);
        this.captures.push(k);
        this.read(c, node[k], i + 1);
        this.captures.pop();
        this.trail.pop();
      }
    } else {
      this.trail.push(seg);
      this.read(c, node[seg], i + 1);
      this.trail.pop();
    }
  }

  private write(c: CompiledEntry, value: unknown): void {
    let k = 0;
    const concrete: PathSegment[] = [];
    for (const s of c.core) concrete.push(s === EACH ? this.captures[k++]! : s);
    let container: Record<string | number, unknown> = this.document;
    for (let i = 0; i < concrete.length; i++) {
      const seg = concrete[i]!;
      if (i === concrete.length - 1) {
        container[seg] = value;
        return;
      }
      const wantArray = typeof concrete[i + 1] === 'number';
      let child = container[seg];
      if (child === undefined || child === null) {
        child = wantArray ? [] : {};
        this.owned.add(child as object);
        container[seg] = child;
      } else if (wantArray ? !Array.isArray(child) : !isRecord(child)) {
        this.problem(c, `${formatPath(concrete.slice(0, i + 1))} is already set to a value of another type by an earlier entry`);
        return;
      } else if (!this.owned.has(child as object)) {
        // Copied from the payload by an earlier entry: copy before writing into it.
        child = Array.isArray(child) ? child.slice() : { ...(child as Record<string, unknown>) };
        this.owned.add(child as object);
        container[seg] = child;
      }
      container = child as Record<string | number, unknown>;
    }
  }

  private problem(c: CompiledEntry, message: string): void {
    const payloadPath = formatPath(this.trail);
    const key = `${c.coreContainer}\u0000${payloadPath}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.problems.push({ corePath: c.coreContainer, payloadPath, message });
  }
}

const compiledMaps = new WeakMap<PathMap, readonly CompiledEntry[]>();

/**
 * The caller's payload path for a core path, through the most specific template entry whose
 * core path is a prefix of it (`lineItems[3].taxAmount` -> `items[3].vat`). `''` is the
 * payload itself; null when no entry covers the path.
 */
export function payloadPathFor(pathMap: PathMap, corePath: readonly PathSegment[] | string): string | null {
  const segs = typeof corePath === 'string' ? parsePath(corePath) : corePath;
  if (segs.length === 0) return '';
  let entries = compiledMaps.get(pathMap);
  if (!entries) {
    entries = pathMap.entries
      .map(compileEntry)
      .sort((a, b) => b.core.length - a.core.length);
    compiledMaps.set(pathMap, entries);
  }
  for (const c of entries) {
    if (c.core.length > segs.length) continue;
    const captured: number[] = [];
    let match = true;
    for (let j = 0; j < c.core.length; j++) {
      const want = c.core[j]!;
      const have = segs[j]!;
      if (want === EACH) {
        if (typeof have !== 'number') {
          match = false;
          break;
        }
        captured.push(have);
      } else if (want !== have) {
        match = false;
        break;
      }
    }
    if (!match) continue;
    let k = 0;
    const out = c.payload.map((s) => (s === EACH ? captured[k++]! : s));
    for (let j = c.core.length; j < segs.length; j++) out.push(segs[j]!);
    return formatPath(out);
  }
  return null;
}
