import { get, setCsrf } from './api.js';

/**
 * What every view may read: the signed-in user, their teams, their projects, and the keys
 * created in this page's lifetime (kept in memory only, so an empty project's setup guide can
 * show the key that was just made; the server cannot show it again).
 */
export const state = {
  user: null,
  teams: [],
  verification: null,
  projects: [],
  newKeys: {},
  currentProjectId: localStorage.getItem('flightrec:project'),
};

/**
 * Goes to a hash. Navigating to the hash already shown re-routes too (the hashchange the browser
 * would not fire is fired here), so the app's router stays the one listener and lib/ never
 * imports app.js.
 */
export function navigate(hash) {
  if (location.hash === hash) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = hash;
}

/** A dashboard route worth returning to after sign-in, or null (the start page, the sign-in pages, anything else). */
export function wantedRoute(hash) {
  if (typeof hash !== 'string' || hash.length > 1000 || !/^#\/[^/]/.test(hash)) return null;
  return /^#\/(login|signup)\b/.test(hash) ? null : hash;
}

export function signedIn(body) {
  state.user = body.user;
  state.teams = body.teams;
  state.verification = body.verification ?? null;
  setCsrf(body.csrfToken);
}

export async function refreshProjects() {
  state.projects = (await get('/api/dashboard/projects')).data;
  return state.projects;
}

export function setProject(id) {
  state.currentProjectId = id;
  if (id) localStorage.setItem('flightrec:project', id);
}
