// Entry point `@flightrec/sdk/browser`: the browser's optional parts for a core client.
// - `pageHandOff`: on pagehide and when hidden, send what fits the keepalive budget at once and
//   hand the rest to the next page load (localStorage): `new FlightrecClient(opts, { page: pageHandOff })`.
// - automatic breadcrumbs (console, clicks, History API navigations, fetch/XHR):
//     installAutoBreadcrumbs({ addBreadcrumb: (b) => c.addBreadcrumb(b), isOwnUrl: (u) => c.isOwnUrl(u) });
// (`@flightrec/sdk` gives every client the hand-off, and its `init()` installs the breadcrumbs.)
export { installAutoBreadcrumbs, type AutoBreadcrumbOptions, type BreadcrumbSink } from './autoBreadcrumbs.js';
export { pageHandOff, type PageHandOff } from './pageHandOff.js';
