// Creates or drops a scratch Postgres database (used by .ci/run and the bench instructions).
// Usage: tsx scripts/scratch-db.ts create|drop <admin-url> <name>
import { createDatabase, dropDatabase } from './databases.ts';

const [action, adminUrl, name] = process.argv.slice(2);
if ((action !== 'create' && action !== 'drop') || !adminUrl || !name) {
  console.error('usage: tsx scripts/scratch-db.ts create|drop <admin-url> <name: [a-z0-9_]+>');
  process.exit(2);
}
await (action === 'create' ? createDatabase : dropDatabase)(adminUrl, name);
