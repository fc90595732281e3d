/**
 * Messages that say what was expected (issue 40): Laravel's wording stays as the contract fixes it
 * (docs/spec/contract.md §1), and the answer adds what the caller needs to fix the request:
 * `expected` beside a 422's `errors`, `product`, `required` and `balance` beside the 403 for credits.
 * Crawl, batch and map report every failing field at once.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { validate, type Schema } from '../../src/validation/schema.ts';
import { oneOf, publicAddress, required, string, url } from '../../src/validation/rules.ts';
import { httpErrors, HttpError } from '../../src/core/errors.ts';
import { RequestMeter } from '../../src/pipeline/meter.ts';
import { OPERATION_DEFAULTS } from '../../src/credits/prices.ts';
import { batchEndpoint, crawlEndpoint } from '../../src/endpoints/jobs.ts';
import { mapEndpoint } from '../../src/endpoints/map.ts';
import { webEndpoint } from '../../src/endpoints/web.ts';
import { buildOpenApi } from '../../src/http/openapi.ts';

/** Every host is private here, as 127.0.0.1 is without OUTBOUND_ALLOW_HOSTS. */
const PRIVATE = { isPublicUrl: async () => false };
const PUBLIC = { isPublicUrl: async () => true };

async function refused(schema: Schema, input: Record<string, unknown>, services = PUBLIC) {
  const result = await validate(schema, input, services);
  assert.equal(result.ok, false, `expected a refusal of ${JSON.stringify(input)}`);
  if (result.ok) throw new Error('unreachable');
  return result;
}

describe('422: what was expected, beside the Laravel message', () => {
  test('a file:// URL keeps "must be a valid URL." and is told that http(s) is wanted', async () => {
    const result = await refused(webEndpoint.schema, { url: 'file:///etc/passwd' });
    assert.deepEqual(result.errors.url, ['The url must be a valid URL.']);
    assert.match(result.expected.url!, /http:\/\/ or https:\/\//);
    assert.match(result.expected.url!, /file: URLs are not fetched/);
  });

  test('a URL that is not one at all is told the form wanted, without a scheme remark', async () => {
    const result = await refused({ fields: { url: { rules: [required(), string(), url()] } } }, { url: 'not a url' });
    assert.equal(result.expected.url, 'an absolute http:// or https:// URL with a host, e.g. https://example.com/page');
  });

  test('format "md" lists the allowed values', async () => {
    const result = await refused(webEndpoint.schema, { url: 'https://example.com/', format: 'md' });
    assert.deepEqual(result.errors.format, ['The selected format is invalid.']);
    assert.equal(result.expected.format, 'one of: raw, text, markdown');
  });

  test('a long list of allowed values is cut and points to the OpenAPI document', async () => {
    const many = Array.from({ length: 30 }, (_, index) => `v${index}`);
    const result = await refused({ fields: { code: { rules: [string(), oneOf(many)] } } }, { code: 'x' });
    assert.match(result.expected.code!, /^one of 30 values: v0, v1, .*v19, … \(all of them in \/openapi\.json\)$/);
  });

  test('a local page names OUTBOUND_ALLOW_HOSTS, the setting that lets it through', async () => {
    const result = await refused({ fields: { url: { rules: [required(), string(), url(), publicAddress()] } } }, { url: 'http://127.0.0.1:8000/' }, PRIVATE);
    assert.deepEqual(result.errors.url, ['The url must point to a public address.']);
    assert.match(result.expected.url!, /OUTBOUND_ALLOW_HOSTS/);
  });

  test('the 422 body keeps message and errors as Laravel sends them, and adds expected only when there is one', () => {
    assert.deepEqual(httpErrors.validation({ page: ['The page must be an integer.'] }).body, { message: 'The given data was invalid.', errors: { page: ['The page must be an integer.'] } });
    assert.deepEqual(httpErrors.validation({ format: ['The selected format is invalid.'] }, { format: 'one of: raw, text, markdown' }).body, {
      message: 'The given data was invalid.',
      errors: { format: ['The selected format is invalid.'] },
      expected: { format: 'one of: raw, text, markdown' },
    });
  });
});

describe('crawl, batch and map report every failing field at once', () => {
  test('a crawl with a bad limit, a bad format, a bad pattern and a bad webhook URL', async () => {
    const result = await refused(crawlEndpoint.schema, { url: 'https://example.com/', limit: 0, format: 'md', include_paths: ['('], webhook: { url: 'nope' } });
    assert.deepEqual(Object.keys(result.errors).sort(), ['format', 'include_paths.0', 'limit', 'webhook.url']);
    assert.deepEqual(result.errors.limit, ['The limit must be between 1 and 10000.']);
    assert.equal(result.expected.format, 'one of: raw, text, markdown');
  });

  test('a crawl with two bad fields: both', async () => {
    const result = await refused(crawlEndpoint.schema, { url: 'file:///x', max_depth: 99 });
    assert.deepEqual(Object.keys(result.errors).sort(), ['max_depth', 'url']);
  });

  test('a batch with a bad URL in the list and a bad format', async () => {
    const result = await refused(batchEndpoint.schema, { urls: ['https://example.com/', 'ftp://example.com/'], format: 'md', links: 'maybe' });
    assert.deepEqual(Object.keys(result.errors).sort(), ['format', 'links', 'urls.1']);
    assert.deepEqual(result.errors['urls.1'], ['The urls.1 must be a valid URL.']);
  });

  test('a map with a bad URL, limit and search', async () => {
    const result = await refused(mapEndpoint.schema, { url: 'file:///etc', limit: 0, search: 5, include_subdomains: 'yes' });
    assert.deepEqual(Object.keys(result.errors).sort(), ['include_subdomains', 'limit', 'search', 'url']);
  });
});

describe('403 for credits: the product, the credits needed and the balance', () => {
  const ledger = (balance: number) => ({
    hold: async () => 0,
    extend: async () => 0,
    balance: async () => balance,
  });

  test('the up-front hold that the balance cannot pay', async () => {
    const meter = new RequestMeter({
      billing: { product: 'extraction', operation: 'image' },
      input: {},
      prices: OPERATION_DEFAULTS,
      ledger: ledger(2),
      requestId: 'r1',
      userId: 1,
      route: '/v1/image',
    });
    const error = await meter.holdUpFront().then(
      () => assert.fail('the hold should be refused'),
      (caught: unknown) => caught,
    );
    assert.ok(error instanceof HttpError);
    assert.equal(error.status, 403);
    assert.deepEqual(error.body, { message: 'You do not have enough credits to perform this action.', product: 'extraction', required: OPERATION_DEFAULTS.image, balance: 2 });
  });

  test('a check before the work (a job that cannot pay one page) names the same fields', async () => {
    const meter = new RequestMeter({
      billing: { product: 'scraping', operation: 'crawl_page', units: () => 0 },
      input: {},
      prices: OPERATION_DEFAULTS,
      ledger: ledger(0),
      requestId: 'r2',
      userId: 1,
      route: '/v1/crawl',
    });
    await meter.holdUpFront();
    const error = await meter.shortOf(1);
    assert.deepEqual(error.body, { message: 'You do not have enough credits to perform this action.', product: 'scraping', required: OPERATION_DEFAULTS.crawl_page, balance: 0 });
  });

  test('the OpenAPI document describes the 403 of a billed route with those fields', () => {
    const doc = buildOpenApi([crawlEndpoint], { version: 'test' });
    const forbidden = (doc.paths['/v1/crawl']!.post as { responses: Record<string, any> }).responses[403];
    assert.equal(forbidden.content['application/json'].schema.$ref, '#/components/schemas/CreditsError');
    assert.deepEqual(doc.components.schemas.CreditsError.required, ['message', 'product', 'required', 'balance']);
    assert.ok('expected' in doc.components.schemas.ValidationError.properties);
  });
});
