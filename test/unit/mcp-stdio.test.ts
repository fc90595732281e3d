/** `gleaner mcp`'s options (src/mcp/stdio.ts): the token and the server's URL, checked before anything starts. */
import test from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_GLEANER_URL, McpUsageError, stdioOptions } from '../../src/mcp/stdio.ts';

test('the token comes from --token, --token=, or GLEANER_TOKEN; the URL from GLEANER_URL', () => {
  assert.deepEqual(stdioOptions(['--token', '1|abc'], {}, '0.1.0'), { url: `${DEFAULT_GLEANER_URL}/`, token: '1|abc', version: '0.1.0' });
  assert.equal(stdioOptions(['--token=2|def'], { GLEANER_TOKEN: '1|abc' }, 'v').token, '2|def');
  assert.equal(stdioOptions([], { GLEANER_TOKEN: ' 1|abc ' }, 'v').token, '1|abc');
  assert.equal(stdioOptions([], { GLEANER_TOKEN: 't', GLEANER_URL: 'https://api.example.com/base' }, 'v').url, 'https://api.example.com/base');
});

test('a missing token, an unknown option or a bad URL is a usage error naming what to fix', () => {
  assert.throws(() => stdioOptions([], {}, 'v'), (error: Error) => error instanceof McpUsageError && /--token <token> or GLEANER_TOKEN/.test(error.message));
  assert.throws(() => stdioOptions(['--token'], {}, 'v'), /--token needs a value/);
  assert.throws(() => stdioOptions(['--tokn', 'x'], { GLEANER_TOKEN: 't' }, 'v'), /Unknown option: --tokn/);
  assert.throws(() => stdioOptions([], { GLEANER_TOKEN: 't', GLEANER_URL: 'localhost:8080' }, 'v'), /GLEANER_URL must be an http or https URL/);
  assert.throws(() => stdioOptions([], { GLEANER_TOKEN: 't', GLEANER_URL: 'not a url' }, 'v'), /GLEANER_URL must be the server's URL/);
});
