/** POST /v1/map: the URLs of one site, from its start page's links and its sitemaps (docs/spec/contract.md §9). */
import { Type } from '@sinclair/typebox';
import { httpErrors } from '../core/errors.ts';
import { between, boolean, custom, httpUrlOrNull, integer, max, publicAddress, required, string, url } from '../validation/rules.ts';
import { canonicalUrl, mapSite, MAP_DEFAULTS, siteUpstream } from '../adapters/site/index.ts';
import { defineEndpoint } from '../pipeline/endpoint.ts';
import { ROBOTS_AGENT } from '../jobs/worker.ts';
import { WEB_MESSAGES } from './web.ts';

export const MAP_MESSAGES = {
  ignoreRobotsNotAllowed: 'The ignore robots field cannot be true: this service lists only what robots.txt allows.',
  robotsUnreadable: "The site's robots.txt could not be read: it may disallow every URL.",
} as const;

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
    `Lists the site's URLs from its start page's links and its sitemaps (robots.txt \`Sitemap:\` lines and /sitemap.xml, index files followed), without fetching the pages: same host only (\`www.\` included), any subdomain with include_subdomains; canonical (no fragment, no tracking parameters) and each once; what robots.txt disallows for the crawler is left out, unless ignore_robots (where the operator allows it). Answers within about 30 seconds with what was read by then. Costs ${credits('map')}; a site where neither the start page nor a sitemap can be read, or whose robots.txt cannot be read, is a free 502.`,
  tag: 'Scraping',
  input: 'body',
  schema: {
    fields: {
      url: { rules: [required(), string(), url(), withoutCredentials, publicAddress()], example: 'https://example.com/' },
      limit: { rules: [integer(), between(1, MAP_DEFAULTS.maxLimit)], default: MAP_DEFAULTS.limit, description: 'Links answered at most.' },
      include_subdomains: { rules: [boolean()], default: false, description: "Count any subdomain of the URL's registrable domain as the site." },
      search: { rules: [string(), max(500)], description: 'Keep only URLs containing this text (case-insensitive); those with it in their path come first.' },
      ignore_robots: {
        rules: [boolean()],
        default: false,
        description: 'List the URLs robots.txt disallows for the crawler too. Only where the operator allows it (ALLOW_IGNORE_ROBOTS); elsewhere `true` is a 422.',
      },
    },
  },
  async afterValidation({ input, services }, errors) {
    if (input.ignore_robots === true && !errors.ignore_robots && !services.config.jobs.allowIgnoreRobots) (errors.ignore_robots ??= []).push(MAP_MESSAGES.ignoreRobotsNotAllowed);
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
      { url: input.url, limit: input.limit, includeSubdomains: input.include_subdomains, search: input.search, ignoreRobots: input.ignore_robots },
      // robots.txt judges the map as it judges a crawl: by the crawler's product token.
      { site: siteUpstream(services.capabilities.runtime, { checkUrl }), web, userAgent: ROBOTS_AGENT },
      upstream,
    );
    if (outcome.kind === 'busy') throw httpErrors.busy();
    // The same answer /v1/web gives for a site it cannot reach; nothing is charged.
    if (outcome.kind === 'unreachable') throw httpErrors.badGateway(WEB_MESSAGES.unreachable);
    if (outcome.kind === 'robots_unreadable') throw httpErrors.badGateway(MAP_MESSAGES.robotsUnreadable);
    return { body: { response: { links: outcome.links } } };
  },
});
