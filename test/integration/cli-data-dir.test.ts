/**
 * Newcomer friction on the command line: an operator command pointed at a DATA_DIR with no
 * server and no database says so (and how to fix it) instead of creating an empty database, and
 * bin/gleaner started by a Node older than 24 says which Node it needs.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';

const BIN = new URL('../../bin/gleaner', import.meta.url).pathname;

async function gleaner(nodePath: string, env: Record<string, string>, ...args: string[]) {
  const base: NodeJS.ProcessEnv = { ...process.env, LOG_LEVEL: 'silent', ...env };
  delete base.DATABASE_URL;
  return promisify(execFile)(nodePath, [BIN, ...args], { env: base }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

test('a command on a DATA_DIR without server or database creates nothing and says how to point it', async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gleaner-nodb-')), 'data');
  try {
    const result = await gleaner(process.execPath, { DATA_DIR: dataDir }, 'credits', 'show', '--user', '1', '--json');
    assert.equal(result.code, 1);
    const { error } = JSON.parse(result.stdout);
    assert.match(error, new RegExp(`^No gleaner server or database was found in DATA_DIR=${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\.`));
    assert.match(error, /DATABASE_URL/);
    assert.match(error, /gleaner migrate/);
    assert.equal(existsSync(dataDir), false, 'nothing was created');

    const plain = await gleaner(process.execPath, { DATA_DIR: dataDir }, 'users', 'list');
    assert.equal(plain.code, 1);
    assert.match(plain.stderr, /^No gleaner server or database was found/);
    assert.equal(existsSync(dataDir), false);
  } finally {
    rmSync(join(dataDir, '..'), { recursive: true, force: true });
  }
});

test('`gleaner migrate` still creates the database on purpose', async () => {
  const dataDir = join(mkdtempSync(join(tmpdir(), 'gleaner-migrate-')), 'data');
  try {
    const result = await gleaner(process.execPath, { DATA_DIR: dataDir }, 'migrate', '--json');
    assert.equal(result.code, 0, result.stderr);
    assert.ok(JSON.parse(result.stdout).applied.length > 0);
    assert.ok(readdirSync(join(dataDir, 'pg')).includes('PG_VERSION'));
    const list = await gleaner(process.execPath, { DATA_DIR: dataDir }, 'users', 'list', '--json');
    assert.equal(list.code, 0, list.stderr);
  } finally {
    rmSync(join(dataDir, '..'), { recursive: true, force: true });
  }
});

/** A Node older than 24 on this machine (Debian's, for instance), if there is one. */
function olderNode(): string | undefined {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    if (!existsSync(candidate)) continue;
    const major = Number(execFileSync(candidate, ['-p', 'process.versions.node.split(".")[0]'], { encoding: 'utf8' }).trim());
    if (major < 24) return candidate;
  }
  return undefined;
}
const old = olderNode();

test('bin/gleaner run by an older Node says which Node it needs', { skip: old ? false : 'no Node older than 24 on this machine' }, async () => {
  const result = await gleaner(old!, {}, '--help');
  assert.equal(result.code, 1);
  assert.match(result.stderr, /^gleaner needs Node\.js 24 or newer; this is Node\.js v\d+/);
  assert.match(result.stderr, /npm run gleaner -- <command>/);
});
