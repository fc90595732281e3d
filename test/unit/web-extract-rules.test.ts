/** `extract_rules` of /v1/web (src/adapters/web/extract-rules.ts): reading rules and their Laravel-style validation. */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { extractRules, MAX_EXTRACT_ITEMS, MAX_EXTRACT_RULES, validateExtractRules } from '../../src/adapters/web/extract-rules.ts';

const PRODUCT = `<html><body><h1 class="name">  Trail
  shoe <small>v2</small></h1><span class="price" data-currency="EUR">€ 89.90</span>
<div class="desc"><p>Light <b>and</b> grippy.</p></div>
<ul class="tags"><li>run</li><li>trail</li><li>  </li></ul>
<a class="buy" href="/cart?add=1">Add</a></body></html>`;

const LIST = `<html><body><div class="card"><a href="/p/1">Alpha</a><span class="price">1</span><ul><li>red</li><li>blue</li></ul></div>
<div class="card"><a href="/p/2">Beta</a><ul><li>green</li></ul></div></body></html>`;

describe('extractRules', () => {
  test('a product page: selector strings, text, html, attr, all', () => {
    const result = extractRules(PRODUCT, {
      name: 'h1.name',
      price: { selector: '.price' },
      currency: { selector: '.price', type: 'attr', attr: 'data-currency' },
      description: { selector: '.desc', type: 'html' },
      tags: { selector: '.tags li', all: true },
      link: { selector: 'a.buy', type: 'attr', attr: 'href' },
      missing: '.nothing',
      missing_all: { selector: '.nothing', all: true },
      missing_attr: { selector: 'h1', type: 'attr', attr: 'data-x' },
    });
    assert.deepEqual(result, {
      name: 'Trail shoe v2',
      price: '€ 89.90',
      currency: 'EUR',
      description: '<p>Light <b>and</b> grippy.</p>',
      tags: ['run', 'trail', ''],
      link: '/cart?add=1',
      missing: null,
      missing_all: [],
      missing_attr: null,
    });
  });

  test('a list page: objects built inside each match, nested lists', () => {
    const result = extractRules(LIST, {
      cards: { selector: '.card', all: true, output: { title: 'a', url: { selector: 'a', type: 'attr', attr: 'href' }, price: '.price', colours: { selector: 'li', all: true } } },
      first: { selector: '.card', output: { title: 'a' } },
    });
    assert.deepEqual(result, {
      cards: [
        { title: 'Alpha', url: '/p/1', price: '1', colours: ['red', 'blue'] },
        { title: 'Beta', url: '/p/2', price: null, colours: ['green'] },
      ],
      first: { title: 'Alpha' },
    });
  });

  test('a list is cut at MAX_EXTRACT_ITEMS, and the same input gives the same output', () => {
    const many = `<ul>${'<li>x</li>'.repeat(MAX_EXTRACT_ITEMS + 10)}</ul>`;
    const rules = { items: { selector: 'li', all: true } };
    const result = extractRules(many, rules);
    assert.equal((result.items as string[]).length, MAX_EXTRACT_ITEMS);
    assert.deepEqual(extractRules(many, rules), result);
  });
});

describe('validateExtractRules', () => {
  test('good rules pass', () => {
    assert.deepEqual(validateExtractRules({ a: 'h1', b: { selector: 'a', type: 'attr', attr: 'href', all: true }, c: { selector: '.x', all: '1', output: { d: 'p' } } }), {});
  });

  test('each fault is named by its dotted path', () => {
    assert.deepEqual(
      validateExtractRules({
        a: 'div >',
        b: 3,
        c: { type: 'text' },
        d: { selector: 'p', type: 'json' },
        e: { selector: 'p', type: 'attr' },
        f: { selector: 'p', attr: 'href' },
        g: { selector: 'p', all: 'yes', colour: 'red' },
        h: { selector: 'p', type: 'text', output: { i: 'a' } },
        j: { selector: 'p', output: 'a' },
        k: { selector: 'p', output: { l: { selector: 'a[' } } },
      }),
      {
        'extract_rules.a': ['The extract_rules.a must be a valid CSS selector.'],
        'extract_rules.b': ['The extract_rules.b must be a CSS selector or an object.'],
        'extract_rules.c.selector': ['The extract_rules.c.selector field is required.'],
        'extract_rules.d.type': ['The selected extract_rules.d.type is invalid.'],
        'extract_rules.e.attr': ['The extract_rules.e.attr field is required when extract_rules.e.type is attr.'],
        'extract_rules.f.attr': ['The extract_rules.f.attr field is prohibited unless extract_rules.f.type is attr.'],
        'extract_rules.g.colour': ['The extract_rules.g.colour field is not allowed.'],
        'extract_rules.g.all': ['The extract_rules.g.all field must be true or false.'],
        'extract_rules.h.type': ['The extract_rules.h.type field is prohibited when extract_rules.h.output is present.'],
        'extract_rules.j.output': ['The extract_rules.j.output must be an array.'],
        'extract_rules.k.output.l.selector': ['The extract_rules.k.output.l.selector must be a valid CSS selector.'],
      },
    );
  });

  test('the shape, the nesting depth and the rule count are bounded', () => {
    assert.deepEqual(validateExtractRules(['h1']), { extract_rules: ['The extract_rules must be an array.'] });
    assert.deepEqual(validateExtractRules({}), { extract_rules: ['The extract_rules must have at least 1 items.'] });
    const deep = { a: { selector: 'div', output: { b: { selector: 'div', output: { c: { selector: 'div', output: { d: { selector: 'p', output: { e: 'p' } } } } } } } } };
    assert.deepEqual(validateExtractRules(deep), {
      'extract_rules.a.output.b.output.c.output': ['The extract_rules.a.output.b.output.c.output may not nest more than 3 levels of output.'],
    });
    const many = Object.fromEntries(Array.from({ length: MAX_EXTRACT_RULES + 1 }, (_, i) => [`r${i}`, 'p']));
    assert.deepEqual(validateExtractRules(many), { extract_rules: [`The extract_rules must not have more than ${MAX_EXTRACT_RULES} rules in all.`] });
  });
});
