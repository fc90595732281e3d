/**
 * Bursts of /v1/pdf: the PDF queue is bounded by the memory its documents hold, not only by how
 * many wait. A burst of 500 one-page documents over two replicas is served whole (each replica
 * holds a few MB of them); a burst of large documents is shed with 503 and Retry-After once the
 * documents waiting hold the queue's byte bound. Figures: docs/reliability.md.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { startDocumentUpstream, readAnswer, type Answer } from '../support/reliability-harness.ts';
import { startTestService } from '../support/service.ts';

/** A document of `pages` text pages carrying `attachedMb` of incompressible attachment. */
async function largePdf(pages: number, attachedMb: number): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  for (let p = 0; p < pages; p++) {
    const page = doc.addPage([612, 792]);
    for (let line = 0; line < 40; line++) page.drawText(`Page ${p + 1} line ${line + 1} of a large report with an attachment`, { x: 40, y: 760 - line * 18, size: 11, font });
  }
  await doc.attach(randomBytes(attachedMb * 2 ** 20), 'data.bin', { mimeType: 'application/octet-stream' });
  return doc.save({ useObjectStreams: false });
}

/** A replica: the service in a process of its own, as deployed, with a funded user. */
interface Replica {
  url: string;
  token: string;
  child: ChildProcess;
}

if (process.argv[2] === '--replica') {
  const service = await startTestService();
  const { token } = await service.user({ extraction: 10_000 });
  console.log(JSON.stringify({ url: service.url, token }));
  process.stdin.resume();
  process.stdin.on('end', () => void service.close().then(() => process.exit(0)));
}

async function startReplica(): Promise<Replica> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--replica'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const line = await new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`replica exited (${code}) before it listened`)));
  });
  return { ...(JSON.parse(line) as { url: string; token: string }), child };
}

async function stopReplica(replica: Replica): Promise<void> {
  const exited = new Promise((resolve) => replica.child.once('exit', resolve));
  replica.child.stdin!.end();
  await exited;
}

async function post(service: { url: string }, token: string, url: string): Promise<Answer> {
  const response = await fetch(`${service.url}/v1/pdf`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ url }),
  });
  return readAnswer(response);
}

function tally(answers: Answer[]): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const answer of answers) counts[answer.status] = (counts[answer.status] ?? 0) + 1;
  return counts;
}

describe('PDF bursts', { timeout: 600_000, skip: process.argv[2] === '--replica' }, () => {
  let upstream: Awaited<ReturnType<typeof startDocumentUpstream>>;
  before(async () => {
    upstream = await startDocumentUpstream();
  });
  after(() => upstream.close());

  test('500 concurrent one-page PDFs over two replicas: every one is served, none answered 503', async () => {
    // Each replica is a process with its own PDF threads and queue, with the default bounds.
    const replicas = await Promise.all([startReplica(), startReplica()]);
    try {
      const answers = await Promise.all(
        Array.from({ length: 500 }, (_, i) => post(replicas[i % 2], replicas[i % 2].token, `${upstream.url}/files/doc.pdf`)),
      );
      assert.deepEqual(tally(answers), { 200: 500 });
    } finally {
      for (const replica of replicas) await stopReplica(replica);
    }
  });

  test('a burst of large PDFs is shed with 503 and Retry-After once the queue holds its byte bound', async () => {
    // One thread and a 64 MB bound: each 6 MB document weighs 12 MB, so about five fit at once.
    const service = await startTestService({ PDF_THREADS: '1', PDF_MAX_QUEUE_MB: '64' });
    try {
      const pdf = await largePdf(25, 6);
      upstream.serve('/hostile/large.pdf', pdf, 'application/pdf');
      const { token } = await service.user({ extraction: 100_000 });
      const answers = await Promise.all(Array.from({ length: 50 }, () => post(service, token, `${upstream.url}/hostile/large.pdf`)));
      const counts = tally(answers);
      assert.deepEqual(Object.keys(counts).sort(), ['200', '503'], JSON.stringify(counts));
      assert.ok(counts[200] >= 1, 'the first documents are served');
      for (const answer of answers.filter((a) => a.status === 503)) {
        assert.equal(answer.headers.get('retry-after'), '5');
        assert.equal((answer.body as { message?: string }).message, 'The server is busy, please retry shortly.');
      }
      assert.equal(service.services.capabilities.pdf().stats?.().heldBytes, 0, 'every admitted document let go of its weight');
    } finally {
      await service.close();
    }
  });
});
