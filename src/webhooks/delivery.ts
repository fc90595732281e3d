/**
 * One delivery attempt of one webhook event (docs/webhooks.md). The queue decides when to try
 * again (`webhookBackoff`); this module only sends, through the outbound client, so every address
 * rule of the contract's §6 applies at delivery time: the URL was public when the job was created,
 * but what it resolves to now is what counts.
 */
import { OutboundError, type OutboundClient } from '../outbound/types.ts';
import { signWebhook, WEBHOOK_SIGNATURE_HEADER } from './signature.ts';

export const WEBHOOK_EVENT_ID_HEADER = 'Gleaner-Event-Id';
export const WEBHOOK_USER_AGENT = 'gleaner-webhooks/1';
export const WEBHOOK_TIMEOUT_MS = 10_000;
/**
 * Only the status matters, but the client reads the answer's body whole and refuses one past its
 * cap without saying its status; so the cap is generous for an acknowledgement, and small for memory.
 */
export const WEBHOOK_RESPONSE_MAX_BYTES = 64 * 1024;

/**
 * - `delivered`: the receiver answered 2xx;
 * - `retry`: another status (a 3xx included: redirects are not followed), a timeout or a network
 *   failure; worth trying again later;
 * - `refused`: the URL can never be delivered to (not http(s), or a non-public address); never retried.
 */
export type WebhookDelivery = { kind: 'delivered'; status: number } | { kind: 'retry'; status?: number; error: string } | { kind: 'refused'; error: string };

export interface WebhookDeliveryOptions {
  /** The worker is stopping: the attempt is abandoned and the call rejects with the signal's reason. */
  signal?: AbortSignal;
  timeoutMs?: number;
  /** Clock for the signature's timestamp (ms since the epoch). */
  now?: () => number;
}

/** Sends `event.body` as is, signed with `secret`, and says what came of it. */
export async function deliverWebhook(
  outbound: OutboundClient,
  event: { id: string; url: string; body: string },
  secret: string,
  options: WebhookDeliveryOptions = {},
): Promise<WebhookDelivery> {
  const timeoutMs = options.timeoutMs ?? WEBHOOK_TIMEOUT_MS;
  const timestamp = Math.floor((options.now ?? Date.now)() / 1000);
  let status: number;
  try {
    const response = await outbound.fetch(event.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'user-agent': WEBHOOK_USER_AGENT,
        [WEBHOOK_SIGNATURE_HEADER]: signWebhook(secret, event.body, timestamp),
        [WEBHOOK_EVENT_ID_HEADER]: event.id,
      },
      body: event.body,
      maxBytes: WEBHOOK_RESPONSE_MAX_BYTES,
      timeoutMs,
      maxRedirects: 0,
      signal: options.signal,
    });
    status = response.status;
  } catch (error) {
    if (options.signal?.aborted) throw options.signal.reason;
    return failure(error, timeoutMs);
  }
  if (status >= 200 && status < 300) return { kind: 'delivered', status };
  if (status >= 300 && status < 400) return { kind: 'retry', status, error: `The receiver answered ${status}; redirects are not followed.` };
  return { kind: 'retry', status, error: `The receiver answered ${status}.` };
}

/** Longest network failure text kept: it is stored with the event and shown to its owner. */
const MAX_ERROR_LENGTH = 200;

function failure(error: unknown, timeoutMs: number): WebhookDelivery {
  if (!(error instanceof OutboundError)) throw error;
  switch (error.code) {
    // The address behind the name is not told: a webhook URL must not become a way to map
    // what names resolve to inside the service's network.
    case 'blocked_address':
      return { kind: 'refused', error: 'The webhook URL resolves to a private address; webhooks are only sent to public addresses.' };
    case 'invalid_url':
      return { kind: 'refused', error: 'The webhook URL is not a valid http or https URL.' };
    case 'blocked_host':
      return { kind: 'refused', error: 'The webhook URL is not allowed.' };
    case 'timeout':
      return { kind: 'retry', error: `The receiver did not answer within ${timeoutMs / 1000} s.` };
    case 'too_large':
      return { kind: 'retry', error: `The receiver's answer was longer than ${WEBHOOK_RESPONSE_MAX_BYTES / 1024} KB; answer with a short body.` };
    case 'too_many_redirects':
    case 'network':
      return { kind: 'retry', error: `The receiver could not be reached: ${error.message}`.slice(0, MAX_ERROR_LENGTH) };
  }
}

/**
 * When to try again, as the webhook queue does it (exponential back-off with jitter, capped): the
 * n-th retry waits between base·2ⁿ⁻¹ and twice that, at most an hour, so events that failed
 * together do not all come back together. With the 30 s base: 30–60 s, 1–2 min, 2–4 min … then
 * hourly. The queue gives an event up `windowSeconds` after it was created and marks it failed.
 */
export const WEBHOOK_RETRY_WINDOW_SECONDS = 86_400;
export const WEBHOOK_RETRY_BASE_SECONDS = 30;
export const WEBHOOK_RETRY_MAX_DELAY_SECONDS = 3_600;

export const webhookBackoff = {
  windowSeconds: WEBHOOK_RETRY_WINDOW_SECONDS,
  /**
   * Seconds to wait after `attempt` failed attempts (1 after the first) before the next one.
   * `random` (in [0, 1)) is the jitter's source; pass a fixed one for a repeatable answer.
   */
  nextDelaySeconds(attempt: number, options: { baseSeconds?: number; random?: () => number } = {}): number {
    const base = Math.max(1, options.baseSeconds ?? WEBHOOK_RETRY_BASE_SECONDS);
    const doublings = Math.max(0, Math.floor(Number.isFinite(attempt) ? attempt : 1) - 1);
    // The power is capped first, so a large attempt count cannot overflow to Infinity.
    const delay = base * 2 ** Math.min(doublings, 20) * (1 + (options.random ?? Math.random)());
    return Math.min(WEBHOOK_RETRY_MAX_DELAY_SECONDS, Math.round(delay));
  },
};

export const nextDelaySeconds = webhookBackoff.nextDelaySeconds;
