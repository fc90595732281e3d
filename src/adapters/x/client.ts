/**
 * The microblog client: the five endpoints' upstream work, on the shared runner (so every byte
 * goes through the outbound client). It owns the stateful parts: the guest token, the session
 * pool, and what to do when X refuses or rate-limits a credential. The parsing is pure
 * (parse.ts, timeline.ts, syndication.ts).
 *
 * Failures are logged here with the operation and X's status, so an operator can tell which
 * query id or flag set needs updating (docs/microblog.md).
 */
import { describeError, type UpstreamLogger, type UpstreamRunner } from '../kit/runner.ts';
import type { ParseOutcome, UpstreamRequest, UpstreamResponse } from '../kit/types.ts';
import { AccountPool, DEFAULT_RATE_LIMIT_MS } from './accounts.ts';
import type { XConfig } from './config.ts';
import { GuestTokens } from './guest-token.ts';
import { parseTweetResult, parseUserResult, rateLimitReset, sessionSignal, windowExhausted } from './parse.ts';
import { graphqlRequest, guestActivationRequest, readGuestToken } from './requests.ts';
import { syndicationAdapter } from './syndication.ts';
import { parseSearchTimeline, parseUserTweets } from './timeline.ts';
import type { MicroblogUser, PostItem, SearchProduct, TimelinePage, XOperation } from './types.ts';

/** What a call came to. `not_configured`: it needs X_ACCOUNTS and there are none. */
export type XResult<T> = { kind: 'ok'; value: T } | { kind: 'not_found' } | { kind: 'unavailable'; reason: string } | { kind: 'not_configured' };

export interface CallContext {
  /** The request went away: the call stops and rejects with the signal's reason. */
  signal?: AbortSignal;
  /** Where failures are logged (the request's logger, which carries the request id). */
  log?: UpstreamLogger;
}

export interface XClientOptions {
  config: XConfig;
  runner: UpstreamRunner;
  pool: AccountPool;
  baseUrls: { graphql: string; api: string; syndication: string };
  timeoutMs: number;
  now?: () => number;
}

const UPSTREAM = 'x';

export class XClient {
  readonly #options: XClientOptions;
  readonly #guest: GuestTokens;
  readonly #now: () => number;

  constructor(options: XClientOptions) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
    this.#guest = new GuestTokens(() => this.#activateGuest());
  }

  /** True when logged-in sessions are configured (search, user, user-tweets can run). */
  get hasSessions(): boolean {
    return this.#options.pool.size > 0;
  }

  /** A single post by id (TweetResultByRestId, guest token). */
  tweet(id: string, context: CallContext = {}): Promise<XResult<PostItem>> {
    return this.#guestCall('TweetResultByRestId', { tweetId: id }, parseTweetResult, context);
  }

  /** A single post from the public embed source. */
  async legacyTweet(id: string, context: CallContext = {}): Promise<XResult<PostItem>> {
    const outcome = await this.#options.runner.call(syndicationAdapter, { id }, {
      baseUrl: this.#options.baseUrls.syndication,
      timeoutMs: this.#options.timeoutMs,
      signal: context.signal,
      log: false,
    });
    if (outcome.kind === 'failed') {
      if (context.signal?.aborted) throw context.signal.reason;
      return this.#unavailable(context, syndicationAdapter.operation, undefined, outcome.reason);
    }
    return this.#settle(outcome, syndicationAdapter.operation, undefined, context);
  }

  user(username: string, context: CallContext = {}): Promise<XResult<MicroblogUser>> {
    return this.#sessionCall('UserByScreenName', { screen_name: username }, parseUserResult, context);
  }

  search(query: string, product: SearchProduct, cursor: string | undefined, context: CallContext = {}): Promise<XResult<TimelinePage>> {
    const variables: Record<string, unknown> = { rawQuery: query, product: product === 'top' ? 'Top' : 'Latest' };
    if (cursor !== undefined) variables.cursor = cursor;
    return this.#sessionCall('SearchTimeline', variables, parseSearchTimeline, context);
  }

  /** A user's recent posts: the user is looked up first (its id, and whether its posts are protected). */
  async userTweets(username: string, cursor: string | undefined, context: CallContext = {}): Promise<XResult<TimelinePage>> {
    const user = await this.user(username, context);
    if (user.kind !== 'ok') return user;
    if (user.value.protected) return { kind: 'not_found' };
    const variables: Record<string, unknown> = { userId: user.value.id };
    if (cursor !== undefined) variables.cursor = cursor;
    return this.#sessionCall('UserTweets', variables, parseUserTweets, context);
  }

  async #activateGuest(): Promise<string> {
    const request = guestActivationRequest(this.#options.config, this.#options.baseUrls.api);
    // No caller's signal: the activation is shared, one caller leaving must not fail the others.
    const response = await this.#options.runner.fetch(request, { upstream: UPSTREAM, operation: 'guest/activate', timeoutMs: this.#options.timeoutMs, log: false });
    const token = readGuestToken(response.status, response.body);
    if (!token) throw new Error(`guest token activation answered ${response.status}`);
    return token;
  }

  async #fetch(request: UpstreamRequest, operation: string, context: CallContext): Promise<UpstreamResponse | { failed: string }> {
    try {
      return await this.#options.runner.fetch(request, { upstream: UPSTREAM, operation, timeoutMs: this.#options.timeoutMs, signal: context.signal, log: false });
    } catch (error) {
      if (context.signal?.aborted) throw context.signal.reason;
      return { failed: describeError(error) };
    }
  }

  /** Guest-token calls: a refused or rate-limited token is replaced once. */
  async #guestCall<T>(operation: XOperation, variables: Record<string, unknown>, parse: (r: UpstreamResponse) => ParseOutcome<T>, context: CallContext): Promise<XResult<T>> {
    let reason = '';
    let status: number | undefined;
    for (let attempt = 0; attempt < 2; attempt++) {
      let token: string;
      try {
        token = await this.#guest.get();
      } catch (error) {
        if (context.signal?.aborted) throw context.signal.reason;
        return this.#unavailable(context, 'guest/activate', undefined, describeError(error));
      }
      const request = graphqlRequest(this.#options.config, this.#options.baseUrls.graphql, operation, variables, { kind: 'guest', guestToken: token });
      const response = await this.#fetch(request, operation, context);
      if ('failed' in response) return this.#unavailable(context, operation, undefined, response.failed);
      const signal = sessionSignal(response);
      if (!signal) return this.#settle(parseSafely(parse, response), operation, response.status, context);
      this.#guest.refuse(token);
      status = response.status;
      reason = signal.kind === 'rate_limited' ? 'guest token rate-limited' : `guest token refused (${signal.code ?? response.status})`;
    }
    return this.#unavailable(context, operation, status, reason);
  }

  /** Session calls: rotate through the pool, resting rate-limited sessions and sidelining refused ones. */
  async #sessionCall<T>(operation: XOperation, variables: Record<string, unknown>, parse: (r: UpstreamResponse) => ParseOutcome<T>, context: CallContext): Promise<XResult<T>> {
    const pool = this.#options.pool;
    if (pool.size === 0) return { kind: 'not_configured' };
    const tried = new Set<number>();
    let last: { status?: number; reason: string } = { reason: 'every session is resting or sidelined' };
    for (;;) {
      const account = await pool.acquire(operation, tried);
      if (!account) return this.#unavailable(context, operation, last.status, `no session left: ${last.reason}`);
      tried.add(account.index);
      const request = graphqlRequest(this.#options.config, this.#options.baseUrls.graphql, operation, variables, { kind: 'session', session: account.session });
      const response = await this.#fetch(request, operation, context);
      if ('failed' in response) return this.#unavailable(context, operation, undefined, response.failed);
      if (windowExhausted(response)) await pool.limit(account, operation, rateLimitReset(response) ?? this.#now() + DEFAULT_RATE_LIMIT_MS);
      const signal = sessionSignal(response);
      if (signal?.kind === 'rate_limited') {
        await pool.limit(account, operation, signal.resetAt ?? this.#now() + DEFAULT_RATE_LIMIT_MS);
        context.log?.warn({ upstream: UPSTREAM, operation, status: response.status, account: AccountPool.describe(account) }, `x session ${AccountPool.describe(account)} is rate-limited on ${operation}; rotating`);
        last = { status: response.status, reason: 'rate-limited' };
        continue;
      }
      if (signal?.kind === 'refused') {
        const why = `refused: status ${signal.status}${signal.code === null ? '' : `, code ${signal.code}`}`;
        await pool.sideline(account, why);
        context.log?.warn({ upstream: UPSTREAM, operation, status: response.status, code: signal.code, account: AccountPool.describe(account) }, `x session ${AccountPool.describe(account)} sidelined (${why})`);
        last = { status: response.status, reason: why };
        continue;
      }
      return this.#settle(parseSafely(parse, response), operation, response.status, context);
    }
  }

  #settle<T>(outcome: ParseOutcome<T>, operation: string, status: number | undefined, context: CallContext): XResult<T> {
    if (outcome.kind === 'ok') return outcome;
    if (outcome.kind === 'not_found' || outcome.kind === 'empty') return { kind: 'not_found' };
    return this.#unavailable(context, operation, status, `${outcome.kind}: ${outcome.reason}`);
  }

  #unavailable(context: CallContext, operation: string, status: number | undefined, reason: string): XResult<never> {
    context.log?.warn({ upstream: UPSTREAM, operation, status, reason }, `upstream x ${operation} unavailable: ${reason}`);
    return { kind: 'unavailable', reason };
  }
}

/** A parser that throws read an answer it cannot: the upstream changed. */
function parseSafely<T>(parse: (r: UpstreamResponse) => ParseOutcome<T>, response: UpstreamResponse): ParseOutcome<T> {
  try {
    return parse(response);
  } catch (error) {
    return { kind: 'changed', reason: `unreadable answer: ${describeError(error)}` };
  }
}
