/**
 * Pure parsers of Reddit's JSON answers: status and block-page triage first (readAnswer), then
 * the mapping of `t3` posts, `t1` comment trees, `more` stubs, `t2` users and `t5` subreddits
 * into the service's objects (docs/forum.md has the mapping table and the not-found decisions).
 * A shape they cannot read throws ShapeError, which the callers turn into `changed` (a 502).
 */
import { jsonOrUndefined } from '../kit/decode.ts';
import { pathOf } from '../kit/request.ts';
import { headerValue } from '../kit/decode.ts';
import { firstItems, MAX_PAGE_ITEMS } from '../kit/limits.ts';
import { isObject, isoFromEpochSeconds, mapReadable, ShapeError, type Json } from '../kit/parse.ts';
import type { ParseOutcome, UpstreamResponse } from '../kit/types.ts';
import type { CommentLocation, ForumComment, ForumCommentAnswer, ForumPost, ForumThread, ForumUser, PostPage } from './types.ts';

/** Where permalinks point: the public site, whichever host served the JSON. */
export const REDDIT_ORIGIN = 'https://www.reddit.com';

/**
 * `reason`s of a JSON 403/404 that say the community exists but cannot be read by an app-only
 * (or anonymous) client, ever: retrying will not help, so they answer 404, not 502.
 */
const UNREADABLE_REASONS = new Set(['private', 'banned', 'quarantined', 'gated', 'gold_only']);

export { isoFromEpochSeconds, ShapeError };

function field<T>(data: Json, name: string, type: 'string' | 'number' | 'boolean', where: string): T {
  const value = data[name];
  if (typeof value !== type || (type === 'number' && !Number.isFinite(value))) {
    throw new ShapeError(`${where}.${name} is ${value === null ? 'null' : typeof value}, expected ${type}`);
  }
  return value as T;
}

const text = (data: Json, name: string, where: string) => field<string>(data, name, 'string', where);
const number = (data: Json, name: string, where: string) => field<number>(data, name, 'number', where);
const flag = (data: Json, name: string, where: string) => field<boolean>(data, name, 'boolean', where);

/** A site-relative permalink made absolute; an absolute one is kept. */
export function absolutePermalink(permalink: string): string {
  if (/^https?:\/\//i.test(permalink)) return permalink;
  return `${REDDIT_ORIGIN}${permalink.startsWith('/') ? '' : '/'}${permalink}`;
}

/** Why an HTML answer came instead of JSON: Reddit's block pages name themselves. */
export function blockPageReason(body: string): string {
  if (/whoa there,? pardner/i.test(body)) return 'block page: "whoa there, pardner"';
  if (/network (?:security|policy)|blocked by network/i.test(body)) return 'block page: network policy';
  return 'HTML page instead of JSON';
}

/**
 * Triage of any Reddit answer before mapping: the JSON of a 200, or the verdict its status,
 * body or final URL carries.
 * - 401: the token was refused (the client refreshes it once and retries);
 * - 403/404 with a `reason` in UNREADABLE_REASONS (private, banned, quarantined…), any other 404,
 *   and a redirect to the subreddit search (what Reddit does for an unknown subreddit): not found;
 * - 429, 5xx, any other 403 (the network-policy page), an HTML page (whoa there, pardner):
 *   blocked; any other status or unreadable JSON: changed.
 */
export function readAnswer(response: UpstreamResponse): ParseOutcome<unknown> {
  const { status } = response;
  const finalPath = pathOf(response.url);
  const looksHtml = /html/i.test(headerValue(response.headers, 'content-type') ?? '') || /^\s*</.test(response.body);
  const json = looksHtml ? undefined : jsonOrUndefined(response.body);
  const reason = isObject(json) && typeof json.reason === 'string' ? json.reason.toLowerCase() : undefined;

  if (status === 401) return { kind: 'blocked', reason: 'token refused (401)' };
  if ((status === 403 || status === 404) && reason && UNREADABLE_REASONS.has(reason)) return { kind: 'not_found', reason };
  if (status === 404) return { kind: 'not_found' };
  if (status === 429) return { kind: 'blocked', reason: looksHtml ? `rate limited (429), ${blockPageReason(response.body)}` : 'rate limited (429)' };
  if (status === 403) return { kind: 'blocked', reason: looksHtml ? `forbidden (403), ${blockPageReason(response.body)}` : 'forbidden (403)' };
  if (status >= 500) return { kind: 'blocked', reason: `upstream error (${status})` };
  if (status !== 200) return { kind: 'changed', reason: `unexpected status ${status}` };
  if (/\/subreddits\/search(?:\.json)?\/?$/i.test(finalPath)) return { kind: 'not_found', reason: 'redirected to the subreddit search' };
  if (looksHtml) return { kind: 'blocked', reason: blockPageReason(response.body) };
  if (json === undefined) return { kind: 'changed', reason: 'the body is not JSON' };
  return { kind: 'ok', value: json };
}



/** Runs a mapper on the JSON of a readable answer; a shape it cannot read is `changed`. */
function mapAnswer<T>(response: UpstreamResponse, map: (json: unknown) => ParseOutcome<T>): ParseOutcome<T> {
  return mapReadable(readAnswer(response), map);
}

interface Listing {
  children: Array<{ kind: string; data: Json }>;
  after: string | null;
  before: string | null;
}

/**
 * The most things a listing page is read for: Reddit answers up to 100 (`limit`), plus the
 * subreddit's pinned posts above them on its first page (a recorded `r/AskReddit/hot` of
 * `limit=100` holds 102); a longer answer is cut before it is read (issue 33).
 */
const LISTING_CAP = MAX_PAGE_ITEMS + 10;

/** `{kind: "Listing", data: {children, after, before}}`, checked; at most `cap` children are read. */
export function asListing(value: unknown, where = 'listing', cap: number = LISTING_CAP): Listing {
  if (!isObject(value) || value.kind !== 'Listing' || !isObject(value.data)) throw new ShapeError(`${where} is not a Listing`);
  const { children, after, before } = value.data;
  if (!Array.isArray(children)) throw new ShapeError(`${where}.children is not an array`);
  const things = firstItems(children, cap).map((child, index) => {
    if (!isObject(child) || typeof child.kind !== 'string' || !isObject(child.data)) throw new ShapeError(`${where}.children[${index}] is not a thing`);
    return { kind: child.kind, data: child.data };
  });
  return { children: things, after: cursor(after, `${where}.after`), before: cursor(before, `${where}.before`) };
}

function cursor(value: unknown, where: string): string | null {
  if (value === null || value === undefined) return null;
  if (typeof value !== 'string') throw new ShapeError(`${where} is not a string`);
  return value;
}

/** A `t3` thing's data as a post object. */
export function mapPost(data: Json): ForumPost {
  const where = 't3';
  return {
    id: text(data, 'id', where),
    name: text(data, 'name', where),
    subreddit: text(data, 'subreddit', where),
    title: text(data, 'title', where),
    author: text(data, 'author', where),
    score: number(data, 'score', where),
    num_comments: number(data, 'num_comments', where),
    created_at: isoFromEpochSeconds(number(data, 'created_utc', where)),
    url: text(data, 'url', where),
    permalink: absolutePermalink(text(data, 'permalink', where)),
    selftext: text(data, 'selftext', where),
    over_18: flag(data, 'over_18', where),
    is_self: flag(data, 'is_self', where),
  };
}

/** The `t3` children of a listing as posts (other kinds, such as promoted subreddits, are skipped). */
export function mapPostPage(value: unknown): PostPage {
  const listing = asListing(value);
  return {
    posts: listing.children.filter((child) => child.kind === 't3').map((child) => mapPost(child.data)),
    after: listing.after,
    before: listing.before,
  };
}

/** How a comment's permalink is made when Reddit sends none (older answers). */
interface TreeContext {
  /** The post's permalink (absolute, ending with `/`), when the tree came with its post. */
  postPermalink?: string;
  /** Comments the tree may still hold (MAX_THREAD_COMMENTS in all), shared by its every level. */
  budget?: { left: number };
}

/** Comments one answer's tree holds at most: Reddit sends 500 at the most (its `limit`). */
export const MAX_THREAD_COMMENTS = 500;
/** Levels of replies read: Reddit nests 10 by default; deeper levels of a hostile answer are not walked. */
export const MAX_COMMENT_DEPTH = 50;

/** A comment tree walked: comments with their nesting, and the ids left in `more` stubs. */
export interface CommentTree {
  comments: ForumComment[];
  moreCount: number;
}

/**
 * The `t1` children of a comment listing, with their replies nested, as comment objects. `more`
 * stubs anywhere in the tree add the ids they hold to `moreCount` ("continue this thread" stubs
 * hold none). Deleted and removed comments stay, with author and body as Reddit gives them.
 */
export function mapCommentTree(value: unknown, given: TreeContext = {}, depth = 0): CommentTree {
  const context = given.budget ? given : { ...given, budget: { left: MAX_THREAD_COMMENTS } };
  const budget = context.budget!;
  const listing = asListing(value, 'comments', Math.max(0, budget.left) + 1);
  const comments: ForumComment[] = [];
  let moreCount = 0;
  for (const child of listing.children) {
    if (child.kind === 'more') {
      moreCount += moreIds(child.data);
    } else if (child.kind === 't1') {
      // The tree is full: the rest of a longer answer is left out (issue 33).
      if (budget.left <= 0) continue;
      budget.left -= 1;
      const mapped = mapComment(child.data, context, depth);
      comments.push(mapped.comment);
      moreCount += mapped.moreCount;
    } else {
      throw new ShapeError(`a comment listing holds a ${child.kind}`);
    }
  }
  return { comments, moreCount };
}

function moreIds(data: Json): number {
  if (!Array.isArray(data.children)) throw new ShapeError('more.children is not an array');
  return data.children.length;
}

/** One `t1` thing's data, with its replies, as a comment object at `depth`. */
export function mapComment(data: Json, context: TreeContext = {}, depth = 0): { comment: ForumComment; moreCount: number } {
  const where = 't1';
  const id = text(data, 'id', where);
  // `replies` is "" for a comment without replies, else a Listing.
  const none = data.replies === '' || data.replies === undefined || data.replies === null || depth >= MAX_COMMENT_DEPTH;
  const replies = none ? { comments: [], moreCount: 0 } : mapCommentTree(data.replies, context, depth + 1);
  return {
    comment: {
      id,
      name: text(data, 'name', where),
      author: text(data, 'author', where),
      body: text(data, 'body', where),
      score: number(data, 'score', where),
      created_at: isoFromEpochSeconds(number(data, 'created_utc', where)),
      parent_id: text(data, 'parent_id', where),
      depth,
      permalink: commentPermalink(data, id, context),
      replies: replies.comments,
    },
    moreCount: replies.moreCount,
  };
}

/** Reddit's own permalink when it sends one; else the post's permalink + the comment id, or the `_`-slug form. */
function commentPermalink(data: Json, id: string, context: TreeContext): string {
  if (typeof data.permalink === 'string') return absolutePermalink(data.permalink);
  if (context.postPermalink) return `${context.postPermalink}${id}/`;
  const subreddit = text(data, 'subreddit', 't1');
  const postId = text(data, 'link_id', 't1').replace(/^t3_/, '');
  return `${REDDIT_ORIGIN}/r/${subreddit}/comments/${postId}/_/${id}/`;
}

/** `/comments/{id}`: `[post listing, comment listing]` → the post, its comment tree and `more_count`. */
export function mapThread(value: unknown): ParseOutcome<ForumThread> {
  const thread = threadOf(value, 'thread');
  if (thread.kind !== 'ok') return thread;
  const { post, comments } = thread.value;
  const tree = mapCommentTree(comments, { postPermalink: withSlash(post.permalink) });
  return { kind: 'ok', value: { ...post, comments: tree.comments, more_count: tree.moreCount } };
}

/**
 * The answer of `/comments/…` (a `thread`, or a comment's `context`): `[post listing, comment
 * listing]`, its post mapped and its comment listing as sent; no post is `not_found`.
 */
function threadOf(value: unknown, what: 'thread' | 'context'): ParseOutcome<{ post: ReturnType<typeof mapPost>; comments: unknown }> {
  if (!Array.isArray(value) || value.length !== 2) throw new ShapeError(`a ${what === 'thread' ? 'thread' : 'comment context'} is not [post listing, comment listing]`);
  const first = asListing(value[0], `${what} post`).children[0];
  if (!first) return { kind: 'not_found', reason: `the ${what} has no post` };
  if (first.kind !== 't3') throw new ShapeError(`the ${what}'s first thing is a ${first.kind}`);
  return { kind: 'ok', value: { post: mapPost(first.data), comments: value[1] } };
}

const withSlash = (url: string) => (url.endsWith('/') ? url : `${url}/`);

/** `/api/info?id=t1_…`: where the comment lives; an empty listing means it does not exist. */
export function mapCommentLocation(value: unknown): ParseOutcome<CommentLocation> {
  const listing = asListing(value, 'info');
  const thing = listing.children.find((child) => child.kind === 't1');
  if (!thing) return { kind: 'not_found', reason: 'no such comment' };
  return {
    kind: 'ok',
    value: {
      commentId: text(thing.data, 'id', 't1'),
      postId: text(thing.data, 'link_id', 't1').replace(/^t3_/, ''),
      subreddit: text(thing.data, 'subreddit', 't1'),
    },
  };
}

/**
 * `/comments/{post}/_/{comment}`: the thread focused on one comment. The comment is the top of
 * the returned tree (depth 0), with its replies; absent from the tree means it does not exist
 * in that post.
 */
export function mapCommentContext(value: unknown, commentId: string): ParseOutcome<ForumCommentAnswer> {
  const thread = threadOf(value, 'context');
  if (thread.kind !== 'ok') return thread;
  const { post } = thread.value;
  const comments = asListing(thread.value.comments, 'context comments', MAX_THREAD_COMMENTS);
  const target = comments.children.find((child) => child.kind === 't1' && child.data.id === commentId);
  if (!target) return { kind: 'not_found', reason: 'the comment is not in the thread' };
  const { comment } = mapComment(target.data, { postPermalink: withSlash(post.permalink) }, 0);
  return { kind: 'ok', value: { ...comment, subreddit: post.subreddit, post_id: post.id } };
}

/**
 * `/user/{name}/about`: a `t2`. A suspended account answers 200 with `is_suspended: true` and
 * little else: the fields it withholds are null.
 */
export function mapUser(value: unknown): ForumUser {
  if (!isObject(value) || value.kind !== 't2' || !isObject(value.data)) throw new ShapeError('the user answer is not a t2');
  const data = value.data;
  const where = 't2';
  const suspended = data.is_suspended === true;
  const optional = <T>(name: string, read: () => T): T | null => (suspended && data[name] === undefined ? null : read());
  return {
    id: optional('id', () => text(data, 'id', where)),
    name: text(data, 'name', where),
    created_at: optional('created_utc', () => isoFromEpochSeconds(number(data, 'created_utc', where))),
    link_karma: optional('link_karma', () => number(data, 'link_karma', where)),
    comment_karma: optional('comment_karma', () => number(data, 'comment_karma', where)),
    is_suspended: suspended,
  };
}

/** `/r/{sub}/about`: a `t5` says the subreddit exists. */
export function mapSubredditAbout(value: unknown): ParseOutcome<{ name: string }> {
  if (!isObject(value) || value.kind !== 't5' || !isObject(value.data)) throw new ShapeError('the subreddit answer is not a t5');
  return { kind: 'ok', value: { name: text(value.data, 'display_name', 't5') } };
}

/** An app-only token answer: `{access_token, token_type: "bearer", expires_in}`. */
export function mapToken(value: unknown): ParseOutcome<{ accessToken: string; expiresInSeconds: number }> {
  if (isObject(value) && typeof value.error === 'string') return { kind: 'blocked', reason: `token refused: ${value.error}` };
  if (!isObject(value)) throw new ShapeError('the token answer is not an object');
  const accessToken = text(value, 'access_token', 'token');
  const expiresInSeconds = number(value, 'expires_in', 'token');
  if (accessToken === '' || expiresInSeconds <= 0) throw new ShapeError('the token answer has no usable token');
  return { kind: 'ok', value: { accessToken, expiresInSeconds } };
}

export const parsePostPage = (response: UpstreamResponse): ParseOutcome<PostPage> => mapAnswer(response, (json) => ({ kind: 'ok', value: mapPostPage(json) }));
export const parseThread = (response: UpstreamResponse): ParseOutcome<ForumThread> => mapAnswer(response, mapThread);
export const parseCommentLocation = (response: UpstreamResponse): ParseOutcome<CommentLocation> => mapAnswer(response, mapCommentLocation);
export const parseCommentContext = (response: UpstreamResponse, commentId: string): ParseOutcome<ForumCommentAnswer> =>
  mapAnswer(response, (json) => mapCommentContext(json, commentId));
export const parseUser = (response: UpstreamResponse): ParseOutcome<ForumUser> => mapAnswer(response, (json) => ({ kind: 'ok', value: mapUser(json) }));
export const parseSubredditAbout = (response: UpstreamResponse): ParseOutcome<{ name: string }> => mapAnswer(response, mapSubredditAbout);
export const parseToken = (response: UpstreamResponse) => mapAnswer(response, mapToken);
