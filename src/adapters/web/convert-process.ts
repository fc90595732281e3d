/**
 * Conversion process: reads one HTML page's extraction rules, trims it by its selectors, and
 * turns it into its main content (Markdown or text) and its links, with the pure functions of
 * formats.ts. A page that takes too long, or needs more memory than the process's heap limit,
 * only ever takes this process down; the pool replaces it (converter.ts).
 */
import type { ConvertTask } from './converter.ts';
import { convertPage, type ConvertedPage } from './formats.ts';

/**
 * Converted once while the process starts (the pool hands it no page before this module has
 * loaded): the first conversion of cold code takes several times as long as the next (about
 * 80 ms against 10 ms for a small article), and a process that replaces one ended by the time
 * limit would otherwise spend that on a caller's page, under the caller's limit.
 */
const WARM_UP_PAGE =
  '<!DOCTYPE html><html><head><title>Warm-up</title></head><body><nav><a href="/">Home</a></nav><article><h1>Warm-up</h1>' +
  '<p>A paragraph long enough to be taken as an article, with <a href="/link">a link</a>, <em>emphasis</em> and <code>code</code>. '.repeat(6) +
  '</p><h2>List and table</h2><ul><li>one</li><li>two</li></ul><table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>' +
  '<pre><code>let x = 1;</code></pre></article><footer>Footer</footer></body></html>';
for (const format of ['markdown', 'text'] as const) convertPage(WARM_UP_PAGE, 'http://warm-up.invalid/', { format, links: true });
convertPage(WARM_UP_PAGE, 'http://warm-up.invalid/', { format: 'raw', links: false, includeSelectors: ['article'], excludeSelectors: ['table'], extractRules: { title: 'h1', items: { selector: 'li', all: true } } });

export default function runConvertTask(task: ConvertTask): ConvertedPage {
  return convertPage(task.html, task.pageUrl, task);
}
