/**
 * `npm run client:generate`: regenerates the client's types and operation table from the
 * server's endpoint table — the same document the server serves at /openapi.json — with
 * openapi-typescript. `npm test` checks the committed files are current (test/unit/openapi-client.test.ts).
 */
import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { generateClientFiles } from './generated-files.ts';

const files = await generateClientFiles();
for (const [name, text] of Object.entries(files)) {
  writeFileSync(fileURLToPath(new URL(`../src/${name}`, import.meta.url)), text);
  console.log(`wrote client/src/${name}`);
}
