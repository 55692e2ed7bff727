import type { FastifyInstance } from 'fastify';
import { migrationsApplied } from '../db/migrate.ts';

const status = {
  type: 'object',
  required: ['status'],
  properties: {
    status: { type: 'string' },
    checks: { type: 'object', additionalProperties: { type: 'string' } },
  },
} as const;

/** /healthz: the process answers. /readyz: the database answers and every migration is applied. */
export async function healthRoutes(app: FastifyInstance) {
  app.get(
    '/healthz',
    { config: { auth: 'public' }, schema: { tags: ['health'], response: { 200: status } } },
    async () => ({ status: 'ok' }),
  );
  app.get(
    '/readyz',
    { config: { auth: 'public' }, schema: { tags: ['health'], response: { 200: status, 503: status } } },
    async (_request, reply) => {
      let database = 'ok';
      let migrations = 'ok';
      try {
        await app.db.query('select 1');
        if (!(await migrationsApplied(app.db))) migrations = 'pending';
      } catch {
        database = 'unreachable';
        migrations = 'unknown';
      }
      const ready = database === 'ok' && migrations === 'ok';
      return reply
        .code(ready ? 200 : 503)
        .send({ status: ready ? 'ready' : 'not_ready', checks: { database, migrations } });
    },
  );
}
