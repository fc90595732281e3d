/** POST /v1/engine-search: organic results from a chain of search engines (docs/spec/contract.md §5). */
import { httpErrors } from '../core/errors.ts';
import { between, integer, min, oneOf, required, string } from '../validation/rules.ts';
import { COUNTRY_CODES } from '../validation/countries.ts';
import { SEARCH_LANGUAGES, TIME_RANGES } from '../adapters/search/types.ts';
import { defineEndpoint } from '../pipeline/endpoint.ts';
import { SearchResponse } from './responses.ts';

export const SEARCH_MESSAGES = {
  noResults: 'No results found!',
  unavailable: 'The search engine did not answer, please retry.',
} as const;

/** `max(3, round(per_page / 3))`: 10 → 3, 15 → 5, 20 → 7, 50 → 17, 100 → 33. The 3 is the price table's `search` (its default). */
export function searchCost(perPage: number, searchPrice: number): number {
  return Math.max(searchPrice, Math.round(perPage / 3));
}

export const searchEndpoint = defineEndpoint({
  method: 'POST',
  path: '/v1/engine-search',
  operationId: 'search',
  toolName: 'search',
  summary: 'Organic search results',
  description: ({ price }) =>
    `Results come from the first engine of the configured chain that answers; captchas, consent walls and block pages move on to the next engine. Costs max(${price('search')}, round(per_page / 3)) credits; no results (404) and no engine answering (502) are free.`,
  tag: 'Scraping',
  input: 'body',
  schema: {
    fields: {
      query: { rules: [required(), string()], example: 'javascript tutorial' },
      country: { rules: [string(), oneOf(COUNTRY_CODES)], default: 'us', description: 'Lowercase ISO 3166-1 alpha-2 code.' },
      language: { rules: [string(), oneOf(SEARCH_LANGUAGES)], default: 'en' },
      page: { rules: [integer(), min(1)], default: 1 },
      per_page: { rules: [integer(), between(10, 100)], default: 10 },
      time_range: { rules: [string(), oneOf(TIME_RANGES)] },
    },
  },
  billing: { product: 'scraping', operation: 'search', credits: (_units, unitPrice, input) => searchCost(input.per_page, unitPrice) },
  history: true,
  success: {
    status: 200,
    description: 'Organic results in page order.',
    schema: SearchResponse,
    example: {
      response: [
        {
          title: 'JavaScript Tutorial - W3Schools',
          description: 'Well organized and easy to understand Web building tutorials…',
          meta_data: 'www.w3schools.com › js',
          url: 'https://www.w3schools.com/js/',
        },
      ],
    },
  },
  errors: [403, { status: 404, message: SEARCH_MESSAGES.noResults, description: 'The query has no results; nothing was charged.' }, { status: 502, message: SEARCH_MESSAGES.unavailable }],
  async handler({ input, services, upstream }) {
    const outcome = await services.capabilities.search().find(
      {
        query: input.query,
        country: input.country,
        language: input.language,
        page: input.page,
        timeRange: input.time_range,
        perPage: input.per_page,
      },
      upstream,
    );
    if (outcome.kind === 'no_results') throw httpErrors.notFound(SEARCH_MESSAGES.noResults);
    if (outcome.kind === 'unavailable') throw httpErrors.badGateway(SEARCH_MESSAGES.unavailable);
    return { body: { response: outcome.results } };
  },
});
