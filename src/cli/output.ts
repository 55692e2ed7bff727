/** Every admin command prints one JSON object with --json, or readable lines without it. */
export function printResult(result: Record<string, unknown>, json: boolean) {
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  for (const [key, value] of Object.entries(result)) {
    process.stdout.write(`${key}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}\n`);
  }
}

/** One line on stderr and a non-zero exit, never a stack trace for an operator's mistake. */
export function fail(error: unknown, json = false): never {
  const message = (error instanceof Error ? error.message : String(error)).split('\n')[0]!;
  // With --json the one object on stdout is the error, so a script always has JSON to read.
  if (json) {
    const code = (error as { errorCode?: unknown }).errorCode;
    process.stdout.write(
      `${JSON.stringify({ error: { message, ...(typeof code === 'string' && { code }) } })}\n`,
    );
  }
  process.stderr.write(`earshot: ${message}\n`);
  process.exit(1);
}
