import { describe, expect, it } from 'vitest';
import {
  breaches,
  crashFreePercent,
  describeFiring,
  ruleTransitions,
  type SubjectState,
} from '../../src/domain/alertRules.ts';
import {
  deliveryBody,
  isPrivateAddress,
  isSlackUrl,
  signatureHeader,
  verifySignature,
  webhookUrlProblem,
} from '../../src/domain/webhooks.ts';
import { renderNotices, regressionNotice } from '../../src/domain/alertNotices.ts';

const spike = { kind: 'spike' as const, threshold: 10, cooldownMinutes: 60 };
const crashFree = { kind: 'crash_free' as const, threshold: 99, cooldownMinutes: 0 };
const NOW = 1_800_000_000_000;
const st = (e: [string, SubjectState][]) => new Map(e);

describe('alert rule crossings', () => {
  it('a spike fires when it reaches the threshold, once, and re-arms when the group drops out', () => {
    expect(breaches('spike', 10, 10)).toBe(true);
    expect(breaches('spike', 10, 9)).toBe(false);
    expect(ruleTransitions(spike, [{ subject: 'g', value: 9 }], st([]), NOW)).toEqual({ fire: [], rearm: [] });
    expect(ruleTransitions(spike, [{ subject: 'g', value: 10 }], st([]), NOW).fire).toEqual([
      { subject: 'g', value: 10 },
    ]);
    const fired = st([['g', { fired: true, lastFiredAt: NOW - 1000 }]]);
    expect(ruleTransitions(spike, [{ subject: 'g', value: 50 }], fired, NOW)).toEqual({ fire: [], rearm: [] });
    // absent from the measures: no occurrences in the window any more
    expect(ruleTransitions(spike, [], fired, NOW)).toEqual({ fire: [], rearm: ['g'] });
    expect(ruleTransitions(spike, [{ subject: 'g', value: 3 }], fired, NOW)).toEqual({ fire: [], rearm: ['g'] });
  });

  it('the cooldown holds a re-armed subject back until it has passed', () => {
    const rearmed = st([['g', { fired: false, lastFiredAt: NOW - 30 * 60_000 }]]);
    expect(ruleTransitions(spike, [{ subject: 'g', value: 11 }], rearmed, NOW).fire).toEqual([]);
    expect(ruleTransitions(spike, [{ subject: 'g', value: 11 }], rearmed, NOW + 31 * 60_000).fire).toHaveLength(1);
  });

  it('crash-free fires below the threshold only, and a release below its minimum sessions is not judged', () => {
    expect(crashFreePercent(2, 1, 50)).toBeNull();
    expect(crashFreePercent(0, 0, 0)).toBeNull();
    expect(crashFreePercent(100, 2, 50)).toBe(98);
    expect(crashFreePercent(100, 0, 50)).toBe(100);
    expect(breaches('crash_free', 99, 99)).toBe(false);
    expect(ruleTransitions(crashFree, [{ subject: '2.0', value: 98, sessions: 100 }], st([]), NOW).fire).toHaveLength(
      1,
    );
    const fired = st([['2.0', { fired: true, lastFiredAt: NOW }]]);
    // unjudged (absent) keeps its state; back above re-arms
    expect(ruleTransitions(crashFree, [], fired, NOW)).toEqual({ fire: [], rearm: [] });
    expect(ruleTransitions(crashFree, [{ subject: '2.0', value: 99.5, sessions: 200 }], fired, NOW).rearm).toEqual([
      '2.0',
    ]);
  });

  it('describes a firing in one line', () => {
    expect(
      describeFiring(
        { kind: 'spike', name: 'Storm', threshold: 10, windowMinutes: 5 },
        { subject: 'k', value: 12, groupMessage: 'TypeError: x' },
      ),
    ).toBe('Storm: "TypeError: x" had 12 occurrences in 5 min (threshold 10)');
    expect(
      describeFiring(
        { kind: 'crash_free', name: 'Health', threshold: 99, windowMinutes: 60 },
        { subject: '2.0', value: 97.456, sessions: 200 },
      ),
    ).toBe('Health: crash-free sessions of release 2.0 fell to 97.45% over 200 sessions in 60 min (threshold 99%)');
  });
});

describe('webhooks', () => {
  it('signs t.body with HMAC-SHA256 the way Stripe does, and the check refuses tampering and old timestamps', () => {
    const h = signatureHeader('whsec_x', '{"a":1}', 1_700_000_000);
    expect(h).toMatch(/^t=1700000000,v1=[0-9a-f]{64}$/);
    expect(verifySignature('whsec_x', '{"a":1}', h, 1_700_000_010)).toBe(true);
    expect(verifySignature('whsec_x', '{"a":2}', h, 1_700_000_010)).toBe(false);
    expect(verifySignature('whsec_y', '{"a":1}', h, 1_700_000_010)).toBe(false);
    expect(verifySignature('whsec_x', '{"a":1}', h, 1_700_001_000)).toBe(false);
  });

  it("gives Slack's incoming webhooks {text} and everyone else the event envelope", () => {
    expect(isSlackUrl('https://hooks.slack.com/services/T0/B0/xyz')).toBe(true);
    expect(isSlackUrl('https://hooks.slack.com.evil.example/services')).toBe(false);
    expect(isSlackUrl('http://hooks.slack.com/services/x')).toBe(false);
    const at = new Date('2026-01-01T00:00:00Z');
    expect(
      JSON.parse(
        deliveryBody(
          'https://hooks.slack.com/services/T0/B0/xyz',
          'rule.fired',
          { text: 'Spike', link: 'https://f/x' },
          at,
        ),
      ),
    ).toEqual({ text: 'Spike\n<https://f/x|Open in flightrec>' });
    expect(
      JSON.parse(deliveryBody('https://example.com/hook', 'rule.fired', { text: 'Spike', link: null, value: 3 }, at)),
    ).toEqual({
      event: 'rule.fired',
      createdAt: '2026-01-01T00:00:00.000Z',
      data: { text: 'Spike', link: null, value: 3 },
    });
  });

  it('escapes a crash message for Slack: no <!channel>, no disguised link, & kept literal (issue 32)', () => {
    const at = new Date('2026-01-01T00:00:00Z');
    const message = 'New crash: <!channel> <https://evil.example/login|Open in flightrec> a && b > c';
    const body = JSON.parse(
      deliveryBody(
        'https://hooks.slack.com/services/T0/B0/xyz',
        'crash_group.new',
        { text: message, link: 'https://f/x?a=1&b=2' },
        at,
      ),
    );
    expect(body.text).toBe(
      'New crash: &lt;!channel&gt; &lt;https://evil.example/login|Open in flightrec&gt; a &amp;&amp; b &gt; c' +
        '\n<https://f/x?a=1&amp;b=2|Open in flightrec>',
    );
    // the only markup left is the one link flightrec adds
    expect(body.text.match(/<[^&]/g)).toEqual(['<h']);
    // other receivers get the text as it is, inside JSON
    expect(
      JSON.parse(deliveryBody('https://example.com/hook', 'crash_group.new', { text: message, link: null }, at)).data
        .text,
    ).toBe(message);
  });

  it('takes only http(s) URLs without credentials, and knows private addresses', () => {
    expect(webhookUrlProblem('ftp://x.example/')).toMatch(/http/);
    expect(webhookUrlProblem('https://u:p@x.example/')).toMatch(/credentials/);
    expect(webhookUrlProblem('not a url')).toMatch(/valid/);
    expect(webhookUrlProblem('http://127.0.0.1:8080/hook')).toMatch(/private/);
    expect(webhookUrlProblem('http://127.0.0.1:8080/hook', true)).toBeNull();
    for (const a of [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '::1',
      'fd00::1',
      '::ffff:127.0.0.1',
      '0.0.0.0',
    ]) {
      expect(isPrivateAddress(a), a).toBe(true);
    }
    for (const a of ['93.184.216.34', '172.32.0.1', '2606:4700::1111']) expect(isPrivateAddress(a), a).toBe(false);
  });
});

describe('notices', () => {
  it('one notice is its own email, several are one digest', () => {
    const n = regressionNotice('https://f.example', {
      projectId: 'p',
      groupId: 'g',
      message: 'Boom',
      appVersion: '2.0',
    });
    const one = renderNotices('Shop', [n], '1');
    expect(one.subject).toBe('[flightrec] Shop: Regression: "Boom" is back in 2.0');
    expect(one.messageId).toBe('<crash-regressed-g-2.0@flightrec>');
    expect(one.text).toContain('https://f.example/#/p/p/crashes/g');
    const two = renderNotices('Shop', [n, { ...n, key: 'k2', title: 'Other' }], '7');
    expect(two.subject).toBe('[flightrec] 2 alerts in Shop');
    expect(two.messageId).toBe('<alert-digest-7@flightrec>');
  });
});
