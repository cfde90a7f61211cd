/** Stores a sample payload for field mapping (Unify earlier format, purpose MAPPING). */
import { randomUUID } from 'node:crypto';
import { mappingSampleDecider } from '../domain/document/mapping-sample.js';
import type { EventStore } from '../platform/eventstore/port.js';
import { execute, type CommandContext } from './execute.js';

export async function recordMappingSample(
  store: EventStore,
  input: {
    workspaceId: string;
    source: { name: string; version: string; companyId: string | null };
    payload: unknown;
    externalId: string | null;
    documentType: { base: string; modifiers: string[]; variant: string | null };
  },
  ctx: CommandContext,
) {
  const payloadId = randomUUID();
  const sample = { payloadId, source: { name: input.source.name, version: input.source.version, companyId: input.source.companyId }, documentType: input.documentType, externalId: input.externalId, payload: input.payload };
  const result = await execute(store, mappingSampleDecider, `mappingsample-${payloadId}`, { type: 'Record', sample }, { ...ctx, workspaceId: input.workspaceId });
  return { payloadId, position: result.appended!.position };
}
