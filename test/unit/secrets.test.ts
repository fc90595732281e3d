/** Token and secret-key material: Sanctum 2 token format, bearer parsing, hash comparison. */
import { test, describe } from 'node:test';
import assert from 'node:assert/strict';
import {
  hashesEqual,
  newSecretKey,
  newTokenSecret,
  parseBearer,
  randomString,
  SECRET_KEY_LENGTH,
  sha256Hex,
  TOKEN_SECRET_LENGTH,
} from '../../src/accounts/secrets.ts';

const SANCTUM_TOKEN = /^\d+\|[A-Za-z0-9]{40}$/;

describe('token and secret key material', () => {
  test('a token secret is 40 characters of [A-Za-z0-9]: with its id it makes a Sanctum token', () => {
    assert.equal(TOKEN_SECRET_LENGTH, 40);
    for (let i = 0; i < 50; i++) {
      const secret = newTokenSecret();
      assert.match(secret, /^[A-Za-z0-9]{40}$/);
      assert.match(`${i + 1}|${secret}`, SANCTUM_TOKEN);
    }
  });

  test('a secret key is at least 48 characters of [A-Za-z0-9]', () => {
    assert.ok(SECRET_KEY_LENGTH >= 48);
    const key = newSecretKey();
    assert.ok(key.length >= 48, `length ${key.length}`);
    assert.match(key, /^[A-Za-z0-9]+$/);
  });

  test('values are random: no repeats, every class of character shows up', () => {
    const secrets = new Set(Array.from({ length: 200 }, () => newTokenSecret()));
    assert.equal(secrets.size, 200);
    const pooled = [...secrets].join('');
    assert.match(pooled, /[A-Z]/);
    assert.match(pooled, /[a-z]/);
    assert.match(pooled, /[0-9]/);
    assert.notEqual(newSecretKey(), newSecretKey());
  });

  test('randomString honours the length asked for', () => {
    assert.equal(randomString(0), '');
    assert.equal(randomString(7).length, 7);
  });

  test('sha256Hex is the lowercase hex SHA-256 of the UTF-8 text', () => {
    assert.equal(sha256Hex('abc'), 'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    assert.match(sha256Hex('é'), /^[0-9a-f]{64}$/);
  });
});

describe('parseBearer', () => {
  test('"<id>|<secret>" splits into a numeric id and the secret', () => {
    const secret = newTokenSecret();
    assert.deepEqual(parseBearer(`17|${secret}`), { id: 17, secret });
  });

  test('a value without a bar is a bare secret, looked up by hash (id null)', () => {
    assert.deepEqual(parseBearer('abcDEF123'), { id: null, secret: 'abcDEF123' });
  });

  test('only the first bar separates: later bars belong to the secret', () => {
    assert.deepEqual(parseBearer('5|ab|cd'), { id: 5, secret: 'ab|cd' });
    assert.deepEqual(parseBearer('5||'), { id: 5, secret: '|' });
  });

  test('empty value, empty id or empty secret is refused', () => {
    assert.equal(parseBearer(''), null);
    assert.equal(parseBearer('|secret'), null);
    assert.equal(parseBearer('12|'), null);
    assert.equal(parseBearer('|'), null);
  });

  test('a non-numeric id is refused', () => {
    for (const value of ['abc|secret', '1a|secret', '-1|secret', '1.5|secret', ' 1|secret', '0x1|secret']) {
      assert.equal(parseBearer(value), null, value);
    }
  });

  test('an id too long to be a safe integer is refused', () => {
    assert.equal(parseBearer('1234567890123456|secret'), null);
    assert.deepEqual(parseBearer('123456789012345|secret'), { id: 123456789012345, secret: 'secret' });
  });
});

describe('hashesEqual', () => {
  const a = sha256Hex('one');
  const b = sha256Hex('two');

  test('equal digests are equal, different ones are not', () => {
    assert.equal(hashesEqual(a, a), true);
    assert.equal(hashesEqual(a, sha256Hex('one')), true);
    assert.equal(hashesEqual(a, b), false);
  });

  test('hex case does not matter', () => {
    assert.equal(hashesEqual(a, a.toUpperCase()), true);
  });

  test('different lengths compare unequal without throwing', () => {
    assert.equal(hashesEqual(a, a.slice(0, 62)), false);
    assert.equal(hashesEqual(a.slice(0, 62), a), false);
    assert.equal(hashesEqual(a, a + '00'), false);
  });

  test('empty values are never equal, not even to each other', () => {
    assert.equal(hashesEqual('', ''), false);
    assert.equal(hashesEqual(a, ''), false);
  });

  test('malformed hex is unequal rather than compared by its decodable prefix', () => {
    assert.equal(hashesEqual('abzz', 'abyy'), false);
    assert.equal(hashesEqual('abc', 'abd'), false);
    assert.equal(hashesEqual(a.slice(0, 62) + 'zz', a.slice(0, 62) + 'zz'), false);
  });
});
