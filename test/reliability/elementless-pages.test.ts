/**
 * Pages without any element, through the real `/v1/web` with `format: text|markdown` (issue 19
 * item 2): an empty body, bare text, a doctype or a comment alone, a 404 page saying only "Not
 * Found", bytes labelled UTF-16 that do not decode, plus two pages the converter's generator
 * found (a table without rows, a frameset). Each used to answer 500; each is now the usual 200
 * with the target's `status_code`, charged as /v1/web charges (2xx and 404 alike).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestService, type TestService } from '../support/service.ts';
import { historyRow, houseRuleViolation } from '../support/reliability-harness.ts';
import { fileWatchdog } from '../support/health-watchdog.ts';

interface Page {
  path: string;
  status: number;
  contentType: string;
  body: Uint8Array;
  /** What `text` comes to. */
  text: string;
  /** What Markdown comes to, when not the same. */
  markdown?: string;
}

// "hello" as UTF-16LE is three CJK characters and an odd byte left over; a lone low surrogate never decodes.
const undecodable = Buffer.from([0x68, 0x65, 0x6c, 0x6c, 0x6f, 0x00, 0xdc]);
const decodedUndecodable = new TextDecoder('utf-16le').decode(undecodable);

const PAGES: Page[] = [
  { path: '/empty', status: 200, contentType: 'text/html', body: Buffer.alloc(0), text: '' },
  { path: '/bare-text', status: 200, contentType: 'text/html; charset=utf-8', body: Buffer.from('hello world'), text: 'hello world' },
  { path: '/doctype', status: 200, contentType: 'text/html', body: Buffer.from('<!doctype html>'), text: '' },
  { path: '/comment', status: 200, contentType: 'text/html', body: Buffer.from('<!-- nothing but a comment -->'), text: '' },
  { path: '/not-found', status: 404, contentType: 'text/html', body: Buffer.from('Not Found'), text: 'Not Found' },
  { path: '/utf-16', status: 200, contentType: 'text/html; charset=utf-16', body: undecodable, text: decodedUndecodable.trim() },
  { path: '/empty-table', status: 200, contentType: 'text/html', body: Buffer.from('<p>before</p><table></table><p>after</p>'), text: 'before\nafter', markdown: 'before\n\nafter' },
  { path: '/frameset', status: 200, contentType: 'text/html', body: Buffer.from('<title>Frames</title><frameset><frame src="/a"></frameset>'), text: 'Frames', markdown: '# Frames' }, // text holds what the Markdown holds: the title first (issue 40)
];

let service: TestService;
let site: http.Server;
let siteUrl: string;
let user: { id: number; token: string };

const watchdog = fileWatchdog('pages without elements');

before(async () => {
  site = http.createServer((request, response) => {
    const page = PAGES.find((candidate) => candidate.path === request.url);
    if (!page) return response.writeHead(500).end();
    response.writeHead(page.status, { 'content-type': page.contentType, 'content-length': String(page.body.length) });
    response.end(page.body);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  service = await startTestService();
  user = await service.user({ scraping: 1000 });
  watchdog.start(service.url);
});

after(async () => {
  await service?.close();
  await new Promise((resolve) => site?.close(resolve));
});

for (const format of ['text', 'markdown'] as const) {
  test(`format ${format}: pages without elements answer 200 with the target's status, charged 1 credit each`, async () => {
    const failures: string[] = [];
    for (const page of PAGES) {
      const before = await service.services.ledger.balance(user.id, 'scraping');
      const r = await service.call('POST', '/v1/web', { token: user.token, body: { url: `${siteUrl}${page.path}`, format } });
      const charged = (before ?? 0) - ((await service.services.ledger.balance(user.id, 'scraping')) ?? 0);
      const history = await historyRow(service, r.headers.get('x-request-id') ?? '');
      const expected = format === 'markdown' ? (page.markdown ?? page.text) : page.text;
      const got = { status: r.status, status_code: r.body?.response?.status_code, content: r.body?.response?.content, charged, history };
      const want = { status: 200, status_code: page.status, content: expected, charged: 1, history: { status: 200, credits: 1 } };
      assert.equal(houseRuleViolation(r), null);
      try {
        assert.deepEqual(got, want);
      } catch {
        failures.push(`${page.path}: ${JSON.stringify(got)} (wanted ${JSON.stringify(want)})`);
      }
    }
    assert.deepEqual(failures, []);
  });
}

test('no hostile input of this file stalled the event loop: /health answered within 1 s throughout (issue 33)', async () => {
  await watchdog.assertClean();
});
