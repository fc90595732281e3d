/** The Markdown rules of /v1/web (src/adapters/web/extract/markdown.ts), one by one. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { convertPage } from '../../src/adapters/web/formats.ts';

const PAGE_URL = 'https://site.example/blog/post';
/** The whole page as Markdown (no main-content choice), so each rule is seen alone. */
const markdown = (body: string, options: { linksInline?: boolean; title?: string } = {}) =>
  convertPage(`<!DOCTYPE html><html><head>${options.title ? `<title>${options.title}</title>` : ''}</head><body>${body}</body></html>`, PAGE_URL, {
    format: 'markdown',
    links: false,
    onlyMainContent: false,
    linksInline: options.linksInline,
  }).content ?? '';

const NO_HTML = /<\/?[a-z][^>]*>/i;

describe('tables', () => {
  test('a table with a header row is a GFM table', () => {
    assert.equal(markdown('<table><thead><tr><th>Plan</th><th>Credits</th></tr></thead><tbody><tr><td>Starter</td><td>1000</td></tr></tbody></table>'), '| Plan | Credits |\n| --- | --- |\n| Starter | 1000 |');
  });

  test('a table without a header row gets a generated (empty) header row, and no HTML', () => {
    const out = markdown('<table><tr><td>a</td><td>b</td></tr><tr><td>c</td><td>d</td></tr></table>');
    assert.equal(out, '| | |\n| --- | --- |\n| a | b |\n| c | d |');
    assert.doesNotMatch(out, NO_HTML);
  });

  test('colspan and rowspan are spread over the grid', () => {
    const out = markdown('<table><tr><th>h1</th><th colspan="2">h2</th></tr><tr><td rowspan="2">r</td><td>x</td><td>y</td></tr><tr><td>z</td><td>w</td></tr></table>');
    assert.equal(out, '| h1 | h2 | |\n| --- | --- | --- |\n| r | x | y |\n| | z | w |');
    assert.doesNotMatch(out, NO_HTML);
  });

  test('a table inside a cell is flattened into the cell', () => {
    const out = markdown('<table><tr><th>name</th><th>detail</th></tr><tr><td>n</td><td><table><tr><td>x</td><td>y</td></tr><tr><td>z</td></tr></table></td></tr></table>');
    assert.equal(out, '| name | detail |\n| --- | --- |\n| n | x, y; z |');
    assert.doesNotMatch(out, NO_HTML);
  });

  test('layout tables (one column or one row) are paragraphs', () => {
    assert.equal(markdown('<table><tr><td><p>first block</p></td></tr><tr><td>second block</td></tr></table>'), 'first block\n\nsecond block');
    assert.equal(markdown('<table><tr><td>left</td><td>right</td></tr></table>'), 'left\n\nright');
  });

  test("a layout table's cells keep their paragraphs and line breaks", () => {
    assert.equal(markdown('<table><tr><td>Posted: Wed</td></tr><tr><td>First paragraph.<br><br>Second paragraph.<p>Third paragraph.</p></td></tr></table>'), 'Posted: Wed\n\nFirst paragraph.\n\nSecond paragraph.\n\nThird paragraph.');
  });

  test('rows and cells left without their table (Readability turns some tables into a div) are paragraphs, with no marker left', () => {
    // The main content as Readability leaves a page laid out in nested tables.
    const html = '<div><tr><td><table><tr><td><b>Posted:</b> Wed</td></tr><tr><td>First paragraph of the story.<br><br>Second paragraph of the story.</td></tr></table></td></tr><tr><td>Last paragraph.</td></tr></div>';
    assert.equal(markdown(html), '**Posted:** Wed\n\nFirst paragraph of the story.\n\nSecond paragraph of the story.\n\nLast paragraph.');
  });

  test('pipes and line breaks inside cells keep the table whole', () => {
    assert.equal(markdown('<table><tr><th>a</th><th>b</th></tr><tr><td>x | y</td><td><p>one</p><p>two</p></td></tr></table>'), '| a | b |\n| --- | --- |\n| x \\| y | one two |');
  });
});

describe('links and images', () => {
  test('links and images are absolute', () => {
    const out = markdown('<p><a href="../other">other</a> <img src="/img/a.png" alt="A"></p>');
    assert.equal(out, '[other](https://site.example/other) ![A](https://site.example/img/a.png)');
  });

  test('linksInline false keeps the link text and drops images', () => {
    assert.equal(markdown('<p>See <a href="/x">the docs</a> <img src="/a.png" alt="A"> now</p>', { linksInline: false }), 'See the docs now');
  });

  test('empty links and data: images are dropped', () => {
    assert.equal(markdown('<p>a <a href="/x"> </a><img src="data:image/png;base64,AAAA"> b</p>'), 'a b');
  });
});

describe('code, headings, title', () => {
  test('code blocks carry their language', () => {
    assert.equal(markdown('<pre><code class="language-python">print("hi")</code></pre>'), '```python\nprint("hi")\n```');
    assert.equal(markdown('<div class="highlight-rust"><pre>fn main() {}</pre></div>'), '```rust\nfn main() {}\n```');
    assert.equal(markdown('<pre data-lang="ts">let a = 1;</pre>'), '```ts\nlet a = 1;\n```');
    assert.equal(markdown('<pre><code>plain</code></pre>'), '```\nplain\n```');
  });

  test('a code block holding backticks gets a longer fence', () => {
    assert.equal(markdown('<pre><code>a ``` b</code></pre>'), '````\na ``` b\n````');
  });

  test('no empty headings', () => {
    assert.equal(markdown('<h2> </h2><h3><a href="#x"></a></h3><p>text</p>'), 'text');
  });

  test('the title is an H1 only when the body does not start with it', () => {
    assert.equal(markdown('<p>Body</p>', { title: 'The Title' }), '# The Title\n\nBody');
    assert.equal(markdown('<h1>The Title</h1><p>Body</p>', { title: 'The Title' }), '# The Title\n\nBody');
    assert.equal(markdown('<h1>The Title</h1><p>Body</p>', { title: 'The Title | Site' }), '# The Title\n\nBody');
  });

  test('nothing is left as raw HTML', () => {
    const out = markdown('<table><caption>Cap</caption><tr><td><table><tr><td>in</td></tr></table></td><td colspan="3">c</td></tr><tr><td>d</td></tr></table><details><summary>S</summary>x</details><figure><img src="/a.png"><figcaption>F</figcaption></figure>');
    assert.doesNotMatch(out, NO_HTML);
    assert.doesNotMatch(out, /[\u0002-\u0006]/);
  });
});
