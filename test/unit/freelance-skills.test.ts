/** Skill names → job ids (the cached catalogue), and the scope page tokens are bound to. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { JobIndex, SkillCatalogue, type CatalogueRead } from '../../src/adapters/freelance/skills.ts';
import { searchScope } from '../../src/endpoints/freelance.ts';

const JOBS = [
  { id: 3, name: 'PHP', seoUrl: 'php' },
  { id: 9, name: 'C Programming', seoUrl: 'c' },
  { id: 10, name: 'C', seoUrl: 'c_lang' },
  { id: 13, name: 'Python', seoUrl: 'python' },
  { id: 95, name: 'Web Scraping', seoUrl: 'web_scraping' },
];

describe('job index', () => {
  const index = new JobIndex(JOBS);

  test('names in any case and spacing, or seo urls; duplicates once', () => {
    assert.deepEqual(index.resolve(['python', '  WEB   scraping ', 'php', 'Python']), { kind: 'ok', ids: [13, 95, 3] });
    assert.deepEqual(index.resolve(['web_scraping']), { kind: 'ok', ids: [95] });
  });

  test('a name wins over another job\'s seo url', () => {
    assert.deepEqual(index.resolve(['c']), { kind: 'ok', ids: [10] });
  });

  test('unknown names are all reported, as sent (trimmed)', () => {
    assert.deepEqual(index.resolve(['Python', ' Cobol ', 'Basket weaving']), { kind: 'unknown', names: ['Cobol', 'Basket weaving'] });
  });
});

describe('skill catalogue cache', () => {
  test('one read for concurrent callers, kept until it expires', async () => {
    let now = 1_000;
    let reads = 0;
    const catalogue = new SkillCatalogue(async (): Promise<CatalogueRead> => {
      reads += 1;
      await new Promise((resolve) => setTimeout(resolve, 5));
      return { kind: 'ok', jobs: JOBS };
    }, 60_000, () => now);
    const answers = await Promise.all([catalogue.index(), catalogue.index(), catalogue.index()]);
    assert.ok(answers.every((answer) => answer.kind === 'ok'));
    assert.equal(reads, 1);
    await catalogue.index();
    assert.equal(reads, 1, 'still fresh');
    now += 60_001;
    await catalogue.index();
    assert.equal(reads, 2, 'read again once stale');
  });

  test('a failed read is not kept', async () => {
    let fail = true;
    let reads = 0;
    const catalogue = new SkillCatalogue(async (): Promise<CatalogueRead> => {
      reads += 1;
      return fail ? { kind: 'failed', outcome: { kind: 'timeout' } } : { kind: 'ok', jobs: JOBS };
    }, 60_000);
    assert.equal((await catalogue.index()).kind, 'failed');
    fail = false;
    assert.equal((await catalogue.index()).kind, 'ok');
    assert.equal(reads, 2);
  });
});

describe('page-token scope', () => {
  const base = { query: 'python', skills: ['Python', 'Web Scraping'], min_budget: 50, max_budget: '500', project_type: 'fixed', sort: 'latest' };

  test('the same search in another spelling has the same scope', () => {
    assert.equal(searchScope(base), searchScope({ ...base, query: '  python ', skills: ['web  scraping', 'PYTHON', 'python'], min_budget: '50', max_budget: 500.0 }));
    assert.equal(searchScope({ query: 'logo' }), searchScope({ query: 'logo', sort: 'relevance', skills: [] }));
  });

  test('another query or filter has another scope', () => {
    const scope = searchScope(base);
    for (const change of [{ query: 'pythons' }, { skills: ['Python'] }, { min_budget: 51 }, { max_budget: null }, { project_type: 'hourly' }, { sort: 'relevance' }]) {
      assert.notEqual(searchScope({ ...base, ...change }), scope, JSON.stringify(change));
    }
  });
});
