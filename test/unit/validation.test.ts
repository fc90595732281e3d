/**
 * Request validation: Laravel 8 messages and semantics (contract §1), coercion of valid input,
 * and the JSON Schema the OpenAPI document is generated from.
 */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import { between, boolean, custom, email, format, integer, max, min, object, oneOf, parsed, prohibits, required, requiredWithout, string, url } from '../../src/validation/rules.ts';
import { MAX_URL_LENGTH } from '../../src/core/limits.ts';
import { attributeName, toJsonSchema, validate, type Schema } from '../../src/validation/schema.ts';

/** Validates and returns the field errors ({} when the input is valid). */
async function errorsOf(schema: Schema, input: Record<string, unknown>): Promise<Record<string, string[]>> {
  const result = await validate(schema, input);
  return result.ok ? {} : result.errors;
}

/** Validates input that must be valid and returns the coerced value. */
async function valueOf(schema: Schema, input: Record<string, unknown>): Promise<Record<string, unknown>> {
  const result = await validate(schema, input);
  assert.ok(result.ok, `expected valid input, got ${JSON.stringify(!result.ok && result.errors)}`);
  return result.value;
}

const one = (name: string, rules: Schema['fields'][string]['rules']): Schema => ({ fields: { [name]: { rules } } });

describe('messages (Laravel 8 wording)', () => {
  test('attribute is the field name with underscores as spaces', () => {
    assert.equal(attributeName('bypass_captcha'), 'bypass captcha');
    assert.equal(attributeName('per_page'), 'per page');
    assert.equal(attributeName('query'), 'query');
  });

  test('required', async () => {
    assert.deepEqual(await errorsOf(one('query', [required(), string()]), {}), { query: ['The query field is required.'] });
  });

  test('string', async () => {
    assert.deepEqual(await errorsOf(one('query', [required(), string()]), { query: 42 }), { query: ['The query must be a string.'] });
  });

  test('integer', async () => {
    assert.deepEqual(await errorsOf(one('page', [integer()]), { page: 'abc' }), { page: ['The page must be an integer.'] });
    assert.deepEqual(await errorsOf(one('page', [integer()]), { page: '1.0' }), { page: ['The page must be an integer.'] });
    assert.deepEqual(await errorsOf(one('page', [integer()]), { page: 2.5 }), { page: ['The page must be an integer.'] });
    for (const ok of ['7', '-3', '+4', '0', 12]) assert.deepEqual(await errorsOf(one('page', [integer()]), { page: ok }), {}, String(ok));
  });

  test('boolean', async () => {
    const schema = one('bypass_captcha', [boolean()]);
    for (const bad of ['yes', 'true', 2, 'on']) {
      assert.deepEqual(await errorsOf(schema, { bypass_captcha: bad }), { bypass_captcha: ['The bypass captcha field must be true or false.'] }, String(bad));
    }
    for (const ok of [true, false, 0, 1, '0', '1']) assert.deepEqual(await errorsOf(schema, { bypass_captcha: ok }), {}, String(ok));
  });

  test('min: numeric, string and array forms', async () => {
    assert.deepEqual(await errorsOf(one('page', [integer(), min(1)]), { page: 0 }), { page: ['The page must be at least 1.'] });
    assert.deepEqual(await errorsOf(one('page', [integer(), min(1)]), { page: '0' }), { page: ['The page must be at least 1.'] });
    assert.deepEqual(await errorsOf(one('name', [string(), min(3)]), { name: 'ab' }), { name: ['The name must be at least 3 characters.'] });
    assert.deepEqual(await errorsOf(one('tags', [min(2)]), { tags: ['a'] }), { tags: ['The tags must have at least 2 items.'] });
    assert.deepEqual(await errorsOf(one('name', [string(), min(3)]), { name: 'abc' }), {});
  });

  test('min on a string field counts characters, not digits or bytes', async () => {
    // "12" is numeric text, but the field has no numeric rule: its size is its length.
    assert.deepEqual(await errorsOf(one('code', [string(), min(3)]), { code: '12' }), { code: ['The code must be at least 3 characters.'] });
    assert.deepEqual(await errorsOf(one('code', [string(), min(3)]), { code: 'éàü' }), {});
  });

  test('max: numeric, string and array forms', async () => {
    assert.deepEqual(await errorsOf(one('limit', [integer(), max(10)]), { limit: 11 }), { limit: ['The limit must not be greater than 10.'] });
    assert.deepEqual(await errorsOf(one('name', [string(), max(5)]), { name: 'abcdef' }), { name: ['The name must not be greater than 5 characters.'] });
    assert.deepEqual(await errorsOf(one('tags', [max(2)]), { tags: [1, 2, 3] }), { tags: ['The tags must not have more than 2 items.'] });
    assert.deepEqual(await errorsOf(one('limit', [integer(), max(10)]), { limit: 10 }), {});
  });

  test('between: numeric, string and array forms', async () => {
    assert.deepEqual(await errorsOf(one('per_page', [integer(), between(10, 100)]), { per_page: 5 }), {
      per_page: ['The per page must be between 10 and 100.'],
    });
    assert.deepEqual(await errorsOf(one('per_page', [integer(), between(10, 100)]), { per_page: '101' }), {
      per_page: ['The per page must be between 10 and 100.'],
    });
    assert.deepEqual(await errorsOf(one('code', [string(), between(2, 4)]), { code: 'a' }), { code: ['The code must be between 2 and 4 characters.'] });
    assert.deepEqual(await errorsOf(one('ids', [between(1, 2)]), { ids: [1, 2, 3] }), { ids: ['The ids must have between 1 and 2 items.'] });
    for (const ok of [10, '55', 100]) assert.deepEqual(await errorsOf(one('per_page', [integer(), between(10, 100)]), { per_page: ok }), {}, String(ok));
  });

  test('in', async () => {
    const schema = one('country', [string(), oneOf(['us', 'fr'])]);
    assert.deepEqual(await errorsOf(schema, { country: 'xx' }), { country: ['The selected country is invalid.'] });
    // Case-sensitive, as Laravel compares strings.
    assert.deepEqual(await errorsOf(schema, { country: 'US' }), { country: ['The selected country is invalid.'] });
    assert.deepEqual(await errorsOf(schema, { country: 'fr' }), {});
    // Non-string values compare as their string form.
    assert.deepEqual(await errorsOf(one('size', [oneOf(['10', '20'])]), { size: 20 }), {});
    assert.deepEqual(await errorsOf(one('flag', [oneOf(['true'])]), { flag: true }), { flag: ['The selected flag is invalid.'] });
    assert.deepEqual(await errorsOf(one('flag', [oneOf(['1'])]), { flag: true }), {});
  });

  test('url', async () => {
    const schema = one('url', [required(), url()]);
    for (const bad of ['not a url', 'example.com', 'ftp://example.com/file', 'http://', 'https:// example.com', 'javascript:alert(1)', 42]) {
      assert.deepEqual(await errorsOf(schema, { url: bad }), { url: ['The url must be a valid URL.'] }, String(bad));
    }
    for (const ok of ['https://example.com', 'http://example.com:8080/a/b.pdf?x=1#y', 'HTTPS://EXAMPLE.COM/']) {
      assert.deepEqual(await errorsOf(schema, { url: ok }), {}, ok);
    }
  });

  test('url: at most 8192 characters, said with Laravel\'s max message (issue 33: 240,000 slashes stalled the server)', async () => {
    const schema = one('url', [required(), url()]);
    const base = 'https://example.com/';
    assert.deepEqual(await errorsOf(schema, { url: base + 'a'.repeat(MAX_URL_LENGTH - base.length) }), {});
    assert.deepEqual(await errorsOf(schema, { url: base + 'a'.repeat(MAX_URL_LENGTH - base.length + 1) }), { url: ['The url must not be greater than 8192 characters.'] });
    assert.deepEqual(await errorsOf(schema, { url: `http://host/${'/'.repeat(240_000)}x` }), { url: ['The url must not be greater than 8192 characters.'] });
    assert.equal(MAX_URL_LENGTH, 8192);
  });

  test('email', async () => {
    const schema = one('email', [required(), string(), email()]);
    for (const bad of ['nope', 'a@', '@example.com', 'a b@example.com', 'a@b@example.com', 'a@-example.com', 'a\u0000b@example.com', 'tab\there@example.com']) {
      assert.deepEqual(await errorsOf(schema, { email: bad }), { email: ['The email must be a valid email address.'] }, bad);
    }
    for (const ok of ['a@example.com', 'first.last+tag@sub.example.co.uk', 'x@localhost']) assert.deepEqual(await errorsOf(schema, { email: ok }), {}, ok);
  });

  test('custom: fixed message or one built from the attribute', async () => {
    const status = custom('status', (v) => Number(v) >= 100 && Number(v) <= 599, 'The status must be an HTTP status code.');
    assert.deepEqual(await errorsOf(one('status', [integer(), status]), { status: 42 }), { status: ['The status must be an HTTP status code.'] });
    const even = custom('even', (v) => Number(v) % 2 === 0, (attr) => `The ${attr} must be even.`);
    assert.deepEqual(await errorsOf(one('page_size', [integer(), even]), { page_size: 3 }), { page_size: ['The page size must be even.'] });
    assert.deepEqual(await errorsOf(one('page_size', [integer(), even]), { page_size: 4 }), {});
  });

  test('object: "must be an array", as Laravel names associative arrays', async () => {
    assert.deepEqual(await errorsOf(one('headers', [object()]), { headers: 'x' }), { headers: ['The headers must be an array.'] });
    assert.deepEqual(await errorsOf(one('headers', [object()]), { headers: ['a'] }), { headers: ['The headers must be an array.'] });
    assert.deepEqual(await errorsOf(one('headers', [object()]), { headers: { a: '1' } }), {});
  });
});

describe('rules across fields: required_without, prohibits', () => {
  const target: Schema = {
    fields: {
      url: { rules: [requiredWithout('post_id'), string(), url(), prohibits('post_id')] },
      post_id: { rules: [requiredWithout('url'), string(), prohibits('url'), format((v) => (/^\d+$/.test(v) ? v : null))] },
    },
  };

  test('neither: each field is required without the other (Laravel 8 wording)', async () => {
    assert.deepEqual(await errorsOf(target, {}), {
      url: ['The url field is required when post id is not present.'],
      post_id: ['The post id field is required when url is not present.'],
    });
    // Blank counts as not present, on either side.
    assert.deepEqual(Object.keys(await errorsOf(target, { url: '  ', post_id: null })), ['url', 'post_id']);
  });

  test('both: each prohibits the other; either alone passes', async () => {
    assert.deepEqual(await errorsOf(target, { url: 'https://example.com/1', post_id: '1' }), {
      url: ['The url field prohibits post id from being present.'],
      post_id: ['The post id field prohibits url from being present.'],
    });
    assert.deepEqual(await errorsOf(target, { url: 'https://example.com/1' }), {});
    assert.deepEqual(await errorsOf(target, { post_id: '1' }), {});
  });

  test('prohibits is reported along with the field\'s other failures; a check needing a valid value is then skipped', async () => {
    assert.deepEqual(await errorsOf(target, { url: 'nope', post_id: 'x' }), {
      url: ['The url must be a valid URL.', 'The url field prohibits post id from being present.'],
      post_id: ['The post id field prohibits url from being present.'],
    });
  });
});

describe('rules that transform', () => {
  const hashtag = parsed('hashtag', (v) => (typeof v === 'string' && /^#?\w+$/.test(v) ? v.replace(/^#/, '').toLowerCase() : null), (attr) => `The ${attr} must be a hashtag.`);

  test('the handler gets what the rule read; the message when it cannot read it', async () => {
    assert.deepEqual(await valueOf(one('tag', [required(), string(), hashtag]), { tag: ' #NodeJS ' }), { tag: 'nodejs' });
    assert.deepEqual(await errorsOf(one('tag', [required(), string(), hashtag]), { tag: 'two words' }), { tag: ['The tag must be a hashtag.'] });
    // Skipped after an earlier failure of the field, as `custom` rules are.
    assert.deepEqual(await errorsOf(one('tag', [required(), string(), hashtag]), { tag: 7 }), { tag: ['The tag must be a string.'] });
  });

  test('format: Laravel\'s regex message', async () => {
    const year = one('year', [string(), format((v) => (/^\d{4}$/.test(v) ? Number(v) : null))]);
    assert.deepEqual(await valueOf(year, { year: '2024' }), { year: 2024 });
    assert.deepEqual(await errorsOf(year, { year: '24' }), { year: ['The year format is invalid.'] });
  });

  test('the last transforming rule decides, from the value as sent; defaults go through it too', async () => {
    const padded = parsed('padded', (v) => (typeof v === 'string' || typeof v === 'number' ? String(v).padStart(3, '0') : null), 'x');
    assert.deepEqual(await valueOf(one('code', [integer(), padded]), { code: '7' }), { code: '007' });
    const page: Schema = { fields: { page: { rules: [integer(), min(1)], default: '2' } } };
    assert.deepEqual(await valueOf(page, {}), { page: 2 });
  });

  test('an absent field without a default stays absent', async () => {
    assert.deepEqual(await valueOf(one('tag', [string(), hashtag]), {}), {});
  });
});

describe('every failure is reported, in rule order', () => {
  const perPage = one('per_page', [integer(), between(10, 100)]);
  const page = one('page', [integer(), min(1)]);

  test('per_page 5.5 fails integer and between', async () => {
    assert.deepEqual(await errorsOf(perPage, { per_page: 5.5 }), {
      per_page: ['The per page must be an integer.', 'The per page must be between 10 and 100.'],
    });
    assert.deepEqual(await errorsOf(perPage, { per_page: '5.5' }), {
      per_page: ['The per page must be an integer.', 'The per page must be between 10 and 100.'],
    });
  });

  test('per_page 50.5 fails integer only: its value is in range', async () => {
    assert.deepEqual(await errorsOf(perPage, { per_page: 50.5 }), { per_page: ['The per page must be an integer.'] });
  });

  test('page "abc" gives the integer message only (its length, 3, is at least 1)', async () => {
    assert.deepEqual(await errorsOf(page, { page: 'abc' }), { page: ['The page must be an integer.'] });
  });

  test('non-numeric text in a numeric field is sized by length but worded as a number', async () => {
    // Laravel picks the message form from the field's rules: "between 10 and 100", not "characters".
    assert.deepEqual(await errorsOf(perPage, { per_page: 'abc' }), {
      per_page: ['The per page must be an integer.', 'The per page must be between 10 and 100.'],
    });
    // Hexadecimal is not numeric in PHP: "0x10" is 4 characters long, so between 10 and 100 fails too.
    assert.deepEqual(await errorsOf(perPage, { per_page: '0x10' }), {
      per_page: ['The per page must be an integer.', 'The per page must be between 10 and 100.'],
    });
  });

  test('messages follow the order of the rules', async () => {
    assert.deepEqual(await errorsOf(one('contact', [min(20), email()]), { contact: 'ab' }), {
      contact: ['The contact must be at least 20 characters.', 'The contact must be a valid email address.'],
    });
    assert.deepEqual(await errorsOf(one('contact', [email(), min(20)]), { contact: 'ab' }), {
      contact: ['The contact must be a valid email address.', 'The contact must be at least 20 characters.'],
    });
  });

  test('every failing field is reported, in schema order', async () => {
    const schema: Schema = {
      fields: {
        query: { rules: [required(), string()] },
        page: { rules: [integer(), min(1)] },
        per_page: { rules: [integer(), between(10, 100)] },
        country: { rules: [oneOf(['us'])] },
      },
    };
    const errors = await errorsOf(schema, { page: 0, per_page: 5.5, country: 'zz' });
    assert.deepEqual(errors, {
      query: ['The query field is required.'],
      page: ['The page must be at least 1.'],
      per_page: ['The per page must be an integer.', 'The per page must be between 10 and 100.'],
      country: ['The selected country is invalid.'],
    });
    assert.deepEqual(Object.keys(errors), ['query', 'page', 'per_page', 'country']);
  });

  test('a custom rule that needs a valid value is skipped after an earlier failure', async () => {
    let calls = 0;
    const expensive = custom('reachable', () => (calls++, false), 'The url is not reachable.');
    const schema = one('url', [required(), url(), expensive]);
    assert.deepEqual(await errorsOf(schema, { url: 'nope' }), { url: ['The url must be a valid URL.'] });
    assert.equal(calls, 0);
    assert.deepEqual(await errorsOf(schema, { url: 'https://example.com' }), { url: ['The url is not reachable.'] });
    assert.equal(calls, 1);
  });

  test('a custom rule may opt out and always run', async () => {
    const always = custom('always', () => false, 'The tag is also wrong.', { needsValid: false });
    assert.deepEqual(await errorsOf(one('tag', [integer(), always]), { tag: 'x' }), { tag: ['The tag must be an integer.', 'The tag is also wrong.'] });
  });

  test('cross-field refine runs beside the fields\' own rules; a field they refused keeps their messages', async () => {
    const schema: Schema = {
      fields: { a: { rules: [integer()] }, b: { rules: [integer()] }, c: { rules: [integer()] } },
      refine(input, errors) {
        if (input.a !== undefined && input.b !== undefined) errors.a = ['Only one of a and b may be given.'];
        if (Array.isArray(input.list)) errors['list.0'] = ['The list.0 is wrong.'];
      },
    };
    assert.deepEqual(await errorsOf(schema, { a: 1, b: 2 }), { a: ['Only one of a and b may be given.'] });
    assert.deepEqual(await errorsOf(schema, { a: 'x', b: 2 }), { a: ['The a must be an integer.'] });
    assert.deepEqual(await errorsOf(schema, { c: 'x', list: [1] }), { c: ['The c must be an integer.'], 'list.0': ['The list.0 is wrong.'] });
    assert.deepEqual(await errorsOf(schema, { a: 1 }), {});
  });
});

describe('absent and blank fields', () => {
  test('an absent or blank optional field is not checked', async () => {
    const schema = one('page', [integer(), min(1)]);
    for (const blank of [undefined, null, '', '   ', '\t\n']) assert.deepEqual(await errorsOf(schema, { page: blank }), {}, JSON.stringify(blank));
    assert.deepEqual(await errorsOf(schema, {}), {});
  });

  test('a blank required field gets only the required message', async () => {
    const schema = one('query', [required(), string(), min(3)]);
    for (const blank of [undefined, null, '', '   ', [], {}]) {
      assert.deepEqual(await errorsOf(schema, { query: blank }), { query: ['The query field is required.'] }, JSON.stringify(blank));
    }
  });

  test('an empty array or object in an optional field is a value: its rules run', async () => {
    const perPage = one('per_page', [integer(), between(10, 100)]);
    for (const empty of [[], {}]) {
      assert.deepEqual(
        await errorsOf(perPage, { per_page: empty }),
        { per_page: ['The per page must be an integer.', 'The per page must be between 10 and 100.'] },
        JSON.stringify(empty),
      );
    }
    assert.deepEqual(await errorsOf(one('country', [string(), oneOf(['us'])]), { country: [] }), {
      country: ['The country must be a string.', 'The selected country is invalid.'],
    });
  });

  test('when required fails, later rules (even ones that would fail) are skipped', async () => {
    const never = custom('never', () => false, 'never shown', { needsValid: false, implicit: true });
    assert.deepEqual(await errorsOf(one('query', [required(), never]), {}), { query: ['The query field is required.'] });
  });

  test('implicit custom rules see absent fields', async () => {
    const present = custom('present', (v) => v !== undefined, 'The token must be present.', { implicit: true, needsValid: false });
    assert.deepEqual(await errorsOf(one('token', [present]), {}), { token: ['The token must be present.'] });
  });

  test('false and 0 are present values, not blanks', async () => {
    assert.deepEqual(await errorsOf(one('flag', [required(), boolean()]), { flag: false }), {});
    assert.deepEqual(await errorsOf(one('page', [required(), integer(), min(1)]), { page: 0 }), { page: ['The page must be at least 1.'] });
  });
});

describe('defaults and coercion of valid input', () => {
  const schema: Schema = {
    fields: {
      query: { rules: [required(), string()] },
      page: { rules: [integer(), min(1)], default: 1 },
      per_page: { rules: [integer(), between(10, 100)], default: 10 },
      bypass_captcha: { rules: [boolean()], default: false },
      country: { rules: [string(), oneOf(['us', 'fr'])] },
      secret_key: { rules: [string()], secret: true },
    },
  };

  test('defaults fill absent and blank fields; absent fields without a default stay absent', async () => {
    const value = await valueOf(schema, { query: 'cats', page: '', per_page: '  ' });
    assert.deepEqual(value, { query: 'cats', page: 1, per_page: 10, bypass_captcha: false });
    assert.equal('country' in value, false);
  });

  test('numeric strings become integers', async () => {
    const value = await valueOf(schema, { query: 'cats', page: '3', per_page: '25' });
    assert.equal(value.page, 3);
    assert.equal(value.per_page, 25);
  });

  test('"1"/1/true become true, "0"/0/false become false', async () => {
    for (const [input, expected] of [['1', true], [1, true], [true, true], ['0', false], [0, false], [false, false]] as const) {
      assert.equal((await valueOf(schema, { query: 'q', bypass_captcha: input })).bypass_captcha, expected, JSON.stringify(input));
    }
  });

  test('strings are trimmed, before the rules see them (TrimStrings)', async () => {
    const value = await valueOf(schema, { query: '  cats  ', country: ' fr ', page: ' 2 ' });
    assert.equal(value.query, 'cats');
    assert.equal(value.country, 'fr');
    assert.equal(value.page, 2);
    assert.deepEqual(await errorsOf(one('email', [email()]), { email: ' a@example.com ' }), {});
  });

  test('secret fields are kept exactly as sent', async () => {
    assert.equal((await valueOf(schema, { query: 'q', secret_key: ' k3y ' })).secret_key, ' k3y ');
  });

  test('the input object is not modified', async () => {
    const input = { query: ' cats ', page: '2' };
    await valueOf(schema, input);
    assert.deepEqual(input, { query: ' cats ', page: '2' });
  });
});

describe('toJsonSchema', () => {
  const schema: Schema = {
    fields: {
      url: { rules: [required(), url()], description: 'Page to fetch.', example: 'https://example.com' },
      email: { rules: [required(), string(), email()] },
      page: { rules: [integer(), min(1)], default: 1 },
      per_page: { rules: [integer(), between(10, 100)], default: 10 },
      limit: { rules: [integer(), max(50)] },
      name: { rules: [string(), between(2, 30)] },
      country: { rules: [string(), oneOf(['us', 'fr'])] },
      bypass_captcha: { rules: [boolean()], default: false },
      headers: { rules: [object()] },
    },
  };
  const json = toJsonSchema(schema) as { type: string; required: string[]; properties: Record<string, Record<string, unknown>> };

  test('an object with the required fields listed in order', () => {
    assert.equal(json.type, 'object');
    assert.deepEqual(json.required, ['url', 'email']);
    assert.deepEqual(Object.keys(json.properties), Object.keys(schema.fields));
  });

  test('formats, types, bounds, enums, defaults, docs', () => {
    assert.deepEqual(json.properties.url, { type: 'string', format: 'uri', maxLength: 8192, description: 'Page to fetch.', example: 'https://example.com' });
    assert.deepEqual(json.properties.email, { type: 'string', format: 'email' });
    assert.deepEqual(json.properties.page, { type: 'integer', minimum: 1, default: 1 });
    assert.deepEqual(json.properties.per_page, { type: 'integer', minimum: 10, maximum: 100, default: 10 });
    assert.deepEqual(json.properties.limit, { type: 'integer', maximum: 50 });
    assert.deepEqual(json.properties.name, { type: 'string', minLength: 2, maxLength: 30 });
    assert.deepEqual(json.properties.country, { type: 'string', enum: ['us', 'fr'] });
    assert.deepEqual(json.properties.bypass_captcha, { type: 'boolean', default: false });
    assert.deepEqual(json.properties.headers, { type: 'object' });
  });

  test('no required list when nothing is required', () => {
    assert.deepEqual(toJsonSchema({ fields: { page: { rules: [integer()] } } }), { type: 'object', properties: { page: { type: 'integer' } } });
  });
});
