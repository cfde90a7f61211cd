/**
 * Size limits of a submitted payload: far above what a real invoice reaches, always reached by a
 * mistake (a file pasted into a name, a loop writing a line a million times). A payload over a
 * limit is refused before validation, with the path of the offending value; the body as a whole
 * is bounded by the HTTP layer (BODY_LIMIT_BYTES).
 */
import { formatPath, type PathSegment } from './paths.js';

export const PAYLOAD_LIMITS = {
  /** Characters of any one string value (a name, a description, an identifier). */
  maxStringChars: 4000,
  /** Elements of any one array (`lineItems`, `taxIds`, `paymentMeans`). */
  maxArrayItems: 10000,
  /** Members of any one object. */
  maxObjectMembers: 500,
} as const;

export interface LimitProblem {
  message: string;
  path: PathSegment[];
}

/** The first value of `payload` over a limit, or null. Iterative: any depth the parser took is safe. */
export function payloadLimitProblem(payload: unknown, limits = PAYLOAD_LIMITS): LimitProblem | null {
  // Each value's path as a chain to its parent, made into an array only for a value over a limit.
  const stack: Visit[] = [{ value: payload, up: null, segment: null }];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const value = visit.value;
    if (typeof value === 'string') {
      if (value.length > limits.maxStringChars) {
        const path = pathOf(visit);
        return { message: `${formatPath(path) || 'payload'} is ${value.length} characters long; the limit is ${limits.maxStringChars}`, path };
      }
    } else if (Array.isArray(value)) {
      if (value.length > limits.maxArrayItems) {
        const path = pathOf(visit);
        return { message: `${formatPath(path) || 'payload'} has ${value.length} items; the limit is ${limits.maxArrayItems}`, path };
      }
      for (let i = value.length - 1; i >= 0; i--) stack.push({ value: value[i], up: visit, segment: i });
    } else if (value !== null && typeof value === 'object') {
      const keys = Object.keys(value);
      if (keys.length > limits.maxObjectMembers) {
        const path = pathOf(visit);
        return { message: `${formatPath(path) || 'payload'} has ${keys.length} members; the limit is ${limits.maxObjectMembers}`, path };
      }
      for (let i = keys.length - 1; i >= 0; i--) {
        const key = keys[i]!;
        if (key.length > limits.maxStringChars) {
          const path = pathOf(visit);
          return { message: `a member name under ${formatPath(path) || 'payload'} is ${key.length} characters long; the limit is ${limits.maxStringChars}`, path };
        }
        stack.push({ value: (value as Record<string, unknown>)[key], up: visit, segment: key });
      }
    }
  }
  return null;
}

interface Visit {
  value: unknown;
  up: Visit | null;
  segment: PathSegment | null;
}

function pathOf(visit: Visit): PathSegment[] {
  const path: PathSegment[] = [];
  for (let at: Visit | null = visit; at !== null && at.segment !== null; at = at.up) path.push(at.segment);
  return path.reverse();
}
