/**
 * /v1/web with bypass_captcha: the page is rendered in the shared headless Chromium, waits out an
 * interstitial that reloads itself, and solves a captcha widget through a fake solver speaking
 * the createTask/getTaskResult protocol. Skipped without Chromium. Few renders: they are slow on
 * a small machine.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { startLoopbackSite, type LoopbackSite } from '../support/web-site.ts';
import { isBrowserAvailable } from '../../src/browser/index.ts';

const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const skip = (await isBrowserAvailable(chromium)) ? false : `Chromium is not available at ${chromium} (install the chromium package or set CHROMIUM_PATH)`;

let service: TestService;
let site: LoopbackSite;
let solver: LoopbackSite;
const tasks: Array<Record<string, unknown>> = [];

const html = (body: string, status = 200, headers: Record<string, string> = {}) => ({ status, headers: { 'content-type': 'text/html; charset=utf-8', ...headers }, body });

/** A form with a reCAPTCHA v2 widget; the server accepts only the token the fake solver hands out. */
const captchaPage = (siteKey: string) =>
  html(`<html><head><title>Protected</title></head><body>
<form action="/verify" method="POST"><div class="g-recaptcha" data-sitekey="${siteKey}"></div>
<textarea name="g-recaptcha-response" style="display:none"></textarea><button type="submit">Go</button></form></body></html>`);

before(async () => {
  if (skip) return;
  site = await startLoopbackSite();
  solver = await startLoopbackSite();
  site.route('/js', () => html('<html><body><div id="app">Loading…</div><script>setTimeout(() => { document.getElementById("app").textContent = "Built by script"; }, 100);</script></body></html>'));
  // An interstitial: "Just a moment…" that sets a cookie and reloads itself after 2 s.
  site.route('/guarded', (hit) =>
    /passed=1/.test(String(hit.headers.cookie ?? ''))
      ? html('<html><head><title>Guarded</title></head><body><p>Behind the challenge</p></body></html>')
      : html(
          '<html><head><title>Just a moment...</title></head><body><div id="challenge-running">Checking your browser</div><script>setTimeout(() => { document.cookie = "passed=1; path=/"; location.reload(); }, 2000);</script></body></html>',
          503,
        ),
  );
  for (const key of ['good-key', 'failing-key', 'slow-key']) site.route(`/captcha/${key}`, () => captchaPage(key));
  site.route('/verify', (hit) =>
    new URLSearchParams(hit.body).get('g-recaptcha-response') === 'token-for-good-key'
      ? html('<html><body><p>Welcome, human</p></body></html>')
      : html('<html><body>wrong token</body></html>', 403),
  );

  solver.route('/createTask', (hit) => {
    const request = JSON.parse(hit.body);
    tasks.push(request);
    if (request.task.websiteKey === 'failing-key') return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ errorId: 1, errorCode: 'ERROR_CAPTCHA_UNSOLVABLE' }) };
    return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ errorId: 0, taskId: `task-${request.task.websiteKey}` }) };
  });
  solver.route('/getTaskResult', (hit) => {
    const { taskId } = JSON.parse(hit.body);
    if (taskId === 'task-slow-key') return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ errorId: 0, status: 'processing' }) };
    return {
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ errorId: 0, status: 'ready', solution: { gRecaptchaResponse: `token-for-${String(taskId).slice(5)}` } }),
    };
  });

  service = await startTestService({
    OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost',
    CAPTCHA_SOLVER_URL: solver.url(),
    CAPTCHA_SOLVER_KEY: 'solver-key',
    CAPTCHA_SOLVER_POLL_MS: '100',
    CAPTCHA_SOLVER_TIMEOUT_MS: '1500',
    WEB_BROWSER_TIMEOUT_MS: '20000',
  });
});

after(async () => {
  await service?.close();
  await site?.close();
  await solver?.close();
});

async function render(path: string, credits = 10) {
  const user = await service.user({ scraping: credits });
  const r = await service.call('POST', '/v1/web', { token: user.token, body: { url: `${site.url()}${path}`, bypass_captcha: true, format: 'text' } });
  return { ...r, charged: credits - ((await service.services.ledger.balance(user.id, 'scraping')) ?? 0) };
}

test('a page built by JavaScript: the browser sees the content, at the browser price', { skip, timeout: 60_000 }, async () => {
  const r = await render('/js');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.response.content, 'Built by script');
  assert.equal(r.charged, 5);
  const hit = site.log.find((entry) => entry.path === '/js');
  assert.match(String(hit?.headers['user-agent']), /Chrome\/\d+/);
  assert.doesNotMatch(String(hit?.headers['user-agent']), /Headless/);
  assert.match(String(hit?.headers['accept-language']), /^en-US/);
});

test('an interstitial that reloads itself after 2 s is waited out', { skip, timeout: 60_000 }, async () => {
  const r = await render('/guarded');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.response.status_code, 200);
  assert.match(r.body.response.content, /Behind the challenge/);
  assert.equal(site.log.filter((entry) => entry.path === '/guarded').length, 2);
});

test('a captcha is solved through the solver, the token injected and the form submitted', { skip, timeout: 60_000 }, async () => {
  const r = await render('/captcha/good-key');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.response.content, 'Welcome, human');
  assert.equal(r.body.response.url, `${site.url()}/verify`);
  assert.equal(r.charged, 5);
  const task = tasks.find((entry) => (entry.task as Record<string, unknown>).websiteKey === 'good-key');
  assert.deepEqual(task, { clientKey: 'solver-key', task: { type: 'RecaptchaV2TaskProxyless', websiteURL: `${site.url()}/captcha/good-key`, websiteKey: 'good-key' } });
});

test('a solver failure and a solver time-out: 502 "The captcha could not be solved.", uncharged', { skip, timeout: 60_000 }, async () => {
  for (const key of ['failing-key', 'slow-key']) {
    const r = await render(`/captcha/${key}`);
    assert.equal(r.status, 502, `${key}: ${r.text}`);
    assert.deepEqual(r.body, { message: 'The captcha could not be solved.' });
    assert.equal(r.charged, 0);
  }
  assert.ok(solver.log.filter((hit) => hit.path === '/getTaskResult').length >= 3, 'the slow task was polled until the time limit');
  assert.equal(site.log.filter((hit) => hit.path === '/verify').length, 1, 'only the solved captcha was submitted');
});
