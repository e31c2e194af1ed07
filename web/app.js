import { h, errorBox } from './lib/dom.js';
import { get } from './lib/api.js';
import { navigate, refreshProjects, setProject, signedIn, state, wantedRoute } from './lib/router.js';
import { renderTop } from './lib/header.js';
import { authView } from './views/auth.js';
import { projectsView } from './views/projects.js';
import { sessionsView } from './views/sessions.js';
import { sessionView } from './views/session.js';
import { crashesView } from './views/crashes.js';
import { crashView } from './views/crash.js';
import { teamView } from './views/team.js';
import { renderVerifyBanner } from './lib/verify.js';

import { releasesView } from './views/releases.js';
import { alertRulesView } from './views/alertRules.js';

const main = document.getElementById('main');
const top = document.getElementById('top');
const notice = document.getElementById('notice');

async function route() {
  const hash = location.hash.replace(/^#/, '') || '/';
  const [path, query = ''] = hash.split('?');
  const params = Object.fromEntries(new URLSearchParams(query));
  const parts = path.split('/').filter(Boolean);

  if (!state.user) {
    try {
      signedIn(await get('/api/auth/me'));
    } catch (err) {
      if (err.network) {
        // Not "signed out": the server is out of reach. Say so, and offer to try again.
        top.hidden = true;
        renderVerifyBanner(notice);
        main.replaceChildren(h('section.auth-card', h('h1', 'flightrec'), errorBox(err, route)));
        return;
      }
      top.hidden = true;
      renderVerifyBanner(notice);
      const mode = parts[0] === 'signup' ? 'signup' : 'login';
      // A link opened signed out (an alert's crash link) is kept across the sign-in, in the URL.
      const next = parts[0] === mode ? wantedRoute(params.next) : wantedRoute(`#${hash}`);
      const here = `#/${mode}${next ? `?next=${encodeURIComponent(next)}` : ''}`;
      if (location.hash !== here) history.replaceState(null, '', here);
      main.replaceChildren(authView(mode, next));
      return;
    }
  }
  if (parts[0] === 'login' || parts[0] === 'signup') return navigate(wantedRoute(params.next) ?? '#/');
  renderVerifyBanner(notice);
  if (!state.projects.length) {
    try {
      await refreshProjects();
    } catch (err) {
      renderTop('projects', null);
      main.replaceChildren(errorBox(err, route));
      return;
    }
  }

  let view;
  if (parts[0] === 'p' && parts[1]) {
    const projectId = parts[1];
    setProject(projectId);
    const section = parts[2] ?? 'sessions';
    renderTop(section, projectId);
    if (section === 'sessions' && parts[3]) view = sessionView(projectId, parts[3], params);
    else if (section === 'sessions') view = sessionsView(projectId, params);
    else if (section === 'crashes' && parts[3]) view = crashView(projectId, parts[3], params);
    else if (section === 'releases') view = releasesView(projectId, params);
    else if (section === 'alerts') view = alertRulesView(projectId);
    else view = crashesView(projectId, params);
  } else if (parts[0] === 'team') {
    renderTop('team', state.currentProjectId);
    view = teamView();
  } else if (parts[0] === 'projects' || !state.projects.length) {
    renderTop('projects', state.currentProjectId);
    view = projectsView();
  } else {
    const id = state.projects.some((p) => p.id === state.currentProjectId)
      ? state.currentProjectId
      : state.projects[0].id;
    return navigate(`#/p/${id}/sessions`);
  }
  main.replaceChildren(view);
  // Move focus to the new content so keyboard and screen-reader users land on it.
  const heading = main.querySelector('h1');
  if (heading) {
    heading.setAttribute('tabindex', '-1');
    heading.focus({ preventScroll: true });
  } else {
    main.focus({ preventScroll: true });
  }
}

window.addEventListener('hashchange', route);
window.addEventListener('flightrec:signed-out', () => {
  state.user = null;
  // The session ran out mid-use: back to where the user was once signed in again.
  const next = wantedRoute(location.hash);
  navigate(`#/login${next ? `?next=${encodeURIComponent(next)}` : ''}`);
});
route();
