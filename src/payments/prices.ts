/**
 * What a keyless caller pays, in US cents per request (docs/payments.md, "Billable operations").
 * Billable are the reads of the catalog, search, knowledge-graph, rankings and advertising
 * surfaces: GET routes that need a project key and carry one of these tags. Everything else
 * (alerts, connections, deliveries, ingestion, public routes, operations) is never payable.
 */
const BILLABLE_TAGS = new Set([
  'catalog',
  'search',
  'entities',
  'knowledge graph',
  'rankings',
  'advertising',
  'recommendations',
]);

const DEFAULT_CENTS = 1;
const PRICED: Record<string, number> = { '/v1/podcasts/advertising/leaderboard': 4 };

/** The MCP endpoint: a flat price per HTTP request whatever tools it calls. */
export const MCP_PATH = '/mcp';
export const MCP_CENTS = 1;
/** JSON-RPC methods a keyless MCP client may send without paying. */
export const FREE_MCP_METHODS = new Set(['initialize', 'tools/list', 'ping']);

interface RouteFacts {
  method: string | string[];
  url: string;
  auth?: string;
  tags?: readonly string[];
}

/** The price of a REST route in cents, or undefined when it is not payable. */
export function routeCents(route: RouteFacts): number | undefined {
  const methods = [route.method].flat();
  if (methods.length !== 1 || methods[0] !== 'GET') return undefined;
  if ((route.auth ?? 'project') !== 'project' || !route.url.startsWith('/v1/')) return undefined;
  if (!route.tags?.some((tag) => BILLABLE_TAGS.has(tag))) return undefined;
  return PRICED[route.url] ?? DEFAULT_CENTS;
}

/**
 * The positions of the billable requests among the requests of a keyless MCP POST body (the
 * messages that get an answer, answered in their order): requests other than the free ones; the
 * body must be paid for when there is any. By position, not id: a client may reuse an id in one
 * batch, and a free request's answer must not pass for a billable one's. Notifications (no id: they
 * get no answer) and responses are free; so is a body that is not JSON-RPC at all (the MCP server
 * refuses it, unpaid).
 */
export function mcpBillableRequests(body: unknown): number[] {
  const messages: unknown[] = Array.isArray(body) ? body : [body];
  const requests = messages.filter(
    (message): message is { method: unknown } =>
      !!message &&
      typeof message === 'object' &&
      'method' in message &&
      'id' in message &&
      message.id !== null &&
      message.id !== undefined,
  );
  return requests.flatMap((request, position) => {
    const method = String(request.method);
    return FREE_MCP_METHODS.has(method) || method.startsWith('notifications/') ? [] : [position];
  });
}

/** Cents as the USD amount of x-payment-info and /.well-known/x402: "0.04". */
export const dollars = (cents: number) => (cents / 100).toFixed(2);

/** Cents in atomic units of a token whose one unit is one US dollar. */
export const atomicAmount = (cents: number, decimals: number) =>
  (BigInt(cents) * 10n ** BigInt(decimals - 2)).toString();
