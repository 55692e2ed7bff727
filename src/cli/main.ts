import { Command, Option } from 'commander';
import pino from 'pino';
import { paymentsReport } from '../../projections/payments/queries.ts';
import { oauthClients, oauthGrants, oauthRevoke } from '../agents/oauth/admin.ts';
import { createDisableTokens } from '../alerts/disable-tokens.ts';
import { addChatConnection } from '../chat/connections.ts';
import { allProjections, buildCapabilities } from '../composition.ts';
import { loadConfig } from '../config.ts';
import { createSecretBox } from '../crypto/secret-box.ts';
import { utcInstant } from '../date-time.ts';
import { migrate } from '../db/migrate.ts';
import { openDb } from '../db/open.ts';
import type { ErrorDetail } from '../errors.ts';
import { listenEarly } from '../http/early-server.ts';
import { ingestFileViaKafka } from '../kafka/ingest-file.ts';
import { createKey, revokeKey } from '../platform/keys.ts';
import {
  createOrganization,
  createProject,
  parsePlan,
  setAlertPacks,
  setPlan,
  verifyEmail,
} from '../platform/organizations.ts';
import { ROLES, type Role, type Runtime } from '../runtime.ts';
import { closeRuntime, createLogger, openRuntime, startService } from '../service.ts';
import { readCheckpoint } from '../subscriptions/checkpoints.ts';
import { parkedCounts } from '../subscriptions/parked.ts';
import { projectionSubscriber } from '../subscriptions/projection-runner.ts';
import { rebuildSubscription, retryParked } from '../subscriptions/runner.ts';
import type { Subscriber } from '../subscriptions/subscriber.ts';
import { ingestFile } from './ingest-file.ts';
import { fail, printResult } from './output.ts';
import { progressBar } from './progress.ts';
import { disableLinksNeedingPreviousKeys, resealSecrets } from './secrets.ts';

const program = new Command('earshot')
  .description('earshot: podcast mention alerts, from ingestion to delivery')
  .exitOverride((error) => process.exit(error.exitCode));

/** Opens the runtime (migrating first), runs an admin command, prints its result, closes. */
function admin<A extends unknown[]>(run: (runtime: Runtime, ...args: A) => Promise<Record<string, unknown>>) {
  return async (...args: A) => {
    const options = args.at(-2) as { json?: boolean };
    const config = loadConfig();
    let runtime: Runtime | undefined;
    try {
      // Logs go to stderr: stdout carries the command's one result.
      runtime = await openRuntime(config, {
        migrate: true,
        log: createLogger({ logLevel: 'warn' }, pino.destination(2)),
      });
      printResult(await run(runtime, ...args), Boolean(options.json));
    } catch (error) {
      fail(error, Boolean(options.json));
    } finally {
      if (runtime) await closeRuntime(runtime);
    }
  };
}

const json = new Option('--json', 'print exactly one JSON object on stdout');

program
  .command('migrate')
  .description('apply pending database migrations')
  .addOption(json)
  .action(async (options: { json?: boolean }) => {
    const db = await openDb(loadConfig()).catch((error: unknown) => fail(error, Boolean(options.json)));
    try {
      printResult({ applied: await migrate(db) }, Boolean(options.json));
    } catch (error) {
      fail(error, Boolean(options.json));
    } finally {
      await db.close();
    }
  });

program
  .command('serve')
  .description('serve the REST API and run the workers until SIGTERM')
  .option('--roles <roles>', `comma-separated subset of ${ROLES.join(',')}`, ROLES.join(','))
  .action(async (options: { roles: string }) => {
    const roles = options.roles.split(',').map((role) => role.trim());
    const unknown = roles.filter((role) => !(ROLES as readonly string[]).includes(role));
    if (unknown.length) fail(`unknown role(s) ${unknown.join(', ')}; roles are ${ROLES.join(', ')}`);
    // Installed first, so a SIGTERM that arrives while the process is still starting is honoured
    // (it finishes starting, then drains) instead of killing it mid-migration.
    let stopRequested: string | undefined;
    let stopNow: ((signal: string) => void) | undefined;
    const onSignal = (signal: string) => {
      if (stopNow) stopNow(signal);
      else stopRequested ??= signal;
    };
    process.once('SIGTERM', () => onSignal('SIGTERM'));
    process.once('SIGINT', () => onSignal('SIGINT'));

    const config = loadConfig();
    // Every role listens: api processes serve the API, the others /healthz, /readyz and /metrics.
    const server = await listenEarly(config.port, config.host).catch(fail);
    const runtime = await openRuntime(config, { migrate: true }).catch(fail);
    const service = await startService(runtime, roles as Role[], { server }).catch(fail);
    runtime.log.info({ url: service.url, roles }, 'earshot is running');
    let stopping = false;
    stopNow = (signal: string) => {
      if (stopping) return;
      stopping = true;
      runtime.log.info({ signal }, 'draining');
      void service
        .stop()
        .then(() => closeRuntime(runtime))
        .then(() => process.exit(0), fail);
    };
    if (stopRequested) stopNow(stopRequested);
  });

const org = program.command('org').description('organizations, their plans and verified emails');
org
  .command('create')
  .requiredOption('--name <name>')
  .requiredOption('--plan <plan>', 'STARTER|GROWTH|TEAM|BUSINESS|ENTERPRISE')
  .addOption(json)
  .action(
    admin(async ({ db }, options: { name: string; plan: string }) => {
      const created = await createOrganization(db, { name: options.name, plan: parsePlan(options.plan) });
      return { ...created };
    }),
  );
org
  .command('set-plan')
  .requiredOption('--org <id>')
  .requiredOption('--plan <plan>')
  .addOption(json)
  .action(
    admin(async ({ db }, options: { org: string; plan: string }) => ({
      ...(await setPlan(db, options.org, parsePlan(options.plan))),
    })),
  );
org
  .command('add-on')
  .description('set the number of Alerts Pack add-ons (each adds 5 active alerts)')
  .requiredOption('--org <id>')
  .requiredOption('--quantity <n>', 'number of Alerts Packs', Number)
  .addOption(json)
  .action(
    admin(async ({ db }, options: { org: string; quantity: number }) => ({
      ...(await setAlertPacks(db, options.org, options.quantity)),
    })),
  );
org
  .command('verify-email')
  .requiredOption('--org <id>')
  .requiredOption('--email <email>')
  .addOption(json)
  .action(
    admin(async ({ db }, options: { org: string; email: string }) =>
      verifyEmail(db, options.org, options.email),
    ),
  );

program
  .command('project')
  .description('projects')
  .command('create')
  .requiredOption('--org <id>')
  .requiredOption('--name <name>')
  .addOption(json)
  .action(
    admin(async ({ db }, options: { org: string; name: string }) =>
      createProject(db, { organizationId: options.org, name: options.name }),
    ),
  );

const key = program.command('key').description('API keys (shown once; stored only as hashes)');
key
  .command('create')
  .option('--project <id>', 'a key bound to this project')
  .option('--ingest', 'an ingest key, for /v1/ingest/* only')
  .addOption(json)
  .action(
    admin(async ({ db }, options: { project?: string; ingest?: boolean }) => {
      if (Boolean(options.project) === Boolean(options.ingest))
        throw new Error('give exactly one of --project ID or --ingest');
      return createKey(
        db,
        options.ingest ? { kind: 'ingest' } : { kind: 'project', projectId: options.project! },
      );
    }),
  );
key
  .command('revoke')
  .requiredOption('--id <id>')
  .addOption(json)
  .action(admin(async ({ db }, options: { id: string }) => revokeKey(db, options.id)));

const oauth = program
  .command('oauth')
  .description("MCP agents' OAuth clients and grants (connected applications)");
oauth
  .command('clients')
  .addOption(json)
  .action(admin(async ({ db }) => oauthClients(db)));
oauth
  .command('grants')
  .option('--project <id>', "only this project's grants")
  .addOption(json)
  .action(admin(async ({ db }, options: { project?: string }) => oauthGrants(db, options.project)));
oauth
  .command('revoke')
  .argument('<grant>', 'the grant id (og_…)')
  .addOption(json)
  .action(admin(async ({ db, now }, grant: string) => oauthRevoke(db, grant, now())));

program
  .command('ingest')
  .description('validate and ingest an NDJSON file of producer events')
  .argument('<file>', 'one event per line (docs/ingestion.md)')
  .addOption(new Option('--via <transport>', 'produce to the Kafka topics instead').choices(['kafka']))
  .addOption(json)
  .action(
    admin(async (runtime, file: string, options: { via?: 'kafka' }) => {
      const bar = progressBar('ingest');
      const hooks = {
        onProgress: (done: number, total: number) => bar.update(done, total),
        onRejected: (line: number, problems: ErrorDetail[]) => {
          for (const problem of problems)
            process.stderr.write(`line ${line}: ${problem.location} ${problem.message}\n`);
        },
      };
      try {
        const result =
          options.via === 'kafka'
            ? await ingestFileViaKafka(runtime.config.kafkaBrokers ?? [], file, hooks)
            : await ingestFile(runtime.store, file, hooks);
        if (result.rejected > 0) process.exitCode = 1;
        return { ...result };
      } finally {
        bar.stop();
      }
    }),
  );

program
  .command('chat')
  .description('connected chat workspaces (Slack)')
  .command('add')
  .requiredOption('--project <id>')
  .requiredOption('--team-id <id>', 'the workspace id (T…)')
  .requiredOption('--team-name <name>')
  .requiredOption('--bot-token <token>', 'the bot token (xoxb-…); stored encrypted')
  .addOption(json)
  .action(
    admin(
      async (runtime, options: { project: string; teamId: string; teamName: string; botToken: string }) => {
        const connection = await addChatConnection(
          {
            db: runtime.db,
            box: createSecretBox(runtime.secretKey, runtime.previousSecretKeys),
            now: runtime.now,
          },
          {
            projectId: options.project,
            teamId: options.teamId,
            teamName: options.teamName,
            botToken: options.botToken,
          },
        );
        return { ...connection };
      },
    ),
  );

program
  .command('secrets')
  .description('values sealed under EARSHOT_SECRET_KEY (webhook secrets, chat bot tokens)')
  .command('reseal')
  .description('seal under EARSHOT_SECRET_KEY every value still sealed under EARSHOT_PREVIOUS_SECRET_KEYS')
  .addOption(json)
  .action(
    admin(async (runtime) => {
      const box = createSecretBox(runtime.secretKey, runtime.previousSecretKeys);
      const result = await resealSecrets({ db: runtime.db, box });
      if (result.remaining > 0) process.exitCode = 1;
      const tokens = createDisableTokens(runtime.secretKey, runtime.previousSecretKeys);
      return {
        ...result,
        disableLinksNeedingPreviousKeys: await disableLinksNeedingPreviousKeys(runtime.db, tokens),
      };
    }),
  );

/** Every projection and consumer that follows the event store, by subscription name. */
function allSubscribers(runtime: Runtime): Subscriber[] {
  const capabilities = buildCapabilities(runtime);
  return [
    ...allProjections(capabilities).map(projectionSubscriber),
    ...capabilities.flatMap((c) => c.workers ?? []).flatMap((w) => (w.subscriber ? [w.subscriber] : [])),
  ];
}

program
  .command('payments')
  .description('the x402 payment ledger (docs/payments.md)')
  .command('list')
  .description('payments verified since a moment, with their outcome and transaction')
  .option('--since <when>', 'ISO 8601 date or date-time (default: 24 hours ago)')
  .addOption(json)
  .action(
    admin(async ({ db, now }, options: { since?: string }) => {
      const given = options.since;
      const instant = given
        ? utcInstant(/^\d{4}-\d{2}-\d{2}$/.test(given) ? `${given}T00:00:00Z` : given)
        : now().getTime() - 86_400_000;
      if (instant === undefined)
        throw new Error(
          `--since must be an ISO 8601 date (2026-01-31) or date-time with offset, got ${given}`,
        );
      const since = new Date(instant);
      return { since: since.toISOString(), ...(await paymentsReport(db, since)) };
    }),
  );

const projections = program
  .command('projections')
  .description('read models and the consumers that follow the event store');

projections
  .command('rebuild')
  .argument('[name]', 'one projection, or the embedder (embedder:<model>); every projection when omitted')
  .addOption(json)
  .action(
    admin(async (runtime, name: string | undefined) => {
      // By name, any subscriber whose effects can be recomputed from the events (it has a reset).
      const targets = name
        ? allSubscribers(runtime).filter((s) => s.name === name && s.mode === 'transactional' && s.reset)
        : allProjections(buildCapabilities(runtime)).map(projectionSubscriber);
      if (targets.length === 0) throw new Error(`no projection named ${name}`);
      let events = 0;
      for (const target of targets) {
        const bar = progressBar(target.name);
        try {
          events += await rebuildSubscription(runtime.db, runtime.store, target, {
            log: runtime.log,
            onProgress: (done, total) => bar.update(done, total),
          });
        } finally {
          bar.stop();
        }
      }
      // Events that still fail were parked rather than stopping the rebuild: name them.
      const counts = await parkedCounts(runtime.db);
      const parked = Object.fromEntries(
        targets.filter((p) => counts.has(p.name)).map((p) => [p.name, counts.get(p.name)]),
      );
      return {
        rebuilt: targets.map((p) => p.name),
        events,
        ...(Object.keys(parked).length > 0 && { parked }),
      };
    }),
  );

projections
  .command('status')
  .description('checkpoint, lag and parked events of every projection and consumer')
  .addOption(json)
  .action(
    admin(async (runtime) => {
      const parked = await parkedCounts(runtime.db);
      const subscriptions = [];
      for (const subscriber of allSubscribers(runtime)) {
        const position = await readCheckpoint(runtime.db, subscriber.name);
        const lag = await runtime.store.countAll?.({ after: position, eventTypes: subscriber.eventTypes });
        subscriptions.push({
          name: subscriber.name,
          mode: subscriber.mode,
          position,
          ...(lag !== undefined && { lag }),
          parked: parked.get(subscriber.name) ?? 0,
        });
      }
      return { subscriptions };
    }),
  );

projections
  .command('retry-parked')
  .description('replay parked events through their handler (after a fix); those that still fail stay parked')
  .argument('[name]', 'one projection or consumer (as status names it); all when omitted')
  .addOption(json)
  .action(
    admin(async (runtime, name: string | undefined) => {
      const subscribers = allSubscribers(runtime).filter((s) => !name || s.name === name);
      if (subscribers.length === 0) throw new Error(`no projection or consumer named ${name}`);
      const results: Record<string, unknown> = {};
      let failing = 0;
      for (const subscriber of subscribers) {
        const result = await retryParked(runtime.db, runtime.store, subscriber);
        failing += result.failing;
        if (name || result.replayed + result.failing + result.missing > 0) results[subscriber.name] = result;
      }
      if (failing > 0) process.exitCode = 1;
      return { retried: results };
    }),
  );

await program.parseAsync(process.argv).catch(fail);
