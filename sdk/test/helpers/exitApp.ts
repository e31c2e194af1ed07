// A Node app for the process tests, run in its own process against ENDPOINT with API_KEY:
// - MODE=crash: two clients, then an uncaught error (OWN_HANDLER=1: the app has its own handler)
// - MODE=serve: tracks EVENTS events and REQUESTS requests, prints "ready", then runs until it is
//   signalled (OWN_HANDLER=1: its SIGTERM handler exits with code 0 a little later)
// - MODE=natural: tracks, prints "ready" and returns: the process ends when its loop runs dry
// - MODE=await-flush: as natural, but awaits flush() at the top level and prints "flushed"
import { FlightrecClient } from '../../src/index.ts';

const endpoint = process.env.ENDPOINT!;
const apiKey = process.env.API_KEY ?? 'frk_test';
const mode = process.env.MODE;
const events = Number(process.env.EVENTS ?? 10);
const requests = Number(process.env.REQUESTS ?? 0);

// TIMEOUT_MS: the per-attempt timeout (default 2000). EXIT_FLUSH_MS: the exit flush's bound,
// default 10 s: a cap, not a speed, so that a busy machine still sends everything on exit.
const a = new FlightrecClient({
  apiKey,
  endpoint,
  device: { platform: 'linux' },
  timeoutMs: Number(process.env.TIMEOUT_MS ?? 2000),
  exitFlushTimeoutMs: Number(process.env.EXIT_FLUSH_MS ?? 10_000),
});
const sid = a.startSession({ userId: 'u-1' });
console.log(`session ${sid}`);

if (mode === 'crash') {
  // A second client (another library of the app, a test harness): it must not make either
  // client believe the app handles crashes.
  const b = new FlightrecClient({ apiKey, endpoint, device: { platform: 'linux' }, timeoutMs: 2000 });
  b.startSession();
  a.trackCustom('order_placed', { orderId: 1 });
  if (process.env.OWN_HANDLER) {
    process.on('uncaughtException', (e) => {
      console.log(`app handler saw ${e.message}`);
      setTimeout(() => process.exit(3), 1000);
    });
  }
  setTimeout(() => {
    throw new TypeError('checkout exploded');
  }, 50);
} else {
  for (let i = 0; i < events; i++) a.trackCustom('step', { i });
  for (let i = 0; i < requests; i++) {
    a.recordRequest({
      method: 'GET',
      url: `https://api.example.com/items/${i}`,
      statusCode: 200,
      duration: 12,
      error: null,
      timestamp: Date.now(),
    });
  }
  if (process.env.OWN_HANDLER) {
    process.on('SIGTERM', () => {
      console.log('app handler saw SIGTERM');
      setTimeout(() => process.exit(0), 1500);
    });
  }
  console.log('ready');
  if (mode === 'serve') setInterval(() => {}, 1000);
  if (mode === 'await-flush') {
    await a.flush();
    console.log('flushed');
  }
}
