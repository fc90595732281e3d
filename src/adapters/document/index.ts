/**
 * Documents a user points /v1/pdf and /v1/image at: one GET of the URL through the upstream
 * runtime, its bytes as they came. Any site, so neither retried nor suspended: one site failing
 * says nothing of another, and the user decides whether to ask again.
 */
import type { UpstreamRuntime } from '../kit/runtime.ts';
import type { Adapter, CallContext, CallOutcome, ParseOutcome, UpstreamResponse } from '../kit/types.ts';

export type DocumentKind = 'pdf' | 'image';

/** A 2xx answer with a body is the document; a 404 or 410 is no document; anything else the site refusing. */
export function parseDocument(response: UpstreamResponse): ParseOutcome<Uint8Array> {
  if (response.status === 404 || response.status === 410) return { kind: 'not_found', reason: `answered ${response.status}` };
  if (response.status < 200 || response.status >= 300) return { kind: 'blocked', reason: `answered ${response.status}` };
  const bytes = response.bytes ?? Buffer.from(response.body, 'utf8');
  if (bytes.length === 0) return { kind: 'empty' };
  return { kind: 'ok', value: bytes };
}

function documentAdapter(kind: DocumentKind): Adapter<{ url: string }, Uint8Array> {
  return {
    upstream: 'document',
    operation: kind,
    buildRequest: ({ url }) => ({ url, method: 'GET', headers: { accept: '*/*' } }),
    parse: parseDocument,
  };
}

export const DOCUMENT_ADAPTERS = { pdf: documentAdapter('pdf'), image: documentAdapter('image') } as const;

export interface DocumentFetcher {
  /** The document's bytes, or the outcome that says why there are none. */
  download(url: string, kind: DocumentKind, maxBytes: number, context: CallContext): Promise<CallOutcome<Uint8Array>>;
}

export function createDocumentFetcher(runtime: UpstreamRuntime, timeoutMs: number): DocumentFetcher {
  const upstream = runtime.upstream({ timeoutMs, retry: false, breaker: false });
  return {
    download: (url, kind, maxBytes, context) => upstream.call(DOCUMENT_ADAPTERS[kind], { url }, context, { maxBytes }),
  };
}
