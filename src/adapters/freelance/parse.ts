/**
 * Pure parsers of Freelancer's API answers. Every answer is an envelope,
 * `{"status":"success","result":…,"request_id":…}` or `{"status":"error","message":…,
 * "error_code":…}`: `readEnvelope` triages it (status, HTML block pages, error codes), then the
 * mappers read `result`. A layout they do not know throws ShapeError, which becomes `changed`
 * (a 502), never an answer full of nulls.
 */
import { headerValue, jsonOrUndefined } from '../kit/decode.ts';
import { firstItems, MAX_NESTED_ITEMS, MAX_PAGE_ITEMS } from '../kit/limits.ts';
import { isObject, isoFromEpochSeconds, mapReadable, ShapeError, type Json } from '../kit/parse.ts';
import type { ParseOutcome, UpstreamResponse } from '../kit/types.ts';
import { PROJECT_TYPES, type Budget, type Job, type ProjectDetail, type ProjectItem, type ProjectOwner, type ProjectRef, type ProjectType, type SearchPage } from './types.ts';
import { trimTrailing } from '../../core/text.ts';

/**
 * Skills kept from the catalogue: Freelancer's holds about 3,000; the cap only bounds what a
 * broken answer costs to read and to keep.
 */
export const MAX_SKILL_CATALOGUE = 20_000;

/** Where project links point: the public site, whichever host served the API. */
export const FREELANCER_ORIGIN = 'https://www.freelancer.com';

export { isoFromEpochSeconds, ShapeError };

/** An optional field: its value when it has the type, null when absent or null; another type is a layout change. */
function optional<T>(data: Json, name: string, type: 'string' | 'number' | 'boolean', where: string): T | null {
  const value = data[name];
  if (value === undefined || value === null) return null;
  if (typeof value !== type || (type === 'number' && !Number.isFinite(value))) throw new ShapeError(`${where}.${name} is ${typeof value}, expected ${type}`);
  return value as T;
}

const optionalText = (data: Json, name: string, where: string) => optional<string>(data, name, 'string', where);
const optionalNumber = (data: Json, name: string, where: string) => optional<number>(data, name, 'number', where);
const optionalFlag = (data: Json, name: string, where: string) => optional<boolean>(data, name, 'boolean', where);

function optionalObject(data: Json, name: string, where: string): Json | null {
  const value = data[name];
  if (value === undefined || value === null) return null;
  if (!isObject(value)) throw new ShapeError(`${where}.${name} is not an object`);
  return value;
}

const timestamp = (data: Json, name: string, where: string): string | null => {
  const seconds = optionalNumber(data, name, where);
  return seconds === null || seconds <= 0 ? null : isoFromEpochSeconds(seconds);
};

/** A `seo_url` as a path under `/projects/`: no leading slash, no `projects/` prefix, no trailing slash. */
const seoPath = (seoUrl: string) => trimTrailing(seoUrl.replace(/^\/+/, '').replace(/^projects\//i, ''), '/');

/** The public page of a project: its `seo_url` under `/projects/`, else `/projects/<id>`. */
export function projectPageUrl(id: number, seoUrl: string | null): string {
  const path = seoPath(seoUrl ?? '');
  return path === '' ? `${FREELANCER_ORIGIN}/projects/${id}` : `${FREELANCER_ORIGIN}/projects/${path.split('/').map(encodeURIComponent).join('/')}`;
}

/** Whether a project's page is the one a `<category>/<slug>` names (the site's paths are read in any case). */
export function isProjectPage(project: { url: string }, seoUrl: string): boolean {
  return project.url.toLowerCase() === projectPageUrl(0, seoUrl).toLowerCase();
}

/** Whether a project of an answer is the one a reference asks for. */
function namesProject(data: Json, ref: ProjectRef): boolean {
  if (ref.kind === 'id') return data.id === ref.id;
  return typeof data.seo_url === 'string' && seoPath(data.seo_url).toLowerCase() === seoPath(ref.seoUrl).toLowerCase();
}

/** Why an HTML page came instead of the API's JSON: a CDN or bot wall names itself. */
function htmlReason(body: string): string {
  if (/cloudflare|cf-ray|attention required|just a moment/i.test(body)) return 'HTML challenge page instead of JSON';
  if (/captcha/i.test(body)) return 'captcha page instead of JSON';
  return 'HTML page instead of JSON';
}

/**
 * Triage of any answer before mapping: the `result` of a success envelope, or the verdict the
 * status, body or error envelope carries.
 * - 404, or an error whose code says NOT_FOUND: not found;
 * - 401, 403, 429, 5xx, an HTML page: blocked (the API refused or could not answer us);
 * - any other status, an error envelope on a 2xx, a body that is not the envelope: changed.
 */
export function readEnvelope(response: UpstreamResponse): ParseOutcome<unknown> {
  const { status } = response;
  const looksHtml = /html/i.test(headerValue(response.headers, 'content-type') ?? '') || /^\s*</.test(response.body);
  const json = looksHtml ? undefined : jsonOrUndefined(response.body);
  const envelope = isObject(json) ? json : undefined;
  const errorCode = typeof envelope?.error_code === 'string' ? envelope.error_code : undefined;
  const described = envelope?.status === 'error' ? ` ${errorCode ?? 'no error code'}: ${typeof envelope.message === 'string' ? envelope.message : 'no message'}` : '';

  if (status === 404 || (errorCode !== undefined && /NOT_FOUND/i.test(errorCode))) return { kind: 'not_found', reason: described.trim() || undefined };
  if (status === 401 || status === 403) return { kind: 'blocked', reason: `refused (${status})${described}` };
  if (status === 429) return { kind: 'blocked', reason: `rate limited (429)${described}` };
  if (status >= 500) return { kind: 'blocked', reason: `upstream error (${status})${described}` };
  if (looksHtml) return { kind: 'blocked', reason: htmlReason(response.body) };
  if (status < 200 || status > 299) return { kind: 'changed', reason: `unexpected status ${status}${described}` };
  if (envelope === undefined) return { kind: 'changed', reason: json === undefined ? 'the body is not JSON' : 'the body is not an envelope object' };
  if (envelope.status === 'error') return { kind: 'changed', reason: `error envelope on ${status}${described}` };
  if (envelope.status !== 'success' || !('result' in envelope)) return { kind: 'changed', reason: 'no success envelope with a result' };
  return { kind: 'ok', value: envelope.result };
}

/** Runs a mapper on a readable answer's result; a layout it cannot read is `changed`. */
function mapResult<T>(response: UpstreamResponse, map: (result: unknown) => ParseOutcome<T>): ParseOutcome<T> {
  return mapReadable(readEnvelope(response), map);
}

function projectType(data: Json, where: string): ProjectType | null {
  const type = optionalText(data, 'type', where);
  if (type === null) return null;
  if (!(PROJECT_TYPES as readonly string[]).includes(type)) throw new ShapeError(`${where}.type is "${type}", expected fixed or hourly`);
  return type as ProjectType;
}

function budgetOf(data: Json, where: string): Budget {
  const budget = optionalObject(data, 'budget', where);
  const currency = optionalObject(data, 'currency', where);
  return {
    min: budget ? optionalNumber(budget, 'minimum', `${where}.budget`) : null,
    max: budget ? optionalNumber(budget, 'maximum', `${where}.budget`) : null,
    currency: currency ? optionalText(currency, 'code', `${where}.currency`) : null,
  };
}

function skillsOf(data: Json, where: string): string[] {
  const jobs = data.jobs;
  if (jobs === undefined || jobs === null) return [];
  if (!Array.isArray(jobs)) throw new ShapeError(`${where}.jobs is not an array`);
  return firstItems(jobs, MAX_NESTED_ITEMS).map((job, index) => {
    if (!isObject(job) || typeof job.name !== 'string') throw new ShapeError(`${where}.jobs[${index}] has no name`);
    return job.name;
  });
}

/** A user's country name: `location.country.name` (the API's user projection). */
function countryOf(user: Json | undefined, where: string): string | null {
  const location = user ? optionalObject(user, 'location', where) : null;
  const country = location ? optionalObject(location, 'country', `${where}.location`) : null;
  return country ? optionalText(country, 'name', `${where}.location.country`) : null;
}

/** The users of a result (its `users` map, keyed by id), read one by one as the projects kept name their owners. */
interface Users {
  get(id: number): Json | undefined;
}

/** The `users` map of a result, checked as an object; absent is empty. Only the owners asked for are read. */
function usersOf(result: Json): Users {
  const users = result.users;
  if (users === undefined || users === null) return { get: () => undefined };
  if (!isObject(users)) throw new ShapeError('result.users is not an object');
  return {
    get(id) {
      const key = String(id);
      if (!Object.hasOwn(users, key)) return undefined;
      const user = users[key];
      if (!isObject(user)) throw new ShapeError(`result.users.${key} is not an object`);
      return user;
    },
  };
}

/** A project of a result, mapped; `id` and `title` are what every layout has, so their absence is a change. */
function projectItem(data: unknown, users: Users, where: string): ProjectItem {
  if (!isObject(data)) throw new ShapeError(`${where} is not an object`);
  const id = data.id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw new ShapeError(`${where}.id is not an integer`);
  if (typeof data.title !== 'string') throw new ShapeError(`${where}.title is not a string`);
  const bidStats = optionalObject(data, 'bid_stats', where);
  const ownerId = optionalNumber(data, 'owner_id', where);
  const owner = ownerId === null ? undefined : users.get(ownerId);
  return {
    id,
    url: projectPageUrl(id, optionalText(data, 'seo_url', where)),
    title: data.title,
    description: optionalText(data, 'description', where) ?? optionalText(data, 'preview_description', where),
    type: projectType(data, where),
    budget: budgetOf(data, where),
    skills: skillsOf(data, where),
    bid_count: bidStats ? optionalNumber(bidStats, 'bid_count', `${where}.bid_stats`) : null,
    average_bid: bidStats ? optionalNumber(bidStats, 'bid_avg', `${where}.bid_stats`) : null,
    posted_at: timestamp(data, 'time_submitted', where) ?? timestamp(data, 'submitdate', where),
    country: countryOf(owner, `result.users.${ownerId}`),
    status: optionalText(data, 'status', where),
  };
}

function projectsOf(result: unknown): { projects: unknown[]; result: Json } {
  if (!isObject(result)) throw new ShapeError('result is not an object');
  if (!Array.isArray(result.projects)) throw new ShapeError('result.projects is not an array');
  return { projects: result.projects, result };
}

/**
 * `/projects/0.1/projects/active/`: one page of matches (an empty page is a page, not an error),
 * at most `limit` projects (the page asked for): an API answering more is cut before the
 * projects are read (issue 33: 60,000 projects once came back whole).
 */
export function parseSearch(response: UpstreamResponse, limit: number = MAX_PAGE_ITEMS): ParseOutcome<SearchPage> {
  return mapResult(response, (raw) => {
    const { projects, result } = projectsOf(raw);
    const users = usersOf(result);
    const total = optionalNumber(result, 'total_count', 'result');
    const items = firstItems(projects, Math.min(limit, MAX_PAGE_ITEMS)).map((project, index) => projectItem(project, users, `result.projects[${index}]`));
    return { kind: 'ok', value: { projects: items, total } };
  });
}

/** Upgrades set to true, by the API's names (`featured`, `urgent`, `sealed`, `NDA`...). */
function upgradesOf(data: Json, where: string): string[] {
  const upgrades = optionalObject(data, 'upgrades', where);
  if (!upgrades) return [];
  return Object.entries(upgrades)
    .filter(([, on]) => on === true)
    .map(([name]) => name);
}

function hourlyOf(data: Json, type: ProjectType | null, where: string): ProjectDetail['hourly'] {
  if (type !== 'hourly') return null;
  const info = optionalObject(data, 'hourly_project_info', where);
  const commitment = info ? optionalObject(info, 'commitment', `${where}.hourly_project_info`) : null;
  if (!commitment) return { hours: null, interval: null };
  const at = `${where}.hourly_project_info.commitment`;
  return { hours: optionalNumber(commitment, 'hours', at), interval: optionalText(commitment, 'interval', at) };
}

function ownerOf(ownerId: number | null, users: Users): ProjectOwner | null {
  if (ownerId === null) return null;
  const user = users.get(ownerId);
  const where = `result.users.${ownerId}`;
  if (!user) return { id: ownerId, username: null, display_name: null, country: null, city: null, registered_at: null, payment_verified: null, rating: null, reviews: null };
  const location = optionalObject(user, 'location', where);
  const status = optionalObject(user, 'status', where);
  const reputation = optionalObject(user, 'employer_reputation', where);
  const history = reputation ? optionalObject(reputation, 'entire_history', `${where}.employer_reputation`) : null;
  const historyAt = `${where}.employer_reputation.entire_history`;
  return {
    id: ownerId,
    username: optionalText(user, 'username', where),
    display_name: optionalText(user, 'display_name', where) ?? optionalText(user, 'public_name', where),
    country: countryOf(user, where),
    city: location ? optionalText(location, 'city', `${where}.location`) : null,
    registered_at: timestamp(user, 'registration_date', where),
    payment_verified: status ? optionalFlag(status, 'payment_verified', `${where}.status`) : null,
    rating: history ? optionalNumber(history, 'overall', historyAt) : null,
    reviews: history ? optionalNumber(history, 'reviews', historyAt) : null,
  };
}

/**
 * `/projects/0.1/projects/?projects[]=…` or `?seo_urls[]=…`: the one project asked for, with its
 * owner from `users`. No project, or a deleted one, is `not_found`; so is an answer that lists
 * only other projects (a filter the API did not apply must not answer another project).
 */
export function parseProject(response: UpstreamResponse, ref?: ProjectRef): ParseOutcome<ProjectDetail> {
  return mapResult(response, (raw) => {
    const { projects, result } = projectsOf(raw);
    if (projects.length === 0) return { kind: 'not_found', reason: 'no such project' };
    projects.forEach((project, index) => {
      if (!isObject(project)) throw new ShapeError(`result.projects[${index}] is not an object`);
    });
    const index = ref === undefined ? 0 : (projects as Json[]).findIndex((project) => namesProject(project, ref));
    if (index < 0) return { kind: 'not_found', reason: 'no project of the answer is the one asked for' };
    const project = projects[index] as Json;
    const where = `result.projects[${index}]`;
    const users = usersOf(result);
    const item = projectItem(project, users, where);
    if (project.deleted === true || item.status === 'deleted') return { kind: 'not_found', reason: 'deleted project' };
    return {
      kind: 'ok',
      value: {
        ...item,
        updated_at: timestamp(project, 'time_updated', where),
        bid_period_days: optionalNumber(project, 'bidperiod', where),
        language: optionalText(project, 'language', where),
        upgrades: upgradesOf(project, where),
        hourly: hourlyOf(project, item.type, where),
        owner: ownerOf(optionalNumber(project, 'owner_id', where), users),
      },
    };
  });
}

/** `/projects/0.1/jobs/`: the skill catalogue (the result is an array of jobs). */
export function parseJobs(response: UpstreamResponse): ParseOutcome<Job[]> {
  return mapResult(response, (result) => {
    if (!Array.isArray(result)) throw new ShapeError('result is not an array of jobs');
    const jobs = firstItems(result, MAX_SKILL_CATALOGUE).map((job, index): Job => {
      const where = `result[${index}]`;
      if (!isObject(job) || typeof job.id !== 'number' || typeof job.name !== 'string') throw new ShapeError(`${where} is not a job with an id and a name`);
      return { id: job.id, name: job.name, seoUrl: optionalText(job, 'seo_url', where) };
    });
    if (jobs.length === 0) return { kind: 'changed', reason: 'the skill catalogue is empty' };
    return { kind: 'ok', value: jobs };
  });
}
