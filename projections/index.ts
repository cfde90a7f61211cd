/** Every projection of the service, in the order they are started and rebuilt. */
import { aspAuthorizationsProjection, companiesProjection } from './connect.js';
import { creditProjections } from './credits.js';
import { documentsProjection } from './documents.js';
import type { Projection } from './projection.js';
import { webhooksProjection } from './webhooks.js';
import { workspacesProjection } from './workspaces.js';

export function allProjections(): Projection[] {
  return [workspacesProjection, aspAuthorizationsProjection, companiesProjection, documentsProjection, ...creditProjections, webhooksProjection];
}

export function projectionByName(name: string): Projection | undefined {
  return allProjections().find((p) => p.name === name);
}
