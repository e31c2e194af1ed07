import { h, badge, fmtCount } from './dom.js';
import { navigate } from './router.js';

export const statusBadge = (st) => badge(st, { active: 'info', completed: 'ok', crashed: 'bad' }[st] ?? 'muted');

/** Previous / a page number to type / next, plus first and last: any page in one step. */
export function pager(page, pages, hrefFor, label = 'Pages') {
  if (pages <= 1) return null;
  const input = h('input', {
    type: 'number',
    min: 1,
    max: pages,
    value: page,
    id: `${label.replace(/\W+/g, '-').toLowerCase()}-page`,
    'aria-label': `Page number, 1 to ${pages}`,
    inputmode: 'numeric',
  });
  const link = (p, text, rel, cls) =>
    p >= 1 && p <= pages && p !== page
      ? h(`a${cls ?? ''}`, { href: hrefFor(p), rel }, text)
      : h(`span.hint${cls ?? ''}`, { 'aria-disabled': 'true' }, text);
  return h(
    'nav.pager',
    { 'aria-label': label },
    link(1, '« First', undefined, '.pager-end'),
    link(page - 1, '← Previous', 'prev'),
    h(
      'form.pager-jump',
      {
        onsubmit: (e) => {
          e.preventDefault();
          const p = Math.min(pages, Math.max(1, Math.round(Number(input.value) || 1)));
          navigate(hrefFor(p));
        },
      },
      h('span', 'Page '),
      input,
      h('span', ` of ${fmtCount(pages)}`),
      h('button', { type: 'submit' }, 'Go'),
    ),
    link(page + 1, 'Next →', 'next'),
    link(pages, 'Last »', undefined, '.pager-end'),
  );
}

const STATUS_KIND = { open: 'bad', acknowledged: 'warn', resolved: 'ok', ignored: 'muted' };
export const groupStatus = (st) => badge(st, STATUS_KIND[st] ?? 'muted');

// Fatal crashes and (handled or unhandled) non-fatal errors, told apart at a glance.
export const kindBadge = (g) =>
  g.isFatal ? badge('Fatal crash', 'bad') : badge(g.handled ? 'Handled error' : 'Non-fatal error', 'warn');
