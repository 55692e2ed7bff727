/**
 * The JSON Schema pieces every route module shares (docs/api-conventions.md): ids, path
 * parameters and plain values. A route adds its own bodies and responses next to these.
 */

export const str = { type: 'string' } as const;
export const strings = { type: 'array', items: str } as const;
export const time = { type: 'string', format: 'date-time' } as const;

/** Any id in a path: service ids are 22 base62 characters, caller-chosen ids at most 64. */
export const id = { type: 'string', minLength: 1, maxLength: 64 } as const;

/** `/…/{id}` */
export const idParams = { type: 'object', required: ['id'], properties: { id } } as const;

/** `/v1/projects/{projectId}/…` */
export const projectParams = {
  type: 'object',
  required: ['projectId'],
  properties: { projectId: id },
} as const;

/** `/v1/projects/{projectId}/…/{id}` */
export const projectItemParams = {
  type: 'object',
  required: ['projectId', 'id'],
  properties: { projectId: id, id },
} as const;

export type ProjectRequest = { Params: { projectId: string } };
export type ProjectItemRequest = { Params: { projectId: string; id: string } };
export type PageRequest = { Querystring: { limit: number; cursor?: string } };
