/**
 * Hostile pages for the browser half of the SSRF sandbox (reliability-ssrf-sandbox.ts): served by
 * the fake public upstream at `/page/<name>.html`, each one reaching for the private addresses of
 * the namespace in one way a page can (subresources, fetch/XHR, WebSockets, beacons, workers,
 * WebRTC, speculation rules, popups, forms, navigations...).
 *
 * Every page also loads `/probe/<name>.js` from the public upstream, which writes `PROBE-RAN` into
 * the page and fetches `/public.txt` (`PUBLIC-FETCH-OK`): a page that comes back with both ran its
 * scripts in the browser inside the namespace, and the browser reached the public upstream
 * through the guard, so the refusals around them are not just a dead network.
 *
 * A page that is to be served holds its own `load` event until its attempts have settled: a
 * hidden iframe at `/hold/<token>` is answered only when the page fetches `/release/<token>` (or
 * after a few seconds), so the browser cannot take the page, and close its context, while
 * attempts are still queued; `ATTEMPTS-SETTLED` in the page says they all ran to the end.
 */

/** A private or special host in every spelling a URL can carry. */
export const PRIVATE_HOSTS = [
  '10.0.0.1',
  '172.16.0.1',
  '192.168.0.1:8080',
  '169.254.169.254',
  '100.64.0.1',
  '[fd00::1]',
  '[64:ff9b::a00:1]', // NAT64
  '[64:ff9b::10.0.0.1]',
  '[::ffff:10.0.0.1]', // IPv4-mapped
  '[::ffff:a00:1]',
  '167772161', // 10.0.0.1 in decimal
  '2852039166', // 169.254.169.254 in decimal
  '0x0a000001', // hex
  '012.0.0.1', // octal
  '10.1', // short form
  '127.0.0.1',
  '[::1]',
  '0',
  'localhost',
  'ten.attacker.test', // names the fake DNS answers with private addresses
  'metadata.attacker.test',
  'metadata.google.internal',
  'loopback.attacker.test',
  'mapped.attacker.test',
  'nat64.attacker.test',
  'ula.attacker.test',
  'mixed.attacker.test',
  'mixed6.attacker.test',
  'rebind.attacker.test', // public and private in turn
];

/** Hosts also tried over https (CONNECT to port 443). */
const TLS_HOSTS = ['10.0.0.1', '169.254.169.254', '[fd00::1]', '[::ffff:10.0.0.1]', '127.0.0.1', 'ten.attacker.test'];

/** Every private URL a page tries: http at every host, https, port 8080, and public redirects to private. */
export function privateUrls(path: string): string[] {
  return [
    ...PRIVATE_HOSTS.map((host) => `http://${host}/${path}`),
    ...TLS_HOSTS.map((host) => `https://${host}/${path}`),
    `http://10.0.0.1:8080/${path}`,
    `http://public.attacker.test/redirect/302/${path}?to=${encodeURIComponent(`http://10.0.0.1/${path}`)}`,
    `http://public.attacker.test/redirect/307/${path}?to=${encodeURIComponent(`http://ten.attacker.test/${path}`)}`,
  ];
}

/**
 * ws:// and wss:// at each private host, once per host as the URL parser writes it (decimal, hex
 * and mapped spellings are the same host before any request is made), in three groups of about
 * ten, one page each: Chromium delays each WebSocket after a failed one to the same endpoint,
 * which through the guard is every WebSocket of the page, more each time.
 */
export function socketUrls(group: 'addresses' | 'names' | 'tls'): string[] {
  const isName = (host: string) => /[g-z]/i.test(host.replace(/^0x/i, ''));
  const urls =
    group === 'tls'
      ? TLS_HOSTS.map((host) => `wss://${host}/ws`)
      : PRIVATE_HOSTS.filter((host) => isName(host) === (group === 'names')).map((host) => `ws://${host}/ws`);
  const hosts = new Set<string>();
  return urls.filter((url) => {
    const { host } = new URL(url);
    if (hosts.has(host)) return false;
    hosts.add(host);
    return true;
  });
}

/** The few WebSockets a worker opens, one of each kind (see `socketUrls` for why so few). */
const WORKER_SOCKETS = ['ws://10.0.0.1/ws', 'ws://ten.attacker.test/ws', 'ws://[::ffff:a00:1]/ws', 'wss://[fd00::1]/ws'];

/** What the page is expected to come to through `POST /v1/web` with `bypass_captcha`. */
export type PageExpectation =
  /** 200 with the public page; the attempts are refused one by one. */
  | 'page'
  /** The main frame is sent to a private address: refused (422). */
  | 'refused';

export interface HostilePage {
  name: string;
  /** What the page tries. */
  description: string;
  expect: PageExpectation;
  /**
   * The attempts reach the guard (it refuses at least one target). False where Chromium itself
   * stops them before any request (images, media and fonts are refused by interception).
   */
  reachesGuard: boolean;
  html: string;
}

const json = (value: unknown) => JSON.stringify(value).replaceAll('<', '\\u003c');

/**
 * A page: `head` and `body` markup, then `script`, run inline with `URLS` (the private URLs),
 * `bounded(promise, ms?)`, `attempt(promise, ms?)` (waited for, 1.5 s at most unless `ms` says)
 * and `started()` (call it once every attempt is under way) in scope.
 */
function page(name: string, parts: { head?: string; body?: string; script?: string; hold?: boolean }): string {
  const hold = parts.hold !== false;
  return `<!doctype html><html><head><meta charset="utf-8"><title>ssrf ${name}</title>${parts.head ?? ''}</head><body>
<h1 id="attack">${name}</h1>
${parts.body ?? ''}
<script>
const token = '${name}-' + Math.random().toString(36).slice(2);
${hold ? `document.body.insertAdjacentHTML('afterbegin', '<iframe hidden src="http://public.attacker.test/hold/' + token + '"></iframe>');` : ''}
const URLS = ${json(privateUrls(`ssrf-${name}`))};
const attempts = [];
const bounded = (work, ms = 1500) => Promise.race([Promise.resolve(work).catch(() => undefined), new Promise((r) => setTimeout(r, ms))]);
const attempt = (work, ms) => { try { attempts.push(bounded(work, ms)); } catch (e) {} };
const started = () => {
  document.body.insertAdjacentHTML('beforeend', '<p id="started">ATTEMPTS-STARTED ' + attempts.length + '</p>');
  Promise.all(attempts).then(() => {
    document.body.insertAdjacentHTML('beforeend', '<p id="settled">ATTEMPTS-SETTLED</p>');
    ${hold ? `return fetch('http://public.attacker.test/release/' + token, { cache: 'no-store' });` : ''}
  }).catch(() => {});
};
${parts.script ?? 'started();'}
</script>
<script src="http://public.attacker.test/probe/${name}.js"></script>
</body></html>`;
}

/** The probe every page loads from the public upstream (see the file comment). */
export function probeScript(): string {
  return `document.body.insertAdjacentHTML('beforeend', '<p id="probe">PROBE-RAN</p>');
fetch('http://public.attacker.test/public.txt', { cache: 'no-store' }).then((r) => r.text()).then((t) => document.body.insertAdjacentHTML('beforeend', '<p id="public-fetch">' + t + '</p>'));`;
}

export const PUBLIC_TEXT = 'PUBLIC-FETCH-OK';

/**
 * A dedicated or shared worker: fetch and XHR at every private URL, and a few WebSockets; it says
 * `WORKER-DONE` to the page once they have all settled.
 */
export function workerScript(name: string): string {
  return `const URLS = ${json(privateUrls(`ssrf-${name}`))};
const SOCKETS = ${json(WORKER_SOCKETS)};
const bounded = (work, ms = 1500) => Promise.race([Promise.resolve(work).catch(() => undefined), new Promise((r) => setTimeout(r, ms))]);
const ports = [];
let done = false;
self.onconnect = (e) => { ports.push(e.ports[0]); if (done) e.ports[0].postMessage('WORKER-DONE'); };
Promise.all([
  ...URLS.map((url) => bounded(fetch(url, { mode: 'no-cors' }))),
  ...(typeof XMLHttpRequest === 'function' ? URLS.map((url) => bounded(new Promise((r) => { const x = new XMLHttpRequest(); x.onloadend = r; x.open('GET', url); x.send(); }))) : []),
  (async () => { for (const url of SOCKETS) { try { const ws = new WebSocket(url); await bounded(new Promise((r) => { ws.onerror = ws.onclose = r; })); } catch (e) {} } })(),
]).then(() => {
  done = true;
  if ('postMessage' in self) self.postMessage('WORKER-DONE');
  for (const port of ports) port.postMessage('WORKER-DONE');
});`;
}

export const HOSTILE_PAGES: HostilePage[] = [
  {
    name: 'control',
    description: 'control: a public page, no attack',
    expect: 'page',
    reachesGuard: false,
    html: page('control', {}),
  },
  {
    name: 'img',
    description: '<img>, srcset, <input type=image>, CSS backgrounds',
    expect: 'page',
    reachesGuard: false,
    html: page('img', {
      script: `for (const url of URLS) {
  const img = new Image(); attempt(new Promise((r) => { img.onload = img.onerror = r; })); img.src = url;
  document.body.insertAdjacentHTML('beforeend', '<img srcset="' + url + ' 2x"><input type="image" src="' + url + '"><div style="background-image:url(' + "'" + url + "'" + ')">x</div>');
}
started();`,
    }),
  },
  {
    name: 'script',
    description: '<script src> (classic, async, module) and import()',
    expect: 'page',
    reachesGuard: true,
    html: page('script', {
      head: '<script src="http://10.0.0.1/ssrf-script-head.js"></script><script src="http://ten.attacker.test/ssrf-script-head.js"></script>',
      script: `for (const url of URLS) {
  const s = document.createElement('script'); attempt(new Promise((r) => { s.onload = s.onerror = r; })); s.src = url; document.head.append(s);
  const m = document.createElement('script'); m.type = 'module'; attempt(new Promise((r) => { m.onload = m.onerror = r; })); m.src = url + '.mjs'; document.head.append(m);
}
attempt(import('http://169.254.169.254/latest/meta-data/ssrf.mjs'));
started();`,
    }),
  },
  {
    name: 'link',
    description: '<link> stylesheet, preload, prefetch, modulepreload, preconnect, dns-prefetch, icon; CSS @import',
    expect: 'page',
    reachesGuard: true,
    html: page('link', {
      head: '<style>@import url("http://10.0.0.1/ssrf-import.css"); @import url("http://ten.attacker.test/ssrf-import.css");</style>',
      script: `for (const url of URLS) {
  for (const [rel, as] of [['stylesheet'], ['preload', 'script'], ['preload', 'fetch'], ['prefetch'], ['modulepreload'], ['preconnect'], ['dns-prefetch'], ['icon']]) {
    const l = document.createElement('link'); l.rel = rel; if (as) { l.as = as; if (as === 'fetch') l.crossOrigin = 'anonymous'; }
    attempt(new Promise((r) => { l.onload = l.onerror = r; })); l.href = url; document.head.append(l);
  }
}
started();`,
    }),
  },
  {
    name: 'iframe',
    description: '<iframe>, <object>, <embed>, srcdoc frames fetching on their own',
    expect: 'page',
    reachesGuard: true,
    html: page('iframe', {
      script: `for (const url of URLS) {
  const f = document.createElement('iframe'); attempt(new Promise((r) => { f.onload = f.onerror = r; })); f.src = url; document.body.append(f);
  document.body.insertAdjacentHTML('beforeend', '<object data="' + url + '.html"></object><embed src="' + url + '.svg" type="image/svg+xml">');
}
const inner = document.createElement('iframe');
inner.srcdoc = '<script>fetch("http://10.0.0.1/ssrf-srcdoc", { mode: "no-cors" }).catch(() => {}); location = "http://169.254.169.254/ssrf-srcdoc";<\\/script>';
document.body.append(inner);
started();`,
    }),
  },
  {
    name: 'fetch',
    description: 'fetch() GET/POST/PUT, cors and no-cors, keepalive',
    expect: 'page',
    reachesGuard: true,
    html: page('fetch', {
      script: `for (const url of URLS) {
  attempt(fetch(url, { mode: 'no-cors' }));
  attempt(fetch(url, { method: 'POST', body: 'x=1', mode: 'no-cors' }));
  attempt(fetch(url, { method: 'PUT', body: '{}', headers: { 'content-type': 'application/json' } }));
  attempt(fetch(url, { method: 'POST', body: 'k', mode: 'no-cors', keepalive: true }));
}
started();`,
    }),
  },
  {
    name: 'xhr',
    description: 'XMLHttpRequest (async and synchronous), EventSource',
    expect: 'page',
    reachesGuard: true,
    html: page('xhr', {
      script: `for (const url of URLS) {
  const x = new XMLHttpRequest(); attempt(new Promise((r) => { x.onloadend = r; })); x.open('POST', url); x.send('x=1');
  try { const s = new XMLHttpRequest(); s.open('GET', url + '-sync', false); s.send(); } catch (e) {}
  try { const es = new EventSource(url + '-events'); attempt(new Promise((r) => { es.onerror = () => { es.close(); r(); }; })); } catch (e) {}
}
started();`,
    }),
  },
  ...(['addresses', 'names', 'tls'] as const).map(
    (group): HostilePage => ({
      name: `websocket-${group}`,
      description: `WebSocket ${group === 'tls' ? 'wss://' : 'ws://'} at private ${group === 'names' ? 'names' : 'addresses'}`,
      expect: 'page',
      reachesGuard: true,
      html: page(`websocket-${group}`, {
        // One at a time: Chromium queues the WebSockets of a page behind one another anyway.
        script: `const SOCKETS = ${json(socketUrls(group))};
attempt((async () => {
  for (const url of SOCKETS) {
    try { const ws = new WebSocket(url); await bounded(new Promise((r) => { ws.onerror = ws.onclose = r; })); } catch (e) {}
  }
  document.body.insertAdjacentHTML('beforeend', '<p>SOCKETS-DONE</p>');
})(), 8000);
started();`,
      }),
    }),
  ),
  {
    name: 'beacon',
    description: 'navigator.sendBeacon, <a ping>',
    expect: 'page',
    reachesGuard: true,
    html: page('beacon', {
      script: `for (const url of URLS) {
  try { navigator.sendBeacon(url, 'x=1'); navigator.sendBeacon(url, new Blob(['{}'], { type: 'application/json' })); } catch (e) {}
}
const a = document.createElement('a'); a.href = 'http://public.attacker.test/public.txt'; a.target = '_blank'; a.ping = URLS.slice(0, 8).join(' '); document.body.append(a); a.click();
started();`,
    }),
  },
  {
    name: 'workers',
    description: 'dedicated and shared workers fetching and opening WebSockets; a worker from a private URL',
    expect: 'page',
    reachesGuard: true,
    html: page('workers', {
      script: `const said = (what) => document.body.insertAdjacentHTML('beforeend', '<p>' + what + '</p>');
const w = new Worker('/worker/workers.js'); attempt(new Promise((r) => { w.onmessage = (e) => { said('dedicated ' + e.data); r(); }; w.onerror = r; }), 8000);
try { const sw = new SharedWorker('/worker/workers-shared.js'); attempt(new Promise((r) => { sw.port.onmessage = (e) => { said('shared ' + e.data); r(); }; sw.onerror = r; }), 8000); } catch (e) {}
try { new Worker('http://10.0.0.1/ssrf-worker.js').onerror = () => {}; } catch (e) {}
const blob = URL.createObjectURL(new Blob(['fetch("http://169.254.169.254/ssrf-blob-worker", { mode: "no-cors" }).catch(() => {}); postMessage(1);'], { type: 'text/javascript' }));
const bw = new Worker(blob); attempt(new Promise((r) => { bw.onmessage = bw.onerror = r; }));
started();`,
    }),
  },
  {
    name: 'service-worker',
    description: 'service worker registration (same origin and a private URL)',
    expect: 'page',
    // On http:// the service worker API does not exist (not a secure context), and the pool blocks
    // service workers anyway: nothing reaches the network. The page records which it was.
    reachesGuard: false,
    html: page('service-worker', {
      script: `const container = navigator.serviceWorker;
document.body.insertAdjacentHTML('beforeend', '<p id="sw-api">' + (container ? 'service worker API present' : 'no service worker API') + '</p>');
if (container) {
  attempt(container.register('/worker/sw.js', { scope: '/' }).then(() => document.body.insertAdjacentHTML('beforeend', '<p>SW-REGISTERED</p>')));
  attempt(container.register('http://10.0.0.1/ssrf-sw.js'));
}
started();`,
    }),
  },
  {
    name: 'webrtc',
    description: 'WebRTC ICE (STUN and TURN over UDP and TCP at private addresses), WebTransport',
    expect: 'page',
    reachesGuard: false,
    html: page('webrtc', {
      script: `try {
  const pc = new RTCPeerConnection({ iceServers: [
    { urls: ['stun:10.0.0.1:3478', 'stun:[fd00::1]:3478', 'stun:ten.attacker.test:3478', 'stun:169.254.169.254:443'] },
    { urls: ['turn:10.0.0.1:80?transport=tcp', 'turn:169.254.169.254:443?transport=tcp', 'turn:10.0.0.1:3478?transport=udp', 'turns:10.0.0.1:443?transport=tcp', 'turn:ten.attacker.test:8080?transport=tcp'], username: 'u', credential: 'p' },
  ] });
  pc.createDataChannel('x');
  attempt(pc.createOffer().then((offer) => pc.setLocalDescription(offer)).then(() => new Promise((r) => { pc.onicegatheringstatechange = () => pc.iceGatheringState === 'complete' && r(); })));
} catch (e) {}
for (const url of ['https://10.0.0.1:443/wt', 'https://[fd00::1]:443/wt', 'https://ten.attacker.test:443/wt', 'https://169.254.169.254:443/wt']) {
  try { const wt = new WebTransport(url); attempt(wt.ready); wt.closed.catch(() => {}); } catch (e) {}
}
started();`,
    }),
  },
  {
    name: 'speculation',
    description: 'speculation rules (prefetch, prerender), <link rel=prerender>, popups by window.open',
    expect: 'page',
    reachesGuard: true,
    html: page('speculation', {
      head: `<script type="speculationrules">${json({
        prefetch: [{ source: 'list', urls: ['http://10.0.0.1/ssrf-prefetch', 'http://ten.attacker.test/ssrf-prefetch'], requires: [] }],
        prerender: [{ source: 'list', urls: ['http://169.254.169.254/ssrf-prerender', 'http://[::ffff:10.0.0.1]/ssrf-prerender'] }],
      })}</script><link rel="prerender" href="http://192.168.0.1:8080/ssrf-prerender">`,
      script: `for (const url of URLS.slice(0, 10)) { try { window.open(url, '_blank'); } catch (e) {} }
started();`,
    }),
  },
  {
    name: 'media',
    description: '<video>, <audio>, <track>, @font-face',
    expect: 'page',
    reachesGuard: false,
    html: page('media', {
      script: `const css = document.createElement('style');
css.textContent = URLS.map((url, i) => '@font-face { font-family: f' + i + '; src: url("' + url + '.woff2"); } .f' + i + ' { font-family: f' + i + '; }').join('\\n');
document.head.append(css);
for (const [i, url] of URLS.entries()) {
  document.body.insertAdjacentHTML('beforeend', '<span class="f' + i + '">font</span><video src="' + url + '.mp4" preload="auto"><track src="' + url + '.vtt" default></video><audio src="' + url + '.mp3" preload="auto"></audio>');
}
started();`,
    }),
  },
  {
    name: 'form-frame',
    description: 'a form POST into an iframe, to a private address',
    expect: 'page',
    reachesGuard: true,
    html: page('form-frame', {
      body: `<iframe name="sink1"></iframe><iframe name="sink2"></iframe>
<form id="f" method="post" action="http://10.0.0.1/ssrf-form" target="sink1"><input name="a" value="b"></form>
<form id="g" method="post" action="http://[::ffff:a00:1]/ssrf-form" target="sink2" enctype="multipart/form-data"><input name="a" value="b"></form>`,
      script: `document.getElementById('f').submit();
document.getElementById('g').submit();
started();`,
    }),
  },
  {
    name: 'late-rebind',
    description: 'DNS rebinding after the page loaded: same-origin fetches once the name points at 10.0.0.1',
    expect: 'page',
    reachesGuard: true,
    html: page('late-rebind', {
      // Served as http://late.attacker.test/page/late-rebind.html; the name answers 10.0.0.1 from
      // the moment the page is served, so every same-origin request below resolves privately (the
      // probe and the hold frame come from public.attacker.test, which does not rebind).
      script: `const reads = [];
for (let i = 0; i < 6; i++) attempt(fetch('/secret-' + i + '.txt', { cache: 'no-store' }).then((r) => r.text()).then((t) => reads.push(t.slice(0, 40))));
const x = new XMLHttpRequest(); x.open('GET', '/secret-xhr.txt'); x.send();
try { new WebSocket('ws://' + location.host + '/ws').onerror = () => {}; } catch (e) {}
Promise.all(attempts).then(() => document.body.insertAdjacentHTML('beforeend', '<p id="reads">' + reads.length + '</p>'));
started();`,
    }),
  },
  // Navigations of the main frame to a private address: the request is refused.
  {
    name: 'nav-location',
    description: '`location =` a private address while the page parses',
    expect: 'refused',
    reachesGuard: true,
    html: page('nav-location', { hold: false, script: `started(); location = 'http://10.0.0.1/ssrf-nav';` }),
  },
  {
    name: 'nav-location-late',
    description: '`location.assign` a private name after load',
    expect: 'refused',
    reachesGuard: true,
    html: page('nav-location-late', {
      hold: false,
      script: `started(); addEventListener('load', () => setTimeout(() => location.assign('http://ten.attacker.test/ssrf-nav'), 50));`,
    }),
  },
  {
    name: 'nav-location-mapped',
    description: '`location.replace` an IPv4-mapped address',
    expect: 'refused',
    reachesGuard: true,
    html: page('nav-location-mapped', { hold: false, script: `started(); location.replace('http://[::ffff:10.0.0.1]/ssrf-nav');` }),
  },
  {
    name: 'nav-meta-refresh',
    description: '<meta http-equiv=refresh> to the metadata address',
    expect: 'refused',
    reachesGuard: true,
    html: page('nav-meta-refresh', { hold: false, head: '<meta http-equiv="refresh" content="0; url=http://169.254.169.254/latest/meta-data/">' }),
  },
  {
    name: 'nav-meta-refresh-nat64',
    description: '<meta http-equiv=refresh> to a NAT64 address',
    expect: 'refused',
    reachesGuard: true,
    html: page('nav-meta-refresh-nat64', { hold: false, head: '<meta http-equiv="refresh" content="0; url=http://[64:ff9b::a00:1]/ssrf-refresh">' }),
  },
  {
    name: 'nav-form-post',
    description: 'a top-level form POST to a private address (decimal form)',
    expect: 'refused',
    reachesGuard: true,
    html: page('nav-form-post', {
      hold: false,
      body: '<form id="f" method="post" action="http://167772161/ssrf-form"><input name="user" value="admin"></form>',
      script: `started(); document.getElementById('f').submit();`,
    }),
  },
];

/** Public URLs whose main document is redirected to a private address (expected: refused). */
export function mainDocumentRedirects(): Array<{ name: string; url: string }> {
  const hop = (status: number, to: string) => `http://public.attacker.test/redirect/${status}/main?to=${encodeURIComponent(to)}`;
  return [
    { name: '301 → 10.0.0.1', url: hop(301, 'http://10.0.0.1/') },
    { name: '302 → ten.attacker.test', url: hop(302, 'http://ten.attacker.test/') },
    { name: '303 → [::ffff:a00:1]', url: hop(303, 'http://[::ffff:a00:1]/') },
    { name: '307 → 2130706433 (127.0.0.1)', url: hop(307, 'http://2130706433/') },
    { name: '308 → [64:ff9b::a00:1]', url: hop(308, 'http://[64:ff9b::a00:1]/') },
    { name: '302 → https://169.254.169.254', url: hop(302, 'https://169.254.169.254/latest/meta-data/') },
    { name: 'chain public → public → 172.16.0.1', url: hop(302, hop(302, 'http://172.16.0.1/')) },
  ];
}
