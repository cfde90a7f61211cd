/** The API families the server mounts, each under its prefix with its own authentication. */
import Router from '@koa/router';
import type { FamilyRoutes } from './app.js';
import { connectFamily } from './connect/routes.js';
import { creditsFamily } from './credits/routes.js';
import { documentsRoutes } from './documents/routes.js';
import { invoiceQueryRoutes } from './query/routes.js';
import { unifyRoutes } from './unify/routes.js';
import { participantLookupRoutes } from './unify/participants.js';
import { webhooksFamily } from './webhooks/routes.js';

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
    // Before Connect: its prefix /v3/connect/credits is inside Connect's.
    creditsFamily(),
    webhooksFamily(),
    connectFamily(),
    // Before Unify: its prefix /api/v3/unify/participants is inside Unify's.
    participantLookupRoutes(),
    unifyRoutes(),
    documentsRoutes(),
    invoiceQueryRoutes(),
  ];
}
