import { describe, expect, it } from 'vitest';
import { csvCell, csvHeader, csvRow, ndjsonRows, neutraliseFormula, FORMULA_START } from '../../src/domain/csv.ts';
import { dateRange, paging, pageCount, DateParamError } from '../../src/domain/exportParams.ts';
import { InvalidParameterError } from '../../src/domain/errors.ts';
import { acceptsGzip } from '../../src/http/compression.ts';

describe('CSV rule set (pure)', () => {
  it('quotes text, doubles quotes, keeps commas and line breaks inside the quotes', () => {
    expect(csvCell('plain')).toBe('"plain"');
    expect(csvCell('a "b", c\r\nd')).toBe('"a ""b"", c\r\nd"');
    expect(csvCell('')).toBe('""');
  });

  it('writes numbers bare, booleans as true/false, null and undefined as an empty cell, objects as JSON', () => {
    expect(csvCell(0)).toBe('0');
    expect(csvCell(10.5)).toBe('10.5');
    expect(csvCell(true)).toBe('true');
    expect(csvCell(false)).toBe('false');
    expect(csvCell(null)).toBe('');
    expect(csvCell(undefined)).toBe('');
    expect(csvCell({ a: 'x"y', b: [1, null] })).toBe('"{""a"":""x\\""y"",""b"":[1,null]}"');
  });

  it('neutralises every formula-starting character, and nothing else', () => {
    for (const c of FORMULA_START) expect(neutraliseFormula(`${c}SUM(A1)`)).toBe(`'${c}SUM(A1)`);
    expect(csvCell('=1+2')).toBe(`"'=1+2"`);
    expect(csvCell('\tx')).toBe(`"'\tx"`);
    for (const v of ['a=1', "'=1", '1-2', '', ' a=1', '\uFEFFx']) expect(neutraliseFormula(v)).toBe(v);
    // what a spreadsheet skips before the sign: spaces, a BOM, no-break spaces
    for (const v of [' =1', '  +1', '\uFEFF=1', '\u00A0@x', '\n=1', '\uFF1DSUM(A1)'])
      expect(neutraliseFormula(v)).toBe(`'${v}`);
    // numbers are numbers, not text: a negative number is not a formula
    expect(csvCell(-5)).toBe('-5');
  });

  it('builds a header row and rows in field order with CRLF line ends', () => {
    const fields = ['id', 'n', 'ok', 'missing'];
    expect(csvHeader(fields)).toBe('"id","n","ok","missing"\r\n');
    expect(csvRow(fields, { n: 3, ok: true, id: 'x' })).toBe('"x",3,true,\r\n');
  });

  it('NDJSON: one object per line, fields in order, absent values null', () => {
    expect(
      ndjsonRows(
        ['b', 'a', 'c'],
        [
          { a: 1, b: 'x\ny' },
          { a: 2, b: null },
        ],
      ),
    ).toBe('{"b":"x\\ny","a":1,"c":null}\n{"b":null,"a":2,"c":null}\n');
  });
});

describe('export parameters (pure)', () => {
  const ms = (s: string) => Date.parse(s);

  it('from is inclusive; a date-only to covers the whole UTC day; a date-time to is inclusive to the ms', () => {
    expect(dateRange('2026-01-31', '2026-01-31')).toEqual({
      fromMs: ms('2026-01-31T00:00:00Z'),
      toMsExclusive: ms('2026-02-01T00:00:00Z'),
    });
    expect(dateRange(undefined, '2026-01-31T12:34:56.789Z')).toEqual({
      fromMs: undefined,
      toMsExclusive: ms('2026-01-31T12:34:56.789Z') + 1,
    });
    expect(dateRange('2024-02-29T10:00Z', undefined).fromMs).toBe(ms('2024-02-29T10:00:00Z'));
  });

  it('reads offsets (including a "+" decoded to a space), fractions, and zone-less times as UTC', () => {
    expect(dateRange('2026-01-31T01:00:00+01:00', undefined).fromMs).toBe(ms('2026-01-31T00:00:00Z'));
    expect(dateRange('2026-01-31T01:00:00 0100', undefined).fromMs).toBe(ms('2026-01-31T00:00:00Z'));
    expect(dateRange('2026-01-30T20:00:00-05', undefined).fromMs).toBe(ms('2026-01-31T01:00:00Z'));
    expect(dateRange('2026-01-31T00:00:00.123456', undefined).fromMs).toBe(ms('2026-01-31T00:00:00.123Z'));
  });

  it('rejects what is not an ISO 8601 date or date-time, impossible dates, and from after to', () => {
    for (const bad of [
      '',
      'now',
      '31/01/2026',
      '2026-1-31',
      '2026-02-29',
      '2026-04-31',
      '2026-01-31T24:00:00Z',
      '2026-01-31T10:60Z',
      '2026-01-31T10:00:00+25:00',
      '1769817600000',
      '2026-01-31T10',
    ]) {
      expect(() => dateRange(bad, undefined), bad).toThrow(DateParamError);
    }
    expect(() => dateRange('2026-02-01', '2026-01-31')).toThrow(/after/);
    // Two valid dates in the wrong order: a bad parameter (named: from), not a bad date.
    expect(() => dateRange('2026-01-31T00:00:00.001Z', '2026-01-31T00:00:00.000Z')).toThrow(
      expect.objectContaining({ parameter: 'from', constructor: InvalidParameterError }),
    );
  });

  it('clamps limit to 1000 and computes offsets and page counts', () => {
    expect(paging()).toEqual({ page: 1, limit: 100, offset: 0 });
    expect(paging(3, 5000)).toEqual({ page: 3, limit: 1000, offset: 2000 });
    expect(pageCount(0, 100)).toBe(0);
    expect(pageCount(100, 100)).toBe(1);
    expect(pageCount(101, 100)).toBe(2);
  });

  it('negotiates gzip by Accept-Encoding with q-values', () => {
    expect(acceptsGzip(undefined)).toBe(false);
    expect(acceptsGzip('gzip')).toBe(true);
    expect(acceptsGzip('br;q=1.0, gzip;q=0.8')).toBe(true);
    expect(acceptsGzip('gzip;q=0')).toBe(false);
    expect(acceptsGzip('identity')).toBe(false);
    expect(acceptsGzip('*')).toBe(true);
    expect(acceptsGzip('*;q=0, gzip')).toBe(true);
  });
});

describe('incremental cursor (pure)', () => {
  it('round-trips (updatedAt, id), starts updatedSince inclusively, and refuses what it did not write', async () => {
    const { changeStart, decodeCursor, encodeCursor, CursorParamError } = await import(
      '../../src/domain/changeCursor.ts'
    );
    const k = { t: 1_767_225_600_123, id: '6f0e8c1a-3b5d-4e7f-9a1b-2c3d4e5f6a7b' };
    expect(decodeCursor(encodeCursor(k))).toEqual(k);
    expect(changeStart(undefined, encodeCursor(k))).toEqual(k);
    // (t − 1, the greatest id): every row stamped at t or later comes after it
    expect(changeStart('2026-01-01T00:00:00.123Z', undefined)).toEqual({
      t: k.t - 1,
      id: 'ffffffff-ffff-ffff-ffff-ffffffffffff',
    });
    expect(changeStart(undefined, undefined)).toBeUndefined();
    for (const bad of [
      '',
      'abc',
      'v1.',
      `v2.${Buffer.from(`1:${k.id}`).toString('base64url')}`,
      `v1.${Buffer.from('1:x').toString('base64url')}`,
    ]) {
      expect(() => decodeCursor(bad), bad).toThrow(CursorParamError);
    }
    expect(() => changeStart('2026-01-01', encodeCursor(k))).toThrow(CursorParamError);
  });
});
