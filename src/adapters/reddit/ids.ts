/**
 * Reddit ids and the URL forms that carry them. Pure: no network, so a share link that only a
 * redirect would resolve (`/r/{sub}/s/{token}`) is not a post URL here.
 */

/** Hosts of reddit.com a user may paste: the site itself and its old, new, mobile and "no participation" faces. */
const REDDIT_HOST = /^(?:(?:www|old|new|np|m|i|amp)\.)?reddit\.com$/;
const SHORT_HOST = /^(?:www\.)?redd\.it$/;
/** Base 36, as Reddit writes ids. */
const BASE36 = /^[a-z0-9]{1,13}$/;

/** An id as sent (`1cebxh`, `t3_1cebxh`, any case), without its prefix, or null when it is not one. */
export function bareId(value: string, prefix: 't1' | 't3'): string | null {
  const lower = value.trim().toLowerCase();
  const bare = lower.startsWith(`${prefix}_`) ? lower.slice(prefix.length + 1) : lower;
  return BASE36.test(bare) ? bare : null;
}

function parse(url: string): { host: string; segments: string[] } | null {
  let parsed: URL;
  try {
    parsed = new URL(url.trim());
  } catch {
    return null;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return null;
  const host = parsed.hostname.toLowerCase().replace(/\.$/, '');
  const segments = parsed.pathname.split('/').filter((segment) => segment !== '');
  return { host, segments };
}

/** The post and, when the URL names one, comment ids of a Reddit URL; null for another site or form. */
function idsOf(url: string): { postId: string; commentId?: string } | null {
  const parsed = parse(url);
  if (!parsed) return null;
  const { host, segments } = parsed;
  if (SHORT_HOST.test(host)) {
    const id = segments.length === 1 ? bareId(segments[0], 't3') : null;
    return id ? { postId: id } : null;
  }
  if (!REDDIT_HOST.test(host)) return null;
  // /gallery/{id} links to a post too.
  if (segments.length === 2 && segments[0].toLowerCase() === 'gallery') {
    const id = bareId(segments[1], 't3');
    return id ? { postId: id } : null;
  }
  // /comments/{post}[/{slug}[/{comment}]], under /r/{sub}/ or /user/{name}/ or at the root.
  const at = segments.findIndex((segment) => segment.toLowerCase() === 'comments');
  if (at < 0 || at + 1 >= segments.length) return null;
  const prefix = segments.slice(0, at).map((segment) => segment.toLowerCase());
  const validPrefix = prefix.length === 0 || (prefix.length === 2 && ['r', 'u', 'user'].includes(prefix[0]));
  if (!validPrefix) return null;
  const postId = bareId(segments[at + 1], 't3');
  if (!postId) return null;
  const commentSegment = segments[at + 3];
  if (commentSegment === undefined) return { postId };
  const commentId = bareId(commentSegment, 't1');
  return commentId ? { postId, commentId } : null;
}

/** The post id of any Reddit post URL (a comment permalink names its post too). */
export function postIdFromUrl(url: string): string | null {
  return idsOf(url)?.postId ?? null;
}

/** The post and comment ids of a Reddit comment permalink. */
export function commentIdsFromUrl(url: string): { postId: string; commentId: string } | null {
  const ids = idsOf(url);
  return ids?.commentId ? { postId: ids.postId, commentId: ids.commentId } : null;
}

/** A subreddit name as sent (`AskReddit`, `r/AskReddit`, `/r/AskReddit/`), or null. Multireddits (`a+b`) are allowed. */
export function subredditName(value: string): string | null {
  const name = value.trim().replace(/^\/?r\//i, '').replace(/\/$/, '');
  return /^[A-Za-z0-9_]{2,21}(?:\+[A-Za-z0-9_]{2,21})*$/.test(name) ? name : null;
}

/** A user name as sent (`spez`, `u/spez`, `/user/spez`), or null. */
export function userName(value: string): string | null {
  const name = value.trim().replace(/^\/?(?:u|user)\//i, '').replace(/\/$/, '');
  return /^[A-Za-z0-9_-]{1,20}$/.test(name) ? name : null;
}

/** A listing cursor: a fullname such as `t3_48dlnt`. */
export function isFullname(value: string): boolean {
  return /^t[1-6]_[a-z0-9]{1,13}$/i.test(value.trim());
}
