/**
 * Delivery policy: where a document goes, how failed attempts are retried, and which sandbox
 * scenario a document asks for. Pure.
 */
export type Destination = 'ZATCA' | 'MYINVOIS' | 'PEPPOL';

export function destinationFor(country: string): Destination | null {
  switch (country) {
    case 'SA':
      return 'ZATCA';
    case 'MY':
      return 'MYINVOIS';
    case 'AE':
    case 'BE':
    case 'DE':
      return 'PEPPOL';
    default:
      return null;
  }
}

/** Delay before attempt `attempt + 1` after `attempt` failed: exponential from `baseMs`, capped at `maxMs`. */
export function retryDelayMs(attempt: number, baseMs: number, maxMs: number): number {
  return Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt - 1));
}

/**
 * Sandbox scenarios, chosen by reserved values in the document so a caller can drive every
 * outcome (listed in docs/api/unify.md):
 * - document number prefix `SBX-REJECT`: the authority (or the receiving access point) refuses it;
 * - `SBX-TRANSIENT`: the first attempt fails transiently, the second succeeds;
 * - `SBX-UNAVAILABLE`: every attempt fails transiently until the attempts are exhausted;
 * - `SBX-TIMEOUT`: every attempt times out, so the outcome cannot be determined;
 * - `SBX-BUYER-REJECT` (Peppol): delivered, then the buyer rejects it;
 * - `SBX-REPORTED-EARLIER` (Saudi Arabia): ZATCA answers REPORTED_SUCCESSFULLY_EARLIER;
 * - buyer Peppol id `0000000000` (Peppol): the receiving participant does not exist.
 * Anything else is accepted (Saudi standard invoices CLEARED, simplified REPORTED).
 */
export type SandboxScenario =
  | 'accept'
  | 'reject'
  | 'transient_then_accept'
  | 'unavailable'
  | 'timeout'
  | 'buyer_rejects'
  | 'reported_earlier'
  | 'participant_not_found';

export const SANDBOX_UNKNOWN_PARTICIPANT = '0000000000';

const PREFIXES: readonly [string, SandboxScenario][] = [
  ['SBX-REPORTED-EARLIER', 'reported_earlier'],
  ['SBX-BUYER-REJECT', 'buyer_rejects'],
  ['SBX-UNAVAILABLE', 'unavailable'],
  ['SBX-TRANSIENT', 'transient_then_accept'],
  ['SBX-TIMEOUT', 'timeout'],
  ['SBX-REJECT', 'reject'],
];

export function sandboxScenario(input: { destination: Destination; documentNumber: string | null; buyerPeppolId: string | null }): SandboxScenario {
  if (input.destination === 'PEPPOL' && input.buyerPeppolId === SANDBOX_UNKNOWN_PARTICIPANT) return 'participant_not_found';
  const number = input.documentNumber ?? '';
  for (const [prefix, scenario] of PREFIXES) {
    if (!number.startsWith(prefix)) continue;
    if (scenario === 'buyer_rejects' && input.destination !== 'PEPPOL') return 'accept';
    if (scenario === 'reported_earlier' && input.destination !== 'ZATCA') return 'accept';
    return scenario;
  }
  return 'accept';
}
