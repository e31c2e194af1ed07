// Entry point `@flightrec/sdk/node`: what only Node and Electron's main process need: the
// process-wide crash and exit hooks, and requests that do not hold a finishing process. The
// default entry (`@flightrec/sdk`) gives them to every client; `@flightrec/sdk/core` does not,
// so browser and React Native bundles leave them out (pass `nodeHooks` to a core client to
// have them there).
import { exitFlusher } from './exitFlush.js';
import { canUseNodeHttp, nodeFetch } from './nodeFetch.js';
import { onNodeCrash, onNodeExit } from './processHooks.js';

export interface NodeHooks {
  onExit: typeof onNodeExit;
  onCrash: typeof onNodeCrash;
  fetch: typeof nodeFetch;
  available: () => boolean;
  /** The bounded last attempt to send on the way out (exitFlush.ts). */
  exitFlush: typeof exitFlusher;
}

export const nodeHooks: NodeHooks = {
  onExit: onNodeExit,
  onCrash: onNodeCrash,
  fetch: nodeFetch,
  available: canUseNodeHttp,
  exitFlush: exitFlusher,
};

export { canUseNodeHttp, nodeFetch } from './nodeFetch.js';
export { onNodeCrash, onNodeExit, type CrashSink, type ExitSink } from './processHooks.js';
