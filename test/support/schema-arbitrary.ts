import fc from 'fast-check';

/** A JSON Schema as found in /openapi.json (route schemas are small: no recursion). */
export type Schema = { [keyword: string]: unknown } | boolean;

export interface SchemaArbitraryOptions {
  /** `#/components/schemas/X` and similar references, resolved to their schema. */
  resolve?: (ref: string) => Schema | undefined;
  /** Values known to reach further than random text, by property name (enums the schema leaves to code). */
  hints?: Record<string, readonly unknown[]>;
  /** Relative weight of a hostile value at each node; 0 = only values valid by the schema. */
  hostility?: number;
}

/** A huge string, built only when sent (a marker keeps generation and shrinking cheap). */
export class Huge {
  constructor(
    readonly unit: string,
    readonly times: number,
  ) {}
  toJSON() {
    return this.unit.repeat(this.times);
  }
  toString() {
    return this.unit.repeat(this.times);
  }
}

/**
 * Arrays nested `depth` deep, spliced into the JSON text only when sent (see `toJsonText`): a
 * JSON.stringify of 20,000 levels would overflow the sender's stack first.
 */
export class Deep {
  constructor(readonly depth: number) {}
  toJSON() {
    return `\u0001deep:${this.depth}\u0001`;
  }
}

/** JSON text of a generated value, with Deep markers expanded. */
export const toJsonText = (value: unknown) =>
  (JSON.stringify(value) ?? 'null').replace(
    /"\\u0001deep:(\d+)\\u0001"/g,
    (_, depth: string) => '['.repeat(Number(depth)) + ']'.repeat(Number(depth)),
  );

const nested = (depth: number, leaf: unknown) => {
  let value: unknown = leaf;
  for (let i = 0; i < depth; i++) value = i % 2 ? { a: value } : [value];
  return value;
};

/** Values that break assumptions: huge, deep, odd unicode, NUL, lone surrogates, wrong types. */
export const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('x', 'é', '🦄', '\u200B', '\n', '"', '\\'),
      fc.integer({ min: 1_000, max: 150_000 }),
    )
    .map(([unit, times]) => new Huge(unit, times)),
  fc.constantFrom(
    '\u202Eevil\u202C',
    '\u200B\u200C\u200D\u2060\uFEFF',
    'e\u0301\u0301\u0301\u0301',
    '\uFFFF\uFFFE',
    '𝕏𝕐',
    'İıß',
    '\u0085\u2028\u2029',
    '\r\n\t',
    '%00%ff',
    '../../etc/passwd',
    "'; drop table events; --",
    '<script>x</script>',
    '__proto__',
    'constructor',
    'toString',
  ),
  fc.string().map((s) => `${s}\u0000${s}`),
  fc.constantFrom('\uD800', 'a\uDC00b', '\uDBFFz', '\uDFFF'),
  fc.integer({ min: 1, max: 80 }).map((depth) => nested(depth, 'leaf')),
  fc.constantFrom(new Deep(1_000), new Deep(20_000)),
  fc.constantFrom(null, true, false, 0, -1, -0, 1.5, 1e308, -1e308, 2 ** 53 + 1, [], {}, '', ' ', [null], {
    '': '',
  }),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.jsonValue({ maxDepth: 3 }),
);

function typesOf(schema: Record<string, unknown>): string[] {
  if (Array.isArray(schema.type)) return schema.type as string[];
  if (typeof schema.type === 'string') return [schema.type];
  if (schema.properties) return ['object'];
  if (schema.items) return ['array'];
  return [];
}

function stringFor(schema: Record<string, unknown>): fc.Arbitrary<string> {
  const minLength = typeof schema.minLength === 'number' ? schema.minLength : 0;
  const maxLength = Math.max(
    minLength,
    Math.min(typeof schema.maxLength === 'number' ? schema.maxLength : 40, 40),
  );
  switch (schema.format) {
    case 'date-time':
      return (
        fc
          // Past instants: a valid event's occurred_at may be at most a day ahead of the clock.
          .date({ min: new Date('1970-01-01T00:00:00Z'), max: new Date(), noInvalidDate: true })
          .map((date) => date.toISOString())
      );
    case 'date':
      return fc
        .date({
          min: new Date('1970-01-01T00:00:00Z'),
          max: new Date('2100-01-01T00:00:00Z'),
          noInvalidDate: true,
        })
        .map((date) => date.toISOString().slice(0, 10));
    case 'email':
      return fc.emailAddress();
    case 'uri':
    case 'url':
      return fc.webUrl();
    case 'uuid':
      return fc.uuid();
  }
  if (typeof schema.pattern === 'string') return fc.stringMatching(new RegExp(schema.pattern));
  return fc.string({ minLength, maxLength });
}

/**
 * A fast-check arbitrary for the values of a JSON Schema: values valid by it, mixed (by
 * `hostility`) at every node with hostile ones and objects with extra properties.
 */
export function schemaArbitrary(
  schema: Schema | undefined,
  options: SchemaArbitraryOptions = {},
  name?: string,
) {
  const valid = validArbitrary(schema, options, name);
  const hostility = options.hostility ?? 1;
  return hostility > 0
    ? fc.oneof({ arbitrary: valid, weight: 6 }, { arbitrary: hostileValue, weight: hostility })
    : valid;
}

function validArbitrary(
  schema: Schema | undefined,
  options: SchemaArbitraryOptions,
  name?: string,
): fc.Arbitrary<unknown> {
  if (schema === undefined || schema === true) return fc.jsonValue({ maxDepth: 2 });
  if (schema === false) return fc.constant(undefined);
  const hint = name !== undefined ? options.hints?.[name] : undefined;
  if (typeof schema.$ref === 'string') {
    const target = options.resolve?.(schema.$ref);
    return validArbitrary(target, options, name);
  }
  if ('const' in schema) return fc.constant(schema.const);
  if (Array.isArray(schema.enum)) return fc.constantFrom(...(schema.enum as unknown[]));
  const choices = (schema.oneOf ?? schema.anyOf) as Schema[] | undefined;
  if (Array.isArray(choices) && choices.length)
    return fc.oneof(...choices.map((choice) => schemaArbitrary(choice, options, name)));
  if (Array.isArray(schema.allOf) && schema.allOf.length)
    return validArbitrary(Object.assign({}, ...(schema.allOf as object[])), options, name);
  const types = typesOf(schema);
  if (types.length === 0) return fc.jsonValue({ maxDepth: 2 });
  const byType = types.map((type): fc.Arbitrary<unknown> => {
    switch (type) {
      case 'string':
        return hint ? fc.oneof(fc.constantFrom(...hint), stringFor(schema)) : stringFor(schema);
      case 'integer':
        return fc.integer({
          min: typeof schema.minimum === 'number' ? schema.minimum : -1_000_000,
          max: typeof schema.maximum === 'number' ? schema.maximum : 1_000_000,
        });
      case 'number':
        return fc.double({
          min: typeof schema.minimum === 'number' ? schema.minimum : -1e9,
          max: typeof schema.maximum === 'number' ? schema.maximum : 1e9,
          noNaN: true,
          noDefaultInfinity: true,
        });
      case 'boolean':
        return fc.boolean();
      case 'null':
        return fc.constant(null);
      case 'array': {
        const minLength = typeof schema.minItems === 'number' ? schema.minItems : 0;
        const maxLength = Math.max(
          minLength,
          Math.min(typeof schema.maxItems === 'number' ? schema.maxItems : 4, 4),
        );
        const items = schema.items as Schema | undefined;
        const item = hint ? fc.constantFrom(...hint) : schemaArbitrary(items, options, name);
        return fc.array(item, { minLength, maxLength });
      }
      default:
        return objectArbitrary(schema, options);
    }
  });
  return byType.length === 1 ? byType[0]! : fc.oneof(...byType);
}

function objectArbitrary(schema: Record<string, unknown>, options: SchemaArbitraryOptions) {
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = (schema.required ?? []) as string[];
  const model = Object.fromEntries(
    Object.entries(properties).map(([key, property]) => [key, schemaArbitrary(property, options, key)]),
  );
  const record = fc.record(model, { requiredKeys: required.filter((key) => key in model) });
  if (!options.hostility) return record;
  return fc
    .tuple(record, fc.option(fc.tuple(fc.string({ maxLength: 12 }), hostileValue), { freq: 5 }))
    .map(([value, extra]) => (extra ? { ...value, [extra[0]]: extra[1] } : value));
}
