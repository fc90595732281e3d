/**
 * Freelancer's public projects API (`/api/projects/0.1/`) as adapter pairs. The projections the
 * endpoints need are asked for explicitly: `full_description` (else only a preview),
 * `job_details` (the skills' names), `user_details` with the owner's country, status and
 * employer reputation (the `users` map of the result). Pure: an OAuth token, when configured, is
 * added by the client's interceptor.
 */
import type { Adapter, UpstreamRequest } from '../kit/types.ts';
import { parseJobs, parseProject, parseSearch } from './parse.ts';
import type { Job, ProjectDetail, ProjectRef, SearchPage, SearchParams } from './types.ts';

export const API_PATH = 'api/projects/0.1';

type Query = Array<[string, string]>;

/** A GET of `path` under the API with the parameters in order (repeated names for `jobs[]`). */
function apiGet(baseUrl: string, path: string, query: Query): UpstreamRequest {
  const url = new URL(`${API_PATH}/${path}`, baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  for (const [name, value] of query) url.searchParams.append(name, value);
  return { url: url.toString(), method: 'GET', headers: { Accept: 'application/json' } };
}

/** What every project read asks for besides the project itself. */
const PROJECTIONS: Query = [
  ['full_description', 'true'],
  ['job_details', 'true'],
  ['user_details', 'true'],
  ['user_country_details', 'true'],
];

/** The search's parameters, as Freelancer documents them for `projects/active/`. */
export function searchQuery(p: SearchParams): Query {
  const query: Query = [['query', p.query]];
  for (const id of p.jobIds) query.push(['jobs[]', String(id)]);
  if (p.minBudget !== undefined) query.push(['min_price', String(p.minBudget)]);
  if (p.maxBudget !== undefined) query.push(['max_price', String(p.maxBudget)]);
  if (p.projectType !== undefined) query.push(['project_types[]', p.projectType]);
  // No sort_field is the API's own ranking (relevance); time_updated lists the newest first.
  if (p.sort === 'latest') query.push(['sort_field', 'time_updated']);
  query.push(...PROJECTIONS, ['limit', String(p.limit)], ['offset', String(p.offset)]);
  return query;
}

export const searchAdapter: Adapter<SearchParams, SearchPage> = {
  upstream: 'freelancer',
  operation: 'projects_active',
  baseUrl: 'https://www.freelancer.com',
  buildRequest: (p, { baseUrl }) => apiGet(baseUrl, 'projects/active/', searchQuery(p)),
  parse: (response, p) => parseSearch(response, p.limit),
};

/**
 * One project by id (`projects[]`) or by the `<category>/<slug>` of its page (`seo_urls[]`), on
 * the list endpoint: unlike `projects/{id}/`, it answers the owner's details in `users`, and it
 * takes both kinds of reference.
 */
export const projectAdapter: Adapter<ProjectRef, ProjectDetail> = {
  upstream: 'freelancer',
  operation: 'projects',
  baseUrl: 'https://www.freelancer.com',
  buildRequest: (ref, { baseUrl }) =>
    apiGet(baseUrl, 'projects/', [
      ref.kind === 'id' ? ['projects[]', String(ref.id)] : ['seo_urls[]', ref.seoUrl],
      ...PROJECTIONS,
      ['user_status', 'true'],
      ['user_employer_reputation', 'true'],
      ['limit', '1'],
    ]),
  parse: (response, ref) => parseProject(response, ref),
};

/** The whole skill catalogue, to turn skill names into the job ids search filters by. */
export const jobsAdapter: Adapter<Record<string, never>, Job[]> = {
  upstream: 'freelancer',
  operation: 'jobs',
  baseUrl: 'https://www.freelancer.com',
  buildRequest: (_params, { baseUrl }) => apiGet(baseUrl, 'jobs/', [['lang', 'en']]),
  parse: (response) => parseJobs(response),
};
