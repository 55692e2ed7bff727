import { readdirSync, readFileSync } from 'node:fs';
import type { FastifyInstance } from 'fastify';

const DOCS_DIR = new URL('../../docs/', import.meta.url);

interface Doc {
  name: string;
  title: string;
  summary: string;
  text: string;
}

/** Every page of docs/: its title (first heading) and first sentence. */
export function readDocs(dir: URL = DOCS_DIR): Doc[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.md'))
    .sort()
    .map((file) => {
      const text = readFileSync(new URL(file, dir), 'utf8');
      const lines = text.split('\n');
      const title = (lines.find((line) => line.startsWith('# ')) ?? file)
        .replace(/^#\s+/, '')
        .replace(/`/g, '');
      const paragraph = text.split(/\n\s*\n/).find((block) => block.trim() && !block.startsWith('#')) ?? '';
      const summary = (
        paragraph
          .replace(/\s+/g, ' ')
          .trim()
          .split(/(?<=\.)\s/)[0] ?? ''
      ).slice(0, 240);
      return { name: file.replace(/\.md$/, ''), title, summary, text };
    });
}

interface OpenApi {
  info?: { title?: string; description?: string; version?: string };
  paths?: Record<string, Record<string, { summary?: string; tags?: string[] }>>;
}

function operations(doc: OpenApi) {
  return Object.entries(doc.paths ?? {}).flatMap(([path, methods]) =>
    Object.entries(methods).map(
      ([method, operation]) =>
        `- \`${method.toUpperCase()} ${path}\`${operation.summary ? `: ${operation.summary}` : ''}`,
    ),
  );
}

/** /llms.txt: title, a `>` summary, the docs with one line each, then the API operations. */
export function llmsIndex(doc: OpenApi, docs: Doc[], base: string) {
  return [
    `# ${doc.info?.title ?? 'earshot'}`,
    '',
    `> ${doc.info?.description ?? ''} REST under ${base}/v1/ (OpenAPI ${doc.info?.version ?? ''} at ${base}/openapi.json); an MCP server for agents at ${base}/mcp.`,
    '',
    '## Docs',
    '',
    ...docs.map((page) => `- [${page.title}](${base}/docs/${page.name}.md): ${page.summary}`),
    '',
    '## API',
    '',
    `- [OpenAPI 3.1 description](${base}/openapi.json): every REST operation with its parameters and responses`,
    `- [Full text](${base}/llms-full.txt): these docs and the operation list in one file`,
    ...operations(doc),
    '',
  ].join('\n');
}

export function llmsFull(doc: OpenApi, docs: Doc[], base: string) {
  return [
    llmsIndex(doc, docs, base),
    ...docs.map((page) => `\n---\n\n<!-- ${base}/docs/${page.name}.md -->\n\n${page.text}`),
  ].join('\n');
}

/** /llms.txt, /llms-full.txt and the docs pages they link to (docs/agents.md). */
export function llmsRoutes(deps: { publicBaseUrl: string; docsDir?: URL }) {
  return async function routes(app: FastifyInstance) {
    let cached: { index: string; full: string; docs: Map<string, string> } | undefined;
    const build = () => {
      if (cached) return cached;
      const docs = readDocs(deps.docsDir);
      const openApi = app.swagger() as OpenApi;
      cached = {
        index: llmsIndex(openApi, docs, deps.publicBaseUrl),
        full: llmsFull(openApi, docs, deps.publicBaseUrl),
        docs: new Map(docs.map((page) => [page.name, page.text])),
      };
      return cached;
    };
    const open = { config: { auth: 'public' as const }, schema: { hide: true } };
    app.get('/llms.txt', open, async (_request, reply) =>
      reply.type('text/plain; charset=utf-8').send(build().index),
    );
    app.get('/llms-full.txt', open, async (_request, reply) =>
      reply.type('text/plain; charset=utf-8').send(build().full),
    );
    app.get<{ Params: { name: string } }>(
      '/docs/:name',
      {
        ...open,
        schema: {
          hide: true,
          params: { type: 'object', properties: { name: { type: 'string', pattern: '^[a-z0-9-]+\\.md$' } } },
        },
      },
      async (request, reply) => {
        const text = build().docs.get(request.params.name.replace(/\.md$/, ''));
        if (text === undefined) return reply.callNotFound();
        return reply.type('text/markdown; charset=utf-8').send(text);
      },
    );
  };
}
