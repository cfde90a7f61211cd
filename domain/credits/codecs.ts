/**
 * The request bodies of credits as io-ts codecs: the one description of each body. The OpenAPI
 * document shows their JSON Schema (`jsonSchemaOf`), and the request rules (`input.ts`) take the
 * member names from them; the rules then check each member in order to name the first problem
 * precisely, with the same predicates and limits these codecs use. Rules that span members (endAt
 * after startAt, which members an operation takes, one operation per company and target) are
 * in the rules and in the descriptions here.
 */
import * as t from 'io-ts';
import { COMPANY_ID_PATTERN, isStorableText } from '../connect/values.js';
import { annotate, describeCodec, type JsonSchema } from '../schema/json-schema.js';
import { BULK_OPERATIONS, CREDIT_LIMITS, PERIOD_TYPES, parseUtcTimestamp } from './values.js';

/** A hand-made codec: `is` decides, `schema` is what the OpenAPI document shows. */
function refined<A>(name: string, is: (u: unknown) => boolean, schema: JsonSchema): t.Type<A, A, unknown> {
  return describeCodec(new t.Type<A, A, unknown>(name, (u): u is A => is(u), (u, c) => (is(u) ? t.success(u as A) : t.failure(u, c)), t.identity), schema);
}

const textOf = (max: number) =>
  refined<string>(`text of at most ${max} characters`, (u) => typeof u === 'string' && isStorableText(u) && u.trim() !== '' && u.length <= max, {
    type: 'string',
    minLength: 1,
    maxLength: max,
    pattern: '\\S',
  });

const Text = textOf(CREDIT_LIMITS.textMax);
const OptionalText = t.union([Text, t.null]);
const oneOf = <V extends string>(values: readonly V[], name: string) =>
  refined<V>(name, (u) => typeof u === 'string' && (values as readonly string[]).includes(u), { type: 'string', enum: [...values] });

const Limit = refined<number>('credits', (u) => typeof u === 'number' && Number.isInteger(u) && u >= 0 && u <= CREDIT_LIMITS.amountMax, {
  type: 'integer',
  minimum: 0,
  maximum: CREDIT_LIMITS.amountMax,
  description: 'Credits: a whole number',
});
const UtcTimestamp = refined<string>('UTC timestamp', (u) => typeof u === 'string' && parseUtcTimestamp(u) !== null, {
  type: 'string',
  format: 'date-time',
  pattern: 'Z$',
  description: 'ISO 8601 in UTC, ending in Z (e.g. 2026-01-01T00:00:00Z)',
});
const Metadata = refined<Record<string, unknown>>('metadata', (u) => typeof u === 'object' && u !== null && !Array.isArray(u), {
  type: 'object',
  description: `Your own JSON object, at most ${CREDIT_LIMITS.metadataBytesMax} bytes and ${CREDIT_LIMITS.metadataDepthMax} levels deep`,
});
const CompanyId = refined<string>('company id', (u) => typeof u === 'string' && COMPANY_ID_PATTERN.test(u), { type: 'string', pattern: COMPANY_ID_PATTERN.source });
const OperationId = textOf(CREDIT_LIMITS.operationIdMax);
const Version = refined<number>('version', (u) => typeof u === 'number' && Number.isSafeInteger(u) && u >= 0, {
  type: 'integer',
  minimum: 0,
  description: 'The allowance version the operation expects: 0 creates (replacements only), otherwise the latest version',
});

const allowanceMembers = {
  limit: Limit,
  periodType: oneOf(PERIOD_TYPES, 'period type'),
  startAt: UtcTimestamp,
  endAt: UtcTimestamp,
};
const allowanceOptional = { planReference: OptionalText, metadata: t.union([Metadata, t.null]) };

/** PUT /allowances/{companyId}/current and /scheduled. */
export const AllowanceBody = t.exact(t.intersection([t.type({ ...allowanceMembers, reason: Text }), t.partial(allowanceOptional)]));

/** POST …/pause: the reason is required. */
export const ReasonRequiredBody = t.exact(t.type({ reason: Text }));
/** POST …/resume and DELETE …/scheduled: the reason is optional (and so is the body). */
export const ReasonOptionalBody = t.exact(t.partial({ reason: OptionalText }));

/** The description of a bulk operation's cross-member rules (shown in the OpenAPI document). */
export const BULK_ROW_RULES =
  'replace_current / replace_scheduled take the allowance members (limit, periodType, startAt, endAt, reason required; planReference, metadata optional; expectedVersion 0 creates); ' +
  'pause needs a reason; the others take operationId, companyId, operation, expectedVersion (1 or more) and an optional reason. ' +
  'operationId is unique in a job, and a company has at most one operation per allowance (current or scheduled) in a job.';

/** One operation of POST /allowances/bulk. */
export const BulkOperationRow = annotate(
  t.exact(
    t.intersection([
      t.type({ operationId: OperationId, companyId: CompanyId, operation: oneOf(BULK_OPERATIONS, 'bulk operation'), expectedVersion: Version }),
      t.partial({ reason: OptionalText, ...allowanceMembers, ...allowanceOptional }),
    ]),
  ),
  { description: BULK_ROW_RULES },
);

/** POST /allowances/bulk. */
const Operations = t.refinement(t.array(BulkOperationRow), (rows) => rows.length >= 1 && rows.length <= CREDIT_LIMITS.bulkOperationsMax, 'operations');
export const BulkBody = t.exact(t.type({ operations: annotate(Operations, { minItems: 1, maxItems: CREDIT_LIMITS.bulkOperationsMax }) }));
