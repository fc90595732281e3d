/** Fetches a user-supplied document through the upstream runtime, mapping every failure to 400. */
import { httpErrors } from '../core/errors.ts';
import type { CallContext } from '../adapters/kit/types.ts';
import type { DocumentFetcher, DocumentKind } from '../adapters/document/index.ts';

export const DOWNLOAD_FAILED = 'Unable to download the file.';

/** Size caps on decoded bytes (docs/spec/contract.md §6). */
export const MAX_BYTES = { pdf: 50 * 1024 * 1024, image: 20 * 1024 * 1024, page: 10 * 1024 * 1024 } as const;

export async function downloadDocument(documents: DocumentFetcher, url: string, kind: DocumentKind, context: CallContext): Promise<Buffer> {
  const outcome = await documents.download(url, kind, MAX_BYTES[kind], context);
  if (outcome.kind !== 'ok') throw httpErrors.badRequest(DOWNLOAD_FAILED);
  return Buffer.from(outcome.value.buffer, outcome.value.byteOffset, outcome.value.byteLength);
}
