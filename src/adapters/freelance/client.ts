/**
 * The freelance client: search and project look-ups on Freelancer's public projects API, each
 * one request through the upstream runtime (outbound client, circuit breaker, logs, metrics),
 * plus the cached skill catalogue search needs to turn skill names into job ids. An OAuth token
 * (FREELANCER_OAUTH_TOKEN), when configured, is sent by an interceptor in Freelancer's
 * `freelancer-oauth-v1` header; the public endpoints answer without one.
 */
import { raceAbort } from '../../core/abort.ts';
import type { Interceptor, Upstream, UpstreamRuntime } from '../kit/runtime.ts';
import type { CallContext, CallOutcome } from '../kit/types.ts';
import { jobsAdapter, projectAdapter, searchAdapter } from './requests.ts';
import { isProjectPage } from './parse.ts';
import { SkillCatalogue } from './skills.ts';
import type { ProjectDetail, ProjectRef, SearchPage, SearchParams } from './types.ts';

/** What the endpoints act on: a value, "does not exist" (404), unknown skill names (422), or "could not ask" (502). */
export type FreelanceOutcome<T> =
  | { kind: 'ok'; value: T }
  | { kind: 'not_found' }
  | { kind: 'unknown_skills'; names: string[] }
  | { kind: 'unavailable'; reason: string };

export interface FreelanceClientOptions {
  runtime: UpstreamRuntime;
  baseUrl: string;
  timeoutMs: number;
  oauthToken?: string;
  /** How long the skill catalogue is kept. */
  skillsTtlMs: number;
  now?: () => number;
}

/** A search as the endpoint asks it: skill names, which the client resolves to the job ids the API filters by. */
export interface FreelanceSearch extends Omit<SearchParams, 'jobIds'> {
  skills: readonly string[];
}

/** Adds the account's token to every request. */
export function oauthInterceptor(token: string): Interceptor {
  return (exchange, next) => next({ ...exchange, request: { ...exchange.request, headers: { ...exchange.request.headers, 'freelancer-oauth-v1': token } } });
}

function settle<T>(outcome: CallOutcome<T>): FreelanceOutcome<T> {
  if (outcome.kind === 'ok') return outcome;
  if (outcome.kind === 'not_found') return { kind: 'not_found' };
  return { kind: 'unavailable', reason: outcome.kind === 'empty' ? 'empty answer' : outcome.reason };
}

export class FreelanceClient {
  readonly #upstream: Upstream;
  readonly #skills: SkillCatalogue;

  constructor(options: FreelanceClientOptions) {
    const interceptors = options.oauthToken ? [oauthInterceptor(options.oauthToken)] : [];
    this.#upstream = options.runtime.upstream({ timeoutMs: options.timeoutMs, baseUrl: options.baseUrl, interceptors });
    this.#skills = new SkillCatalogue(
      async () => {
        // Shared by every waiting request, so tied to none of them: no signal, the runtime's own log.
        const outcome = await this.#upstream.call(jobsAdapter, {}, { log: options.runtime.log });
        return outcome.kind === 'ok' ? { kind: 'ok', jobs: outcome.value } : { kind: 'failed', outcome };
      },
      options.skillsTtlMs,
      options.now,
    );
  }

  /** Skill catalogue reads made so far. */
  get skillCatalogueReads(): number {
    return this.#skills.reads;
  }

  /** The fixed, harmless call `gleaner upstreams probe` makes: one active project about "python". */
  probe(context: CallContext): Promise<CallOutcome<unknown>> {
    return this.#upstream.call(searchAdapter, { query: 'python', jobIds: [], sort: 'latest', limit: 1, offset: 0 }, context);
  }

  /** `projects/active/`, skills resolved to job ids first (an unknown name is answered, not searched). */
  async search(search: FreelanceSearch, context: CallContext = {}): Promise<FreelanceOutcome<SearchPage>> {
    let jobIds: number[] = [];
    if (search.skills.length > 0) {
      const read = this.#skills.index();
      const catalogue = await (context.signal ? raceAbort(read, context.signal) : read);
      if (catalogue.kind !== 'ok') return settleJobs(catalogue.outcome as CallOutcome<unknown>);
      const resolved = catalogue.index.resolve(search.skills);
      if (resolved.kind === 'unknown') return { kind: 'unknown_skills', names: resolved.names };
      jobIds = resolved.ids;
    }
    const { skills: _names, ...params } = search;
    const outcome = await this.#upstream.call(searchAdapter, { ...params, jobIds }, context);
    // The search path always exists: a 404 there is the API failing, not a missing thing.
    return outcome.kind === 'not_found' ? { kind: 'unavailable', reason: 'search answered 404' } : settle(outcome);
  }

  /**
   * One project with its owner, by id or by its page's `<category>/<slug>`. A page the API's
   * `seo_urls[]` filter does not find is resolved to its project: by the id that ends a slug
   * (`…-39012345`), else among the active projects a search for the slug's words lists; either
   * counts only when the project's own page is the one asked for.
   */
  async project(ref: ProjectRef, context: CallContext = {}): Promise<FreelanceOutcome<ProjectDetail>> {
    const outcome = await this.#upstream.call(projectAdapter, ref, context);
    if (ref.kind === 'id' || outcome.kind !== 'not_found') return settle(outcome);
    const slug = ref.seoUrl.slice(ref.seoUrl.indexOf('/') + 1);
    const trailingId = /-(\d{1,16})$/.exec(slug);
    if (trailingId) {
      const byId = await this.#upstream.call(projectAdapter, { kind: 'id', id: Number(trailingId[1]) }, context);
      if (byId.kind === 'ok' && isProjectPage(byId.value, ref.seoUrl)) return byId;
      if (byId.kind !== 'ok' && byId.kind !== 'not_found') return settle(byId);
    }
    const words = slug.replace(/-\d+$/, '').replace(/[-_]+/g, ' ').trim();
    if (words === '') return { kind: 'not_found' };
    const listed = await this.#upstream.call(searchAdapter, { query: words, jobIds: [], sort: 'relevance', limit: SLUG_SEARCH_LIMIT, offset: 0 }, context);
    if (listed.kind !== 'ok') return listed.kind === 'not_found' ? { kind: 'unavailable', reason: 'search answered 404' } : settle(listed);
    const found = listed.value.projects.find((project) => isProjectPage(project, ref.seoUrl));
    return found === undefined ? { kind: 'not_found' } : settle(await this.#upstream.call(projectAdapter, { kind: 'id', id: found.id }, context));
  }
}

/** How many active projects a slug's search looks through. */
const SLUG_SEARCH_LIMIT = 50;

/** A failed catalogue read: never "not found" (the catalogue always exists). */
function settleJobs(outcome: CallOutcome<unknown>): FreelanceOutcome<never> {
  return { kind: 'unavailable', reason: outcome.kind === 'ok' ? 'unreadable skill catalogue' : outcome.kind === 'empty' ? 'empty skill catalogue' : `skill catalogue: ${outcome.reason ?? outcome.kind}` };
}
