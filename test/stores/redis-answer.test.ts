import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { answerWithin, openRedis, RedisTimeoutError } from '../../src/stores/redis.ts';
import { RateLimiter } from '../../src/services/rateLimiter.ts';

// CI's red run: on a busy machine a log-in's rate-limit command timed out, and the request was
// counted by its process alone. A timer that fires after a held loop fires before the loop reads
// its sockets; the answer may be there already. These hold the loop past the timeout while the
// answer arrives (a loopback connection the kernel completes on its own, or Redis's reply).

/** Holds this thread, as a long synchronous task or a starved CPU does. */
function holdLoop(ms: number) {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

let server: net.Server;
let port: number;
beforeAll(async () => {
  server = net.createServer((s) => s.destroy());
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(() => {
  server?.close();
});

/**
 * Runs `start` (which sends something and sets its timer), then holds the loop past the timer,
 * from a setImmediate callback: the loop then goes on to its timers before the poll phase that
 * reads the answer, whichever phase the test itself ran in.
 */
function thenHold<T>(start: () => T, holdMs: number): Promise<T> {
  return new Promise((ok) =>
    setImmediate(() => {
      const out = start();
      holdLoop(holdMs);
      ok(out);
    }),
  );
}

/** Resolves when a loopback connection is established (the kernel does it; no JS runs). */
function connected(): Promise<net.Socket> {
  return new Promise((ok, fail) => {
    const sock = net.connect(port, '127.0.0.1');
    sock.once('connect', () => ok(sock));
    sock.once('error', fail);
  });
}

describe('answerWithin: a held loop does not time out an answer that came meanwhile', () => {
  it('a bare timer would have (the test can fail)', async () => {
    const { answer, raced } = await thenHold(() => {
      const answer = connected();
      const timedOut = new Promise((_, fail) => setTimeout(() => fail(new Error('timed out')), 50));
      return { answer, raced: Promise.race([answer, timedOut]) };
    }, 300);
    await expect(raced).rejects.toThrow('timed out');
    (await answer).destroy();
  });

  it('answerWithin resolves with the answer', async () => {
    const { answer } = await thenHold(() => ({ answer: answerWithin(connected(), 50) }), 300);
    const sock = await answer;
    expect(sock).toBeInstanceOf(net.Socket);
    sock.destroy();
  });

  it('still times out an answer that does not come, and passes a failure through', async () => {
    const never = new Promise<never>(() => {});
    const t0 = performance.now();
    await expect(answerWithin(never, 50)).rejects.toBeInstanceOf(RedisTimeoutError);
    expect(performance.now() - t0).toBeGreaterThanOrEqual(45);
    await expect(answerWithin(Promise.reject(new Error('refused')), 50)).rejects.toThrow('refused');
  });
});

describe.skipIf(!process.env.REDIS_URL)('the rate limiter on the machine Redis, its loop held past the timeout', () => {
  it('counts in Redis, not in process', async () => {
    const redis = openRedis(process.env.REDIS_URL!, 50);
    try {
      if (redis.client.status !== 'ready') await new Promise((ok) => redis.client.once('ready', ok));
      const limiter = new RateLimiter('held', 2, redis, `flightrec-test-held-${process.pid}-${Date.now()}`);
      await limiter.consume('k'); // the script is loaded: later commands are one round trip
      const results = [];
      for (let i = 0; i < 3; i++) {
        const { r } = await thenHold(() => ({ r: limiter.consume('k') }), 200);
        results.push(await r);
      }
      expect(limiter.redisFallbacks).toBe(0);
      // 2 a minute, counted in Redis: the first three calls used them and more
      expect(results.map((r) => r.allowed)).toEqual([true, false, false]);
    } finally {
      redis.client.disconnect();
    }
  });
});
