import { readFileSync } from 'node:fs';
import { PLANS, type Plan } from '../config.js';
import { apiDocument, type Command, flags, UsageError, withStore } from './command.js';

/** `nyc-listings keys`: issues, lists, revokes and imports API keys. */
export const keysCommand: Command = {
  name: 'keys',
  usage: `  keys issue --plan P [--label L] [--expires YYYY-MM-DD] [--origins https://app.example,...] [--operations id,...]
                              print a new key (alone, on stdout); with --origins, a publishable key for web pages;
                              with --operations (operation ids of /v1/openapi.json), a key that may call only those
  keys list                   list keys (never the keys themselves): source (cli, import, stripe), customer,
                              subscription and its status
  keys revoke <id>            revoke a key
  keys rotate <id>            print a new key replacing key <id> (same plan, subscription and quota); the old one
                              works for KEY_ROTATION_GRACE_SECONDS more
  keys import <file.json|file.csv>   import keys issued by the subscription provider (idempotent)`,
  async run(rest, config) {
    const [{ KeysRepository }, { issueKey, importKeys, listKeys, parseOrigins, rotateKey }] = await Promise.all([
      import('../store/keys-repository.js'),
      import('../keys/key-admin.js'),
    ]);
    return withStore(config, async (store) => {
      const keys = new KeysRepository(store.db);
      const [sub, ...args] = rest;
      if (sub === 'issue') {
        const { values } = flags(args, {
          plan: { type: 'string' },
          label: { type: 'string' },
          expires: { type: 'string' },
          origins: { type: 'string' },
          operations: { type: 'string' },
        });
        if (!values.plan || !PLANS.includes(values.plan as Plan)) throw new UsageError(`--plan must be one of ${PLANS.join(', ')}`);
        let origins: string[] | null = null;
        if (values.origins !== undefined) {
          try {
            origins = parseOrigins(values.origins);
          } catch (error) {
            throw new UsageError(`--origins: ${(error as Error).message}`);
          }
          if (!origins.length) throw new UsageError('--origins needs at least one origin');
        }
        let operations: string[] | null = null;
        if (values.operations !== undefined) {
          operations = [
            ...new Set(
              values.operations
                .split(',')
                .map((o) => o.trim())
                .filter(Boolean),
            ),
          ];
          const known = Object.values((await apiDocument(config)).paths).flatMap((item) =>
            Object.values(item).map((operation) => operation.operationId),
          );
          const unknown = operations.filter((o) => !known.includes(o));
          if (!operations.length || unknown.length)
            throw new UsageError(
              `--operations takes operation ids of /v1/openapi.json${unknown.length ? ` (unknown: ${unknown.join(', ')})` : ''}: ${known.join(', ')}`,
            );
        }
        process.stdout.write(
          `${await issueKey(keys, config, { plan: values.plan as Plan, label: values.label ?? null, expires: values.expires ?? null, origins, operations })}\n`,
        );
      } else if (sub === 'list') {
        process.stdout.write(`${listKeys(await keys.listWithCustomers())}\n`);
      } else if (sub === 'revoke' && args[0]) {
        if (!(await keys.revoke(args[0], new Date().toISOString()))) throw new Error(`no active key with id ${args[0]}`);
        process.stderr.write(`revoked ${args[0]}\n`);
      } else if (sub === 'rotate' && args[0]) {
        const rotated = await rotateKey(keys, config, args[0], new Date());
        if (!rotated) throw new Error(`no key with id ${args[0]} that works now (unknown, revoked, expired or already replaced)`);
        process.stdout.write(`${rotated.key}\n`);
        process.stderr.write(`key ${args[0]} works until ${rotated.previousExpiresAt}; the new key's id is ${rotated.id}\n`);
      } else if (sub === 'import' && args[0]) {
        const result = await importKeys(keys, config, args[0], readFileSync(args[0], 'utf8'));
        process.stderr.write(`imported ${result.inserted} new, ${result.updated} updated\n`);
      } else {
        throw new UsageError(
          sub
            ? `unknown keys command "${sub}" (issue, list, revoke <id>, rotate <id>, import <file>)`
            : 'keys needs a command: issue, list, revoke <id>, rotate <id>, import <file>',
        );
      }
      return 0;
    });
  },
};
