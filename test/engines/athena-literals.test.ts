import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { inlineParameters, findPlaceholders, trinoLiteral } from '../../shared/engines/athena-literals.js';
import type { SqlParam } from '../../shared/query/sql/sql.js';
import { EngineValueError } from '../../shared/engines/engine-errors.js';

const s = (value: string): SqlParam => ({ type: 'string', value });

/** Reads a rendered string literal back the way Trino does: strip the quotes, undouble ''. */
function parseStringLiteral(literal: string): string {
  expect(literal.startsWith("'") && literal.endsWith("'")).toBe(true);
  const body = literal.slice(1, -1);
  // An undoubled quote inside the body would end the literal early: that is the injection we rule out.
  expect(body.replaceAll("''", '')).not.toContain("'");
  return body.replaceAll("''", "'");
}

describe('trinoLiteral: strings', () => {
  it.each([
    ['plain', 'shop.example.com', "'shop.example.com'"],
    ['empty', '', "''"],
    ['one quote', "O'Brien", "'O''Brien'"],
    ['only quotes', "'''", "''''''''"],
    ['classic injection', "x' OR '1'='1", "'x'' OR ''1''=''1'"],
    ['statement break', "'; DROP TABLE events; --", "'''; DROP TABLE events; --'"],
    ['backslash is ordinary in Trino', "a\\'b", "'a\\''b'"],
    ['comment markers', '/* -- */', "'/* -- */'"],
    ['placeholder character', 'why?', "'why?'"],
    ['newlines and tabs', 'a\nb\r\tc', "'a\nb\r\tc'"],
    ['unicode', 'Zürich 東京 🚀', "'Zürich 東京 🚀'"],
    ['double quotes', 'say "hi"', '\'say "hi"\''],
  ])('%s', (_name, input, expected) => {
    expect(trinoLiteral(s(input))).toBe(expected);
    expect(parseStringLiteral(expected)).toBe(input);
  });

  it('round-trips any well-formed string without an unescaped quote', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme' }).filter((v) => !v.includes('\u0000')),
        (value) => {
          expect(parseStringLiteral(trinoLiteral(s(value)))).toBe(value);
        },
      ),
    );
  });

  it('refuses NUL with a 400', () => {
    expect(() => trinoLiteral(s('a\u0000b'))).toThrow(EngineValueError);
  });

  it('refuses lone surrogates with a 400 but keeps real pairs', () => {
    expect(() => trinoLiteral(s('a\ud800b'))).toThrow(EngineValueError);
    expect(() => trinoLiteral(s('\udc00'))).toThrow(EngineValueError);
    expect(trinoLiteral(s('\ud83d\ude80'))).toBe("'🚀'");
  });

  it('refuses a non-string smuggled in as a string', () => {
    expect(() => trinoLiteral({ type: 'string', value: 1 as unknown as string })).toThrow(/not a string/);
  });
});

describe('trinoLiteral: other types', () => {
  it('writes safe integers as digits', () => {
    expect(trinoLiteral({ type: 'int', value: 0 })).toBe('0');
    expect(trinoLiteral({ type: 'int', value: -42 })).toBe('-42');
    expect(trinoLiteral({ type: 'int', value: Number.MAX_SAFE_INTEGER })).toBe('9007199254740991');
  });

  it.each([1.5, Number.NaN, Infinity, 2 ** 53, '1; DROP' as unknown as number])('refuses int %s', (value) => {
    expect(() => trinoLiteral({ type: 'int', value })).toThrow(/safe integer/);
  });

  it('writes booleans as keywords', () => {
    expect(trinoLiteral({ type: 'bool', value: true })).toBe('true');
    expect(trinoLiteral({ type: 'bool', value: false })).toBe('false');
    expect(() => trinoLiteral({ type: 'bool', value: 'true' as unknown as boolean })).toThrow();
  });

  it('writes dates as DATE literals', () => {
    expect(trinoLiteral({ type: 'date', value: '2026-03-01' })).toBe("DATE '2026-03-01'");
    expect(trinoLiteral({ type: 'date', value: '2024-02-29' })).toBe("DATE '2024-02-29'");
  });

  it.each(["2026-03-01' OR 1=1 --", '2026-3-1', '2026-02-30', '2026-13-01', '20260301', ' 2026-03-01'])(
    'refuses date %j',
    (value) => {
      expect(() => trinoLiteral({ type: 'date', value })).toThrow(/calendar date/);
    },
  );

  it('writes timestamps in UTC with milliseconds', () => {
    expect(trinoLiteral({ type: 'timestamp', value: new Date('2026-03-01T14:05:09.120Z') })).toBe(
      "TIMESTAMP '2026-03-01 14:05:09.120'",
    );
    expect(trinoLiteral({ type: 'timestamp', value: new Date('2026-03-01T00:00:00+05:30') })).toBe(
      "TIMESTAMP '2026-02-28 18:30:00.000'",
    );
  });

  it('refuses invalid and out-of-range timestamps', () => {
    expect(() => trinoLiteral({ type: 'timestamp', value: new Date(Number.NaN) })).toThrow(/timestamp/);
    expect(() => trinoLiteral({ type: 'timestamp', value: new Date('+010000-01-01T00:00:00Z') })).toThrow(/timestamp/);
    expect(() => trinoLiteral({ type: 'timestamp', value: '2026-03-01' as unknown as Date })).toThrow(/timestamp/);
  });

  it('refuses an unknown parameter type', () => {
    expect(() => trinoLiteral({ type: 'raw', value: '1' } as unknown as SqlParam)).toThrow(/unknown parameter type/);
  });
});

describe('findPlaceholders', () => {
  it('finds bare ? and skips quoted text and comments', () => {
    const sql = `SELECT '?', "a?b", 'it''s ?' -- why?\n, x /* ? */ FROM t WHERE a = ? AND b = ?`;
    const found = findPlaceholders(sql);
    expect(found.map((i) => sql[i])).toEqual(['?', '?']);
    expect(found).toEqual([sql.indexOf('a = ?') + 4, sql.lastIndexOf('?')]);
  });

  it('refuses unterminated quotes and comments rather than guess', () => {
    expect(() => findPlaceholders("SELECT 'abc")).toThrow(/unterminated/);
    expect(() => findPlaceholders('SELECT "abc')).toThrow(/unterminated/);
    expect(() => findPlaceholders('SELECT /* abc')).toThrow(/unterminated/);
  });
});

describe('inlineParameters', () => {
  it('writes every literal in place of its own ?, in order, and no ? is left', () => {
    const text = inlineParameters("SELECT '?' AS q, ? AS a FROM t WHERE domain = ? AND dt >= ? AND n > ? -- ?", [
      s("it's"),
      s('shop.example.com'),
      { type: 'date', value: '2026-03-01' },
      { type: 'int', value: 3 },
    ]);
    expect(text).toBe(
      "SELECT '?' AS q, 'it''s' AS a FROM t WHERE domain = 'shop.example.com' AND dt >= DATE '2026-03-01' AND n > 3 -- ?",
    );
    expect(findPlaceholders(text)).toEqual([]);
  });

  it("inlines literals of any length (Athena's 1,024-character parameter limit does not apply)", () => {
    const long = 'y'.repeat(5000);
    expect(inlineParameters('SELECT ?', [s(long)])).toBe(`SELECT '${long}'`);
  });

  it('refuses a count mismatch between ? and parameters', () => {
    expect(() => inlineParameters('SELECT ?, ?', [s('a')])).toThrow(/2 placeholders but 1 parameters/);
    expect(() => inlineParameters("SELECT '?'", [s('a')])).toThrow(/0 placeholders but 1 parameters/);
  });

  it('validates every value', () => {
    expect(() => inlineParameters('SELECT ?', [s('\u0000')])).toThrow(EngineValueError);
  });
});
