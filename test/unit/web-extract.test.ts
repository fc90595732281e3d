/**
 * Main-content extraction of /v1/web (src/adapters/web/extract/main-content.ts) on small pages
 * written here, one per kind of page that went wrong before: a page wrapped whole in `<form>`, a
 * short article under long comments, a listing, an article whose text is only in JSON-LD, RTL
 * and CJK pages; the precision pass after the article is found (one page per rule, German and
 * Spanish pages among them); the widening of Readability's choice to the rest of the article
 * (a second half after an ad, a lead before the chosen block, related links that stay out); and
 * the metadata object.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { convertPage } from '../../src/adapters/web/formats.ts';
import { parseDocument } from '../../src/adapters/web/extract/dom.ts';
import { findMainContent } from '../../src/adapters/web/extract/main-content.ts';

const PAGE_URL = 'https://news.example/2026/11/story';
const text = (html: string, onlyMainContent = true) => convertPage(html, PAGE_URL, { format: 'text', links: false, onlyMainContent }).content ?? '';
const markdown = (html: string) => convertPage(html, PAGE_URL, { format: 'markdown', links: false }).content ?? '';

const MENU = '<nav><ul><li><a href="/">Front page menu</a></li><li><a href="/world">World menu</a></li><li><a href="/sport">Sport menu</a></li></ul></nav>';
const FOOTER = '<footer><p>Footer legal notice</p><a href="/privacy">Privacy policy link</a></footer>';
const SIDEBAR = '<aside class="sidebar"><h3>Most read</h3><ul><li><a href="/a">Sidebar story one</a></li><li><a href="/b">Sidebar story two</a></li><li><a href="/c">Sidebar story three</a></li></ul></aside>';
const ARTICLE = [
  'The city council approved the new tram line on Tuesday after a debate that lasted more than six hours and drew hundreds of residents to the hall.',
  'Supporters said the line would cut commuting times in half for the eastern districts, where buses are crowded and often late during the winter months.',
  'Opponents argued that the cost had doubled since the first estimate and that the construction would close shops along the main street for two years.',
  'The first trams are expected to run in the spring of 2029, according to the transport department, which will publish a detailed timetable next year.',
];
const page = (body: string, head = '<title>Council approves tram line | City News</title>') => `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">${head}</head><body>${body}</body></html>`;
const paragraphs = (texts: readonly string[]) => texts.map((line) => `<p>${line}</p>`).join('');

describe('main content', () => {
  test('a page wrapped whole in <form> (ASP.NET) keeps its article', () => {
    const html = page(`<form method="post" action="./story.aspx" id="aspnetForm"><input type="hidden" name="__VIEWSTATE" value="abc">${MENU}<div id="main"><h1>Council approves tram line</h1>${paragraphs(ARTICLE)}</div>${FOOTER}</form>`);
    const out = text(html);
    for (const line of ARTICLE) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /Front page menu|Footer legal notice/);
  });

  test('a short article under long comments: the article, without the comments, never the whole page', () => {
    const comments = Array.from({ length: 12 }, (_, i) => `<div class="comment"><p class="comment-author">Reader ${i}</p><p>Comment number ${i}: I have lived in the eastern district for twenty years and I can say the buses have never been on time, so this tram is long overdue, but the price is a scandal and somebody should answer for it.</p></div>`).join('');
    const html = page(`${MENU}<article><h1>Council approves tram line</h1>${paragraphs(ARTICLE.slice(0, 2))}</article><section id="comments"><h2>Comments</h2>${comments}</section>${FOOTER}`);
    const out = text(html);
    for (const line of ARTICLE.slice(0, 2)) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /Comment number|Front page menu|Footer legal notice/);
  });

  test('a listing page gives its list of stories, without the site chrome', () => {
    const teasers = Array.from({ length: 15 }, (_, i) => `<div class="teaser"><h2><a href="/story-${i}">Headline of story ${i}</a></h2><p>A short summary of story ${i}, long enough to read as a sentence about what happened today in the city.</p></div>`).join('');
    const out = text(page(`${MENU}<main><h1>Latest news</h1>${teasers}</main>${SIDEBAR}${FOOTER}`));
    assert.match(out, /Headline of story 3/);
    assert.match(out, /A short summary of story 10/);
    assert.doesNotMatch(out, /Front page menu|Sidebar story one|Footer legal notice/);
  });

  test("a page whose markup lost the text gives the JSON-LD articleBody", () => {
    const jsonLd = { '@context': 'https://schema.org', '@type': 'NewsArticle', headline: 'Council approves tram line', articleBody: ARTICLE.join('\n') };
    const html = page(`${MENU}<div id="app"><h1>Council approves tram line</h1><p>Loading the story…</p></div>${FOOTER}`, `<title>Council approves tram line</title><script type="application/ld+json">${JSON.stringify(jsonLd)}</script>`);
    const out = text(html);
    for (const line of ARTICLE) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /Front page menu/);
  });

  test('a JSON-LD articleBody written as HTML is read as markup: no tag left as text, none in the Markdown', () => {
    const body = `${paragraphs(ARTICLE.slice(0, 2))}<p>Fares rise by 5 % &amp; passes by 3 %.</p><ul><li>${ARTICLE[2]}</li></ul><script>track()</script><p>${ARTICLE[3]}</p>`;
    // Escaped as publishers escape it, so that the body's own </script> does not end the block.
    const ld = JSON.stringify({ '@context': 'https://schema.org', '@type': 'NewsArticle', headline: 'Council approves tram line', articleBody: body }).replace(/</g, '\\u003c');
    const html = page(`<div id="root"></div><script src="/app.js"></script>`, `<title>Council approves tram line</title><script type="application/ld+json">${ld}</script>`);
    const out = text(html);
    for (const line of [...ARTICLE, 'Fares rise by 5 % & passes by 3 %.']) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /<\/?(p|ul|li|script)>|&amp;|track\(\)/);
    const md = markdown(html);
    assert.match(md, /^- Opponents argued/m);
    assert.doesNotMatch(md, /<\/?[a-z][^>]*>|track\(\)/i);
  });

  test("a page that renders a HowTo with scripts gives the JSON-LD steps; a recipe page whose markup holds its steps keeps its own text", () => {
    const steps = ['Measure the diameter of the table and add twice the drop you want.', 'Fold the fabric in four & mark a quarter circle from the folded corner.', 'Cut along the mark, then hem the edge with a narrow double fold.'];
    const howTo = { '@context': 'https://schema.org', '@type': 'HowTo', name: 'A round tablecloth', description: '<p>A round table deserves a tablecloth that fits it, and making one takes an afternoon.</p>', step: [{ '@type': 'HowToSection', name: 'Preparing', itemListElement: steps.slice(0, 2).map((text) => ({ '@type': 'HowToStep', text })) }, { '@type': 'HowToStep', text: steps[2] }] };
    const ld = (object: object) => `<script type="application/ld+json">${JSON.stringify(object).replace(/</g, '\\u003c')}</script>`;
    const shell = text(page('<div id="app"><p>Your browser is out of date.</p></div><script src="/app.js"></script>', `<title>A round tablecloth</title>${ld(howTo)}`));
    for (const line of ['A round table deserves a tablecloth that fits it, and making one takes an afternoon.', 'Preparing', ...steps]) assert.ok(shell.includes(line), `missing: ${line}`);
    assert.doesNotMatch(shell, /out of date|<p>|&amp;/);
    // With the steps in the markup, the markup is read as it is: the steps never prune it as an
    // article body would (the note after them stays).
    const note = 'A note from the kitchen: the cake keeps for three days in a closed tin, and it tastes even better on the second day.';
    const recipe = { '@context': 'https://schema.org', '@type': 'Recipe', name: 'Tram cake', recipeIngredient: ['2 eggs'], recipeInstructions: ARTICLE.map((text) => ({ '@type': 'HowToStep', text })) };
    const full = text(page(`<article><h1>Tram cake</h1>${paragraphs(ARTICLE)}<p>${note}</p></article>`, `<title>Tram cake</title>${ld(recipe)}`));
    for (const line of [...ARTICLE, note]) assert.ok(full.includes(line), `missing: ${line}`);
  });

  test('an RTL page keeps its text in order', () => {
    const arabic = [
      'وافق مجلس المدينة يوم الثلاثاء على خط الترام الجديد بعد نقاش استمر أكثر من ست ساعات وحضره مئات من السكان.',
      'وقال المؤيدون إن الخط سيختصر وقت التنقل إلى النصف في الأحياء الشرقية حيث تكون الحافلات مزدحمة ومتأخرة في الشتاء.',
      'وقال المعارضون إن التكلفة تضاعفت منذ التقدير الأول وإن الأعمال ستغلق المتاجر في الشارع الرئيسي لمدة عامين.',
    ];
    const html = `<!DOCTYPE html><html lang="ar" dir="rtl"><head><title>خط الترام</title></head><body><nav><a href="/">الصفحة الرئيسية للقائمة</a></nav><article><h1>خط الترام</h1>${paragraphs(arabic)}</article><footer>حقوق النشر محفوظة للموقع</footer></body></html>`;
    const out = text(html);
    assert.ok(out.endsWith(arabic.join('\n')), out);
    assert.doesNotMatch(out, /القائمة|حقوق/);
    assert.equal(convertPage(html, PAGE_URL, { format: 'text', links: false }).metadata?.language, 'ar');
  });

  test('a CJK page keeps its text, without the sidebar', () => {
    const chinese = [
      '市议会周二批准了新的有轨电车线路，此前的辩论持续了六个多小时，数百名居民来到会场旁听。',
      '支持者表示，这条线路将使东部地区的通勤时间减少一半，那里的公交车在冬季经常拥挤而且晚点。',
      '反对者认为，自第一次估算以来成本已经翻了一番，施工将使主要街道上的商店关闭两年。',
      '据交通部门称，第一批电车预计将于二零二九年春季开始运行，详细的时刻表将于明年公布。',
    ];
    const html = `<!DOCTYPE html><html lang="zh-CN"><head><title>有轨电车</title></head><body><nav><a href="/">首页菜单</a><a href="/news">新闻菜单</a></nav><div class="content"><h1>有轨电车</h1>${paragraphs(chinese)}</div><div class="sidebar"><h3>热门</h3><ul><li><a href="/1">侧栏文章一</a></li><li><a href="/2">侧栏文章二</a></li><li><a href="/3">侧栏文章三</a></li></ul></div></body></html>`;
    const out = text(html);
    for (const line of chinese) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /首页菜单|侧栏文章/);
  });

  test('a page without a <body> tag is read as a browser reads it', () => {
    const html = `<html><head><title>Tram</title></head><table><tr><td>${paragraphs(ARTICLE)}</td></tr></table></html>`;
    const out = text(html);
    for (const line of ARTICLE) assert.ok(out.includes(line), `missing: ${line}`);
  });

  test('text and Markdown hold the same content: each starts with the title once', () => {
    const html = page(`${MENU}<article><h1>Council approves tram line</h1>${paragraphs(ARTICLE)}</article>`);
    const plain = text(html);
    assert.ok(plain.startsWith(`Council approves tram line\n${ARTICLE[0]}`), plain.slice(0, 80));
    assert.equal(plain.split('Council approves tram line').length, 2, 'the title once in text');
    const md = markdown(html);
    assert.ok(md.startsWith('# Council approves tram line\n\n'), md.slice(0, 80));
    assert.equal(md.split('Council approves tram line').length, 2, 'the title once');
  });

  test('a page whose <title> is never closed keeps its article (a browser would read the whole page as the title)', () => {
    const html = `<!DOCTYPE html><html><head><title>Council approves tram line\n<script src="/ads.js"></script></head><body>${MENU}<div id="story">${paragraphs(ARTICLE)}</div>${SIDEBAR}${FOOTER}</body></html>`;
    const out = text(html);
    for (const line of ARTICLE) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /Front page menu|Sidebar story/);
    // A closed title that happens to be long is left as it is.
    assert.match(text(page(`${MENU}<div id="story">${paragraphs(ARTICLE)}</div>`, `<title>${'Long title '.repeat(300)}</title>`)), /The city council approved/);
  });

  test("the article found keeps its markup (Readability's log line is given an empty one for a moment)", () => {
    const document = parseDocument(page(`${MENU}<article><h1>Council approves tram line</h1>${paragraphs(ARTICLE)}</article>${FOOTER}`));
    const { element } = findMainContent(document);
    assert.match(element.innerHTML, /<p>The city council approved/);
    assert.equal(Object.getOwnPropertyDescriptor(element, 'innerHTML'), undefined);
  });

  test('only_main_content false gives the whole page, chrome included, without scripts and styles', () => {
    const html = page(`<script>var tracking = 1;</script><style>p{color:red}</style>${MENU}<article>${paragraphs(ARTICLE)}</article>${FOOTER}`);
    const out = text(html, false);
    assert.match(out, /Front page menu/);
    assert.match(out, /Footer legal notice/);
    assert.ok(out.includes(ARTICLE[3]));
    assert.doesNotMatch(out, /tracking|color:red/);
  });
});

describe('main content: precision after the article is found', () => {
  const GERMAN = [
    'Der Stadtrat hat am Dienstag nach einer mehr als sechsstündigen Debatte die neue Straßenbahnlinie beschlossen, Hunderte Anwohner verfolgten die Sitzung.',
    'Die Befürworter sagen, die Linie werde die Fahrzeiten in den östlichen Stadtteilen halbieren, wo die Busse im Winter oft überfüllt und verspätet sind.',
    'Die Gegner halten dagegen, dass sich die Kosten seit der ersten Schätzung verdoppelt haben und die Geschäfte an der Hauptstraße zwei Jahre lang leiden.',
  ];

  test('share bars, related boxes and author boxes inside the article go, by their class names', () => {
    const html = page(`${MENU}<article><h1>Council approves tram line</h1>${paragraphs(ARTICLE.slice(0, 2))}<div class="articleShareBar"><span>Share on Facebook</span><span>Share by email</span></div>${paragraphs(ARTICLE.slice(2))}<div class="related-content"><h3>More on transport</h3><p>Buses to run all night from next month, the operator announced</p></div><div class="AuthorSummary"><p>Jane Doe covers the city hall and transport for City News since 2019.</p></div></article>${FOOTER}`);
    const out = text(html);
    for (const line of ARTICLE) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /Share on Facebook|Buses to run all night|Jane Doe covers/);
  });

  test('picture captions, photo credits, bylines, dates and rights notices go', () => {
    const html = page(`${MENU}<article><h1>Council approves tram line</h1><p class="storyby">By Jane Doe</p><p><time datetime="2026-11-24">24 November 2026</time></p><p>${ARTICLE[0]}</p><figure><img src="/tram.jpg" alt=""><figcaption>The new tram at the depot on Monday evening.</figcaption></figure><p>Photo: John Smith / City News</p>${paragraphs(ARTICLE.slice(1))}<p>© 2026 City News. All rights reserved.</p></article>${FOOTER}`);
    const out = text(html);
    for (const line of ARTICLE) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /By Jane Doe|24 November 2026|at the depot|John Smith|All rights reserved/);
  });

  test('the comment section after an anchor goes, bare-text comments included', () => {
    const comments = Array.from({ length: 8 }, (_, i) => `<b>Reader ${i}</b><br>Comment number ${i}: the buses have never been on time in my street, so the tram is welcome, but the price is far too high for the city.<br><br><hr>`).join('');
    const html = page(`${MENU}<div id="story"><h1>Council approves tram line</h1>${paragraphs(ARTICLE)}<hr><a name="commentSection"></a><b>Comments are now closed for this story</b><br>${comments}</div>${FOOTER}`);
    const out = text(html);
    for (const line of ARTICLE) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /Comment number|Comments are now closed|Reader 3/);
  });

  test('a comment form inside the article goes; a page that sits in a <form> with a search box keeps its article', () => {
    const commentForm = '<form action="/comment" method="post"><p>Leave your name and your opinion on this story</p><input type="text" name="name"><textarea name="body"></textarea><button>Send</button></form>';
    const withForm = text(page(`${MENU}<article><h1>Council approves tram line</h1>${paragraphs(ARTICLE)}${commentForm}</article>${FOOTER}`));
    for (const line of ARTICLE) assert.ok(withForm.includes(line), `missing: ${line}`);
    assert.doesNotMatch(withForm, /Leave your name/);
    const inForm = text(page(`<form method="post" action="./story.aspx" id="aspnetForm"><input type="text" name="q" placeholder="Search">${MENU}<div id="main"><h1>Council approves tram line</h1>${paragraphs(ARTICLE)}</div>${FOOTER}</form>`));
    for (const line of ARTICLE) assert.ok(inForm.includes(line), `missing: ${line}`);
  });

  test('prompts to subscribe, log in, download the app, join a channel or donate go between and after the paragraphs; sentences about subscriptions stay', () => {
    const about = 'The transport department said that subscribers to the monthly pass will pay ten percent more from March, and that a subscription for students stays at the old price.';
    const prompts = [
      'To view the full story, please subscribe to City News.',
      'If you are seeing this message but you are already a subscriber, you can log in for immediate access to this story.',
      'For the latest stories and breaking news download the City News app for iOS and Android.',
      'Artikel gefallen? Vergiss nicht zu teilen!',
      '¿Ya sabías que tenemos canal de Telegram? Únete desde tu celular.',
      'If you enjoyed reading this post, please support our journalism.',
    ];
    const html = page(`${MENU}<article><h1>Council approves tram line</h1>${paragraphs(ARTICLE.slice(0, 2))}<p>${prompts[0]}</p><p>${about}</p>${paragraphs(ARTICLE.slice(2))}${paragraphs(prompts.slice(1))}</article>${FOOTER}`);
    const out = text(html);
    for (const line of [...ARTICLE, about]) assert.ok(out.includes(line), `missing: ${line}`);
    for (const line of prompts) assert.ok(!out.includes(line), `kept: ${line}`);
  });

  test('ad labels between paragraphs go ("Advertisement", "Story continues below", "Anzeige"); a sentence that names an ad stays', () => {
    const sentence = 'The advertisement for the tram line ran in every newspaper of the city for a month before the vote.';
    const html = page(`${MENU}<article><h1>Council approves tram line</h1>${paragraphs(ARTICLE.slice(0, 1))}<div><p>Advertisement</p></div>${paragraphs(ARTICLE.slice(1, 2))}<div class="x1"><span>ADVERTISEMENT</span><div id="gpt-1"></div></div><p>${sentence}</p>${paragraphs(ARTICLE.slice(2, 3))}<p>Anzeige</p><p><em>Story continues below advertisement</em></p>${paragraphs(ARTICLE.slice(3))}<p>Publicidad</p></article>${FOOTER}`);
    const out = text(html);
    for (const line of [...ARTICLE, sentence]) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /^(Advertisement|ADVERTISEMENT|Anzeige|Story continues below advertisement|Publicidad)$/m);
    // The labels of an audio player, the reading time and share buttons written as text go the same way.
    const controls = text(page(`${MENU}<article><h1>Council approves tram line</h1><div><span>Listen to this article</span></div><p>5 min read</p>${paragraphs(ARTICLE.slice(0, 2))}<div>Share on Facebook</div>${paragraphs(ARTICLE.slice(2))}</article>${FOOTER}`));
    for (const line of ARTICLE) assert.ok(controls.includes(line), `missing: ${line}`);
    assert.doesNotMatch(controls, /Listen to this article|5 min read|Share on Facebook/);
  });

  test("a layout table's cell of links inside the article goes (an old page's menu); a data table of links stays", () => {
    const menu = '<td><a href="/">Home</a><br><a href="/football">Football</a><br><a href="/cricket">Cricket</a><br><a href="/tennis">Tennis</a><br><a href="/golf">Golf</a></td>';
    const city = (name: string) => `<tr><td><a href="/${name.toLowerCase()}">${name}</a></td><td><a href="/${name.toLowerCase()}/census">${name} census</a></td></tr>`;
    const cities = `<table><tr><th>City</th><th>Census</th></tr>${['Auckland', 'Wellington', 'Christchurch', 'Hamilton', 'Tauranga'].map(city).join('')}</table>`;
    // The page marks the whole layout table as its article, so the menu's cell, between the
    // article's two cells, is in the content.
    const out = text(page(`<article><h1>Council approves tram line</h1><table><tr><td>${paragraphs(ARTICLE.slice(0, 2))}</td>${menu}<td>${paragraphs(ARTICLE.slice(2, 3))}</td></tr></table>${cities}${paragraphs(ARTICLE.slice(3))}</article>`));
    for (const line of ARTICLE) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /Football|Cricket/);
    assert.match(out, /Auckland/);
    assert.match(out, /Christchurch/);
  });

  test('a German page: the "Lesen Sie auch" links and the prompts after the text go, the article stays', () => {
    const html = `<!DOCTYPE html><html lang="de"><head><title>Straßenbahn beschlossen</title></head><body>${MENU}<article><h1>Straßenbahn beschlossen</h1>${paragraphs(GERMAN.slice(0, 2))}<h3>Lesen Sie auch</h3><ul><li><a href="/a">Busse fahren bald die ganze Nacht</a></li><li><a href="/b">Neue Radwege im Osten der Stadt</a></li></ul>${paragraphs(GERMAN.slice(2))}<p>Sie wollen keine Nachricht verpassen</p><p><a href="/newsletter">Jetzt den Newsletter abonnieren</a></p></article>${FOOTER}</body></html>`;
    const out = text(html);
    for (const line of GERMAN) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /Lesen Sie auch|Busse fahren|keine Nachricht verpassen|Newsletter/);
  });

  test('a Spanish page: "Lea también:" lines that send to other stories go between paragraphs', () => {
    const spanish = [
      'El concejo municipal aprobó el martes la nueva línea de tranvía tras un debate de más de seis horas al que asistieron cientos de vecinos del barrio.',
      'Los partidarios afirman que la línea reducirá a la mitad el tiempo de viaje en los distritos del este, donde los autobuses llegan llenos y tarde.',
      'Los opositores sostienen que el costo se duplicó desde la primera estimación y que las obras cerrarán comercios de la calle principal durante dos años.',
    ];
    const html = `<!DOCTYPE html><html lang="es"><head><title>Tranvía aprobado</title></head><body>${MENU}<article><h1>Tranvía aprobado</h1>${paragraphs(spanish.slice(0, 2))}<p>Lea también: <a href="/otra">Los autobuses nocturnos llegan el próximo mes</a></p>${paragraphs(spanish.slice(2))}</article>${FOOTER}</body></html>`;
    const out = text(html);
    for (const line of spanish) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /Lea también|autobuses nocturnos/);
  });

  test('a short closing sentence stays after the text, a trailing label without one goes', () => {
    const html = page(`${MENU}<article><h1>Council approves tram line</h1>${paragraphs(ARTICLE)}<p>The mayor said the work will start in May.</p><p>Tell us what you think</p></article>${FOOTER}`);
    const out = text(html);
    assert.ok(out.endsWith('The mayor said the work will start in May.'), out.slice(-120));
  });

  test('a listing whose stories are named as teasers keeps them', () => {
    const teasers = Array.from({ length: 12 }, (_, i) => `<div class="teaser" id="teaser${i}"><h2><a href="/story-${i}">Headline of story ${i}</a></h2><p>A short summary of story ${i}, long enough to read as a sentence about what happened today in the city and why it matters.</p></div>`).join('');
    const out = text(page(`${MENU}<main><h1>Latest news</h1>${teasers}</main>${FOOTER}`));
    assert.match(out, /A short summary of story 2,/);
    assert.match(out, /A short summary of story 9,/);
  });

  test('a section whose id is made from its heading stays, though the id has a boilerplate word; a recipe in a print block stays', () => {
    const section = `<div class="section" id="sharing-with-a-single-developer"><h2>Sharing with a single developer</h2>${paragraphs(ARTICLE.slice(2))}</div>`;
    const docs = text(page(`${MENU}<div class="document"><h1>Council approves tram line</h1>${paragraphs(ARTICLE.slice(0, 2))}${section}</div>${FOOTER}`));
    for (const line of ARTICLE) assert.ok(docs.includes(line), `missing: ${line}`);
    const recipe = text(page(`${MENU}<div class="entry"><h1>Council approves tram line</h1>${paragraphs(ARTICLE)}<div class="print-this-content"><p>Ingredients</p><ul><li>2 tablespoons olive oil</li><li>1 large sweet onion, chopped</li></ul><p>Warm the oil in a large pot and cook the onion until it is soft, about five minutes, stirring now and then.</p></div></div>${FOOTER}`));
    assert.match(recipe, /1 large sweet onion, chopped/);
    assert.match(recipe, /Warm the oil in a large pot/);
  });

  test("blocks the page's JSON-LD articleBody lacks go when the content holds that body; the lead stays", () => {
    const lead = 'The tram line is the largest project of the city in decades and will change how the east commutes.';
    const jsonLd = { '@context': 'https://schema.org', '@type': 'NewsArticle', headline: 'Council approves tram line', articleBody: ARTICLE.join('\n\n') };
    const html = page(`${MENU}<article><h1>Council approves tram line</h1><p>${lead}</p>${paragraphs(ARTICLE.slice(0, 2))}<p>Our reporters are at the city hall tonight and will keep this page up to date, come back later for more.</p>${paragraphs(ARTICLE.slice(2))}</article>${FOOTER}`, `<title>Council approves tram line</title><script type="application/ld+json">${JSON.stringify(jsonLd)}</script>`);
    const out = text(html);
    for (const line of [lead, ...ARTICLE]) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /Our reporters are at the city hall/);
  });
});

describe('main content: widening Readability\'s choice to the rest of the article', () => {
  const SECOND_HALF = [
    'Residents of the eastern districts will be asked about the stops in a survey next month. The results are due before the summer.',
    'The mayor thanked the council. She said the vote was a turning point for the city.',
  ];
  const LEAD = 'The tram line is the largest project of the city in decades. It will change how the east of the city commutes to work.';

  test('the second half of a story, in a sibling container after an ad, is kept', () => {
    const html = page(`${MENU}<div id="story"><h1>Council approves tram line</h1><div class="column-a"><div class="story-text">${paragraphs(ARTICLE)}</div></div><div class="slot"><img src="/ad.png" alt=""><span>Advertisement</span></div><div class="column-b"><div class="story-end">${paragraphs(SECOND_HALF)}</div></div></div>${FOOTER}`);
    const out = text(html);
    for (const line of [...ARTICLE, ...SECOND_HALF]) assert.ok(out.includes(line), `missing: ${line}`);
    assert.ok(out.indexOf(ARTICLE[3]) < out.indexOf(SECOND_HALF[0]), 'the halves keep their order');
    assert.doesNotMatch(out, /Advertisement|Front page menu|Footer legal notice/);
  });

  test('the second half beside the container that holds the first is kept', () => {
    const html = page(`${MENU}<div id="story"><div class="column-a"><h1>Council approves tram line</h1><div class="story-text">${paragraphs(ARTICLE)}</div><span>Share</span></div><div class="slot"><span>Advertisement</span></div><div class="column-b"><p>${SECOND_HALF[0]}</p><p>${SECOND_HALF[1]}</p></div></div>${FOOTER}`);
    const out = text(html);
    for (const line of [...ARTICLE, ...SECOND_HALF]) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /Advertisement|Front page menu/);
  });

  test('a lead paragraph in the block before the chosen one is kept, the date beside it is not', () => {
    const html = page(`${MENU}<div id="story"><div class="headline-box"><h1>Council approves tram line</h1><p class="standfirst">${LEAD}</p><p>24 November 2026</p></div><div class="story-text">${paragraphs(ARTICLE)}</div></div>${FOOTER}`);
    const out = text(html);
    for (const line of [LEAD, ...ARTICLE]) assert.ok(out.includes(line), `missing: ${line}`);
    assert.ok(out.indexOf(LEAD) < out.indexOf(ARTICLE[0]), 'the lead comes first');
    assert.doesNotMatch(out, /24 November 2026/);
  });

  test('sibling blocks of related links stay out, even unnamed and with sentences', () => {
    const related = '<div class="box"><h2>Elsewhere on the site</h2><ul><li><a href="/a">Buses to run all night from next month, the operator announced on Monday.</a> Read it.</li><li><a href="/b">New cycle lanes are planned in the east of the city, the council says.</a> Read it.</li></ul></div>';
    const teasers = '<div class="box2"><p><a href="/d">The harbour is to get a new ferry terminal by 2030, the port said.</a> More.</p><p><a href="/e">Taxi fares rise by ten percent from January, the city announced.</a> More.</p></div>';
    const another = '<div class="next"><h2><a href="/other">Another story: the zoo gets two pandas</a></h2><p>The zoo will welcome two pandas next spring. The city has waited for them for ten years, and the new enclosure is ready.</p></div>';
    const html = page(`${MENU}<div id="story"><h1>Council approves tram line</h1><div class="story-text">${paragraphs(ARTICLE)}</div>${related}${teasers}${another}</div>${FOOTER}`);
    const out = text(html);
    for (const line of ARTICLE) assert.ok(out.includes(line), `missing: ${line}`);
    assert.doesNotMatch(out, /Buses to run|harbour|Taxi fares|pandas/);
  });
});

describe('metadata', () => {
  test('from meta tags, OpenGraph, link rel=canonical and JSON-LD', () => {
    const jsonLd = {
      '@context': 'https://schema.org',
      '@graph': [
        { '@type': 'WebSite', name: 'City News Site' },
        { '@type': 'NewsArticle', headline: 'Council approves tram line', author: [{ '@type': 'Person', name: 'Ana Ruiz' }, { '@type': 'Person', name: 'Li Wei' }], datePublished: '2026-11-24T08:00:00Z', image: { '@type': 'ImageObject', url: '/img/tram.jpg' } },
      ],
    };
    const head = `<title>Council approves tram line | City News</title><meta name="description" content="The vote, the cost and the timetable."><meta property="og:site_name" content="City News"><link rel="canonical" href="/2026/11/tram"><script type="application/ld+json">${JSON.stringify(jsonLd)}</script>`;
    const { metadata } = convertPage(page(`<article>${paragraphs(ARTICLE)}</article>`, head), PAGE_URL, { format: 'markdown', links: false });
    assert.deepEqual(metadata, {
      title: 'Council approves tram line | City News',
      description: 'The vote, the cost and the timetable.',
      language: 'en',
      author: 'Ana Ruiz, Li Wei',
      published_at: '2026-11-24T08:00:00Z',
      site_name: 'City News',
      canonical_url: 'https://news.example/2026/11/tram',
      image: 'https://news.example/img/tram.jpg',
    });
  });

  test('every key is present, null when the page does not say', () => {
    const { metadata } = convertPage('<p>bare</p>', PAGE_URL, { format: 'text', links: false });
    assert.deepEqual(metadata, { title: null, description: null, language: null, author: null, published_at: null, site_name: null, canonical_url: null, image: null });
  });

  test('a broken JSON-LD block is skipped', () => {
    const head = '<title>T</title><script type="application/ld+json">{not json</script><meta property="article:published_time" content="2026-01-02">';
    assert.equal(convertPage(page('<p>x</p>', head), PAGE_URL, { format: 'text', links: false }).metadata?.published_at, '2026-01-02');
  });

  test('raw pages are not parsed: no metadata', () => {
    assert.deepEqual(convertPage(page('<p>x</p>'), PAGE_URL, { format: 'raw', links: false }), {});
  });
});
