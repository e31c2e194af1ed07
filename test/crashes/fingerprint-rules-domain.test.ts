import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  fingerprintInput,
  fingerprintKey,
  fingerprintRuleProblems,
  firstMatchingRule,
  globMatch,
  keyUnderRules,
  MATCH_TEXT_LIMIT,
  ruleMatches,
  type FingerprintInput,
} from '../../src/domain/fingerprintRules.ts';

const input = (over: Partial<FingerprintInput> = {}): FingerprintInput => ({
  type: 'ChunkLoadError',
  message: 'Loading chunk 417 failed.',
  frames: [
    { module: 'assets/index-*.js', function: 'loadChunk' },
    { module: 'node_modules/react-dom/cjs/react-dom.production.min.js', function: 'commitRoot' },
  ],
  ...over,
});

describe('globMatch', () => {
  it.each([
    ['*', '', true],
    ['*', 'anything', true],
    ['abc', 'abc', true],
    ['abc', 'abcd', false],
    ['abc', 'ABC', false],
    ['Loading chunk * failed*', 'Loading chunk 417 failed.', true],
    ['Loading chunk * failed*', 'Loading CSS chunk 417 failed.', false],
    ['*chunk*', 'Loading CSS chunk 9 failed', true],
    ['a*b*c', 'abc', true],
    ['a*b*c', 'aXbYc', true],
    ['a*b*c', 'acb', false],
    ['ab*ba', 'aba', false],
    ['ab*ba', 'abba', true],
    ['*.tsx', 'src/App.tsx', true],
    ['com.example.*', 'com.example.app.Main', true],
    ['com.example.*', 'org.example.app.Main', false],
    ['*aab', 'aaab', true],
    ['a**b', 'ab', true],
    ['[0-9]+', '123', false],
    ['[0-9]+', '[0-9]+', true],
    ['.*', 'anything', false],
  ])('%j against %j is %s', (p, t, want) => {
    expect(globMatch(p, t)).toBe(want);
  });

  it('reads an adversarial text once per literal run: a long run of one letter against many stars', () => {
    const text = 'a'.repeat(200_000);
    expect(globMatch(`${'*a'.repeat(60)}*b`, text)).toBe(false);
    expect(globMatch(`${'*a'.repeat(60)}*`, text)).toBe(true);
  });
});

describe('ruleMatches', () => {
  it('needs every matcher given: type and message on the crash', () => {
    expect(ruleMatches({ type: 'ChunkLoadError' }, input())).toBe(true);
    expect(ruleMatches({ type: 'ChunkLoadError', message: 'Loading chunk * failed*' }, input())).toBe(true);
    expect(ruleMatches({ type: 'ChunkLoadError', message: 'Network*' }, input())).toBe(false);
    expect(ruleMatches({ type: 'TypeError' }, input())).toBe(false);
  });

  it('matches module and function on one same frame', () => {
    expect(ruleMatches({ module: 'assets/*', function: 'loadChunk' }, input())).toBe(true);
    expect(ruleMatches({ function: 'commitRoot' }, input())).toBe(true);
    // each holds on some frame, but not on the same one
    expect(ruleMatches({ module: 'assets/*', function: 'commitRoot' }, input())).toBe(false);
    expect(ruleMatches({ module: '*' }, input({ frames: [] }))).toBe(false);
  });

  it('reads a text only up to its limit', () => {
    const long = `${'x'.repeat(MATCH_TEXT_LIMIT)}needle`;
    expect(ruleMatches({ message: '*needle*' }, input({ message: long }))).toBe(false);
    expect(ruleMatches({ message: 'x*' }, input({ message: long }))).toBe(true);
  });
});

describe('first match wins', () => {
  const rules = [
    { id: 'a', match: { type: 'TypeError', function: 'render' }, fingerprint: ['render-type-error'] },
    { id: 'b', match: { type: 'ChunkLoadError' }, fingerprint: ['chunk-load'] },
    { id: 'c', match: { message: '*' }, fingerprint: ['everything'] },
  ];

  it('takes the rules in order', () => {
    expect(firstMatchingRule(rules, input())?.id).toBe('b');
    expect(
      firstMatchingRule(rules, input({ type: 'TypeError', frames: [{ module: 'm', function: 'render' }] }))?.id,
    ).toBe('a');
    expect(firstMatchingRule(rules, input({ type: 'RangeError' }))?.id).toBe('c');
    expect(firstMatchingRule(rules.slice(0, 2), input({ type: 'RangeError' }))).toBeUndefined();
  });

  it('replaces the default key, and {{default}} stands for it', () => {
    const def = createHash('sha256').update('stack').digest('hex');
    const chunk = keyUnderRules(rules, input(), def);
    expect(chunk).not.toBe(def);
    expect(keyUnderRules(rules, input({ message: 'Loading chunk 9 failed.' }), def)).toBe(chunk);
    expect(keyUnderRules(rules.slice(0, 2), input({ type: 'RangeError' }), def)).toBe(def);
    expect(fingerprintKey(['{{default}}'], def)).toBe(def);
    expect(fingerprintKey(['{{ default }}'], def)).toBe(def);
    const withDefault = fingerprintKey(['{{default}}', 'checkout'], def);
    expect(withDefault).not.toBe(def);
    expect(withDefault).not.toBe(
      fingerprintKey(['{{default}}', 'checkout'], createHash('sha256').update('other').digest('hex')),
    );
    // the parts are hashed as a list: ['a b'] and ['a', 'b'] are two fingerprints
    expect(fingerprintKey(['a b'], def)).not.toBe(fingerprintKey(['a', 'b'], def));
  });
});

describe('fingerprintInput', () => {
  it('reads the type and message from the message line and the parsed frames', () => {
    const v8 = fingerprintInput(
      "TypeError: Cannot read properties of null (reading 'x')\n    at Object.renderCart (https://a.b/assets/cart-8f3a2c.js:1:2)",
      'ignored',
    );
    expect(v8.type).toBe('TypeError');
    expect(v8.message).toBe("Cannot read properties of null (reading 'x')");
    expect(v8.frames.map((f) => f.function)).toContain('renderCart');
    const gecko = fingerprintInput('renderCart@https://a.b/cart.js:1:2', 'RangeError: bad');
    expect([gecko.type, gecko.message]).toEqual(['RangeError', 'bad']);
    const jvm = fingerprintInput(
      'java.lang.IllegalStateException: no cart\n\tat com.shop.Cart.total(Cart.java:12)',
      '',
    );
    expect([jvm.type, jvm.message]).toEqual(['java.lang.IllegalStateException', 'no cart']);
    expect(jvm.frames[0]).toMatchObject({ function: expect.stringContaining('total') });
    expect(fingerprintInput('', 'something broke: badly')).toMatchObject({
      type: '',
      message: 'something broke: badly',
    });
    expect(fingerprintInput('Uncaught Error: boom\n    at f (a.js:1:1)', '')).toMatchObject({
      type: 'Error',
      message: 'boom',
    });
  });

  it('reads a long name-like line in one pass', () => {
    const head = `a${'$'.repeat(5000)}!: x`;
    expect(fingerprintInput(head, '').type).toBe('');
  });
});

describe('fingerprintRuleProblems', () => {
  it('wants a rule to match on something', () => {
    expect(fingerprintRuleProblems({ match: {}, fingerprint: ['x'] })).toEqual([
      { path: '/match', message: expect.any(String) },
    ]);
    expect(fingerprintRuleProblems({ match: { type: 'X' }, fingerprint: ['x'] })).toEqual([]);
  });
});
