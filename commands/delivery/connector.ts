/**
 * The connector port: one connector per destination (ZATCA, MyInvois, a Peppol access point)
 * and environment. The document's UUID identifies every attempt, so a destination that
 * already received a document answers with its earlier result instead of registering it again.
 */
import type { DocumentErrorItem, FinalResult } from '../../domain/document/document.js';
import type { Destination } from '../../domain/delivery/policy.js';

export interface DeliveryRequest {
  documentId: string;
  /** The workspace the document belongs to (a destination's credentials may be per company). */
  workspaceId?: string | null;
  uuid: string;
  attempt: number;
  environment: string;
  country: string;
  documentType: { base: string; modifiers: string[]; variant?: string | null };
  documentNumber: string | null;
  coreDocument: unknown;
  /** The e-invoice XML as sent: its bytes (a connector whose destination takes base64 encodes them). */
  xml: Buffer | null;
  /** Saudi Arabia: the invoice hash of this XML (the authority checks the chain). */
  invoiceHash?: string | null;
  /** Saudi Arabia: the EGS unit whose key stamped this XML (its CSID authenticates the call); null when unstamped. */
  zatcaEgsUnitId?: string | null;
}

export type DeliveryAnswer =
  /** Received. `final` when the destination decides at once; else `finalResultDueAt` says when to ask. */
  | {
      kind: 'delivered';
      government: Record<string, unknown>;
      final: FinalResult | null;
      finalResultDueAt: string | null;
      alreadyReceived: boolean;
      /** The document as the destination took or returned it, stored as the document's XML instead of the one built: MyInvois's signed document, ZATCA's cleared invoice. */
      xml?: Buffer | null;
    }
  /** Refused for good (rejected by the authority, unknown receiving participant). */
  | { kind: 'refused'; government: Record<string, unknown> | null; errors: DocumentErrorItem[] }
  /** Not delivered this time; `outcomeUnknown` when the destination may have received it (a time-out). */
  | { kind: 'failed'; error: DocumentErrorItem; outcomeUnknown: boolean };

export interface Connector {
  readonly name: string;
  readonly destination: Destination;
  deliver(request: DeliveryRequest): Promise<DeliveryAnswer>;
  /** The final result of a delivered document, or null while it is not known yet. */
  finalResult(request: DeliveryRequest, government: Record<string, unknown>): Promise<FinalResult | null>;
}

export interface ConnectorRegistry {
  /** The connector for a destination in an environment, or null when none is configured. */
  connectorFor(environment: string, destination: Destination): Connector | null;
  /** Destinations without a connector, per environment (reported by /readyz). */
  missing(): { environment: string; destination: Destination }[];
  /** Connectors in place, per environment and destination, by name (reported by /readyz). */
  present?(): { environment: string; destination: Destination; connector: string }[];
}

/** `base` with `connector` serving its destination in production (e.g. the Peppol access point). */
export function withProductionConnector(base: ConnectorRegistry, connector: Connector): ConnectorRegistry {
  const serves = (environment: string, destination: Destination) => environment === 'production' && destination === connector.destination;
  return {
    connectorFor: (environment, destination) => (serves(environment, destination) ? connector : base.connectorFor(environment, destination)),
    missing: () => base.missing().filter((m) => !serves(m.environment, m.destination)),
    present: () => [
      ...(base.present?.() ?? []).filter((p) => !serves(p.environment, p.destination)),
      { environment: 'production', destination: connector.destination, connector: connector.name },
    ],
  };
}
