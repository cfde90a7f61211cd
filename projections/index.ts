/** Every projection of the service, in the order they are started and rebuilt. */
import type { Projection } from './projection.js';
import { workspacesProjection } from './workspaces.js';

export function allProjections(): Projection[] {
  return [workspacesProjection];
}

export function projectionByName(name: string): Projection | undefined {
  return allProjections().find((p) => p.name === name);
}
