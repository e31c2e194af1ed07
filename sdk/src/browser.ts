// Entry point `@flightrec/sdk/browser`: automatic breadcrumbs (console, clicks, History API
// navigations, fetch/XHR), opt-in for a core client:
//   const c = new FlightrecClient(opts);
//   installAutoBreadcrumbs({ addBreadcrumb: (b) => c.addBreadcrumb(b), isOwnUrl: (u) => c.isOwnUrl(u) });
// (`init()` of the default entry installs them itself.)
export { installAutoBreadcrumbs, type AutoBreadcrumbOptions, type BreadcrumbSink } from './autoBreadcrumbs.js';
