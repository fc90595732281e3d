/**
 * `npm test`: the type check, the lint, then the unit, integration and corpus tiers, as before this
 * file. What follows `--` changes that: `npm test -- --help` says what each test command runs;
 * `npm test -- test/unit/validation.test.ts …` runs those files alone (no check first); any other
 * option goes to `node --test` (`npm test -- --test-name-pattern=metering`).
 */
import { spawn } from 'node:child_process';

const TIERS = ['test/unit/**/*.test.ts', 'test/integration/**/*.test.ts', 'test/corpus/**/*.test.ts'];
const NODE_TEST = ['--test', '--test-timeout=600000'];

const HELP = `Tests (docs/testing.md):

  npm run test:unit                 the unit tier alone: parsers, messages, rules; under 3 minutes on 2 cores
  npm run test:integration          the integration tier: the real server on loopback, fake upstreams
  npm run test:corpus               parsers and extractors on recorded answers (needs CORPUS_DIR)
  npm test                          type check, lint, then the unit, integration and corpus tiers
  npm test -- <file>…               those files alone, e.g. npm test -- test/unit/validation.test.ts
  npm test -- --test-name-pattern=<regex>
                                    type check, lint, then the tests whose names match
  npm run test:scaled               the integration tier on PostgreSQL and Redis (TEST_DATABASE_URL, TEST_REDIS_URL)
  npm run test:reliability          fuzzing, hostile documents, SSRF canaries, faults under load
  npm run typecheck, npm run lint   the checks alone
`;

function run(command: string, args: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: 'inherit' });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal ? 1 : 0)));
  });
}

/** `npm run <script>`, with the npm that runs this file when there is one. */
const npmRun = (script: string) => (process.env.npm_execpath ? run(process.execPath, [process.env.npm_execpath, 'run', script]) : run('npm', ['run', script]));

async function main(args: string[]): Promise<number> {
  if (args.includes('--help') || args.includes('-h')) {
    process.stdout.write(HELP);
    return 0;
  }
  const files = args.filter((arg) => !arg.startsWith('-'));
  const options = args.filter((arg) => arg.startsWith('-'));
  if (files.length > 0) return run(process.execPath, [...NODE_TEST, '--test-concurrency=1', ...options, ...files]);
  for (const script of ['typecheck', 'lint']) {
    const code = await npmRun(script);
    if (code !== 0) return code;
  }
  return run(process.execPath, [...NODE_TEST, '--test-concurrency=2', ...options, ...TIERS]);
}

process.exitCode = await main(process.argv.slice(2));
