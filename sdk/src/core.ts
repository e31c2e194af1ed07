// Entry point `@flightrec/sdk/core`: the client and what it is made of, without Node's process
// hooks and without automatic breadcrumbs, for browser and React Native bundles that want only
// what they use. A core client still catches uncaught errors in browsers and React Native,
// hands over on pagehide and batches, retries and persists as the default one does; in Node,
// pass `nodeHooks` (from `@flightrec/sdk/node`) as its second argument. Named exports only.
export {
  FlightrecClient,
  describeError,
  outageBackoff,
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
