// A plain Node app for the crash-capture tests, run in its own process: it records an order with a
// BigInt id, then dies of an uncaught error. MODE=own-handler installs the app's own handler.
import * as flightrec from '../../src/index.ts';

flightrec.init({ apiKey: 'frk_test', endpoint: process.env.ENDPOINT!, device: { platform: 'linux' }, timeoutMs: 2000 });
flightrec.startSession({ userId: 'u-1' });
flightrec.trackCustom('order_placed', { orderId: 1n });
if (process.env.MODE === 'own-handler') {
  process.on('uncaughtException', (e) => {
    console.log(`app handler saw ${e.message}`);
    setTimeout(() => process.exit(3), 1000);
  });
}
setTimeout(() => {
  throw new TypeError('checkout exploded');
}, 20);
