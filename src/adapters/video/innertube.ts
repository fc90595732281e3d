/**
 * InnerTube, YouTube's own JSON API (`/youtubei/v1/<endpoint>`), as the web client speaks it:
 * request bodies, the reading of its text objects and counts, and the verdict on answers that
 * are not a readable JSON document (consent walls, bot checks, rate limits).
 */
import type { ParseOutcome, UpstreamRequest, UpstreamResponse } from '../kit/types.ts';
import { buildUrl } from '../kit/request.ts';
import { jsonOrUndefined } from '../kit/decode.ts';
import { isObject, type Json } from '../../core/json.ts';

export const YOUTUBE_DEFAULT_URL = 'https://www.youtube.com';
/** The web client's name and a recent version: InnerTube answers what this client would render. */
export const WEB_CLIENT = { clientName: 'WEB', clientVersion: '2.20260114.01.00' } as const;

// Loose JSON, read defensively: every renderer field may be missing in some generation.
export { isObject, type Json };
export const objectAt = (value: unknown, ...path: string[]): Json | undefined => {
  let current: unknown = value;
  for (const key of path) current = isObject(current) ? current[key] : undefined;
  return isObject(current) ? current : undefined;
};
export const arrayAt = (value: unknown, ...path: string[]): unknown[] => {
  let current: unknown = value;
  for (const key of path) current = isObject(current) ? current[key] : undefined;
  return Array.isArray(current) ? current : [];
};
export const stringAt = (value: unknown, ...path: string[]): string | undefined => {
  let current: unknown = value;
  for (const key of path) current = isObject(current) ? current[key] : undefined;
  return typeof current === 'string' ? current : undefined;
};

/** Every object under `value` that has `key`, in document order (renderers nest at varying depths). */
export function findAll(value: unknown, key: string, found: Json[] = []): Json[] {
  if (Array.isArray(value)) for (const item of value) findAll(item, key, found);
  else if (isObject(value)) {
    for (const [name, child] of Object.entries(value)) {
      if (name === key && isObject(child)) found.push(child);
      findAll(child, key, found);
    }
  }
  return found;
}

/** The text of an InnerTube text object: `{simpleText}`, `{runs:[{text}]}` or `{content}` (view models). */
export function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (!isObject(value)) return undefined;
  if (typeof value.simpleText === 'string') return value.simpleText;
  if (typeof value.content === 'string') return value.content;
  if (Array.isArray(value.runs)) return value.runs.map((run) => (isObject(run) && typeof run.text === 'string' ? run.text : '')).join('');
  return undefined;
}

/**
 * An exact count from text that spells every digit ("1,234,567 views", "327", "No views"), or
 * null when the text is abbreviated ("1.2M views", "9.8k") or says nothing countable: a guess
 * is worse than no number.
 */
export function exactCount(text: string | undefined): number | null {
  if (text === undefined) return null;
  const trimmed = text.trim();
  if (/^no\b/i.test(trimmed)) return 0;
  const match = /^(\d{1,3}(?:[,\u00a0\u202f ]\d{3})+|\d+)(?:\s+(?:\p{L}[\p{L} ]*| ))?$/u.exec(trimmed);
  if (!match) return null;
  const value = Number(match[1].replace(/\D/g, ''));
  return Number.isSafeInteger(value) ? value : null;
}

/** A raw integer string InnerTube sends as such (`viewCount: "12916"`). */
export function rawInteger(value: unknown): number | null {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return value;
  if (typeof value !== 'string' || !/^\d+$/.test(value)) return null;
  const number = Number(value);
  return Number.isSafeInteger(number) ? number : null;
}

/** "1:02:03" or "12:34" → seconds; null otherwise. */
export function clockSeconds(text: string | undefined): number | null {
  if (text === undefined || !/^\d+(?::\d{1,2}){1,2}$/.test(text.trim())) return null;
  return text.trim().split(':').reduce((total, part) => total * 60 + Number(part), 0);
}

export const watchUrl = (id: string) => `https://www.youtube.com/watch?v=${id}`;
export const channelUrl = (id: string) => `https://www.youtube.com/channel/${id}`;
export const thumbnailUrl = (id: string) => `https://i.ytimg.com/vi/${id}/hqdefault.jpg`;

/** One InnerTube POST: the web client's context plus the endpoint's own fields. */
export function innertubeRequest(baseUrl: string, endpoint: string, fields: Json): UpstreamRequest {
  return {
    url: buildUrl(baseUrl, `youtubei/v1/${endpoint}`, { prettyPrint: 'false' }),
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      'accept-language': 'en-US,en;q=0.9',
      'x-youtube-client-name': '1',
      'x-youtube-client-version': WEB_CLIENT.clientVersion,
      // "Reject all" on the EU consent wall, so an EU address is not redirected to it.
      cookie: 'SOCS=CAI',
      origin: 'https://www.youtube.com',
      'user-agent': 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
    },
    body: JSON.stringify({ context: { client: { ...WEB_CLIENT, hl: 'en', gl: 'US' } }, ...fields }),
  };
}

const BOT_CHECK = /confirm you(?:'|’)re not a bot|unusual traffic|our systems have detected/i;

/** Whether a text says YouTube wants a human (the bot check), whatever wraps it. */
export const isBotCheck = (text: string | undefined): boolean => text !== undefined && BOT_CHECK.test(text);

/**
 * The JSON document of an InnerTube answer, or the outcome that replaces it: a consent wall, a
 * bot check or a rate limit is `blocked`; 404 and INVALID_ARGUMENT (an id InnerTube rejects) are
 * `not_found`; anything else that is not JSON is `changed`.
 */
export function openDocument(response: UpstreamResponse): { json: Json } | { outcome: ParseOutcome<never> } {
  let host = '';
  try {
    host = new URL(response.url).hostname;
  } catch {
    host = '';
  }
  if (host.startsWith('consent.')) return { outcome: { kind: 'blocked', reason: 'redirected to the consent page' } };
  if (response.status === 429) return { outcome: { kind: 'blocked', reason: 'rate-limited (429)' } };
  const parsed = jsonOrUndefined(response.body);
  if (!isObject(parsed)) {
    if (/consent\.youtube\.com|before you continue to youtube/i.test(response.body)) return { outcome: { kind: 'blocked', reason: 'consent page' } };
    if (isBotCheck(response.body) || response.status === 403) return { outcome: { kind: 'blocked', reason: `bot check or refusal (${response.status})` } };
    if (response.status >= 500) return { outcome: { kind: 'changed', reason: `upstream error ${response.status}` } };
    return { outcome: { kind: 'changed', reason: `not a JSON document (${response.status})` } };
  }
  const error = objectAt(parsed, 'error');
  if (error) {
    const status = stringAt(error, 'status');
    if (response.status === 404 || status === 'NOT_FOUND' || status === 'INVALID_ARGUMENT') return { outcome: { kind: 'not_found', reason: stringAt(error, 'message') } };
    if (response.status === 429 || status === 'RESOURCE_EXHAUSTED') return { outcome: { kind: 'blocked', reason: 'rate-limited' } };
    if (status === 'PERMISSION_DENIED' || status === 'UNAUTHENTICATED') return { outcome: { kind: 'blocked', reason: `refused (${status})` } };
    return { outcome: { kind: 'changed', reason: `error answer ${response.status} ${status ?? ''}`.trim() } };
  }
  if (response.status !== 200) return { outcome: { kind: 'changed', reason: `unexpected status ${response.status}` } };
  return { json: parsed };
}

/**
 * The continuation token of a `continuationItemRenderer` (or of any object holding one), else the
 * older generation's `continuations[].nextContinuationData` of a list renderer.
 */
export function continuationToken(value: unknown): string | null {
  for (const item of findAll(value, 'continuationItemRenderer')) {
    const token = stringAt(item, 'continuationEndpoint', 'continuationCommand', 'token') ?? stringAt(item, 'button', 'buttonRenderer', 'command', 'continuationCommand', 'token');
    if (token) return token;
  }
  for (const data of findAll(value, 'nextContinuationData')) {
    const token = stringAt(data, 'continuation');
    if (token) return token;
  }
  return null;
}

/**
 * The older continuation answer: `continuationContents.<kind>Continuation` (`gridContinuation`,
 * `playlistVideoListContinuation`, `itemSectionContinuation`…) with its `items` or `contents`, and
 * the list's own `continuations` for the page after. Null when the answer is not of that generation.
 */
export function legacyContinuation(json: Json): { items: unknown[]; next: string | null } | null {
  const contents = objectAt(json, 'continuationContents');
  if (!contents) return null;
  for (const value of Object.values(contents)) {
    if (!isObject(value)) continue;
    const items = Array.isArray(value.items) ? value.items : Array.isArray(value.contents) ? value.contents : null;
    if (items) return { items, next: continuationToken({ continuations: value.continuations }) };
  }
  return null;
}

/** The items of a continuation answer: every `continuationItems` of its received actions. */
export function continuationItems(json: Json): { found: boolean; items: unknown[] } {
  const actions = [...arrayAt(json, 'onResponseReceivedActions'), ...arrayAt(json, 'onResponseReceivedCommands'), ...arrayAt(json, 'onResponseReceivedEndpoints')];
  const items: unknown[] = [];
  let found = false;
  for (const action of actions) {
    if (!isObject(action)) continue;
    for (const value of Object.values(action)) {
      if (isObject(value) && Array.isArray(value.continuationItems)) {
        found = true;
        items.push(...value.continuationItems);
      }
    }
  }
  return { found, items };
}
