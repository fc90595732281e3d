/**
 * /v1/web's conversion processes (src/adapters/web/converter.ts): the same answers as the pure
 * functions, the main thread free while a page converts, the time limit, aborts, the heap limit,
 * and the settings that size them.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { parseHTML } from 'linkedom';
import { createPageConverter, type PageConverter } from '../../src/adapters/web/converter.ts';
import { convertersClosedAfter } from '../support/converters.ts';
import { convertPage, elementsByTagNames, extractLinks, renderContent } from '../../src/adapters/web/formats.ts';
import { webCapability } from '../../src/adapters/web/index.ts';
import { ConfigError, envReader } from '../../src/core/env.ts';
import { articlePage, largeArticlePage } from '../support/web-fixtures.ts';

const PAGE_URL = 'https://site.example/blog/post';
/** Seconds of conversion on any machine: every ordering below has that much room. */
const large = largeArticlePage(4 * 1024 * 1024);
const small = articlePage();

const converter = convertersClosedAfter();

/** Resolves once the pool reports a conversion running in a process. */
async function converting(pool: PageConverter): Promise<void> {
  while (pool.stats().busy === 0) await new Promise((resolve) => setTimeout(resolve, 5));
}

describe('conversion processes', () => {
  test('answer exactly what the functions answer on the calling thread', async () => {
    const pool = converter({ processes: 1 });
    for (const options of [
      { format: 'markdown', links: true },
      { format: 'text', links: false },
      { format: 'raw', links: true },
    ] as const) {
      const outcome = await pool.convert({ html: small, pageUrl: PAGE_URL, ...options });
      assert.deepEqual(outcome, { kind: 'ok', page: convertPage(small, PAGE_URL, options) }, options.format);
    }
  });

  test('the main thread keeps running while a large page converts', async () => {
    const pool = converter({ processes: 1 });
    const order: string[] = [];
    const conversion = pool.convert({ html: large, pageUrl: PAGE_URL, format: 'markdown', links: true }).then((outcome) => {
      order.push('converted');
      return outcome;
    });
    await converting(pool);
    // A timer set while the page is in its process fires before the page is done: on the calling
    // thread the conversion would hold the event loop until the end.
    await new Promise((resolve) => setTimeout(resolve, 0));
    order.push('timer');
    assert.equal(pool.stats().busy, 1, 'still converting when the timer fired');
    const outcome = await conversion;
    assert.deepEqual(order, ['timer', 'converted']);
    assert.equal(outcome.kind, 'ok');
    assert.ok(outcome.kind === 'ok' && outcome.page.content?.startsWith('# Big\n\n## Section 0\n\nParagraph text with [a link](https://site.example/l0)'));
    assert.equal(outcome.kind === 'ok' && outcome.page.links?.length, large.match(/<h2>/g)!.length);
  });

  test('a page past the time limit ends as time_limit, and the replacement process converts the next one', async () => {
    const pool = converter({ processes: 1, timeoutMs: 50 });
    assert.deepEqual(await pool.convert({ html: large, pageUrl: PAGE_URL, format: 'markdown', links: false }), { kind: 'time_limit' });
    assert.deepEqual(await pool.convert({ html: large, pageUrl: PAGE_URL, format: 'raw', links: true }), { kind: 'time_limit' });
    assert.equal((await pool.convert({ html: '<p>short</p>', pageUrl: PAGE_URL, format: 'text', links: false })).kind, 'ok');
    assert.deepEqual(pool.stats(), { processes: 1, busy: 0, queued: 0, recycled: 0 });
  });

  test('an abort ends the process at work (not only the wait for it) and takes a queued page out of the queue', async () => {
    const pool = converter({ processes: 1 });
    const untouched = converter({ processes: 1 });
    const running = new AbortController();
    const queued = new AbortController();
    const first = pool.convert({ html: large, pageUrl: PAGE_URL, format: 'markdown', links: false }, running.signal);
    const second = pool.convert({ html: large, pageUrl: PAGE_URL, format: 'markdown', links: false }, queued.signal);
    // The same page on a pool of its own, started together: the pace a process left alone keeps.
    let referenceDone = false;
    const reference = untouched.convert({ html: large, pageUrl: PAGE_URL, format: 'markdown', links: false }).then(() => (referenceDone = true));
    await converting(pool);
    assert.equal(pool.stats().queued, 1);
    queued.abort(new Error('client went away'));
    await assert.rejects(second, /client went away/);
    assert.equal(pool.stats().queued, 0);
    running.abort(new Error('client went away'));
    await assert.rejects(first, /client went away/);
    // The next page gets a fresh process at once: had the aborted page kept its process, this one
    // would wait for it, and finish after the reference.
    const next = await pool.convert({ html: small, pageUrl: PAGE_URL, format: 'text', links: false });
    assert.equal(next.kind, 'ok');
    assert.equal(referenceDone, false, 'the next page was answered while the same page, left alone, was still converting');
    await reference;
    // An abort before the call rejects at once.
    await assert.rejects(pool.convert({ html: small, pageUrl: PAGE_URL, format: 'text', links: false }, AbortSignal.abort(new Error('gone'))), /gone/);
  });

  test('a page that needs more than the heap limit ends as out_of_memory', async () => {
    const pool = converter({ processes: 1, maxHeapMb: 64 });
    assert.deepEqual(await pool.convert({ html: largeArticlePage(8 * 1024 * 1024), pageUrl: PAGE_URL, format: 'markdown', links: false }), { kind: 'out_of_memory' });
    assert.equal((await pool.convert({ html: small, pageUrl: PAGE_URL, format: 'markdown', links: false })).kind, 'ok');
  });

  test('past maxQueue pages waiting, a page is refused at once (queue_full); room comes back as pages finish', async () => {
    const pool = converter({ processes: 1, maxQueue: 1 });
    const controller = new AbortController();
    const running = pool.convert({ html: large, pageUrl: PAGE_URL, format: 'markdown', links: false }, controller.signal);
    await converting(pool);
    assert.equal(pool.hasCapacity(), true, 'one process busy, nothing waiting');
    const waiting = pool.convert({ html: small, pageUrl: PAGE_URL, format: 'text', links: false });
    assert.equal(pool.hasCapacity(), false);
    assert.deepEqual(await pool.convert({ html: small, pageUrl: PAGE_URL, format: 'text', links: false }), { kind: 'queue_full' });
    assert.deepEqual(pool.stats(), { processes: 1, busy: 1, queued: 1, recycled: 0 }, 'the refused page never entered the queue');
    controller.abort(new Error('client went away'));
    await assert.rejects(running, /client went away/);
    assert.equal((await waiting).kind, 'ok');
    assert.equal(pool.hasCapacity(), true);
    assert.equal((await pool.convert({ html: small, pageUrl: PAGE_URL, format: 'text', links: false })).kind, 'ok');
  });

  test('options are checked', () => {
    assert.throws(() => createPageConverter({ maxQueue: 0 }), /maxQueue/);
    assert.throws(() => createPageConverter({ processes: 0 }), /processes/);
    assert.throws(() => createPageConverter({ timeoutMs: 0 }), /timeoutMs/);
    assert.throws(() => createPageConverter({ maxHeapMb: 16 }), /maxHeapMb/);
  });
});

describe('conversion settings', () => {
  const settings = (env: Record<string, string>) => envReader(env).read((reader) => webCapability.settings(reader));

  test('WEB_FORMAT_PROCESSES, WEB_FORMAT_TIMEOUT_MS, WEB_FORMAT_MAX_HEAP_MB and WEB_FORMAT_MAX_QUEUE, with their defaults', () => {
    assert.deepEqual(settings({}).conversion, { processes: 2, timeoutMs: 30_000, maxHeapMb: 1024, maxQueue: undefined });
    assert.deepEqual(settings({ WEB_FORMAT_PROCESSES: '3', WEB_FORMAT_TIMEOUT_MS: '5000', WEB_FORMAT_MAX_HEAP_MB: '256', WEB_FORMAT_MAX_QUEUE: '4' }).conversion, {
      processes: 3,
      timeoutMs: 5_000,
      maxHeapMb: 256,
      maxQueue: 4,
    });
  });

  test('a value that is not a positive integer stops the start, naming the variable', () => {
    for (const [variable, value] of [
      ['WEB_FORMAT_PROCESSES', '0'],
      ['WEB_FORMAT_PROCESSES', 'two'],
      ['WEB_FORMAT_TIMEOUT_MS', '-1'],
      ['WEB_FORMAT_TIMEOUT_MS', '1.5'],
      ['WEB_FORMAT_MAX_QUEUE', '0'],
      ['WEB_FORMAT_MAX_HEAP_MB', '63'],
      ['WEB_FORMAT_MAX_HEAP_MB', 'lots'],
    ]) {
      assert.throws(
        () => settings({ [variable]: value }),
        (error: unknown) => error instanceof ConfigError && error.variable === variable && error.message.includes(value),
        `${variable}=${value}`,
      );
    }
  });
});

describe('the conversion functions', () => {
  test('one call gives what renderContent and extractLinks give', () => {
    const { metadata, ...page } = convertPage(small, PAGE_URL, { format: 'markdown', links: true });
    assert.deepEqual(page, {
      links: extractLinks(small, PAGE_URL),
      content: renderContent(small, PAGE_URL, { format: 'markdown' }),
    });
    assert.equal(metadata?.title, 'How the meter works');
    assert.deepEqual(convertPage(small, PAGE_URL, { format: 'raw', links: false }), {});
  });

  test('the tag walk Readability uses finds what querySelectorAll finds', () => {
    const html = `${small}<template><p>inside a template</p><h2>no</h2></template><DIV><P>upper</P><section><p>deep</p><img src="x.png"></section></DIV>`;
    const { document } = parseHTML(html);
    const element = document.querySelector('main')!;
    for (const root of [document, document.body, element] as const) {
      for (const tags of [['p'], ['h1', 'h2'], ['P', 'LI', 'TD', 'DIV', 'IMG'], ['template'], ['nope']]) {
        const expected = [...root.querySelectorAll(tags.join(','))];
        assert.deepEqual(elementsByTagNames(root as never, tags), expected, `${root.nodeName} ${tags}`);
      }
    }
    // Elements the page did not parse (Readability creates them) are found too.
    const created = document.createElement('DIV');
    created.appendChild(document.createElement('P'));
    element.appendChild(created);
    assert.equal(elementsByTagNames(element as never, ['p']).length, [...element.querySelectorAll('p')].length);
  });
});
