import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildPdfResult,
  countCharacters,
  countWords,
  formatFileSize,
  pdfDateToUtc,
} from '../../src/extract/pdf/result.ts';

describe('pdfDateToUtc', () => {
  const cases: Array<[input: string, expected: string]> = [
    ["D:20230101120000+02'00'", 'D:20230101100000Z'],
    ["D:20090401163925-07'00'", 'D:20090401233925Z'],
    ["D:20161231184323+01'00'", 'D:20161231174323Z'],
    ["D:20220414132421+05'24'", 'D:20220414080021Z'], // odd offsets are real (WPS Writer)
    ["D:20200229235959-05'30'", 'D:20200301052959Z'], // crosses a leap day and a month
    ["D:20240101003000+01'00'", 'D:20231231233000Z'], // crosses a year backwards
    ['D:20230101120000Z', 'D:20230101120000Z'],
    ["D:20150722100404Z00'00'", 'D:20150722100404Z'], // macOS Quartz writes Z with a zero offset
    ['D:20160220040559', 'D:20160220040559Z'], // no offset: taken as UTC
    ['D:20230615', 'D:20230615000000Z'], // missing fields default to their minimum
    ['D:2023', 'D:20230101000000Z'],
    ['20230101120000+0200', 'D:20230101100000Z'], // no prefix, no apostrophes
    ["D:20230101120000+02'", 'D:20230101100000Z'], // offset hours only
    ['  D:20230101120000Z  ', 'D:20230101120000Z'],
  ];
  for (const [input, expected] of cases) {
    test(`${input} → ${expected}`, () => assert.equal(pdfDateToUtc(input), expected));
  }

  const unparseable: unknown[] = [
    undefined,
    null,
    42,
    '',
    'D:',
    'yesterday',
    'D:2023010',
    'D:20231301000000Z', // month 13
    'D:20230230000000Z', // 30 February
    'D:20230101250000Z', // hour 25
    "D:20230101120000+25'00'",
    'D:20230101120000 garbage',
    'Tue Mar 14 2023',
  ];
  for (const input of unparseable) {
    test(`${JSON.stringify(input)} is omitted`, () => assert.equal(pdfDateToUtc(input), undefined));
  }
});

describe('counting', () => {
  test('words are whitespace-separated tokens, any Unicode whitespace', () => {
    assert.equal(countWords(''), 0);
    assert.equal(countWords('   \n\t '), 0);
    assert.equal(countWords('one'), 1);
    assert.equal(countWords('  two  words\n'), 2);
    assert.equal(countWords('a\u00a0b\u3000c\td\ne'), 5);
    assert.equal(countWords('end-to-end, (punctuated) words.'), 3);
  });

  test('characters are code points, so astral characters count once', () => {
    assert.equal(countCharacters(''), 0);
    assert.equal(countCharacters('abc'), 3);
    assert.equal(countCharacters('𠮷'), 1);
    assert.equal('𠮷'.length, 2);
    assert.equal(countCharacters('Grüße\n日本'), 8);
  });

  test('file size is kilobytes with two decimals', () => {
    assert.equal(formatFileSize(0), '0.00 KB');
    assert.equal(formatFileSize(1024), '1.00 KB');
    assert.equal(formatFileSize(187_924), '183.52 KB');
    assert.equal(formatFileSize(1_793_471), '1751.44 KB');
    assert.equal(formatFileSize(44), '0.04 KB');
  });
});

describe('buildPdfResult', () => {
  test('counts over all pages and keeps the wire key order', () => {
    const result = buildPdfResult({
      pageTexts: ['Hello world', '', 'Grüße 𠮷\nline two'],
      fileBytes: 2048,
      rawCreationDate: "D:20230101120000+02'00'",
    });
    assert.equal(
      JSON.stringify(result),
      JSON.stringify({
        metadata: {
          word_count: 6,
          character_count: 11 + 0 + 16,
          page_count: 3,
          file_size: '2.00 KB',
          creation_date: 'D:20230101100000Z',
        },
        pages: [
          { page: 1, text: 'Hello world' },
          { page: 2, text: '' },
          { page: 3, text: 'Grüße 𠮷\nline two' },
        ],
      }),
    );
  });

  test('creation_date is absent (not null) when missing or unparseable', () => {
    for (const rawCreationDate of [undefined, 'not a date', { name: 'odd' }]) {
      const { metadata } = buildPdfResult({ pageTexts: ['x'], fileBytes: 1, rawCreationDate });
      assert.equal('creation_date' in metadata, false);
      assert.deepEqual(Object.keys(metadata), ['word_count', 'character_count', 'page_count', 'file_size']);
    }
  });
});
