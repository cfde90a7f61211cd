/**
 * A rule of the domain was broken by a command. The HTTP edge maps `code` to the status and
 * envelope of its API family; `path` names the offending field where there is one.
 */
export type DomainErrorKind = 'validation' | 'not_found' | 'conflict' | 'precondition' | 'forbidden';

export class DomainError extends Error {
  override readonly name = 'DomainError';
  constructor(
    readonly kind: DomainErrorKind,
    readonly code: string,
    message: string,
    readonly path: readonly string[] = [],
  ) {
    super(message);
  }
}
