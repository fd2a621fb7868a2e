import { createHmac } from 'node:crypto';

/** The header each delivery carries (docs/events.md#verifying-a-delivery). */
export const SIGNATURE_HEADER = 'X-Streamcore-Signature';

/**
 * `t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, in the form Stripe made common: the time
 * is signed with the body, so a receiver can refuse a delivery replayed long after it was sent.
 */
export function signDelivery(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}
