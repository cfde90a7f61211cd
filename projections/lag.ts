/**
 * Projection lag for the metrics endpoint: per projection, the events of the global log after
 * its stored checkpoint (counted up to a bound) and the age of the oldest of them. One read of
 * the log from the lowest checkpoint serves every projection.
 */
import type { Knex } from 'knex';
import { START, comparePositions, pageMayContinue, type EventStore, type Position } from '../platform/eventstore/port.js';
import type { ProjectionLag } from '../platform/metrics.js';
import { readCheckpoint } from '../readmodels/checkpoints.js';
import { DEFAULT_BATCH_BYTES } from './runner.js';

export function projectionLagSource(knex: Knex, store: EventStore, names: readonly string[], bound = 10_000): () => Promise<ProjectionLag[]> {
  return async () => {
    const checkpoints: [string, Position][] = [];
    for (const name of names) checkpoints.push([name, (await readCheckpoint(knex, name)) ?? START]);
    if (checkpoints.length === 0) return [];
    const lowest = checkpoints.reduce((min, [, p]) => (comparePositions(p, min) < 0 ? p : min), checkpoints[0]![1]);
    // Read in pages bounded by bytes, keeping only positions and times: events can be large.
    const events: { position: Position; recordedAt: Date }[] = [];
    for (let from = lowest; events.length < bound; ) {
      const limit = bound - events.length;
      const page = await store.readAll(from, limit, { maxBytes: DEFAULT_BATCH_BYTES });
      for (const e of page) events.push({ position: e.position, recordedAt: e.recordedAt });
      if (page.length === 0 || !pageMayContinue(page, limit)) break;
      from = page[page.length - 1]!.position;
    }
    const now = Date.now();
    return checkpoints.map(([projection, at]) => {
      const pending = events.filter((e) => comparePositions(e.position, at) > 0);
      const oldest = pending[0];
      return { projection, events: pending.length, seconds: oldest ? Math.max(0, (now - oldest.recordedAt.getTime()) / 1000) : 0 };
    });
  };
}
