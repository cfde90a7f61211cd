/**
 * Reservation of a source name and version in a workspace (stream
 * `companysource-<hash of workspace, name, version>`). A source is created only after its
 * name/version is claimed here with an append that expects the stream's current revision, so
 * two requests racing for the same name cannot both win. A claim is released when onboarding
 * fails after claiming, or when PATCH moves the source to another version. A claim whose
 * holder never recorded its source (the request died in between) may be taken over once stale.
 */
import { createHash } from 'node:crypto';
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { defineEvent } from '../events/envelope.js';
import { ConnectErrorCodes } from './values.js';

export const CompanySourceClaimed = defineEvent({
  type: 'CompanySourceClaimed',
  version: 1,
  codec: t.type({
    workspaceId: t.string,
    sourceName: t.string,
    sourceVersion: t.string,
    companyId: t.string,
    sourceId: t.string,
    at: t.string,
  }),
});
export const CompanySourceReleased = defineEvent({
  type: 'CompanySourceReleased',
  version: 1,
  codec: t.type({ sourceId: t.string, reason: t.string, at: t.string }),
});

export type SourceClaimEvent =
  | DomainEvent<'CompanySourceClaimed', t.TypeOf<typeof CompanySourceClaimed.codec>>
  | DomainEvent<'CompanySourceReleased', t.TypeOf<typeof CompanySourceReleased.codec>>;

export type SourceClaimCommand =
  | {
      type: 'ClaimSource';
      workspaceId: string;
      sourceName: string;
      sourceVersion: string;
      companyId: string;
      sourceId: string;
      at: string;
      /** The stale claim (its source id) the caller has verified it may take over. */
      takeOverFrom?: string | null;
    }
  | { type: 'ReleaseSource'; sourceId: string; reason: string; at: string };

export interface SourceClaimState {
  holder: { companyId: string; sourceId: string; claimedAt: string } | null;
}

export function sourceClaimStream(workspaceId: string, sourceName: string, sourceVersion: string): string {
  const key = createHash('sha256').update(`${workspaceId}\n${sourceName}\n${sourceVersion}`).digest('hex');
  return `companysource-${key.slice(0, 40)}`;
}

export const sourceClaimDecider: Decider<SourceClaimCommand, SourceClaimState, SourceClaimEvent> = {
  category: 'companysource',
  initialState: { holder: null },
  events: { CompanySourceClaimed, CompanySourceReleased },
  decide(command, state) {
    switch (command.type) {
      case 'ClaimSource': {
        const { type: _t, takeOverFrom, ...data } = command;
        if (state.holder) {
          if (state.holder.sourceId === command.sourceId) return [];
          if (!takeOverFrom || takeOverFrom !== state.holder.sourceId) {
            throw new DomainError(
              'conflict',
              ConnectErrorCodes.sourceExists,
              `the source ${command.sourceName} version ${command.sourceVersion} exists already in this workspace`,
            );
          }
        }
        return [{ type: 'CompanySourceClaimed', data }];
      }
      case 'ReleaseSource':
        if (state.holder?.sourceId !== command.sourceId) return [];
        return [{ type: 'CompanySourceReleased', data: { sourceId: command.sourceId, reason: command.reason, at: command.at } }];
    }
  },
  evolve(_state, event) {
    switch (event.type) {
      case 'CompanySourceClaimed':
        return { holder: { companyId: event.data.companyId, sourceId: event.data.sourceId, claimedAt: event.data.at } };
      case 'CompanySourceReleased':
        return { holder: null };
    }
  },
};

registerDecider(sourceClaimDecider);
