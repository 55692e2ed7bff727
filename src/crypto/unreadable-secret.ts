import { ConnectionSecretUnreadableError, type ErrorDetail } from '../errors.ts';
import { SecretBoxError } from './secret-box.ts';

/**
 * Opens a connection's sealed secret for an API route. A secret sealed under a key this process
 * does not have (EARSHOT_SECRET_KEY changed without the old key in EARSHOT_PREVIOUS_SECRET_KEYS)
 * is a state the caller can repair, by rotating or re-adding the connection: it answers 409
 * `connection_secret_unreadable` (docs/channels.md, Unreadable secrets), not a 500.
 */
export function openForRoute(open: () => string, what: string, repair: string, detail: ErrorDetail): string {
  try {
    return open();
  } catch (error) {
    if (!(error instanceof SecretBoxError)) throw error;
    throw new ConnectionSecretUnreadableError(
      'connection_secret_unreadable',
      `${what} cannot be opened with the configured EARSHOT_SECRET_KEY (was the key changed without ` +
        `keeping the old one in EARSHOT_PREVIOUS_SECRET_KEYS?). ${repair}`,
      [detail],
      { cause: error },
    );
  }
}
