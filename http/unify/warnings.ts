/**
 * What a new-format answer says about the payload beyond validation: members the service does not
 * read (a warning naming the closest known name), and, on a 422, the near miss behind a missing
 * required field (`documentNumbr` next to a missing `documentNumber`).
 */
import { isNearMiss, unknownFields, type UnknownField } from '../../domain/validation/codec.js';
import { IDENTITY_TEMPLATE_ID } from '../../domain/validation/index.js';

export interface UnknownFieldWarning {
  code: 'UNKNOWN_FIELD';
  message: string;
  field: null;
  payloadField: string;
  suggestion: string | null;
}

/** The payload's unknown members (identity mapping: the payload is the core document). */
export function payloadUnknownFields(payload: unknown, templateId: string): UnknownField[] {
  return templateId === IDENTITY_TEMPLATE_ID ? unknownFields(payload) : [];
}

export function unknownFieldWarnings(unknown: readonly UnknownField[]): UnknownFieldWarning[] {
  return unknown.map((u) => ({
    code: 'UNKNOWN_FIELD',
    message: `${u.path} is not read by the service${u.closest ? `; the closest known name is "${u.closest}"` : ''}`,
    field: null,
    payloadField: u.path,
    suggestion: u.closest,
  }));
}

/**
 * The message of a finding on `payloadField`, with the unknown sibling member that is a near miss
 * of its name, if there is one: "… (the payload has header.documentNumbr: a misspelling of documentNumber?)".
 */
export function withNearMiss(message: string, payloadField: string | null, unknown: readonly UnknownField[]): string {
  if (!payloadField) return message;
  const cut = payloadField.lastIndexOf('.');
  const parent = cut < 0 ? '' : payloadField.slice(0, cut);
  const name = payloadField.slice(cut + 1);
  const miss = unknown.find((u) => {
    const i = u.path.lastIndexOf('.');
    return (i < 0 ? '' : u.path.slice(0, i)) === parent && u.closest === name && isNearMiss(String(u.segments[u.segments.length - 1]), name);
  });
  return miss ? `${message} (the payload has ${miss.path}, which the service does not read: a misspelling of ${name}?)` : message;
}
