/**
 * The forum client: the five operations behind /v1/forum*, each one or two Reddit requests run
 * through the upstream runtime (so through the outbound client, the circuit breaker, the logs and
 * the metrics). Its stateful parts are interceptors around each exchange: the rate-limit budget
 * (rate-budget.ts), then the app-only token (token.ts), refreshed once when Reddit answers 401.
 */
import { raceAbort } from '../../core/abort.ts';
import type { Adapter, CallContext, CallOutcome } from '../kit/types.ts';
import type { Interceptor, Upstream, UpstreamRuntime } from '../kit/runtime.ts';
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
  runtime: UpstreamRuntime;
  /** Where the API calls go (oauth.reddit.com with credentials, www.reddit.com without). */
  baseUrl: string;
  /** Where the token comes from (`/api/v1/access_token` under it). */
  authUrl: string;
  /** Absent: anonymous `.json` requests. */
  credentials?: ClientCredentials;
  userAgent: string;
  timeoutMs: number;
  now?: () => number;
}

/** Spends the budget Reddit announces; once spent, answers `blocked` without calling until the reset. */
export function rateBudgetInterceptor(budget: RateBudget): Interceptor {
  return async (exchange, next) => {
    const admission = budget.take();
    if (!admission.ok) return { outcome: { kind: 'blocked', reason: `rate-limit budget spent, resets in ${Math.ceil(admission.resetInMs / 1000)} s` } };
    const attempt = await next(exchange);
    if (attempt.response) budget.observe(attempt.response.headers, attempt.response.status);
    return attempt;
  };
}

/** Adds the app-only token; a 401 forgets it and tries once more with a fresh one. */
export function tokenInterceptor(tokens: AppTokenCache): Interceptor {
  return async (exchange, next) => {
    for (let attempt = 0; ; attempt++) {
      const token = await raceAbort(tokens.token(), exchange.signal);
      if (token.kind !== 'ok') return { outcome: { kind: 'blocked', reason: `no access token: ${token.reason}` } };
      const request = { ...exchange.request, headers: { ...exchange.request.headers, Authorization: `Bearer ${token.token}` } };
      const answered = await next({ ...exchange, request });
      if (answered.response?.status !== 401 || attempt > 0 || exchange.signal.aborted) return answered;
      tokens.invalidate(token.token);
      exchange.notes.tokenRefreshed = true;
    }
  };
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
  readonly #tokens: AppTokenCache | null;
  readonly #upstream: Upstream;
  readonly #access: RedditAccess;

  constructor(options: ForumClientOptions) {
    const now = options.now ?? Date.now;
    const credentials = options.credentials;
    this.#access = { oauth: credentials !== undefined, userAgent: options.userAgent };
    const auth = options.runtime.upstream({ timeoutMs: options.timeoutMs, baseUrl: options.authUrl });
    this.#tokens = credentials
      ? new AppTokenCache(async () => {
          // Shared by every waiting request, so it is tied to none of them: no signal, the runtime's own log.
          const outcome = await auth.call(tokenAdapter, { ...credentials, userAgent: options.userAgent }, { log: options.runtime.log });
          return outcome.kind === 'ok' ? outcome : { kind: 'failed', reason: ('reason' in outcome && outcome.reason) || outcome.kind };
        }, now)
      : null;
    const interceptors = [rateBudgetInterceptor(new RateBudget(now)), ...(this.#tokens ? [tokenInterceptor(this.#tokens)] : [])];
    this.#upstream = options.runtime.upstream({ timeoutMs: options.timeoutMs, baseUrl: options.baseUrl, interceptors });
  }

  /** Token requests made so far (0 when anonymous). */
  get tokenRefreshes(): number {
    return this.#tokens?.refreshes ?? 0;
  }

  /** The fixed, harmless call `gleaner upstreams probe` makes: one post of r/redditdev. */
  async probe(context: CallContext): Promise<CallOutcome<unknown>> {
    return this.#call(listingAdapter, { subreddit: 'redditdev', sort: 'new', limit: 1 }, context);
  }

  /** `/r/{sub}/{sort}`. An empty first page asks `/r/{sub}/about` whether the subreddit exists. */
  async listing(params: ListingParams, context: CallContext = {}): Promise<ForumOutcome<ListingAnswer>> {
    const page = await this.#call(listingAdapter, params, context);
    if (page.kind !== 'ok') return settle(page);
    const checked = await this.#existsWhenEmpty(page.value, params.subreddit, params.after, context);
    return checked.kind === 'ok' ? { kind: 'ok', value: { subreddit: params.subreddit, ...page.value } } : checked;
  }

  /** `/search`, or `/r/{sub}/search` with `restrict_sr=1`. */
  async search(params: SearchParams, context: CallContext = {}): Promise<ForumOutcome<SearchAnswer>> {
    const page = await this.#call(searchAdapter, params, context);
    if (page.kind !== 'ok') return settle(page);
    if (params.subreddit) {
      const checked = await this.#existsWhenEmpty(page.value, params.subreddit, params.after, context);
      if (checked.kind !== 'ok') return checked;
    }
    return { kind: 'ok', value: { query: params.query, subreddit: params.subreddit ?? null, ...page.value } };
  }

  /** `/comments/{id}`: the post with its comment tree. */
  async thread(postId: string, context: CallContext = {}): Promise<ForumOutcome<ForumThread>> {
    return settle(await this.#call(threadAdapter, { postId }, context));
  }

  /**
   * One comment with its replies: `/api/info?id=t1_…` finds its post (skipped when the URL named
   * the post), then `/comments/{post}/_/{comment}` gives the comment's tree.
   */
  async comment(ref: { commentId: string; postId?: string }, context: CallContext = {}): Promise<ForumOutcome<ForumCommentAnswer>> {
    let postId = ref.postId;
    if (!postId) {
      const location = await this.#call(commentInfoAdapter, { commentId: ref.commentId }, context);
      if (location.kind !== 'ok') return settle(location);
      postId = location.value.postId;
    }
    return settle(await this.#call(commentContextAdapter, { postId, commentId: ref.commentId }, context));
  }

  /**
   * `/user/{name}/about` and `/user/{name}/submitted`, asked at once. A suspended account is
   * answered from its about page alone (Reddit lists nothing for it).
   */
  async user(params: UserParams, context: CallContext = {}): Promise<ForumOutcome<UserAnswer>> {
    const [about, submitted] = await Promise.all([this.#call(userAboutAdapter, { username: params.username }, context), this.#call(userSubmittedAdapter, params, context)]);
    if (about.kind !== 'ok') return settle(about);
    if (about.value.is_suspended) return { kind: 'ok', value: { user: about.value, posts: [], after: null, before: null } };
    if (submitted.kind !== 'ok') return settle(submitted);
    return { kind: 'ok', value: { user: about.value, ...submitted.value } };
  }

  /** An empty first page of a subreddit: a real, empty subreddit (ok) or one that does not exist (not found)? */
  async #existsWhenEmpty(page: PostPage, subreddit: string, after: string | undefined, context: CallContext): Promise<ForumOutcome<null>> {
    if (page.posts.length > 0 || after !== undefined) return { kind: 'ok', value: null };
    const about = await this.#call(subredditAboutAdapter, { subreddit }, context);
    return about.kind === 'ok' ? { kind: 'ok', value: null } : settle(about);
  }

  /** One adapter call through the runtime, with this client's access. */
  #call<P extends object, T>(adapter: Adapter<WithAccess<P>, T>, params: P, context: CallContext): Promise<CallOutcome<T>> {
    return this.#upstream.call(adapter, { ...params, access: this.#access }, context);
  }
}

function settle<T>(outcome: CallOutcome<T>): ForumOutcome<T> {
  if (outcome.kind === 'ok') return outcome;
  if (outcome.kind === 'not_found') return { kind: 'not_found' };
  return { kind: 'unavailable', reason: outcome.kind === 'empty' ? 'empty answer' : outcome.reason };
}
