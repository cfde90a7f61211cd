/**
 * Ledger exports (docs/api/credits.md): a request records the filters; the export holds every ledger
 * transaction written before the request (in log order), so its content is fixed from the
 * moment it is asked for and can be produced again identically. Completion is recorded by a
 * reactor once the ledger read model has caught up with the request (projections/reactors/credits-processes.ts).
 */
import { randomBytes } from 'node:crypto';
import { creditExportDecider, type LedgerFilters } from '../../domain/credits/jobs.js';
import { creditExportStream } from '../../domain/credits/values.js';
import type { EventStore, Position } from '../../platform/eventstore/port.js';
import { execute, type CommandContext } from '../execute.js';
import { storeRecordingEffect, takeSlot } from '../idempotent-unit.js';

export const newExportId = () => `cex_${randomBytes(12).toString('hex')}`;

export async function requestExport(
  store: EventStore,
  input: { workspaceId: string; filters: LedgerFilters },
  ctx: CommandContext,
): Promise<{ exportId: string; position: Position | null }> {
  // Under an Idempotency-Key the export is recorded with the key, in the same append.
  const slot = takeSlot<{ exportId: string }>();
  if (slot?.recorded) return { exportId: slot.recorded.exportId, position: null };
  const exportId = slot ? `cex_${slot.id('export').replace(/-/g, '').slice(0, 24)}` : newExportId();
  const result = await execute(
    slot ? storeRecordingEffect(store, slot, { exportId }, ctx) : store,
    creditExportDecider,
    creditExportStream(exportId),
    { type: 'RequestExport', exportId, workspaceId: input.workspaceId, filters: input.filters, now: ctx.now.toISOString() },
    { ...ctx, workspaceId: input.workspaceId },
  );
  return { exportId, position: result.appended!.position };
}
