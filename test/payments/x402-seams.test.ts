import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcpPost } from '../agents/support.ts';
import { CENT, paidHarness } from './support.ts';

/** Pay per request where it meets the catalog's response cache and MCP's batches. */
describe('x402 with the response cache and MCP batches', () => {
  let h: Awaited<ReturnType<typeof paidHarness>>;

  beforeAll(async () => {
    h = await paidHarness();
  }, 120_000);
  afterAll(async () => {
    await h?.close();
  });

  it('challenges a keyless call of a cached answer, settles its paid call once, and never charges a key', async () => {
    const path = '/v1/podcasts?limit=3';
    const keyed = await h.get(path, { 'x-api-key': h.tenant.key });
    expect(keyed.status).toBe(200);
    const body = await keyed.text();
    const keyless = await h.get(path);
    expect(keyless.status).toBe(402);
    const problem = (await keyless.json()) as Record<string, unknown>;
    expect(problem.error_code).toBe('payment_required');
    expect(problem.items).toBeUndefined();
    const before = await h.balance();
    const paid = await h.get(path, await h.payer.sign(h.payer.required(keyless, problem)));
    expect(paid.status).toBe(200);
    expect(await paid.text()).toBe(body);
    expect(h.payer.settlement(paid).success).toBe(true);
    expect(await h.balance()).toBe(before - CENT);
    const again = await h.get(path, { 'x-api-key': h.tenant.key });
    expect(again.status).toBe(200);
    expect(again.headers.get('payment-response')).toBeNull();
    expect(await h.balance()).toBe(before - CENT);
  });

  it('does not charge a batch whose billable call failed when a free request shares its id', async () => {
    const batch = [
      { jsonrpc: '2.0', id: 7, method: 'ping' },
      {
        jsonrpc: '2.0',
        id: 7,
        method: 'tools/call',
        params: { name: 'earshot_no_such_tool', arguments: {} },
      },
    ];
    const keyless = await mcpPost(`${h.url}/mcp`, batch);
    expect(keyless.status).toBe(402);
    const before = await h.balance();
    const paid = await mcpPost(
      `${h.url}/mcp`,
      batch,
      await h.payer.sign(h.payer.required(keyless, await keyless.json())),
    );
    expect(paid.status).toBe(200);
    const answers = (await paid.json()) as {
      id: number;
      result?: { isError?: boolean };
      error?: unknown;
    }[];
    expect(answers).toHaveLength(2);
    expect(answers[1]?.error ?? answers[1]?.result?.isError).toBeTruthy();
    expect(paid.headers.get('payment-response')).toBeNull();
    expect(await h.balance()).toBe(before);
  });

  describe('MCP tools that call routes', () => {
    const tool = (name: string, args: Record<string, unknown>) => ({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name, arguments: args },
    });
    const paidCall = async (request: unknown) => {
      const keyless = await mcpPost(`${h.url}/mcp`, request);
      expect(keyless.status).toBe(402);
      return mcpPost(
        `${h.url}/mcp`,
        request,
        await h.payer.sign(h.payer.required(keyless, await keyless.json())),
      );
    };

    it('charges a paid tool once, its billable route call never challenged nor charged again', async () => {
      const before = await h.balance();
      const paid = await paidCall(tool('earshot_podcast_resolve', { q: 'anything' }));
      expect(paid.status).toBe(200);
      const answer = (await paid.json()) as { result: { isError?: boolean; structuredContent?: object } };
      expect(answer.result.isError).toBeUndefined();
      expect(answer.result.structuredContent).toEqual({ data: [], has_more: false });
      expect(h.payer.settlement(paid).success).toBe(true);
      expect(await h.balance()).toBe(before - CENT);
    });

    it('keeps a paid call out of a project it names, and does not charge it', async () => {
      const before = await h.balance();
      const paid = await paidCall(tool('earshot_alert_list', { project_id: h.tenant.project.id }));
      expect(paid.status).toBe(200);
      const answer = (await paid.json()) as { result: { isError?: boolean; structuredContent?: object } };
      expect(answer.result.isError).toBe(true);
      expect(answer.result.structuredContent).toMatchObject({ status: 401 });
      expect(paid.headers.get('payment-response')).toBeNull();
      expect(await h.balance()).toBe(before);
    });
  });
});
