import { h } from './dom.js';

/**
 * A stack's lines in the <pre>, each marked by what the server parsed of it: app frames, library
 * frames (runtime, framework, OS) and other lines. Library frames are folded while the stack has
 * an app frame (a marker says how many); the text itself stays whole, for copying.
 */
function fillStack(pre, text, frames) {
  const lines = text.split('\n');
  const hasApp = (frames ?? []).some((x) => x.frame?.inApp);
  const nodes = [];
  let run = [];
  const flush = () => {
    if (run.length)
      nodes.push(h('span.lib-fold', { 'aria-hidden': 'true', dataset: { count: String(run.length) } }), ...run);
    run = [];
  };
  lines.forEach((l, i) => {
    const f = frames?.[i]?.frame ?? null;
    const el = h(
      f ? (f.inApp ? 'span.line.app' : 'span.line.lib') : 'span.line',
      l + (i < lines.length - 1 ? '\n' : ''),
    );
    if (f && !f.inApp && hasApp) run.push(el);
    else {
      flush();
      nodes.push(el);
    }
  });
  flush();
  pre.replaceChildren(...nodes);
  return nodes.some((n) => n.classList.contains('lib-fold'));
}

/**
 * The latest occurrence's stack: symbolicated when the release's artifacts map it, the raw one as
 * sent a click away; app frames shown, library frames folded behind a toggle.
 */
export function stackBlock(latest) {
  const sym = latest.symbolicatedStack;
  const pre = h('pre.stack.folded', {
    tabindex: '0',
    'aria-label': sym ? 'Stack trace, symbolicated' : 'Stack trace',
    dataset: { view: sym ? 'symbolicated' : 'raw' },
  });
  const fold = h(
    'button',
    {
      type: 'button',
      'aria-pressed': 'false',
      dataset: { show: 'library' },
      onclick: () => {
        const folded = pre.classList.toggle('folded');
        fold.setAttribute('aria-pressed', String(!folded));
      },
    },
    'Library frames',
  );
  const show = (v) => {
    const hasFold =
      v === 'raw' ? fillStack(pre, latest.stackTrace, latest.frames) : fillStack(pre, sym, latest.symbolicatedFrames);
    fold.hidden = !hasFold;
  };
  show(sym ? 'symbolicated' : 'raw');
  const foldBar = h(
    'div.actions.stack-fold',
    fold,
    h('span.hint', " app frames are shown; the runtime's, frameworks' and the OS's are folded"),
  );
  const unreadable = latest.unreadableArtifacts ?? [];
  const bad = unreadable.length
    ? h(
        'p.hint.unreadable-artifacts',
        `Not symbolicated where it needed ${unreadable.join(', ')}: the release's file could not be read as a source map or mapping. Upload it again.`,
      )
    : null;
  if (!sym) {
    return h(
      'div',
      foldBar,
      pre,
      bad ??
        h(
          'p.hint',
          'Shown as sent: no source map or R8/ProGuard mapping of this release maps it (upload them from CI: see the SDK docs, "Build uploads").',
        ),
    );
  }
  const buttons = [
    ['symbolicated', 'Symbolicated'],
    ['raw', 'Raw, as sent'],
  ].map(([v, label]) =>
    h(
      'button',
      {
        type: 'button',
        'aria-pressed': String(v === 'symbolicated'),
        dataset: { show: v },
        onclick: () => {
          show(v);
          pre.dataset.view = v;
          pre.setAttribute('aria-label', v === 'raw' ? 'Stack trace, raw as sent' : 'Stack trace, symbolicated');
          for (const b of buttons) b.setAttribute('aria-pressed', String(b.dataset.show === v));
        },
      },
      label,
    ),
  );
  return h(
    'div',
    h('div.actions.stack-toggle', { role: 'group', 'aria-label': 'Stack trace view' }, buttons),
    foldBar,
    pre,
    bad,
  );
}
