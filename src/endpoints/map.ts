/** POST /v1/map: the URLs of one site, from its start page's links and its sitemaps (docs/spec/contract.md §9). */
import { Type } from '@sinclair/typebox';
import { httpErrors } from '../core/errors.ts';
import { between, boolean, custom, httpUrlOrNull, integer, max, publicAddress, required, string, url } from '../validation/rules.ts';
import { canonicalUrl, mapSite, MAP_DEFAULTS, siteUpstream } from '../adapters/site/index.ts';
import { defineEndpoint } from '../pipeline/endpoint.ts';
import { WEB_MESSAGES } from './web.ts';

const MapResponse = Type.Object({
  response: Type.Object({
    links: Type.Array(Type.String(), { description: "The start URL first, then the start page's links in page order, then the sitemaps' URLs." }),
  }),
});

/** A URL with `user:pass@` is never fetched nor listed (`canonicalUrl` refuses it): said as the `url` rule says it. */
const withoutCredentials = custom('url', (value) => typeof value !== 'string' || httpUrlOrNull(value) === null || canonicalUrl(value) !== null, (attribute) => `The ${attribute} must be a valid URL.`);

export const mapEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/map',
  operationId: 'map',
  summary: 'The URLs of a site',
  description: ({ credits }) =>
    `Lists the site's URLs from its start page's links and its sitemaps (robots.txt \`Sitemap:\` lines and /sitemap.xml, index files followed), without fetching the pages: same host only (\`www.\` included), any subdomain with include_subdomains; canonical (no fragment, no tracking parameters) and each once. Answers within about 30 seconds with what was read by then. Costs ${credits('map')}; a site where neither the start page nor a sitemap can be read is a free 502.`,
  tag: 'Scraping',
  input: 'body',
  schema: {
    fields: {
      url: { rules: [required(), string(), url(), withoutCredentials, publicAddress()], example: 'https://example.com/' },
      limit: { rules: [integer(), between(1, MAP_DEFAULTS.maxLimit)], default: MAP_DEFAULTS.limit, description: 'Links answered at most.' },
      include_subdomains: { rules: [boolean()], default: false, description: "Count any subdomain of the URL's registrable domain as the site." },
      search: { rules: [string(), max(500)], description: 'Keep only URLs containing this text (case-insensitive); those with it in their path come first.' },
    },
  },
  billing: { product: 'scraping', operation: 'map' },
  history: true,
  success: {
    status: 200,
    description: 'The URLs of the site.',
    schema: MapResponse,
    example: { response: { links: ['https://example.com/', 'https://example.com/about', 'https://example.com/blog/first-post'] } },
  },
  errors: [403, 502, 503],
  async handler({ input, services, upstream }) {
    const web = services.capabilities.web();
    if (web.isBlocked(input.url)) throw httpErrors.forbidden(WEB_MESSAGES.domainNotSupported);
    // Sitemap files are fetched under the same blocked-domain rule as pages, on every redirect hop.
    const checkUrl = (target: URL) => {
      if (web.isBlocked(target.href)) throw new Error(`${target.hostname} is a blocked domain`);
    };
    const outcome = await mapSite(
      { url: input.url, limit: input.limit, includeSubdomains: input.include_subdomains, search: input.search },
      { site: siteUpstream(services.capabilities.runtime, { checkUrl }), web, userAgent: services.config.outbound.userAgent ?? '*' },
      upstream,
    );
    if (outcome.kind === 'busy') throw httpErrors.busy();
    // The same answer /v1/web gives for a site it cannot reach; nothing is charged.
    if (outcome.kind === 'unreachable') throw httpErrors.badGateway(WEB_MESSAGES.unreachable);
    return { body: { response: { links: outcome.links } } };
  },
});
