/**
 * The microblog client: the five endpoints' upstream work, through the upstream runtime (so every
 * byte goes through the outbound client, the circuit breaker, the logs and the metrics). Its
 * stateful parts are interceptors around each exchange: the guest token (replaced once when X
 * refuses it) and the session pool (rotation past rate-limited sessions, refused ones sidelined).
 * The parsing is pure (parse.ts, timeline.ts, syndication.ts).
 */
import { raceAbort } from '../../core/abort.ts';
import { describeError, type Attempt, type Interceptor, type Upstream, type UpstreamRuntime } from '../kit/runtime.ts';
import type { CallContext, CallOutcome, ParseOutcome, UpstreamResponse } from '../kit/types.ts';
import { AccountPool, DEFAULT_RATE_LIMIT_MS } from './accounts.ts';
import type { XConfig } from './config.ts';
import { GuestTokens } from './guest-token.ts';
import { parseTweetResult, parseUserResult, rateLimitReset, sessionSignal, windowExhausted } from './parse.ts';
import { graphqlAdapter, guestActivationAdapter, withGuestToken, withSession } from './requests.ts';
import { syndicationAdapter } from './syndication.ts';
import { parseSearchTimeline, parseUserTweets } from './timeline.ts';
import type { MicroblogUser, PostItem, SearchProduct, TimelinePage, XOperation } from './types.ts';

export type { CallContext } from '../kit/types.ts';

/** What a call came to. `not_configured`: it needs X_ACCOUNTS and there are none. */
export type XResult<T> = { kind: 'ok'; value: T } | { kind: 'not_found' } | { kind: 'unavailable'; reason: string } | { kind: 'not_configured' };

export interface XClientOptions {
  config: XConfig;
  runtime: UpstreamRuntime;
  pool: AccountPool;
  baseUrls: { graphql: string; api: string; syndication: string };
  timeoutMs: number;
  now?: () => number;
}

/** A post that has been on X since 2006 (its first): what `gleaner upstreams probe` reads. */
export const PROBE_POST_ID = '20';

/** Sends with the shared guest token; a token X refuses or rate-limits is replaced once. */
export function guestTokenInterceptor(guest: GuestTokens): Interceptor {
  return async (exchange, next) => {
    let refused: Attempt | undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      let token: string;
      try {
        token = await raceAbort(guest.get(), exchange.signal);
      } catch (error) {
        if (exchange.signal.aborted) throw error;
        return { outcome: { kind: 'blocked', reason: `no guest token: ${describeError(error)}` } };
      }
      const answered = await next({ ...exchange, request: withGuestToken(exchange.request, token) });
      const signal = answered.response && sessionSignal(answered.response);
      if (!signal || !answered.response) return answered;
      guest.refuse(token);
      const status = answered.response.status;
      const reason = signal.kind === 'rate_limited' ? 'guest token rate-limited' : `guest token refused (${signal.code ?? status})`;
      refused = { outcome: { kind: 'blocked', reason, status }, response: answered.response };
    }
    return refused as Attempt;
  };
}

/** Sends as the pool's next session: rests a rate-limited one, sidelines a refused one, and rotates. */
export function sessionPoolInterceptor(pool: AccountPool, now: () => number): Interceptor {
  return async (exchange, next) => {
    const operation = exchange.operation;
    const tried = new Set<number>();
    let last: { status?: number; reason: string } = { reason: 'every session is resting or sidelined' };
    for (;;) {
      const account = await pool.acquire(operation, tried);
      if (!account) return { outcome: { kind: 'blocked', reason: `no session left: ${last.reason}`, status: last.status } };
      tried.add(account.index);
      const answered = await next({ ...exchange, request: withSession(exchange.request, account.session) });
      const response = answered.response;
      if (!response) return answered;
      if (windowExhausted(response)) await pool.limit(account, operation, rateLimitReset(response) ?? now() + DEFAULT_RATE_LIMIT_MS);
      const signal = sessionSignal(response);
      const session = AccountPool.describe(account);
      if (signal?.kind === 'rate_limited') {
        await pool.limit(account, operation, signal.resetAt ?? now() + DEFAULT_RATE_LIMIT_MS);
        exchange.log.warn({ upstream: exchange.upstream, operation, status: response.status, account: session }, `x session ${session} is rate-limited on ${operation}; rotating`);
        last = { status: response.status, reason: 'rate-limited' };
        continue;
      }
      if (signal?.kind === 'refused') {
        const why = `refused: status ${signal.status}${signal.code === null ? '' : `, code ${signal.code}`}`;
        await pool.sideline(account, why);
        exchange.log.warn({ upstream: exchange.upstream, operation, status: response.status, code: signal.code, account: session }, `x session ${session} sidelined (${why})`);
        last = { status: response.status, reason: why };
        continue;
      }
      exchange.notes.account = session;
      return answered;
    }
  };
}

export class XClient {
  readonly #options: XClientOptions;
  readonly #guestCalls: Upstream;
  readonly #sessionCalls: Upstream;
  readonly #syndication: Upstream;

  constructor(options: XClientOptions) {
    this.#options = options;
    const now = options.now ?? Date.now;
    const { runtime, timeoutMs, baseUrls } = options;
    const activation = runtime.upstream({ timeoutMs, baseUrl: baseUrls.api });
    const activate = guestActivationAdapter(options.config);
    const guest = new GuestTokens(async () => {
      // Shared by every waiting request, so tied to none of them: no signal, the runtime's own log.
      const outcome = await activation.call(activate, {}, { log: runtime.log });
      if (outcome.kind !== 'ok') throw new Error(outcome.kind === 'empty' ? 'empty answer' : `${outcome.kind}: ${outcome.reason ?? ''}`);
      return outcome.value;
    });
    this.#guestCalls = runtime.upstream({ timeoutMs, baseUrl: baseUrls.graphql, interceptors: [guestTokenInterceptor(guest)] });
    // The session pool is its own breaker: it rests a rate-limited session and sidelines a refused
    // one. Suspending all of X because every session is resting would also stop the guest calls.
    this.#sessionCalls = runtime.upstream({ timeoutMs, baseUrl: baseUrls.graphql, breaker: false, interceptors: [sessionPoolInterceptor(options.pool, now)] });
    this.#syndication = runtime.upstream({ timeoutMs, baseUrl: baseUrls.syndication });
  }

  /** True when logged-in sessions are configured (search, user, user-tweets can run). */
  get hasSessions(): boolean {
    return this.#options.pool.size > 0;
  }

  /** A single post by id (TweetResultByRestId, guest token). */
  async tweet(id: string, context: CallContext = {}): Promise<XResult<PostItem>> {
    return settle(await this.#graphql(this.#guestCalls, 'TweetResultByRestId', { tweetId: id }, parseTweetResult, context));
  }

  /** A single post from the public embed source. */
  async legacyTweet(id: string, context: CallContext = {}): Promise<XResult<PostItem>> {
    return settle(await this.#syndication.call(syndicationAdapter, { id }, context));
  }

  async user(username: string, context: CallContext = {}): Promise<XResult<MicroblogUser>> {
    if (!this.hasSessions) return { kind: 'not_configured' };
    return settle(await this.#graphql(this.#sessionCalls, 'UserByScreenName', { screen_name: username }, parseUserResult, context));
  }

  async search(query: string, product: SearchProduct, cursor: string | undefined, context: CallContext = {}): Promise<XResult<TimelinePage>> {
    if (!this.hasSessions) return { kind: 'not_configured' };
    const variables: Record<string, unknown> = { rawQuery: query, product: product === 'top' ? 'Top' : 'Latest' };
    if (cursor !== undefined) variables.cursor = cursor;
    return settle(await this.#graphql(this.#sessionCalls, 'SearchTimeline', variables, parseSearchTimeline, context));
  }

  /** A user's recent posts: the user is looked up first (its id, and whether its posts are protected). */
  async userTweets(username: string, cursor: string | undefined, context: CallContext = {}): Promise<XResult<TimelinePage>> {
    const user = await this.user(username, context);
    if (user.kind !== 'ok') return user;
    if (user.value.protected) return { kind: 'not_found' };
    const variables: Record<string, unknown> = { userId: user.value.id };
    if (cursor !== undefined) variables.cursor = cursor;
    return settle(await this.#graphql(this.#sessionCalls, 'UserTweets', variables, parseUserTweets, context));
  }

  /** The fixed, harmless calls `gleaner upstreams probe` makes: X's first post, by GraphQL and by the embed source. */
  probes(): Array<{ upstream: string; operation: string; run(context: CallContext): Promise<CallOutcome<unknown>> }> {
    return [
      { upstream: 'x', operation: 'TweetResultByRestId', run: (context) => this.#graphql(this.#guestCalls, 'TweetResultByRestId', { tweetId: PROBE_POST_ID }, parseTweetResult, context) },
      { upstream: syndicationAdapter.upstream, operation: syndicationAdapter.operation, run: (context) => this.#syndication.call(syndicationAdapter, { id: PROBE_POST_ID }, context) },
    ];
  }

  #graphql<T>(upstream: Upstream, operation: XOperation, variables: Record<string, unknown>, parse: (r: UpstreamResponse) => ParseOutcome<T>, context: CallContext): Promise<CallOutcome<T>> {
    return upstream.call(graphqlAdapter(this.#options.config, operation, parse), { variables }, context);
  }
}

function settle<T>(outcome: CallOutcome<T>): XResult<T> {
  if (outcome.kind === 'ok') return outcome;
  if (outcome.kind === 'not_found' || outcome.kind === 'empty') return { kind: 'not_found' };
  return { kind: 'unavailable', reason: `${outcome.kind}: ${outcome.reason}` };
}
