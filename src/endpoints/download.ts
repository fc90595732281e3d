/** Fetches a user-supplied document through the outbound client, mapping every failure to 400. */
import { httpErrors } from '../core/errors.ts';
import { OutboundError, type OutboundClient } from '../outbound/types.ts';

export const DOWNLOAD_FAILED = 'Unable to download the file.';

/** Size caps on decoded bytes (docs/spec/contract.md §6). */
export const MAX_BYTES = { pdf: 50 * 1024 * 1024, image: 20 * 1024 * 1024, page: 10 * 1024 * 1024 } as const;

export async function downloadDocument(outbound: OutboundClient, url: string, maxBytes: number, signal: AbortSignal): Promise<Buffer> {
  try {
    const response = await outbound.fetch(url, { method: 'GET', maxBytes, signal, headers: { accept: '*/*' } });
    if (response.status < 200 || response.status >= 300 || response.body.length === 0) throw httpErrors.badRequest(DOWNLOAD_FAILED);
    return response.body;
  } catch (error) {
    if (error instanceof OutboundError) throw httpErrors.badRequest(DOWNLOAD_FAILED);
    throw error;
  }
}
