/**
 * docs/architecture.md is the one map of the code: every folder of src/ is in its Layout section,
 * and every layer of test/unit/layers.test.ts names its folders there.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');
const DOC = readFileSync(path.join(ROOT, 'docs/architecture.md'), 'utf8');

/** The Layout section's code block. */
function layout(): string {
  const section = DOC.split(/^## /m).find((part) => part.startsWith('Layout\n'));
  assert.ok(section, 'docs/architecture.md has a "## Layout" section');
  const block = /```\n([\s\S]*?)```/.exec(section);
  assert.ok(block, 'the Layout section holds the map in a code block');
  return block[1]!;
}

function folders(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const full = path.join(dir, entry.name);
      return [full, ...folders(full)];
    });
}

test('every folder of src/ is in the Layout section of docs/architecture.md', () => {
  const map = layout();
  const listed = new Set([...map.matchAll(/^(src\/\S+\/)/gm)].map((match) => match[1]));
  const missing = folders(path.join(ROOT, 'src'))
    .map((folder) => `${path.relative(ROOT, folder).split(path.sep).join('/')}/`)
    .filter((folder) => !listed.has(folder));
  assert.deepEqual(missing, [], 'add these folders to the Layout section of docs/architecture.md, with what they hold');
  assert.ok(listed.size > 30, `only ${listed.size} folders found: the map's format changed`);
});

test('the Layout section lists no folder that is gone', () => {
  const gone = [...layout().matchAll(/^(src\/\S+\/)/gm)].map((match) => match[1]!).filter((folder) => {
    try {
      return !readdirSync(path.join(ROOT, folder));
    } catch {
      return true;
    }
  });
  assert.deepEqual(gone, []);
});

test('every top-level file of src/ is on the map too', () => {
  const map = layout();
  const files = readdirSync(path.join(ROOT, 'src')).filter((name) => name.endsWith('.ts'));
  assert.deepEqual(files.filter((name) => !map.includes(`src/${name}`)), []);
});
