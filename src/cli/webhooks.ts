import type { AreasRepository } from '../store/areas-repository.js';
import { type Command, flags, UsageError, withStore } from './command.js';

/** `nyc-listings webhooks`: manages webhook subscriptions and their deliveries. */
export const webhooksCommand: Command = {
  name: 'webhooks',
  usage: `  webhooks add --key <key id> --url <https url> --events <type,...> [--filter '<query>']
                              subscribe a key to change events; prints the id and signing secret (shown once)
  webhooks list               list subscriptions (never their secrets)
  webhooks remove <id>        remove a subscription (its pending deliveries are given up)
  webhooks deliveries [--subscription <id>] [--status pending|delivered|dead] [--limit N]
                              recent deliveries, newest first (dead letters with --status dead)
  webhooks redeliver <delivery id>   send a delivery again (same webhook-id), from the first step of the schedule`,
  async run(rest, config) {
    const [
      { WebhooksRepository },
      { KeysRepository },
      { ChangesRepository },
      { AreasRepository },
      { addSubscription, listDeliveries, listSubscriptions, WebhookAdminError },
    ] = await Promise.all([
      import('../store/webhooks-repository.js'),
      import('../store/keys-repository.js'),
      import('../store/changes-repository.js'),
      import('../store/areas-repository.js'),
      import('../notify/webhook-admin.js'),
    ]);
    return withStore(config, async (store) => {
      const webhooks = new WebhooksRepository(store.db);
      const [sub, ...args] = rest;
      if (sub === 'add') {
        const { values } = flags(args, {
          key: { type: 'string' },
          url: { type: 'string' },
          events: { type: 'string' },
          filter: { type: 'string', default: '' },
        });
        if (!values.key || !values.url || !values.events) throw new UsageError('webhooks add needs --key, --url and --events');
        const filter = await checkedFilter(values.filter!, new AreasRepository(store.db));
        const deps = {
          webhooks,
          keys: new KeysRepository(store.db),
          changes: new ChangesRepository(store.db),
          config,
          clock: () => new Date(),
        };
        const { subscription, secret } = await addSubscription(deps, {
          keyId: values.key,
          url: values.url,
          events: values.events.split(',').map((e) => e.trim()),
          filter,
        });
        process.stdout.write(
          `${JSON.stringify({ id: subscription.id, secret, url: subscription.url, events: subscription.events.split(','), filter: subscription.filter })}\n`,
        );
        process.stderr.write('the signing secret is shown this once: keep it where the receiver can read it\n');
      } else if (sub === 'list') {
        process.stdout.write(`${listSubscriptions(await webhooks.list())}\n`);
      } else if (sub === 'remove' && args[0]) {
        if (!(await webhooks.remove(args[0], new Date().toISOString())))
          throw new WebhookAdminError(`no active subscription with id ${args[0]}`);
        process.stderr.write(`removed ${args[0]}\n`);
      } else if (sub === 'deliveries') {
        const { values } = flags(args, {
          subscription: { type: 'string' },
          status: { type: 'string' },
          limit: { type: 'string', default: '50' },
        });
        if (values.status && !['pending', 'delivered', 'dead'].includes(values.status))
          throw new UsageError('--status must be pending, delivered or dead');
        if (!/^[0-9]{1,6}$/.test(values.limit!)) throw new UsageError(`--limit must be a whole number, got "${values.limit}"`);
        process.stdout.write(
          `${listDeliveries(await webhooks.deliveries({ subscriptionId: values.subscription, status: values.status, limit: Number(values.limit) }))}\n`,
        );
      } else if (sub === 'redeliver' && args[0]) {
        if (!/^[0-9]{1,15}$/.test(args[0]) || !(await webhooks.redeliver(Number(args[0]), new Date().toISOString()))) {
          throw new WebhookAdminError(`no delivery ${args[0]} of an active subscription (see webhooks deliveries)`);
        }
        process.stderr.write(`delivery ${args[0]} will be sent again\n`);
      } else {
        throw new UsageError(
          sub
            ? `unknown webhooks command "${sub}" (add, list, remove <id>, deliveries, redeliver <id>)`
            : 'webhooks needs a command: add, list, remove <id>, deliveries, redeliver <id>',
        );
      }
      return 0;
    });
  },
};

/**
 * A webhook subscription's `--filter`, checked as GET /v1/changes checks its query (the same schema and
 * strict conversion), with its area ids known to the mirror. Returns it as given.
 * @throws UsageError naming each bad parameter.
 */
async function checkedFilter(filter: string, areas: AreasRepository): Promise<string> {
  const [{ parameterValidatorCompiler }, { ChangeFilterQuery }] = await Promise.all([
    import('../http/validation.js'),
    import('../http/schemas/change-query.js'),
  ]);
  const validate = parameterValidatorCompiler()({
    schema: ChangeFilterQuery as never,
    httpPart: 'querystring',
    method: 'GET',
    url: '/v1/changes',
  });
  const params = Object.fromEntries(new URLSearchParams(filter));
  const result = validate(params) as { error?: { instancePath: string; message: string; params?: { additionalProperty?: string } }[] };
  if (result.error) {
    const named = result.error.map((e) =>
      e.params?.additionalProperty ? `unknown parameter ${e.params.additionalProperty}` : `${e.instancePath.slice(1)} ${e.message}`,
    );
    throw new UsageError(`--filter: ${named.join('; ')}`);
  }
  const tree = await areas.tree();
  const unknown = (params.areas?.split(',') ?? []).filter((id) => !tree.get(Number(id)));
  if (unknown.length) throw new UsageError(`--filter: unknown area id ${unknown.join(', ')}`);
  return filter;
}
