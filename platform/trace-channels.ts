/**
 * Named diagnostics channels (node:diagnostics_channel) the service publishes its latency steps
 * on. Nothing subscribes in the service itself: a benchmark's probe loaded into the server
 * (scripts/latency-probe.ts, with `--import`) does. Publishing is guarded by `hasSubscribers`, so
 * with nobody listening a step costs one property read.
 */
import diagnosticsChannel from 'node:diagnostics_channel';
import type { Position } from './eventstore/port.js';

/** A submission's steps: `appended` once its events are committed, `readable` once the read models the answer waits for hold them. */
export interface SubmitStep {
  requestId: string | null;
  step: 'appended' | 'readable';
  position: Position;
}

/** One batch of a projection's live loop: when it began and ended, events read, where it got to. */
export interface ProjectionBatchTrace {
  projection: string;
  startedAt: number;
  endedAt: number;
  read: number;
  position: Position | null;
}

export const submitSteps = diagnosticsChannel.channel('einvoicing:submit');
export const projectionBatches = diagnosticsChannel.channel('einvoicing:projection-batch');
