/**
 * The SSRF sandbox of the reliability tier. Runs as root inside fresh network and mount
 * namespaces (`unshare --net --mount`, started by test/reliability/ssrf.test.ts), where the only
 * network is loopback, and sets up:
 *
 * - private and special addresses on `lo` (10.0.0.1, 172.16.0.1, 192.168.0.1, 169.254.169.254,
 *   100.64.0.1, fd00::1, 64:ff9b::a00:1) with CANARY TCP listeners on 80, 443 and 8080 (and
 *   127.0.0.1/::1 on 80), recording every connection;
 * - "public" addresses on `lo` (93.184.216.34, 2606:4700::1111) serving a fake public upstream:
 *   documents, a results page, and redirects to wherever the query says;
 * - a fake DNS server on 127.0.0.53 (this namespace's /etc/resolv.conf points at it) answering
 *   private addresses for public-looking names, mixed answers, and a name whose answer flips
 *   between public and private on every query (DNS rebinding);
 * - the real server (embedded PGlite), with NO outbound exemption (OUTBOUND_ALLOW_HOSTS empty).
 *
 * With SSRF_CHROMIUM_PATH set (the test sets it when Chromium starts), the headless browser runs
 * in here too: `POST /v1/web` with `bypass_captcha` renders hostile pages of the public upstream
 * (reliability-ssrf-pages.ts) that reach for the private addresses every way a page can, and
 * Google is searched in the browser at a private name, then at a rebinding one. UDP canaries
 * (3478, 443, 80) sit beside the TCP ones for WebRTC and WebTransport.
 *
 * Then it sends every attack to the server, one at a time, noting the answer and any canary
 * connection it caused, and prints one line `SSRF-REPORT <json>` for the test to judge.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import dgram from 'node:dgram';
import http from 'node:http';
import net from 'node:net';
import dnsPacket from 'dns-packet';
import { startTestService } from './service.ts';
import { buildPdf } from './pdf-fixtures.ts';
import { renderTextImage } from './image-fixtures.ts';
import { SEARCH_PAGE } from './reliability-harness.ts';
import { HOSTILE_PAGES, mainDocumentRedirects, probeScript, PUBLIC_TEXT, workerScript } from './reliability-ssrf-pages.ts';

const PUBLIC_V4 = '93.184.216.34';
const PUBLIC_V6 = '2606:4700::1111';
const CANARY_ADDRESSES = ['10.0.0.1', '172.16.0.1', '192.168.0.1', '169.254.169.254', '100.64.0.1', 'fd00::1', '64:ff9b::a00:1'];
const CANARY_PORTS = [80, 443, 8080];
const UDP_CANARY_PORTS = [80, 443, 3478];
/** The browser half runs when this names a Chromium that starts. */
const CHROMIUM = process.env.SSRF_CHROMIUM_PATH || undefined;

const run = (command: string, ...args: string[]) => execFileSync(command, args, { stdio: 'pipe' });

// --- the namespace's network -------------------------------------------------------------
run('ip', 'link', 'set', 'lo', 'up');
for (const address of [...CANARY_ADDRESSES, PUBLIC_V4, PUBLIC_V6]) {
  run('ip', net.isIPv6(address) ? '-6' : '-4', 'addr', 'add', `${address}/${net.isIPv6(address) ? 128 : 32}`, 'dev', 'lo');
}
const resolvConf = path.join(mkdtempSync(path.join(os.tmpdir(), 'gleaner-ssrf-')), 'resolv.conf');
writeFileSync(resolvConf, 'nameserver 127.0.0.53\noptions timeout:1 attempts:1\n');
run('mount', '--bind', resolvConf, '/etc/resolv.conf');

// --- canaries ----------------------------------------------------------------------------
interface CanaryHit {
  protocol: 'tcp' | 'udp';
  address: string;
  port: number;
  from: string;
  at: number;
}
const canaryHits: CanaryHit[] = [];
const closers: Array<() => void> = [];
async function canary(address: string, port: number) {
  const server = net.createServer((socket) => {
    canaryHits.push({ protocol: 'tcp', address, port, from: `${socket.remoteAddress}:${socket.remotePort}`, at: Date.now() });
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, address, resolve));
  closers.push(() => server.close());
}
/** A UDP canary: any datagram (STUN, QUIC) to a private address is a hit. */
async function udpCanary(address: string, port: number) {
  const socket = dgram.createSocket(net.isIPv6(address) ? 'udp6' : 'udp4');
  socket.on('message', (_message, remote) => canaryHits.push({ protocol: 'udp', address, port, from: `${remote.address}:${remote.port}`, at: Date.now() }));
  await new Promise<void>((resolve, reject) => socket.once('error', reject).bind(port, address, resolve));
  closers.push(() => socket.close());
}
for (const address of CANARY_ADDRESSES) for (const port of CANARY_PORTS) await canary(address, port);
await canary('127.0.0.1', 80);
await canary('::1', 80);
for (const address of CANARY_ADDRESSES) for (const port of UDP_CANARY_PORTS) await udpCanary(address, port);

// --- fake DNS ----------------------------------------------------------------------------
type ZoneEntry = { A?: readonly string[]; AAAA?: readonly string[] } | 'rebind';
/** What `google.attacker.test` (UPSTREAM_GOOGLE_URL) answers: set by the Google attacks. */
let googleAnswer: ZoneEntry = { A: ['10.0.0.1'] };
/** `late.attacker.test` answers public until its page has been served, then 10.0.0.1. */
let lateRebound = false;
/**
 * Names and their answers; `rebind` flips between public and private on every query (each name
 * keeps its own count); a function is asked on every query.
 */
const ZONE: Record<string, ZoneEntry | (() => ZoneEntry)> = {
  'public.attacker.test': { A: [PUBLIC_V4] },
  'public6.attacker.test': { AAAA: [PUBLIC_V6] },
  'ten.attacker.test': { A: ['10.0.0.1'] },
  'metadata.attacker.test': { A: ['169.254.169.254'] },
  'loopback.attacker.test': { A: ['127.0.0.1'] },
  'mapped.attacker.test': { AAAA: ['::ffff:10.0.0.1'] },
  'nat64.attacker.test': { AAAA: ['64:ff9b::a00:1'] },
  'ula.attacker.test': { AAAA: ['fd00::1'] },
  'mixed.attacker.test': { A: [PUBLIC_V4, '10.0.0.1'] },
  'mixed6.attacker.test': { A: [PUBLIC_V4], AAAA: ['::ffff:192.168.0.1'] },
  'rebind.attacker.test': 'rebind',
  'metadata.google.internal': { A: ['169.254.169.254'] },
  'google.attacker.test': () => googleAnswer,
  'late.attacker.test': () => ({ A: [lateRebound ? '10.0.0.1' : PUBLIC_V4] }),
};
const dnsQueries: string[] = [];
/** A queries per rebinding name so far; the answer is public on even counts, private on odd. */
const flips = new Map<string, number>();
const dns = dgram.createSocket('udp4');
dns.on('message', (message, remote) => {
  let query: dnsPacket.Packet;
  try {
    query = dnsPacket.decode(message);
  } catch {
    return;
  }
  const question = query.questions?.[0];
  if (!question) return;
  const name = question.name.toLowerCase().replace(/\.$/, '');
  dnsQueries.push(`${question.type} ${name}`);
  const zoned = ZONE[name];
  const entry = typeof zoned === 'function' ? zoned() : zoned;
  const answers: dnsPacket.Answer[] = [];
  if (entry === 'rebind') {
    if (question.type === 'A') {
      const count = flips.get(name) ?? 0;
      flips.set(name, count + 1);
      answers.push({ type: 'A', name: question.name, ttl: 0, data: count % 2 === 0 ? PUBLIC_V4 : '10.0.0.1' });
    }
  } else if (entry && (question.type === 'A' || question.type === 'AAAA')) {
    for (const data of entry[question.type] ?? []) answers.push({ type: question.type, name: question.name, ttl: 0, data } as dnsPacket.Answer);
  }
  const response = dnsPacket.encode({
    id: query.id,
    type: 'response',
    flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (entry ? 0 : 3), // rcode 3: NXDOMAIN
    questions: query.questions,
    answers,
  });
  dns.send(response, remote.port, remote.address);
});
await new Promise<void>((resolve) => dns.bind(53, '127.0.0.53', resolve));
closers.push(() => dns.close());

// --- the fake public upstream ------------------------------------------------------------
const pageByName = new Map(HOSTILE_PAGES.map((page) => [page.name, page]));
const held = new Map<string, () => void>();
const released = new Set<string>();
const pdf = await buildPdf({ pages: [['A public document']] });
const png = await renderTextImage(['PUBLIC']);
const publicHits: string[] = [];
const answerPublic: http.RequestListener = (request, response) => {
  request.resume();
  // No keep-alive: every request is a new connection, so every one resolves its name again.
  response.setHeader('connection', 'close');
  const url = new URL(request.url ?? '/', 'http://public.attacker.test');
  publicHits.push(`${request.headers.host} ${url.pathname}`);
  // The browser half: hostile pages, the probe they load, and the scripts of their workers.
  const hostile = /^\/page\/([\w-]+)\.html$/.exec(url.pathname);
  const hostilePage = hostile ? pageByName.get(hostile[1]) : undefined;
  if (hostilePage) {
    if (hostilePage.name === 'late-rebind') lateRebound = true; // from now on the name is private
    return void response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(hostilePage.html);
  }
  if (url.pathname.startsWith('/probe/')) return void response.writeHead(200, { 'content-type': 'text/javascript' }).end(probeScript());
  if (url.pathname === '/public.txt') return void response.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end(PUBLIC_TEXT);
  const worker = /^\/worker\/([\w-]+)\.js$/.exec(url.pathname);
  if (worker) return void response.writeHead(200, { 'content-type': 'text/javascript' }).end(workerScript(worker[1]));
  // A page's hidden frame, held (and with it the page's load event) until the page releases it;
  // the release may arrive first.
  const hold = /^\/(hold|release)\/([\w-]+)$/.exec(url.pathname);
  if (hold?.[1] === 'hold') {
    const release = () => {
      held.delete(hold[2]);
      clearTimeout(timer);
      if (!response.writableEnded) response.writeHead(200, { 'content-type': 'text/html' }).end('<p>released</p>');
    };
    const timer = setTimeout(release, 10_000);
    if (released.delete(hold[2])) release();
    else held.set(hold[2], release);
    return;
  }
  if (hold?.[1] === 'release') {
    const release = held.get(hold[2]);
    if (release) release();
    else released.add(hold[2]);
    return void response.writeHead(200, { 'content-type': 'text/plain', 'access-control-allow-origin': '*' }).end('released');
  }
  if (url.pathname === '/favicon.ico') return void response.writeHead(404).end();
  // /redirect/<status>/<anything>.pdf?to=<url>: a redirect to `to`, whatever it names.
  const redirect = /^\/redirect\/(\d{3})\//.exec(url.pathname);
  if (redirect) {
    response.writeHead(Number(redirect[1]), { location: url.searchParams.get('to') ?? '/' });
    return response.end();
  }
  if (url.pathname.endsWith('.pdf')) return void response.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf);
  if (url.pathname.endsWith('.png')) return void response.writeHead(200, { 'content-type': 'image/png' }).end(png);
  if (url.pathname.includes('/bing/')) return void response.writeHead(200, { 'content-type': 'text/html' }).end(SEARCH_PAGE);
  // Every other path of a search engine goes to a private address.
  response.writeHead(302, { location: 'http://192.168.0.1/search' });
  response.end();
};
for (const host of [PUBLIC_V4, PUBLIC_V6]) {
  const server = http.createServer(answerPublic);
  await new Promise<void>((resolve) => server.listen(80, host, resolve));
  closers.push(() => server.close());
}

// --- self-check: the canaries and the DNS work ---------------------------------------------
await new Promise<void>((resolve) => net.connect(80, '10.0.0.1').once('close', () => resolve()).once('error', () => resolve()));
const udpProbe = dgram.createSocket('udp4');
await new Promise<void>((resolve) => udpProbe.send('probe', 3478, '10.0.0.1', () => resolve()));
udpProbe.close();
await new Promise((r) => setTimeout(r, 50));
const selfCheck = {
  canarySawProbe: canaryHits.some((hit) => hit.protocol === 'tcp'),
  udpCanarySawProbe: canaryHits.some((hit) => hit.protocol === 'udp'),
  dnsAnswers: '',
};
canaryHits.length = 0;
selfCheck.dnsAnswers = JSON.stringify(await new Promise((resolve) => import('node:dns').then((d) => d.lookup('ten.attacker.test', { all: true }, (e, a) => resolve(e ? e.code : a)))));

// --- the server ----------------------------------------------------------------------------
delete process.env.TEST_DATABASE_URL; // no PostgreSQL in here: embedded PGlite
delete process.env.TEST_REDIS_URL;
const service = await startTestService({
  OUTBOUND_ALLOW_HOSTS: '',
  OUTBOUND_TIMEOUT_MS: '4000',
  OUTBOUND_CONNECT_TIMEOUT_MS: '2000',
  // Google is rendered in the browser, so it is in the chain only when the browser half runs.
  SEARCH_ENGINES: CHROMIUM ? 'google,bing,duckduckgo,mojeek' : 'bing,duckduckgo,mojeek',
  ...(CHROMIUM ? { CHROMIUM_PATH: CHROMIUM, WEB_BROWSER_TIMEOUT_MS: '20000' } : {}),
  // Engines configured at names that resolve to private addresses, that rebind, or whose
  // public host redirects to a private address (Google's name is private, then rebinds).
  UPSTREAM_GOOGLE_URL: 'http://google.attacker.test/google',
  UPSTREAM_BING_URL: 'http://ten.attacker.test/bing',
  UPSTREAM_DUCKDUCKGO_URL: 'http://rebind.attacker.test/bing',
  UPSTREAM_MOJEEK_URL: 'http://public.attacker.test/mojeek',
  SEARCH_TIMEOUT_MS: '6000',
  // Every attack must reach the engines' transports, where the guards refuse it: with suspension
  // on, an engine refused by an earlier attack would be skipped (suspended) by the next ones, and
  // the attacks would prove nothing about the guards.
  UPSTREAM_SUSPEND_MS: '0',
});
const user = await service.user({ extraction: 100_000, scraping: 100_000 });

// --- the attacks ---------------------------------------------------------------------------
const PRIVATE_URLS = [
  'http://10.0.0.1/a.pdf',
  'http://167772161/a.pdf', // decimal
  'http://012.0.0.1/a.pdf', // octal
  'http://0xa.0.0.1/a.pdf', // hex octet
  'http://0x0a000001/a.pdf', // hex
  'http://10.1/a.pdf', // short form
  'http://10.0.0.1./a.pdf', // trailing dot
  'http://[::ffff:10.0.0.1]/a.pdf', // IPv4-mapped
  'http://[::ffff:a00:1]/a.pdf',
  'http://[0:0:0:0:0:ffff:10.0.0.1]/a.pdf',
  'http://[64:ff9b::a00:1]/a.pdf', // NAT64
  'http://[64:ff9b::10.0.0.1]/a.pdf',
  'http://[fd00::1]/a.pdf',
  'http://172.16.0.1/a.pdf',
  'http://192.168.0.1:8080/a.pdf',
  'https://10.0.0.1/a.pdf',
  'http://100.64.0.1/a.pdf',
  'http://169.254.169.254/latest/meta-data/iam.pdf',
  'http://2852039166/a.pdf', // 169.254.169.254 in decimal
  'http://[::ffff:169.254.169.254]/a.pdf',
  'http://127.0.0.1/a.pdf',
  'http://127.1/a.pdf',
  'http://0/a.pdf',
  'http://0.0.0.0/a.pdf',
  'http://[::]/a.pdf',
  'http://[::1]/a.pdf',
  'http://2130706433/a.pdf',
  'http://0177.0.0.1/a.pdf',
  'http://localhost/a.pdf',
  'http://localhost./a.pdf',
  'http://public.attacker.test@10.0.0.1/a.pdf', // userinfo trick
  'http://10.0.0.1\\@public.attacker.test/a.pdf', // backslash: the WHATWG parser's host is 10.0.0.1
  'http://10.0.0.1/a.pdf#@public.attacker.test',
  'http://ten.attacker.test/a.pdf',
  'http://ten.attacker.test./a.pdf',
  'http://metadata.attacker.test/a.pdf',
  'http://metadata.google.internal/computeMetadata/v1/a.pdf',
  'http://loopback.attacker.test/a.pdf',
  'http://mapped.attacker.test/a.pdf',
  'http://nat64.attacker.test/a.pdf',
  'http://ula.attacker.test/a.pdf',
  'http://mixed.attacker.test/a.pdf',
  'http://mixed6.attacker.test/a.pdf',
];

/** What the answer must be. */
type Expect =
  /** 200, served by the public upstream. */
  | 'served'
  /** Refused: 400/422/502, and nothing charged. */
  | 'refused'
  /** A rebinding name: refused, or served by the public upstream when caught on its public answer. */
  | 'either';
interface Attack {
  name: string;
  route: string;
  body: Record<string, unknown>;
  /** `fetch`: the server's own requests; `browser`: Chromium's, from /v1/web pages and Google. */
  part?: 'fetch' | 'browser';
  /** A control: must succeed (proves the namespace, DNS and public upstream work). */
  control?: boolean;
  /** Default: `served` for controls, `refused` otherwise. */
  expect?: Expect;
  /** Browser attacks: whether the attempts reach the browser's guard (which then refuses some). */
  reachesGuard?: boolean;
  /** Google searched in the browser: the guard must refuse its page. */
  google?: boolean;
  /** Run just before the request (DNS answers that change per attack). */
  before?: () => void;
}
const attacks: Attack[] = [
  { name: 'control: a public name', route: '/v1/pdf', body: { url: 'http://public.attacker.test/doc.pdf' }, control: true },
  { name: 'control: a public IPv6 name', route: '/v1/pdf', body: { url: 'http://public6.attacker.test/doc.pdf' }, control: true },
  { name: 'control: a redirect between public names', route: '/v1/pdf', body: { url: `http://public.attacker.test/redirect/302/x.pdf?to=${encodeURIComponent('http://public.attacker.test/doc.pdf')}` }, control: true },
];
for (const url of PRIVATE_URLS) attacks.push({ name: `direct ${url}`, route: '/v1/pdf', body: { url } });
for (const url of PRIVATE_URLS.slice(0, 12)) attacks.push({ name: `image ${url}`, route: '/v1/image', body: { url: url.replace(/\.pdf(#.*)?$/, '.png$1') } });
for (const status of [301, 302, 303, 307, 308]) {
  for (const target of ['http://10.0.0.1/a.pdf', 'http://[::ffff:a00:1]/a.pdf', 'http://metadata.attacker.test/a.pdf', 'http://169.254.169.254/x', '//192.168.0.1/a.pdf', 'http://2130706433/', 'http://rebind.attacker.test/doc.pdf']) {
    attacks.push({ name: `redirect ${status} → ${target}`, route: '/v1/pdf', body: { url: `http://public.attacker.test/redirect/${status}/x.pdf?to=${encodeURIComponent(target)}` }, expect: target.includes('rebind') ? 'either' : 'refused' });
  }
}
attacks.push({ name: 'image redirect → 169.254.169.254', route: '/v1/image', body: { url: `http://public.attacker.test/redirect/302/x.png?to=${encodeURIComponent('http://169.254.169.254/latest.png')}` } });
// A redirect chain: public → public → private.
const hop2 = `http://public.attacker.test/redirect/302/y.pdf?to=${encodeURIComponent('http://172.16.0.1/a.pdf')}`;
attacks.push({ name: 'redirect chain public → public → 172.16.0.1', route: '/v1/pdf', body: { url: `http://public.attacker.test/redirect/302/x.pdf?to=${encodeURIComponent(hop2)}` } });
// Rebinding: every query flips the answer, so across attempts both orders (check public then
// connect private, and the reverse) are tried.
for (let i = 0; i < 8; i++) attacks.push({ name: `rebinding attempt ${i + 1}`, route: '/v1/pdf', body: { url: 'http://rebind.attacker.test/doc.pdf' }, expect: 'either' });
for (let i = 0; i < 2; i++) attacks.push({ name: `rebinding image attempt ${i + 1}`, route: '/v1/image', body: { url: 'http://rebind.attacker.test/a.png' }, expect: 'either' });
// Search engines configured at private names, a rebinding name and a redirecting public host
// (and Google, in the browser, at a private name when the browser half runs).
for (let i = 0; i < 3; i++) attacks.push({ name: `engine-search through hostile upstream URLs ${i + 1}`, route: '/v1/engine-search', body: { query: `q${i}` } });

// --- the browser half ----------------------------------------------------------------------
// Appended after the rest so the rebinding name's count, and so the answers above, are unchanged.
if (CHROMIUM) {
  const browser = (attack: Omit<Attack, 'route' | 'body' | 'part'> & { url: string }) => {
    const { url, ...rest } = attack;
    attacks.push({ ...rest, name: `browser: ${attack.name}`, route: '/v1/web', body: { url, bypass_captcha: true }, part: 'browser' });
  };
  const pageUrl = (name: string, host = 'public.attacker.test') => `http://${host}/page/${name}.html`;
  // Google (UPSTREAM_GOOGLE_URL) rendered in the browser: at a name answering 10.0.0.1, then at
  // one that flips between public (whose page redirects to 192.168.0.1) and private.
  for (const [label, answer] of [['a private name', { A: ['10.0.0.1'] }], ['a rebinding name', 'rebind']] as const) {
    for (let i = 0; i < 2; i++) {
      attacks.push({
        name: `engine-search: Google in the browser at ${label} ${i + 1}`,
        route: '/v1/engine-search',
        body: { query: `google ${label} ${i}` },
        part: 'browser',
        google: true,
        reachesGuard: true,
        before: () => (googleAnswer = answer),
      });
    }
  }
  browser({ name: 'control: a public page', url: pageUrl('control'), control: true, reachesGuard: false });
  browser({ name: 'control: a public redirect to a public page', url: `http://public.attacker.test/redirect/302/main?to=${encodeURIComponent(pageUrl('control'))}`, control: true, reachesGuard: false });
  browser({ name: 'control: a public IPv6 page', url: pageUrl('control', 'public6.attacker.test'), control: true, reachesGuard: false });
  for (const page of HOSTILE_PAGES) {
    if (page.name === 'control') continue;
    const late = page.name === 'late-rebind';
    browser({
      name: page.description,
      url: pageUrl(page.name, late ? 'late.attacker.test' : undefined),
      expect: page.expect === 'page' ? 'served' : 'refused',
      reachesGuard: page.reachesGuard,
      before: late ? () => (lateRebound = false) : undefined,
    });
  }
  for (const redirect of mainDocumentRedirects()) browser({ name: `main document redirect ${redirect.name}`, url: redirect.url, reachesGuard: true });
  // Refused by the url rule before the browser is asked.
  for (const url of ['http://ten.attacker.test/', 'http://[::ffff:10.0.0.1]/', 'http://167772161/', 'http://localhost/', 'http://nat64.attacker.test/']) {
    browser({ name: `main document at ${url}`, url });
  }
  for (let i = 0; i < 2; i++) browser({ name: `main document at the rebinding name ${i + 1}`, url: pageUrl('control', 'rebind.attacker.test'), expect: 'either' });
}

interface Result {
  name: string;
  route: string;
  part: 'fetch' | 'browser';
  control: boolean;
  expect: Expect;
  status: number;
  message?: string;
  charged: number;
  canaryHits: CanaryHit[];
  /** Targets the browser's guard refused during the request. */
  guardRefusals?: number;
  reachesGuard?: boolean;
  google?: boolean;
  /** A 422's field errors. */
  errors?: Record<string, string[]>;
  /** A page served through the browser: its final URL and the markers its scripts left in it. */
  page?: { url: string; markers: string[] };
  ms: number;
}
/** What the pages' scripts write into them (reliability-ssrf-pages.ts). */
const MARKERS = /PROBE-RAN|PUBLIC-FETCH-OK|ATTEMPTS-STARTED|ATTEMPTS-SETTLED|SOCKETS-DONE|dedicated WORKER-DONE|shared WORKER-DONE/g;
const pool = CHROMIUM ? await service.services.capabilities.browser() : null;
if (CHROMIUM && pool === null) throw new Error(`Chromium at ${CHROMIUM} did not start inside the namespace`);
const results: Result[] = [];
for (const attack of attacks) {
  attack.before?.();
  const product = attack.route === '/v1/pdf' || attack.route === '/v1/image' ? 'extraction' : 'scraping';
  const before = canaryHits.length;
  const refusalsBefore = pool?.stats().refusals ?? 0;
  const balanceBefore = (await service.services.ledger.balance(user.id, product)) ?? 0;
  let status = 0;
  let message: string | undefined;
  let errors: Result['errors'];
  let page: Result['page'];
  const started = performance.now();
  try {
    const r = await service.call('POST', attack.route, { token: user.token, body: attack.body });
    status = r.status;
    message = r.body?.message;
    errors = r.body?.errors;
    const served = r.body?.response;
    if (attack.route === '/v1/web' && typeof served?.content === 'string') {
      page = { url: served.url, markers: [...new Set<string>(served.content.match(MARKERS) ?? [])] };
    }
  } catch (error) {
    message = String(error);
  }
  // A connection attempt may land just after the answer: let it arrive before moving on (the
  // browser's requests may outlive the page a little longer).
  await new Promise((r) => setTimeout(r, attack.part === 'browser' ? 150 : 30));
  const balanceAfter = (await service.services.ledger.balance(user.id, product)) ?? 0;
  results.push({
    name: attack.name,
    route: attack.route,
    part: attack.part ?? 'fetch',
    control: attack.control ?? false,
    expect: attack.expect ?? (attack.control ? 'served' : 'refused'),
    status,
    message,
    charged: balanceBefore - balanceAfter,
    canaryHits: canaryHits.slice(before),
    ...(pool ? { guardRefusals: (pool.stats().refusals ?? 0) - refusalsBefore } : {}),
    ...(attack.reachesGuard !== undefined ? { reachesGuard: attack.reachesGuard } : {}),
    ...(attack.google ? { google: true } : {}),
    ...(errors ? { errors } : {}),
    ...(page ? { page } : {}),
    ms: Math.round(performance.now() - started),
  });
}
await new Promise((r) => setTimeout(r, 500));
const audit = (await service.services.ledger.recompute()).filter((row) => row.stored !== row.ledger);

await service.close();
for (const close of closers) close();
process.stdout.write(
  `SSRF-REPORT ${JSON.stringify({ selfCheck, results, canaryHits, audit, dnsQueries: dnsQueries.length, rebindQueries: flips.get('rebind.attacker.test') ?? 0, publicHits: publicHits.length, browser: CHROMIUM !== undefined })}\n`,
);
process.exit(0);
