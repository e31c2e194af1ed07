// Entry point `@flightrec/sdk/core`: the client and the default-instance facade without the
// optional parts: no Node process hooks, no page hand-off, no automatic breadcrumbs. For
// bundles that want only what they use. A core client still batches, retries, persists (to the
// `persistence` given), catches uncaught errors in browsers and React Native, and flushes when
// the app is hidden; give it the parts it should have as its second argument:
//   new FlightrecClient(opts, { page: pageHandOff })   // `@flightrec/sdk/browser`: hand-off at pagehide
//   new FlightrecClient(opts, { node: nodeHooks })     // `@flightrec/sdk/node`: crash and exit hooks
// or `init(opts, { … })`. Named exports only.
import { FlightrecClient, type ClientHooks } from './client.js';
import { adopt, living } from './facade.js';
import type { FlightrecOptions } from './options.js';

export {
  FlightrecClient,
  describeError,
  outageBackoff,
  type ClientHooks,
  type ClientStats,
  type CrashOptions,
  type FlightrecOptions,
  type MessageOptions,
} from './client.js';
export type * from './types.js';
export {
  keyValuePersistence,
  memoryPersistence,
  pageHandoffPersistence,
  type HandOffQueue,
  type KeyValueStorage,
  type PersistentQueue,
} from './persistence.js';
export { MAX_BREADCRUMBS, type Breadcrumb, type Level, type ReportContext } from './scope.js';
export { reactNativeDevice, type AppStateLike } from './runtime.js';
export { SDK_VERSION } from './version.js';
export {
  addBreadcrumb,
  captureException,
  captureMessage,
  endSession,
  flush,
  getClient,
  instrumentFetch,
  instrumentXhr,
  reportCrash,
  setContext,
  setEnabled,
  setTag,
  setTags,
  setUser,
  shutdown,
  startSession,
  trackCustom,
  trackNavigate,
  trackNetwork,
  trackTap,
} from './facade.js';

/**
 * Creates the default client with the parts given in `hooks` (none by default); called again
 * while it lives, returns it (see `init` of `@flightrec/sdk`).
 */
export function init(opts: FlightrecOptions, hooks?: ClientHooks): FlightrecClient {
  const running = living();
  if (running) return running;
  const c = new FlightrecClient(opts, hooks);
  adopt(c);
  return c;
}
