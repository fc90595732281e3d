/**
 * The command line's one output style (issue 40): aligned tables for a person, no index column, no
 * quotes, long cells cut; one JSON line with --json. And the first start's hint names a command
 * that works as printed.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_CELL, render, renderHuman, table } from '../../src/cli/render.ts';
import { commandPrefix } from '../../src/cli/main.ts';

const jobs = [
  { id: '0b9f0d8e-3c1a-4f6e-9d2b-7a5c4e3f2a10', user: 2, kind: 'crawl', status: 'running', url: `https://example.com/${'docs/'.repeat(20)}`, params: { limit: 50, format: 'markdown' }, error: null },
  { id: '1c2d', user: 12, kind: 'batch', status: 'completed', url: 'https://example.org/', params: { urls: 3 }, error: null },
];

test('a list is an aligned table: header, one line per row, no index column, no quotes', () => {
  const lines = renderHuman(jobs).split('\n');
  assert.equal(lines.length, 3);
  assert.match(lines[0]!, /^id {2,}user {2}kind {3}status {5}url {2,}params$/, 'error, empty in every row, is left out');
  assert.doesNotMatch(lines.join('\n'), /\(index\)|'/);
  // Columns line up: each value starts where its header does.
  const at = lines[0]!.indexOf('status');
  assert.equal(lines[1]!.indexOf('running'), at);
  assert.equal(lines[2]!.indexOf('completed'), at);
});

test('long cells are cut with an ellipsis, so a row stays readable', () => {
  const text = table(jobs);
  assert.ok(text.includes('…'));
  for (const line of text.split('\n')) assert.ok(line.length < 7 * (MAX_CELL + 2), `a line of ${line.length} characters`);
  assert.ok(text.split('\n').every((line) => !line.includes('docs/docs/docs/docs/docs/docs/docs/docs/docs/')));
});

test('a record is aligned name/value lines, its lists as tables below', () => {
  const shown = renderHuman({ user: 1, balances: [{ product: 'scraping', balance: 1000, held: 0, plan: null }], note: 'granted' });
  assert.equal(shown, ['user  1', 'note  granted', '', 'balances:', '  product   balance  held', '  scraping  1000     0'].join('\n'));
});

test('an empty list says so; --json prints the result itself on one line', () => {
  assert.equal(renderHuman([]), '(none)');
  assert.equal(render(jobs, true), JSON.stringify(jobs));
  assert.equal(render({ a: 1 }, true), '{"a":1}');
});

test('the hint runs the command line as the server was started', () => {
  assert.equal(commandPrefix({ npm_lifecycle_event: 'start' }), 'npm run -s gleaner --');
  assert.equal(commandPrefix({ npm_lifecycle_event: 'start', DATA_DIR: '/tmp/my data' }), "DATA_DIR='/tmp/my data' npm run -s gleaner --");
  assert.equal(commandPrefix({}, '/srv/app', '/usr/local/bin/node').split(' ')[0], 'node');
  assert.match(commandPrefix({}, '/srv/app', '/usr/local/bin/node'), /^node \S*bin\/gleaner$/);
});

test("in a terminal, a table is cut to the terminal's width, the widest columns first", () => {
  const rows = Array.from({ length: 3 }, (_, index) => ({
    id: `0b9f0d8e-3c1a-4f6e-9d2b-7a5c4e3f2a1${index}`,
    kind: 'crawl',
    status: 'running',
    url: `https://example.com/${'section/'.repeat(8)}${index}`,
    created_at: '2026-11-26T10:00:00.000000Z',
    expires_at: '2026-12-03T10:00:00.000000Z',
  }));
  const wide = table(rows);
  assert.ok(wide.split('\n')[0]!.length > 100);
  const fitted = table(rows, MAX_CELL, 100);
  for (const line of fitted.split('\n')) assert.ok(line.length <= 100, `${line.length}: ${line}`);
  assert.match(fitted, /^id +kind +status +url +created_at +expires_at$/m, 'every column stays');
  assert.match(fitted.split('\n')[1]!, /crawl {2,}running/, 'short columns are not cut');
  assert.equal(renderHuman(rows, { width: 100 }), fitted);
});
