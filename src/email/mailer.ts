import { mkdir, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { createTransport } from 'nodemailer';
import type { NodemailerError } from 'nodemailer/lib/errors';
import type { SendMailOptions } from 'nodemailer/lib/mailer';
import { recipientKey } from './compose.ts';

export interface EmailOutcome {
  ok: boolean;
  recipient: string;
  messageId?: string;
  /** The SMTP server's final reply, e.g. "250 2.0.0 OK queued", or where the .eml was written. */
  response?: string;
  responseCode?: number;
  error?: string;
  retryable: boolean;
  durationMs: number;
  /** The .eml file, when there is no SMTP server. */
  file?: string;
}

export interface Mailer {
  readonly kind: 'smtp' | 'outbox';
  /** Sends one message to its single recipient; never throws. */
  send(message: SendMailOptions & { to: string }, deliveryId: string): Promise<EmailOutcome>;
  close(): void;
}

export interface MailerOptions {
  /** SMTP_URL (smtp:// or smtps://); unset = write .eml files. */
  smtpUrl?: string;
  /** DATA_DIR: .eml files go to DATA_DIR/outbox/. */
  dataDir: string;
  /** Connection, greeting and socket timeouts; default 15 000 ms. */
  timeoutMs?: number;
}

/**
 * 4xx SMTP replies are transient by definition (RFC 5321 §4.2.1); 5xx are permanent. Errors
 * without a reply (connection refused, timeouts, dropped sockets) are worth another attempt,
 * except a message nodemailer itself refused to build or address.
 */
export function isRetryableMailError(error: NodemailerError): boolean {
  const code = error.responseCode;
  if (code !== undefined) return code < 500;
  return error.code !== 'EENVELOPE' && error.code !== 'EMESSAGE';
}

function failure(error: unknown, recipient: string, durationMs: number): EmailOutcome {
  const mailError = (error instanceof Error ? error : new Error(String(error))) as NodemailerError;
  return {
    ok: false,
    recipient,
    error: mailError.response ? `SMTP ${mailError.response}` : mailError.message,
    retryable: isRetryableMailError(mailError),
    durationMs,
    ...(mailError.response !== undefined && { response: mailError.response }),
    ...(mailError.responseCode !== undefined && { responseCode: mailError.responseCode }),
  };
}

const replyCode = (response: string | undefined) => {
  const code = Number(response?.slice(0, 3));
  return Number.isInteger(code) && code >= 200 ? code : undefined;
};

function smtpMailer(smtpUrl: string, timeoutMs: number): Mailer {
  const transport = createTransport({
    pool: true,
    url: smtpUrl,
    maxConnections: 3,
    connectionTimeout: timeoutMs,
    greetingTimeout: timeoutMs,
    socketTimeout: timeoutMs,
  });
  return {
    kind: 'smtp',
    async send(message) {
      const started = performance.now();
      try {
        const info = await transport.sendMail(message);
        const durationMs = Math.round(performance.now() - started);
        if (info.rejected.length > 0) {
          const rejection = info.rejectedErrors?.[0] ?? new Error(`recipient ${message.to} was rejected`);
          return failure(rejection, message.to, durationMs);
        }
        const code = replyCode(info.response);
        return {
          ok: true,
          recipient: message.to,
          messageId: info.messageId,
          response: info.response,
          ...(code !== undefined && { responseCode: code }),
          retryable: false,
          durationMs,
        };
      } catch (error) {
        return failure(error, message.to, Math.round(performance.now() - started));
      }
    },
    close: () => transport.close(),
  };
}

function outboxMailer(dataDir: string): Mailer {
  const transport = createTransport({ streamTransport: true, buffer: true, newline: 'windows' });
  const outbox = join(dataDir, 'outbox');
  return {
    kind: 'outbox',
    async send(message, deliveryId) {
      const started = performance.now();
      try {
        const info = await transport.sendMail(message);
        await mkdir(outbox, { recursive: true });
        const name = `${deliveryId.replace(/[^A-Za-z0-9_-]/g, '_')}-${recipientKey(deliveryId, message.to)}.eml`;
        const file = join(outbox, name);
        // Write then rename: a reader never sees half a message, and a retry replaces, not doubles.
        const partial = `${file}.${process.pid}.partial`;
        await writeFile(partial, info.message as Buffer);
        await rename(partial, file);
        return {
          ok: true,
          recipient: message.to,
          messageId: info.messageId,
          response: `written to ${file}`,
          retryable: false,
          durationMs: Math.round(performance.now() - started),
          file,
        };
      } catch (error) {
        return failure(error, message.to, Math.round(performance.now() - started));
      }
    },
    close: () => undefined,
  };
}

/** SMTP when SMTP_URL is set, otherwise .eml files under DATA_DIR/outbox/. */
export function createMailer(options: MailerOptions): Mailer {
  return options.smtpUrl
    ? smtpMailer(options.smtpUrl, options.timeoutMs ?? 15_000)
    : outboxMailer(options.dataDir);
}
