import { str } from '../http/route-schemas.ts';

/** The compact company shown inside other resources (docs/knowledge-graph.md, Company). */
export const companyCompactSchema = {
  type: 'object',
  required: ['id', 'name'],
  properties: {
    id: str,
    name: str,
    description: str,
    domain: str,
    image_url: str,
    image_mode: { enum: ['AUTOMATIC', 'CUSTOM', 'NONE'] },
    slug: str,
    ticker: str,
  },
} as const;
