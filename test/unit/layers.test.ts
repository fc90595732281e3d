/**
 * Layers point one way: http → mcp → endpoints → pipeline → services → capabilities/operations →
 * jobs/operations → adapters/extract → browser → accounts/credits/history/throttle/outbound/webhooks →
 * storage/validation → core.
 * A module may import from its own layer or a lower one, never a higher one (a type import counts:
 * it couples the layers just the same).
 */
import test from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

const SRC = path.resolve(import.meta.dirname, '../../src');

/** Lowest first. A file's layer is its top folder's (or its own name's, at the top level). */
const LAYERS: string[][] = [
  ['core', 'metrics'],
  ['storage', 'validation'],
  ['accounts', 'credits', 'history', 'throttle', 'outbound', 'billing', 'upstream-report', 'webhooks'],
  ['browser'],
  ['adapters', 'extract'],
  ['config.ts', 'capabilities.ts', 'operations', 'jobs', 'monitors'],
  ['services.ts'],
  ['pipeline'],
  ['endpoints'],
  // The MCP tools are served by the HTTP server (`POST /mcp`): they never reach up into it.
  ['mcp'],
  ['http'],
  ['app.ts', 'operator', 'cli'],
];

function layerOf(file: string): number {
  const top = path.relative(SRC, file).split(path.sep)[0];
  const index = LAYERS.findIndex((names) => names.includes(top));
  if (index < 0) throw new Error(`src/${top} is in no layer: add it to LAYERS in ${path.basename(import.meta.filename)}`);
  return index;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith('.ts') ? [full] : [];
  });
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\b[^'"]*?from\s+['"](\.{1,2}\/[^'"]+)['"]|import\(\s*['"](\.{1,2}\/[^'"]+)['"]\s*\)/g;

test('no module imports from a higher layer', () => {
  const violations: string[] = [];
  let edges = 0;
  for (const file of sourceFiles(SRC)) {
    const source = readFileSync(file, 'utf8');
    const own = layerOf(file);
    for (const match of source.matchAll(IMPORT)) {
      const target = path.resolve(path.dirname(file), match[1] ?? match[2]);
      if (!target.startsWith(SRC + path.sep)) continue;
      const theirs = layerOf(target);
      edges++;
      if (theirs > own) violations.push(`${path.relative(SRC, file)} imports ${path.relative(SRC, target)} (${LAYERS[own].join('/')} → ${LAYERS[theirs].join('/')})`);
    }
  }
  assert.deepEqual(violations, []);
  assert.ok(edges > 200, `only ${edges} imports seen: the pattern no longer matches the code`);
});

test('the check sees imports (it would catch a violation)', () => {
  const sample = "import type { Endpoint } from '../pipeline/endpoint.ts';\nexport { x } from './y.ts';";
  assert.deepEqual([...sample.matchAll(IMPORT)].map((m) => m[1]), ['../pipeline/endpoint.ts', './y.ts']);
});
