/**
 * The operator's view of every user's jobs: GET/DELETE /admin/jobs (owner tokens only) and
 * `gleaner jobs list|show|cancel`, which goes through the admin socket (embedded) or opens
 * PostgreSQL itself (the scaled tier, TEST_DATABASE_URL). Real batches run against a loopback
 * site whose slow pages answer only when the test lets them, so a job stays `running` as long as
 * needed; a job cancelled meanwhile must not deliver or bill the page being fetched.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { runGleaner, storageCliEnv } from '../support/cli.ts';
import { startTestService, type TestService } from '../support/service.ts';
import { startLoopbackSite, type LoopbackSite } from '../support/web-site.ts';

const PAGE = '<html><head><title>Page</title></head><body><h1>A page</h1><p>Some words to convert.</p></body></html>';

let service: TestService;
let site: LoopbackSite;
let owner: string;
/** Slow pages answer once this resolves. */
let release: () => void;
const released = new Promise<void>((resolve) => (release = resolve));

let ada: { id: number; token: string };
let bob: { id: number; token: string };
/** Ada's batches, each held on a slow page; Bob's, completed. */
let runningByApi: string;
let runningByCli: string;
let completed: string;

before(async () => {
  site = await startLoopbackSite();
  site.route('/fast', () => ({ body: PAGE }));
  site.route('/slow/api', async () => (await released, { body: PAGE }));
  site.route('/slow/cli', async () => (await released, { body: PAGE }));
  site.route('/hook', () => ({ status: 204 }));
  service = await startTestService({ WEB_TIMEOUT_MS: '120000' });
  assert.ok(service.owner, 'a fresh database creates the owner account');
  owner = service.owner.token;
  ada = await service.user({ scraping: 100 });
  bob = await service.user({ scraping: 100 });

  // Bob's first: the slow pages then hold the host's page slots (JOB_HOST_CONCURRENCY) to the end.
  completed = await startBatch(bob.token, [`${site.url()}/fast`, `${site.url()}/fast?again`]);
  await waitFor(completed, (job) => job.status === 'completed');
  runningByApi = await startBatch(ada.token, [`${site.url()}/slow/api`], { url: `${site.url()}/hook`, events: ['started'] });
  runningByCli = await startBatch(ada.token, [`${site.url()}/slow/cli`]);
  await waitFor(runningByApi, (job) => job.status === 'running' && site.log.some((hit) => hit.path === '/slow/api'));
  await waitFor(runningByCli, (job) => job.status === 'running' && site.log.some((hit) => hit.path === '/slow/cli'));
});

after(async () => {
  release();
  await service?.close();
  await site?.close();
});

const asOwner = (method: string, route: string) => service.call(method, route, { token: owner });

async function startBatch(token: string, urls: string[], webhook?: { url: string; events: string[] }): Promise<string> {
  const created = await service.call('POST', '/v1/batch', { token, body: { urls, ...(webhook ? { webhook } : {}) } });
  assert.equal(created.status, 201, created.text);
  return created.body.id;
}

/** Polls the admin view of a job until `done` says so (30 s at most). */
async function waitFor(id: string, done: (job: any) => boolean): Promise<any> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const r = await asOwner('GET', `/admin/jobs/${id}`);
    assert.equal(r.status, 200, r.text);
    if (done(r.body.job)) return r.body.job;
    if (Date.now() > deadline) assert.fail(`job ${id} never got there: ${JSON.stringify(r.body.job)}`);
    await sleep(100);
  }
}

/** `gleaner <args>` against this server's storage: its admin socket (embedded), or PostgreSQL directly. */
const gleaner = (...args: string[]) => runGleaner(args, storageCliEnv(service.env));

const ids = (rows: Array<{ id: string }>) => rows.map((row) => row.id).sort();

describe('access', () => {
  test('no token: 401; a token of a user who is not an owner: 403, and the job keeps running', async () => {
    assert.equal((await service.call('GET', '/admin/jobs')).status, 401);
    for (const [method, route] of [
      ['GET', '/admin/jobs'],
      ['GET', `/admin/jobs/${runningByApi}`],
      ['DELETE', `/admin/jobs/${runningByApi}`],
    ]) {
      const refused = await service.call(method, route, { token: ada.token });
      assert.equal(refused.status, 403, `${method} ${route}`);
      assert.deepEqual(refused.body, { message: 'This action is unauthorized.' });
    }
    assert.equal((await asOwner('GET', `/admin/jobs/${runningByApi}`)).body.job.status, 'running');
  });
});

describe('GET /admin/jobs', () => {
  test("every user's jobs, newest first, with the operator's columns", async () => {
    const r = await asOwner('GET', '/admin/jobs');
    assert.equal(r.status, 200, r.text);
    assert.deepEqual(
      r.body.data.map((row: { id: string }) => row.id),
      [runningByCli, runningByApi, completed],
    );
    const [, adas, bobs] = r.body.data;
    assert.deepEqual(Object.keys(adas).sort(), ['completed', 'created_at', 'credits_used', 'expires_at', 'failed_pages', 'finished_at', 'id', 'kind', 'status', 'total', 'url', 'user'].sort());
    assert.deepEqual({ ...adas, created_at: undefined, expires_at: undefined }, {
      id: runningByApi,
      user: ada.id,
      kind: 'batch',
      status: 'running',
      url: '1 URL',
      total: 1,
      completed: 0,
      failed_pages: 0,
      credits_used: 0,
      created_at: undefined,
      finished_at: null,
      expires_at: undefined,
    });
    assert.match(adas.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.equal(bobs.url, '2 URLs');
    assert.deepEqual([bobs.status, bobs.completed, bobs.credits_used], ['completed', 2, 2]);
    assert.match(bobs.finished_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
  });

  test('filters by user, by status, both, and caps the count', async () => {
    assert.deepEqual(ids((await asOwner('GET', `/admin/jobs?user=${ada.id}`)).body.data), [runningByApi, runningByCli].sort());
    assert.deepEqual(ids((await asOwner('GET', `/admin/jobs?user=${bob.id}`)).body.data), [completed]);
    assert.deepEqual(ids((await asOwner('GET', '/admin/jobs?status=running')).body.data), [runningByApi, runningByCli].sort());
    assert.deepEqual(ids((await asOwner('GET', '/admin/jobs?status=completed')).body.data), [completed]);
    assert.deepEqual((await asOwner('GET', `/admin/jobs?user=${ada.id}&status=completed`)).body.data, []);
    assert.deepEqual(ids((await asOwner('GET', '/admin/jobs?limit=1')).body.data), [runningByCli]);
  });

  test('a wrong filter is a 422 or a 404, never the whole list', async () => {
    const status = await asOwner('GET', '/admin/jobs?status=done');
    assert.equal(status.status, 422);
    assert.deepEqual(status.body.errors, { status: ['The selected status is invalid.'] });
    const empty = await asOwner('GET', '/admin/jobs?user=');
    assert.equal(empty.status, 422);
    assert.deepEqual(empty.body.errors, { user: ['The user field must have a value.'] });
    const limit = await asOwner('GET', '/admin/jobs?limit=501');
    assert.deepEqual(limit.body.errors, { limit: ['The limit must not be greater than 500.'] });
    const unknownField = await asOwner('GET', `/admin/jobs?user_id=${ada.id}`);
    assert.equal(unknownField.status, 422);
    assert.deepEqual(unknownField.body.errors, { user_id: ['The user id field is prohibited.'] });
    const unknownUser = await asOwner('GET', '/admin/jobs?user=999999');
    assert.equal(unknownUser.status, 404);
    assert.deepEqual(unknownUser.body, { message: 'There is no user 999999.' });
  });
});

describe('GET /admin/jobs/{job}', () => {
  test('the job with its parameters, webhook and webhook events; never the signing secret', async () => {
    const job = await waitFor(runningByApi, (j) => j.webhook_events.length > 0);
    assert.equal(job.user, ada.id);
    assert.deepEqual(job.params.urls, [`${site.url()}/slow/api`]);
    assert.deepEqual(job.webhook, { url: `${site.url()}/hook`, events: ['started'] });
    assert.equal(job.webhook_error, null);
    assert.equal(job.error, null);
    assert.match(job.started_at, /^\d{4}-\d\d-\d\dT/);
    assert.equal(job.webhook_events.length, 1);
    assert.equal(job.webhook_events[0].type, 'batch.started');
    assert.ok(['pending', 'delivered'].includes(job.webhook_events[0].state));
    const secret = (await service.call('GET', '/me/webhook-secret', { token: ada.token })).body.secret;
    assert.ok(typeof secret === 'string' && secret.length > 0);
    assert.ok(!JSON.stringify(job).includes(secret), 'the signing secret never shows');
  });

  test('an unknown or malformed id: 404 Not found.', async () => {
    for (const id of [randomUUID(), 'not-a-job']) {
      for (const method of ['GET', 'DELETE']) {
        const r = await asOwner(method, `/admin/jobs/${id}`);
        assert.equal(r.status, 404, `${method} ${id}`);
        assert.deepEqual(r.body, { message: 'Not found.' });
      }
    }
  });
});

describe('gleaner jobs', () => {
  test('list --json answers what the admin API answers; filters; a table without --json', async () => {
    const listed = await gleaner('jobs', 'list', '--user', String(ada.id), '--status', 'running', '--json');
    assert.equal(listed.code, 0, listed.stdout + listed.stderr);
    assert.deepEqual(listed.json, (await asOwner('GET', `/admin/jobs?user=${ada.id}&status=running`)).body.data);
    assert.deepEqual(ids(listed.json), [runningByApi, runningByCli].sort());

    const table = await gleaner('jobs', 'list', '--status', 'completed');
    assert.equal(table.code, 0, table.stdout + table.stderr);
    // One aligned table (issue 40): no index column, no quotes.
    assert.doesNotMatch(table.stdout, /\(index\)|'/);
    assert.match(table.stdout, new RegExp(`^${completed} .* batch +completed +2 URLs `, 'm'));
    assert.doesNotMatch(table.stdout, new RegExp(runningByApi));
  });

  test('show --json answers the job; an unknown id exits 1, a wrong status 2', async () => {
    const shown = await gleaner('jobs', 'show', '--job', completed, '--json');
    assert.equal(shown.code, 0, shown.stdout + shown.stderr);
    assert.deepEqual(shown.json, (await asOwner('GET', `/admin/jobs/${completed}`)).body.job);

    const unknown = randomUUID();
    const missing = await gleaner('jobs', 'show', '--job', unknown, '--json');
    assert.equal(missing.code, 1);
    assert.deepEqual(missing.json, { error: `There is no job ${unknown}.` });

    const status = await gleaner('jobs', 'list', '--status', 'done', '--json');
    assert.equal(status.code, 2);
    assert.match(status.json.error, /^--status must be one of queued, running, completed, cancelled, failed, stopped_no_credits/);
    const noJob = await gleaner('jobs', 'cancel', '--json');
    assert.equal(noJob.code, 2);
    assert.deepEqual(noJob.json, { error: '--job is required.' });
  });
});

describe('cancel', () => {
  test('DELETE /admin/jobs/{job} and `gleaner jobs cancel` cancel a running job; the page in flight is neither delivered nor billed', async () => {
    const byApi = await asOwner('DELETE', `/admin/jobs/${runningByApi}`);
    assert.equal(byApi.status, 200, byApi.text);
    assert.deepEqual(byApi.body, { id: runningByApi, status: 'cancelled' });

    const byCli = await gleaner('jobs', 'cancel', '--job', runningByCli, '--json');
    assert.equal(byCli.code, 0, byCli.stdout + byCli.stderr);
    assert.deepEqual(byCli.json, { id: runningByCli, status: 'cancelled' });

    // Each slow page holds its credit while it is fetched. It answers now: the workers must
    // release the holds and deliver nothing.
    const held = async () => (await service.services.ledger.balances(ada.id)).find((b) => b.product === 'scraping')?.held;
    assert.equal(await held(), 2);
    release();
    const deadline = Date.now() + 30_000;
    while ((await held()) !== 0) {
      if (Date.now() > deadline) assert.fail('the holds of the cancelled pages were never released');
      await sleep(100);
    }
    assert.equal(await service.services.ledger.balance(ada.id, 'scraping'), 100);
    for (const id of [runningByApi, runningByCli]) {
      const job = (await asOwner('GET', `/admin/jobs/${id}`)).body.job;
      assert.deepEqual([job.status, job.completed, job.credits_used], ['cancelled', 0, 0]);
      assert.match(job.finished_at, /^\d{4}-\d\d-\d\dT/);
      const own = await service.call('GET', `/v1/batch/${id}`, { token: ada.token });
      assert.deepEqual([own.body.status, own.body.data], ['cancelled', []]);
    }
  });

  test('a job already ended keeps its status: no error, nothing changes', async () => {
    assert.deepEqual((await asOwner('DELETE', `/admin/jobs/${completed}`)).body, { id: completed, status: 'completed' });
    assert.deepEqual((await asOwner('DELETE', `/admin/jobs/${runningByApi}`)).body, { id: runningByApi, status: 'cancelled' });
    const again = await gleaner('jobs', 'cancel', '--job', completed, '--json');
    assert.deepEqual([again.code, again.json], [0, { id: completed, status: 'completed' }]);
    const job = (await asOwner('GET', `/admin/jobs/${completed}`)).body.job;
    assert.deepEqual([job.status, job.completed, job.credits_used], ['completed', 2, 2]);
  });
});
