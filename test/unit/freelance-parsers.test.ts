/**
 * The freelance adapter's pure parts: envelope triage, the search, project and skill-catalogue
 * parsers on the fixtures of test/fixtures/freelance/ (written ones and Freelancer SDK
 * recordings), and the requests the adapters build.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { isoFromEpochSeconds, parseJobs, parseProject, parseSearch, projectPageUrl, readEnvelope } from '../../src/adapters/freelance/parse.ts';
import { jobsAdapter, projectAdapter, searchAdapter } from '../../src/adapters/freelance/requests.ts';
import type { UpstreamResponse } from '../../src/adapters/kit/types.ts';

const fixture = (name: string) => readFileSync(new URL(`../fixtures/freelance/${name}`, import.meta.url), 'utf8');

function answer(body: string, status = 200, contentType = 'application/json'): UpstreamResponse {
  return { status, url: 'https://www.freelancer.com/api/projects/0.1/projects/active/', headers: { 'content-type': contentType }, body };
}

const context = { baseUrl: 'https://www.freelancer.com', now: new Date(0) };

describe('envelope triage', () => {
  test('a success envelope gives its result', () => {
    assert.deepEqual(readEnvelope(answer('{"status":"success","result":{"a":1}}')), { kind: 'ok', value: { a: 1 } });
  });

  test('not found: a 404, or an error code that says so', () => {
    assert.equal(readEnvelope(answer(fixture('error-not-found.json'), 404)).kind, 'not_found');
    assert.equal(readEnvelope(answer(fixture('error-not-found.json'), 400)).kind, 'not_found');
  });

  test('refusals and failures are blocked: 401, 403, 429, 5xx, an HTML page', () => {
    for (const status of [401, 403, 429, 500, 503]) {
      const outcome = readEnvelope(answer(fixture('error-invalid-param.json'), status));
      assert.equal(outcome.kind, 'blocked', String(status));
    }
    const page = readEnvelope(answer('<html><title>Just a moment...</title></html>', 200, 'text/html'));
    assert.deepEqual(page, { kind: 'blocked', reason: 'HTML challenge page instead of JSON' });
  });

  test('an error envelope on a 400 or a 200 is changed, with its code and message', () => {
    const outcome = readEnvelope(answer(fixture('error-invalid-param.json'), 400));
    assert.equal(outcome.kind, 'changed');
    assert.match((outcome as { reason: string }).reason, /ExceptionCodes\.INVALID_PARAMETER: Invalid value for parameter: project_types\[\]/);
    assert.equal(readEnvelope(answer(fixture('error-invalid-param.json'), 200)).kind, 'changed');
  });

  test('not JSON, not an envelope, or no result: changed', () => {
    assert.deepEqual(readEnvelope(answer('plain text')), { kind: 'changed', reason: 'the body is not JSON' });
    assert.equal(readEnvelope(answer('[1,2]')).kind, 'changed');
    assert.equal(readEnvelope(answer('{"status":"success"}')).kind, 'changed');
    assert.equal(readEnvelope(answer('{"result":{"projects":[]}}')).kind, 'changed');
  });
});

describe('search page', () => {
  const outcome = parseSearch(answer(fixture('search-page.json')));
  assert.equal(outcome.kind, 'ok');
  const page = (outcome as { value: { projects: any[]; total: number | null } }).value;

  test('a fixed project in USD, with its skills, bids, date and the owner\'s country', () => {
    assert.equal(page.total, 3);
    assert.deepEqual(page.projects[0], {
      id: 37912345,
      url: 'https://www.freelancer.com/projects/python/scrape-product-catalogue-csv',
      title: 'Scrape a product catalogue into CSV',
      description: "I need a Python script that reads our supplier's catalogue (about 4,000 products) and writes a CSV with name, SKU, price and stock.",
      type: 'fixed',
      budget: { min: 30, max: 250, currency: 'USD' },
      skills: ['Python', 'Web Scraping'],
      bid_count: 14,
      average_bid: 142.5,
      posted_at: '2025-11-20T09:04:03.000000Z',
      country: 'Australia',
      status: 'active',
    });
  });

  test('an hourly project keeps its own currency (rates in INR)', () => {
    const hourly = page.projects[1];
    assert.equal(hourly.type, 'hourly');
    assert.deepEqual(hourly.budget, { min: 600, max: 1500, currency: 'INR' });
    assert.equal(hourly.average_bid, 1100);
    assert.equal(hourly.country, 'India');
  });

  test('missing fields are null or empty: no bids, no skills, a preview only, an owner not in users, no maximum', () => {
    const sparse = page.projects[2];
    assert.deepEqual(sparse.budget, { min: 50000, max: null, currency: 'GBP' });
    assert.deepEqual(sparse.skills, []);
    assert.equal(sparse.bid_count, null);
    assert.equal(sparse.average_bid, null);
    assert.equal(sparse.description, 'A friendly logo for a small bakery in Leeds.');
    assert.equal(sparse.country, null);
  });

  test('an empty page is a page', () => {
    assert.deepEqual(parseSearch(answer(fixture('project-none.json'))), { kind: 'ok', value: { projects: [], total: 0 } });
  });

  test('real envelopes of another layout are changed, never a page of nulls', () => {
    for (const name of ['sdk-get-categories.json', 'sdk-get-budgets.json', 'jobs.json']) {
      const result = parseSearch(answer(fixture(name)));
      assert.equal(result.kind, 'changed', name);
    }
  });

  test('a project without an id or a title, or with a field of another type, is changed', () => {
    const page = (projects: unknown[]) => answer(JSON.stringify({ status: 'success', result: { projects } }));
    assert.equal(parseSearch(page([{ title: 'no id' }])).kind, 'changed');
    assert.equal(parseSearch(page([{ id: 1 }])).kind, 'changed');
    assert.equal(parseSearch(page([{ id: 1, title: 't', budget: { minimum: '30' } }])).kind, 'changed');
    assert.equal(parseSearch(page([{ id: 1, title: 't', type: 'contest' }])).kind, 'changed');
    assert.equal(parseSearch(page([{ id: 1, title: 't', jobs: [{ id: 3 }] }])).kind, 'changed');
  });
});

describe('one project', () => {
  test('hourly, in EUR, with its commitment, upgrades and its owner', () => {
    const outcome = parseProject(answer(fixture('project-hourly.json')));
    assert.equal(outcome.kind, 'ok');
    assert.deepEqual((outcome as { value: unknown }).value, {
      id: 38001234,
      url: 'https://www.freelancer.com/projects/excel/data-analyst-weekly-sales-reports',
      title: 'Data analyst for weekly sales reports',
      description: 'We need someone to build our weekly sales report in Excel and Power BI.\n\nAbout 10 hours a week for three months.',
      type: 'hourly',
      budget: { min: 15, max: 25, currency: 'EUR' },
      skills: ['Excel', 'Power BI', 'Data Analysis'],
      bid_count: 9,
      average_bid: 19.5,
      posted_at: '2025-11-24T16:00:00.000000Z',
      country: 'Sweden',
      status: 'active',
      updated_at: '2025-11-24T17:00:00.500000Z',
      bid_period_days: 14,
      language: 'en',
      upgrades: ['featured', 'NDA'],
      hourly: { hours: 10, interval: 'week' },
      owner: {
        id: 7788990,
        username: 'nordic_retail',
        display_name: 'Nordic Retail AB',
        country: 'Sweden',
        city: 'Malmö',
        registered_at: '2015-01-01T00:00:00.000000Z',
        payment_verified: true,
        rating: 4.87,
        reviews: 12,
      },
    });
  });

  test('missing fields: no currency, no maximum, no owner details, no status', () => {
    const outcome = parseProject(answer(fixture('project-missing-fields.json')));
    assert.equal(outcome.kind, 'ok');
    const project = (outcome as { value: any }).value;
    assert.deepEqual(project.budget, { min: 20, max: null, currency: null });
    assert.equal(project.url, 'https://www.freelancer.com/projects/38005555');
    assert.equal(project.status, null);
    assert.deepEqual(project.upgrades, []);
    assert.equal(project.hourly, null);
    assert.deepEqual(project.owner, { id: 9900112, username: null, display_name: null, country: null, city: null, registered_at: null, payment_verified: null, rating: null, reviews: null });
  });

  test('a deleted project and a look-up that matched nothing are not found', () => {
    assert.equal(parseProject(answer(fixture('project-deleted.json'))).kind, 'not_found');
    assert.equal(parseProject(answer(fixture('project-none.json'))).kind, 'not_found');
  });

  test('another layout is changed', () => {
    assert.equal(parseProject(answer(fixture('sdk-get-categories.json'))).kind, 'changed');
    assert.equal(parseProject(answer('{"status":"success","result":{"id":1,"title":"the single-project layout"}}')).kind, 'changed');
    assert.equal(parseProject(answer('{"status":"success","result":{"projects":[{"id":1,"title":"t"}],"users":[]}}')).kind, 'changed');
  });
});

describe('skill catalogue', () => {
  test('jobs with ids, names and seo urls', () => {
    const outcome = parseJobs(answer(fixture('jobs.json')));
    assert.equal(outcome.kind, 'ok');
    const jobs = (outcome as { value: Array<{ id: number; name: string; seoUrl: string | null }> }).value;
    assert.equal(jobs.length, 6);
    assert.deepEqual(jobs[2], { id: 13, name: 'Python', seoUrl: 'python' });
  });

  test('another layout or an empty catalogue is changed', () => {
    assert.equal(parseJobs(answer(fixture('sdk-get-categories.json'))).kind, 'changed');
    assert.equal(parseJobs(answer('{"status":"success","result":[]}')).kind, 'changed');
    assert.equal(parseJobs(answer('{"status":"success","result":[{"id":"3","name":"PHP"}]}')).kind, 'changed');
  });
});

describe('helpers', () => {
  test('timestamps are ISO 8601 with microseconds', () => {
    assert.equal(isoFromEpochSeconds(1764003600.5), '2025-11-24T17:00:00.500000Z');
  });

  test('project pages: seo_url with or without a projects/ prefix, else the id', () => {
    assert.equal(projectPageUrl(1, 'php/site'), 'https://www.freelancer.com/projects/php/site');
    assert.equal(projectPageUrl(1, '/projects/php/site'), 'https://www.freelancer.com/projects/php/site');
    assert.equal(projectPageUrl(7, null), 'https://www.freelancer.com/projects/7');
  });
});

describe('requests', () => {
  test('search: the documented parameters, skills as repeated jobs[]', () => {
    const request = searchAdapter.buildRequest({ query: 'python scraping', jobIds: [13, 95], minBudget: 50, maxBudget: 500.5, projectType: 'fixed', sort: 'latest', limit: 10, offset: 20 }, context);
    const url = new URL(request.url);
    assert.equal(url.origin + url.pathname, 'https://www.freelancer.com/api/projects/0.1/projects/active/');
    assert.equal(url.searchParams.get('query'), 'python scraping');
    assert.deepEqual(url.searchParams.getAll('jobs[]'), ['13', '95']);
    assert.equal(url.searchParams.get('min_price'), '50');
    assert.equal(url.searchParams.get('max_price'), '500.5');
    assert.deepEqual(url.searchParams.getAll('project_types[]'), ['fixed']);
    assert.equal(url.searchParams.get('sort_field'), 'time_updated');
    for (const projection of ['full_description', 'job_details', 'user_details', 'user_country_details']) assert.equal(url.searchParams.get(projection), 'true', projection);
    assert.equal(url.searchParams.get('limit'), '10');
    assert.equal(url.searchParams.get('offset'), '20');
    assert.equal(request.method, 'GET');
  });

  test('search by relevance sends no sort field and no filter it was not given', () => {
    const url = new URL(searchAdapter.buildRequest({ query: 'logo', jobIds: [], sort: 'relevance', limit: 25, offset: 0 }, context).url);
    for (const name of ['sort_field', 'jobs[]', 'min_price', 'max_price', 'project_types[]']) assert.equal(url.searchParams.has(name), false, name);
  });

  test('a project by id (projects[]) or by its page (seo_urls[]), with the owner projections', () => {
    const byId = new URL(projectAdapter.buildRequest({ kind: 'id', id: 38001234 }, { ...context, baseUrl: 'http://127.0.0.1:9/' }).url);
    assert.equal(byId.pathname, '/api/projects/0.1/projects/');
    assert.deepEqual(byId.searchParams.getAll('projects[]'), ['38001234']);
    assert.equal(byId.searchParams.get('user_employer_reputation'), 'true');
    assert.equal(byId.searchParams.get('user_status'), 'true');
    const bySlug = new URL(projectAdapter.buildRequest({ kind: 'seo_url', seoUrl: 'excel/data-analyst' }, context).url);
    assert.deepEqual(bySlug.searchParams.getAll('seo_urls[]'), ['excel/data-analyst']);
    assert.equal(bySlug.searchParams.has('projects[]'), false);
  });

  test('the skill catalogue', () => {
    assert.equal(new URL(jobsAdapter.buildRequest({}, context).url).pathname, '/api/projects/0.1/jobs/');
  });
});
