/**
 * The user dashboard in real Chromium (playwright-core driving the system's chromium): sign-in
 * with a real token, balances the CLI just granted, a billed request in history and in the chart's
 * data, history filters, a wrong token, the owner's Admin tab, and values holding `<script>`
 * shown as text under the Content-Security-Policy. Screenshots go to the test's temporary folder.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium, type Browser, type Page } from 'playwright-core';
import { startTestService, type TestService } from '../support/service.ts';
import { TEST_ENDPOINTS } from '../support/work-endpoint.ts';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const skip = existsSync(CHROMIUM) ? false : `no Chromium at ${CHROMIUM} (install Debian's chromium or set CHROMIUM_PATH)`;
const BIN = new URL('../../bin/gleaner', import.meta.url).pathname;
const HOSTILE = '<script>window.pwned = 1</script><img src=x onerror="window.pwned = 2">';

let service: TestService;
let browser: Browser;
let shots: string;
let user: { id: number; token: string };

/** Runs the operator's command line against the test server's DATA_DIR / DATABASE_URL. */
async function cli(...args: string[]): Promise<any> {
  const env: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', DATA_DIR: service.env.DATA_DIR };
  delete env.DATABASE_URL;
  if (service.env.DATABASE_URL) env.DATABASE_URL = service.env.DATABASE_URL;
  const { stdout } = await promisify(execFile)(process.execPath, [BIN, ...args, '--json'], { env });
  return JSON.parse(stdout);
}

async function openDashboard(): Promise<{ page: Page; problems: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const problems: string[] = [];
  // A CSP violation or a script error shows up here; the page must have none.
  page.on('console', (message) => message.type() === 'error' && !/Failed to load resource/.test(message.text()) && problems.push(message.text()));
  page.on('pageerror', (error) => problems.push(error.message));
  await page.goto(`${service.url}/dashboard`);
  return { page, problems };
}

async function signIn(page: Page, token: string): Promise<void> {
  await page.fill('#token', token);
  await page.click('#sign-in-form button[type=submit]');
}

before(async () => {
  if (skip) return;
  service = await startTestService({}, { endpoints: TEST_ENDPOINTS });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox'] });
  shots = mkdtempSync(join(tmpdir(), 'gleaner-dashboard-'));
  const created = await service.call('POST', '/admin/users', { token: service.owner!.token, body: { name: HOSTILE, email: 'hostile@example.com' } });
  assert.equal(created.status, 201);
  user = { id: created.body.id, token: created.body.token };
});

after(async () => {
  await browser?.close();
  await service?.close();
  if (shots) console.log(`dashboard screenshots: ${shots}`);
});

test('the page is static, with a strict CSP and no inline script', { skip }, async () => {
  const response = await fetch(`${service.url}/dashboard`);
  assert.equal(response.status, 200);
  const csp = response.headers.get('content-security-policy') ?? '';
  assert.match(csp, /default-src 'none'/);
  assert.match(csp, /script-src 'self'(;|$)/);
  assert.doesNotMatch(csp, /unsafe-inline|unsafe-eval/);
  const html = await response.text();
  for (const script of html.match(/<script\b[^>]*>/g) ?? []) assert.match(script, /\bsrc="\/dashboard\//, script);
  assert.doesNotMatch(html, /\son[a-z]+=/i, 'no inline event handlers');
  const chart = await fetch(`${service.url}/dashboard/vendor/uPlot.iife.min.js`);
  assert.equal(chart.status, 200);
  assert.match(await chart.text(), /uPlot/);
});

/**
 * Every answer of 400 or more, and every request that failed, while the page loads. A request the
 * browser itself cancelled (the reload leaving the first load's favicon behind) is not one that
 * failed: it was never answered, and the load after it asks again.
 */
function failures(page: Page): string[] {
  const failed: string[] = [];
  page.on('response', (response) => response.status() >= 400 && failed.push(`${response.status()} ${response.url()}`));
  page.on('requestfailed', (request) => request.failure()?.errorText !== 'net::ERR_ABORTED' && failed.push(`failed ${request.url()} (${request.failure()?.errorText})`));
  return failed;
}

/** The icon a browser shows for the page: the one its <link rel=icon> names, loaded. */
async function pageIcon(page: Page): Promise<{ href: string; status: number; type: string }> {
  const href = await page.$eval('link[rel~=icon]', (link: any) => link.href as string);
  const icon = await fetch(href);
  return { href, status: icon.status, type: icon.headers.get('content-type') ?? '' };
}

test("the dashboard and /docs carry gleaner's name and mark, with a favicon (issue 40)", { skip }, async () => {
  const favicon = await fetch(`${service.url}/favicon.ico`);
  assert.equal(favicon.status, 200);
  assert.equal(favicon.headers.get('content-type'), 'image/png');
  assert.deepEqual([...new Uint8Array(await favicon.arrayBuffer()).subarray(1, 4)], [0x50, 0x4e, 0x47], 'a PNG');

  const { page, problems } = await openDashboard();
  const failed = failures(page);
  await page.reload();
  assert.match(await page.title(), /^gleaner/);
  assert.equal((await page.textContent('header h1'))?.trim(), 'gleaner');
  assert.ok(await page.$eval('header h1 img.logo', (img: any) => img.naturalWidth > 0), 'the mark is drawn');
  const dashboardIcon = await pageIcon(page);
  assert.equal(dashboardIcon.status, 200, dashboardIcon.href);
  assert.equal(dashboardIcon.type, 'image/svg+xml');
  await page.screenshot({ path: join(shots, 'dashboard-brand.png'), clip: { x: 0, y: 0, width: 1100, height: 120 } });
  assert.deepEqual(failed, [], 'nothing the page asked for was missing (the favicon included)');
  assert.deepEqual(problems, []);
  await page.close();

  const docs = await browser.newPage({ viewport: { width: 1100, height: 900 } });
  const docsFailed = failures(docs);
  await docs.goto(`${service.url}/docs/`);
  await docs.waitForSelector('.topbar-wrapper img');
  await docs.waitForSelector('.information-container .title');
  assert.equal(await docs.title(), 'gleaner · API docs');
  assert.match((await docs.textContent('.information-container .title')) ?? '', /^gleaner/);
  const logo = await docs.$eval('.topbar-wrapper img', (img: any) => ({ src: img.src as string, drawn: img.naturalWidth > 0 }));
  assert.match(logo.src, /^data:image\/svg\+xml;base64,/);
  assert.ok(logo.drawn, 'the logo is drawn');
  assert.ok(Buffer.from(logo.src.split(',')[1]!, 'base64').toString('utf8').includes('>gleaner</text>'), "gleaner's wordmark, not the UI library's");
  const docsIcon = await pageIcon(docs);
  assert.equal(docsIcon.status, 200, docsIcon.href);
  assert.equal(docsIcon.type, 'image/svg+xml');
  const specLink = await docs.$eval('.information-container a[href="/openapi.json"]', (a: any) => a.href as string);
  assert.equal(specLink, `${service.url}/openapi.json`);
  await docs.screenshot({ path: join(shots, 'docs.png'), clip: { x: 0, y: 0, width: 1100, height: 400 } });
  assert.deepEqual(docsFailed, []);
  await docs.close();
});

test('a wrong token gets a clear message and is not kept', { skip }, async () => {
  const { page, problems } = await openDashboard();
  await signIn(page, '999|not-a-real-token');
  await page.waitForSelector('#sign-in-error:not([hidden])');
  assert.match((await page.textContent('#sign-in-error')) ?? '', /not accepted/);
  assert.equal(await page.evaluate(() => sessionStorage.getItem('gleaner.token')), null);
  await page.screenshot({ path: join(shots, 'wrong-token.png') });
  assert.deepEqual(problems, []);
  await page.close();
});

test('sign in: balances the CLI granted, a billed request in history and chart, filters, values as text', { skip }, async () => {
  const granted = await cli('credits', 'grant', '--user', String(user.id), '--product', 'scraping', '--amount', '250');
  assert.equal(granted.balance, 250);

  const { page, problems } = await openDashboard();
  await signIn(page, user.token);
  await page.waitForSelector('#app:not([hidden])');
  await page.waitForSelector('#balances tr[data-product=scraping]');
  assert.equal((await page.textContent('#balances tr[data-product=scraping] .balance'))?.trim(), '250');
  // The token lives in this tab's sessionStorage only: no cookie, no localStorage.
  assert.equal(await page.evaluate(() => sessionStorage.getItem('gleaner.token')), user.token);
  assert.equal(await page.evaluate(() => localStorage.length), 0);
  assert.deepEqual(await page.context().cookies(), []);
  // The name holds markup: it is shown as text, and nothing ran.
  assert.ok((await page.textContent('#who'))?.includes(HOSTILE));

  // A billed request (2 credits), one refused (400), each with a parameter holding markup.
  assert.equal((await service.call('POST', '/v1/test/work', { token: user.token, body: { cost: 2, note: HOSTILE } })).status, 200);
  assert.equal((await service.call('POST', '/v1/test/work', { token: user.token, body: { outcome: 'fail', note: 'failed one' } })).status, 400);

  await page.reload();
  await page.waitForSelector('#balances tr[data-product=scraping]');
  assert.equal((await page.textContent('#balances tr[data-product=scraping] .balance'))?.trim(), '248');
  const today = new Date().toISOString().slice(0, 10);
  await page.waitForFunction(() => (globalThis as any).gleanerChartData !== undefined);
  const chart = await page.evaluate(() => (globalThis as any).gleanerChartData);
  const scraping = chart.products.indexOf('scraping') + 1;
  assert.equal(chart.data[0].length, 30, '30 days on the x axis');
  assert.equal(chart.data[scraping].at(-1), 2, "today's scraping credits are plotted");
  assert.equal((await page.textContent(`#usage-table tr[data-date="${today}"][data-product=scraping] .credits`))?.trim(), '2');
  assert.ok(await page.isVisible('#chart canvas'), 'uPlot drew its canvas');
  await page.screenshot({ path: join(shots, 'overview.png'), fullPage: true });

  await page.click('.tabs button[data-tab=history]');
  await page.waitForSelector('#history tbody tr[data-id]');
  const rows = await page.$$eval('#history tbody tr[data-id]', (trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
  assert.equal(rows.length, 2);
  assert.equal(rows[0][3], '400');
  assert.equal(rows[1][3], '200');
  assert.equal(rows[1][4], '2', 'the cost of the billed request');
  assert.ok(rows[1][6]?.includes(JSON.stringify(HOSTILE)), 'the parameter is shown as text');
  assert.equal(await page.$$eval('#history script, #history img, #who script, #who img', (found) => found.length), 0);
  assert.equal(await page.evaluate(() => (globalThis as any).pwned), undefined);

  await page.fill('#history-filters input[name=status]', '400');
  await page.click('#history-filters button[type=submit]');
  await page.waitForFunction(() => (globalThis as any).document.querySelectorAll('#history tbody tr[data-id]').length === 1);
  assert.equal(await page.textContent('#history tbody tr[data-id] .status'), '400');
  await page.fill('#history-filters input[name=status]', '');
  await page.fill('#history-filters input[name=endpoint]', '/v1/pdf');
  await page.click('#history-filters button[type=submit]');
  await page.waitForSelector('#history tbody td.hint');
  await page.screenshot({ path: join(shots, 'history.png'), fullPage: true });
  assert.equal(await page.isVisible('#admin-tab'), false, 'no Admin tab for a customer');
  assert.deepEqual(problems, []);
  await page.close();
});

test("the owner's Admin tab: users with balances, grant credits, create a user, revoke a token", { skip }, async () => {
  const { page, problems } = await openDashboard();
  await signIn(page, service.owner!.token);
  await page.waitForSelector('#admin-tab:not([hidden])');
  await page.click('#admin-tab');
  const row = `#users tr[data-user="${user.id}"]`;
  await page.waitForSelector(row);
  assert.equal(await page.textContent(`${row} .name`), HOSTILE);
  const before = (await service.call('GET', '/me', { token: user.token })).body.user.balances.scraping;

  await page.fill('#grant-form input[name=user]', String(user.id));
  await page.selectOption('#grant-form select[name=product]', 'scraping');
  await page.fill('#grant-form input[name=amount]', '100');
  await page.click('#grant-form button[value=grant]');
  await page.waitForSelector('#admin-message:not([hidden])');
  assert.equal(await page.textContent('#admin-message'), `User ${user.id}: scraping balance is now ${before + 100}.`);
  assert.equal((await service.call('GET', '/me', { token: user.token })).body.user.balances.scraping, before + 100);
  // The list is reloaded after the grant: wait for the new balance, not for any balance (the row
  // shows the old one until the reload answers).
  const expected = `scraping: ${before + 100}`;
  await page
    .waitForFunction(([selector, text]) => (globalThis as any).document.querySelector(selector)?.textContent?.includes(text), [`${row} .balances`, expected] as const, { timeout: 10_000 })
    .catch(() => {});
  assert.match((await page.textContent(`${row} .balances`)) ?? '', new RegExp(expected));

  await page.fill('#create-user-form input[name=name]', 'Grace');
  await page.fill('#create-user-form input[name=email]', 'grace@example.com');
  await page.click('#create-user-form button[type=submit]');
  await page.waitForSelector('#created-user:not([hidden])');
  const shown = (await page.textContent('#created-user')) ?? '';
  const token = /API token: +(\S+)/.exec(shown)?.[1];
  assert.ok(token, shown);
  assert.equal((await service.call('GET', '/me', { token })).body.user.name, 'Grace');
  await page.screenshot({ path: join(shots, 'admin.png'), fullPage: true });

  await page.fill('#revoke-form input[name=token]', token.split('|')[0]);
  await page.click('#revoke-form button[type=submit]');
  await page.waitForFunction(() => (globalThis as any).document.querySelector('#admin-message')?.textContent?.includes('revoked'));
  assert.equal((await service.call('GET', '/me', { token })).status, 401);

  // A refused action shows the API's message.
  await page.fill('#grant-form input[name=user]', '999999');
  await page.click('#grant-form button[value=grant]');
  await page.waitForSelector('#admin-error:not([hidden])');
  assert.equal(await page.textContent('#admin-error'), 'There is no user 999999.');
  assert.deepEqual(problems, []);
  await page.close();
});

test('no script or style is inline in the served files', { skip }, () => {
  const html = readFileSync(new URL('../../src/dashboard/public/index.html', import.meta.url), 'utf8');
  assert.doesNotMatch(html, /<style\b|style="/);
  const js = readFileSync(new URL('../../src/dashboard/public/dashboard.js', import.meta.url), 'utf8');
  assert.doesNotMatch(js, /innerHTML|outerHTML|insertAdjacentHTML|document\.write/);
});
