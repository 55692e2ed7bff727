import { decodePaymentRequiredHeader } from '@x402/core/http';
import {
  type HTTPAdapter,
  HTTPFacilitatorClient,
  type HTTPRequestContext,
  x402HTTPResourceServer,
  x402ResourceServer,
} from '@x402/core/server';
import {
  FacilitatorResponseError,
  type PaymentPayload,
  type PaymentRequirements,
  SettleError,
} from '@x402/core/types';
import { ExactEvmScheme } from '@x402/evm/exact/server';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { X402Config } from '../config.ts';
import { PlanError, UnavailableError } from '../errors.ts';
import { payerPrincipal, presentsCredential } from '../http/auth.ts';
import { toProblem } from '../http/problem.ts';
import { type PaymentFacts, paymentIdOf } from './events.ts';
import type { Ledger } from './ledger.ts';
import {
  atomicAmount,
  dollars,
  FREE_MCP_METHODS,
  MCP_CENTS,
  MCP_PATH,
  mcpBillableRequests,
  routeCents,
} from './prices.ts';

/**
 * x402 pay per request at the HTTP edge (docs/payments.md): the reference resource server of
 * @x402/core behind a fastify adapter. A keyless call to a billable route is verified before the
 * handler runs and settled after it, only when it succeeded; the ledger records both.
 */

interface Paid {
  payload: PaymentPayload;
  requirements: PaymentRequirements;
  facts: PaymentFacts;
  /** For /mcp: the positions among its requests of the billable ones the payment is for. */
  mcpRequests?: readonly number[];
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The verified payment of a keyless call; settled in onSend, before any byte of the answer is sent. */
    payment: Paid | null;
  }
}

/** The request as the x402 packages read it. */
class FastifyAdapter implements HTTPAdapter {
  constructor(
    private readonly request: FastifyRequest,
    private readonly url: string,
    readonly cents: number,
    private readonly withPayment = true,
  ) {}
  getHeader(name: string) {
    const lower = name.toLowerCase();
    if (!this.withPayment && (lower === 'payment-signature' || lower === 'x-payment')) return undefined;
    const value = this.request.headers[lower];
    return Array.isArray(value) ? value[0] : value;
  }
  getMethod() {
    return this.request.method;
  }
  getPath() {
    return this.request.url.split('?')[0] ?? '/';
  }
  getUrl() {
    return this.url;
  }
  /** Always JSON: the API answers problems, never the packages' HTML paywall. */
  getAcceptHeader() {
    return 'application/json';
  }
  getUserAgent() {
    return this.getHeader('user-agent') ?? '';
  }
  withoutPayment() {
    return new FastifyAdapter(this.request, this.url, this.cents, false);
  }
}

/**
 * The reference facilitator client, except that a facilitator that gives no answer is treated like
 * one that times out (FacilitatorResponseError, which the resource server rethrows), not as a
 * verdict on the payment (docs/payments.md): a lost verification is 503, not a refusal; a lost
 * settlement (connection dropped, a proxy's error page) has an unknown outcome, not "not settled".
 */
class FacilitatorClient extends HTTPFacilitatorClient {
  override async verify(...args: Parameters<HTTPFacilitatorClient['verify']>) {
    try {
      return await super.verify(...args);
    } catch (error) {
      // fetch rejects with a TypeError when no HTTP answer came at all.
      if (error instanceof TypeError) throw new FacilitatorResponseError(`verify gave no answer: ${error}`);
      throw error;
    }
  }
  override async settle(...args: Parameters<HTTPFacilitatorClient['settle']>) {
    try {
      return await super.settle(...args);
    } catch (error) {
      if (error instanceof SettleError || error instanceof FacilitatorResponseError) throw error;
      throw new FacilitatorResponseError(`settle gave no answer: ${String(error)}`);
    }
  }
}

export interface X402Deps {
  config: X402Config;
  publicBaseUrl: string;
  ledger: Ledger;
  /** The OAuth pointer a keyless MCP 402 carries beside the payment terms. */
  mcpChallenge: string;
}

/** The ledger's reason when the facilitator never answered the settlement: it may have landed. */
const SETTLEMENT_UNKNOWN = 'settlement_outcome_unknown';

const RESOLVE = {
  message:
    'Sign an EIP-3009 transfer authorization for exactly the amount in the PAYMENT-REQUIRED header and repeat the request with it in PAYMENT-SIGNATURE; or present an API key.',
  action: 'pay',
};

/**
 * Whether /mcp served one of the billable requests: its answer (answers come in request order) has
 * a result that is not flagged isError. A batch is charged when any of its billable calls succeeded.
 */
function servedBillable(body: string, positions: readonly number[]) {
  try {
    const answers = [JSON.parse(body)].flat() as ({
      error?: unknown;
      result?: { isError?: unknown };
    } | null)[];
    return positions.some((at) => {
      const answer = answers[at];
      return (
        !!answer &&
        answer.error === undefined &&
        answer.result !== undefined &&
        answer.result.isError !== true
      );
    });
  } catch {
    return false;
  }
}

type Token = NonNullable<X402Config['asset']>;

/** The configured token, or the network's USDC as @x402/evm knows it (an EIP-3009 token). */
async function tokenOf(config: X402Config, scheme: ExactEvmScheme): Promise<Token> {
  if (config.asset) return config.asset;
  const known = await scheme.parsePrice('$1', config.network).catch(() => undefined);
  const { name, version } = known?.extra ?? {};
  if (!known || typeof name !== 'string' || typeof version !== 'string')
    throw new Error(
      `No known EIP-3009 stablecoin on ${config.network}: set EARSHOT_X402_ASSET, EARSHOT_X402_ASSET_NAME and EARSHOT_X402_ASSET_VERSION`,
    );
  const decimals = scheme.getAssetDecimals(known.asset, config.network) ?? 6;
  return { address: known.asset, name, version, decimals };
}

async function paymentsPlugin(app: FastifyInstance, deps: X402Deps) {
  const { config, ledger } = deps;
  const scheme = new ExactEvmScheme();
  const token = await tokenOf(config, scheme);
  const resourceServer = new x402ResourceServer(
    new FacilitatorClient({ url: config.facilitatorUrl }),
  ).register(config.network, scheme);
  const terms = (cents: number) => ({
    asset: token.address,
    amount: atomicAmount(cents, token.decimals),
    extra: { name: token.name, version: token.version },
  });
  const server = new x402HTTPResourceServer(resourceServer, {
    accepts: {
      scheme: 'exact',
      network: config.network,
      payTo: config.payTo,
      maxTimeoutSeconds: 60,
      price: (context: HTTPRequestContext) => {
        if (!(context.adapter instanceof FastifyAdapter)) throw new Error('x402: unknown adapter');
        return terms(context.adapter.cents);
      },
    },
    mimeType: 'application/json',
  });
  // The facilitator's supported kinds are fetched at the first payment, and again after a failure.
  let ready: Promise<void> | undefined;
  const initialized = () => {
    ready ??= server.initialize().catch((error: unknown) => {
      ready = undefined;
      throw error;
    });
    return ready;
  };

  const billable: { url: string; method: string; cents: number }[] = [
    { url: MCP_PATH, method: 'POST', cents: MCP_CENTS },
  ];
  const paymentInfo = (cents: number) => ({
    price: { mode: 'fixed', currency: 'USD', amount: dollars(cents) },
    protocols: ['x402'],
  });
  app.addHook('onRoute', (route) => {
    const schema = route.schema as { tags?: string[]; hide?: boolean } | undefined;
    const cents = routeCents({
      method: route.method,
      url: route.url,
      auth: route.config?.auth,
      tags: schema?.tags,
    });
    if (cents === undefined) return;
    route.config = { ...route.config, price: cents };
    // @fastify/swagger copies x- keys of a route schema onto its operation in /openapi.json.
    route.schema = { ...route.schema, ...{ 'x-payment-info': paymentInfo(cents) } };
    billable.push({ url: route.url, method: 'GET', cents });
  });
  app.decorateRequest('payment', null);

  const unavailable = () =>
    new UnavailableError(
      'payment_unavailable',
      'Payments cannot be taken now.',
      { message: 'Retry the request in a few seconds, or present an API key.', action: 'retry' },
      { retryAfterSeconds: 5 },
    );
  const paymentRequired = (detail: string) =>
    new PlanError('payment_required', detail, { ...RESOLVE, url: `${deps.publicBaseUrl}/.well-known/x402` });

  /** 402 with the terms (PAYMENT-REQUIRED), and for /mcp the OAuth challenge too. */
  function challenge(reply: FastifyReply, headers: Record<string, string>, detail: string, mcp: boolean) {
    reply.headers(headers);
    if (mcp) reply.header('www-authenticate', deps.mcpChallenge);
    return paymentRequired(detail);
  }

  /** Verifies the payment of a keyless call; throws the 402 when there is none or it is refused. */
  async function verify(request: FastifyRequest, reply: FastifyReply, cents: number): Promise<Paid> {
    const mcp = request.routeOptions.url === MCP_PATH;
    await initialized().catch((error: unknown) => {
      request.log.error({ err: error }, 'x402 facilitator unreachable');
      throw unavailable();
    });
    const adapter = new FastifyAdapter(request, `${deps.publicBaseUrl}${request.url}`, cents);
    const context = (a: FastifyAdapter) => ({ adapter: a, path: a.getPath(), method: request.method });
    const price = `This request costs ${dollars(cents)} USD`;
    const result = await server.processHTTPRequest(context(adapter)).catch((error: unknown) => {
      request.log.error({ err: error }, 'x402 verification failed');
      throw unavailable();
    });
    if (result.type === 'payment-error') {
      const presented = adapter.getHeader('payment-signature') !== undefined;
      const header = result.response.headers['PAYMENT-REQUIRED'];
      const reason = header ? decodePaymentRequiredHeader(header).error : undefined;
      if (presented) ledger.refused();
      throw challenge(
        reply,
        result.response.headers,
        presented
          ? `The payment was refused (${reason ?? 'invalid'}). ${price}; sign a new authorization.`
          : `${price}: pay with x402 (PAYMENT-SIGNATURE) or present an API key.`,
        mcp,
      );
    }
    if (result.type !== 'payment-verified') throw new Error('x402: a billable route was not priced');
    const { paymentPayload: payload, paymentRequirements: requirements } = result;
    const authorization = payload.payload.authorization as { from?: string } | undefined;
    const facts: PaymentFacts = {
      paymentId: paymentIdOf(requirements.network, requirements.asset, payload.payload),
      payer: authorization?.from ?? 'unknown',
      operation: `${request.method} ${request.routeOptions.url}`,
      amount: requirements.amount,
      asset: requirements.asset,
      network: requirements.network,
    };
    if (!(await ledger.verified(facts))) {
      const fresh = await server.processHTTPRequest(context(adapter.withoutPayment()));
      throw challenge(
        reply,
        fresh.type === 'payment-error' ? fresh.response.headers : {},
        `This payment authorization was presented before; each pays for one request. ${price}; sign a new one.`,
        mcp,
      );
    }
    return { payload, requirements, facts };
  }

  /** Settles a paid call that succeeded; a failed one is released. Headers to add, or the 402 to send instead. */
  async function settle(request: FastifyRequest, paid: Paid, status: number, failed: boolean) {
    if (status >= 400 || failed) {
      await ledger.released(paid.facts, status);
      return { headers: {} };
    }
    const result = await server.processSettlement(paid.payload, paid.requirements).catch((error: unknown) => {
      request.log.error({ err: error }, 'x402 settlement failed');
      return { success: false as const, errorReason: SETTLEMENT_UNKNOWN, headers: {} };
    });
    if (result.success) {
      // The money moved: the caller gets the response even if the ledger cannot be written now.
      await ledger.settled(paid.facts, result.transaction).catch((error: unknown) => {
        request.log.error(
          { err: error, payment: paid.facts, transaction: result.transaction },
          'x402 ledger write failed',
        );
      });
      return { headers: result.headers };
    }
    await ledger.settlementFailed(paid.facts, result.errorReason);
    const refusal = paymentRequired(
      result.errorReason === SETTLEMENT_UNKNOWN
        ? 'The facilitator gave no answer to the settlement, so the response is withheld and whether the transfer landed is unknown (check the wallet). Sign a new authorization to retry.'
        : `The payment could not be settled (${result.errorReason}); nothing was charged. Sign a new authorization.`,
    );
    return { headers: result.headers, problem: toProblem(refusal, request) };
  }

  // Authentication ran first: a key or an in-process delegation (MCP tools) set a principal.
  const keyless = (request: FastifyRequest) => request.principal === null && !presentsCredential(request);

  // REST: after authentication, which leaves keyless calls of priced routes to this hook.
  app.addHook('onRequest', async (request, reply) => {
    const cents = request.routeOptions.config?.price;
    if (cents === undefined || !keyless(request)) return;
    request.payment = await verify(request, reply, cents);
    request.principal = payerPrincipal(request.payment.facts.payer);
  });
  app.addHook('onSend', async (request, reply, payload) => {
    const paid = request.payment;
    if (!paid) return payload;
    // /mcp answers 200 to a JSON-RPC error too: it is paid for only when a billable call succeeded.
    const failed = paid.mcpRequests !== undefined && !servedBillable(String(payload ?? ''), paid.mcpRequests);
    const outcome = await settle(request, paid, reply.statusCode, failed);
    reply.headers(outcome.headers);
    if (!outcome.problem) return payload;
    reply.code(402).type('application/problem+json');
    return JSON.stringify(outcome.problem);
  });

  // MCP: the JSON-RPC body says whether a keyless POST is free (initialize, tools/list) or paid.
  app.addHook('preHandler', async (request, reply) => {
    if (request.routeOptions.url !== MCP_PATH || request.method !== 'POST') return;
    if (request.headers['x-api-key'] !== undefined || request.headers.authorization !== undefined) return;
    const billable = mcpBillableRequests(request.body);
    if (billable.length === 0) {
      request.principal = payerPrincipal(undefined);
      return;
    }
    const paid = await verify(request, reply, MCP_CENTS);
    request.payment = { ...paid, mcpRequests: billable };
    request.principal = payerPrincipal(paid.facts.payer);
  });

  app.get('/.well-known/x402', { config: { auth: 'public' }, schema: { hide: true } }, async () => ({
    version: 1,
    x402Version: 2,
    resources: billable.map((b) => `${deps.publicBaseUrl}${b.url}`),
    items: billable.map((b) => ({
      resource: `${deps.publicBaseUrl}${b.url}`,
      method: b.method,
      ...paymentInfo(b.cents),
      accepts: [
        {
          scheme: 'exact',
          network: config.network,
          payTo: config.payTo,
          maxTimeoutSeconds: 60,
          ...terms(b.cents),
        },
      ],
    })),
    free: { [MCP_PATH]: [...FREE_MCP_METHODS, 'notifications/*'] },
  }));
}

/** Shared infrastructure: its hooks reach every route registered after it (composition.ts lists it first). */
export const x402Payments = (deps: X402Deps) =>
  fp(async (app: FastifyInstance) => paymentsPlugin(app, deps), {
    name: 'earshot-x402',
    dependencies: ['earshot-auth'],
  });
