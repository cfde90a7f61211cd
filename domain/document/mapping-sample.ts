/**
 * Sample payloads pushed with purpose MAPPING during setup (stream `mappingsample-<payloadId>`):
 * stored for field mapping, never validated against a country or submitted.
 */
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { defineEvent } from '../events/envelope.js';

export const MappingSampleReceived = defineEvent({
  type: 'MappingSampleReceived',
  version: 1,
  codec: t.type({
    payloadId: t.string,
    source: t.type({ name: t.string, version: t.string, companyId: t.union([t.string, t.null]) }),
    documentType: t.type({ base: t.string, modifiers: t.array(t.string), variant: t.union([t.string, t.null]) }),
    externalId: t.union([t.string, t.null]),
    payload: t.unknown,
  }),
});

type MappingSampleEvent = DomainEvent<'MappingSampleReceived', t.TypeOf<typeof MappingSampleReceived.codec>>;

export const mappingSampleDecider: Decider<{ type: 'Record'; sample: MappingSampleEvent['data'] }, { received: boolean }, MappingSampleEvent> = {
  category: 'mappingsample',
  initialState: { received: false },
  events: { MappingSampleReceived },
  decide(command, state) {
    if (state.received) throw new DomainError('conflict', 'SAMPLE_EXISTS', 'this sample was stored already');
    return [{ type: 'MappingSampleReceived', data: command.sample }];
  },
  evolve: () => ({ received: true }),
};

registerDecider(mappingSampleDecider);
