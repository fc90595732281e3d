/**
 * The forum client: the five operations behind /v1/forum*, each one or two Reddit requests run
 * through the adapter kit's runner (so through the outbound client). It owns the stateful parts
 * the pure adapters leave out: the app-only token (token.ts) and the rate-limit budget
 * (rate-budget.ts). A 401 refreshes the token once and retries.
 */
import type { Adapter, CallContext } from '../kit/types.ts';
import type { RunOutcome, UpstreamLogger, UpstreamRunner } from '../kit/runner.ts';
import { AppTokenCache } from './token.ts';
import { RateBudget } from './rate-budget.ts';
import {
  commentContextAdapter,
  commentInfoAdapter,
  listingAdapter,
  searchAdapter,
  subredditAboutAdapter,
  threadAdapter,
  tokenAdapter,
  userAboutAdapter,
  userSubmittedAdapter,
  type ClientCredentials,
  type RedditAccess,
  type WithAccess,
} from './requests.ts';
import type { ForumCommentAnswer, ForumThread, ForumUser, ListingParams, PostPage, SearchParams, UserParams } from './types.ts';

/** What the endpoints act on: a value, "does not exist" (404), or "could not ask" (502). */
export type ForumOutcome<T> = { kind: 'ok'; value: T } | { kind: 'not_found' } | { kind: 'unavailable'; reason: string };

export interface ForumClientOptions {
  runner: UpstreamRunner;
  /** Where the API calls go (oauth.reddit.com with credentials, www.reddit.com without). */
  baseUrl: string;
  /** Where the token comes from (`/api/v1/access_token` under it). */
  authUrl: string;
  /** Absent: anonymous `.json` requests. */
  credentials?: ClientCredentials;
  userAgent: string;
  timeoutMs: number;
  logger?: UpstreamLogger;
  now?: () => number;
}

export interface ListingAnswer extends PostPage {
  subreddit: string;
}

export interface SearchAnswer extends PostPage {
  query: string;
  subreddit: string | null;
}

export interface UserAnswer extends PostPage {
  user: ForumUser;
}

export class ForumClient {
  readonly #options: ForumClientOptions;
  readonly #tokens: AppTokenCache | null;
  readonly #budget: RateBudget;

  constructor(options: ForumClientOptions) {
    this.#options = options;
    const now = options.now ?? Date.now;
    this.#budget = new RateBudget(now);
    const credentials = options.credentials;
    this.#tokens = credentials
      ? new AppTokenCache(async () => {
          // Shared by every waiting request, so it is not tied to any one request's abort.
          const outcome = await options.runner.call(tokenAdapter, { ...credentials, userAgent: options.userAgent }, { baseUrl: options.authUrl, timeoutMs: options.timeoutMs });
          return outcome.kind === 'ok' ? outcome : { kind: 'failed', reason: ('reason' in outcome && outcome.reason) || outcome.kind };
        }, now)
      : null;
  }

  /** Token requests made so far (0 when anonymous). */
  get tokenRefreshes(): number {
    return this.#tokens?.refreshes ?? 0;
  }

  /** `/r/{sub}/{sort}`. An empty first page asks `/r/{sub}/about` whether the subreddit exists. */
  async listing(params: ListingParams, context: CallContext = {}): Promise<ForumOutcome<ListingAnswer>> {
    const signal = context.signal;
    const page = await this.#call(listingAdapter, params, signal);
    if (page.kind !== 'ok') return settle(page);
    const checked = await this.#existsWhenEmpty(page.value, params.subreddit, params.after, signal);
    return checked.kind === 'ok' ? { kind: 'ok', value: { subreddit: params.subreddit, ...page.value } } : checked;
  }

  /** `/search`, or `/r/{sub}/search` with `restrict_sr=1`. */
  async search(params: SearchParams, context: CallContext = {}): Promise<ForumOutcome<SearchAnswer>> {
    const signal = context.signal;
    const page = await this.#call(searchAdapter, params, signal);
    if (page.kind !== 'ok') return settle(page);
    if (params.subreddit) {
      const checked = await this.#existsWhenEmpty(page.value, params.subreddit, params.after, signal);
      if (checked.kind !== 'ok') return checked;
    }
    return { kind: 'ok', value: { query: params.query, subreddit: params.subreddit ?? null, ...page.value } };
  }

  /** `/comments/{id}`: the post with its comment tree. */
  async thread(postId: string, context: CallContext = {}): Promise<ForumOutcome<ForumThread>> {
    const signal = context.signal;
    return settle(await this.#call(threadAdapter, { postId }, signal));
  }

  /**
   * One comment with its replies: `/api/info?id=t1_…` finds its post (skipped when the URL named
   * the post), then `/comments/{post}/_/{comment}` gives the comment's tree.
   */
  async comment(ref: { commentId: string; postId?: string }, context: CallContext = {}): Promise<ForumOutcome<ForumCommentAnswer>> {
    const signal = context.signal;
    let postId = ref.postId;
    if (!postId) {
      const location = await this.#call(commentInfoAdapter, { commentId: ref.commentId }, signal);
      if (location.kind !== 'ok') return settle(location);
      postId = location.value.postId;
    }
    return settle(await this.#call(commentContextAdapter, { postId, commentId: ref.commentId }, signal));
  }

  /**
   * `/user/{name}/about` and `/user/{name}/submitted`, asked at once. A suspended account is
   * answered from its about page alone (Reddit lists nothing for it).
   */
  async user(params: UserParams, context: CallContext = {}): Promise<ForumOutcome<UserAnswer>> {
    const signal = context.signal;
    const [about, submitted] = await Promise.all([this.#call(userAboutAdapter, { username: params.username }, signal), this.#call(userSubmittedAdapter, params, signal)]);
    if (about.kind !== 'ok') return settle(about);
    if (about.value.is_suspended) return { kind: 'ok', value: { user: about.value, posts: [], after: null, before: null } };
    if (submitted.kind !== 'ok') return settle(submitted);
    return { kind: 'ok', value: { user: about.value, ...submitted.value } };
  }

  /** An empty first page of a subreddit: a real, empty subreddit (ok) or one that does not exist (not found)? */
  async #existsWhenEmpty(page: PostPage, subreddit: string, after: string | undefined, signal?: AbortSignal): Promise<ForumOutcome<null>> {
    if (page.posts.length > 0 || after !== undefined) return { kind: 'ok', value: null };
    const about = await this.#call(subredditAboutAdapter, { subreddit }, signal);
    return about.kind === 'ok' ? { kind: 'ok', value: null } : settle(about);
  }

  /** One adapter call: access (token or anonymous), the budget, the request; a 401 refreshes the token and retries once. */
  async #call<P extends object, T>(adapter: Adapter<WithAccess<P>, T>, params: P, signal?: AbortSignal): Promise<RunOutcome<T>> {
    const { runner, baseUrl, timeoutMs, userAgent, logger } = this.#options;
    for (let attempt = 0; ; attempt += 1) {
      const access: RedditAccess = { userAgent };
      if (this.#tokens) {
        const token = await this.#tokens.token();
        if (token.kind !== 'ok') return { kind: 'blocked', reason: `no access token: ${token.reason}` };
        access.token = token.token;
      }
      const admission = this.#budget.take();
      if (!admission.ok) {
        logger?.warn(
          { upstream: adapter.upstream, operation: adapter.operation, verdict: 'blocked', reason: 'rate-limit budget spent', resetInMs: admission.resetInMs },
          `upstream ${adapter.upstream} ${adapter.operation}: rate-limit budget spent, not calling until the reset`,
        );
        return { kind: 'blocked', reason: 'rate-limit budget spent' };
      }
      let status = 0;
      const observed: Adapter<WithAccess<P>, T> = {
        ...adapter,
        parse: (response, p) => {
          status = response.status;
          this.#budget.observe(response.headers, response.status);
          return adapter.parse(response, p);
        },
      };
      const outcome = await runner.call(observed, { ...params, access }, { baseUrl, timeoutMs, signal });
      if (status === 401 && access.token && attempt === 0 && !signal?.aborted) {
        this.#tokens?.invalidate(access.token);
        continue;
      }
      return outcome;
    }
  }
}

function settle<T>(outcome: RunOutcome<T>): ForumOutcome<T> {
  if (outcome.kind === 'ok') return outcome;
  if (outcome.kind === 'not_found') return { kind: 'not_found' };
  return { kind: 'unavailable', reason: outcome.kind === 'empty' ? 'empty answer' : outcome.reason };
}
