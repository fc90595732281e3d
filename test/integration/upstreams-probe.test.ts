/**
 * `gleaner upstreams probe` run as the operator runs it (a child process, the real CLI) against
 * fake upstreams on loopback: one engine serves a results page, one a captcha page, one a layout
 * the parser cannot read; Reddit, X, YouTube and Freelancer serve good answers, then blocks. The
 * verdicts printed must say which is which, and the exit code must say whether all were well.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startFakeUpstream, type FakeUpstream } from '../support/fake-upstream.ts';
import { bingFixtures, duckduckgoFixtures, fixtureResults } from '../support/search-fixtures.ts';
import { listing, post } from '../support/forum-fixtures.ts';

const BIN = new URL('../../bin/gleaner', import.meta.url).pathname;

let bing: FakeUpstream;
let duckduckgo: FakeUpstream;
let brave: FakeUpstream;
let reddit: FakeUpstream;
let x: FakeUpstream;
let youtube: FakeUpstream;
let freelancer: FakeUpstream;
let dataDir: string;

const fixture = (name: string) => readFileSync(new URL(`../fixtures/${name}`, import.meta.url), 'utf8');
/** A recorded player answer, as for the video the probe asks about (the parser checks the id). */
function playerAnswer(videoId: string): string {
  const player = JSON.parse(fixture('video/player-ok.json'));
  player.videoDetails.videoId = videoId;
  return JSON.stringify(player);
}

/** What X's embed source answers for a post. */
const EMBED = { __typename: 'Tweet', id_str: '20', text: 'just setting up my twttr', created_at: '2006-03-21T20:50:14.000Z', favorite_count: 1, user: { id_str: '12', name: 'jack', screen_name: 'jack' } };

before(async () => {
  [bing, duckduckgo, brave, reddit, x, youtube, freelancer] = await Promise.all(Array.from({ length: 7 }, () => startFakeUpstream()));
  const results = bingFixtures.results(fixtureResults('probe', 10));
  bing.handle(() => ({ status: results.status, body: results.body }));
  const captcha = Object.values(duckduckgoFixtures.blocked)[0];
  duckduckgo.handle(() => ({ status: captcha.status, body: captcha.body }));
  // A 200 page in a layout no parser of ours knows: the parser drifted, never "no results".
  brave.handle(() => ({ status: 200, body: `<!doctype html><html><head><title>weather - Brave Search</title></head><body><main class="redesign-2027">${Array.from({ length: 8 }, (_, i) => `<article><h3>Weather in city ${i}</h3><p>Sunny with a light breeze, 21 degrees in the afternoon, clouds in the evening.</p></article>`).join('')}</main></body></html>` }));
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'gleaner-probe-'));
});

after(async () => {
  await Promise.all([bing, duckduckgo, brave, reddit, x, youtube, freelancer].map((fake) => fake.close()));
  rmSync(dataDir, { recursive: true, force: true });
});

async function probe(): Promise<{ code: number | null; results: Array<{ upstream: string; operation: string; verdict: string; status: number | null; reason: string | null }>; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LOG_LEVEL: 'silent',
    DATA_DIR: dataDir,
    OUTBOUND_ALLOW_HOSTS: '127.0.0.1,localhost',
    SEARCH_ENGINES: 'bing,duckduckgo,brave',
    UPSTREAM_BING_URL: bing.url,
    UPSTREAM_DUCKDUCKGO_URL: duckduckgo.url,
    UPSTREAM_BRAVE_URL: brave.url,
    UPSTREAM_REDDIT_URL: reddit.url,
    UPSTREAM_X_URL: x.url,
    UPSTREAM_X_API_URL: x.url,
    UPSTREAM_X_SYNDICATION_URL: x.url,
    UPSTREAM_YOUTUBE_URL: youtube.url,
    UPSTREAM_FREELANCER_URL: freelancer.url,
  };
  delete env.DATABASE_URL;
  delete env.REDIS_URL;
  const child = spawn(process.execPath, [BIN, 'upstreams', 'probe', '--json'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk) => (stdout += chunk));
  child.stderr.on('data', (chunk) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, results: JSON.parse(stdout), stderr };
}

const verdictOf = (results: Array<{ upstream: string; operation: string; verdict: string }>, upstream: string, operation?: string) =>
  results.find((result) => result.upstream === upstream && (operation === undefined || result.operation === operation))?.verdict;

test('the probe tells ok, blocked and changed apart, for engines, Reddit, X, YouTube and Freelancer', { timeout: 120_000 }, async () => {
  youtube.handle((hit) => {
    const asked = hit.method === 'POST' && hit.path === '/youtubei/v1/player' ? (JSON.parse(hit.body) as { videoId?: string }).videoId : undefined;
    return asked ? { headers: { 'content-type': 'application/json' }, body: playerAnswer(asked) } : { status: 404, body: 'not here' };
  });
  freelancer.handle((hit) =>
    hit.path === '/api/projects/0.1/projects/active/' ? { headers: { 'content-type': 'application/json' }, body: fixture('freelance/search-page.json') } : { status: 404, body: 'not here' },
  );
  reddit.handle(() => ({ headers: { 'content-type': 'application/json' }, body: JSON.stringify(listing([post('p1')])) }));
  x.handle((hit) => {
    if (hit.path === '/tweet-result') return { headers: { 'content-type': 'application/json' }, body: JSON.stringify(EMBED) };
    if (hit.path.endsWith('/guest/activate.json')) return { headers: { 'content-type': 'application/json' }, body: JSON.stringify({ guest_token: '123456' }) };
    // GraphQL: an HTML block page.
    return { status: 403, body: '<html><body>Something went wrong, but don’t fret — let’s give it another shot.</body></html>' };
  });
  const { code, results, stderr } = await probe();
  assert.equal(verdictOf(results, 'bing'), 'ok', JSON.stringify(results) + stderr);
  assert.equal(verdictOf(results, 'duckduckgo'), 'blocked', JSON.stringify(results));
  assert.equal(verdictOf(results, 'brave'), 'changed', JSON.stringify(results));
  assert.equal(verdictOf(results, 'reddit', 'listing'), 'ok', JSON.stringify(results));
  assert.equal(verdictOf(results, 'x-syndication'), 'ok', JSON.stringify(results));
  assert.equal(verdictOf(results, 'x', 'TweetResultByRestId'), 'blocked', JSON.stringify(results));
  assert.equal(verdictOf(results, 'youtube', 'player'), 'ok', JSON.stringify(results));
  assert.equal(verdictOf(results, 'freelancer', 'projects_active'), 'ok', JSON.stringify(results));
  assert.equal(code, 1, 'not every upstream is well: exit 1 for cron');
  // Both fakes were asked (no probe went past them to the real sites), once, with the fixed request.
  assert.equal(youtube.hits.length, 1);
  assert.equal(JSON.parse(youtube.hits[0].body).videoId, 'jNQXAC9IVRw');
  assert.equal(freelancer.hits.length, 1);
  assert.equal(freelancer.hits[0].query.get('query'), 'python');
  // Each probe is one fixed, harmless request: the query is the fixed one, never a user's.
  assert.equal(bing.hits.length, 1);
  assert.equal(bing.hits[0].query.get('q'), 'weather');
});

test('recovered engines read ok; a YouTube bot check and a rate-limited Freelancer read as blocked', { timeout: 120_000 }, async () => {
  const results = bingFixtures.results(fixtureResults('probe', 10));
  duckduckgo.handle(() => ({ status: 200, body: duckduckgoFixtures.results(fixtureResults('probe', 10)).body }));
  brave.handle(() => ({ status: results.status, body: bingFixtures.results(fixtureResults('probe', 10)).body }));
  // YouTube now asks for a bot check, and Freelancer's API is rate-limited: both blocked.
  youtube.handle(() => ({ headers: { 'content-type': 'application/json' }, body: fixture('video/player-bot-check.json') }));
  freelancer.handle(() => ({ status: 429, headers: { 'content-type': 'application/json' }, body: '{"status":"error","message":"Too many requests"}' }));
  const { results: verdicts } = await probe();
  assert.equal(verdictOf(verdicts, 'youtube', 'player'), 'blocked', JSON.stringify(verdicts));
  assert.equal(verdictOf(verdicts, 'freelancer', 'projects_active'), 'blocked', JSON.stringify(verdicts));
  assert.equal(verdictOf(verdicts, 'duckduckgo'), 'ok', JSON.stringify(verdicts));
  assert.notEqual(verdictOf(verdicts, 'brave'), 'ok', 'brave still reads a page it does not know');
});
