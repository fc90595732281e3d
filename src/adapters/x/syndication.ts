/**
 * The public embed source behind /v1/mb-legacy: `cdn.syndication.twimg.com/tweet-result`, which
 * X's embed script reads without any session. Its shape differs from GraphQL (`user.screen_name`,
 * `favorite_count`, `mediaDetails`, `video.variants`) and it has no view count or source, which
 * are null in the post item.
 */
import { buildUrl } from '../kit/request.ts';
import { headerValue } from '../kit/decode.ts';
import type { Adapter, ParseOutcome, UpstreamResponse } from '../kit/types.ts';
import { bestMp4, isoTimestamp, isRecord, mediaItems } from './parse.ts';
import type { PostItem, PostMedia } from './types.ts';

/** The `token` parameter, computed from the id exactly as X's embed script (react-tweet) does. */
export function syndicationToken(id: string): string {
  return ((Number(id) / 1e15) * Math.PI).toString(36).replace(/(0+|\.)/g, '');
}

const count = (value: unknown): number | null => (typeof value === 'number' && Number.isFinite(value) ? value : null);

/** `mediaDetails` as GraphQL's `extended_entities.media`; a video without `video_info` takes `video.variants`. */
function embedMedia(data: Record<string, any>): PostMedia[] {
  const media = mediaItems(data.mediaDetails);
  const fallback = Array.isArray(data.video?.variants)
    ? bestMp4(data.video.variants.map((v: unknown) => (isRecord(v) ? { content_type: v.type, url: v.src, bitrate: v.bitrate } : v)))
    : null;
  return media.map((item) => (item.type !== 'photo' && item.video_url === null ? { ...item, video_url: fallback } : item));
}

export function parseSyndication(response: UpstreamResponse): ParseOutcome<PostItem> {
  // The embed source answers an unknown or deleted post with a 404 (often empty).
  if (response.status === 404) return { kind: 'not_found', reason: 'no such post' };
  const type = headerValue(response.headers, 'content-type') ?? '';
  if (/html/i.test(type) || /^\s*</.test(response.body)) return { kind: 'blocked', reason: `an HTML page with status ${response.status}` };
  if (response.status !== 200) return { kind: 'blocked', reason: `status ${response.status}` };
  let data: unknown;
  try {
    data = JSON.parse(response.body);
  } catch {
    return { kind: 'changed', reason: 'an answer that is not JSON' };
  }
  if (!isRecord(data) || Object.keys(data).length === 0) return { kind: 'not_found', reason: 'empty answer' };
  if (data.__typename === 'TweetTombstone' || data.__typename === 'TweetUnavailable' || data.tombstone) return { kind: 'not_found', reason: 'tombstone' };
  const user = data.user;
  if (typeof data.id_str !== 'string' || !isRecord(user) || typeof user.screen_name !== 'string' || typeof data.text !== 'string') {
    return { kind: 'changed', reason: 'an embed answer without id_str, text or user.screen_name' };
  }
  return {
    kind: 'ok',
    value: {
      id: data.id_str,
      tweet_url: `https://x.com/${user.screen_name}/status/${data.id_str}`,
      text: data.text,
      like_count: count(data.favorite_count) ?? 0,
      view_count: null,
      source: null,
      sensitive: data.possibly_sensitive === true,
      media: embedMedia(data),
      created_at: isoTimestamp(data.created_at),
      author: { id: typeof user.id_str === 'string' ? user.id_str : '', username: user.screen_name, name: typeof user.name === 'string' ? user.name : user.screen_name },
      reply_count: count(data.conversation_count),
      retweet_count: count(data.retweet_count),
      quote_count: count(data.quote_count),
      lang: typeof data.lang === 'string' ? data.lang : null,
    },
  };
}

/** GET /tweet-result?id=<id>&token=<token> on the embed source. */
export const syndicationAdapter: Adapter<{ id: string }, PostItem> = {
  upstream: 'x-syndication',
  operation: 'tweet-result',
  buildRequest: ({ id }, { baseUrl }) => ({
    url: buildUrl(baseUrl, 'tweet-result', { id, lang: 'en', token: syndicationToken(id) }),
    method: 'GET',
    headers: { accept: 'application/json' },
  }),
  parse: (response) => parseSyndication(response),
};
