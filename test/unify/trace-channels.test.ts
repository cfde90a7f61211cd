import { expect } from 'chai';
import diagnosticsChannel from 'node:diagnostics_channel';
import { projectionBatches, submitSteps, type ProjectionBatchTrace, type SubmitStep } from '../../platform/trace-channels.js';
import { comparePositions } from '../../platform/eventstore/port.js';
import type { TestService } from '../support/http.js';
import { uaeInvoice, unifyTenant, type UnifyTenant, withUnifyService } from './support.js';

describe('the latency steps the service publishes for a benchmark probe (platform/trace-channels.ts)', function () {
  this.timeout(60000);
  let t: TestService;
  let u: UnifyTenant;

  withUnifyService((service, tenant) => {
    t = service;
    u = tenant;
  });

  it("a submission's append, then its read models' batches holding it, then its answer's read-your-writes, under the answer's request id", async () => {
    expect(submitSteps.hasSubscribers).to.equal(false);
    const seen: { kind: string; value: SubmitStep | ProjectionBatchTrace }[] = [];
    const onStep = (m: unknown) => seen.push({ kind: 'step', value: m as SubmitStep });
    const onBatch = (m: unknown) => seen.push({ kind: 'batch', value: m as ProjectionBatchTrace });
    diagnosticsChannel.subscribe(submitSteps.name, onStep);
    diagnosticsChannel.subscribe(projectionBatches.name, onBatch);
    try {
      const r = await u.submit(u.request(uaeInvoice()), { 'x-request-id': 'trace-test-1' });
      expect(r.status, r.text).to.equal(200);
    } finally {
      diagnosticsChannel.unsubscribe(submitSteps.name, onStep);
      diagnosticsChannel.unsubscribe(projectionBatches.name, onBatch);
    }
    const steps = seen.filter((s) => s.kind === 'step').map((s) => s.value as SubmitStep);
    expect(steps.map((s) => [s.requestId, s.step])).to.deep.equal([
      ['trace-test-1', 'appended'],
      ['trace-test-1', 'readable'],
    ]);
    const position = steps[0]!.position;
    const appendedAt = seen.findIndex((s) => s.kind === 'step');
    const readableAt = seen.findIndex((s) => s.kind === 'step' && (s.value as SubmitStep).step === 'readable');
    for (const name of ['documents', 'search']) {
      const holding = seen.findIndex(
        (s, i) => i > appendedAt && s.kind === 'batch' && (s.value as ProjectionBatchTrace).projection === name && comparePositions((s.value as ProjectionBatchTrace).position!, position) >= 0,
      );
      expect(holding, `${name} batch holding the submission`).to.be.greaterThan(appendedAt).and.lessThan(readableAt);
      const batch = seen[holding]!.value as ProjectionBatchTrace;
      expect(batch.endedAt).to.be.at.least(batch.startedAt);
      expect(batch.read).to.be.greaterThan(0);
    }
  });
});
