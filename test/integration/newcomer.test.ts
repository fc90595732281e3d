/**
 * A newcomer follows the README literally: its "Try it on your machine" section is read, and its
 * shell blocks run as written, in a fresh copy of the project (package.json, bin/, src/, the
 * README) that reuses this tree's node_modules, with no DATA_DIR: the server creates ./data there
 * as it would in a new clone. Each command's output is compared with the block the README shows
 * after it. The test fails when a command or an output in the README is wrong.
 *
 * What is not literal: `npm install` is skipped here (CI runs it on a clean clone and then this
 * test inside that clone, with NEWCOMER_IN_PLACE=1: .ci/run, quick start); the ports are free ones
 * instead of 8080 and 8000 (PORT for the server, the page's port replaced in the commands); and
 * a command ending in `&` runs in the background, the next one waiting for the port it listens on,
 * as a person typing would.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const ROOT = path.resolve(import.meta.dirname, '../..');
const README = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
/** The sample values the README shows, which the real ones replace. */
const SAMPLE_TOKEN = /\d+\|[A-Za-z0-9]{40}/;
const SAMPLE_SECRET = /[A-Za-z0-9]{48}/;

interface Block {
  lang: string;
  text: string;
}

/** The fenced blocks of the README's section `heading`, in order. */
function sectionBlocks(heading: string): Block[] {
  const section = README.split(/^## /m).find((part) => part.startsWith(`${heading}\n`));
  assert.ok(section, `the README has a "## ${heading}" section`);
  return [...section.matchAll(/^```(\w*)\n([\s\S]*?)^```$/gm)].map((match) => ({ lang: match[1]!, text: match[2]! }));
}

const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A line the README shows, as a pattern: its sample token captured, its sample secret any secret. */
function linePattern(line: string): RegExp {
  const parts = line.split(new RegExp(`(${SAMPLE_TOKEN.source}|${SAMPLE_SECRET.source})`));
  const source = parts.map((part, index) => (index % 2 === 0 ? escape(part) : part.includes('|') ? `(${SAMPLE_TOKEN.source})` : SAMPLE_SECRET.source)).join('');
  return new RegExp(`^${source}$`, 'm');
}

/** A block's commands: one per line, a line ending in `\` continued on the next. */
function commands(block: Block): string[] {
  return block.text
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('#'));
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

async function listening(port: number, deadline: number): Promise<void> {
  for (;;) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = connect(port, 'localhost', () => {
        socket.end();
        resolve(true);
      });
      socket.on('error', () => resolve(false));
    });
    if (open) return;
    if (Date.now() > deadline) throw new Error(`nothing listens on port ${port}`);
    await sleep(100);
  }
}

/** The project as a new clone holds it, with this tree's node_modules; or this very tree (NEWCOMER_IN_PLACE=1). */
function projectFolder(): { dir: string; remove(): void } {
  if (process.env.NEWCOMER_IN_PLACE === '1') return { dir: ROOT, remove: () => {} };
  const parent = mkdtempSync(path.join(tmpdir(), 'gleaner-newcomer-'));
  const dir = path.join(parent, 'gleaner');
  for (const entry of ['package.json', 'package-lock.json', 'README.md', 'bin', 'src']) cpSync(path.join(ROOT, entry), path.join(dir, entry), { recursive: true });
  symlinkSync(path.join(ROOT, 'node_modules'), path.join(dir, 'node_modules'), 'dir');
  return { dir, remove: () => rmSync(parent, { recursive: true, force: true }) };
}

const project = projectFolder();
const background: ChildProcess[] = [];

after(async () => {
  for (const child of background) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // Each runs in its own process group: npm, the shell and the server under it stop together.
    process.kill(-child.pid!, 'SIGTERM');
    // Unreferenced: a pending timer would keep this process alive after the test.
    await Promise.race([exited, sleep(30_000, undefined, { ref: false })]);
    if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid!, 'SIGKILL');
  }
  if (process.env.NEWCOMER_IN_PLACE === '1') rmSync(path.join(ROOT, 'data'), { recursive: true, force: true });
  project.remove();
});

// The README's commands use curl, as a newcomer would.
const skip = spawnSync('curl', ['--version']).status === 0 ? false : 'no curl on this machine';

test('the README, followed literally on a new copy: install, start, try it locally, first scrape', { timeout: 240_000, skip }, async () => {
  const blocks = sectionBlocks('Try it on your machine');
  assert.deepEqual(
    blocks.map((block) => block.lang),
    ['sh', 'text', 'sh', 'text', 'sh', 'json'],
    'the section runs: start, its output, credits, their output, the first scrape, its answer',
  );
  const [start, started, credits, granted, scrape, answer] = blocks as [Block, Block, Block, Block, Block, Block];
  assert.ok(!existsSync(path.join(project.dir, 'data')), 'no ./data yet: the first start creates it');

  const apiPort = await freePort();
  const pagePort = await freePort();
  const env: NodeJS.ProcessEnv = { ...process.env, PORT: String(apiPort), LOG_LEVEL: 'warn' };
  for (const name of ['DATA_DIR', 'DATABASE_URL', 'REDIS_URL', 'OUTBOUND_ALLOW_HOSTS', 'npm_lifecycle_event', 'npm_config_loglevel']) delete env[name];
  /** The README's command with this run's ports. */
  const literal = (command: string) => command.replaceAll('localhost:8080', `localhost:${apiPort}`).replaceAll('8000', String(pagePort));
  const run = (command: string) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
      const child = spawn('bash', ['-c', literal(command)], { cwd: project.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
  const runInBackground = (command: string) => {
    const child = spawn('bash', ['-c', literal(command.replace(/&$/, ''))], { cwd: project.dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    background.push(child);
    let output = '';
    child.stdout!.on('data', (chunk) => (output += chunk));
    child.stderr!.on('data', (chunk) => (output += chunk));
    return { child, output: () => output };
  };

  // 1. Install and start.
  const startCommands = commands(start);
  assert.equal(startCommands[0], 'npm install', 'the section starts with the install');
  assert.equal(startCommands.length, 2, 'then one command starts the server');
  const server = runInBackground(startCommands[1]!);
  const deadline = Date.now() + 180_000;
  for (;;) {
    if (server.child.exitCode !== null) assert.fail(`"${startCommands[1]}" exited with ${server.child.exitCode}:\n${server.output()}`);
    if (Date.now() > deadline) assert.fail(`"${startCommands[1]}" did not answer /health within 180 s:\n${server.output()}`);
    const health = await fetch(`http://localhost:${apiPort}/health`).catch(() => null);
    if (health?.ok && /Give it credits with/.test(server.output())) break;
    await sleep(250);
  }
  // What it printed, line for line, the token and the secret key being this start's own.
  const printed = server.output();
  let token = '';
  for (const line of started.text.trimEnd().split('\n')) {
    const found = linePattern(line).exec(printed);
    assert.ok(found, `the README shows "${line}", the start printed:\n${printed}`);
    if (found[1]) token = found[1];
  }
  assert.match(token, SAMPLE_TOKEN, 'the start printed the API token');

  // 2. Keep the token, give credits: the same output.
  const sampleToken = SAMPLE_TOKEN.exec(credits.text)?.[0];
  assert.ok(sampleToken, 'the README sets TOKEN to the token the start printed');
  for (const command of commands(credits)) {
    const exported = /^export (\w+)='([^']*)'$/.exec(command);
    if (exported) {
      env[exported[1]!] = exported[2]!.replace(sampleToken, token);
      continue;
    }
    const result = await run(command);
    assert.equal(result.code, 0, `${command}:\n${result.stdout}${result.stderr}`);
    assert.equal(result.stdout.trimEnd(), granted.text.trimEnd(), `what "${command}" prints`);
  }
  assert.equal(env.TOKEN, token);

  // 3. A page of one's own, fetched through gleaner as Markdown.
  let scraped = '';
  for (const command of commands(scrape)) {
    if (command.endsWith('&')) {
      runInBackground(command);
      await listening(pagePort, Date.now() + 15_000);
      continue;
    }
    const result = await run(command);
    assert.equal(result.code, 0, `${command}:\n${result.stderr}`);
    scraped += result.stdout;
  }
  const body = JSON.parse(scraped);
  const expected = answer.text.trim();
  const field = (name: string) => {
    const value = new RegExp(`"${name}":("(?:[^"\\\\]|\\\\.)*"|\\d+)`).exec(expected)?.[1];
    assert.ok(value !== undefined, `the README's answer shows "${name}"`);
    return JSON.parse(literal(value));
  };
  assert.equal(body.response.url, field('url'));
  assert.equal(body.response.status_code, field('status_code'));
  assert.equal(body.response.content, field('content'), 'the content the README shows');
  for (const key of Object.keys(JSON.parse(expected.replaceAll('{…}', '{}')).response)) assert.ok(key in body.response, `the answer has "${key}"`);

  // 4. "That request cost 1 credit: … shows 999 left."
  assert.match(README, /That request cost 1 credit: `curl -s localhost:8080\/me -H "Authorization: Bearer \$TOKEN"` shows\s+999 left/);
  const me = await run('curl -s localhost:8080/me -H "Authorization: Bearer $TOKEN"');
  assert.equal(JSON.parse(me.stdout).user.balances.scraping, 999);
});
