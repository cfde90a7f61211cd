/** The API families the server mounts, each under its prefix with its own authentication. */
import Router from '@koa/router';
import type { FamilyRoutes } from './app.js';

/**
 * Families whose endpoints are not built yet still authenticate and answer unknown routes
 * with a 404 in their own envelope.
 */
const family = (name: FamilyRoutes['family'], prefix: string): FamilyRoutes => ({
  family: name,
  prefix,
  routes: () => new Router({ prefix }),
});

export function apiFamilies(): FamilyRoutes[] {
  return [
    family('connect', '/v3/connect'),
    family('unify', '/api/v3/unify'),
    family('documents', '/api/v3/documents'),
    family('invoice_query', '/invoices/query'),
  ];
}
