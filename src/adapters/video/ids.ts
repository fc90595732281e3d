/**
 * Reading what callers send: every YouTube URL form of a video (watch, youtu.be, shorts, live,
 * embed, m./music./www-less hosts, with t=, list=, si= and the like), bare video ids, and
 * channels by URL, @handle or UC… id. Each reader answers null for what it refuses.
 */

const VIDEO_ID = /^[A-Za-z0-9_-]{11}$/;
const CHANNEL_ID = /^UC[A-Za-z0-9_-]{22}$/;
/** YouTube handles: 3 to 30 letters, digits, `_`, `-` or `.` (Unicode letters allowed). */
const HANDLE = /^[\p{L}\p{N}_.-]{3,30}$/u;

const YOUTUBE_HOSTS = new Set(['youtube.com', 'www.youtube.com', 'm.youtube.com', 'music.youtube.com', 'youtube-nocookie.com', 'www.youtube-nocookie.com']);
const SHORT_HOSTS = new Set(['youtu.be', 'www.youtu.be']);
/** Path prefixes followed by the video id. */
const ID_PATHS = new Set(['shorts', 'live', 'embed', 'v', 'e']);

export const isVideoId = (value: string): boolean => VIDEO_ID.test(value);
export const isChannelId = (value: string): boolean => CHANNEL_ID.test(value);

function parseUrl(value: string): URL | null {
  const text = value.trim();
  if (!/^https?:\/\//i.test(text)) return null;
  try {
    return new URL(text);
  } catch {
    return null;
  }
}

/** The video id of a YouTube video URL, or null. Query parameters other than `v` are ignored. */
export function videoIdFromUrl(value: string): string | null {
  const url = parseUrl(value);
  if (!url) return null;
  const host = url.hostname.toLowerCase();
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  let candidate: string | undefined;
  if (SHORT_HOSTS.has(host)) {
    candidate = segments[0];
  } else if (YOUTUBE_HOSTS.has(host)) {
    if (segments[0] === 'watch' && segments.length === 1) candidate = url.searchParams.get('v') ?? undefined;
    else if (segments.length >= 2 && ID_PATHS.has(segments[0])) candidate = segments[1];
  }
  return candidate !== undefined && isVideoId(candidate) ? candidate : null;
}

/** A bare video id as sent (11 characters), or null. */
export function videoId(value: unknown): string | null {
  return typeof value === 'string' && isVideoId(value.trim()) ? value.trim() : null;
}

/**
 * How a channel is asked for: by its id (browsed directly), or by a path that YouTube resolves
 * to one (`/@handle`, `/c/name`, `/user/name`).
 */
export type ChannelRef = { kind: 'id'; id: string } | { kind: 'path'; path: string };

/** `@name` or `name` → `@name`, or null. */
export function channelHandle(value: unknown): string | null {
  if (typeof value !== 'string') return null;
  const bare = value.trim().replace(/^@/, '');
  return HANDLE.test(bare) ? `@${bare}` : null;
}

export function channelIdOrNull(value: unknown): string | null {
  return typeof value === 'string' && isChannelId(value.trim()) ? value.trim() : null;
}

/** A channel URL: /channel/UC…, /@handle, /c/name or /user/name, with any tab after it. */
export function channelRefFromUrl(value: string): ChannelRef | null {
  const url = parseUrl(value);
  if (!url || !YOUTUBE_HOSTS.has(url.hostname.toLowerCase())) return null;
  const segments = url.pathname.split('/').filter((segment) => segment !== '').map((segment) => decodeURIComponent(segment));
  const [first, second] = segments;
  if (first === undefined) return null;
  if (first === 'channel') return second !== undefined && isChannelId(second) ? { kind: 'id', id: second } : null;
  if (first.startsWith('@')) {
    const handle = channelHandle(first);
    return handle ? { kind: 'path', path: `/${handle}` } : null;
  }
  if ((first === 'c' || first === 'user') && second !== undefined && /^[\p{L}\p{N}_.-]{1,100}$/u.test(second)) return { kind: 'path', path: `/${first}/${second}` };
  return null;
}

/** The scope a channel page token is bound to: the channel as the caller named it. */
export function channelScopeKey(ref: ChannelRef): string {
  return ref.kind === 'id' ? ref.id : ref.path.toLowerCase();
}

/**
 * A playlist id: the prefixes YouTube gives playlists one can page through (PL, a channel's
 * uploads UU…, albums OLAK5uy_…, and the older EC, FL, LL, PU, UL, TL) and at least 10 more
 * characters. Mixes (RD…) are built per viewer and have no pages: they are not accepted.
 */
const PLAYLIST_ID = /^(?:PL|UU|OLAK5uy_|EC|FL|LL|PU|UL|TL)[A-Za-z0-9_-]{10,64}$/;

export const isPlaylistId = (value: string): boolean => PLAYLIST_ID.test(value);

/** A bare playlist id as sent, or null. */
export function playlistId(value: unknown): string | null {
  return typeof value === 'string' && isPlaylistId(value.trim()) ? value.trim() : null;
}

/** The playlist of a YouTube URL: its `list` parameter (/playlist, /watch, youtu.be, embeds), or null. */
export function playlistIdFromUrl(value: string): string | null {
  const url = parseUrl(value);
  if (!url) return null;
  const host = url.hostname.toLowerCase();
  if (!YOUTUBE_HOSTS.has(host) && !SHORT_HOSTS.has(host)) return null;
  return playlistId(url.searchParams.get('list'));
}
