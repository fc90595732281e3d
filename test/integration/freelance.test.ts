/**
 * /v1/freelance/search and /v1/freelance/project through the real server, against a fake
 * Freelancer API on loopback: field values, the parameters sent, the skill catalogue (read once),
 * page tokens (a round trip; another query's token refused), every error mapping, and billing
 * (3 credits on success, nothing on any failure).
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { startTestService, type TestService } from '../support/service.ts';
import { startFakeUpstream, type FakeUpstream, type UpstreamAnswer, type UpstreamHit } from '../support/fake-upstream.ts';
import type { RuntimeEvent } from '../../src/adapters/kit/types.ts';

let service: TestService;
let upstream: FakeUpstream;

const API = '/api/projects/0.1';
const fixture = (name: string) => readFileSync(new URL(`../fixtures/freelance/${name}`, import.meta.url), 'utf8');
const json = (body: string | unknown, status = 200): UpstreamAnswer => ({
  status,
  headers: { 'content-type': 'application/json' },
  body: typeof body === 'string' ? body : JSON.stringify(body),
});

/** The fake API of the running test. */
let api: (hit: UpstreamHit) => UpstreamAnswer = defaultApi;

/** The projects the search fixture lists, each also answered by `projects/` (by id or seo_url), as the API does. */
const listed = JSON.parse(fixture('search-page.json')) as { result: { projects: Array<{ id: number; seo_url: string }>; users: unknown } };

/** `projects/` as the API answers it: by `projects[]` ids, and by `seo_urls[]` unless told the filter is not applied. */
function projectsApi(hit: UpstreamHit, { seoUrls = true } = {}): UpstreamAnswer {
  const ids = hit.query.getAll('projects[]');
  const seo = seoUrls ? hit.query.getAll('seo_urls[]') : [];
  if (ids.includes('38001234') || seo.includes('excel/data-analyst-weekly-sales-reports')) return json(fixture('project-hourly.json'));
  if (ids.includes('38009999')) return json(fixture('project-deleted.json'));
  const found = listed.result.projects.filter((project) => ids.includes(String(project.id)) || seo.includes(project.seo_url));
  if (found.length > 0) return json({ status: 'success', result: { projects: found, total_count: found.length, users: listed.result.users } });
  return json(fixture('project-none.json'));
}

function defaultApi(hit: UpstreamHit): UpstreamAnswer {
  if (hit.path === `${API}/jobs/`) return json(fixture('jobs.json'));
  if (hit.path === `${API}/projects/active/`) return json(fixture('search-page.json'));
  if (hit.path === `${API}/projects/`) return projectsApi(hit);
  return json(fixture('error-not-found.json'), 404);
}

const events: RuntimeEvent[] = [];

before(async () => {
  upstream = await startFakeUpstream();
  upstream.handle((hit) => api(hit));
  service = await startTestService({
    UPSTREAM_FREELANCER_URL: upstream.url,
    FREELANCER_TIMEOUT_MS: '3000',
    // Failures here are asked for; none should suspend the upstream for the next test.
    UPSTREAM_SUSPEND_MS: '0',
  });
  service.services.capabilities.observeUpstreams((event) => events.push(event));
});
after(async () => {
  await service?.close();
  await upstream?.close();
});
beforeEach(() => {
  upstream.hits.length = 0;
  events.length = 0;
  api = defaultApi;
});

const call = (path: string, token: string, body: unknown) => service.call('POST', path, { token, body });
const balance = (id: number) => service.services.ledger.balance(id, 'scraping');
const hitsOn = (path: string) => upstream.hits.filter((hit) => hit.path === `${API}${path}`);

describe('search', () => {
  test('field values, the parameters sent, and 3 credits', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/freelance/search', u.token, { query: 'python scraping', skills: ['python', 'Web Scraping'], min_budget: 20, max_budget: '300', project_type: 'fixed', sort: 'latest', limit: 3 });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.body.response.length, 3);
    assert.deepEqual(r.body.response[0], {
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
    assert.deepEqual(r.body.response[1].budget, { min: 600, max: 1500, currency: 'INR' });
    // Three of three: nothing after this page.
    assert.deepEqual(r.body.pagination, { next_page_token: null, total_count: 3 });

    const [searched] = hitsOn('/projects/active/');
    assert.equal(searched.query.get('query'), 'python scraping');
    assert.deepEqual(searched.query.getAll('jobs[]'), ['13', '95']);
    assert.equal(searched.query.get('min_price'), '20');
    assert.equal(searched.query.get('max_price'), '300');
    assert.deepEqual(searched.query.getAll('project_types[]'), ['fixed']);
    assert.equal(searched.query.get('sort_field'), 'time_updated');
    assert.equal(searched.query.get('limit'), '3');
    assert.equal(searched.query.get('offset'), '0');
    assert.equal(searched.query.get('job_details'), 'true');
    assert.equal(searched.query.get('user_details'), 'true');
    assert.equal(searched.query.get('full_description'), 'true');
    assert.equal(await balance(u.id), 7);
  });

  test('the skill catalogue is read once and kept', async () => {
    const u = await service.user({ scraping: 10 });
    assert.equal((await call('/v1/freelance/search', u.token, { query: 'a', skills: ['PHP'] })).status, 200);
    assert.equal((await call('/v1/freelance/search', u.token, { query: 'b', skills: ['Laravel'] })).status, 200);
    assert.ok(hitsOn('/jobs/').length <= 1, 'at most one read (none when an earlier test read it)');
    assert.deepEqual(hitsOn('/projects/active/').map((hit) => hit.query.getAll('jobs[]')), [['3'], ['1100']]);
    assert.equal(service.services.capabilities.freelance().client.skillCatalogueReads, 1);
  });

  test('an unknown skill name: 422 naming it, uncharged, nothing searched', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/freelance/search', u.token, { query: 'python', skills: ['Python', 'Basket Weaving'] });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body, {
      message: 'The given data was invalid.',
      errors: { skills: ['Unknown skill: Basket Weaving. Skills are Freelancer\'s skill names, such as "PHP", "Python" or "Graphic Design".'] },
    });
    assert.equal(hitsOn('/projects/active/').length, 0);
    assert.equal(await balance(u.id), 10);
  });

  test('validation: Laravel messages for each filter', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/freelance/search', u.token, { skills: 'python', min_budget: 'cheap', project_type: 'contest', sort: 'oldest', limit: 500 });
    assert.equal(r.status, 422);
    assert.deepEqual(r.body.errors, {
      query: ['The query field is required.'],
      skills: ['The skills must be an array.'],
      min_budget: ['The min budget must be a number.'],
      project_type: ['The selected project type is invalid.'],
      sort: ['The selected sort is invalid.'],
      limit: ['The limit must be between 1 and 100.'],
    });
    const range = await call('/v1/freelance/search', u.token, { query: 'x', min_budget: 500, max_budget: 100, skills: ['PHP', ''] });
    assert.deepEqual(range.body.errors, {
      skills: ['Each of the skills must be a skill name (a string of 1 to 100 characters).'],
      max_budget: ['The max budget must be greater than or equal 500.'],
    });
    const many = await call('/v1/freelance/search', u.token, { query: 'x', skills: Array.from({ length: 21 }, (_, n) => `skill ${n}`) });
    assert.deepEqual(many.body.errors, { skills: ['The skills must not have more than 20 items.'] });
    assert.equal(upstream.hits.length, 0);
    assert.equal(await balance(u.id), 10);
  });

  test('pagination round trip: tokens carry the offset; the last page has none', async () => {
    const u = await service.user({ scraping: 20 });
    const all = JSON.parse(fixture('search-page.json'));
    const projects = [0, 1, 2, 3, 4].map((n) => ({ ...all.result.projects[0], id: 100 + n, title: `Project ${n}` }));
    api = (hit) => {
      if (hit.path !== `${API}/projects/active/`) return defaultApi(hit);
      const offset = Number(hit.query.get('offset'));
      const limit = Number(hit.query.get('limit'));
      return json({ status: 'success', result: { projects: projects.slice(offset, offset + limit), total_count: projects.length, users: all.result.users } });
    };
    const search = { query: 'python', sort: 'latest', limit: 2 };
    const first = await call('/v1/freelance/search', u.token, search);
    assert.equal(first.status, 200, first.text);
    assert.deepEqual(first.body.response.map((p: { id: number }) => p.id), [100, 101]);
    assert.equal(first.body.pagination.total_count, 5);
    assert.equal(typeof first.body.pagination.next_page_token, 'string');

    // The same search in another spelling keeps its token.
    const second = await call('/v1/freelance/search', u.token, { ...search, query: ' python ', next_page_token: first.body.pagination.next_page_token });
    assert.equal(second.status, 200, second.text);
    assert.deepEqual(second.body.response.map((p: { id: number }) => p.id), [102, 103]);
    const third = await call('/v1/freelance/search', u.token, { ...search, next_page_token: second.body.pagination.next_page_token });
    assert.deepEqual(third.body.response.map((p: { id: number }) => p.id), [104]);
    assert.equal(third.body.pagination.next_page_token, null);
    assert.deepEqual(hitsOn('/projects/active/').map((hit) => hit.query.get('offset')), ['0', '2', '4']);
    assert.equal(await balance(u.id), 20 - 9);

    // A token sent with another query, or other filters, or one not ours: 422, uncharged, nothing asked.
    upstream.hits.length = 0;
    const token = first.body.pagination.next_page_token;
    const other = await call('/v1/freelance/search', u.token, { ...search, query: 'php', next_page_token: token });
    assert.equal(other.status, 422);
    assert.deepEqual(other.body, { message: 'The given data was invalid.', errors: { next_page_token: ['The next page token does not belong to this query.'] } });
    const otherFilter = await call('/v1/freelance/search', u.token, { ...search, project_type: 'hourly', next_page_token: token });
    assert.deepEqual(otherFilter.body.errors, { next_page_token: ['The next page token does not belong to this query.'] });
    const forged = await call('/v1/freelance/search', u.token, { ...search, next_page_token: `${token.slice(0, -2)}AA` });
    assert.deepEqual(forged.body.errors, { next_page_token: ['The next page token is invalid.'] });
    assert.equal(upstream.hits.length, 0);
    assert.equal(await balance(u.id), 11);
  });

  test('three pages from an API that lists fewer than asked: its count says when the last page comes', async () => {
    const u = await service.user({ scraping: 20 });
    const all = JSON.parse(fixture('search-page.json'));
    const projects = [0, 1, 2, 3, 4, 5].map((n) => ({ ...all.result.projects[0], id: 200 + n, title: `Project ${n}` }));
    api = (hit) => {
      if (hit.path !== `${API}/projects/active/`) return defaultApi(hit);
      // Two a page, whatever the limit asked.
      const offset = Number(hit.query.get('offset'));
      return json({ status: 'success', result: { projects: projects.slice(offset, offset + 2), total_count: projects.length, users: all.result.users } });
    };
    const search = { query: 'python', skills: ['Python'], limit: 5 };
    const ids: number[][] = [];
    let token: string | null = null;
    for (let page = 0; page < 3; page += 1) {
      const r = await call('/v1/freelance/search', u.token, token === null ? search : { ...search, next_page_token: token });
      assert.equal(r.status, 200, r.text);
      ids.push(r.body.response.map((p: { id: number }) => p.id));
      assert.equal(r.body.pagination.total_count, 6);
      token = r.body.pagination.next_page_token;
      assert.equal(typeof token, page < 2 ? 'string' : 'object', `page ${page + 1}`);
    }
    assert.deepEqual(ids, [[200, 201], [202, 203], [204, 205]]);
    assert.equal(token, null);
    assert.deepEqual(hitsOn('/projects/active/').map((hit) => hit.query.get('offset')), ['0', '2', '4']);
    assert.equal(await balance(u.id), 20 - 9);
  });

  test('an API failure or an unknown layout: 502, uncharged; the layout is a `changed` verdict', async () => {
    const u = await service.user({ scraping: 10 });
    api = (hit) => (hit.path === `${API}/projects/active/` ? json(fixture('error-invalid-param.json'), 503) : defaultApi(hit));
    const failed = await call('/v1/freelance/search', u.token, { query: 'python' });
    assert.equal(failed.status, 502);
    assert.deepEqual(failed.body, { message: 'The upstream service is unavailable, please retry.' });

    api = (hit) => (hit.path === `${API}/projects/active/` ? json(fixture('sdk-get-categories.json')) : defaultApi(hit));
    const changed = await call('/v1/freelance/search', u.token, { query: 'python' });
    assert.equal(changed.status, 502);
    assert.ok(events.some((event) => event.type === 'call' && event.upstream === 'freelancer' && event.verdict === 'changed'), 'a changed verdict was told');
    assert.equal(await balance(u.id), 10);
  });
});

describe('project', () => {
  const hourlyUrl = 'https://www.freelancer.com/projects/excel/data-analyst-weekly-sales-reports';

  test('by URL (seo_urls[] look-up): the project, its bids and its owner; 3 credits', async () => {
    const u = await service.user({ scraping: 10 });
    const r = await call('/v1/freelance/project', u.token, { url: `${hourlyUrl}/details?ref=mail` });
    assert.equal(r.status, 200, r.text);
    const project = r.body.response;
    assert.equal(project.id, 38001234);
    assert.equal(project.url, hourlyUrl);
    assert.equal(project.type, 'hourly');
    assert.deepEqual(project.budget, { min: 15, max: 25, currency: 'EUR' });
    assert.equal(project.bid_count, 9);
    assert.equal(project.average_bid, 19.5);
    assert.deepEqual(project.hourly, { hours: 10, interval: 'week' });
    assert.deepEqual(project.owner, {
      id: 7788990,
      username: 'nordic_retail',
      display_name: 'Nordic Retail AB',
      country: 'Sweden',
      city: 'Malmö',
      registered_at: '2015-01-01T00:00:00.000000Z',
      payment_verified: true,
      rating: 4.87,
      reviews: 12,
    });
    const [looked] = hitsOn('/projects/');
    assert.deepEqual(looked.query.getAll('seo_urls[]'), ['excel/data-analyst-weekly-sales-reports']);
    assert.equal(await balance(u.id), 7);
  });

  test('by the URL search answers: the same project', async () => {
    const u = await service.user({ scraping: 20 });
    const found = await call('/v1/freelance/search', u.token, { query: 'python scraping' });
    assert.equal(found.status, 200, found.text);
    for (const item of found.body.response as Array<{ id: number; url: string; title: string }>) {
      const r = await call('/v1/freelance/project', u.token, { url: item.url });
      assert.equal(r.status, 200, `${item.url}: ${r.text}`);
      assert.equal(r.body.response.id, item.id);
      assert.equal(r.body.response.url, item.url);
      assert.equal(r.body.response.title, item.title);
    }
    assert.equal(await balance(u.id), 20 - 3 * 4);
  });

  test('a page the API\'s seo_urls[] filter does not find: the slug is resolved (its trailing id, else a search of its words)', async () => {
    const u = await service.user({ scraping: 20 });
    const withId = { ...listed.result.projects[0], id: 39012345, seo_url: 'python/csv-export-fix-39012345' };
    api = (hit) => {
      if (hit.path === `${API}/projects/` && hit.query.getAll('projects[]').includes('39012345')) return json({ status: 'success', result: { projects: [withId], users: listed.result.users } });
      // The filter is not applied: the answer lists some other project, which is never taken for the one asked.
      if (hit.path === `${API}/projects/` && hit.query.getAll('seo_urls[]').length > 0) return json({ status: 'success', result: { projects: [listed.result.projects[2]], users: listed.result.users } });
      return hit.path === `${API}/projects/` ? projectsApi(hit, { seoUrls: false }) : defaultApi(hit);
    };
    const byId = await call('/v1/freelance/project', u.token, { url: 'https://www.freelancer.com/projects/Python/CSV-export-fix-39012345/details' });
    assert.equal(byId.status, 200, byId.text);
    assert.equal(byId.body.response.id, 39012345);

    upstream.hits.length = 0;
    const bySearch = await call('/v1/freelance/project', u.token, { url: 'https://www.freelancer.com/projects/php/laravel-developer-ongoing-admin-panel' });
    assert.equal(bySearch.status, 200, bySearch.text);
    assert.equal(bySearch.body.response.id, listed.result.projects[1].id);
    assert.deepEqual(hitsOn('/projects/active/').map((hit) => hit.query.get('query')), ['laravel developer ongoing admin panel']);
    assert.deepEqual(hitsOn('/projects/').map((hit) => [...hit.query.getAll('seo_urls[]'), ...hit.query.getAll('projects[]')]), [['php/laravel-developer-ongoing-admin-panel'], [String(listed.result.projects[1].id)]]);

    // A trailing number that is another project's id, and a slug no search lists: 404, uncharged.
    const otherId = await call('/v1/freelance/project', u.token, { url: 'https://www.freelancer.com/projects/python/ten-logos-37912345' });
    assert.equal(otherId.status, 404, otherId.text);
    assert.equal(await balance(u.id), 20 - 6);
  });

  test('by id, as digits or a number, and by a /projects/<id> URL on a country site', async () => {
    const u = await service.user({ scraping: 10 });
    for (const body of [{ id: '38001234' }, { id: 38001234 }, { url: 'https://www.freelancer.co.uk/projects/38001234/' }]) {
      const r = await call('/v1/freelance/project', u.token, body);
      assert.equal(r.status, 200, JSON.stringify(body));
      assert.equal(r.body.response.id, 38001234);
    }
    assert.deepEqual(hitsOn('/projects/').map((hit) => hit.query.getAll('projects[]')), [['38001234'], ['38001234'], ['38001234']]);
    assert.equal(await balance(u.id), 1);
  });

  test('a missing or deleted project: 404 Not found., uncharged', async () => {
    const u = await service.user({ scraping: 10 });
    for (const body of [{ id: '38000001' }, { id: '38009999' }, { url: 'https://www.freelancer.com/projects/php/nothing-here' }]) {
      const r = await call('/v1/freelance/project', u.token, body);
      assert.equal(r.status, 404, JSON.stringify(body));
      assert.deepEqual(r.body, { message: 'Not found.' });
    }
    assert.equal(await balance(u.id), 10);
  });

  test('an error envelope, a block page or an unknown layout: 502, uncharged', async () => {
    const u = await service.user({ scraping: 10 });
    for (const reply of [
      json(fixture('error-invalid-param.json'), 500),
      json(fixture('error-invalid-param.json'), 429),
      { status: 403, headers: { 'content-type': 'text/html' }, body: '<html><title>Attention Required! | Cloudflare</title></html>' },
      json(fixture('sdk-get-budgets.json')),
      json({ status: 'success', result: { id: 38001234, title: 'single-project layout' } }),
    ]) {
      api = () => reply;
      const r = await call('/v1/freelance/project', u.token, { id: '38001234' });
      assert.equal(r.status, 502, JSON.stringify(reply.status));
      assert.deepEqual(r.body, { message: 'The upstream service is unavailable, please retry.' });
    }
    assert.ok(events.some((event) => event.type === 'call' && event.upstream === 'freelancer' && event.operation === 'projects' && event.verdict === 'changed'));
    assert.equal(await balance(u.id), 10);
  });

  test('422: neither or both, a malformed URL, another site\'s URL, a bad id', async () => {
    const u = await service.user({ scraping: 10 });
    const neither = await call('/v1/freelance/project', u.token, {});
    assert.deepEqual(neither.body, {
      message: 'The given data was invalid.',
      errors: { url: ['The url field is required when id is not present.'], id: ['The id field is required when url is not present.'] },
    });
    const both = await call('/v1/freelance/project', u.token, { url: hourlyUrl, id: '38001234' });
    assert.deepEqual(both.body.errors, { url: ['The url field prohibits id from being present.'], id: ['The id field prohibits url from being present.'] });
    const malformed = await call('/v1/freelance/project', u.token, { url: 'freelancer.com/projects/1' });
    assert.deepEqual(malformed.body.errors, { url: ['The url must be a valid URL.'] });
    const notProject = 'The url must be a Freelancer project URL (https://www.freelancer.com/projects/<category>/<slug> or /projects/<id>).';
    for (const url of ['https://www.upwork.com/projects/python/slug', 'https://www.freelancer.com/u/someone']) {
      const r = await call('/v1/freelance/project', u.token, { url });
      assert.deepEqual(r.body.errors, { url: [notProject] }, url);
    }
    for (const id of ['abc', '12.5', -3, '0']) {
      const r = await call('/v1/freelance/project', u.token, { id });
      assert.equal(r.status, 422);
      assert.deepEqual(r.body.errors, { id: ['The id must be a Freelancer project id (digits only).'] }, String(id));
    }
    assert.equal(upstream.hits.length, 0);
    assert.equal(await balance(u.id), 10);
  });
});
