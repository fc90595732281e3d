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

const PUBLIC_V4 = '93.184.216.34';
const PUBLIC_V6 = '2606:4700::1111';
const CANARY_ADDRESSES = ['10.0.0.1', '172.16.0.1', '192.168.0.1', '169.254.169.254', '100.64.0.1', 'fd00::1', '64:ff9b::a00:1'];
const CANARY_PORTS = [80, 443, 8080];

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
  address: string;
  port: number;
  from: string;
  at: number;
}
const canaryHits: CanaryHit[] = [];
const closers: Array<() => void> = [];
async function canary(address: string, port: number) {
  const server = net.createServer((socket) => {
    canaryHits.push({ address, port, from: `${socket.remoteAddress}:${socket.remotePort}`, at: Date.now() });
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(port, address, resolve));
  closers.push(() => server.close());
}
for (const address of CANARY_ADDRESSES) for (const port of CANARY_PORTS) await canary(address, port);
await canary('127.0.0.1', 80);
await canary('::1', 80);

// --- fake DNS ----------------------------------------------------------------------------
/** Names and their answers; `rebind` flips between public and private on every query. */
const ZONE: Record<string, { A?: string[]; AAAA?: string[] } | 'rebind'> = {
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
};
const dnsQueries: string[] = [];
let rebindCount = 0;
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
  const entry = ZONE[name];
  const answers: dnsPacket.Answer[] = [];
  if (entry === 'rebind') {
    if (question.type === 'A') answers.push({ type: 'A', name: question.name, ttl: 0, data: rebindCount++ % 2 === 0 ? PUBLIC_V4 : '10.0.0.1' });
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
const pdf = await buildPdf({ pages: [['A public document']] });
const png = await renderTextImage(['PUBLIC']);
const publicHits: string[] = [];
const answerPublic: http.RequestListener = (request, response) => {
  request.resume();
  // No keep-alive: every request is a new connection, so every one resolves its name again.
  response.setHeader('connection', 'close');
  const url = new URL(request.url ?? '/', 'http://public.attacker.test');
  publicHits.push(`${request.headers.host} ${url.pathname}`);
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
await new Promise((r) => setTimeout(r, 50));
const selfCheck = { canarySawProbe: canaryHits.length === 1, dnsAnswers: '' };
canaryHits.length = 0;
selfCheck.dnsAnswers = JSON.stringify(await new Promise((resolve) => import('node:dns').then((d) => d.lookup('ten.attacker.test', { all: true }, (e, a) => resolve(e ? e.code : a)))));

// --- the server ----------------------------------------------------------------------------
delete process.env.TEST_DATABASE_URL; // no PostgreSQL in here: embedded PGlite
delete process.env.TEST_REDIS_URL;
const service = await startTestService({
  OUTBOUND_ALLOW_HOSTS: '',
  OUTBOUND_TIMEOUT_MS: '4000',
  OUTBOUND_CONNECT_TIMEOUT_MS: '2000',
  SEARCH_ENGINES: 'bing,duckduckgo,mojeek',
  // Engines configured at names that resolve to private addresses, that rebind, or whose
  // public host redirects to a private address.
  UPSTREAM_BING_URL: 'http://ten.attacker.test/bing',
  UPSTREAM_DUCKDUCKGO_URL: 'http://rebind.attacker.test/bing',
  UPSTREAM_MOJEEK_URL: 'http://public.attacker.test/mojeek',
  SEARCH_TIMEOUT_MS: '6000',
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

interface Attack {
  name: string;
  route: string;
  body: Record<string, unknown>;
  /** A control: must succeed (proves the namespace, DNS and public upstream work). */
  control?: boolean;
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
    attacks.push({ name: `redirect ${status} → ${target}`, route: '/v1/pdf', body: { url: `http://public.attacker.test/redirect/${status}/x.pdf?to=${encodeURIComponent(target)}` } });
  }
}
attacks.push({ name: 'image redirect → 169.254.169.254', route: '/v1/image', body: { url: `http://public.attacker.test/redirect/302/x.png?to=${encodeURIComponent('http://169.254.169.254/latest.png')}` } });
// A redirect chain: public → public → private.
const hop2 = `http://public.attacker.test/redirect/302/y.pdf?to=${encodeURIComponent('http://172.16.0.1/a.pdf')}`;
attacks.push({ name: 'redirect chain public → public → 172.16.0.1', route: '/v1/pdf', body: { url: `http://public.attacker.test/redirect/302/x.pdf?to=${encodeURIComponent(hop2)}` } });
// Rebinding: every query flips the answer, so across attempts both orders (check public then
// connect private, and the reverse) are tried.
for (let i = 0; i < 8; i++) attacks.push({ name: `rebinding attempt ${i + 1}`, route: '/v1/pdf', body: { url: 'http://rebind.attacker.test/doc.pdf' } });
for (let i = 0; i < 2; i++) attacks.push({ name: `rebinding image attempt ${i + 1}`, route: '/v1/image', body: { url: 'http://rebind.attacker.test/a.png' } });
// Search engines configured at private names, a rebinding name and a redirecting public host.
for (let i = 0; i < 3; i++) attacks.push({ name: `engine-search through hostile upstream URLs ${i + 1}`, route: '/v1/engine-search', body: { query: `q${i}` } });

interface Result {
  name: string;
  route: string;
  control: boolean;
  status: number;
  message?: string;
  charged: number;
  canaryHits: CanaryHit[];
}
const results: Result[] = [];
for (const attack of attacks) {
  const before = canaryHits.length;
  const balanceBefore = (await service.services.ledger.balance(user.id, attack.route === '/v1/engine-search' ? 'scraping' : 'extraction')) ?? 0;
  let status = 0;
  let message: string | undefined;
  try {
    const r = await service.call('POST', attack.route, { token: user.token, body: attack.body });
    status = r.status;
    message = r.body?.message;
  } catch (error) {
    message = String(error);
  }
  // A connection attempt may land just after the answer: let it arrive before moving on.
  await new Promise((r) => setTimeout(r, 30));
  const balanceAfter = (await service.services.ledger.balance(user.id, attack.route === '/v1/engine-search' ? 'scraping' : 'extraction')) ?? 0;
  results.push({ name: attack.name, route: attack.route, control: attack.control ?? false, status, message, charged: balanceBefore - balanceAfter, canaryHits: canaryHits.slice(before) });
}
await new Promise((r) => setTimeout(r, 500));
const audit = (await service.services.ledger.recompute()).filter((row) => row.stored !== row.ledger);

await service.close();
for (const close of closers) close();
process.stdout.write(
  `SSRF-REPORT ${JSON.stringify({ selfCheck, results, canaryHits, audit, dnsQueries: dnsQueries.length, rebindQueries: rebindCount, publicHits: publicHits.length })}\n`,
);
process.exit(0);
