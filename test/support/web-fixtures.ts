/** Pages for the /v1/web tests, written here (no corpus copies). */

export const ARTICLE_HEADINGS = ['How the meter works', 'Holding credits', 'Capturing the cost'];
export const ARTICLE_PARAGRAPHS = [
  'Every request holds its maximum cost before any work starts, so that two requests racing for the last credits cannot both win and the balance never goes below zero.',
  'The hold is a ledger row keyed by the request id. A retry of the same request finds the row and holds nothing more, which is what makes retries safe for clients.',
  'After the work the actual cost is captured and the rest is released. A failure releases everything: nothing is charged for an answer the client could not use.',
  'Crashed processes leave holds behind; those expire after a time-out, while the holds of live requests are renewed for as long as the work goes on.',
];
/** Words that only appear in the site chrome around the article. */
export const CHROME_TEXTS = ['Home page link', 'Pricing menu', 'Sidebar advert', 'Related reading box', 'Copyright notice', 'Cookie banner text'];

export function articlePage(): string {
  return `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>How the meter works</title>
<style>body { font-family: sans-serif }</style><script>window.tracking = true;</script></head>
<body>
<header><nav><a href="/">Home page link</a> <a href="/pricing">Pricing menu</a></nav></header>
<div class="cookie">Cookie banner text</div>
<main>
<article>
<h1>How the meter works</h1>
<p>${ARTICLE_PARAGRAPHS[0]}</p>
<h2>Holding credits</h2>
<p>${ARTICLE_PARAGRAPHS[1]} See <a href="second">the second post</a> for more.</p>
<ul><li>first point</li><li>second point</li></ul>
<h2>Capturing the cost</h2>
<p>${ARTICLE_PARAGRAPHS[2]}</p>
<table><thead><tr><th>Plan</th><th>Credits</th></tr></thead><tbody><tr><td>Starter</td><td>1000</td></tr></tbody></table>
<pre><code>const answer = 42;</code></pre>
<p>${ARTICLE_PARAGRAPHS[3]}</p>
</article>
</main>
<aside><h3>Related reading box</h3><p>Sidebar advert</p></aside>
<footer><p>Copyright notice</p></footer>
</body></html>`;
}

/**
 * An article of at least `bytes` characters (headings, paragraphs with links, lists): the page
 * the conversion tests and bench/web.ts use to make Markdown take seconds.
 */
export function largeArticlePage(bytes: number): string {
  const section = (i: number) =>
    `<h2>Section ${i}</h2><p>${`Paragraph text with <a href="/l${i}">a link</a> and some words to read. `.repeat(12)}</p><ul><li>item one</li><li>item two</li></ul>`;
  const sections: string[] = [];
  let length = 0;
  for (let i = 0; length < bytes; i += 1) {
    const next = section(i);
    sections.push(next);
    length += next.length;
  }
  return `<!DOCTYPE html><html><head><title>Big</title></head><body><nav>menu</nav><article><h1>Big</h1>${sections.join('')}</article><footer>foot</footer></body></html>`;
}
