/**
 * The one error middleware: every failure leaves as the family's envelope (or the exact fixed
 * body the spec gives for authentication failures). An unexpected exception is logged with
 * its stack and answered with the family's 500, carrying the request id and no stack trace.
 */
import type { Context, Next } from 'koa';
import type { Logger } from '../platform/logger.js';
import { FixedResponse, HttpProblem, renderProblem, toProblem } from './errors.js';

export function errorMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next) => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body == null) throw new HttpProblem(404, `no route for ${ctx.method} ${ctx.path}`);
    } catch (err) {
      if (err instanceof FixedResponse) {
        ctx.status = err.status;
        ctx.type = err.contentType === 'json' ? 'application/json' : 'text/plain; charset=utf-8';
        ctx.body = err.contentType === 'json' ? JSON.stringify(err.body) : String(err.body);
        for (const [name, value] of Object.entries(err.headers)) ctx.set(name, value);
        return;
      }
      let problem = toProblem(err);
      if (!problem) {
        logger.error({ requestId: ctx.state.requestId, err }, 'unexpected error');
        problem = new HttpProblem(500, 'An internal error occurred; retry later or quote the request id.');
      }
      const rendered = renderProblem(ctx.state.family ?? 'system', problem, ctx);
      ctx.status = rendered.status;
      ctx.body = rendered.body;
      for (const [name, value] of Object.entries(problem.options.headers ?? {})) ctx.set(name, value);
    }
  };
}
