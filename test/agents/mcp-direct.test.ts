import {
  CallToolRequestSchema,
  CallToolResultSchema,
  type JSONRPCMessage,
  JSONRPCMessageSchema,
  type JSONRPCRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createMcpServer, type McpConnection } from '../../src/agents/mcp-server.ts';
import { isPlainToolCall, PostTransport, readPost } from '../../src/agents/mcp-transport.ts';
import type { Tool, ToolResult } from '../../src/agents/tools.ts';
import { prng } from '../support/synthetic.ts';

// A well-formed tools/call skips the SDK's per-message dispatch (docs/agents.md, "How a call
// runs"): its answer must be the one the SDK Server gives, byte for byte, and everything else
// must still reach the Server.

const echo: Tool = {
  name: 'earshot_echo',
  set: 'podcasts',
  description: 'Echoes its arguments.',
  write: false,
  inputSchema: { type: 'object', properties: { say: { type: 'string' } }, additionalProperties: false },
  routes: {},
};

async function run(
  _tool: Tool,
  args: Record<string, unknown>,
  connection: McpConnection,
): Promise<ToolResult> {
  if (args.say === 'coded')
    throw Object.assign(new Error('coded failure'), { code: 42, data: { why: 'test' } });
  if (args.say === 'plain') throw new Error('plain failure');
  if (args.say === 'null') throw null;
  // Results earshot's tools never build, that the SDK Server checks and normalizes.
  if (typeof args.say === 'string' && args.say in unchecked) return unchecked[args.say] as ToolResult;
  return {
    content: [{ type: 'text', text: `said ${String(args.say)}` }],
    structuredContent: { args, request: connection.requestId, nested: { list: [1, 'two', null] } },
  };
}

const unchecked: Record<string, unknown> = {
  'bad content': { content: [{ type: 'bogus', text: 'x' }], structuredContent: {} },
  'array structured': { content: [], structuredContent: [1, 2] },
  'no content': { structuredContent: { a: 1 } },
  reordered: { isError: true, structuredContent: { b: 1 }, content: [{ text: 'x', type: 'text' }] },
  // Near the shape earshot's tools build: passed unchecked only where the SDK's check changes nothing.
  'proto key': {
    content: [{ type: 'text', text: 'x' }],
    structuredContent: JSON.parse('{"__proto__":{"a":1},"b":2}'),
  },
  'symbol key': {
    content: [{ type: 'text', text: 'x' }],
    structuredContent: { [Symbol('s')]: 1, a: 1 },
  },
  'number keys': {
    content: [{ type: 'text', text: 'x' }],
    structuredContent: JSON.parse('{"b":1,"2":2,"1":3}'),
  },
  annotated: {
    content: [{ type: 'text', text: 'x', annotations: { priority: 1 } }],
    structuredContent: {},
  },
  'extra item key': {
    content: [{ type: 'text', text: 'x', extra: 1 }],
    structuredContent: {},
  },
  'flag not boolean': { content: [], structuredContent: {}, isError: 'yes' },
  'extra key': { content: [], structuredContent: {}, isError: false, extra: 1 },
  instance: {
    content: [],
    structuredContent: new (class Thing {
      a = 1;
    })(),
  },
  'null prototype': {
    content: [],
    structuredContent: Object.assign(Object.create(null), { a: 1 }),
  },
  'undefined item': {
    content: [undefined, { type: 'text', text: 'x' }],
    structuredContent: {},
  },
};

const connection: McpConnection = {
  caller: {} as McpConnection['caller'],
  sets: new Set(['system', 'podcasts']),
  requestId: 'req-1',
  calls: [],
};

function build(direct: boolean) {
  const transport = new PostTransport<McpConnection>();
  const mcp = createMcpServer(() => [echo], transport, run);
  if (direct) transport.direct = mcp.direct;
  return { transport, ...mcp };
}
const viaServer = build(false);
const direct = build(true);
beforeAll(async () => {
  await viaServer.server.connect(viaServer.transport);
  await direct.server.connect(direct.transport);
});
afterAll(async () => {
  await viaServer.server.close();
  await direct.server.close();
});

const call = (id: string | number, params: Record<string, unknown>): JSONRPCRequest => ({
  jsonrpc: '2.0',
  id,
  method: 'tools/call',
  params,
});

const both = async (message: JSONRPCMessage) => {
  const [server] = await viaServer.transport.exchange([message], connection);
  const [shortcut] = await direct.transport.exchange([message], connection);
  return { server: JSON.stringify(server), shortcut: JSON.stringify(shortcut), answer: server };
};

describe('a tools/call answered past the SDK dispatch', () => {
  it('answers a result, a tool-layer error and a thrown error exactly as the SDK Server does', async () => {
    const cases = [
      call(7, { name: 'earshot_echo', arguments: { say: 'hi' } }),
      call('s', { name: 'earshot_echo', arguments: { say: 'hi' }, _meta: { progressToken: 3 } }),
      call(8, { name: 'earshot_missing', arguments: {} }),
      call(9, { name: 'earshot_catalog' }),
      call(10, { name: 'earshot_call', arguments: { name: 'earshot_echo', arguments: { say: 'via call' } } }),
      call(11, { name: 'earshot_echo', arguments: { say: 'coded' } }),
      call(12, { name: 'earshot_echo', arguments: { say: 'plain' } }),
      call(13, {
        name: 'earshot_echo',
        arguments: { say: 'hi' },
        _meta: { 'io.modelcontextprotocol/related-task': { taskId: 't' } },
      }),
    ];
    for (const message of cases) {
      expect(direct.direct(message, connection)).toBeDefined();
      const { server, shortcut } = await both(message);
      expect(shortcut).toBe(server);
    }
    const coded = await both(cases[5]!);
    expect(coded.answer).toEqual({
      jsonrpc: '2.0',
      id: 11,
      error: { code: 42, message: 'coded failure', data: { why: 'test' } },
    });
    expect((await both(cases[6]!)).answer).toMatchObject({
      error: { code: -32603, message: 'plain failure' },
    });
    expect((await both(cases[0]!)).answer).toMatchObject({
      id: 7,
      result: { structuredContent: { args: { say: 'hi' }, request: 'req-1' } },
    });
  });

  it('leaves every other method with well-formed params to the SDK Server', async () => {
    const left: JSONRPCRequest[] = [
      { jsonrpc: '2.0', id: 4, method: 'ping' },
      { jsonrpc: '2.0', id: 5, method: 'tools/list' },
      { jsonrpc: '2.0', id: 6, method: 'tools/list', params: { _meta: { progressToken: 1 } } },
      { jsonrpc: '2.0', id: 7, method: 'no/such', params: { a: 1 } },
      {
        jsonrpc: '2.0',
        id: 8,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } },
      },
    ];
    for (const message of left) {
      expect(direct.direct(message, connection)).toBeUndefined();
      const { server, shortcut } = await both(message);
      expect(shortcut).toBe(server);
    }
    expect((await both(left[0]!)).answer).toEqual({ jsonrpc: '2.0', id: 4, result: {} });
    expect((await both(left[3]!)).answer).toMatchObject({ id: 7, error: { code: -32601 } });
  });

  it('answers malformed params with -32602 naming each part, where the SDK Server alone answers -32603', async () => {
    const cases: [JSONRPCRequest, { location: string; message: string }[]][] = [
      [
        call(1, { arguments: { say: 'no name' } }),
        [{ location: 'params.name', message: 'missing (expected string)' }],
      ],
      [
        call(2, { name: 'earshot_echo', arguments: 'not an object' }),
        [{ location: 'params.arguments', message: 'expected object, got string' }],
      ],
      [
        call(3, { name: 7, arguments: [1], _meta: { progressToken: 1.5 } }),
        [
          { location: 'params._meta.progressToken', message: 'expected string or integer, got number' },
          { location: 'params.name', message: 'expected string, got number' },
          { location: 'params.arguments', message: 'expected object, got array' },
        ],
      ],
      [
        { jsonrpc: '2.0', id: 4, method: 'tools/list', params: { cursor: 5 } },
        [{ location: 'params.cursor', message: 'expected string, got number' }],
      ],
      [
        { jsonrpc: '2.0', id: 5, method: 'initialize', params: {} },
        [
          { location: 'params.protocolVersion', message: 'missing (expected string)' },
          { location: 'params.capabilities', message: 'missing (expected object)' },
          { location: 'params.clientInfo', message: 'missing (expected object)' },
        ],
      ],
    ];
    for (const [message, errors] of cases) {
      // The Server alone drops a message the JSON-RPC schema refuses (a malformed _meta), unanswered.
      if (JSONRPCMessageSchema.safeParse(message).success) {
        const [server] = await viaServer.transport.exchange([message], connection);
        expect(server).toMatchObject({ id: message.id, error: { code: -32603 } });
      }
      const [shortcut] = await direct.transport.exchange([message], connection);
      expect(shortcut).toEqual({
        jsonrpc: '2.0',
        id: message.id,
        error: {
          code: -32602,
          message: `Invalid params for ${message.method}: ${errors.map((e) => `${e.location}: ${e.message}`).join('; ')}`,
          data: { errors },
        },
      });
    }
  });

  it('names the first five refused parts in the message and every one in data.errors', async () => {
    const message: JSONRPCRequest = {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: 1,
        capabilities: 5,
        clientInfo: { name: 1, version: 2, icons: [{ src: 1 }, { src: 2 }] },
      },
    };
    const [answer] = await direct.transport.exchange([message], connection);
    const { error } = answer as unknown as {
      error: { message: string; data: { errors: { location: string }[] } };
    };
    expect(error.data.errors.map((e) => e.location)).toEqual([
      'params.protocolVersion',
      'params.capabilities',
      'params.clientInfo.name',
      'params.clientInfo.icons.0.src',
      'params.clientInfo.icons.1.src',
      'params.clientInfo.version',
    ]);
    expect(error.message).toMatch(/params\.clientInfo\.icons\.1\.src: expected string, got number; 1 more$/);
  });

  it('runs a task-augmented call as a plain one: the server declares no task support', async () => {
    const message = call(3, { name: 'earshot_echo', arguments: { say: 'hi' }, task: { ttl: 1000 } });
    const [server] = await viaServer.transport.exchange([message], connection);
    expect(server).toMatchObject({ id: 3, error: { code: -32603 } });
    const { task: _, ...plain } = message.params as Record<string, unknown>;
    const [alone] = await direct.transport.exchange([call(3, plain)], connection);
    expect(await direct.direct(message, connection)).toEqual(alone);
    expect(alone).toMatchObject({ id: 3, result: { content: [{ type: 'text', text: 'said hi' }] } });
  });

  it('checks a result as the SDK Server does: refuses a malformed one, normalizes the rest', async () => {
    for (const [id, say] of Object.keys(unchecked).entries()) {
      const { server, shortcut } = await both(call(id, { name: 'earshot_echo', arguments: { say } }));
      expect(shortcut).toBe(server);
    }
    expect(
      (await both(call(1, { name: 'earshot_echo', arguments: { say: 'bad content' } }))).answer,
    ).toMatchObject({
      error: { code: -32602, message: expect.stringContaining('Invalid tools/call result') },
    });
  });

  it("passes a result of the tools' own shape without the SDK's schema, and checks any other", async () => {
    const check = vi.spyOn(CallToolResultSchema, 'safeParse');
    try {
      for (const [id, say] of ['hi', 'number keys'].entries())
        await direct.direct(call(id, { name: 'earshot_echo', arguments: { say } }), connection);
      await direct.direct(call(2, { name: 'earshot_missing', arguments: {} }), connection);
      expect(check).not.toHaveBeenCalled();
      await direct.direct(call(3, { name: 'earshot_echo', arguments: { say: 'proto key' } }), connection);
      expect(check).toHaveBeenCalledTimes(1);
    } finally {
      check.mockRestore();
    }
  });

  it('answers a thrown null with -32603 and keeps the rest of its batch', async () => {
    const answers = await direct.transport.exchange(
      [
        call(1, { name: 'earshot_echo', arguments: { say: 'null' } }),
        call(2, { name: 'earshot_echo', arguments: { say: 'hi' } }),
      ],
      connection,
    );
    expect(answers[0]).toEqual({ jsonrpc: '2.0', id: 1, error: { code: -32603, message: 'Internal error' } });
    expect(answers[1]).toMatchObject({ id: 2, result: { content: [{ type: 'text', text: 'said hi' }] } });
  });

  it('answers a batch mixing both paths in request order, with every client id as sent', async () => {
    const batch: JSONRPCMessage[] = [
      { jsonrpc: '2.0', id: 0, method: 'ping' },
      call(0, { name: 'earshot_echo', arguments: { say: 'zero' } }),
      call(-1, { arguments: {} }),
      { jsonrpc: '2.0', method: 'notifications/initialized' },
      call('0', { name: 'earshot_echo', arguments: { say: 'coded' } }),
      { jsonrpc: '2.0', id: -1.5, method: 'tools/list' },
      call(Number.MAX_SAFE_INTEGER, { name: 'earshot_echo', arguments: { say: 'plain' } }),
      { jsonrpc: '2.0', id: 'x', method: 'no/such' },
      call('', { name: 'earshot_catalog' }),
    ];
    const server = await viaServer.transport.exchange(batch, connection);
    const shortcut = await direct.transport.exchange(batch, connection);
    // The malformed call is the one answer that differs: -32602 where the Server alone says -32603.
    expect(shortcut[2]).toMatchObject({ error: { code: -32602 } });
    expect(server[2]).toMatchObject({ error: { code: -32603 } });
    expect(JSON.stringify(shortcut.toSpliced(2, 1))).toBe(JSON.stringify(server.toSpliced(2, 1)));
    expect(shortcut.map((answer) => answer.id)).toEqual([
      0,
      0,
      -1,
      '0',
      -1.5,
      Number.MAX_SAFE_INTEGER,
      'x',
      '',
    ]);
    expect(shortcut[1]).toMatchObject({ result: { content: [{ text: 'said zero' }] } });
  });

  it('keeps each POST its own caller when parallel POSTs reuse the same ids', async () => {
    const posts = Array.from({ length: 20 }, (_, n) =>
      direct.transport.exchange(
        [
          call(1, { name: 'earshot_echo', arguments: { say: n % 3 ? String(n) : 'plain' } }),
          { jsonrpc: '2.0', id: 2, method: 'tools/list' },
        ],
        { ...connection, requestId: `req-${n}` },
      ),
    );
    for (const [n, [answer, listed]] of (await Promise.all(posts)).entries()) {
      expect(answer).toMatchObject(
        n % 3
          ? { id: 1, result: { structuredContent: { request: `req-${n}` } } }
          : { id: 1, error: { code: -32603 } },
      );
      expect(listed).toMatchObject({ id: 2, result: { tools: expect.any(Array) } });
    }
  });
});

describe('a plain tools/call, used without the SDK schemas', () => {
  // Parts of messages, each near the edge of what the schemas accept or of what is plain.
  const ids: unknown[] = [
    1,
    0,
    -7,
    'a',
    '',
    1.5,
    2 ** 60,
    Number.MAX_SAFE_INTEGER,
    null,
    Number.NaN,
    {},
    undefined,
  ];
  const names: unknown[] = ['earshot_echo', '', 5, null, undefined];
  const argumentSets: unknown[] = [
    { say: 'hi' },
    {},
    { nested: { list: [1, 'two', null] }, n: 3 },
    JSON.parse('{"2":1,"1":2,"b":3}'),
    JSON.parse('{"__proto__":{"a":1},"b":2}'),
    { constructor: 'x' },
    { [Symbol('s')]: 1 },
    Object.defineProperty({ a: 1 }, 'hidden', { value: 2, enumerable: false }),
    Object.assign(Object.create(null), { a: 1 }),
    new (class Args {
      a = 1;
    })(),
    [1, 2],
    'text',
    null,
    undefined,
  ];
  const extras: Record<string, unknown>[] = [
    {},
    { _meta: { progressToken: 1 } },
    { task: { ttl: 1 } },
    { other: 1 },
  ];

  function randomMessage(random: () => number): Record<string, unknown> {
    const pick = <T>(list: readonly T[]) => list[Math.floor(random() * list.length)]!;
    const params: Record<string, unknown> = { ...pick(extras) };
    const name = pick(names);
    if (name !== undefined) params.name = name;
    const args = pick(argumentSets);
    if (args !== undefined || random() < 0.2) params.arguments = args;
    const message: Record<string, unknown> = {
      jsonrpc: random() < 0.9 ? '2.0' : '1.0',
      method: random() < 0.9 ? 'tools/call' : 'tools/list',
      params: random() < 0.9 ? params : pick([null, [params], 'params']),
    };
    const id = pick(ids);
    if (id !== undefined || random() < 0.5) message.id = id;
    if (random() < 0.1) message.extra = true;
    return message;
  }

  it('is one that both SDK schemas accept and give back unchanged, on seeded random messages', () => {
    const random = prng(14);
    let plain = 0;
    let other = 0;
    for (let i = 0; i < 30_000; i++) {
      const message = randomMessage(random);
      if (!isPlainToolCall(message)) {
        other++;
        continue;
      }
      plain++;
      const asMessage = JSONRPCMessageSchema.safeParse(message);
      expect(asMessage.success).toBe(true);
      expect(asMessage.data).toStrictEqual(message);
      const asCall = CallToolRequestSchema.safeParse(message);
      expect(asCall.success).toBe(true);
      expect(asCall.data?.params).toStrictEqual(message.params);
    }
    // Both kinds are drawn often enough to mean something.
    expect(plain).toBeGreaterThan(250);
    expect(other).toBeGreaterThan(20_000);
  });

  it('is what clients send, and readPost hands it on as it came', () => {
    const sent = call(3, { name: 'earshot_echo', arguments: { say: 'hi' } });
    expect(isPlainToolCall(sent)).toBe(true);
    expect(isPlainToolCall(call('x', { name: 'earshot_catalog' }))).toBe(true);
    const headers = { accept: 'application/json, text/event-stream', 'content-type': 'application/json' };
    const read = readPost(headers, [sent, { jsonrpc: '2.0', id: 4, method: 'ping' }]);
    expect('messages' in read && read.messages[0]).toBe(sent);
    expect(readPost(headers, { ...sent, id: 1.5 })).toMatchObject({ refused: { status: 400 } });
  });
});
