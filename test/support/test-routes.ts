/** Routes mounted only in tests, to exercise the shared HTTP mechanisms on a real server. */
import Router from '@koa/router';
import { randomUUID } from 'node:crypto';
import type { FamilyRoutes } from '../../http/app.js';
import { requireWritePermission } from '../../http/auth.js';
import { HttpProblem } from '../../http/errors.js';
import { idempotent } from '../../http/idempotency.js';

export const executions = { things: 0 };

export function testFamily(): FamilyRoutes {
  const prefix = '/v3/connect/test';
  return {
    family: 'connect',
    prefix,
    routes(deps) {
      const r = new Router({ prefix });
      const idem = idempotent({ store: deps.store, clock: deps.clock });
      r.get('/ping', (ctx) => {
        ctx.body = { success: true, data: { workspaceId: ctx.state.auth.workspaceId } };
      });
      r.post('/things', idem, async (ctx) => {
        requireWritePermission(ctx);
        executions.things++;
        await new Promise((res) => setTimeout(res, 100));
        ctx.status = 201;
        ctx.set('ETag', '"1"');
        ctx.body = { success: true, data: { id: randomUUID(), echo: ctx.request.body ?? null, replayed: false } };
      });
      r.post('/refuse', idem, () => {
        throw new HttpProblem(400, 'the thing is not acceptable', { path: ['thing', 'size'] });
      });
      r.get('/boom', () => {
        throw new Error('secret internal detail');
      });
      return r;
    },
  };
}
