/**
 * Public entry of the freelance-marketplace (Freelancer.com) adapter behind /v1/freelance/*, and
 * the reading of its settings:
 *
 * | variable | default |
 * |---|---|
 * | UPSTREAM_FREELANCER_URL | https://www.freelancer.com (the API is under `/api/projects/0.1/`) |
 * | FREELANCER_OAUTH_TOKEN | none: the public endpoints answer anonymously |
 * | FREELANCER_TIMEOUT_MS | 15000 |
 * | FREELANCER_SKILLS_TTL_MS | 21600000 (6 h): how long the skill catalogue is kept |
 * | PAGE_TOKEN_SECRET | a secret generated once and kept in the database |
 */
import type { Capability } from '../../core/capability.ts';
import type { Queryable } from '../../storage/db.ts';
import type { UpstreamRuntime } from '../kit/runtime.ts';
// Page tokens work as the microblog's do (signed, bound to their query); only the key's name differs.
import type { PageTokens } from '../x/page-token.ts';
import { pageTokenSecretSetting, pageTokensFor } from '../x/secret.ts';
import { FreelanceClient } from './client.ts';

export { FreelanceClient, type FreelanceOutcome, type FreelanceSearch } from './client.ts';
export { projectId, projectRefFromUrl, isFreelancerHost } from './ids.ts';
export { PROJECT_TYPES, SEARCH_SORTS } from './types.ts';
export type { ProjectDetail, ProjectItem, ProjectOwner, ProjectRef, ProjectType, SearchSort } from './types.ts';
export { skillKey } from './skills.ts';

export const DEFAULT_FREELANCER_URL = 'https://www.freelancer.com';
/** The name of the generated page-token key in `service_secrets`. */
export const FREELANCE_PAGE_TOKEN_SECRET_NAME = 'freelance_page_token';

export interface FreelanceSettings {
  baseUrl: string;
  oauthToken?: string;
  timeoutMs: number;
  skillsTtlMs: number;
  pageTokenSecret?: Buffer;
}

export interface FreelanceDeps {
  runtime: UpstreamRuntime;
  /** Where the generated page-token key is kept (absent: one per process). */
  db?: Queryable;
}

/** What the endpoints use. */
export interface Freelance {
  client: FreelanceClient;
  pageTokens: PageTokens;
}

export const freelanceCapability: Capability<FreelanceSettings, Freelance, FreelanceDeps> = {
  name: 'freelance',
  settings(env) {
    return {
      baseUrl: env.url('UPSTREAM_FREELANCER_URL') ?? DEFAULT_FREELANCER_URL,
      oauthToken: env.text('FREELANCER_OAUTH_TOKEN'),
      timeoutMs: env.positiveInteger('FREELANCER_TIMEOUT_MS') ?? 15_000,
      skillsTtlMs: env.positiveInteger('FREELANCER_SKILLS_TTL_MS') ?? 6 * 60 * 60 * 1000,
      pageTokenSecret: pageTokenSecretSetting(env),
    };
  },
  start(settings, deps) {
    return {
      client: new FreelanceClient({ runtime: deps.runtime, baseUrl: settings.baseUrl, timeoutMs: settings.timeoutMs, oauthToken: settings.oauthToken, skillsTtlMs: settings.skillsTtlMs }),
      pageTokens: pageTokensFor(settings.pageTokenSecret, deps.db, FREELANCE_PAGE_TOKEN_SECRET_NAME),
    };
  },
  // Nothing to close: connections belong to the outbound client.
  close: async () => {},
};
