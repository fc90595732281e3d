import { test } from 'node:test';
import assert from 'node:assert/strict';
import { listMigrations, splitStatements } from '../../src/storage/migrate.ts';

test('statements split on top-level semicolons; comments are dropped', () => {
  assert.deepEqual(splitStatements('CREATE TABLE a (x int); -- a comment; with a semicolon\nCREATE INDEX i ON a (x);\n'), [
    'CREATE TABLE a (x int)',
    'CREATE INDEX i ON a (x)',
  ]);
  assert.deepEqual(splitStatements('/* block; comment */ SELECT 1;;  ;'), ['SELECT 1']);
});

test('semicolons inside strings, quoted identifiers and dollar-quoted bodies do not split', () => {
  const fn = `CREATE FUNCTION f() RETURNS int LANGUAGE plpgsql AS $body$ BEGIN PERFORM 1; RETURN 2; END $body$`;
  const plain = `CREATE FUNCTION g() RETURNS text LANGUAGE sql AS $$ SELECT 'a;b' $$`;
  assert.deepEqual(splitStatements(`${fn};\n${plain};\nINSERT INTO t VALUES ('it''s; fine', "odd;name")`), [
    fn,
    plain,
    `INSERT INTO t VALUES ('it''s; fine', "odd;name")`,
  ]);
  // A positional parameter is not a dollar quote.
  assert.deepEqual(splitStatements('SELECT $1::int; SELECT 2'), ['SELECT $1::int', 'SELECT 2']);
});

test('an unterminated dollar quote is an error, not a silently merged script', () => {
  assert.throws(() => splitStatements('CREATE FUNCTION f() AS $$ BEGIN; SELECT 1;'), /Unterminated \$\$/);
});

test("every shipped migration splits into statements that end where they should", () => {
  for (const migration of listMigrations()) {
    const statements = splitStatements(migration.sql);
    assert.ok(statements.length > 0, migration.version);
    for (const statement of statements) assert.match(statement, /^(CREATE|INSERT|ALTER|DROP|UPDATE|COMMENT)\b/i, `${migration.version}: ${statement.slice(0, 60)}`);
  }
});
