import type { TestServer } from './server.ts';
import { dashboardProject, signup, type Account } from './accounts.ts';

export interface SeededProject {
  account: Account;
  projectId: string;
  /** The sessions' ids, newest first: the first has events, a network log and an end. */
  ids: string[];
}

/**
 * A dashboard account whose project holds 60 sessions (3 h apart, the newest at `startedAt`),
 * events on eight of them, and one crash group seen by 25 users, all sent through the real
 * ingest API over HTTP at `base`: the data the browser tests look at.
 */
export async function seedDashboardProject(
  s: TestServer,
  base: string,
  startedAt: number,
  timezone: string,
): Promise<SeededProject> {
  const account = await signup(s);
  const { projectId, apiKey } = await dashboardProject(s, account, 'Shop iOS (prod)');
  const ids: string[] = [];
  async function post(p: string, body: object) {
    const r = await fetch(base + p, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (r.status >= 300) throw new Error(`${p}: ${r.status} ${await r.text()}`);
  }
  const device = {
    osVersion: '17.4',
    model: 'iPhone15,2',
    brand: 'Apple',
    networkType: 'wifi',
    locale: 'en-US',
    timezone,
    screenWidth: 393,
    screenHeight: 852,
  };
  for (let i = 0; i < 60; i++) {
    const id = crypto.randomUUID();
    ids.push(id);
    await post('/ingest/session', {
      sessionId: id,
      startedAt: startedAt - i * 3 * 3_600_000,
      userId: `user-${String(i).padStart(2, '0')}`,
      device: { ...device, platform: i % 3 === 2 ? 'android' : 'ios', appVersion: i % 2 ? '2.0.0' : '2.1.0' },
    });
  }
  const t = startedAt;
  const first = ids[0]!;
  const ev = (seq: number, e: object) => ({
    sessionId: first,
    sequenceNumber: seq,
    timestamp: t + 1000 * (seq + 1),
    ...e,
  });
  await post('/ingest/events', {
    sessionId: first,
    events: [
      ev(0, { type: 'navigate', from: null, to: '/home' }),
      ev(1, { type: 'tap', x: 120, y: 640, target: 'checkout-button' }),
      ev(2, { type: 'navigate', from: '/home', to: '/checkout' }),
      ev(3, {
        type: 'network',
        method: 'POST',
        url: 'https://api.shop.example/orders/with/a/long/path?and=query&params=1',
        statusCode: 500,
        duration: 840,
        error: null,
      }),
      ev(4, { type: 'custom', name: 'payment_failed', properties: { provider: 'card' } }),
    ],
  });
  await post('/ingest/network', {
    sessionId: first,
    requests: [
      {
        id: crypto.randomUUID(),
        method: 'GET',
        url: 'https://api.shop.example/cart?user=user-00&include=items,prices,discounts',
        statusCode: 200,
        duration: 95,
        responseSize: 5120,
        timestamp: t + 1500,
      },
    ],
  });
  for (let i = 1; i < 8; i++) {
    const sid = ids[i]!;
    await post('/ingest/events', {
      sessionId: sid,
      events: Array.from({ length: i }, (_, k) => ({
        sessionId: sid,
        sequenceNumber: k,
        timestamp: t + k,
        type: 'navigate',
        from: null,
        to: `/s${k}`,
      })),
    });
  }
  const stackTrace = [
    'at OrderView.submit (OrderView.swift:88)',
    'at Button.tap (UIKit)',
    ...Array.from({ length: 58 }, (_, k) => `at Frame${k}.run (Frame${k}.swift:${k})`),
    'at main (main.swift:1)',
  ].join('\n');
  for (let i = 24; i >= 0; i--) {
    // the first occurrence (oldest) was handled; later ones are fatal
    await post('/ingest/crash', {
      sessionId: ids[i],
      message: 'NSInvalidArgumentException: nil order id',
      isFatal: i !== 24,
      handled: i === 24,
      timestamp: startedAt - i * 3 * 3_600_000 + 3500,
      stackTrace,
    });
  }
  await post('/ingest/session/end', { sessionId: first, endedAt: t + 6000 });
  await s.settled();
  return { account, projectId, ids };
}
