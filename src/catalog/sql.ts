/** Collects the parameters of a statement built from optional parts: `p(value, 'text')` → `$3::text`. */
export class Params {
  readonly values: unknown[] = [];
  p(value: unknown, cast: string): string {
    this.values.push(value);
    return `$${this.values.length}::${cast}`;
  }
}

/** A LIKE pattern matching `text` literally. */
export const likeLiteral = (text: string) => text.replace(/[\\%_]/g, (c) => `\\${c}`);
