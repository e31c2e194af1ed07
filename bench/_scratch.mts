import * as O from './_old_ids.ts';
import * as N from '../src/domain/ids.ts';
const names = ['s-1:3', 'é'.repeat(85), 'ü€'.repeat(60), 'x'.repeat(300), ''];
for (const n of names) { if (O.uuidV5(n) !== N.uuidV5(n)) throw new Error('mismatch ' + n); }
console.log(O.eventId('s-1', 3), O.uuidV5('€'.repeat(100)));
