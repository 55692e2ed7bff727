import { type AlertEmailInput, composeAlertEmail } from './compose.ts';
import type { EmailOutcome, Mailer } from './mailer.ts';

/** Composes and sends the alert email of one recipient; never throws. */
export function sendAlertEmail(mailer: Mailer, input: AlertEmailInput): Promise<EmailOutcome> {
  return mailer.send({ ...composeAlertEmail(input), to: input.to }, input.notice.deliveryId);
}
