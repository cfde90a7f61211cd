/**
 * `POST /as4` in the OpenAPI document: the AS4 endpoint of the service's Peppol access point,
 * for other access points (not for integrators; the TypeScript client leaves it out). What it
 * says is what http/as4/routes.ts and commands/peppol/as4/receive.ts answer; the access point
 * tests send each answer through the response check.
 */
import { ref, response, type FamilyDocument, type Schema } from '../openapi/schema.js';
import { AS4_PATH } from './routes.js';

/** The tag of the AS4 endpoint (the client generator leaves operations of this tag out). */
export const AS4_TAG = 'Peppol AS4';

const SOAP_12 = 'application/soap+xml';

const multipartBody: Schema = {
  type: 'string',
  format: 'binary',
  description:
    'The raw MIME body, `Content-Type: multipart/related; boundary=…; type="application/soap+xml"` (a preamble before the first boundary is skipped). ' +
    'Part 1: the SOAP 1.2 envelope (`application/soap+xml`, UTF-8) whose header holds `eb:Messaging` (an ebMS 3 UserMessage under the Peppol agreement ' +
    '`urn:fdc:peppol.eu:2017:agreements:tia:ap_provider`, parties typed `urn:fdc:peppol.eu:2017:identifiers:ap`, `originalSender` and `finalRecipient` properties, ' +
    'exactly one payload part referenced as `cid:`) and `wsse:Security` (the sender\'s certificate as BinarySecurityToken; an RSA-SHA256 signature with exclusive ' +
    'C14N and SHA-256 digests over `eb:Messaging`, the empty Body and the attachment; the attachment\'s AES-128-GCM key sent with RSA-OAEP, SHA-256 and MGF1-SHA-256, ' +
    'to this access point\'s certificate). The Body is empty. ' +
    'Part 2: the payload attachment (`application/octet-stream`, with the `Content-ID` the envelope references): the SBDH 1.0 document around the UBL invoice or ' +
    'credit note, gzip-compressed, then encrypted.',
};

const soapBody: Schema = {
  type: 'string',
  description: 'A SOAP 1.2 envelope alone, without attachments. Read, but a Peppol user message needs its encrypted payload attachment, so it is answered with an ebMS error.',
};

const soapAnswer: Schema = {
  type: 'string',
  description:
    'A SOAP 1.2 envelope signed by this access point (RSA-SHA256 over `eb:Messaging` and the Body, its certificate as BinarySecurityToken) carrying an ebMS 3 signal message.',
};

export const as4Document: FamilyDocument = {
  tag: {
    name: AS4_TAG,
    description:
      'The AS4 endpoint of the service\'s Peppol access point (corner 3): other Peppol access points send it invoices for the buyers the service serves (invoices and credit notes become purchases; Peppol invoice responses answer the service\'s own sales documents). ' +
      'Not for integrators (they read received invoices through the purchases operations); the TypeScript client leaves it out. ' +
      'Present only on an instance configured as an access point (otherwise 404). No API key: the sender is authenticated by its WS-Security signature and Peppol certificate.',
  },
  paths: {
    [AS4_PATH]: {
      post: {
        operationId: 'as4Receive',
        summary: 'Receive an AS4 message (Peppol AS4 profile) from another access point',
        description:
          'One ebMS 3 user message in, one signed signal message out, synchronously. The checks, in order: MIME and SOAP packaging; the ebMS header; decryption and ' +
          'signature; the signer\'s certificate (chained to the configured Peppol CAs, its CN the sending party); decompression; the SBDH against the ebMS header ' +
          'and the payload; the receiver participant held by an active company onboarded in production; the UBL itself. The document is then stored (an invoice or credit note as a purchase), ' +
          'and only after the append is durable the signed receipt is answered. A message id or SBDH instance identifier already stored is answered with a receipt ' +
          'again and stores nothing. Every refusal of the message is a signed `eb:Error` with HTTP 200, as the Peppol AS4 profile has it; only a body larger than ' +
          'the bound (PURCHASE_MAX_XML_BYTES plus 256 KiB) is refused at the HTTP level (413), before anything is parsed. Methods other than POST: 405 with `Allow: POST`.',
        tags: [AS4_TAG],
        security: [],
        requestBody: {
          required: true,
          description: 'An AS4 message as the Peppol AS4 profile sends it: SOAP 1.2 with the payload as one compressed, encrypted MIME attachment.',
          content: {
            'multipart/related': { schema: multipartBody },
            [SOAP_12]: { schema: soapBody },
          },
        },
        responses: {
          200: {
            description:
              'A signed signal message (`application/soap+xml;charset=UTF-8`). Either a receipt: `eb:Receipt` referring to the message id, with ' +
              '`ebbp:NonRepudiationInformation` repeating the digest of every part the sender signed (the document is stored, now or before). ' +
              'Or a refusal, nothing stored: `eb:Error` referring to the message id when it could be read, with its code and a description of the failed check: ' +
              '`EBMS:0007` (MIME: neither multipart/related nor application/soap+xml, no boundary, unreadable parts), `EBMS:0009` (not a well-formed SOAP 1.2 ' +
              'envelope, a DOCTYPE, no `eb:Messaging` or UserMessage, no originalSender/finalRecipient), `EBMS:0010` (not the Peppol agreement), `EBMS:0102` (any ' +
              'WS-Security failure: decryption, signature, an untrusted or expired certificate), `EBMS:0303` (broken gzip or a compression bomb), `EBMS:0003` (values ' +
              'that do not agree: parties, SBDH against the header or the payload, not exactly one payload; a UBL document that fails its checks, e.g. ' +
              '`XML_SCHEMA_INVALID`), `EBMS:0004` (an unreadable SBDH, or a receiver participant the service does not serve: `PEPPOL:NOT_SERVICED`).',
            content: { [SOAP_12]: { schema: soapAnswer } },
          },
          400: response('`bad_request`: the request body could not be read (the connection broke off before the announced length arrived).', ref('SystemError')),
          404: response('`not_found`: this instance is not configured as a Peppol access point, so it has no AS4 endpoint.', ref('SystemError')),
          413: response('`payload_too_large`: the body is larger than PURCHASE_MAX_XML_BYTES plus 256 KiB; refused before anything is parsed (no ebMS answer).', ref('SystemError')),
          503: {
            description:
              "The endpoint's worker threads have as many messages waiting as their queue holds (64 per thread): the message was not read, nothing stored; the sender retries after Retry-After.",
            headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'string' }, required: true } },
            content: { 'text/plain': { schema: { type: 'string' } } },
          },
          500: response('`internal`: the service failed (e.g. the database was unreachable while storing); nothing was answered for the message, the sender retries.', ref('SystemError')),
        },
      },
    },
  },
};
