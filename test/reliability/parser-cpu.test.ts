import fc from 'fast-check';
import { originalPositionFor } from '@jridgewell/trace-mapping';
import { describe, expect, it } from 'vitest';
import { normaliseFrame, normaliseMessage, normaliseStack, stackLines } from '../../src/domain/stackNormalise.ts';
import { crashGroupKey, legacyGroupKey, stackHead } from '../../src/domain/crashGrouping.ts';
import { stackFrames } from '../../src/domain/grouping/groupKey.ts';
import { fingerprintInput, globMatch } from '../../src/domain/fingerprintRules.ts';
import {
  framePath,
  parseJsFrame,
  readableSource,
  resolveBeside,
  sourceMappingUrl,
} from '../../src/domain/symbolication/jsFrames.ts';
import { jsFilesOf, parseSourceMap, readSourceMap, symbolicateJs } from '../../src/domain/symbolication/sourceMaps.ts';
import { parseProguardMapping, retraceStack } from '../../src/domain/symbolication/retrace.ts';
import { firstByte, jsonShape, mayHoldHugeNumber, topLevelArrayExceeds } from '../../src/lib/jsonScan.ts';
import { csvCell } from '../../src/domain/csv.ts';
import { originOf } from '../../src/domain/origins.ts';
import { cleanAiSummary } from '../../src/domain/crashSummary.ts';
import { loggableUrl } from '../../src/http/headers.ts';
import { MAPPING, release } from '../helpers/bundle.ts';

// Issue 32: every parser of untrusted text, given adversarial text of 256 KB (one long line,
// repeated separators, a token repeated, nested sections), finishes in bounded CPU.
//
// Why the bound cannot flake: it is CPU time of this process (process.cpuUsage), not wall-clock,
// so other work on a busy machine does not count against it; a linear parser reads 256 KB in a
// few milliseconds, and the bound is one second, a margin of a hundred and more. The quadratic
// patterns this replaced took 3 s (retrace's SOURCE_FILE at 255 KB) to minutes (stack lines at
// 262 KB), so the bound separates the two by orders of magnitude on any machine.
const SIZE = 256 * 1024;
const CPU_BOUND_MS = 1000;
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_127);
const RUNS = Number(process.env.FUZZ_CASES ?? 40);

function cpuMs(f: () => unknown): number {
  const before = process.cpuUsage();
  f();
  const d = process.cpuUsage(before);
  return (d.user + d.system) / 1000;
}

// The pieces the patterns of these parsers look for, and the ones that make patterns backtrack.
const UNITS = [
  'a',
  'a1',
  '/a',
  '.a',
  'a.',
  ':',
  ':1',
  '1:',
  ';',
  ',',
  '(',
  ')',
  ' (',
  '()',
  ' ',
  '\t',
  '\\',
  '"',
  '{',
  '}',
  '[',
  ']',
  '#',
  ' -> ',
  'at ',
  'at a.',
  'a$b',
  '<',
  '>',
  '@',
  '@1:',
  'http://',
  '//',
  '0',
  '9',
  'e',
  '0x',
  '"id":"sourceFile"',
  '"id":',
  'AAAA',
  'CAAAA',
  '+',
  '=',
  '-',
  '\r',
  '\n',
  '\n\n',
  '\n    at ',
  'é',
  '😀',
  'pc ',
  '#00 pc ',
  '%',
  '&',
  '|',
  '!',
  '<!channel>',
  '\u0000',
  '\u2028',
  'address at ',
  'Caused by: ',
  'sourceMappingURL=',
  '~/',
  '../',
  'webpack://',
];
const PREFIXES = [
  '',
  'E\n#00 pc 1234 ',
  '    at ',
  '\tat ',
  '    at f (',
  '# {',
  '# {"id":"sourceFile","fileName":"',
  'a -> b:\n    ',
  'com.a.B -> c.a.b:\n    1:2:void ',
  'Error: ',
  'http://a/',
  '//# sourceMappingURL=',
  'Caused by: ',
  '  File "',
  '#0 ',
  'fn@',
  'java.lang.Error: x\n\tat ',
  'a.b.c(',
  '{"events":[',
  '=',
];
const SUFFIXES = ['', '\n', '}', ')', '"', ' -> a', ':1)', ':1:2', '!', '@1:2', ' -> a:', '\n\tat a.b(SourceFile:1)'];

/** Text of SIZE characters: a prefix, a short mix of units repeated, a suffix. */
const adversarial = fc
  .record({
    prefix: fc.constantFrom(...PREFIXES),
    units: fc.array(fc.constantFrom(...UNITS), { minLength: 1, maxLength: 4 }),
    suffix: fc.constantFrom(...SUFFIXES),
  })
  .map(({ prefix, units, suffix }) => {
    const unit = units.join('');
    return prefix + unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE) + suffix;
  });

/**
 * Inputs that made a pattern of this code base backtrack (the probes' reproductions, and the
 * shapes every pattern here was checked against), given to every parser besides the random ones.
 */
const KNOWN: [prefix: string, unit: string, suffix: string][] = [
  ['E\n#00 pc 1234 ', 'a', ''],
  ['', 'a1', ''],
  ['', '/a', ''],
  ['', 'a ', 'x'],
  ['', ' ', 'x'],
  ['', '\t', '!'],
  ['# {', '"id":"sourceFile",', ''],
  ['# {', '"id" : "sourceFile"', ' x'],
  ['  # ', '{', ''],
  ['    at ', 'a (', ''],
  ['    at f (', 'a:1', 'x'],
  ['    at ', 'a:1:', 'x'],
  ['    at ', 'address at ', ''],
  ['fn@', 'a:1', 'x'],
  ['', '@', ''],
  ['', 'a@1:', 'x'],
  ['a -> b:\n    ', '1:', ''],
  ['com.a.B -> c.a.b:\n    1:2:void ', 'a.', ''],
  ['com.a.B -> c.a.b:\n    ', '1:2:', ''],
  ['', 'a -> ', ''],
  ['\tat ', 'a.', ''],
  ['\tat a.', 'b$', '('],
  ['Caused by: ', 'a.', '!'],
  ['', 'a.', ':'],
  ['', 'http://a', ''],
  ['http://a/', '../', ''],
  ['', 'webpack://', ''],
  ['//# sourceMappingURL=', ' ', 'x'],
  ['{"events":[', '\\', ''],
  ['{"events":[', '"', ''],
  ['', '0', 'e'],
  ['', '9', '.'],
  ['=', '-', ''],
  ['/x?', 'token=', ''],
  ['', '&e=', ''],
];
const known = KNOWN.map(
  ([prefix, unit, suffix]) => prefix + unit.repeat(Math.ceil(SIZE / unit.length)).slice(0, SIZE) + suffix,
);

const smallMap = parseSourceMap(release('https://a/x.js', 'aaaaaa1').map);
const mapping = parseProguardMapping(MAPPING);

const PARSERS: Record<string, (text: string) => unknown> = {
  'stack normalisation': (t) => normaliseStack(t),
  // as the code calls it: on lines already cut to their first KiB
  'message normalisation': (t) => stackLines(t).map((l) => normaliseMessage(l, { quoted: true })),
  // and as a caller that forgets to cut would call it: the cut is the normaliser's own
  'message normalisation of a whole text': (t) => normaliseMessage(t, { quoted: true }),
  'frame normalisation of a whole text': (t) => normaliseFrame(t),
  'crash grouping key and head': (t) => [crashGroupKey(t, t), legacyGroupKey(t), stackHead(t)],
  'parsed frames of a stack': (t) => stackFrames(t, ['com.example.']),
  'fingerprint rule input and glob': (t) => [fingerprintInput(t, t), globMatch('*a*b*c*d*', t.slice(0, 4096))],
  'JavaScript frames': (t) => t.split('\n').map(parseJsFrame),
  'JavaScript files of a stack': (t) => jsFilesOf(t),
  'source-map symbolication of a stack': (t) => symbolicateJs(t, () => smallMap),
  sourceMappingURL: (t) => sourceMappingUrl(t),
  'frame paths': (t) => [framePath(t), readableSource(t), resolveBeside(t, t.slice(0, 1000))],
  'R8/ProGuard mapping': (t) => parseProguardMapping(t),
  'R8/ProGuard retrace of a stack': (t) => retraceStack(mapping, t),
  'source map as uploaded': (t) => {
    try {
      return readSourceMap(t, 128 * 1024 * 1024);
    } catch {
      return null;
    }
  },
  'JSON scans': (t) => {
    const b = Buffer.from(t);
    return [firstByte(b), jsonShape(b), mayHoldHugeNumber(t), topLevelArrayExceeds(b, 'events', 1000)];
  },
  'CSV cells': (t) => csvCell(t),
  origins: (t) => originOf(t),
  'AI summaries': (t) => cleanAiSummary(t),
  'logged URLs': (t) => loggableUrl(`/x?${t}`),
};

describe(`every parser of untrusted text reads 256 KB of adversarial text in under ${CPU_BOUND_MS} ms of CPU (seed ${SEED})`, () => {
  for (const [name, parse] of Object.entries(PARSERS)) {
    it(name, () => {
      for (const text of known) {
        const ms = cpuMs(() => parse(text));
        if (ms > CPU_BOUND_MS) throw new Error(`${Math.round(ms)} ms of CPU for ${JSON.stringify(text.slice(0, 80))}…`);
      }
      fc.assert(
        fc.property(adversarial, (text) => {
          const ms = cpuMs(() => parse(text));
          if (ms > CPU_BOUND_MS)
            throw new Error(`${Math.round(ms)} ms of CPU for ${JSON.stringify(text.slice(0, 80))}…`);
        }),
        { seed: SEED, numRuns: RUNS, endOnFailure: true },
      );
    });
  }
});

/** A source map's text with `mappings` made of the units, its sections nested `depth` deep. */
const hostileMap = fc
  .record({
    units: fc.array(fc.constantFrom(';', ',', 'A', 'C', 'AAAA', 'CAAAA', 'gggggg', '+', '/', '\\"', ';;;;', ',,,,'), {
      minLength: 1,
      maxLength: 3,
    }),
    depth: fc.nat({ max: 6 }),
    sections: fc.integer({ min: 1, max: 50 }),
    line: fc.constantFrom(0, 1, 1000, 1e6, 1e9, -1, 0.5),
  })
  .map(({ units, depth, sections, line }) => {
    const unit = units.join('');
    const per = Math.floor(SIZE / sections / unit.length) + 1;
    const leaf = { version: 3, sources: ['a.js'], names: ['n'], mappings: unit.repeat(per) };
    // `sections` leaves side by side at the top, each under `depth` levels of one section
    const nest = (m: Record<string, unknown>, d: number): Record<string, unknown> =>
      d === 0 ? m : nest({ version: 3, sections: [{ offset: { line, column: 0 }, map: m }] }, d - 1);
    return JSON.stringify({
      version: 3,
      sections: Array.from({ length: sections }, (_, i) => ({
        offset: { line: line * i, column: 0 },
        map: nest(leaf, depth),
      })),
    });
  });

describe('source maps: hostile mappings and nested sections are refused or read in bounded CPU', () => {
  it(`parse, bound check and first lookup of each stay under ${CPU_BOUND_MS} ms of CPU`, () => {
    fc.assert(
      fc.property(hostileMap, (text) => {
        const ms = cpuMs(() => {
          try {
            const { map } = readSourceMap(text, 64 * 1024 * 1024);
            originalPositionFor(map, { line: 1, column: 0 });
          } catch {
            // refused: what a 422 at upload is made of
          }
        });
        if (ms > CPU_BOUND_MS) throw new Error(`${Math.round(ms)} ms of CPU for a map of ${text.length} characters`);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});

describe('the hand-written frame reader reads short lines as the patterns it replaced did', () => {
  // the patterns before issue 32, as the reference: right on short lines, quadratic on long ones
  const V8 = /^(\s*)at (?:(.+?) \()?(?:address at )?(.+?):(\d+)(?::(\d+))?\)?\s*$/;
  const GECKO = /^(\s*)((?:global|eval|module) code|[^@\s]*)@(.+?):(\d+)(?::(\d+))?\s*$/;
  const HERMES_BARE = /^(\s*)([^@\s]*)@(\d+):(\d+)\s*$/;
  const BARE = /^(\s*)((?:[a-z][a-z0-9+.-]{0,31}:\/\/|\/)\S+?):(\d+)(?::(\d+))?\s*$/i;
  const RN_V8 = /^(\s*)([^\s()@]+)\(([^\s()]+):(\d+):(\d+)\)\s*$/;
  const reference = (line: string) => {
    const hb = HERMES_BARE.exec(line);
    if (hb)
      return {
        style: 'gecko',
        indent: hb[1],
        fn: hb[2] || null,
        file: '',
        line: Number(hb[3]),
        column: Number(hb[4]),
        implicitFile: true,
      };
    const v = V8.exec(line);
    if (v)
      return {
        style: 'v8',
        indent: v[1],
        fn: v[2] ?? null,
        file: v[3],
        line: Number(v[4]),
        column: v[5] === undefined ? null : Number(v[5]),
      };
    const g = GECKO.exec(line);
    if (g)
      return {
        style: 'gecko',
        indent: g[1],
        fn: g[2] || null,
        file: g[3],
        line: Number(g[4]),
        column: g[5] === undefined ? null : Number(g[5]),
      };
    // then the syntaxes issue 29 added (react-native-v8 and JavaScriptCore's bare URL), bounded patterns both
    if (/^\s*at /.test(line)) return null;
    const r = RN_V8.exec(line);
    if (r) return { style: 'rnv8', indent: r[1], fn: r[2], file: r[3], line: Number(r[4]), column: Number(r[5]) };
    const x = BARE.exec(line);
    if (x)
      return {
        style: 'bare',
        indent: x[1],
        fn: null,
        file: x[2],
        line: Number(x[3]),
        column: x[4] === undefined ? null : Number(x[4]),
      };
    return null;
  };
  const token = fc.constantFrom(
    'at ',
    ' ',
    '(',
    ')',
    ':',
    '1',
    '23',
    '@',
    'a',
    'f.js',
    'address at ',
    'http://x/',
    ' (',
    'global code',
    '\t',
    'async ',
    '\u2028',
    '\u00a0',
    '\r',
    '\u3000',
  );
  it('the same frame, or none, for every line of up to 12 tokens', () => {
    fc.assert(
      fc.property(fc.array(token, { maxLength: 12 }), (tokens) => {
        const line = tokens.join('');
        expect(parseJsFrame(line)).toEqual(reference(line));
      }),
      { seed: SEED, numRuns: 20_000 },
    );
  });
});
