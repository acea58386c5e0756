// Starts the benchmark's peer, @platformatic/db, from a config file, listening on 127.0.0.1 only (its own
// `plt-db start` binds every interface when it believes it runs in a container). Usage: start.mjs <config> <port>
import { readFileSync } from 'node:fs';
import db from '@platformatic/db';

const [configFile, port] = process.argv.slice(2);
const app = await db.buildServer(JSON.parse(readFileSync(configFile, 'utf8')));
await app.listen({ host: '127.0.0.1', port: Number(port) });
process.stderr.write(`peer listening on 127.0.0.1:${port}\n`);
process.once('SIGTERM', async () => {
  await app.close();
  process.exit(0);
});
