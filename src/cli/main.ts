// The CLI is a client of the management API: embedded stores belong to the server process.
import { readArgs } from './args.ts';
import { COMMANDS } from './commands/index.ts';
import { fail, printError } from './errors.ts';
import { adminCalls, adminToken, serviceUrl } from './http.ts';
import { fields } from './output.ts';
import { USAGE } from './usage.ts';

async function main() {
  const a = readArgs();
  if (a.values.help || !a.resource) {
    console.log(USAGE);
    return;
  }
  const base = serviceUrl(a.values.url);
  const cmd = `${a.resource} ${a.action ?? ''}`.trim();
  const command = COMMANDS.get(cmd) ?? fail(`Unknown command "${cmd}"\n\n${USAGE}`);
  if ('run' in command) return command.run(a, base);

  const { method, route, body } = command.request(a);
  const call = adminCalls(base, adminToken(a.values.token));
  let answer = await call(method, route, body);
  if (command.after) answer = await command.after(answer, call, a);
  const { res, json, text } = answer;
  if (a.values.json) console.log(JSON.stringify(json, null, 2));
  else if (!res.ok) printError(res, json, text);
  else console.log(command.show ? command.show(json, a) : fields(json as Record<string, unknown>));
  if (!res.ok) process.exit(1);
}

main().catch((err) => fail(String(err)));
