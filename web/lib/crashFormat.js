import { fmtCount } from './dom.js';

// One place for these, so the crash page's blocks write a device, a share and a count alike.
export const device = (o) => [o.brand, o.model].filter(Boolean).join(' ') || '—';
export const platformLine = (o) => [o.platform, o.osVersion].filter(Boolean).join(' ');
export const pct = (x) => `${(x * 100).toFixed(x >= 0.1 || x === 0 ? 0 : 1)}%`;
export const plural = (n, word) => `${fmtCount(n)} ${word}${n === 1 ? '' : 's'}`;
