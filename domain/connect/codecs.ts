/**
 * The request bodies of Connect as io-ts codecs: the one description of each body. The OpenAPI
 * document shows their JSON Schema (`jsonSchemaOf`), and the request rules (`input.ts`) take the
 * member names from them; the rules then check each member in order to name the first problem
 * precisely, with the same predicates and limits these codecs use. The rows of an onboarding job
 * and the items of a bulk branch request are checked one by one (a failed one is reported in the
 * answer and does not stop the others), so their envelopes accept any item and describe it.
 */
import * as t from 'io-ts';
import { annotate, describeCodec, type JsonSchema } from '../schema/json-schema.js';
import { CONNECT_COUNTRY, PLATFORM_ENVIRONMENTS, SOURCE_STATUSES, isStorableText } from './values.js';

/** Limits of Connect's request members (input.ts refuses beyond them). */
export const CONNECT_INPUT_LIMITS = {
  textMax: 255,
  emailMax: 254,
  mobileMax: 21,
  branchesBulkMax: 100,
  onboardingRowsMax: 500,
  metadataBytesMax: 16 * 1024,
  metadataDepthMax: 8,
} as const;

export const TIN_PATTERN = /^\d{10}$/;
export const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
export const MOBILE_PATTERN = /^\+?\d{1,20}$/;

function refined<A>(name: string, is: (u: unknown) => boolean, schema: JsonSchema): t.Type<A, A, unknown> {
  return describeCodec(new t.Type<A, A, unknown>(name, (u): u is A => is(u), (u, c) => (is(u) ? t.success(u as A) : t.failure(u, c)), t.identity), schema);
}

const textOf = (max: number = CONNECT_INPUT_LIMITS.textMax, pattern?: RegExp, description?: string) =>
  refined<string>(
    'text',
    (u) => typeof u === 'string' && isStorableText(u) && u.trim() !== '' && u.length <= max && (!pattern || pattern.test(u)),
    { type: 'string', minLength: 1, maxLength: max, pattern: pattern ? pattern.source : '\\S', ...(description ? { description } : {}) },
  );

const Text = textOf();
const Country = refined<typeof CONNECT_COUNTRY>('country', (u) => u === CONNECT_COUNTRY, { const: CONNECT_COUNTRY, description: 'Connect onboards UAE (AE) companies only' });
const Environment = refined<(typeof PLATFORM_ENVIRONMENTS)[number]>('platform environment', (u) => typeof u === 'string' && (PLATFORM_ENVIRONMENTS as readonly string[]).includes(u), {
  type: 'string',
  enum: [...PLATFORM_ENVIRONMENTS],
});
const Status = refined<(typeof SOURCE_STATUSES)[number]>('status', (u) => typeof u === 'string' && (SOURCE_STATUSES as readonly string[]).includes(u), { type: 'string', enum: [...SOURCE_STATUSES] });
const Metadata = refined<Record<string, unknown>>('metadata', (u) => typeof u === 'object' && u !== null && !Array.isArray(u), {
  type: 'object',
  description: `Your own JSON object, at most ${CONNECT_INPUT_LIMITS.metadataBytesMax} bytes and ${CONNECT_INPUT_LIMITS.metadataDepthMax} levels deep`,
});

const companyRequired = {
  sourceName: Text,
  sourceVersion: Text,
  tin: textOf(CONNECT_INPUT_LIMITS.textMax, TIN_PATTERN, 'The company TIN: 10 digits'),
  contactPersonEmail: textOf(CONNECT_INPUT_LIMITS.emailMax, EMAIL_PATTERN),
  branchName: Text,
};
const companyOptional = {
  contactPersonName: t.union([Text, t.null]),
  contactPersonMobile: t.union([textOf(CONNECT_INPUT_LIMITS.mobileMax, MOBILE_PATTERN, 'Digits with an optional leading "+", without spaces'), t.null]),
};

const SYSTEM_MANAGED_NOTE = 'Unknown fields and system-managed ones (companyId, sourceId, branchId, peppolParticipantId, workspaceId) are refused.';

/** POST /v3/connect/companies. */
export const CompanyCreationBody = annotate(
  t.exact(t.intersection([t.type({ ...companyRequired, countryCode: Country, platformEnvironment: Environment }), t.partial(companyOptional)])),
  { description: SYSTEM_MANAGED_NOTE },
);

/** A row of an onboarding job: the company's members; countryCode and platformEnvironment default to the job's (a row's must agree with it). */
export const JobRow = annotate(
  t.exact(
    t.intersection([
      t.type(companyRequired),
      t.partial({ ...companyOptional, countryCode: t.union([Country, t.null]), platformEnvironment: t.union([Environment, t.null]) }),
    ]),
  ),
  { description: `Checked on its own: a row that fails is reported in the job's rows and does not stop the others. ${SYSTEM_MANAGED_NOTE}` },
);

/**
 * Items checked one by one: the envelope takes any item (one that is not a valid `what` fails on
 * its own and is reported in the answer), so the document shows an object and says what it holds.
 */
const eachChecked = (name: string, what: string) =>
  refined<unknown>(name, () => true, { type: 'object', description: `${what}; checked on its own: one that fails is reported in the answer and does not stop the others` });

/** POST /v3/connect/companies/onboarding-jobs. */
export const OnboardingJobBody = t.exact(
  t.intersection([
    t.type({
      countryCode: Country,
      platformEnvironment: Environment,
      rows: annotate(
        t.refinement(t.array(eachChecked('row', 'A company: the members of CompanyCreation, where countryCode and platformEnvironment may be left to the job (a row\'s must agree with it)')), (rows) => rows.length >= 1 && rows.length <= CONNECT_INPUT_LIMITS.onboardingRowsMax, 'rows'),
        { minItems: 1, maxItems: CONNECT_INPUT_LIMITS.onboardingRowsMax },
      ),
    }),
    t.partial({ filename: t.union([Text, t.null]) }),
  ]),
);

/** POST /v3/connect/companies/{companyId}/branches, and each item of the bulk form. */
export const BranchBody = annotate(t.exact(t.type({ branchName: Text, sourceName: Text, sourceVersion: Text })), { description: SYSTEM_MANAGED_NOTE });

/** POST /v3/connect/companies/{companyId}/branches/bulk. */
export const BranchBulkBody = t.exact(
  t.type({
    branches: annotate(
      t.refinement(t.array(eachChecked('branch', 'A branch: the members of Branch')), (items) => items.length >= 1 && items.length <= CONNECT_INPUT_LIMITS.branchesBulkMax, 'branches'),
      { minItems: 1, maxItems: CONNECT_INPUT_LIMITS.branchesBulkMax, description: 'Each branch is processed on its own; a failed one is reported in the results.' },
    ),
  }),
);

/** PATCH /v3/connect/companies/{sourceName}: only the members sent change; at least one. */
export const SourcePatchBody = annotate(
  t.refinement(
    t.exact(t.partial({ sourceVersion: Text, legalName: Text, legalIdentifier: t.union([Text, t.null]), countryCode: Country, status: Status, metadata: Metadata })),
    (patch) => Object.keys(patch).length >= 1,
    'source patch',
  ),
  { minProperties: 1 },
);

