/** POST /v1/web: one web page, fetched plainly or rendered in a real browser (docs/spec/contract.md §5, docs/web.md). */
import { httpErrors } from '../core/errors.ts';
import { boolean, custom, isAbsent, isBlank, object, oneOf, parsed, publicAddress, required, string, url } from '../validation/rules.ts';
import { COUNTRY_CODES } from '../validation/countries.ts';
import { isHeaderObject, OUTPUT_FORMATS, type WebOutcome } from '../adapters/web/index.ts';
import { defineEndpoint } from '../pipeline/endpoint.ts';
import { refineWebOptions, WEB_OPTION_FIELDS } from './web-options.ts';
import { readWebPdf } from './web-pdf.ts';

export const WEB_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export const WEB_MESSAGES = {
  domainNotSupported: 'Domain not supported',
  bypassCombination: 'The bypass captcha option cannot be combined with method, headers, body or proxy_country.',
  noProxy: 'The proxy country option is not available: no proxy is configured.',
  headers: 'The headers must be an object of header names and string values.',
  notAPage: 'The url must point to a web page.',
  tooLarge: 'The url must point to a page of at most 10 MB.',
  publicAddress: 'The url must point to a public address.',
  unreachable: 'The target site could not be reached.',
  captcha: 'The captcha could not be solved.',
  notConverted: (format: string) => `The page is too large or complex to convert to ${format}: ask for the raw format.`,
  linksNotRead: 'The page is too large or complex to read its links.',
  rulesNotRead: 'The page is too large or complex to read the extract rules from.',
  selectorsNotApplied: 'The page is too large or complex to apply the selectors to.',
  answered: (status: number) => `The target site answered ${status}.`,
} as const;

const isTrue = (value: unknown) => value === true || value === 1 || value === '1';

export const webEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/web',
  summary: 'A web page: raw, as text or as Markdown',
  description: ({ credits }) =>
    `Fetches the page with the given method, headers and body (${credits('web')}), through a proxy in the given country (${credits('web_geo')}), or renders it in a headless browser that waits out challenge pages and solves captchas (bypass_captcha, ${credits('web_browser')}). Charged when the target answers 2xx, 404 or 410; any other answer is a free 502. Platforms with their own scrapers are refused (403 "Domain not supported"). A page too large or complex to convert to the format asked for within the time limit is a free 422 on \`format\`.`,
  tag: 'Scraping',
  input: 'body',
  schema: {
    fields: {
      url: { rules: [required(), string(), url(), publicAddress()], example: 'https://example.com/' },
      method: { rules: [string(), oneOf(WEB_METHODS)], default: 'GET' },
      headers: {
        rules: [object(), parsed('headers', (value) => (isHeaderObject(value) ? value : null), WEB_MESSAGES.headers)],
        secret: true,
        description: 'Request headers, names to string values. Hop-by-hop, Host and Proxy-* headers are dropped. Never stored in history.',
      },
      body: {
        rules: [custom('body', () => true, '')],
        secret: true,
        description: 'Request body: a string is sent as is, any other JSON value as JSON. Never stored in history.',
      },
      bypass_captcha: { rules: [boolean()], default: false, description: 'Render in a headless browser, wait out challenge pages and solve captchas.' },
      proxy_country: { rules: [string(), oneOf(COUNTRY_CODES)], description: 'Lowercase ISO 3166-1 alpha-2 code: go out through the proxy in this country.' },
      format: { rules: [string(), oneOf(OUTPUT_FORMATS)], default: 'raw', description: "`raw`: the body as text; `text` or `markdown`: the main content (see only_main_content), and the page's `metadata`." },
      links: { rules: [boolean()], default: false, description: "Add `links`: the page's links, absolute, deduplicated, in page order." },
      only_main_content: {
        rules: [boolean()],
        default: true,
        description: '`text` and `markdown`: only the main content (the article, without menus, sidebars, comments and footers); `false` gives the whole page without scripts, styles and hidden parts.',
      },
      links_inline: { rules: [boolean()], default: true, description: '`markdown`: links and images inline; `false` keeps only the text of links and drops images.' },
      ...WEB_OPTION_FIELDS,
    },
    refine(input, errors) {
      refineWebOptions(input, errors);
      if (!isTrue(input.bypass_captcha)) return;
      const method = typeof input.method === 'string' && input.method !== '' ? input.method : 'GET';
      if (method !== 'GET' || !isBlank(input.headers) || !isAbsent(input.body) || !isAbsent(input.proxy_country)) {
        errors.bypass_captcha = [WEB_MESSAGES.bypassCombination];
      }
    },
  },
  // Plain pages hold their 1 credit up front; geo and browser pages hold their own price in the handler.
  // One page: through the browser, or a geo proxy, at their own price.
  billing: { product: 'scraping', operation: (input) => (input.bypass_captcha ? 'web_browser' : input.proxy_country !== undefined ? 'web_geo' : 'web') },
  history: true,
  async afterValidation({ input, services }, errors) {
    if (!isAbsent(input.proxy_country) && !services.capabilities.web().geoAvailable) {
      errors.proxy_country = [...(errors.proxy_country ?? []), WEB_MESSAGES.noProxy];
    }
  },
  success: {
    status: 200,
    description: "The target's answer: final URL, status, headers and the content as text; with `text` or `markdown`, the page's `metadata` (title, description, language, author, published_at, site_name, canonical_url, image; `null` when unknown).",
    example: {
      response: {
        url: 'https://example.com/',
        status_code: 200,
        headers: { 'content-type': 'text/html; charset=UTF-8' },
        content: '<!doctype html><html>…</html>',
      },
    },
  },
  errors: [400, 403, 502, 503],
  async handler({ input, services, upstream, meter, signal }) {
    const web = services.capabilities.web();
    if (web.isBlocked(input.url)) throw httpErrors.forbidden(WEB_MESSAGES.domainNotSupported);

    // The screenshot's own price, held beside the page's and captured with it.
    if (input.screenshot) await meter.cover(1, 'web_screenshot');
    const outcome = await web.scrape({
      url: input.url,
      method: input.method,
      headers: input.headers,
      body: input.body,
      browser: input.bypass_captcha,
      proxyCountry: input.proxy_country,
      format: input.format,
      links: input.links,
      onlyMainContent: input.only_main_content,
      linksInline: input.links_inline,
      includeSelectors: input.include_selectors,
      excludeSelectors: input.exclude_selectors,
      extractRules: input.extract_rules,
      waitFor: input.wait_for,
      actions: input.actions,
      screenshot: input.screenshot || undefined,
      pdf: true,
    }, upstream);
    // Upstream failures are logged by the runtime; a conversion that gave up is ours to tell.
    if (outcome.kind === 'not_converted') upstream.log.warn({ what: outcome.what, reason: outcome.reason }, 'web page not converted');
    // A PDF asked for as text or Markdown: read page by page, billed per page.
    if (outcome.kind === 'pdf') return { body: { response: await readWebPdf(outcome, input.format === 'markdown' ? 'markdown' : 'text', { services, meter, signal, tenant: upstream.tenant }) } };
    return { body: { response: answer(outcome, input) } };
  },
});

/** The free 422 of a page too large or complex for what was asked of it, on the field that asked it. */
function notConverted(what: Extract<WebOutcome, { kind: 'not_converted' }>['what'], input: { include_selectors?: readonly string[] }): never {
  if (what === 'links') throw httpErrors.fieldInvalid('links', WEB_MESSAGES.linksNotRead);
  if (what === 'extract_rules') throw httpErrors.fieldInvalid('extract_rules', WEB_MESSAGES.rulesNotRead);
  if (what === 'selectors') throw httpErrors.fieldInvalid((input.include_selectors?.length ?? 0) > 0 ? 'include_selectors' : 'exclude_selectors', WEB_MESSAGES.selectorsNotApplied);
  throw httpErrors.fieldInvalid('format', WEB_MESSAGES.notConverted(what));
}

/** The page, or the error the outcome calls for (nothing is charged for those). */
function answer(outcome: WebOutcome, input: { include_selectors?: readonly string[] }) {
  switch (outcome.kind) {
    case 'ok':
      return outcome.page;
    case 'status':
      throw httpErrors.badGateway(WEB_MESSAGES.answered(outcome.status), { status_code: outcome.status });
    case 'blocked_domain':
      throw httpErrors.forbidden(WEB_MESSAGES.domainNotSupported);
    case 'private_address':
      throw httpErrors.fieldInvalid('url', WEB_MESSAGES.publicAddress);
    case 'not_a_page':
      throw httpErrors.fieldInvalid('url', WEB_MESSAGES.notAPage);
    case 'too_large':
      throw httpErrors.fieldInvalid('url', WEB_MESSAGES.tooLarge);
    // The target answered, but the page is beyond what the conversion may spend on it: the same
    // request would fail the same way, so a free 422 naming the option to change, not a 5xx to retry.
    case 'not_converted':
      return notConverted(outcome.what, input);
    case 'captcha_unsolved':
      throw httpErrors.badGateway(WEB_MESSAGES.captcha);
    // The page did not allow a browser step the caller asked for: the request must change, not be retried.
    // Read by the handler before it gets here; a PDF the handler did not read is no web page.
    case 'pdf':
      throw httpErrors.fieldInvalid('url', WEB_MESSAGES.notAPage);
    case 'step_failed':
      throw httpErrors.fieldInvalid(outcome.step, outcome.message);
    case 'no_browser':
      throw httpErrors.notConfigured();
    case 'busy':
      throw httpErrors.busy();
    case 'unreachable':
      throw httpErrors.badGateway(WEB_MESSAGES.unreachable);
  }
}
