import type { ValidateFunction } from 'ajv';
import type { FastifyInstance } from 'fastify';
import { makeAjv } from '../http/validation.ts';
import { ajvErrorDetail } from '../validation-errors.ts';
import type { AgentCaller } from './credentials.ts';
import { callRoute } from './route-call.ts';
import { type RouteRef, TOOL_SETS, TOOL_TABLE, type ToolSet, type ToolSpec } from './tool-table.ts';

type JsonSchema = Record<string, unknown>;

/** A tool as served: its spec, the routes that exist, and its JSON Schema input. */
export interface Tool {
  name: string;
  set: ToolSet;
  description: string;
  write: boolean;
  inputSchema: JsonSchema & { type: 'object'; properties: Record<string, JsonSchema> };
  routes: Record<string, RouteRef & { pathParams: string[]; queryParams: string[]; bodyParams: string[] }>;
}

export interface ToolResult {
  [key: string]: unknown;
  content: { type: 'text'; text: string }[];
  structuredContent: Record<string, unknown>;
  isError?: boolean;
}

interface OpenApiParameter {
  in: string;
  name: string;
  required?: boolean;
  schema?: JsonSchema;
  description?: string;
}
interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
}
type OpenApiDocument = { paths?: Record<string, Record<string, OpenApiOperation>> };

const SINGLE = '';
const openApiPath = (path: string) => path.replace(/:(\w+)/g, '{$1}');
/** Path parameters the caller's credential fills: the project of the key or grant. */
const CALLER_PROJECT = 'projectId';
const argName = (param: string) =>
  param === CALLER_PROJECT ? 'project_id' : param === 'previewId' ? 'preview_id' : param;

function routeInput(operation: OpenApiOperation) {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const pathParams: string[] = [];
  const queryParams: string[] = [];
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in !== 'path' && parameter.in !== 'query') continue;
    const name = parameter.in === 'path' ? argName(parameter.name) : parameter.name;
    (parameter.in === 'path' ? pathParams : queryParams).push(parameter.name);
    properties[name] = {
      ...(parameter.schema ?? {}),
      ...(parameter.description ? { description: parameter.description } : {}),
    };
    if (parameter.required && parameter.name !== CALLER_PROJECT) required.push(name);
  }
  const body = operation.requestBody?.content?.['application/json']?.schema as
    | { properties?: Record<string, JsonSchema>; required?: string[] }
    | undefined;
  const bodyParams = Object.keys(body?.properties ?? {});
  Object.assign(properties, body?.properties ?? {});
  required.push(...(body?.required ?? []));
  if (pathParams.includes(CALLER_PROJECT))
    properties.project_id = {
      type: 'string',
      description: "The project; defaults to the credential's project.",
    };
  return { properties, required, pathParams, queryParams, bodyParams };
}

/** The tools whose routes exist in the app, with inputs from the routes' own schemas. */
export function buildTools(app: FastifyInstance, table: readonly ToolSpec[] = TOOL_TABLE): Tool[] {
  const doc = app.swagger() as OpenApiDocument;
  const tools: Tool[] = [];
  for (const spec of table) {
    const modes: Record<string, RouteRef> =
      'method' in spec.route ? { [SINGLE]: spec.route as RouteRef } : spec.route;
    const routes: Tool['routes'] = {};
    const properties: Record<string, JsonSchema> = {};
    const requiredByMode: string[][] = [];
    for (const [mode, route] of Object.entries(modes)) {
      const operation = doc.paths?.[openApiPath(route.path)]?.[route.method.toLowerCase()];
      if (!operation || !app.hasRoute({ method: route.method, url: route.path })) continue;
      const input = routeInput(operation);
      for (const [name, schema] of Object.entries(input.properties))
        properties[name] = properties[name] ? eitherSchema(properties[name], schema) : schema;
      requiredByMode.push(input.required);
      routes[mode] = {
        ...route,
        pathParams: input.pathParams,
        queryParams: input.queryParams,
        bodyParams: input.bodyParams,
      };
    }
    const served = Object.keys(routes);
    if (served.length === 0) continue;
    const moded = !(SINGLE in routes);
    if (moded) properties.mode = { type: 'string', enum: served, description: 'Which view to call.' };
    // Arguments every served mode requires are required; the others are checked by each route.
    const required = moded
      ? ['mode', ...requiredByMode.reduce((a, b) => a.filter((name) => b.includes(name)))]
      : (requiredByMode[0] ?? []);
    const tool: Tool = {
      name: spec.name,
      set: spec.set,
      description: `${spec.description}${spec.write ? ' Needs scope mcp:write.' : ''}`,
      write: spec.write ?? false,
      inputSchema: {
        type: 'object',
        properties,
        ...(required.length ? { required } : {}),
        additionalProperties: false,
      },
      routes,
    };
    validatorOf(tool); // compiled at start-up: a schema ajv refuses stops the app, not a call
    tools.push(tool);
  }
  return tools;
}

/** Two modes' schemas of one argument: the same one, or either (a value valid for one mode passes). */
function eitherSchema(a: JsonSchema, b: JsonSchema): JsonSchema {
  const { default: _a, description: _ad, ...checkedA } = a;
  const { default: _b, description: _bd, ...checkedB } = b;
  return JSON.stringify(checkedA) === JSON.stringify(checkedB) ? a : { anyOf: [a, b] };
}

/**
 * Tool arguments are JSON, checked as sent, as request bodies are (src/http/validation.ts): no
 * coercion (`true` is not a string), and no defaults written into them (a default of one mode's
 * route would reach another mode's).
 */
const argumentsAjv = makeAjv({ coerceTypes: false, useDefaults: false });
const validators = new WeakMap<Tool, ValidateFunction>();

/** The compiled validator of a tool's inputSchema, compiled once per tool. */
function validatorOf(tool: Tool) {
  let validate = validators.get(tool);
  if (!validate) {
    validate = argumentsAjv.compile(tool.inputSchema);
    validators.set(tool, validate);
  }
  return validate;
}

const MAX_LISTED_ERRORS = 100;

/** A JSON pointer into the arguments as a location: /filters/languages/0 → arguments.filters.languages.0 */
const argumentLocation = (pointer: string) =>
  `arguments${pointer
    .split('/')
    .map((step) => step.replaceAll('~1', '/').replaceAll('~0', '~'))
    .join('.')}`;

/** The arguments against the tool's inputSchema: undefined when valid, else the invalid_parameter result. */
function checkArguments(tool: Tool, args: Record<string, unknown>) {
  const validate = validatorOf(tool);
  if (validate(args)) return undefined;
  const errors = (validate.errors ?? []).slice(0, MAX_LISTED_ERRORS).map((error) => {
    const detail = ajvErrorDetail(error, args, argumentLocation);
    return error.keyword === 'additionalProperties'
      ? { ...detail, message: 'is not an argument of this tool' }
      : detail;
  });
  return invalidArguments(
    `Invalid arguments: ${errors.map((e) => `${e.location} ${e.message}`).join('; ')}.`,
    errors,
  );
}

const setNames = (value: string) =>
  value
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** The sets of a plain `/mcp`: every one (never changed by a caller, only read). */
const ALL_SETS: ReadonlySet<ToolSet> = new Set(TOOL_SETS);

/** Parses ?include= and ?exclude=; an unknown set name is reported by name. */
export function selectSets(include: string | undefined, exclude: string | undefined) {
  if (include === undefined && exclude === undefined) return { sets: ALL_SETS };
  const included = include === undefined ? undefined : setNames(include);
  const excluded = exclude === undefined ? [] : setNames(exclude);
  const unknown = [...(included ?? []), ...excluded].filter(
    (s) => !(TOOL_SETS as readonly string[]).includes(s),
  );
  if (unknown.length) return { unknown };
  const sets = new Set<ToolSet>(included ? ['system', ...(included as ToolSet[])] : TOOL_SETS);
  for (const set of excluded) if (set !== 'system') sets.delete(set as ToolSet);
  return { sets: sets as ReadonlySet<ToolSet> };
}

const problemResult = (
  errorCode: string,
  detail: string,
  status: number,
  extra: object = {},
): ToolResult => ({
  content: [{ type: 'text', text: `${errorCode}: ${detail}` }],
  structuredContent: { type: 'about:blank', status, error_code: errorCode, detail, errors: null, ...extra },
  isError: true,
});

export const invalidArguments = (detail: string, errors: { location: string; message: string }[]) =>
  problemResult('invalid_parameter', detail, 400, { errors });

/** A short readable line before the JSON: what came back. */
function summary(body: Record<string, unknown>) {
  if (Array.isArray(body.data))
    return `${body.data.length} result(s)${body.has_more ? '; more with cursor ' + String(body.cursor) : ''}.`;
  const name = body.title ?? body.name ?? body.id;
  return typeof name === 'string' ? `${name}` : 'Result.';
}

/** A tool's route call as the `/mcp` request's log line names it (docs/agents.md, "How a call runs"). */
export interface ToolCallNote {
  tool: string;
  /** The route as registered: `GET /v1/podcasts/:id`. */
  route: string;
  status: number;
}

/**
 * Performs a tool's route in-process as the caller, and turns the reply into a tool result; the
 * route call is added to `calls` when given.
 */
export async function callTool(
  app: FastifyInstance,
  tool: Tool,
  args: Record<string, unknown>,
  caller: AgentCaller,
  requestId: string,
  calls?: ToolCallNote[],
): Promise<ToolResult> {
  if (tool.write && !caller.scopes.includes('mcp:write'))
    return problemResult('insufficient_scope', `${tool.name} needs scope mcp:write.`, 403);
  const invalid = checkArguments(tool, args);
  if (invalid) return invalid;
  const mode = SINGLE in tool.routes ? SINGLE : String(args.mode ?? '');
  // Own modes only: `toString` or `__proto__` name no route.
  const route = Object.hasOwn(tool.routes, mode) ? tool.routes[mode] : undefined;
  if (!route)
    return invalidArguments(`mode must be one of ${Object.keys(tool.routes).join(', ')}.`, [
      { location: 'arguments.mode', message: 'is missing or unknown' },
    ]);
  let path = route.path;
  for (const param of route.pathParams) {
    const value =
      param === CALLER_PROJECT ? (args.project_id ?? caller.principal.projectId) : args[argName(param)];
    if (value === undefined || value === '')
      return invalidArguments(`${argName(param)} is required.`, [
        { location: `arguments.${argName(param)}`, message: 'is required' },
      ]);
    path = path.replace(`:${param}`, encodeURIComponent(String(value)));
  }
  let url = path;
  if (route.queryParams.length) {
    const query = new URLSearchParams();
    for (const name of route.queryParams) {
      const value = args[name];
      if (value !== undefined) query.set(name, Array.isArray(value) ? value.join(',') : String(value));
    }
    if (query.size) url = `${path}?${query}`;
  }
  const post = route.method === 'POST';
  const delegation = app.delegate(caller.principal);
  try {
    const reply = await callRoute(app, {
      method: route.method,
      url,
      headers: {
        ...delegation.headers,
        host: 'localhost',
        accept: 'application/json',
        'x-request-id': requestId,
        ...(post && { 'content-type': 'application/json' }),
      },
      ...(post && {
        body: JSON.stringify(
          Object.fromEntries(
            route.bodyParams.filter((name) => args[name] !== undefined).map((name) => [name, args[name]]),
          ),
        ),
      }),
    });
    calls?.push({ tool: tool.name, route: `${route.method} ${route.path}`, status: reply.statusCode });
    const type = String(reply.headers['content-type'] ?? '');
    if (!type.includes('json'))
      return reply.statusCode < 400
        ? {
            content: [{ type: 'text', text: reply.body }],
            structuredContent: { content_type: type, text: reply.body },
          }
        : problemResult('request_error', reply.body, reply.statusCode);
    const json = JSON.parse(reply.body) as unknown;
    const object = json !== null && typeof json === 'object' && !Array.isArray(json);
    const structured = (object ? json : { data: json }) as Record<string, unknown>;
    if (reply.statusCode >= 400) {
      const code = String(structured.error_code ?? 'request_error');
      // A tool result has no headers: the route's Retry-After (a 429, a 503) becomes a member.
      const retryAfter = Number(reply.headers['retry-after']);
      const wait = Number.isInteger(retryAfter) && retryAfter >= 0 ? retryAfter : undefined;
      return {
        content: [
          {
            type: 'text',
            text: `${code}: ${String(structured.detail ?? '')}${wait === undefined ? '' : ` Retry after ${wait} s.`}`,
          },
        ],
        structuredContent: wait === undefined ? structured : { ...structured, retry_after_seconds: wait },
        isError: true,
      };
    }
    // The route's own compact JSON is the text: no second serialization of the same body.
    const compact = object ? reply.body : JSON.stringify(structured);
    return {
      content: [{ type: 'text', text: `${summary(structured)}\n${compact}` }],
      structuredContent: structured,
    };
  } finally {
    delegation.release();
  }
}
