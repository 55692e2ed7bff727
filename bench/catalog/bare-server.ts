// The yardstick: a bare fastify route that reads one podcast row with pg, nothing else.
import Fastify from 'fastify';
import pg from 'pg';

const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
const app = Fastify();
app.get<{ Params: { id: string } }>('/podcasts/:id', async (request, reply) => {
  const { rows } = await pool.query('select * from podcasts where id = $1', [request.params.id]);
  if (!rows[0]) return reply.code(404).send({});
  return rows[0];
});
const address = await app.listen({ port: Number(process.env.PORT), host: '127.0.0.1' });
process.stdout.write(`${address}\n`);
process.on('SIGTERM', () => void app.close().then(() => pool.end()));
