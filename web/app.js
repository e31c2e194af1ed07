import { h, errorBox } from './lib/dom.js';
import { api, get, setCsrf } from './lib/api.js';
import { authView } from './views/auth.js';
import { projectsView } from './views/projects.js';
import { sessionsView } from './views/sessions.js';
import { sessionView } from './views/session.js';
import { crashesView, crashView } from './views/crashes.js';
import { teamView } from './views/team.js';
import { renderVerifyBanner } from './views/verify.js';

/**
 * What every view may read: the signed-in user, their teams, their projects, and the keys
 * created in this page's lifetime (kept in memory only, so an empty project's setup guide can
 * show the key that was just made; the server cannot show it again).
 */
export const state = { user: null, teams: [], verification: null, projects: [], newKeys: {}, currentProjectId: localStorage.getItem('flightrec:project') };

const main = document.getElementById('main');
const top = document.getElementById('top');
const notice = document.getElementById('notice');

export function navigate(hash) {
  if (location.hash === hash) route();
  else location.hash = hash;
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

function setProject(id) {
  state.currentProjectId = id;
  if (id) localStorage.setItem('flightrec:project', id);
}

let lastTop = ['projects', null];

/** Re-draws the header, e.g. once a first project exists. */
export function updateTop() {
  renderTop(...lastTop);
}

function renderTop(section, projectId) {
  lastTop = [section, projectId];
  top.hidden = false;
  const project = state.projects.find((p) => p.id === projectId) ?? state.projects[0];
  const link = (href, text, active) => h('a', { href, 'aria-current': active ? 'page' : undefined }, text);
  const select = h('select', {
    id: 'project-select', 'aria-label': 'Project',
    onchange: (e) => {
      setProject(e.target.value);
      navigate(`#/p/${e.target.value}/${section === 'crashes' ? 'crashes' : 'sessions'}`);
    },
  }, state.projects.map((p) => h('option', { value: p.id, selected: p.id === project?.id }, p.name)));
  top.replaceChildren(...[
    h('a.brand', { href: '#/' }, h('img', { src: '/favicon.svg', alt: '', width: 22, height: 22 }), 'flightrec'),
    state.projects.length ? select : null,
    h('nav', { 'aria-label': 'Sections' },
      project ? link(`#/p/${project.id}/sessions`, 'Sessions', section === 'sessions') : null,
      project ? link(`#/p/${project.id}/crashes`, 'Crashes', section === 'crashes') : null,
      link('#/projects', 'Projects & keys', section === 'projects'),
      link('#/team', 'Team', section === 'team'),
    ),
    h('div.user',
      h('span.email', { title: 'Signed in as' }, state.user.email),
      h('button.link', {
        type: 'button', id: 'logout',
        onclick: async () => {
          await api('POST', '/api/auth/logout', {}).catch(() => {});
          state.user = null;
          state.verification = null;
          setCsrf(null);
          navigate('#/login');
        },
      }, 'Log out'),
    ),
  ].filter(Boolean));
}

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
      if (parts[0] !== mode) history.replaceState(null, '', `#/${mode}`);
      main.replaceChildren(authView(mode));
      return;
    }
  }
  if (parts[0] === 'login' || parts[0] === 'signup') return navigate('#/');
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
    else if (section === 'crashes' && parts[3]) view = crashView(projectId, parts[3]);
    else view = crashesView(projectId, params);
  } else if (parts[0] === 'team') {
    renderTop('team', state.currentProjectId);
    view = teamView();
  } else if (parts[0] === 'projects' || !state.projects.length) {
    renderTop('projects', state.currentProjectId);
    view = projectsView();
  } else {
    const id = state.projects.some((p) => p.id === state.currentProjectId) ? state.currentProjectId : state.projects[0].id;
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
  navigate('#/login');
});
route();
