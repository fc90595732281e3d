/**
 * /v1/web with bypass_captcha against the captcha widgets other than reCAPTCHA v2 (which
 * web-browser.test.ts covers): reCAPTCHA v3 (a form field, the page's own grecaptcha.execute
 * callback, a button bound with data-action), hCaptcha and Cloudflare Turnstile (a form, and a
 * data-callback with no form at all). The fake site accepts only a token the fake solver issued
 * for its site key (and, where the widget has one, its action), as the real verification
 * endpoints do, so a token put in the wrong place or solved with the wrong task fails the test.
 * Both solver flavours are run: the default (Anti-Captcha / 2Captcha names) and CapSolver.
 * Skipped without Chromium.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { startLoopbackSite, type LoopbackSite, type SiteHit } from '../support/web-site.ts';
import { isBrowserAvailable } from '../../src/browser/index.ts';

const chromium = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
const skip = (await isBrowserAvailable(chromium)) ? false : `Chromium is not available at ${chromium} (install the chromium package or set CHROMIUM_PATH)`;

let anticaptcha: TestService;
let capsolver: TestService;
let site: LoopbackSite;
let solver: LoopbackSite;
/** Every createTask request, and every token handed out with the task it solved. */
const tasks: Array<{ clientKey: string; task: Record<string, unknown> }> = [];
const issued = new Map<string, Record<string, unknown>>();

const html = (body: string, status = 200) => ({ status, headers: { 'content-type': 'text/html; charset=utf-8' }, body });
const page = (title: string, body: string) => html(`<html><head><title>${title}</title></head><body>${body}</body></html>`);

/** What a headless browser gets from the real api.js: a grecaptcha whose tokens score as a bot's. */
const FAKE_RECAPTCHA_SCRIPT = `window.grecaptcha = { ready: (callback) => callback(), execute: () => Promise.resolve('headless-low-score') };`;

/** Pages that verify with fetch show the answer (title and body) in place of their own. */
const SHOW_ANSWER = `function showAnswer(text) { const answer = new DOMParser().parseFromString(text, 'text/html'); document.title = answer.title; document.body.innerHTML = answer.body.innerHTML; }`;

/** The action a token was solved for, in whichever field the flavour puts it. */
const actionOf = (task: Record<string, unknown>) => task.pageAction ?? task.action ?? (task.metadata as Record<string, unknown> | undefined)?.action;

/** The site's check: a token the solver issued for this key (and this action when the widget has one). */
function accepted(token: unknown, siteKey: string, action?: string): boolean {
  const task = typeof token === 'string' ? issued.get(token) : undefined;
  return task !== undefined && task.websiteKey === siteKey && (action === undefined || actionOf(task) === action);
}

function formFields(hit: SiteHit): URLSearchParams {
  return new URLSearchParams(hit.body);
}

/** A verification endpoint answering the welcome page, or 403 to anything else. */
function verify(name: string, check: (hit: SiteHit) => boolean) {
  site.route(`/verify/${name}`, (hit) => (hit.method === 'POST' && check(hit) ? page('Welcome', `<p>Welcome through ${name}</p>`) : html('<html><body>wrong token</body></html>', 403)));
}

before(async () => {
  if (skip) return;
  site = await startLoopbackSite();
  solver = await startLoopbackSite();
  for (const path of ['/recaptcha/api.js', '/assets/captcha.js']) site.route(path, () => ({ headers: { 'content-type': 'text/javascript' }, body: FAKE_RECAPTCHA_SCRIPT }));

  // reCAPTCHA v3, the token in a g-recaptcha-response field: the page asks for one on load (and
  // gets the bot's), the form is posted as it is.
  site.route('/v3/form', () =>
    page(
      'Sign in',
      `<script src="/recaptcha/api.js?render=v3-form-key"></script>
<form action="/verify/v3-form" method="POST"><input name="user" value="ada"><input type="hidden" name="g-recaptcha-response"><button>Sign in</button></form>
<script>grecaptcha.ready(() => grecaptcha.execute('v3-form-key', { action: 'login' }).then((token) => { document.querySelector('[name="g-recaptcha-response"]').value = token; }));</script>`,
    ),
  );
  verify('v3-form', (hit) => formFields(hit).get('user') === 'ada' && accepted(formFields(hit).get('g-recaptcha-response'), 'v3-form-key', 'login'));

  // reCAPTCHA v3, the page's own callback: the submit handler asks grecaptcha.execute for a token
  // and posts it with fetch; the form itself goes nowhere. The script is a self-hosted copy, so
  // only the execute call names the key.
  site.route('/v3/script', () =>
    page(
      'Contact',
      `<script src="/assets/captcha.js"></script>
<form id="contact"><input type="hidden" name="g-recaptcha-response"><textarea name="message">Hello</textarea><button>Send</button></form>
<script>${SHOW_ANSWER}
document.getElementById('contact').addEventListener('submit', (event) => {
  event.preventDefault();
  grecaptcha.ready(() => {
    grecaptcha.execute('v3-script-key', { action: 'contact' }).then(async (token) => {
      const answer = await fetch('/verify/v3-script', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
      showAnswer(await answer.text());
    });
  });
});
</script>`,
    ),
  );
  verify('v3-script', (hit) => accepted(JSON.parse(hit.body).token, 'v3-script-key', 'contact'));

  // reCAPTCHA v3 bound to a button (api.js without render=): data-action, and a data-callback
  // that receives the token and submits the form with it in its own field.
  site.route('/v3/button', () =>
    page(
      'Join',
      `<script src="/recaptcha/api.js"></script>
<form id="join" action="/verify/v3-button" method="POST"><input type="hidden" name="captcha" id="captcha">
<button class="g-recaptcha" data-sitekey="v3-button-key" data-callback="onJoin" data-action="signup">Join</button></form>
<script>function onJoin(token) { document.getElementById('captcha').value = token; document.getElementById('join').submit(); }</script>`,
    ),
  );
  verify('v3-button', (hit) => accepted(formFields(hit).get('captcha'), 'v3-button-key', 'signup'));

  // hCaptcha in a form, without the response fields its script would have added: the site reads
  // h-captcha-response, and g-recaptcha-response (hCaptcha fills both) must agree.
  for (const [path, key, size] of [
    ['/hcaptcha/form', 'hc-form-key', ''],
    ['/hcaptcha/invisible', 'hc-invisible-key', ' data-size="invisible"'],
  ]) {
    site.route(path, () =>
      page('Register', `<form action="/verify/${key}" method="POST"><input name="email" value="a@example.com"><div class="h-captcha" data-sitekey="${key}"${size}></div><button>Register</button></form>`),
    );
    verify(key, (hit) => {
      const fields = formFields(hit);
      return accepted(fields.get('h-captcha-response'), key) && fields.get('g-recaptcha-response') === fields.get('h-captcha-response');
    });
  }

  // Turnstile in a form, with an action (Turnstile's verification returns it; the site checks it).
  site.route('/turnstile/form', () =>
    page('Log in', `<form action="/verify/turnstile-form" method="POST"><div class="cf-turnstile" data-sitekey="ts-form-key" data-action="login" data-cdata="session-7"></div><button>Log in</button></form>`),
  );
  verify('turnstile-form', (hit) => accepted(formFields(hit).get('cf-turnstile-response'), 'ts-form-key', 'login'));

  // Turnstile with a data-callback and no form: only the callback can carry the token.
  site.route('/turnstile/callback', () =>
    page(
      'Article',
      `<div class="cf-turnstile" data-sitekey="ts-callback-key" data-callback="onTurnstile"></div><p>Checking…</p>
<script>${SHOW_ANSWER}
async function onTurnstile(token) {
  const answer = await fetch('/verify/turnstile-callback', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token }) });
  showAnswer(await answer.text());
}
</script>`,
    ),
  );
  verify('turnstile-callback', (hit) => accepted(JSON.parse(hit.body).token, 'ts-callback-key'));

  // The fake solver: each task is solved at the first poll with a token of its own, answered in
  // the field the real services use (Turnstile: `token`, the others: `gRecaptchaResponse`).
  solver.route('/createTask', (hit) => {
    const request = JSON.parse(hit.body);
    tasks.push(request);
    return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ errorId: 0, taskId: tasks.length }) };
  });
  solver.route('/getTaskResult', (hit) => {
    const { taskId } = JSON.parse(hit.body);
    const { task } = tasks[Number(taskId) - 1]!;
    const token = `solved-${String(taskId)}-${Math.random().toString(36).slice(2)}`;
    issued.set(token, task);
    const solution = /turnstile/i.test(String(task.type)) ? { token } : { gRecaptchaResponse: token };
    return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ errorId: 0, status: 'ready', solution }) };
  });

  const env = { OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost', CAPTCHA_SOLVER_URL: solver.url(), CAPTCHA_SOLVER_POLL_MS: '100', WEB_BROWSER_TIMEOUT_MS: '30000' };
  anticaptcha = await startTestService({ ...env, CAPTCHA_SOLVER_KEY: 'anticaptcha-key' });
  capsolver = await startTestService({ ...env, CAPTCHA_SOLVER_KEY: 'capsolver-key', CAPTCHA_SOLVER_FLAVOR: 'capsolver' });
});

after(async () => {
  await anticaptcha?.close();
  await capsolver?.close();
  await site?.close();
  await solver?.close();
});

async function render(service: TestService, path: string, credits = 10) {
  const user = await service.user({ scraping: credits });
  const r = await service.call('POST', '/v1/web', { token: user.token, body: { url: `${site.url()}${path}`, bypass_captcha: true, format: 'text' } });
  return { ...r, charged: credits - ((await service.services.ledger.balance(user.id, 'scraping')) ?? 0) };
}

/** The one task the service with this solver key created for this site key. */
function taskFor(clientKey: string, siteKey: string): Record<string, unknown> {
  const found = tasks.filter((entry) => entry.clientKey === clientKey && entry.task.websiteKey === siteKey);
  assert.equal(found.length, 1, `one task for ${siteKey} from ${clientKey}`);
  return found[0]!.task;
}

/** The token the site received at /verify/<name>, which must be one the solver issued. */
function deliveredToken(name: string, read: (hit: SiteHit) => string | null | undefined): string {
  const hits = site.log.filter((hit) => hit.path === `/verify/${name}`);
  assert.equal(hits.length, 1, `one request to /verify/${name}`);
  const token = read(hits[0]!);
  assert.ok(typeof token === 'string' && issued.has(token), `/verify/${name} got an issued token (${String(token)})`);
  return token;
}

test('the fake site refuses tokens the solver did not issue', { skip }, async () => {
  const post = (name: string, body: string, type = 'application/x-www-form-urlencoded') =>
    fetch(`${site.url()}/verify/${name}`, { method: 'POST', headers: { 'content-type': type }, body }).then((r) => r.status);
  assert.equal(await post('v3-form', 'user=ada&g-recaptcha-response=headless-low-score'), 403);
  assert.equal(await post('turnstile-form', 'cf-turnstile-response=forged'), 403);
  assert.equal(await post('turnstile-callback', JSON.stringify({ token: 'forged' }), 'application/json'), 403);
  site.log.length = 0;
});

test('reCAPTCHA v3 (api.js?render=): the action read from the page, the token posted in g-recaptcha-response', { skip, timeout: 60_000 }, async () => {
  const r = await render(anticaptcha, '/v3/form');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.response.content, 'Welcome\nWelcome through v3-form', 'the title, then the page');
  assert.equal(r.body.response.url, `${site.url()}/verify/v3-form`);
  assert.equal(r.charged, 5);
  assert.deepEqual(taskFor('anticaptcha-key', 'v3-form-key'), {
    type: 'RecaptchaV3TaskProxyless',
    websiteURL: `${site.url()}/v3/form`,
    websiteKey: 'v3-form-key',
    pageAction: 'login',
    minScore: 0.7,
  });
  deliveredToken('v3-form', (hit) => formFields(hit).get('g-recaptcha-response'));
});

test("reCAPTCHA v3 found by its grecaptcha.execute call, asked for in the page's submit handler: the page's callback gets the solved token", { skip, timeout: 60_000 }, async () => {
  const r = await render(anticaptcha, '/v3/script');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.response.content, 'Welcome\nWelcome through v3-script', 'the title, then the page');
  assert.equal(r.body.response.url, `${site.url()}/v3/script`);
  assert.equal(r.charged, 5);
  assert.deepEqual(taskFor('anticaptcha-key', 'v3-script-key'), {
    type: 'RecaptchaV3TaskProxyless',
    websiteURL: `${site.url()}/v3/script`,
    websiteKey: 'v3-script-key',
    pageAction: 'contact',
    minScore: 0.7,
  });
  deliveredToken('v3-script', (hit) => JSON.parse(hit.body).token);
});

test('reCAPTCHA v3 bound to a button (data-action, data-callback): solved as v3, the callback submits the token', { skip, timeout: 60_000 }, async () => {
  const r = await render(anticaptcha, '/v3/button');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.response.content, 'Welcome\nWelcome through v3-button', 'the title, then the page');
  assert.equal(r.body.response.url, `${site.url()}/verify/v3-button`);
  assert.equal(r.charged, 5);
  assert.deepEqual(taskFor('anticaptcha-key', 'v3-button-key'), {
    type: 'RecaptchaV3TaskProxyless',
    websiteURL: `${site.url()}/v3/button`,
    websiteKey: 'v3-button-key',
    pageAction: 'signup',
    minScore: 0.7,
  });
  deliveredToken('v3-button', (hit) => formFields(hit).get('captcha'));
});

test('hCaptcha: h-captcha-response and g-recaptcha-response created in the form, filled and submitted', { skip, timeout: 60_000 }, async () => {
  const r = await render(anticaptcha, '/hcaptcha/form');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.response.content, 'Welcome\nWelcome through hc-form-key', 'the title, then the page');
  assert.equal(r.body.response.url, `${site.url()}/verify/hc-form-key`);
  assert.equal(r.charged, 5);
  assert.deepEqual(taskFor('anticaptcha-key', 'hc-form-key'), { type: 'HCaptchaTaskProxyless', websiteURL: `${site.url()}/hcaptcha/form`, websiteKey: 'hc-form-key' });
  deliveredToken('hc-form-key', (hit) => formFields(hit).get('h-captcha-response'));
});

test('Turnstile in a form: the action and customer data sent to the solver, the token (solution.token) in cf-turnstile-response', { skip, timeout: 60_000 }, async () => {
  const r = await render(anticaptcha, '/turnstile/form');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.response.content, 'Welcome\nWelcome through turnstile-form', 'the title, then the page');
  assert.equal(r.body.response.url, `${site.url()}/verify/turnstile-form`);
  assert.equal(r.charged, 5);
  assert.deepEqual(taskFor('anticaptcha-key', 'ts-form-key'), {
    type: 'TurnstileTaskProxyless',
    websiteURL: `${site.url()}/turnstile/form`,
    websiteKey: 'ts-form-key',
    action: 'login',
    cData: 'session-7',
    turnstileCData: 'session-7',
    data: 'session-7',
  });
  deliveredToken('turnstile-form', (hit) => formFields(hit).get('cf-turnstile-response'));
});

test('a widget with a data-callback and no form (Turnstile): the callback is called with the token', { skip, timeout: 60_000 }, async () => {
  const r = await render(anticaptcha, '/turnstile/callback');
  assert.equal(r.status, 200, r.text);
  assert.equal(r.body.response.content, 'Welcome\nWelcome through turnstile-callback', 'the title, then the page');
  assert.equal(r.body.response.url, `${site.url()}/turnstile/callback`);
  assert.equal(r.charged, 5);
  assert.deepEqual(taskFor('anticaptcha-key', 'ts-callback-key'), {
    type: 'TurnstileTaskProxyless',
    websiteURL: `${site.url()}/turnstile/callback`,
    websiteKey: 'ts-callback-key',
  });
  deliveredToken('turnstile-callback', (hit) => JSON.parse(hit.body).token);
});

test("CAPTCHA_SOLVER_FLAVOR=capsolver: CapSolver's task names and fields for v3, invisible hCaptcha and Turnstile", { skip, timeout: 120_000 }, async () => {
  const cases = [
    { path: '/v3/form', key: 'v3-form-key', verify: 'v3-form', task: { type: 'ReCaptchaV3TaskProxyLess', pageAction: 'login' } },
    { path: '/hcaptcha/invisible', key: 'hc-invisible-key', verify: 'hc-invisible-key', task: { type: 'HCaptchaTaskProxyLess', isInvisible: true } },
    { path: '/turnstile/form', key: 'ts-form-key', verify: 'turnstile-form', task: { type: 'AntiTurnstileTaskProxyLess', metadata: { action: 'login', cdata: 'session-7' } } },
  ];
  for (const entry of cases) {
    const before = site.log.filter((hit) => hit.path === `/verify/${entry.verify}`).length;
    const r = await render(capsolver, entry.path);
    assert.equal(r.status, 200, `${entry.path}: ${r.text}`);
    assert.equal(r.body.response.content, `Welcome\nWelcome through ${entry.verify}`, entry.path);
    assert.equal(r.charged, 5, entry.path);
    assert.deepEqual(taskFor('capsolver-key', entry.key), { websiteURL: `${site.url()}${entry.path}`, websiteKey: entry.key, ...entry.task });
    const hits = site.log.filter((hit) => hit.path === `/verify/${entry.verify}`);
    assert.equal(hits.length, before + 1, `${entry.path} posted once to /verify/${entry.verify}`);
    const fields = formFields(hits.at(-1)!);
    const token = fields.get('g-recaptcha-response') ?? fields.get('cf-turnstile-response');
    assert.equal(issued.get(String(token))?.type, entry.task.type, `${entry.path}: the token the CapSolver task was solved with`);
  }
});
