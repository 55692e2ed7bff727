import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { builtinProvider } from '../../src/search/semantic/word-vectors.ts';

export interface EmbeddingsStandin {
  /** Base URL: use as EARSHOT_EMBEDDINGS_URL. */
  url: string;
  /** The bodies received, in order. */
  requests: { model: string; input: string[]; authorization: string | undefined }[];
  /** Answer every call with this status (503, 429…) until set back to undefined. */
  failWith: number | undefined;
  /** Send the headers of a 200, then drop the connection mid-body. */
  dropBody: boolean;
  /** Calls whose input contains this text wait unanswered until `release()`. */
  hold: string | undefined;
  /** How many calls wait now. */
  held(): number;
  /** Answers every waiting call. */
  release(): void;
  close(): Promise<void>;
}

/**
 * An OpenAI-compatible embeddings API on loopback: POST /v1/embeddings { model, input } answers
 * { data: [{ index, embedding }] } with the built-in model's vectors (so results are meaningful),
 * 400 for any input containing "POISON", `failWith` when set, a body cut short with `dropBody`,
 * and no answer yet to an input containing `hold` (until `release()`).
 */
export async function startEmbeddingsStandin(): Promise<EmbeddingsStandin> {
  const standin: EmbeddingsStandin = {
    url: '',
    requests: [],
    failWith: undefined,
    dropBody: false,
    hold: undefined,
    held: () => waiting.length,
    release: () => {
      for (const answer of waiting.splice(0)) answer();
    },
    close: async () => {},
  };
  const waiting: (() => void)[] = [];
  const server = createServer(async (request, response) => {
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const answer = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    if (request.method !== 'POST' || request.url !== '/v1/embeddings')
      return answer(404, { error: { message: 'not found' } });
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
      model: string;
      input: string | string[];
    };
    const input = Array.isArray(body.input) ? body.input : [body.input];
    standin.requests.push({ model: body.model, input, authorization: request.headers.authorization });
    const hold = standin.hold;
    if (hold !== undefined && input.some((text) => text.includes(hold)))
      await new Promise<void>((resolve) => waiting.push(resolve));
    if (standin.failWith !== undefined)
      return answer(standin.failWith, { error: { message: 'unavailable' } });
    if (standin.dropBody) {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': '100000' });
      response.write('{"data":[');
      setTimeout(() => response.destroy(), 10);
      return;
    }
    if (input.some((text) => text.includes('POISON')))
      return answer(400, { error: { message: 'input rejected', type: 'invalid_request_error' } });
    const vectors = await builtinProvider.embed(input);
    answer(200, {
      object: 'list',
      model: body.model,
      data: vectors.map((vector, index) => ({ object: 'embedding', index, embedding: [...vector] })),
      usage: { prompt_tokens: 0, total_tokens: 0 },
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  standin.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  standin.close = () => {
    standin.release();
    return new Promise((resolve) => server.close(() => resolve()));
  };
  return standin;
}
