import { describe, expect, it } from 'vitest';
import { afterFailure, backoffDelayMs } from '../../src/domain/outboxBackoff.ts';
import {
  cleanAiSummary,
  deterministicSummary,
  summaryPrompt,
  type CrashContext,
} from '../../src/domain/crashSummary.ts';
import {
  alertMessageId,
  alertRecipients,
  crashGroupLink,
  renderCrashAlert,
  type CrashAlert,
} from '../../src/domain/crashAlert.ts';
import { createSummarizer } from '../../src/workers/summary.ts';
import { silentLog } from '../../src/lib/log.ts';

const ctx: CrashContext = {
  message: 'TypeError: undefined is not a function',
  stackHead: 'at checkout (cart.js:10:5)\r\n\nat onPress (button.js:3:1)\nat dispatch (react.js:100:2)',
  isFatal: true,
  handled: false,
  appVersion: '1.4.0',
  appBuildNumber: '140',
  platform: 'ios',
  osVersion: '17.2',
  deviceModel: 'iPhone15,2',
  deviceBrand: 'Apple',
};

describe('outbox backoff', () => {
  it('doubles from the base and stops at the cap', () => {
    const p = { baseMs: 5000, maxMs: 60_000 };
    expect([1, 2, 3, 4, 5, 6].map((n) => backoffDelayMs(n, p))).toEqual([5000, 10_000, 20_000, 40_000, 60_000, 60_000]);
    expect(backoffDelayMs(2000, p)).toBe(60_000);
    expect(backoffDelayMs(0, p)).toBe(5000);
  });

  it('gives up once the attempt count reaches the cap', () => {
    const p = { baseMs: 100, maxMs: 1000, maxAttempts: 3 };
    expect(afterFailure(1, p)).toEqual({ action: 'retry', delayMs: 100 });
    expect(afterFailure(2, p)).toEqual({ action: 'retry', delayMs: 200 });
    expect(afterFailure(3, p)).toEqual({ action: 'give-up' });
    expect(afterFailure(7, p)).toEqual({ action: 'give-up' });
  });
});

describe('crash summary', () => {
  it('builds the deterministic summary from the top frames and the context', () => {
    expect(deterministicSummary(ctx)).toBe(
      'Fatal crash: "TypeError: undefined is not a function" in checkout (cart.js:10:5), called from onPress (button.js:3:1). ' +
        'First seen on ios 17.2, Apple iPhone15,2, app 1.4.0 (140).',
    );
  });

  it('copes with an empty stack, message and context', () => {
    const s = deterministicSummary({
      ...ctx,
      message: '  ',
      stackHead: '',
      isFatal: false,
      handled: true,
      appVersion: null,
      appBuildNumber: null,
      platform: null,
      osVersion: null,
      deviceModel: null,
      deviceBrand: null,
    });
    expect(s).toBe('Handled exception: "(no message)".');
  });

  it('bounds a huge message', () => {
    expect(deterministicSummary({ ...ctx, message: 'x'.repeat(10_000) }).length).toBeLessThan(1000);
  });

  it('puts message, stack head and context in the prompt', () => {
    const p = summaryPrompt(ctx);
    expect(p.user).toContain('TypeError: undefined is not a function');
    expect(p.user).toContain('at dispatch (react.js:100:2)');
    expect(p.user).toContain('ios 17.2');
    expect(p.system).toMatch(/three short sentences/);
  });

  it('refuses an empty AI answer and trims a long one', () => {
    expect(cleanAiSummary('  ')).toBeNull();
    expect(cleanAiSummary(null)).toBeNull();
    expect(cleanAiSummary(' ok ')).toBe('ok');
    expect(cleanAiSummary('y'.repeat(5000))!.length).toBe(1000);
  });

  it('falls back to the deterministic summary without a key', async () => {
    const s = await createSummarizer({ openai: undefined, summaryTimeoutMs: 1000 }, silentLog)(ctx);
    expect(s).toEqual({ summary: deterministicSummary(ctx), source: 'deterministic' });
  });

  it('falls back when the endpoint cannot be reached, within its budget', async () => {
    const t = Date.now();
    // Port 9 (discard) on loopback: connection refused.
    const s = await createSummarizer(
      { openai: { apiKey: 'k', baseUrl: 'http://127.0.0.1:9/v1', model: 'm' }, summaryTimeoutMs: 1500 },
      silentLog,
    )(ctx);
    expect(s.source).toBe('deterministic');
    expect(Date.now() - t).toBeLessThan(4000);
  });
});

describe('crash-alert email', () => {
  const alert: CrashAlert = {
    ...ctx,
    projectId: '11111111-1111-4111-8111-111111111111',
    projectName: 'Shop <iOS>',
    groupId: '22222222-2222-4222-8222-222222222222',
    summary: 'The checkout handler called an undefined function.',
    summarySource: 'openai:gpt-4o-mini',
    firstSeenAt: Date.UTC(2026, 0, 1, 0, 0, 9),
  };

  it('carries project, message, summary, stack head, first seen, version, platform, device and link', () => {
    const m = renderCrashAlert(alert, 'https://flightrec.example.com/');
    expect(m.subject).toBe('[flightrec] New crash in Shop <iOS>: TypeError: undefined is not a function');
    for (const part of [
      'Project: Shop <iOS>',
      'Message: TypeError: undefined is not a function',
      'Summary (openai:gpt-4o-mini):\nThe checkout handler called an undefined function.',
      'First seen: 2026-01-01T00:00:09.000Z',
      'App version: 1.4.0 (140)',
      'Platform: ios 17.2',
      'Device: Apple iPhone15,2',
      'at dispatch (react.js:100:2)',
      'Crash group: https://flightrec.example.com/#/p/11111111-1111-4111-8111-111111111111/crashes/22222222-2222-4222-8222-222222222222',
    ])
      expect(m.text).toContain(part);
    expect(m.html).toContain('Shop &lt;iOS&gt;');
    expect(m.html).not.toContain('<iOS>');
    expect(m.messageId).toBe('<crash-group-22222222-2222-4222-8222-222222222222@flightrec>');
  });

  it('labels a deterministic summary and shows unknowns', () => {
    const m = renderCrashAlert(
      {
        ...alert,
        summarySource: 'deterministic',
        appVersion: null,
        platform: null,
        osVersion: null,
        deviceBrand: null,
        deviceModel: null,
      },
      'http://x',
    );
    expect(m.text).toContain('Summary (from the stack trace):');
    expect(m.text).toContain('App version: unknown');
    expect(m.text).toContain('Device: unknown');
  });

  it('keeps the Message-ID stable per group and one-line subjects', () => {
    expect(alertMessageId('g')).toBe(alertMessageId('g'));
    expect(alertMessageId('g')).not.toBe(alertMessageId('h'));
    expect(
      renderCrashAlert({ ...alert, message: `line1\nline2\r\n${'z'.repeat(300)}` }, 'http://x').subject,
    ).not.toMatch(/[\r\n]/);
    expect(crashGroupLink('http://h/', 'p', 'g')).toBe('http://h/#/p/p/crashes/g');
  });

  it('sends to the confirmed part of the project list, else the team, else the default; an empty list mutes the project', () => {
    const f = { projectList: null, confirmed: [], teamMembers: null, defaults: ['ops@x.io'] };
    expect(alertRecipients({ ...f, projectList: ['a@x.io'], confirmed: ['a@x.io'] })).toEqual(['a@x.io']);
    expect(alertRecipients({ ...f, projectList: ['a@x.io', 'stranger@y.io'], confirmed: ['a@x.io'] })).toEqual([
      'a@x.io',
    ]);
    expect(alertRecipients({ ...f, projectList: ['m@x.io'], teamMembers: ['m@x.io', 'n@x.io'] })).toEqual(['m@x.io']);
    expect(alertRecipients({ ...f, teamMembers: ['m@x.io', 'n@x.io'] })).toEqual(['m@x.io', 'n@x.io']);
    expect(alertRecipients(f)).toEqual(['ops@x.io']);
    expect(alertRecipients({ ...f, defaults: [] })).toEqual([]);
    expect(alertRecipients({ ...f, projectList: [] })).toEqual([]);
  });
});
