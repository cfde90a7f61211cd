/**
 * How the PostgreSQL event store keeps an artifact's bytes (es_artifacts.encoding, issue 19).
 *
 * The store compresses an artifact itself, with Brotli at quality 1, before it sends it, and
 * PostgreSQL keeps the bytes as they come (the column's storage is EXTERNAL: no compression of its
 * own). PostgreSQL's TOAST compression (pglz, the only method the embedded server has) and its
 * base64 decoding of the parameter had been the largest items of its CPU under a submission load:
 * about 0.5 ms for each 30 KB XML, where Brotli takes about 0.08 ms of CPU for the same ratio
 * (about 10:1) and sends a tenth of the bytes. It runs on the event loop: handing each artifact to
 * Node's thread pool cost more CPU (0.18 against 0.08 ms) than the compression itself. A 256 KB
 * window: allocating Brotli's default 4 MB one for every artifact took more time than compressing.
 *
 * `identity`: the bytes themselves (rows written before this change, whose TOAST compression
 * PostgreSQL undoes on read; the inline artifacts of events from before schema v2, which the
 * documents projection stores as it meets them; and any artifact Brotli would not make smaller).
 * The table checks the hash of those against their key; the store checks every artifact's hash
 * before it compresses it, and `npm run audit -- artifacts` checks every stored artifact after
 * decompressing it.
 */
import zlib from 'node:zlib';

export type ArtifactEncoding = 'identity' | 'br';

const brotliOptions = (bytes: number): zlib.BrotliOptions => ({
  params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1, [zlib.constants.BROTLI_PARAM_LGWIN]: 18, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: bytes },
});

export interface PackedArtifact {
  readonly encoding: ArtifactEncoding;
  readonly stored: Buffer;
}

/** The bytes to store for `content`, and how they are encoded. */
export function packArtifact(content: Buffer): PackedArtifact {
  const packed = zlib.brotliCompressSync(content, brotliOptions(content.length));
  return packed.length < content.length ? { encoding: 'br', stored: packed } : { encoding: 'identity', stored: content };
}

/** The artifact's bytes from what is stored (throws on an unknown encoding or a corrupt stream). */
export function unpackArtifact(stored: Buffer, encoding: string): Buffer {
  if (encoding === 'identity') return stored;
  if (encoding === 'br') return zlib.brotliDecompressSync(stored);
  throw new RangeError(`unknown artifact encoding: ${encoding}`);
}
