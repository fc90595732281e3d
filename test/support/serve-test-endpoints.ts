/**
 * A server process with the test work endpoint, for tests that need separate processes
 * (SIGKILL while holding credits; two servers sharing PostgreSQL and Redis).
 * Configured by the environment like `gleaner serve`; prints `LISTENING <url>` when ready.
 */
import { loadConfig } from '../../src/config.ts';
import { startService } from '../../src/app.ts';
import { TEST_ENDPOINTS } from './work-endpoint.ts';

const service = await startService(loadConfig(), { endpoints: TEST_ENDPOINTS, logger: false, bootstrapOwner: false });
process.stdout.write(`LISTENING ${service.url}\n`);
process.once('SIGTERM', () => {
  service.close().then(
    () => process.exit(0),
    (error: unknown) => {
      console.error('closing the test server failed:', error);
      process.exit(1);
    },
  );
});
