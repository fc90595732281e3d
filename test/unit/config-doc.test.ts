/**
 * docs/configuration.md is generated from the start-up checks and src/core/settings.ts
 * (`npm run docs:config`): every variable the start reads is described, every one described is
 * read, and the file says what the generator says today.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { CONFIG_DOC, CONFIG_DOC_COMMAND, renderConfigDoc, startSettings } from '../../src/cli/config-doc.ts';
import { SETTINGS, variablesOf } from '../../src/core/settings.ts';

test('every variable the start reads is described in src/core/settings.ts, and every one described is read', async () => {
  const rendered = await renderConfigDoc();
  assert.deepEqual(rendered.ok ? [] : rendered.problems, [], `fix src/core/settings.ts, then run \`${CONFIG_DOC_COMMAND}\``);
});

test(`docs/configuration.md is up to date (run \`${CONFIG_DOC_COMMAND}\` and commit it)`, async () => {
  const rendered = await renderConfigDoc();
  assert.ok(rendered.ok);
  assert.ok(readFileSync(CONFIG_DOC, 'utf8') === rendered.text, `docs/configuration.md is stale: run \`${CONFIG_DOC_COMMAND}\` and commit the result`);
});

test('the checks are read from the code: a typed setting says what it accepts', async () => {
  const checks = await startSettings();
  assert.equal(checks.get('PORT'), 'must be an integer ≥ 0');
  assert.equal(checks.get('CHAIN_RPC_ETHEREUM'), 'must be an absolute URL');
  assert.equal(checks.get('HOST'), undefined, 'HOST takes any text');
  assert.ok(checks.has('CAPTCHA_SOLVER_POLL_MS'), 'a setting read only once a solver is set is still found');
});

test('a family of variables stands for each of its members', () => {
  const rpc = SETTINGS.flatMap((group) => group.settings).find((setting) => setting.name === 'CHAIN_RPC_<NAME>');
  assert.ok(rpc);
  assert.deepEqual(variablesOf(rpc).slice(0, 2), ['CHAIN_RPC_ETHEREUM', 'CHAIN_RPC_BASE']);
});
