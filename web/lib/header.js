import { h, s } from './dom.js';
import { api, setCsrf } from './api.js';
import { navigate, setProject, state } from './router.js';

const top = document.getElementById('top');

let lastTop = ['projects', null];

/** Re-draws the header, e.g. once a first project exists. */
export function updateTop() {
  renderTop(...lastTop);
}

export function renderTop(section, projectId) {
  lastTop = [section, projectId];
  top.hidden = false;
  const project = state.projects.find((p) => p.id === projectId) ?? state.projects[0];
  const link = (href, text, active) => h('a', { href, 'aria-current': active ? 'page' : undefined }, text);
  const select = h(
    'select',
    {
      id: 'project-select',
      'aria-label': 'Project',
      onchange: (e) => {
        setProject(e.target.value);
        navigate(`#/p/${e.target.value}/${section === 'crashes' ? 'crashes' : 'sessions'}`);
      },
    },
    state.projects.map((p) => h('option', { value: p.id, selected: p.id === project?.id }, p.name)),
  );
  // On a phone the sections and the account fold behind one button (six links do not fit a
  // line of 390 px); on a wide screen the button is not shown and the panel lays out as before.
  const toggle = h(
    'button.menu-toggle',
    {
      type: 'button',
      'aria-expanded': 'false',
      'aria-controls': 'top-menu',
      onclick: () => setOpen(toggle.getAttribute('aria-expanded') !== 'true'),
      onkeydown: closeOnEscape,
    },
    s(
      'svg',
      { width: 18, height: 18, viewBox: '0 0 18 18', 'aria-hidden': 'true' },
      [3, 9, 15].map((y) => s('rect', { x: 1, y: y - 1, width: 16, height: 2, rx: 1, fill: 'currentColor' })),
    ),
    'Menu',
  );
  function setOpen(open) {
    toggle.setAttribute('aria-expanded', String(open));
    top.classList.toggle('menu-open', open);
  }
  function closeOnEscape(e) {
    if (e.key !== 'Escape' || toggle.getAttribute('aria-expanded') !== 'true') return;
    setOpen(false);
    toggle.focus();
  }
  const menu = h(
    'div.top-menu',
    { id: 'top-menu', onkeydown: closeOnEscape },
    h(
      'nav',
      { 'aria-label': 'Sections' },
      project ? link(`#/p/${project.id}/sessions`, 'Sessions', section === 'sessions') : null,
      project ? link(`#/p/${project.id}/crashes`, 'Crashes', section === 'crashes') : null,
      project ? link(`#/p/${project.id}/releases`, 'Releases', section === 'releases') : null,
      project ? link(`#/p/${project.id}/alerts`, 'Alerts', section === 'alerts') : null,
      link('#/projects', 'Projects & keys', section === 'projects'),
      link('#/team', 'Team', section === 'team'),
    ),
    h(
      'div.user',
      h('span.email', { title: 'Signed in as' }, state.user.email),
      h(
        'button.link',
        {
          type: 'button',
          id: 'logout',
          onclick: async () => {
            await api('POST', '/api/auth/logout', {}).catch(() => {});
            state.user = null;
            state.verification = null;
            setCsrf(null);
            navigate('#/login');
          },
        },
        'Log out',
      ),
    ),
  );
  setOpen(false);
  top.replaceChildren(
    ...[
      h('a.brand', { href: '#/' }, h('img', { src: '/favicon.svg', alt: '', width: 22, height: 22 }), 'flightrec'),
      state.projects.length ? select : null,
      toggle,
      menu,
    ].filter(Boolean),
  );
}
