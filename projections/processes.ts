/**
 * The reactors and workers of the service (see reactor.ts). Built with the service's
 * dependencies; the service runs reactors with the projection runner and ticks each worker
 * on its interval with the injected clock.
 */
import type { Knex } from 'knex';
import type { EventStore } from '../commands/eventstore/port.js';
import type { Clock } from '../platform/clock.js';
import type { Config } from '../platform/config.js';
import type { Reactor, Worker } from './reactor.js';

export interface ProcessDeps {
  config: Config;
  knex: Knex;
  store: EventStore;
  clock: Clock;
  log: (msg: string, fields?: Record<string, unknown>) => void;
}

export interface Processes {
  reactors: Reactor[];
  workers: { worker: Worker; intervalMs: number }[];
}

export function serviceProcesses(_deps: ProcessDeps): Processes {
  return { reactors: [], workers: [] };
}
