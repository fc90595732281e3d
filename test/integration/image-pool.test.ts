import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Worker as TesseractWorker } from 'tesseract.js';
import { spawnEngine } from '../../src/extract/image/engine.ts';
import { engineImage, normalizeImage } from '../../src/extract/image/normalize.ts';
import { OcrBusyError, OcrClosedError } from '../../src/extract/image/outcome.ts';
import { createOcrPool } from '../../src/extract/image/pool.ts';
import type { OcrPool, PoolOptions, SpawnEngine } from '../../src/extract/image/pool.ts';
import { canRenderText, characterErrorRate, corruptBytes, renderTextImage, SAMPLE_LINES } from '../support/image-fixtures.ts';

/**
 * The pool with real engines (one worker each, small images, to stay light on a 2-core machine):
 * failures, time limits, aborts, crashes and recycling all replace the engine and the pool goes on.
 */

const fontsMissing = !(await canRenderText());
const skip = fontsMissing ? 'no font renders text here (install fonts-dejavu-core)' : false;

const pools: OcrPool[] = [];
function pool(options: Partial<PoolOptions> = {}, spawn?: SpawnEngine): OcrPool {
  const created = createOcrPool({ workers: 1, recycleAfter: 200, maxQueue: 16, ...options }, spawn);
  pools.push(created);
  return created;
}

/** A spawn function that also hands each engine to the test, to kill it from outside. */
function recordingSpawn(): { spawn: SpawnEngine; engines: TesseractWorker[] } {
  const engines: TesseractWorker[] = [];
  const spawn: SpawnEngine = async (onCrash) => {
    const engine = await spawnEngine(onCrash);
    engines.push(engine);
    return engine;
  };
  return { spawn, engines };
}

async function until(condition: () => boolean, what: string): Promise<void> {
  for (let waited = 0; !condition(); waited += 20) {
    if (waited > 20_000) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('OCR pool', { skip }, () => {
  let image: Buffer;
  const expected = SAMPLE_LINES.join('\n');

  before(async () => {
    const normalized = await normalizeImage(await renderTextImage(SAMPLE_LINES), {
      maxInputPixels: 50_000_000,
      maxSide: 4000,
      timeoutMs: 10_000,
    });
    assert.equal(normalized.kind, 'ok');
    image = engineImage(normalized);
  });

  after(async () => {
    await Promise.all(pools.map((created) => created.close()));
  });

  test('reads an image and reports confidence and line boxes', async () => {
    const ocr = pool();
    await ocr.warm();
    const result = await ocr.recognize({ image, timeoutMs: 20_000 });
    assert.equal(result.kind, 'ok');
    assert.ok(characterErrorRate(result.text, expected) <= 0.02, result.text);
    assert.ok(result.confidence > 80);
    assert.match(result.tsv, /^4\t/m);
    assert.deepEqual(ocr.stats(), { workers: 1, idle: 1, queued: 0, started: 1, recycled: 0, replaced: 0 });
  });

  test('an image the engine cannot read fails that job only; the engine is replaced and work goes on', async () => {
    const ocr = pool();
    const bad = await ocr.recognize({ image: corruptBytes(), timeoutMs: 20_000 });
    assert.equal(bad.kind, 'failed');
    assert.match(bad.reason, /read image/i);
    const good = await ocr.recognize({ image, timeoutMs: 20_000 });
    assert.equal(good.kind, 'ok');
    assert.equal(ocr.stats().replaced, 1);
    assert.equal(ocr.stats().started, 2);
  });

  test('a job past its time limit ends as timeout and its engine is terminated and replaced', async () => {
    const { spawn, engines } = recordingSpawn();
    const ocr = pool({}, spawn);
    const result = await ocr.recognize({ image, timeoutMs: 1 });
    assert.deepEqual(result, { kind: 'timeout' });
    const good = await ocr.recognize({ image, timeoutMs: 20_000 });
    assert.equal(good.kind, 'ok');
    assert.equal(engines.length, 2, 'a second engine was started');
    assert.notEqual(engines[0], engines[1]);
    assert.equal(ocr.stats().replaced, 1);
  });

  test('engines are recycled after recycleAfter jobs', async () => {
    const ocr = pool({ recycleAfter: 2 });
    for (let job = 1; job <= 5; job += 1) {
      const result = await ocr.recognize({ image, timeoutMs: 20_000 });
      assert.equal(result.kind, 'ok', `job ${job}`);
    }
    // Jobs 1-2 on the first engine, 3-4 on the second, 5 on the third.
    const stats = ocr.stats();
    assert.equal(stats.recycled, 2);
    assert.equal(stats.started, 3);
    assert.equal(stats.replaced, 0);
  });

  test('past maxQueue waiting jobs, new ones are refused with OcrBusyError', async () => {
    const ocr = pool({ maxQueue: 1 });
    await ocr.warm();
    const running = ocr.recognize({ image, timeoutMs: 20_000 });
    const waiting = ocr.recognize({ image, timeoutMs: 20_000 });
    await assert.rejects(ocr.recognize({ image, timeoutMs: 20_000 }), OcrBusyError);
    assert.equal(ocr.hasCapacity(), false);
    // A second pass of an admitted request is never refused.
    const continuation = ocr.recognize({ image, timeoutMs: 20_000, continuation: true });
    const results = await Promise.all([running, waiting, continuation]);
    assert.deepEqual(results.map((result) => result.kind), ['ok', 'ok', 'ok']);
    assert.equal(ocr.hasCapacity(), true);
  });

  test('aborting a waiting job removes it from the queue; aborting a running one replaces its engine', async () => {
    const ocr = pool();
    await ocr.warm();
    const runningAbort = new AbortController();
    const waitingAbort = new AbortController();
    const running = ocr.recognize({ image, timeoutMs: 20_000, signal: runningAbort.signal });
    const waiting = ocr.recognize({ image, timeoutMs: 20_000, signal: waitingAbort.signal });
    await until(() => ocr.stats().queued === 1, 'the second job to wait');

    waitingAbort.abort(new Error('client went away'));
    await assert.rejects(waiting, /client went away/);
    assert.equal(ocr.stats().queued, 0);

    runningAbort.abort();
    await assert.rejects(running, { name: 'AbortError' });
    await until(() => ocr.stats().idle === 1, 'the replacement engine');
    assert.equal(ocr.stats().replaced, 1);
    assert.equal((await ocr.recognize({ image, timeoutMs: 20_000 })).kind, 'ok');
  });

  test('an engine whose thread dies while idle is replaced', async () => {
    const { spawn, engines } = recordingSpawn();
    const ocr = pool({}, spawn);
    await ocr.warm();
    await engines[0].terminate(); // from outside the pool: as if the thread had crashed
    await until(() => engines.length === 2 && ocr.stats().idle === 1, 'the replacement engine');
    assert.equal(ocr.stats().replaced, 1);
    assert.equal((await ocr.recognize({ image, timeoutMs: 20_000 })).kind, 'ok');
  });

  test('an engine whose thread dies mid-job fails that job at once', async () => {
    const { spawn, engines } = recordingSpawn();
    const ocr = pool({}, spawn);
    await ocr.warm();
    const result = ocr.recognize({ image, timeoutMs: 20_000 });
    await until(() => ocr.stats().idle === 0, 'the job to start');
    await engines[0].terminate();
    const failed = await result;
    assert.equal(failed.kind, 'failed');
    assert.match(failed.reason, /crashed/);
    assert.equal((await ocr.recognize({ image, timeoutMs: 20_000 })).kind, 'ok');
  });

  test('close rejects running and waiting jobs and refuses new ones', async () => {
    const ocr = pool();
    await ocr.warm();
    const running = ocr.recognize({ image, timeoutMs: 20_000 });
    const waiting = ocr.recognize({ image, timeoutMs: 20_000 });
    await until(() => ocr.stats().idle === 0 && ocr.stats().queued === 1, 'one job running, one waiting');
    await ocr.close();
    await assert.rejects(running, OcrClosedError);
    await assert.rejects(waiting, OcrClosedError);
    await assert.rejects(ocr.recognize({ image, timeoutMs: 20_000 }), OcrClosedError);
  });
});
