/**
 * ASP authorizations (stream `aspauthorization-<hash of workspace, environment, tin, email>`):
 * the prerequisite of onboarding. A company may be onboarded in an environment only when an
 * authorization for its TIN and contact email exists there; it also carries the registered
 * details (legal names, VAT TRN) the onboarding response reports.
 */
import { createHash } from 'node:crypto';
import * as t from 'io-ts';
import { registerDecider } from '../aggregates.js';
import type { Decider, DomainEvent } from '../decider.js';
import { DomainError } from '../errors.js';
import { defineEvent } from '../events/envelope.js';
import { ConnectErrorCodes, PLATFORM_ENVIRONMENTS, isStorableText, oneOf, type PlatformEnvironment } from './values.js';

export const AspAuthorizationCreated = defineEvent({
  type: 'AspAuthorizationCreated',
  version: 1,
  codec: t.type({
    authorizationId: t.string,
    workspaceId: t.string,
    environment: oneOf(PLATFORM_ENVIRONMENTS, 'PlatformEnvironment'),
    tin: t.string,
    email: t.string,
    legalName: t.union([t.string, t.null]),
    legalNameArabic: t.union([t.string, t.null]),
    vatTrn: t.union([t.string, t.null]),
    at: t.string,
  }),
});

export type AspAuthorization = t.TypeOf<typeof AspAuthorizationCreated.codec>;
export type AspAuthorizationEvent = DomainEvent<'AspAuthorizationCreated', AspAuthorization>;

export type AspAuthorizationCommand = {
  type: 'CreateAspAuthorization';
  authorizationId: string;
  workspaceId: string;
  environment: PlatformEnvironment;
  tin: string;
  email: string;
  legalName: string | null;
  legalNameArabic: string | null;
  vatTrn: string | null;
  at: string;
};

export interface AspAuthorizationState {
  authorization: AspAuthorization | null;
}

/** Emails match case-insensitively; everything else exactly. */
export const normalizeEmail = (email: string) => email.trim().toLowerCase();

export function aspAuthorizationStream(workspaceId: string, environment: string, tin: string, email: string): string {
  const key = createHash('sha256').update(`${workspaceId}\n${environment}\n${tin}\n${normalizeEmail(email)}`).digest('hex');
  return `aspauthorization-${key.slice(0, 40)}`;
}

const invalid = (path: string, message: string): never => {
  throw new DomainError('validation', ConnectErrorCodes.validation, message, [path]);
};

export const aspAuthorizationDecider: Decider<AspAuthorizationCommand, AspAuthorizationState, AspAuthorizationEvent> = {
  category: 'aspauthorization',
  initialState: { authorization: null },
  events: { AspAuthorizationCreated },
  decide(command, state) {
    if (state.authorization) return []; // the same authorization again: nothing to record
    if (!/^\d{10}$/.test(command.tin)) invalid('tin', 'tin must be exactly 10 digits');
    if (!/^[^\s@]+@[^\s@]+\.[^\s@]+$/.test(command.email) || command.email.length > 254) invalid('email', 'email must be an email address');
    if (command.vatTrn !== null && !/^\d{15}$/.test(command.vatTrn)) invalid('vatTrn', 'vatTrn must be exactly 15 digits');
    for (const [field, value] of [['legalName', command.legalName], ['legalNameArabic', command.legalNameArabic]] as const) {
      if (value !== null && (value.trim() === '' || value.length > 255 || !isStorableText(value))) {
        invalid(field, `${field} must be 1 to 255 characters`);
      }
    }
    const { type: _type, ...data } = command;
    return [{ type: 'AspAuthorizationCreated', data: { ...data, email: command.email.trim() } }];
  },
  evolve(_state, event) {
    return { authorization: event.data };
  },
};

registerDecider(aspAuthorizationDecider);
