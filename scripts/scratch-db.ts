// Creates or drops a scratch Postgres database, so CI runs on a shared server do not see each
// other's rows. Usage: tsx scripts/scratch-db.ts create|drop <admin-url> <name>
import pg from 'pg';

const [action, adminUrl, name] = process.argv.slice(2);
if (!action || !adminUrl || !name || !/^[a-z0-9_]+$/.test(name)) {
  console.error('usage: tsx scripts/scratch-db.ts create|drop <admin-url> <name: [a-z0-9_]+>');
  process.exit(2);
}
const client = new pg.Client({ connectionString: adminUrl });
await client.connect();
try {
  // Identifiers cannot be bound as parameters; the name is checked against [a-z0-9_]+ above.
  if (action === 'create') await client.query(`CREATE DATABASE ${name}`);
  else await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
} finally {
  await client.end();
}
