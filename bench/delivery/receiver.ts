/**
 * A bare HTTPS webhook receiver in its own process, so the benchmark's deliverers do not share a
 * CPU with it. Answers 200 at once and reports each request on stdout as a JSON line
 * { id: webhook-id, source: the first match's source_id, at: epoch ms }. Prints { port } first.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';

const dir = process.env.TLS_DIR;
if (!dir) throw new Error('TLS_DIR is required');
const lines: string[] = [];
const flush = () => {
  if (lines.length) process.stdout.write(`${lines.splice(0).join('\n')}\n`);
};
setInterval(flush, 20).unref();
const server = createServer(
  { cert: readFileSync(`${dir}/server.pem`), key: readFileSync(`${dir}/server.key`) },
  (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const at = Date.now();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"received":true}');
      let source: string | undefined;
      try {
        source = (
          JSON.parse(Buffer.concat(chunks).toString('utf8')) as { matches?: Array<{ source_id?: string }> }
        ).matches?.[0]?.source_id;
      } catch {}
      lines.push(JSON.stringify({ id: req.headers['webhook-id'], source, at }));
    });
  },
);
// Node's default keep-alive (5 s): senders keep idle connections for less than the receiver does.
server.keepAliveTimeout = 5000;
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});
process.on('SIGTERM', () => {
  flush();
  server.close(() => process.exit(0));
  server.closeAllConnections();
});
