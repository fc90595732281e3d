/**
 * A request that outlives the hold TTL keeps its hold: the process renews the holds of its
 * requests in flight, so the sweeper only returns those of a process that stopped (crash.test.ts).
 * Before, such a request was answered 200 with its hold already swept: work given away.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { startTestService, type TestService } from '../support/service.ts';
import { TEST_ENDPOINTS } from '../support/work-endpoint.ts';

let service: TestService;
before(async () => {
  service = await startTestService({ HOLD_TTL_SECONDS: '1', HOLD_SWEEP_INTERVAL_MS: '100' }, { endpoints: TEST_ENDPOINTS });
});
after(() => service.close());

test('a request running three times the hold TTL is charged once, its hold never swept', async () => {
  const user = await service.user({ scraping: 10 });
  const r = await service.call('POST', '/v1/test/work', { token: user.token, body: { cost: 4, delay_ms: 3000 } });
  assert.equal(r.status, 200);
  assert.equal(await service.services.ledger.balance(user.id, 'scraping'), 6);
  const kinds = await service.services.db.query<{ kind: string }>('SELECT kind FROM credit_ledger WHERE user_id = $1 ORDER BY id', [user.id]);
  assert.deepEqual(kinds.map((k) => k.kind), ['grant', 'hold', 'capture']);
  const history = await service.call('GET', '/requests', { token: user.token });
  assert.deepEqual([history.body.data[0].status, history.body.data[0].credits], [200, 4]);
});
