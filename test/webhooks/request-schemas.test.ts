/**
 * The webhooks family's request bodies in the OpenAPI document are derived from the io-ts codecs
 * the handlers refuse unknown members with (one description of each body), and the bodies the
 * handlers accept are valid against them while refused shapes are not.
 */
import { expect } from 'chai';
import { jsonSchemaOf } from '../../domain/schema/json-schema.js';
import { SubscriptionCreateCodec, SubscriptionPatchCodec } from '../../domain/webhooks/input.js';
import { RedeliveryRequestCodec } from '../../domain/webhooks/redelivery.js';
import { openApiDocument } from '../../http/openapi/index.js';
import { schemaErrors } from '../support/openapi-check.js';

describe('webhooks: request bodies in the OpenAPI document', () => {
  const doc = openApiDocument() as { paths: Record<string, Record<string, any>>; components: { schemas: Record<string, unknown> } };
  const bodyOf = (path: string, method: string) => doc.paths[path]![method].requestBody.content['application/json'].schema;
  const schemas = doc.components.schemas;

  it('derives each body from its codec', () => {
    expect(bodyOf('/v3/connect/webhooks', 'post')).to.deep.equal({ $ref: '#/components/schemas/WebhookSubscriptionInput' });
    expect(schemas.WebhookSubscriptionInput).to.deep.equal(jsonSchemaOf(SubscriptionCreateCodec));
    expect(bodyOf('/v3/connect/webhooks/{id}', 'patch')).to.deep.equal({ $ref: '#/components/schemas/WebhookSubscriptionPatch' });
    expect(schemas.WebhookSubscriptionPatch).to.deep.include(jsonSchemaOf(SubscriptionPatchCodec));
    expect(bodyOf('/v3/connect/webhooks/{id}/redeliveries', 'post')).to.deep.equal({ $ref: '#/components/schemas/WebhookRedeliveryInput' });
    expect(schemas.WebhookRedeliveryInput).to.deep.equal(jsonSchemaOf(RedeliveryRequestCodec));
  });

  it('accepts the bodies the handlers accept and refuses unknown members, missing fields and bad values', () => {
    const create = { webhookUrl: 'https://hooks.example.com/a', events: ['document.status.changed', 'isv.credits.pool.low'], secretKey: 's', signatureAlgorithm: 'sha512', description: null };
    expect(schemaErrors(schemas.WebhookSubscriptionInput, create)).to.deep.equal([]);
    for (const bad of [{ ...create, extra: 1 }, { events: create.events }, { ...create, events: [] }, { ...create, events: ['nope'] }, { ...create, signatureAlgorithm: 'md5' }]) {
      expect(schemaErrors(schemas.WebhookSubscriptionInput, bad), JSON.stringify(bad)).to.not.deep.equal([]);
    }
    expect(schemaErrors(schemas.WebhookSubscriptionPatch, { active: false, secretKey: null })).to.deep.equal([]);
    for (const bad of [{}, { active: 'no' }, { createdAt: 'x' }]) expect(schemaErrors(schemas.WebhookSubscriptionPatch, bad), JSON.stringify(bad)).to.not.deep.equal([]);
    expect(schemaErrors(schemas.WebhookRedeliveryInput, { deliveryId: 'whd_0123456789abcdef01234567' })).to.deep.equal([]);
    expect(schemaErrors(schemas.WebhookRedeliveryInput, { since: '2026-05-01T00:00:00Z', until: '2026-05-02T00:00:00Z' })).to.deep.equal([]);
    for (const bad of [{}, { deliveryId: 'x' }, { since: '2026-05-01T00:00:00Z', other: 1 }]) {
      expect(schemaErrors(schemas.WebhookRedeliveryInput, bad), JSON.stringify(bad)).to.not.deep.equal([]);
    }
  });
});
