/**
 * Minimal hand-written result pages for each search engine, shaped like the real markup the
 * parsers read. Every results page mixes the organic results it is given with the noise a
 * parser must skip (ads, carousels, "people also ask", knowledge panels) and wraps organic
 * links in the engine's click redirect. Used by parser and chain unit tests, and meant for fake
 * engine servers in integration tests (serve `page.body` with `page.status` at the engine's
 * path; `page.path` is where a real engine would have redirected).
 */
import type { EngineName } from '../../src/adapters/search/types.ts';

export interface FixtureResult {
  title: string;
  url: string;
  description: string;
  /** The breadcrumb the engine shows; "" renders none. */
  meta: string;
}

export interface FixturePage {
  status: number;
  /** Path of the final URL (after the engine's redirects), e.g. "/sorry/index". */
  path: string;
  body: string;
}

export interface EngineFixtures {
  /** The path the engine's request goes to. */
  searchPath: string;
  results(items: FixtureResult[]): FixturePage;
  noResults(query: string): FixturePage;
  /** Pages that must parse as `blocked`, by name. */
  blocked: Record<string, FixturePage>;
}

/** `count` distinct results; `start` numbers them so pages of a fan-out differ. */
export function fixtureResults(label: string, count: number, start = 1): FixtureResult[] {
  return Array.from({ length: count }, (_, index) => {
    const n = start + index;
    return {
      title: `${label} result ${n}`,
      url: `https://${label}.example/docs/${n}?ref=a&b=c`,
      description: `Description of ${label} result ${n}, with <markup> & entities.`,
      meta: `${label}.example › docs › ${n}`,
    };
  });
}

export function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

const e = escapeHtml;
const ok = (body: string, path: string): FixturePage => ({ status: 200, path, body });

function page(title: string, body: string): string {
  return `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${e(title)}</title>
<style>.hidden{display:none}</style><script>window.__state = {"text": "No results found for nothing"};</script></head>
<body>${body}</body></html>`;
}

// --- Google -------------------------------------------------------------------------------

function googleResult(item: FixtureResult, index: number): string {
  // Alternate the forms Google uses: a direct link, /url?q= and /url?url= redirects.
  const href =
    index % 3 === 0 ? item.url : index % 3 === 1 ? `/url?q=${encodeURIComponent(item.url)}&sa=U&ved=x` : `/url?url=${encodeURIComponent(item.url)}&rct=j`;
  return `<div class="MjjYud"><div class="g tF2Cxc"><div class="yuRUbf"><a href="${e(href)}" data-ved="x"><br>
  <h3 class="LC20lb">  ${e(item.title)} </h3><div class="TbwUpd">${item.meta ? `<cite>${e(item.meta)}</cite>` : ''}</div></a></div>
  <div class="VwiC3b"><span>${e(item.description)}</span></div></div></div>`;
}

export const googleFixtures: EngineFixtures = {
  searchPath: '/search',
  results: (items) =>
    ok(
      page(
        'query - Google Search',
        `<div id="main"><div id="tads"><div class="uEierd"><a href="https://www.googleadservices.com/pagead/aclk?sa=L&adurl=https://ads.example/"><h3>Sponsored: buy now</h3></a><span>Ad</span></div></div>
<div id="search"><div id="rso">
${items.slice(0, 1).map(googleResult).join('\n')}
<div class="MjjYud"><div class="related-question-pair" data-initq="q"><a href="https://paa.example/answer"><h3>People also ask: why?</h3></a></div></div>
<div class="ULSxyf"><g-section-with-header><h3>Top stories</h3><g-scrolling-carousel><a href="https://news.example/story"><h3>Breaking story</h3></a></g-scrolling-carousel></g-section-with-header></div>
<div class="MjjYud"><video-voyager><a href="https://video.example/watch?v=1"><h3>A video</h3></a></video-voyager></div>
${items.slice(1).map((item, index) => googleResult(item, index + 1)).join('\n')}
<div class="MjjYud"><div class="g"><a href="/search?q=more+results"><h3>More results</h3></a></div></div>
</div></div>
<div id="rhs"><div class="kp-wholepage"><a href="https://en.wikipedia.org/wiki/Topic"><h3>Knowledge panel</h3></a></div></div>
<div id="bottomads"><a href="https://ads.example/bottom"><h3>Bottom ad</h3></a></div></div>`,
      ),
      '/search',
    ),
  noResults: (query) =>
    ok(
      page(
        `${query} - Google Search`,
        `<div id="main"><div id="search"><div id="topstuff"><div class="card-section"><p>Your search - <b>${e(query)}</b> - did not match any documents.</p>
<p>Suggestions:</p><ul><li>Make sure that all words are spelled correctly.</li></ul></div></div><div id="rso"></div></div></div>`,
      ),
      '/search',
    ),
  blocked: {
    sorry: ok(
      page(
        'https://www.google.com/search?q=x',
        `<div id="captcha-form"><form action="index" method="post"><div class="g-recaptcha" data-sitekey="k"></div></form></div>
<div>Our systems have detected unusual traffic from your computer network.</div>`,
      ),
      '/sorry/index',
    ),
    unusualTraffic: ok(page('Google', '<p>Our systems have detected unusual traffic from your computer network. Please try again later.</p>'), '/search'),
    consent: ok(
      page(
        'Before you continue to Google',
        `<h1>Before you continue to Google</h1><form action="https://consent.google.com/save" method="POST"><input type="hidden" name="set_eom" value="true"><button>Accept all</button></form>`,
      ),
      '/search',
    ),
    javascriptRequired: ok(
      `<!DOCTYPE html><html><head><title>Google Search</title><noscript><meta content="0;url=/httpservice/retry/enablejs?sei=abc" http-equiv="refresh"></noscript></head>
<body><noscript><div>Please click <a href="/httpservice/retry/enablejs?sei=abc">here</a> if you are not redirected within a few seconds.</div></noscript></body></html>`,
      '/search',
    ),
    tooManyRequests: { status: 429, path: '/search', body: 'Too Many Requests' },
  },
};

/** Google's older JavaScript-free layout, which the parser also reads. */
export function googleBasicHtml(items: FixtureResult[]): FixturePage {
  const blocks = items
    .map(
      (item) => `<div><div class="Gx5Zad fP1Qef xpd EtOod pkphOe"><div class="egMi0 kCrYT"><a href="/url?q=${e(encodeURIComponent(item.url))}&amp;sa=U">
<div class="DnJfK"><div class="j039Wc"><h3 class="zBAuLc l97dzf"><div class="BNeawe vvjwJb AP7Wnd">${e(item.title)}</div></h3></div>
<div class="sCuL3"><div class="BNeawe UPmit AP7Wnd lRVwie">${e(item.meta)}</div></div></div></a></div>
<div class="kCrYT"><div><div class="BNeawe s3v9rd AP7Wnd"><div><div class="v9i61e"><div class="BNeawe s3v9rd AP7Wnd">${e(item.description)}</div></div>
<div><div class="BNeawe s3v9rd AP7Wnd"><a href="/url?q=https://sitelink.example/">Sitelink</a></div></div></div></div></div></div></div></div>`,
    )
    .join('\n');
  return ok(
    page(
      'query - Google Search',
      `<div id="main"><div><a href="/search?q=x&amp;tbm=isch">Images</a></div>${blocks}
<div><div class="Gx5Zad xpd EtOod pkphOe"><div class="kCrYT"><span><h3 class="zBAuLc"><div class="BNeawe deIvCb">Topic</div></h3></span>
<div class="BNeawe s3v9rd AP7Wnd">Knowledge panel text <a href="/url?q=https://en.wikipedia.org/wiki/Topic">Wikipedia</a></div></div></div></div></div>`,
    ),
    '/search',
  );
}

// --- Bing ---------------------------------------------------------------------------------

export function bingClickUrl(target: string): string {
  return `https://www.bing.com/ck/a?!&&p=0123abcd&ptn=3&ver=2&hsh=4&u=a1${Buffer.from(target).toString('base64url')}&ntb=1`;
}

export const bingFixtures: EngineFixtures = {
  searchPath: '/search',
  results: (items) =>
    ok(
      page(
        'query - Search',
        `<div id="b_content"><main><ol id="b_results">
<li class="b_ad"><ul><li class="b_algo"><h2><a href="https://www.bing.com/aclk?ld=e8">Sponsored shoes</a></h2><div class="b_caption"><p>Buy shoes</p></div></li></ul></li>
${items
  .map(
    (item, index) => `<li class="b_algo" data-id iid="SERP.${index}"><div class="b_tpcn"><a class="tilk" href="${e(bingClickUrl(item.url))}"><div class="tptt">site</div>
<div class="b_attribution">${item.meta ? `<cite>${e(item.meta)}</cite>` : ''}</div></a></div>
<h2><a href="${e(bingClickUrl(item.url))}" h="ID=SERP">${e(item.title)}</a></h2>
<div class="b_caption"><p class="b_lineclamp2"><span class="algoSlug_icon" data-priority="2">Web</span>${e(item.description)}</p></div></li>`,
  )
  .join('\n')}
<li class="b_ans"><h2>Videos of query</h2><div class="b_vidAns"><a href="https://video.example/1"><div class="mc_vtvc_title">A video</div></a></div></li>
<li class="b_ans"><div class="b_rs"><h2>Related searches</h2><a href="/search?q=related">related</a></div></li>
<li class="b_pag"><a href="/search?q=x&first=11">2</a></li>
</ol></main></div>`,
      ),
      '/search',
    ),
  noResults: (query) =>
    ok(
      page(
        `${query} - Search`,
        `<ol id="b_results"><li class="b_no"><h1>There are no results for <strong>${e(query)}</strong></h1><ul><li>Check your spelling or try different keywords</li></ul></li></ol>`,
      ),
      '/search',
    ),
  blocked: {
    challenge: ok(
      page(
        'query - Search',
        `<div id="b_header"></div><div class="captcha"><div class="captcha_header">One last step</div><div class="captcha_text">Please solve the challenge below to continue</div><div class="checkbox"><div id="turnstile-widget"></div></div></div>`,
      ),
      '/search',
    ),
    forbidden: { status: 403, path: '/search', body: '<html><body>Forbidden</body></html>' },
    serverError: { status: 503, path: '/search', body: '<html><body>Service Unavailable</body></html>' },
  },
};

// --- DuckDuckGo ---------------------------------------------------------------------------

export function duckduckgoClickUrl(target: string): string {
  return `//duckduckgo.com/l/?uddg=${encodeURIComponent(target)}&rut=0f1e2d`;
}

export const duckduckgoFixtures: EngineFixtures = {
  searchPath: '/html/',
  results: (items) =>
    ok(
      page(
        'query at DuckDuckGo',
        `<div class="zci-wrapper"><div class="zci"><h1 class="zci__heading"><a href="https://en.wikipedia.org/wiki/Topic">Topic</a></h1><div class="zci__result">Instant answer text</div></div></div>
<div id="links" class="results">
<div class="result results_links results_links_deep result--ad"><div class="links_main links_deep result__body"><h2 class="result__title"><a class="result__a" href="https://duckduckgo.com/y.js?ad_provider=bingv7aa&u3=https%3A%2F%2Fads.example">Sponsored result</a></h2>
<a class="result__snippet" href="https://duckduckgo.com/y.js?ad_provider=bingv7aa">Buy now</a></div></div>
${items
  .map(
    (item) => `<div class="result results_links results_links_deep web-result "><div class="links_main links_deep result__body">
<h2 class="result__title"><a rel="nofollow" class="result__a" href="${e(duckduckgoClickUrl(item.url))}">${e(item.title)}</a></h2>
<div class="result__extras"><div class="result__extras__url"><a class="result__url" href="${e(duckduckgoClickUrl(item.url))}">
   ${e(item.meta)}
</a></div></div>
<a class="result__snippet" href="${e(duckduckgoClickUrl(item.url))}">${e(item.description)}</a><div class="clear"></div></div></div>`,
  )
  .join('\n')}
<div class="nav-link"><form action="/html/" method="post"><input type="submit" value="Next"><input type="hidden" name="s" value="10"></form></div>
</div>`,
      ),
      '/html/',
    ),
  noResults: (query) =>
    ok(
      page(
        `${query} at DuckDuckGo`,
        `<div id="links" class="results"><div class="result results_links_deep highlight_d result--no-result"><div class="no-results">No  results.</div></div></div>`,
      ),
      '/html/',
    ),
  blocked: {
    anomaly: {
      status: 202,
      path: '/html/',
      body: page(
        'DuckDuckGo',
        `<div class="anomaly-modal__modal" data-testid="anomaly-modal"><div class="anomaly-modal__title">Unfortunately, bots use DuckDuckGo too.</div>
<div class="anomaly-modal__description">Please complete the following challenge to confirm this search was made by a human.</div>
<form id="challenge-form" action="//duckduckgo.com/anomaly.js?sv=html&cc=sre" method="POST"></form></div>`,
      ),
    },
    botsText: ok(page('DuckDuckGo', '<p>Unfortunately, bots use DuckDuckGo too. Please try again.</p>'), '/html/'),
    javascriptShell: ok(
      page(
        'query at DuckDuckGo',
        `<div class="site-wrapper js-site-wrapper"><div id="react-layout"></div><div id="links" class="results--main"></div>
<div class="msg msg--noscript"><p class="msg-title--noscript">You are being redirected to the non-JavaScript site.</p>Click <a href="/html/?q=query">here</a> if it doesn't happen automatically.</div></div>`,
      ),
      '/',
    ),
  },
};

/** DuckDuckGo's lite endpoint, which the same parser reads. */
export function duckduckgoLite(items: FixtureResult[]): FixturePage {
  const rows = items
    .map(
      (item, index) => `<tr><td valign="top">${index + 1}.&nbsp;</td><td><a rel="nofollow" href="${e(duckduckgoClickUrl(item.url))}" class='result-link'>${e(item.title)}</a></td></tr>
<tr><td>&nbsp;</td><td class='result-snippet'>${e(item.description)}</td></tr>
<tr><td>&nbsp;</td><td><span class='link-text'>${e(item.meta)}</span></td></tr>
<tr><td>&nbsp;</td><td>&nbsp;</td></tr>`,
    )
    .join('\n');
  return ok(
    page(
      'query at DuckDuckGo',
      `<table border="0"><tr class="result-sponsored"><td>1.</td><td><a rel="nofollow" href="https://duckduckgo.com/y.js?ad_provider=x" class='result-link'>Sponsored link</a></td></tr>
<tr class="result-sponsored"><td>&nbsp;</td><td class='result-snippet'>Ad text</td></tr>
${rows}</table>`,
    ),
    '/lite/',
  );
}

// --- Brave --------------------------------------------------------------------------------

function braveResult(item: FixtureResult, index: number): string {
  const [host = '', ...path] = item.meta.split(' › ');
  const cite = item.meta
    ? `<cite class="snippet-url">${e(host)}\n   <span class="text-ellipsis">${e(path.map((part) => `› ${part}`).join(' '))}</span></cite>`
    : '';
  return `<div class="snippet svelte-jmfu5f" data-pos="${index}" data-type="web" data-keynav="true"><div class="result-wrapper"><div class="result-content">
<a href="${e(item.url)}" target="_self" class="svelte-14r20fy l1"><div class="site-name-wrapper"><div class="site-name-content"><div class="t-secondary">Site</div>
<div class="url-wrapper">${cite}</div></div></div>
<div class="title search-snippet-title line-clamp-1" title="${e(item.title)}">
   ${e(item.title)}
</div></a>
<div class="generic-snippet"><div class="content t-primary line-clamp-dynamic"><!---->${e(item.description)}<!----></div></div></div></div></div>`;
}

const BRAVE_NOISE = `<div class="snippet svelte-jmfu5f standalone" data-pos="90"><h5>Videos</h5><div class="video-cluster-grid"><a class="enrichment-card-item" href="https://www.youtube.com/watch?v=1"><div class="title">Video one</div></a></div></div>
<div id="faq" class="snippet standalone"><div class="title">FAQ</div><a href="https://faq.example/">Question?</a></div>`;

export const braveFixtures: EngineFixtures = {
  searchPath: '/search',
  results: (items) =>
    ok(
      page(
        'query - Brave Search',
        `<main id="main"><div id="results" class="section">
<div class="snippet standalone" data-type="ad"><a href="https://search.brave.com/a/redirect?click_url=https%3A%2F%2Fads.example"><div class="title">Sponsored</div></a></div>
${items.slice(0, 1).map(braveResult).join('')}
${BRAVE_NOISE}
${items.slice(1).map((item, index) => braveResult(item, index + 1)).join('\n')}
<div class="snippet svelte-jmfu5f" data-type="web"><a href="/a/redirect?click_url=https%3A%2F%2Fads.example"><div class="title">Relative link in a result slot</div></a></div>
<div id="pagination-snippet" class="snippet standalone"><a href="/search?q=x&offset=1">Next</a></div>
</div></main>`,
      ),
      '/search',
    ),
  noResults: (query) =>
    ok(
      page(
        `${query} - Brave Search`,
        `<main id="main"><div id="results" class="section"><div class="snippet standalone no-results"><div class="title">No results found for <strong>${e(query)}</strong></div>
<p>Not many great matches came back for your search</p></div></div></main>`,
      ),
      '/search',
    ),
  blocked: {
    captcha: ok(page('Captcha - Brave Search', '<div id="captcha"><form action="/search/captcha" method="post"><button>I am human</button></form></div>'), '/search/captcha'),
    tooManyRequests: { status: 429, path: '/search', body: '<html><body>Too many requests</body></html>' },
  },
};

// --- Mojeek -------------------------------------------------------------------------------

export const mojeekFixtures: EngineFixtures = {
  searchPath: '/search',
  results: (items) =>
    ok(
      page(
        'query - Mojeek Search',
        `<div class="container serp-results"><div class="top-info"><p>Results 1 to ${items.length}</p></div><div class="result-col"><div class="results">
<ul class="results-standard">
${items
  .map(
    (item, index) => `<li class="r${index + 1}"><a title="${e(item.url)}" href="${e(item.url)}" class="ob"><p class="i">${item.meta ? `<span class="url">${e(item.meta.split(' › ')[0])}<span> › ${e(item.meta.split(' › ').slice(1).join(' › '))}</span></span>` : ''}</p></a>
<h2><a class="title" title="${e(item.url)}" href="${e(item.url)}">${e(item.title)}</a></h2>
<p class="s">
   ${e(item.description)}
</p><p class="more"><a href="/search?q=site%3Aexample+query">See more results from example »</a></p></li>`,
  )
  .join('\n')}
</ul></div><div class="pagination"><ul><li><a href="/search?q=query&amp;s=11">Next</a></li></ul></div></div></div>`,
      ),
      '/search',
    ),
  noResults: (query) =>
    ok(
      page(
        `${query} - Mojeek Search`,
        `<div class="container serp-results"><div class="result-col"><div class="results"><p>No pages found matching: <b>${e(query)}</b></p>
<ul><li>Make sure all words are spelled correctly.</li></ul></div></div></div>`,
      ),
      '/search',
    ),
  blocked: {
    automated: {
      status: 403,
      path: '/search',
      body: page('Mojeek', '<p>Sorry your network appears to be sending automated queries to Mojeek.</p>'),
    },
    automatedOk: ok(page('Mojeek', '<p>Sorry your network appears to be sending automated queries to Mojeek.</p>'), '/search'),
  },
};

// --- Startpage ----------------------------------------------------------------------------

/** Startpage shows the URL plus a "host › path" variant; a result without breadcrumb shows neither. */
function startpageDisplayUrl(item: FixtureResult): string {
  if (!item.meta) return '';
  const structured = item.meta
    .split(' › ')
    .map((part) => `<span>${e(part)}<!-- --> </span>`)
    .join('<span>&nbsp;›&nbsp;</span>');
  return `<a href="${e(item.url)}" class="wgl-display-url"><span class="link-text default-link-text">${e(item.url)}</span><span class="link-text structured-link-text"><style>.css-x{display:none}</style>${structured}</span></a>`;
}

export const startpageFixtures: EngineFixtures = {
  searchPath: '/sp/search',
  results: (items) =>
    ok(
      page(
        'Startpage Search Results',
        `<div id="root"><div class="layout-web"><section id="main">
<div class="a-bg-result ecommerce-ad"><a class="result-title result-link" href="https://ads.example/"><h2 class="wgl-title">Ad block</h2></a></div>
<div class="w-gl css-1og29rd">
${items
  .map(
    (item) => `<div class="result css-o7i03b"><div class="upper"><a href="${e(item.url)}" class="favicon-link"><div class="favicon"><img src=""><noscript><img src=""></noscript></div></a>
<div class="wgl-title-link-container"><a href="${e(item.url)}" class="wgl-site-title"><span class="link-text">Site</span></a>${startpageDisplayUrl(item)}</div></div>
<a class="result-title result-link css-1bggj8v" href="${e(item.url)}" target="_blank" data-testid="gl-title-link"><h2 class="wgl-title">
   ${e(item.title)}
</h2></a>
<p class="description css-1507v2l">${e(item.description)}</p>
<div class="anonymous-view-link"><a href="https://eu-browse.startpage.com/av/proxy?ep=abc">Anonymous View</a></div></div>`,
  )
  .join('\n')}
<div class="result css-o7i03b"><a class="result-title result-link" href="https://www.google.com/aclk?sa=l&amp;ai=x"><h2 class="wgl-title">Google ad in the list</h2></a><p class="description">Ad</p></div>
</div></section></div></div>
<script>React.createElement(UIStartpage.AppSerpWeb, { render: { presenter: { regions: { mainline: [{ display_type: 'ads-google-top' }, { display_type: 'web-google' }] } } } });</script>`,
      ),
      '/sp/search',
    ),
  noResults: (query) =>
    ok(
      page(
        'Startpage Search Results',
        `<div id="root"><section id="main"><div class="no-results"><p>Your search for ${e(query)} did not match any documents.</p></div></section></div>
<script>React.createElement(UIStartpage.AppSerpWeb, { render: { presenter: { regions: { mainline: [{ display_type: 'notice-noresults-empty' }] } } } });</script>`,
      ),
      '/sp/search',
    ),
  blocked: {
    captcha: ok(page('Startpage', '<form action="/sp/captcha" method="post"><div class="captcha">Please verify</div></form>'), '/sp/captcha'),
    proofOfWork: ok(page('Making sure you\'re not a bot!', '<div id="anubis_challenge"><p>Making sure you&#39;re not a bot!</p></div>'), '/sp/search'),
  },
};

export const SERP_FIXTURES: Record<EngineName, EngineFixtures> = {
  google: googleFixtures,
  bing: bingFixtures,
  duckduckgo: duckduckgoFixtures,
  brave: braveFixtures,
  mojeek: mojeekFixtures,
  startpage: startpageFixtures,
};

/** A page no engine would serve as results: must never read as `no_results`. */
export const UNKNOWN_LAYOUT_PAGE: FixturePage = ok(
  page('Loading…', '<div id="app"></div><noscript>Please enable JavaScript to continue.</noscript>'),
  '/',
);
