/**
 * The freelance-marketplace (Freelancer.com) endpoints (docs/freelance.md): a search of active
 * projects with opaque page tokens bound to their query, and one project with its bid summary
 * and its owner's public details. Each costs its price (3 by default) on success; a missing
 * project (404) and an upstream that could not be asked or answered in a layout we do not know
 * (502) are free.
 */
import { httpErrors, type FieldErrors } from '../core/errors.ts';
import { between, custom, integer, max, min, oneOf, parsed, prohibits, required, requiredWithout, string, stringList, url } from '../validation/rules.ts';
import { defineEndpoint, type HandlerServices } from '../pipeline/endpoint.ts';
import {
  PROJECT_TYPES,
  SEARCH_SORTS,
  projectId,
  projectRefFromUrl,
  type FreelanceOutcome,
  type ProjectDetail,
  type ProjectItem,
  type ProjectRef,
  skillKey,
} from '../adapters/freelance/index.ts';

export const FREELANCE_MESSAGES = {
  projectUrl: 'The url must be a Freelancer project URL (https://www.freelancer.com/projects/<category>/<slug> or /projects/<id>).',
  projectId: 'The id must be a Freelancer project id (digits only).',
  skillNames: 'Each of the skills must be a skill name (a string of 1 to 100 characters).',
  unknownSkills: (names: readonly string[]) =>
    `Unknown skill${names.length > 1 ? 's' : ''}: ${names.join(', ')}. Skills are Freelancer's skill names, such as "PHP", "Python" or "Graphic Design".`,
  invalidToken: 'The next page token is invalid.',
  otherQuery: 'The next page token does not belong to this query.',
  /** Laravel 8's `gte` with another field (its wording, without "to"). */
  maxBelowMin: (min: number) => `The max budget must be greater than or equal ${min}.`,
} as const;

const BILLING_SEARCH = { product: 'scraping', operation: 'freelance_search' } as const;
const BILLING_PROJECT = { product: 'scraping', operation: 'freelance_project' } as const;

// PHP's is_numeric, as Laravel's `numeric` rule reads it.
const NUMERIC_TEXT = /^\s*[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?\s*$/;
const numberOf = (value: unknown): number | null =>
  typeof value === 'number' ? (Number.isFinite(value) ? value : null) : typeof value === 'string' && NUMERIC_TEXT.test(value) ? Number(value) : null;

/** Laravel's `numeric` ("The min budget must be a number."); the handler gets the number. */
const numeric = () => parsed('numeric', numberOf, (attr) => `The ${attr} must be a number.`, { describe: (s) => void (s.type = 'number') });


/** Laravel's `max` on an array ("must not have more than 20 items."), described as `maxItems`. */
const maxItems = (limit: number) =>
  custom('max', (value) => Array.isArray(value) && value.length <= limit, (attr) => `The ${attr} must not have more than ${limit} items.`, { describe: (s) => void (s.maxItems = limit) });

const isSkillName = (value: unknown): value is string => typeof value === 'string' && value.trim() !== '' && value.trim().length <= 100;

/** Every entry a skill name; the handler gets them trimmed. */
const skillNames = () =>
  parsed('skill_names', (value) => (Array.isArray(value) && value.every(isSkillName) ? value.map((name: string) => name.trim()) : null), FREELANCE_MESSAGES.skillNames);

/**
 * The scope a page token is bound to: the query and every filter, normalised as the handler reads
 * them (skills by name, any case and order; budgets as numbers), so the same search in another
 * spelling keeps its tokens and another search does not. `limit` is not part of it: a page of
 * another size continues from the same place.
 */
export function searchScope(values: { query?: unknown; skills?: unknown; min_budget?: unknown; max_budget?: unknown; project_type?: unknown; sort?: unknown }): string {
  const skills = Array.isArray(values.skills) ? [...new Set(values.skills.filter(isSkillName).map(skillKey))].sort() : [];
  const number = (value: unknown) => (value === undefined || value === null || value === '' ? null : numberOf(value));
  const text = (value: unknown, fallback: string | null) => (typeof value === 'string' && value.trim() !== '' ? value.trim() : fallback);
  return `freelance:${JSON.stringify([text(values.query, ''), skills, number(values.min_budget), number(values.max_budget), text(values.project_type, null), text(values.sort, 'relevance')])}`;
}

const TOKEN_FIELD = 'next_page_token';
const SCOPE_FIELDS = ['query', 'skills', 'min_budget', 'max_budget', 'project_type', 'sort'] as const;

/** The offset a valid token carries, or why it is refused. */
async function tokenOffset(services: HandlerServices, token: string, scope: string): Promise<{ ok: true; offset: number } | { ok: false; message: string }> {
  const check = await services.capabilities.freelance().pageTokens.verify(token, scope, 'next');
  if (!check.ok) return { ok: false, message: check.reason === 'other_scope' ? FREELANCE_MESSAGES.otherQuery : FREELANCE_MESSAGES.invalidToken };
  const offset = Number(check.cursor);
  return Number.isSafeInteger(offset) && offset >= 0 ? { ok: true, offset } : { ok: false, message: FREELANCE_MESSAGES.invalidToken };
}

/** What an outcome answers: the value, or the contract's 404 / 422 / 502. */
function settle<T>(outcome: FreelanceOutcome<T>): T {
  switch (outcome.kind) {
    case 'ok':
      return outcome.value;
    case 'not_found':
      throw httpErrors.notFound();
    case 'unknown_skills':
      throw httpErrors.fieldInvalid('skills', FREELANCE_MESSAGES.unknownSkills(outcome.names));
    default:
      throw httpErrors.badGateway();
  }
}

const EXAMPLE_ITEM: ProjectItem = {
  id: 37912345,
  url: 'https://www.freelancer.com/projects/python/scrape-product-catalogue-csv',
  title: 'Scrape a product catalogue into CSV',
  description: 'I need a Python script that reads our supplier\'s catalogue (about 4,000 products) and writes a CSV with name, SKU, price and stock.',
  type: 'fixed',
  budget: { min: 30, max: 250, currency: 'USD' },
  skills: ['Python', 'Web Scraping', 'Data Entry'],
  bid_count: 14,
  average_bid: 142.5,
  posted_at: '2026-11-20T09:14:03.000000Z',
  country: 'Australia',
  status: 'active',
};

const EXAMPLE_DETAIL: ProjectDetail = {
  ...EXAMPLE_ITEM,
  updated_at: '2026-11-20T11:02:40.000000Z',
  bid_period_days: 7,
  language: 'en',
  upgrades: ['urgent'],
  hourly: null,
  owner: {
    id: 4455667,
    username: 'catalogue_co',
    display_name: 'Catalogue Co.',
    country: 'Australia',
    city: 'Brisbane',
    registered_at: '2019-03-02T22:41:10.000000Z',
    payment_verified: true,
    rating: 4.9,
    reviews: 23,
  },
};

export const freelanceSearchEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/freelance/search',
  summary: 'Search freelance projects',
  description: ({ credits }) =>
    `Active projects on Freelancer.com matching a query (\`/api/projects/0.1/projects/active/\`), filtered by skill names, budget and type, ranked by relevance or newest first. Budgets are in each project's own currency. One page at a time: pass back \`next_page_token\` with the same query and filters. An unknown skill name is a 422. Costs ${credits('freelance_search')}; an upstream failure (502) is free.`,
  tag: 'Freelance',
  input: 'body',
  schema: {
    fields: {
      query: { rules: [required(), string(), max(200)], example: 'python scraping' },
      skills: { rules: [stringList({ type: 'string', minLength: 1, maxLength: 100 }), maxItems(20), skillNames()], description: 'Skill names as Freelancer lists them (any case), e.g. `["Python", "Web Scraping"]`. A project matches when it asks for any of them.' },
      min_budget: { rules: [numeric(), min(0)], description: 'Lowest budget, in the project\'s currency (Freelancer\'s `min_price`).' },
      max_budget: { rules: [numeric(), min(0)], description: 'Highest budget, in the project\'s currency (Freelancer\'s `max_price`).' },
      project_type: { rules: [string(), oneOf(PROJECT_TYPES)], description: '`fixed` price or `hourly`.' },
      sort: { rules: [string(), oneOf(SEARCH_SORTS)], default: 'relevance', description: '`relevance` (Freelancer\'s ranking) or `latest` (most recently updated first).' },
      limit: { rules: [integer(), between(1, 100)], default: 25 },
      next_page_token: { rules: [string()], description: 'From the previous answer\'s pagination, with the same query and filters.' },
    },
  },
  async afterValidation({ input, services }, errors: FieldErrors) {
    const minBudget = errors.min_budget ? null : numberOf(input.min_budget);
    const maxBudget = errors.max_budget ? null : numberOf(input.max_budget);
    if (minBudget !== null && maxBudget !== null && maxBudget < minBudget) (errors.max_budget ??= []).push(FREELANCE_MESSAGES.maxBelowMin(minBudget));
    const token = typeof input[TOKEN_FIELD] === 'string' ? input[TOKEN_FIELD].trim() : '';
    // A token is judged against a valid query only: a field already refused is reported as such.
    if (token === '' || errors[TOKEN_FIELD] || SCOPE_FIELDS.some((field) => errors[field])) return;
    const check = await tokenOffset(services, token, searchScope(input));
    if (!check.ok) (errors[TOKEN_FIELD] ??= []).push(check.message);
  },
  billing: BILLING_SEARCH,
  history: true,
  success: {
    status: 200,
    description: 'One page of projects, and the token of the next page (null on the last) with the number of matches in all.',
    example: { response: [EXAMPLE_ITEM], pagination: { next_page_token: 'eyJjIjoiMjUi…', total_count: 1342 } },
  },
  errors: [403, 422, 502],
  async handler({ input, services, upstream }) {
    const scope = searchScope(input);
    let offset = 0;
    if (input.next_page_token !== undefined) {
      const check = await tokenOffset(services, input.next_page_token, scope);
      if (!check.ok) throw httpErrors.fieldInvalid(TOKEN_FIELD, check.message);
      offset = check.offset;
    }
    const freelance = services.capabilities.freelance();
    const page = settle(
      await freelance.client.search(
        {
          query: input.query,
          skills: input.skills ?? [],
          minBudget: input.min_budget,
          maxBudget: input.max_budget,
          projectType: input.project_type,
          sort: input.sort,
          limit: input.limit,
          offset,
        },
        upstream,
      ),
    );
    // The API's count says whether more follow (it may list fewer than asked on a page that is
    // not the last); without one, a full page may have a next.
    const next = offset + page.projects.length;
    const more = page.projects.length > 0 && (page.total === null ? page.projects.length >= input.limit : next < page.total);
    return {
      body: {
        response: page.projects,
        pagination: { next_page_token: more ? await freelance.pageTokens.sign(String(next), scope, 'next') : null, total_count: page.total },
      },
    };
  },
});

export const freelanceProjectEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/freelance/project',
  summary: 'One freelance project',
  description: ({ credits }) =>
    `A Freelancer.com project by its page URL or id (send exactly one), with its full description, bid summary (\`bid_count\`, \`average_bid\` in the budget's currency) and its owner's public details. Costs ${credits('freelance_project')}; a missing or deleted project (404) and an upstream failure (502) are free.`,
  tag: 'Freelance',
  input: 'body',
  schema: {
    fields: {
      url: {
        // The handler gets the project reference: an id, or the page's <category>/<slug>.
        rules: [requiredWithout('id'), string(), url(), prohibits('id'), parsed('freelancer_project_url', (value): ProjectRef | null => (typeof value === 'string' ? projectRefFromUrl(value) : null), FREELANCE_MESSAGES.projectUrl)],
        description: 'A project page on freelancer.com or a country site (freelancer.co.uk, freelancer.in…): `/projects/<category>/<slug>` or `/projects/<id>`.',
        example: 'https://www.freelancer.com/projects/python/scrape-product-catalogue-csv',
      },
      id: {
        rules: [requiredWithout('url'), prohibits('url'), parsed('freelancer_project_id', projectId, FREELANCE_MESSAGES.projectId, { describe: (s) => Object.assign(s, { type: 'string', pattern: '^[1-9]\\d{0,15}$' }) })],
        description: 'The project id, as digits (a JSON integer is accepted too).',
        example: '37912345',
      },
    },
  },
  billing: BILLING_PROJECT,
  history: true,
  success: { status: 200, description: 'The project, its bid summary and its owner.', example: { response: EXAMPLE_DETAIL } },
  errors: [403, 404, 422, 502],
  async handler({ input, services, upstream }) {
    const ref: ProjectRef = input.url !== undefined ? input.url : { kind: 'id', id: input.id };
    return { body: { response: settle(await services.capabilities.freelance().client.project(ref, upstream)) } };
  },
});

export const FREELANCE_ENDPOINTS = [freelanceSearchEndpoint, freelanceProjectEndpoint];
