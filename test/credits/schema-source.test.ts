/**
 * The credits request bodies have one description: the OpenAPI document shows the JSON Schema of
 * their codecs (domain/credits/codecs.ts), the request rules take the member names from the same
 * codecs, and the schema, the codec and the rules agree on bodies either side of each limit.
 */
import { expect } from 'chai';
import { isRight } from 'fp-ts/lib/Either.js';
import type * as t from 'io-ts';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { openApiDocument } from '../../http/openapi/index.js';
import { AllowanceBody, BulkBody, ReasonOptionalBody, ReasonRequiredBody } from '../../domain/credits/codecs.js';
import { parseActionBody, parseAllowanceBody, parseBulkBody } from '../../domain/credits/input.js';
import { CREDIT_LIMITS } from '../../domain/credits/values.js';
import { jsonSchemaOf, unknownMembers } from '../../domain/schema/json-schema.js';

const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => void;
type Operation = { requestBody: { content: { 'application/json': { schema: Record<string, unknown> } } } };
const doc = () => openApiDocument() as { paths: Record<string, Record<string, Operation>>; components: { schemas: Record<string, Record<string, unknown>> } };
const bodyOf = (path: string, method: string) => doc().paths[path]![method]!.requestBody.content['application/json'].schema;
const BASE = '/v3/connect/credits/allowances';

const accepts = (codec: t.Mixed, body: unknown) => isRight(codec.decode(body)) && unknownMembers(codec, body).length === 0;
const parses = (parse: () => unknown) => {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
};

const allowance = { limit: 1000, periodType: 'monthly', startAt: '2026-01-01T00:00:00Z', endAt: '2026-02-01T00:00:00Z', reason: 'plan' };
const companyId = 'a'.repeat(24);

describe('the credits request bodies have one schema source', () => {
  const ajv = new Ajv2020({ strict: false });
  addFormats(ajv);

  it('the OpenAPI request bodies are the codecs\' JSON Schemas', () => {
    const { description: _d, ...allowanceInput } = doc().components.schemas['AllowanceInput']!;
    expect(allowanceInput).to.deep.equal(jsonSchemaOf(AllowanceBody));
    expect(bodyOf(`${BASE}/{companyId}/pause`, 'post')).to.deep.equal(jsonSchemaOf(ReasonRequiredBody));
    expect(bodyOf(`${BASE}/{companyId}/resume`, 'post')).to.deep.equal(jsonSchemaOf(ReasonOptionalBody));
    expect(bodyOf(`${BASE}/{companyId}/scheduled`, 'delete')).to.deep.equal(jsonSchemaOf(ReasonOptionalBody));
    expect(bodyOf(`${BASE}/bulk`, 'post')).to.deep.equal(jsonSchemaOf(BulkBody));
  });

  it('schema, codec and rules agree on allowance bodies', () => {
    const schema = ajv.compile(doc().components.schemas['AllowanceInput']!);
    const cases: [string, unknown, boolean][] = [
      ['the required members', allowance, true],
      ['every member', { ...allowance, planReference: 'P-1', metadata: { a: 1 } }, true],
      ['null optional members', { ...allowance, planReference: null, metadata: null }, true],
      ['the largest limit', { ...allowance, limit: CREDIT_LIMITS.amountMax }, true],
      ['an unknown member', { ...allowance, limt: 5 }, false],
      ['no reason', { ...allowance, reason: undefined }, false],
      ['a blank reason', { ...allowance, reason: '   ' }, false],
      ['a reason too long', { ...allowance, reason: 'x'.repeat(CREDIT_LIMITS.textMax + 1) }, false],
      ['a negative limit', { ...allowance, limit: -1 }, false],
      ['a fractional limit', { ...allowance, limit: 1.5 }, false],
      ['a limit above the largest', { ...allowance, limit: CREDIT_LIMITS.amountMax + 1 }, false],
      ['an unknown period type', { ...allowance, periodType: 'weekly' }, false],
      ['a timestamp not in UTC', { ...allowance, startAt: '2026-01-01T00:00:00+04:00' }, false],
      ['metadata that is an array', { ...allowance, metadata: [1] }, false],
    ];
    for (const [what, raw, ok] of cases) {
      const body = JSON.parse(JSON.stringify(raw)) as unknown;
      expect(schema(body), `schema: ${what}`).to.equal(ok);
      expect(accepts(AllowanceBody, body), `codec: ${what}`).to.equal(ok);
      expect(parses(() => parseAllowanceBody(body)), `rules: ${what}`).to.equal(ok);
    }
  });

  it('schema, codec and rules agree on action bodies', () => {
    const required = ajv.compile(jsonSchemaOf(ReasonRequiredBody));
    const optional = ajv.compile(jsonSchemaOf(ReasonOptionalBody));
    const cases: [string, unknown, boolean, boolean][] = [
      ['a reason', { reason: 'audit' }, true, true],
      ['an empty object', {}, false, true],
      ['a null reason', { reason: null }, false, true],
      ['an unknown member', { reason: 'a', note: 'b' }, false, false],
      ['a reason too long', { reason: 'x'.repeat(CREDIT_LIMITS.textMax + 1) }, false, false],
    ];
    for (const [what, body, whenRequired, whenOptional] of cases) {
      expect([required(body), accepts(ReasonRequiredBody, body), parses(() => parseActionBody(body, true))], `required: ${what}`).to.deep.equal([whenRequired, whenRequired, whenRequired]);
      expect([optional(body), accepts(ReasonOptionalBody, body), parses(() => parseActionBody(body, false))], `optional: ${what}`).to.deep.equal([whenOptional, whenOptional, whenOptional]);
    }
  });

  it('schema, codec and rules agree on bulk bodies (members and limits; the cross-member rules are the rules\' own)', () => {
    const schema = ajv.compile(bodyOf(`${BASE}/bulk`, 'post'));
    const pause = { operationId: 'op-1', companyId, operation: 'pause', expectedVersion: 1, reason: 'audit' };
    const replace = { operationId: 'op-2', companyId, operation: 'replace_scheduled', expectedVersion: 0, ...allowance };
    const cases: [string, unknown, boolean][] = [
      ['a pause and a replacement', { operations: [pause, replace] }, true],
      ['a resume without a reason', { operations: [{ operationId: 'op-3', companyId, operation: 'resume', expectedVersion: 2 }] }, true],
      ['no operations', { operations: [] }, false],
      ['too many operations', { operations: Array.from({ length: CREDIT_LIMITS.bulkOperationsMax + 1 }, (_, i) => ({ ...pause, operationId: `op-${i}`, companyId: i.toString(16).padStart(24, '0') })) }, false],
      ['an unknown member of the body', { operations: [pause], dryRun: true }, false],
      ['an unknown member of a row', { operations: [{ ...pause, note: 'x' }] }, false],
      ['an unknown operation', { operations: [{ ...pause, operation: 'delete' }] }, false],
      ['a company id in capitals', { operations: [{ ...pause, companyId: 'A'.repeat(24) }] }, false],
      ['an operation id too long', { operations: [{ ...pause, operationId: 'x'.repeat(CREDIT_LIMITS.operationIdMax + 1) }] }, false],
      ['a negative version', { operations: [{ ...replace, expectedVersion: -1 }] }, false],
    ];
    for (const [what, body, ok] of cases) {
      expect(schema(body), `schema: ${what}`).to.equal(ok);
      expect(accepts(BulkBody, body), `codec: ${what}`).to.equal(ok);
      expect(parses(() => parseBulkBody(body)), `rules: ${what}`).to.equal(ok);
    }
  });
});
