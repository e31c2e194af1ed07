// The default entry (`@flightrec/sdk`): everything, for every runtime. The default-instance
// facade: `init()` once, then the module functions. Apps that need several clients (or tests)
// use `FlightrecClient` directly. Smaller bundles: `@flightrec/sdk/core` (the client and the
// facade without Node's hooks, the page hand-off or automatic breadcrumbs), `@flightrec/sdk/browser`
// and `@flightrec/sdk/node`.
import { installAutoBreadcrumbs, type AutoBreadcrumbOptions } from './autoBreadcrumbs.js';
import { FlightrecClient as CoreClient, type FlightrecOptions } from './client.js';
import { adopt, living } from './facade.js';
import { nodeHooks } from './node.js';
import { pageHandOff } from './pageHandOff.js';
import type { Breadcrumb } from './scope.js';

export {
  describeError,
  type ClientHooks,
  type ClientStats,
  type CrashOptions,
  type FlightrecOptions,
  type MessageOptions,
} from './client.js';
export { nodeHooks, type NodeHooks } from './node.js';
export { pageHandOff, type PageHandOff } from './pageHandOff.js';

/** The client with every optional part: Node's process hooks (crash, exit flush, requests that let a script end) and the browser's page hand-off. */
export class FlightrecClient extends CoreClient {
  constructor(options: FlightrecOptions) {
    super(options, { node: nodeHooks, page: pageHandOff });
  }
}
export * from './types.js';
export * from './transport.js';
export * from './batcher.js';
export * from './persistence.js';
export {
  instrumentFetch as instrumentFetchWith,
  instrumentXhr as instrumentXhrWith,
  type AnyFetch,
  type InstrumentOptions,
  type RecordedRequest,
} from './fetch.js';
export { DEFAULT_SCRUBBED_PARAMS, FILTERED, jsonSafe, platformOf, urlScrubber, type ScrubParams } from './sanitize.js';
export { detectDevice, installCrashHandlers, reactNativeDevice, watchLifecycle, type AppStateLike } from './runtime.js';
export { uuidv4 } from './uuid.js';
export { installAutoBreadcrumbs, type AutoBreadcrumbOptions, type BreadcrumbSink } from './autoBreadcrumbs.js';
export { MAX_BREADCRUMBS, type Breadcrumb, type Level, type ReportContext } from './scope.js';
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

export interface InitOptions extends FlightrecOptions {
  /**
   * Breadcrumbs recorded without the app's help: console, clicks, navigations (History API
   * included) and fetch/XHR requests. Default true; false, or an object to leave parts out.
   */
  autoBreadcrumbs?: boolean | AutoBreadcrumbOptions;
}

/**
 * Creates the default client. Unless `captureCrashes: false`, it also reports the app's
 * uncaught errors (see the docs per runtime), and unless `autoBreadcrumbs: false` it records
 * breadcrumbs. Called again while that client lives (hot module reload, React StrictMode's
 * double effects), it returns the same client, session and all, and ignores the new options;
 * `shutdown()` first to start over with other options.
 */
export function init(opts: InitOptions): FlightrecClient {
  const running = living();
  if (running) return running;
  const c = new FlightrecClient(opts);
  const auto = opts?.autoBreadcrumbs;
  let undo: (() => void) | undefined;
  if (auto !== false && !c.isClosed) {
    const sink = {
      addBreadcrumb: (b: Partial<Breadcrumb>) => c.addBreadcrumb(b),
      isOwnUrl: (u: string) => c.isOwnUrl(u),
    };
    undo = installAutoBreadcrumbs(sink, typeof auto === 'object' ? auto : {});
  }
  adopt(c, undo);
  return c;
}
